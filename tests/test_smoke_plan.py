"""CI's end-to-end check: ``stsnb run --profile smoke`` executes every notebook of the smoke plan successfully, and
the executed notebooks show a reader no output noise (``stsnb.runs.notebook_noise``), and every figure they save is
readable (``STSNB_CHECK_FIGURES=1``: ``stsnb.teaching.plots.save`` raises on ``plots.figure_problems``, so the notebook
fails)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stsnb.runs import plans
from stsnb.runs.notebook_noise import output_noise
from stsnb.runs.summary import read_status

STSNB = Path(sys.executable).with_name("stsnb")


@pytest.mark.long  # every notebook end to end: minutes (CI runs the long tier)
@pytest.mark.slow
def test_smoke_plan_runs_every_notebook(tmp_path):
    finished = subprocess.run(
        [str(STSNB), "run", "--profile", "smoke", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        env={**os.environ, "STSNB_CHECK_FIGURES": "1"},  # the kernels inherit it: an unreadable figure fails its cell
    )
    plan = plans.load_plan(plans.plan_path("smoke"))
    failed = {name: read_status(tmp_path / "smoke" / f"{name}.failed") for name in plan.notebooks}
    assert finished.returncode == 0, f"{finished.stderr[-3000:]}\nfailed: { {k: v for k, v in failed.items() if v} }"
    for name in plan.notebooks:
        assert read_status(tmp_path / "smoke" / name) == "ok", name
        assert (tmp_path / "smoke" / name / "metrics.json").is_file(), name
    summary = (tmp_path / "smoke" / "summary.md").read_text()
    statuses = _overview_statuses(summary)
    assert statuses == dict.fromkeys(plan.notebooks, "ok"), statuses
    noise = {
        name: output_noise(json.loads((tmp_path / "smoke" / name / f"{name}.ipynb").read_text()))
        for name in plan.notebooks
    }
    assert not any(noise.values()), {name: problems for name, problems in noise.items() if problems}


def _overview_statuses(summary: str) -> dict[str, str]:
    """notebook -> the status cell of summary.md's overview table (a claim's text may say "failed" freely)."""
    lines = summary.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| notebook |") and "| status |" in line)
    column = [cell.strip() for cell in lines[start].strip("|").split("|")].index("status")
    statuses = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        statuses[cells[0].split("]")[0].lstrip("[")] = cells[column]
    return statuses
