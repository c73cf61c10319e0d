"""Training notebooks 10, 20, 30 and 40 in JupyterLab as they are: as a student or a teacher opens and runs them.

Each test opens the notebook in headless Chromium and, changing nothing, runs all cells through the menu: the
parameters cell's default ``profile = "class"`` must run the class profile. It checks: no cell shows an error, every
figure loaded, the setup cell applied the class plan (``stsnb.runs.profiles``; the run recorded the plan's values),
nothing was asked of the network.

In the long tier: marked ``long`` (and ``browser``, ``slow``), skipped unless pytest gets ``--long``
(``tests/conftest.py``), because the four class runs take minutes each and README's Command 2 must stay under 12
minutes; CI runs the long tier after the default run (``.ci/run``). Run these alone with

    .venv/bin/python -m pytest tests/test_browser_class.py --long -v -s

The copied notebooks find the class plan, the data folder and the packaged models through the installed package
(``stsnb.runs.plans.PLANS_DIR``, ``$STSNB_DATA_DIR`` or ``data/`` at the repository root, ``stsnb.models``), not through
the working directory, so they run from the temporary root JupyterLab serves. Needs what ``tests/test_browser.py``
needs (Debian's ``chromium`` and ``playwright``); screenshots go to ``test-output/browser/<notebook>-class.png``.
"""

from __future__ import annotations

import os
from pathlib import Path

import lab_browser as browser
import pytest
import yaml

from stsnb.runs import plans

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.long]

REPO = Path(__file__).resolve().parent.parent
OUTPUT = Path(os.environ.get("STSNB_TEST_OUTPUT", REPO / "test-output")) / "browser"
NOTEBOOKS = ("10_pcc_tuning", "20_sts_regression", "30_hicl", "40_ccl_csts")
TIMEOUT = 900  # seconds per notebook: the class plan allows 600 s of cells, plus the browser's own pace


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    notebooks = [plans.NOTEBOOKS_DIR / f"{name}.ipynb" for name in NOTEBOOKS]
    with browser.lab_with_copies(
        tmp_path_factory.mktemp("lab-class"), notebooks, OUTPUT / "jupyter-lab-class.log"
    ) as server:
        yield server


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_in_jupyterlab_in_its_default_class_profile(lab, page, name):
    plan_values = plans.load_plan(plans.plan_path("class")).notebooks[name]
    assert plan_values.get("profile") == "class", f"class.yaml has no class values for {name}"
    recorded = lab.root / "runs" / "params.yaml"
    recorded.unlink(missing_ok=True)  # the previous notebook's record must not pass for this one's

    screenshot = OUTPUT / f"{name}-class.png"
    report = browser.run_through_the_ui(page, lab, name, TIMEOUT, screenshot)
    assert report["errors"] == []
    assert report["images"] >= 1 and report["images_not_loaded"] == 0

    panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
    parameters = panel.locator(".jp-CodeCell").nth(browser.parameters_code_cell_index(name))
    # text_content, not inner_text: JupyterLab 4 styles cells scrolled out of view `content-visibility: auto`, and the
    # browser gives such a cell's innerText as "" (the screenshot above scrolled to the first figure)
    assert "profile = 'class'" in parameters.text_content().replace('"', "'"), "the cell's own default"
    applied = panel.locator(".jp-OutputArea-output", has_text="profile 'class':")
    assert applied.count() >= 1, "the setup cell did not print which profile it applied (stsnb.runs.profiles.describe)"

    params = yaml.safe_load(recorded.read_text())
    differing = {key: (params.get(key), value) for key, value in plan_values.items() if params.get(key) != value}
    assert differing == {}, f"the run recorded other values than class.yaml's (recorded, plan): {differing}"
