"""pytest set-up for the whole checkout (the notebooks in ``notebooks/`` run under nbmake).

- ``evalnb/charts.py`` and ``evalnb/widgets.py`` stand for modules of
  ``evalnb._present`` (``tests/test_lazy_imports.py`` imports them), not modules to doctest.
- The notebooks make the demo runs where ``EVALNB_RUNS`` points when they are missing;
  one temporary folder per test session keeps them out of the package and shares them
  between the xdist workers (which inherit this process's environment).
"""

import os
import tempfile
from pathlib import Path

collect_ignore = ["evalnb/charts.py", "evalnb/widgets.py", "evalnb/story.py", "evalnb/groups.py"]

if "EVALNB_RUNS" not in os.environ:
    _runs = Path(tempfile.mkdtemp(prefix="evalnb-test-")) / "runs" / "demo" / "*"
    os.environ["EVALNB_RUNS"] = str(_runs)
