"""``stsnb gpu-check`` without a GPU: it refuses with exit 2 naming why; ``--cpu-rehearsal`` runs every measurement at
tiny sizes and writes the report, which ``stsnb run --check --calibration`` reads in place of the assumptions."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from stsnb.gpu import calibration, plan_check
from stsnb.runs.plans import NOTEBOOKS_DIR, load_plan, plan_path

pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU side of gpu-check")


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "TQDM_DISABLE": "1"}
    return subprocess.run([sys.executable, "-m", "stsnb.cli", *args], capture_output=True, text=True, env=env)


@pytest.fixture(scope="module")
def rehearsal(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gpu-check")
    done = _cli("gpu-check", "--cpu-rehearsal", "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    return out / "cpu-rehearsal.json"


def test_without_cuda_gpu_check_exits_2_saying_why():
    done = _cli("gpu-check")
    assert done.returncode == 2
    assert "needs a GPU: torch has no CUDA build" in done.stderr and "--cpu-rehearsal" in done.stderr


def test_the_rehearsal_measures_every_paper_fit_and_evaluation(rehearsal):
    report = json.loads(rehearsal.read_text())
    assert report["rehearsal"] and report["environment"]["torch"] == torch.__version__
    rows = {row["notebook"]: row for row in report["fits"]}
    assert sorted(rows) == ["10_pcc_tuning", "20_sts_regression", "30_hicl", "40_ccl_csts"]
    pcc = rows["10_pcc_tuning"]
    assert pcc["model"] == "mistralai/Mistral-7B-v0.1" and pcc["quantize_4bit"] and pcc["gradient_checkpointing"]
    for row in rows.values():
        assert row["status"] == "ok", row
        # in-process on the CPU, the RSS the steps add can be 0 when an earlier probe already raised the peak (the
        # rehearsal's memory says nothing either way, by design); the estimate and the step time are always positive
        assert row["measured_gib"] >= 0 and row["estimated_gib"] > 0 and row["measured_seconds_per_step"] > 0
        assert row["memory_ratio"] == pytest.approx(row["measured_gib"] / row["estimated_gib"])
        assert row["notebook_hours_recomputed"] == pytest.approx(row["notebook_hours_estimated"] * row["time_ratio"])
    evaluation = report["evaluation"]
    assert evaluation["status"] == "ok" and evaluation["pairs"] == 100
    assert evaluation["largest_cosine_difference"] < 1e-4, "stsnb and sentence-transformers encode alike"
    markdown = rehearsal.with_suffix(".md").read_text()
    assert markdown.startswith("# stsnb gpu-check: CPU rehearsal") and "say nothing about a GPU" in markdown


def test_the_check_reads_the_report_in_place_of_the_assumptions(rehearsal, tmp_path):
    """A report whose CCL steps took 100x the assumed time puts notebook 40 over its timeout; without it, it is not."""
    report = json.loads(rehearsal.read_text())
    for row in report["fits"]:
        row["time_ratio"] = 100.0 if row["notebook"] == "40_ccl_csts" else 1.0
    slow = tmp_path / "slow.json"
    slow.write_text(json.dumps(report))
    whole = load_plan(plan_path("paper"))
    plan = dataclasses.replace(whole, notebooks={"40_ccl_csts": whole.notebooks["40_ccl_csts"]})
    assumed = plan_check.check(plan, NOTEBOOKS_DIR, gpus=4)
    measured = plan_check.check(plan, NOTEBOOKS_DIR, gpus=4, calibration=calibration.load(slow))
    assert not any("plan timeout" in p for p in assumed.problems)
    assert any(p.startswith("40_ccl_csts: estimated") and "plan timeout" in p for p in measured.problems)
    assert f"Calibrated from {slow} (cpu-rehearsal)" in measured.text() and "a CPU rehearsal" in measured.text()
    with pytest.raises(calibration.CalibrationError, match="not a stsnb gpu-check report"):
        calibration.load(rehearsal.with_suffix(".md"))
