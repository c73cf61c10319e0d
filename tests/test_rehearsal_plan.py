"""CI's rehearsal of the GPU server's code path: ``stsnb run --profile rehearsal`` runs every notebook with the paper
plan's values on tiny random models of the papers' families (2 processes through the torchrun launcher, 4-bit NF4
on the Mistral stand-in). Its numbers are noise; the test checks that every notebook completes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from stsnb.runs import plans, summary

STSNB = Path(sys.executable).with_name("stsnb")


@pytest.mark.slow
@pytest.mark.long
def test_rehearsal_plan_runs_every_notebook_through_the_launcher(tmp_path):
    finished = subprocess.run(
        [str(STSNB), "run", "--profile", "rehearsal", "--out", str(tmp_path)], capture_output=True, text=True
    )
    plan = plans.load_plan(plans.plan_path("rehearsal"))
    failed = {name: summary.read_status(tmp_path / "rehearsal" / f"{name}.failed") for name in plan.notebooks}
    assert finished.returncode == 0, f"{finished.stderr[-3000:]}\nfailed: { {k: v for k, v in failed.items() if v} }"
    for name, values in plan.notebooks.items():
        folder = tmp_path / "rehearsal" / name
        assert summary.read_status(folder) == "ok", name
        recorded = yaml.safe_load((folder / "params.yaml").read_text())
        assert {k: recorded[k] for k in values} == values, f"{name} did not run with the rehearsal's values"
        if name.split("_")[0] in {"10", "20", "30", "40"}:  # the training notebooks: the plan checkpoints every fit
            kept = list((folder / "weights").glob("*.pt"))
            assert kept and all(p.with_suffix(".json").is_file() for p in kept), f"{name} kept no selected weights"
    assert not any((tmp_path / "rehearsal" / ".checkpoints").glob("*/*")), "checkpoints left after a good run"
