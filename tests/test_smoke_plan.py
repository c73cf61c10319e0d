"""CI's end-to-end check: ``stsnb run --profile smoke`` executes every notebook of the smoke plan successfully."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from stsnb import runner

STSNB = Path(sys.executable).with_name("stsnb")


@pytest.mark.slow
def test_smoke_plan_runs_every_notebook(tmp_path):
    finished = subprocess.run(
        [str(STSNB), "run", "--profile", "smoke", "--out", str(tmp_path)], capture_output=True, text=True
    )
    plan = runner.load_plan(runner.plan_path("smoke"))
    failed = {name: runner.read_status(tmp_path / "smoke" / f"{name}.failed") for name in plan.notebooks}
    assert finished.returncode == 0, f"{finished.stderr[-3000:]}\nfailed: { {k: v for k, v in failed.items() if v} }"
    for name in plan.notebooks:
        assert runner.read_status(tmp_path / "smoke" / name) == "ok", name
        assert (tmp_path / "smoke" / name / "metrics.json").is_file(), name
    summary = (tmp_path / "smoke" / "summary.md").read_text()
    assert "failed" not in summary and "not run" not in summary
