"""No silent CPU: the paper plan declares ``requires: [cuda]`` and ``stsnb run`` refuses it in seconds where CUDA is
not usable, naming the likely cause; the rehearsal (which extends the paper plan) runs on the CPU."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stsnb.gpu import cuda_check

PLANS_DIR = Path(__file__).resolve().parent.parent / "papermill_runs" / "plans"


def test_the_paper_plan_is_refused_without_cuda_in_seconds(tmp_path):
    if cuda_check.problem(cuda_check.probe()) is None:
        pytest.skip("CUDA is usable here: the paper plan would run")
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "stsnb.cli", "run", "--profile", "paper", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    seconds = time.perf_counter() - started
    assert done.returncode == 2, done.stdout + done.stderr
    assert "the paper plan requires CUDA" in done.stderr and "Nothing was run" in done.stderr
    assert seconds < 30, f"{seconds:.0f} s"
    assert not any(tmp_path.iterdir()), "no run folder, no summary"


def test_only_the_paper_plan_requires_cuda():
    assert cuda_check.plan_requires_cuda(PLANS_DIR / "paper.yaml")
    for profile in ("rehearsal", "cpu", "class", "smoke"):
        assert not cuda_check.plan_requires_cuda(PLANS_DIR / f"{profile}.yaml"), profile


@pytest.mark.parametrize(
    ("state", "cause"),
    [
        (cuda_check.CudaState("2.13.0+cpu", None, False, 0, None), "no NVIDIA driver"),
        (cuda_check.CudaState("2.13.0+cpu", None, False, 0, "12.4"), "is a CPU build"),
        (cuda_check.CudaState("2.13.0+cu130", "13.0", False, 0, "12.4"), "newer than the driver's CUDA 12.4"),
        (cuda_check.CudaState("2.13.0+cu126", "12.6", False, 0, "12.8"), "CUDA_VISIBLE_DEVICES"),
    ],
)
def test_each_cause_is_named(state, cause):
    assert cause in cuda_check.problem(state)


def test_a_usable_gpu_is_no_problem():
    assert cuda_check.problem(cuda_check.CudaState("2.13.0+cu126", "12.6", True, 4, "12.8")) is None


def test_the_driver_version_is_read_from_nvidia_smi(tmp_path, monkeypatch):
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho '| NVIDIA-SMI 550.54.15   Driver Version: 550.54.15   CUDA Version: 12.4     |'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    assert cuda_check.driver_cuda_version() == "12.4"
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))
    assert cuda_check.driver_cuda_version() is None
