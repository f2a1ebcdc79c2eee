"""``import evalnb.charts``: :mod:`evalnb.present.charts` by the name the README uses.

This module stands for that one: after ``import evalnb.charts``, ``evalnb.charts`` is
:mod:`evalnb.present.charts` itself (as ``en.charts`` is).
"""

import sys

import evalnb

sys.modules[__name__] = evalnb.charts
