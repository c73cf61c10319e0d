"""CI's rehearsal of the GPU server's code path: ``stsnb run --profile rehearsal`` runs every notebook with the paper
plan's values on tiny random models of the papers' families (2 processes through the torchrun launcher, 4-bit NF4
on the Mistral stand-in) under bf16 autocast (``STSNB_PRECISION=bf16``, the precision a GPU server trains and scores
in), so the casting paths a GPU takes run in CI too. Its numbers are noise; the test checks that every notebook
completes, with the rehearsal's values and in bf16."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from stsnb.models import loading as models
from stsnb.runs import plans, summary

STSNB = Path(sys.executable).with_name("stsnb")


@pytest.mark.slow
@pytest.mark.long
def test_rehearsal_plan_runs_every_notebook_through_the_launcher(tmp_path):
    env = {**os.environ, models.PRECISION_ENV: "bf16"}
    finished = subprocess.run(
        [str(STSNB), "run", "--profile", "rehearsal", "--out", str(tmp_path)], capture_output=True, text=True, env=env
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
            assert json.loads((folder / "env.json").read_text())["precision"] == "bf16", name
            kept = list((folder / "weights").glob("*.pt"))
            assert kept and all(p.with_suffix(".json").is_file() for p in kept), f"{name} kept no selected weights"
    assert not any((tmp_path / "rehearsal" / ".checkpoints").glob("*/*")), "checkpoints left after a good run"
