"""``stsnb gpu-check`` without a GPU: it refuses with exit 2 naming why; ``--cpu-rehearsal`` runs every measurement at
tiny sizes and writes the report, which ``stsnb run --check --calibration`` reads in place of the assumptions. The
rehearsal takes about a minute, so the tests that read it are in the long tier (``pytest --long -m long``)."""

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


@pytest.mark.long  # the GPU path's rehearsal (about a minute): off README command 2's default tier
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
        assert set(row["ratios"]) == {"compute", "overhead", "evaluation", "io"}, row["ratios"]
        assert row["typical_step"]["measured_seconds"] != 0 and row["evaluation"]["seconds_per_sequence"] > 0
        assert row["notebook_hours_recomputed"] > 0
    assert "scoring" in pcc and pcc["scoring"]["measured_bytes"] >= 0 and pcc["scoring"]["estimated_bytes"] > 0
    assert report["io"]["status"] == "ok" and report["io"]["ratio"] > 0
    assert report["ddp"]["status"].startswith("not run: the rehearsal runs on one CPU device")
    evaluation = report["evaluation"]
    assert evaluation["status"] == "ok" and evaluation["pairs"] == 100
    assert evaluation["largest_cosine_difference"] < 1e-4, "stsnb and sentence-transformers encode alike"
    markdown = rehearsal.with_suffix(".md").read_text()
    assert markdown.startswith("# stsnb gpu-check: CPU rehearsal") and "say nothing about a GPU" in markdown


@pytest.mark.long  # the GPU path's rehearsal (about a minute): off README command 2's default tier
def test_the_check_reads_the_report_in_place_of_the_assumptions(rehearsal, tmp_path):
    """A report whose CCL compute took 100x the assumed time puts notebook 40 over its timeout; without it, it is
    not."""
    report = json.loads(rehearsal.read_text())
    for row in report["fits"]:
        row["ratios"] = {"compute": 100.0 if row["notebook"] == "40_ccl_csts" else 1.0}
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


def _calibration(tmp_path: Path, name: str, **ratios: float) -> calibration.Calibration:
    """A calibration file measuring notebook 20's terms at ``ratios`` (the others as assumed)."""
    row = {"notebook": "20_sts_regression", "status": "ok", "memory_ratio": 1.0, "ratios": ratios}
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"gpu": "NVIDIA A100-SXM4-80GB", "rehearsal": False, "fits": [row]}))
    return calibration.load(path)


def test_each_term_is_calibrated_by_its_own_ratio(tmp_path):
    """Notebook 20's hours are mostly per-step overhead (1.07M steps at an assumed 0.05 s): measured at 3x, the
    overhead takes it past its 42 h timeout; compute at 3x barely moves it (within its timeout still). One ratio for
    all the hours, as before, would have scaled the overhead by the compute's ratio."""
    whole = load_plan(plan_path("paper"))
    plan = dataclasses.replace(whole, notebooks={"20_sts_regression": whole.notebooks["20_sts_regression"]})
    assumed = plan_check.check(plan, NOTEBOOKS_DIR, gpus=4)
    overhead = plan_check.check(plan, NOTEBOOKS_DIR, gpus=4, calibration=_calibration(tmp_path, "o", overhead=3.0))
    compute = plan_check.check(plan, NOTEBOOKS_DIR, gpus=4, calibration=_calibration(tmp_path, "c", compute=3.0))
    (base,), (slow_steps,), (slow_compute,) = assumed.costs, overhead.costs, compute.costs
    timeout = base.timeout / 3600
    assert base.hours < timeout and not assumed.problems
    assert slow_steps.hours == pytest.approx(base.hours + 2 * base.overhead_hours) and slow_steps.hours > timeout
    assert any(p.startswith("20_sts_regression: estimated") and "plan timeout" in p for p in overhead.problems)
    compute_hours = sum(f.compute_hours for f in base.fits)
    assert slow_compute.hours == pytest.approx(base.hours + 2 * compute_hours) and slow_compute.hours < timeout
    assert slow_compute.hours - base.hours < (slow_steps.hours - base.hours) / 2, "compute is the smaller term"
    assert not compute.problems
    text = overhead.text()
    assert "20_sts_regression: memory x1.00, compute assumed, overhead x3.00, evaluation assumed, io assumed" in text


def test_a_report_with_one_time_ratio_is_refused(tmp_path):
    path = tmp_path / "old.json"
    row = {"notebook": "20_sts_regression", "status": "ok", "memory_ratio": 1.0, "time_ratio": 0.5}
    path.write_text(json.dumps({"gpu": "g", "rehearsal": False, "fits": [row]}))
    with pytest.raises(calibration.CalibrationError, match="earlier stsnb gpu-check.*run `stsnb gpu-check` again"):
        calibration.load(path)
