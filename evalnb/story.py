"""``import evalnb.story``: :mod:`evalnb._present.story` by its public name.

The notebooks' narrative: what the figures of a set of runs say, as Markdown.

This module stands for that one: after ``import evalnb.story``, ``evalnb.story`` is
:mod:`evalnb._present.story` itself (as ``en.story`` is).
"""

import sys

import evalnb

sys.modules[__name__] = evalnb.story
