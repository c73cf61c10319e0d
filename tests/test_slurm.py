"""scripts/slurm/paper.sbatch run under stand-in ``sbatch``, ``srun``, ``scontrol`` and ``stsnb`` commands (shell
scripts on PATH that record their arguments and environment): the stsnb command lines it makes, offline, with the
allocation's GPU count, ``--resume`` once requeued, and a requeue on the time limit's signal."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "slurm" / "paper.sbatch"

STANDINS = {
    # sbatch: records its arguments, then runs the script as Slurm would start it on the node
    "sbatch": """#!/bin/bash
printf '%s\\n' "$@" > "$STANDIN_LOG/sbatch.args"
script="$1"; shift
export SLURM_JOB_ID="${SLURM_JOB_ID:-4242}" SLURM_SUBMIT_DIR="$PWD" SLURM_CPUS_PER_TASK=16
exec bash "$script" "$@"
""",
    # srun: records its arguments, then runs the command after its options in its place
    "srun": """#!/bin/bash
printf '%s\\n' "$@" > "$STANDIN_LOG/srun.args"
while [[ "$1" == -* ]]; do shift; done
exec "$@"
""",
    "scontrol": """#!/bin/bash
printf '%s\\n' "$@" > "$STANDIN_LOG/scontrol.args"
""",
    # stsnb: records each call's arguments and environment; with STANDIN_HOLD the run waits for a signal
    "stsnb": """#!/bin/bash
n=$(find "$STANDIN_LOG" -name 'stsnb.*.args' | wc -l)
printf '%s\\n' "$@" > "$STANDIN_LOG/stsnb.$n.args"
env > "$STANDIN_LOG/stsnb.$n.env"
[[ "$2" == "--check" ]] && exit "${STANDIN_CHECK_EXIT:-0}"
if [[ -n "${STANDIN_HOLD:-}" ]]; then
    trap 'echo TERM > "$STANDIN_LOG/stsnb.term"; exit 130' TERM
    touch "$STANDIN_LOG/stsnb.started"
    while :; do sleep 0.1; done
fi
""",
}


@pytest.fixture
def cluster(tmp_path):
    """``submit(*args, **env)``: ``sbatch paper.sbatch ARGS`` in a fresh folder with the stand-ins first on PATH and
    ``env`` set (no SLURM_* or CUDA_VISIBLE_DEVICES of this machine); returns the finished process (``wait=False``:
    the running one) and the log folder."""
    bin_dir, log = tmp_path / "bin", tmp_path / "log"
    bin_dir.mkdir()
    log.mkdir()
    for name, text in STANDINS.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    base = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_") and k not in {"CUDA_VISIBLE_DEVICES"}}
    base |= {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "STANDIN_LOG": str(log)}
    base.pop("STSNB", None)
    base.pop("HF_HUB_OFFLINE", None)

    def submit(*args: str, wait: bool = True, **env: str):
        command = dict(args=["sbatch", str(SCRIPT), *args], cwd=tmp_path, env={**base, **env}, text=True)
        if wait:
            return subprocess.run(**command, capture_output=True, timeout=60), log
        return subprocess.Popen(**command, stdout=subprocess.PIPE, stderr=subprocess.PIPE), log

    return submit


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def environment(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in lines(path) if "=" in line)


def test_the_script_asks_slurm_for_a_requeue_and_a_signal_before_the_time_limit():
    directives = [line.split()[1] for line in SCRIPT.read_text().splitlines() if line.startswith("#SBATCH ")]
    assert "--requeue" in directives and "--signal=B:USR1@600" in directives
    assert any(d.startswith("--gpus-per-node=") for d in directives)
    assert os.access(SCRIPT, os.X_OK)


def test_a_first_run_checks_the_plan_on_the_allocated_gpus_then_runs_it_offline(cluster):
    process, log = cluster("--only", "20_sts_regression", SLURM_GPUS_ON_NODE="4")
    assert process.returncode == 0, process.stderr
    assert lines(log / "sbatch.args") == [str(SCRIPT), "--only", "20_sts_regression"]
    check = ["run", "--check", "--offline", "--profile", "paper", "--gpus", "4", "--only", "20_sts_regression"]
    assert lines(log / "stsnb.0.args") == check  # the job's notebooks, offline, on its GPUs
    assert lines(log / "stsnb.1.args") == ["run", "--profile", "paper", "--only", "20_sts_regression"]  # no --resume
    assert lines(log / "srun.args")[:3] == ["--ntasks=1", "--cpus-per-task=16", "--kill-on-bad-exit=1"]
    assert environment(log / "stsnb.1.env")["HF_HUB_OFFLINE"] == "1"


def test_a_requeued_run_resumes_and_counts_the_visible_gpus(cluster):
    process, log = cluster(SLURM_RESTART_COUNT="1", CUDA_VISIBLE_DEVICES="0,1")
    assert process.returncode == 0, process.stderr
    assert lines(log / "stsnb.0.args") == ["run", "--check", "--offline", "--profile", "paper", "--gpus", "2"]
    assert lines(log / "stsnb.1.args") == ["run", "--profile", "paper", "--resume"]
    assert environment(log / "stsnb.1.env")["CUDA_VISIBLE_DEVICES"] == "0,1"


def test_a_one_gpu_job_of_one_notebook_checks_that_notebook_on_its_gpu(cluster):
    """The four jobs of docs/gpu-server.md: a single-process notebook asks for one GPU; its check and run take the
    job's notebook alone (``--only=`` works too)."""
    process, log = cluster("--only=30_hicl", SLURM_GPUS_ON_NODE="1", SLURM_RESTART_COUNT="2")
    assert process.returncode == 0, process.stderr
    assert lines(log / "stsnb.0.args") == ["run", "--check", "--offline", "--profile", "paper", "--gpus", "1",
                                           "--only=30_hicl"]  # fmt: skip
    assert lines(log / "stsnb.1.args") == ["run", "--profile", "paper", "--resume", "--only=30_hicl"]


def test_no_gpu_or_a_failed_check_runs_nothing(cluster):
    process, log = cluster()
    assert process.returncode == 2 and "no GPU in this allocation" in process.stderr
    assert not (log / "srun.args").exists() and not (log / "stsnb.0.args").exists()
    process, log = cluster(SLURM_GPUS_ON_NODE="gpu:2", STANDIN_CHECK_EXIT="1")
    assert process.returncode == 1 and lines(log / "stsnb.0.args")[-1] == "2"  # "type:count" read as its count
    assert not (log / "srun.args").exists()


def test_the_time_limit_signal_stops_the_run_and_requeues_the_job(cluster):
    process, log = cluster(SLURM_GPUS_ON_NODE="4", STANDIN_HOLD="1", wait=False)
    deadline = time.monotonic() + 60
    while not (log / "stsnb.started").exists():
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.05)
    process.send_signal(signal.SIGUSR1)  # what --signal=B:USR1@600 sends the batch shell
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert (log / "stsnb.term").is_file()  # the run was stopped (stsnb run records it and writes summary.md)
    assert lines(log / "scontrol.args") == ["requeue", "4242"]
    assert "requeueing job 4242" in stderr
