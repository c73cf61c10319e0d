"""JupyterLab in a real browser: notebooks run through the UI show no errors, render figures, math and progress bars.

One notebook of each kind: 00 (math rendered by sympy, progress bars) and the training notebook 20 with its smoke
values typed in, plus a cell whose error must be seen. The time of every notebook's Run All in its default class
profile is a benchmark, not a test: ``benchmarks/bench_jupyterlab.py``.

Marked ``browser`` and ``long`` (skipped unless pytest gets ``--long``; CI runs the long tier). Needs Debian's
``chromium`` and the ``playwright`` package (``bash scripts/setup.sh`` installs both where it can); elsewhere these
tests skip with a message that says how to enable them, except in CI (``CI=true``), where a missing browser is a
failure: CI must run them. Screenshots of every notebook are written to ``test-output/browser/``
(``$STSNB_TEST_OUTPUT``) for inspection.
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
FIXTURES = Path(__file__).parent / "fixtures" / "notebooks"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    notebooks = [plans.NOTEBOOKS_DIR / "00_contrastive_ceiling.ipynb"]
    notebooks += [plans.NOTEBOOKS_DIR / "20_sts_regression.ipynb", FIXTURES / "tiny_error_last.ipynb"]
    notebooks += [FIXTURES / "tiny_bar.ipynb"]
    with browser.lab_with_copies(tmp_path_factory.mktemp("lab"), notebooks, OUTPUT / "jupyter-lab.log") as server:
        yield server


def _run_through_the_ui(page, lab, name: str, timeout: float, before_run=None) -> dict:
    return browser.run_through_the_ui(page, lab, name, timeout, OUTPUT / f"{name}.png", before_run)


def test_notebook_00_runs_in_jupyterlab_with_math_figures_and_progress_bars(lab, page):
    report = _run_through_the_ui(page, lab, "00_contrastive_ceiling", timeout=600)
    assert report["errors"] == []
    assert report["images"] >= 3 and report["images_not_loaded"] == 0
    assert report["math_outputs"] >= 2, "sympy results should render as math (MathJax), not as plain text"
    assert report["progress_widgets"] >= 1 and report["raw_progress_text"] == 0, "tqdm should render as a widget"


def _smoke_overrides(name: str) -> str:
    """The smoke plan's values for a notebook as Python assignments, typed into a cell as a reader would."""
    overrides = plans.load_plan(plans.plan_path("smoke")).notebooks[name]
    return "\n".join(f"{key} = {value!r}" for key, value in overrides.items())


def test_notebook_20_runs_in_jupyterlab_with_smoke_values_typed_in(lab, page):
    name = "20_sts_regression"
    overrides = _smoke_overrides(name)
    assert yaml.safe_load(plans.plan_path("smoke").read_text())["notebooks"][name], "smoke plan has no values"

    def type_smoke_values():
        browser.insert_cell_below(page, browser.parameters_code_cell_index(name), overrides)

    report = _run_through_the_ui(page, lab, name, timeout=900, before_run=type_smoke_values)
    assert report["errors"] == []
    assert report["images"] >= 1 and report["images_not_loaded"] == 0
    shown = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell").nth(
        browser.parameters_code_cell_index(name) + 1
    )
    assert "profile = 'smoke'" in shown.text_content().replace('"', "'")


def test_an_error_in_a_cell_is_seen(lab, page):
    """The detector itself: a notebook whose last cell raises shows up with its error."""
    report = _run_through_the_ui(page, lab, "tiny_error_last", timeout=120)
    assert any("ValueError" in e for e in report["errors"]), report


_BAR_JS = """() => {
    const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
    const indicator = panel.querySelector('.jp-Notebook-ExecutionIndicator');
    const bars = panel.querySelectorAll('.jp-OutputArea-output .widget-hprogress');
    const text = [...panel.querySelectorAll('.jp-OutputArea-output')].map(o => o.textContent).join(' ');
    return {busy: !!indicator && indicator.dataset.status === 'busy', bars: bars.length, text};
}"""


def test_a_progress_bar_updates_while_its_cell_runs(lab, page):
    """A long cell's bar (``stsnb.models.progress``) is a widget that moves while the cell runs, with the rate, the
    time left and the latest dev score beside it; read from the page every second."""
    import re
    import time

    browser.open_notebook(page, lab, "tiny_bar.ipynb")
    page.locator(".lm-MenuBar-item", has_text="Run").first.click()
    page.locator(".lm-Menu-item:visible", has_text="Run All Cells").first.click()
    seen, text = [], ""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        page.wait_for_timeout(1000)
        state = page.evaluate(_BAR_JS)
        found = re.search(r"(\d+)/20", state["text"])
        if state["busy"] and state["bars"] and found:
            seen.append(int(found.group(1)))
            text = state["text"]
        if seen and not state["busy"]:
            break
    page.screenshot(path=str(OUTPUT / "tiny_bar.png"))
    assert len(set(seen)) >= 3 and seen == sorted(seen), f"the bar did not move while the cell ran: {seen}"
    assert "step/s" in text and "dev=" in text and "<" in text, text  # rate, latest dev score, time left


def test_a_training_notebook_opened_without_running_shows_its_pipeline_figure(lab, page):
    """The opening markdown cell's attachment (``stsnb figures``) renders as an image before anything has run, at
    about its own width (legible at the notebook's width)."""
    browser.open_notebook(page, lab, "20_sts_regression.ipynb")
    page.wait_for_function(
        """() => {
            const cell = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-MarkdownCell');
            const img = cell && cell.querySelector('img');
            return img && img.complete && img.naturalWidth > 0;
        }""",
        timeout=60_000,
    )
    size = page.evaluate(
        """() => {
            const img = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-MarkdownCell img');
            return {natural: img.naturalWidth, shown: img.getBoundingClientRect().width};
        }"""
    )
    page.screenshot(path=str(OUTPUT / "20_opening.png"))
    assert size["natural"] == 1000 and size["shown"] >= 0.8 * size["natural"], size
