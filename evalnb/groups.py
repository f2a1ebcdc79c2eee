"""``import evalnb.groups``: :mod:`evalnb._present.groups` by its public name.

Runs pooled by model (with its guidance version and dataset): the unit every chart draws.

This module stands for that one: after ``import evalnb.groups``, ``evalnb.groups`` is
:mod:`evalnb._present.groups` itself (as ``en.groups`` is).
"""

import sys

import evalnb

sys.modules[__name__] = evalnb.groups
