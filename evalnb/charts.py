"""``import evalnb.charts``: :mod:`evalnb._present.charts` by the name the README uses.

This module stands for that one: after ``import evalnb.charts``, ``evalnb.charts`` is
:mod:`evalnb._present.charts` itself (as ``en.charts`` is).
"""

import sys

import evalnb

sys.modules[__name__] = evalnb.charts
