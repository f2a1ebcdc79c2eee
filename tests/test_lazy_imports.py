"""The module names the README uses import, and the extras install what the README runs."""

from __future__ import annotations

import subprocess
import sys
import tomllib

from tests.conftest import ROOT


def test_import_evalnb_charts_and_widgets_by_the_readmes_names():
    code = (
        "import evalnb.charts, evalnb.widgets, evalnb._present.charts, evalnb._present.widgets\n"
        "import evalnb as en\n"
        "assert evalnb.charts is evalnb._present.charts is en.charts\n"
        "assert evalnb.widgets is evalnb._present.widgets is en.widgets\n"
        "from evalnb.charts import save\n"
        "from evalnb.widgets import comparer\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_all_extra_holds_every_optional_part_the_readme_uses():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    users = {name for name in extras if name not in ("all", "test", "bench")}
    [everything] = extras["all"]
    assert set(everything.removeprefix("evalnb[").removesuffix("]").split(",")) == users
    assert {"inspect", "judges"} <= users
