"""``import evalnb.widgets``: :mod:`evalnb._present.widgets` by the name the README uses.

This module stands for that one: after ``import evalnb.widgets``, ``evalnb.widgets`` is
:mod:`evalnb._present.widgets` itself (as ``en.widgets`` is); without the
``notebooks`` extra the import raises :class:`~evalnb.errors.SetupError` naming it.
"""

import sys

import evalnb

sys.modules[__name__] = evalnb.widgets
