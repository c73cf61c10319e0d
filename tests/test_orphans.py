"""No orphans (``stsnb.training.orphans``): torchrun and its workers stop with the runner however it ends, and a
checkpoint folder has one writer at a time.

The process tests start a runner (a Python process calling ``stsnb.training.distributed.run`` on 2 CPU processes, as a
notebook kernel does), end it (SIGKILL, SIGTERM, Ctrl-C) and look for its workers by the pids they wrote; they are
marked ``distributed`` (they go first, before any test leaves accelerate state in pytest's process).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from torch import nn

from stsnb.training.orphans import PIDS_FOLDER, CheckpointsLocked, checkpoints_locked, process_alive

TESTS = Path(__file__).resolve().parent
EPOCHS, EXAMPLES, BATCH = 10, 64, 2  # 16 optimizer steps per epoch on 2 processes: 160 steps
TOTAL_STEPS = EPOCHS * EXAMPLES // BATCH // 2
EVAL_EVERY = 4


def _collate(items):
    return torch.stack([x for x, _ in items]), torch.stack([y for _, y in items])


def _slow_fit(folder: str, pause: float, resume: bool):
    """A 2-process fit of a linear model checkpointing to ``folder`` every ``EVAL_EVERY`` steps, ``pause`` seconds a
    batch (a slow fit: 80 s at 0.5 s, long enough to outlive a killed runner by far)."""
    from stsnb.training.config import TrainConfig
    from stsnb.training.train import fit

    generator = torch.Generator().manual_seed(0)
    data = [(torch.randn(3, generator=generator), torch.randn((), generator=generator)) for _ in range(EXAMPLES)]

    def mse(model, batch):
        time.sleep(pause)
        x, y = batch
        return ((model(x).squeeze(-1) - y) ** 2).mean()

    def evaluate(model):
        with torch.no_grad():
            return -mse(model, _collate(data)).item()

    torch.manual_seed(1)
    # last/ at every evaluation (the default writes it at most every 10 minutes: this fit would checkpoint at its end)
    settings = dict(epochs=EPOCHS, batch_size=BATCH, lr=0.01, eval_every=EVAL_EVERY, progress=False)
    settings["last_checkpoint_minutes"] = 0
    config = TrainConfig(**settings, checkpoint_dir=folder, resume=resume)
    return fit(nn.Linear(3, 1), mse, data, config, collate=_collate, evaluate=evaluate)


def _sleep(seconds: float) -> None:
    time.sleep(seconds)


_RUNNER = """
import functools, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C raises here even under a shell that ignores it
sys.path.insert(0, {tests!r})
import test_orphans
from stsnb.training.distributed import run

run(functools.partial(getattr(test_orphans, {job!r}), *{args!r}), num_processes=2, workdir={work!r})
"""


def _start_runner(tmp_path: Path, job: str, args: tuple) -> tuple[subprocess.Popen, Path]:
    """A runner process calling ``run(job(*args), num_processes=2)``, its output in ``runner.log``; and its work
    folder, where ``run`` puts the job and the pids."""
    work = tmp_path / "work"
    work.mkdir()
    script = tmp_path / "runner.py"
    script.write_text(_RUNNER.format(tests=str(TESTS), job=job, args=args, work=str(work)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    with (tmp_path / "runner.log").open("w") as log:
        runner = subprocess.Popen([sys.executable, str(script)], stdout=log, stderr=subprocess.STDOUT, env=env)
    return runner, work


def _wait_for(condition: Callable[[], bool], seconds: float, what: str, log: Path) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} not within {seconds} s; the runner's output:\n{log.read_text()[-3000:]}")
        time.sleep(0.2)


def _pids(work: Path) -> dict[str, int]:
    """torchrun's and each worker's pid, as ``run`` and the workers wrote them."""
    folders = list(work.glob(f"stsnb-run-*/{PIDS_FOLDER}"))
    files = sorted(folders[0].iterdir()) if folders else []
    return {p.name: int(p.read_text()) for p in files if p.read_text().strip().isdigit()}


def _workers_up(work: Path) -> bool:
    return {"torchrun", "rank-0", "rank-1"} <= set(_pids(work))


def _alive(pids: dict[str, int]) -> dict[str, int]:
    return {name: pid for name, pid in pids.items() if process_alive(pid)}


def _none_alive_within(pids: dict[str, int], seconds: float) -> dict[str, int]:
    """The processes of ``pids`` still alive after up to ``seconds`` (none: the check passes at once)."""
    deadline = time.monotonic() + seconds
    while _alive(pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    return _alive(pids)


@contextlib.contextmanager
def _cleaned_up(runner: subprocess.Popen, work: Path):
    """Whatever the test finds, no process of it outlives the test."""
    try:
        yield
    finally:
        for pid in [runner.pid, *_alive(_pids(work)).values()]:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        runner.wait()


@pytest.mark.distributed
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_a_stopped_runner_stops_torchrun_and_its_workers_before_it_ends(tmp_path, signum):
    """SIGTERM (its default action: the runner dies, after ``run`` stopped the group) and Ctrl-C (KeyboardInterrupt
    through ``run``'s finally): by the time the runner has ended, no process of its fit is left."""
    runner, work = _start_runner(tmp_path, "_sleep", (300,))
    with _cleaned_up(runner, work):
        _wait_for(lambda: _workers_up(work), 120, "the two workers up", tmp_path / "runner.log")
        pids = _pids(work)
        runner.send_signal(signum)
        runner.wait(timeout=60)
        assert _none_alive_within(pids, 2) == {}, (tmp_path / "runner.log").read_text()[-3000:]
    if signum == signal.SIGTERM:
        assert runner.returncode == -signal.SIGTERM  # it still ends as SIGTERM ends it


@pytest.mark.long  # two torchrun starts on two CPU processes: 50 to 60 s on a loaded 2-core machine
@pytest.mark.distributed
def test_a_sigkilled_runner_leaves_no_worker_and_the_fit_resumes_from_its_checkpoint(tmp_path):
    """The runner of a slow 2-process fit is SIGKILLed (as the OOM killer does) once the fit has checkpointed: torchrun
    and both workers are gone within 30 s (the parent-death signal, else the watchdogs), the folder's lock went with
    them, and a resumed fit continues from the saved step to the end."""
    from stsnb.training.checkpoints import last_checkpoint
    from stsnb.training.distributed import run

    folder = tmp_path / "ckpt"
    runner, work = _start_runner(tmp_path, "_slow_fit", (str(folder), 0.5, False))
    log = tmp_path / "runner.log"

    def checkpointed() -> bool:
        last = last_checkpoint(folder)
        return last is not None and json.loads((last / "progress.json").read_text())["step"] >= EVAL_EVERY

    with _cleaned_up(runner, work):
        _wait_for(lambda: _workers_up(work) and checkpointed(), 180, "a checkpoint after a step", log)
        pids = _pids(work)
        held_by_rank_0 = f"{re.escape(str(folder))}.*pid {pids['rank-0']}"
        with pytest.raises(CheckpointsLocked, match=held_by_rank_0), checkpoints_locked(folder):
            pass
        runner.kill()
        runner.wait()
        assert _none_alive_within(pids, 30) == {}, log.read_text()[-3000:]
    saved = json.loads((last_checkpoint(folder) / "progress.json").read_text())["step"]
    assert 0 < saved < TOTAL_STEPS
    result = run(functools.partial(_slow_fit, str(folder), 0.0, True), num_processes=2)
    assert (result.resumed_at, result.steps) == (saved, TOTAL_STEPS)


_WATCHED = """
import os, signal, sys, time
from stsnb.training.orphans import kill_own_group, watch

os.setsid()
watch([int(sys.argv[1])], lambda: kill_own_group(signal.SIGKILL), poll=0.2)
print("watching", flush=True)
time.sleep(120)
"""

_PARENT = """
import os, subprocess, sys, time

watched = int(sys.argv[2]) if len(sys.argv) > 2 else os.getpid()
child = subprocess.Popen([sys.executable, "-c", sys.argv[1], str(watched)])
print(child.pid, flush=True)
child.wait()
"""


@pytest.mark.parametrize("gone", ["parent", "watched"])
def test_the_watchdog_alone_kills_its_process_when_the_parent_or_the_watched_pid_is_gone(gone):
    """Without the parent-death signal (macOS): a watchdog kills its process's group once its parent dies, or once a
    pid it watches that is not its parent (a worker watching the runner) is gone."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    extra = [str(other.pid)] if gone == "watched" else []
    parent = subprocess.Popen(
        [sys.executable, "-c", _PARENT, _WATCHED, *extra], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        child = int(parent.stdout.readline())
        assert parent.stdout.readline().strip() == "watching"
        assert process_alive(child)
        (parent if gone == "parent" else other).kill()
        assert _none_alive_within({"child": child}, 10) == {}
    finally:
        for process in (parent, other):
            process.kill()
            process.wait()
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)


def test_a_second_holder_of_a_checkpoint_folder_is_refused_at_once_naming_the_folder_and_pid(tmp_path):
    folder = tmp_path / "ckpt"
    with checkpoints_locked(folder):
        holder = json.loads((folder / ".lock").read_text())
        assert holder["pid"] == os.getpid()
        started = time.monotonic()
        refusal = f"{re.escape(str(folder))} is being written by another fit \\(pid {os.getpid()},"
        with pytest.raises(CheckpointsLocked, match=refusal), checkpoints_locked(folder):
            pass
        assert time.monotonic() - started < 1  # refused, not waited for
    assert not (folder / ".lock").exists()  # released: removed
    (folder / ".lock").write_text(json.dumps({"pid": 999999999}))  # left by a killed fit: nobody holds it
    with checkpoints_locked(folder):
        assert json.loads((folder / ".lock").read_text())["pid"] == os.getpid()
    with checkpoints_locked(None):  # no checkpoints, or not the main process: nothing to lock
        pass


def test_a_fit_on_a_locked_checkpoint_folder_fails_before_writing(tmp_path):
    folder = tmp_path / "ckpt"
    with checkpoints_locked(folder), pytest.raises(CheckpointsLocked, match=re.escape(str(folder))):
        _slow_fit(str(folder), 0.0, False)
    assert sorted(p.name for p in folder.iterdir()) == []
