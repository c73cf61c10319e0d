"""No orphans: the processes of a multi-process fit stop when the process that started them is gone, however it went,
and a checkpoint folder has one writer at a time.

``stsnb.training.distributed.run`` starts torchrun in a session (process group) of its own, with its own pid in
``$STSNB_PARENT_PID``, and stops that group on every way out of ``run`` (:func:`stop_group`: SIGTERM, then SIGKILL
after ``GRACE`` seconds): a return, an exception, Ctrl-C, and SIGTERM (:func:`sigterm_stops`). A runner killed outright
(SIGKILL, the OOM killer, a hang-up that takes the kernel) runs no code of its own, so its children watch it:

- torchrun's agent (``python -m stsnb.training.launch --torchrun ...``, :func:`guard_agent`) asks Linux for SIGTERM
  when its parent dies (``prctl(PR_SET_PDEATHSIG)``), on which torchrun stops its workers, and runs a watchdog thread
  that, once its parent pid changes or the runner's pid is gone, does the same (SIGTERM to itself), then kills its
  group after ``GRACE`` seconds;
- each worker (``distributed.run_job``, :func:`guard_worker`; torchrun starts them in sessions of their own, outside
  the agent's group) asks for SIGKILL when the agent dies and watches the agent and the runner the same way, then kills
  its own group (itself and its data loader processes). It writes its pid to ``pids/rank-N`` beside the job file.

macOS has no prctl: the watchdogs alone stop them there, within ``POLL`` seconds. A zombie (dead, not yet reaped) counts
as gone on Linux (``/proc``).

:func:`checkpoints_locked` is the lock ``fit``'s main process holds on its checkpoint folder (an exclusive lock on
``.lock`` inside it, ``stsnb.training.file_lock``: an flock, which the kernel drops when its holder dies, where the file
system supports it, as ``stsnb.runs.locks`` does for run folders): a
second fit writing the same folder (a second runner, or an orphan of a killed one) fails at once, naming the folder and
the holder's pid, instead of both writing ``last/``. POSIX only, as is the GPU server.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

PARENT_PID_ENV = "STSNB_PARENT_PID"  # the runner's pid (``distributed.run``): torchrun and its workers stop without it
AGENT_PID_ENV = "STSNB_AGENT_PID"  # torchrun's agent's pid, for its workers
POLL = 1.0  # seconds between two looks of a watchdog
GRACE = 5.0  # seconds from SIGTERM to SIGKILL when a group is stopped
PIDS_FOLDER = "pids"  # beside the job file: ``rank-N`` holds worker N's pid
LOCK_FILE = ".lock"  # in a checkpoint folder, while a fit writes it


def set_parent_death_signal(signum: int) -> bool:
    """Ask Linux to send ``signum`` to this process when the thread that started it exits (``prctl``); False where
    there is no prctl (macOS) or it fails."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(1, int(signum), 0, 0, 0) == 0  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return False


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (on Linux, from ``/proc/<pid>/stat``)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc (macOS), or it went just now
    return stat.rpartition(")")[2].split()[:1] not in (["Z"], ["X"])


def watch(pids: Sequence[int], on_gone: Callable[[], None], poll: float = POLL) -> threading.Thread:
    """A daemon thread that calls ``on_gone`` once this process's parent changes (its parent died and it was
    reparented) or one of ``pids`` is gone (:func:`process_alive`)."""
    parent = os.getppid()

    def look() -> None:
        while os.getppid() == parent and all(process_alive(pid) for pid in pids):
            time.sleep(poll)
        on_gone()

    thread = threading.Thread(target=look, name="stsnb-parent-watchdog", daemon=True)
    thread.start()
    return thread


def kill_own_group(signum: int = signal.SIGKILL) -> None:
    """``signum`` to this process's group when it leads one (a session torchrun or ``run`` started), else to itself
    only (never to a group it merely joined: that could be a shell's)."""
    if os.getpgrp() == os.getpid():
        os.killpg(os.getpid(), signum)
    else:
        os.kill(os.getpid(), signum)


def _runner_pid() -> int | None:
    value = os.environ.get(PARENT_PID_ENV, "")
    return int(value) if value.isdigit() else None


def guard_agent() -> None:
    """In torchrun's agent, before it starts: stop with the runner (see the module docstring). Nothing without
    ``$STSNB_PARENT_PID`` (torchrun started by hand)."""
    runner = _runner_pid()
    if runner is None:
        return
    os.environ[AGENT_PID_ENV] = str(os.getpid())  # the workers watch the agent too
    signalled = set_parent_death_signal(signal.SIGTERM)
    parent = os.getppid()

    def stop() -> None:
        with contextlib.suppress(OSError):  # the runner read our output: the pipe may be broken
            print(f"[stsnb] runner {runner} is gone: stopping torchrun and its workers", file=sys.stderr, flush=True)
        if not (signalled and os.getppid() != parent):  # else Linux sent it: a second one would cut torchrun's stop
            os.kill(os.getpid(), signal.SIGTERM)  # torchrun's handler stops its workers
        time.sleep(GRACE)
        kill_own_group(signal.SIGKILL)

    watch([runner], stop)


def guard_worker(pids_folder: Path) -> None:
    """In a worker of ``run``, first thing: its pid to ``pids_folder/rank-<RANK>``, SIGKILL when torchrun's agent
    dies, and a watchdog on the agent and the runner that kills its own group. Nothing without ``$STSNB_PARENT_PID``."""
    runner = _runner_pid()
    if runner is None:
        return
    set_parent_death_signal(signal.SIGKILL)
    pids_folder.mkdir(exist_ok=True)
    (pids_folder / f"rank-{os.environ.get('RANK', '0')}").write_text(str(os.getpid()))
    agent = os.environ.get(AGENT_PID_ENV, "")
    watch([runner, *([int(agent)] if agent.isdigit() else [])], lambda: kill_own_group(signal.SIGKILL))


def worker_pids(pids_folder: Path) -> list[int]:
    """The pids the workers of one ``run`` wrote (:func:`guard_worker`)."""
    if not pids_folder.is_dir():
        return []
    return [int(p.read_text()) for p in sorted(pids_folder.glob("rank-*")) if p.read_text().strip().isdigit()]


def stop_group(child: subprocess.Popen, pids_folder: Path, grace: float = GRACE) -> None:
    """Stop torchrun's group (``child`` leads it) unless it has exited: SIGTERM (torchrun stops its workers), SIGKILL
    after ``grace`` seconds, then SIGKILL to the group of every worker still alive (each leads its own)."""
    if child.poll() is not None:
        return
    for signum in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signum)
        try:
            child.wait(timeout=grace)
            break
        except subprocess.TimeoutExpired:
            continue
    for pid in worker_pids(pids_folder):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if process_alive(pid) and os.getpgid(pid) == pid:  # still the worker's own group, not a reused pid's
                os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        child.wait(timeout=grace)


@contextlib.contextmanager
def sigterm_stops(stop: Callable[[], None]) -> Iterator[None]:
    """While inside: SIGTERM calls ``stop`` (the children's group), then ends this process by SIGTERM as it would have
    without us. Only in the main thread and only where SIGTERM has its default action (a handler of its own, as the
    batch runner's, is left alone)."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        yield
        return

    def handler(signum: int, frame: object) -> None:
        stop()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


class CheckpointsLocked(RuntimeError):
    """Another fit (a second runner, or an orphaned worker of a killed run) is writing the same checkpoint folder."""


@contextlib.contextmanager
def checkpoints_locked(folder: Path | None) -> Iterator[None]:
    """Hold an exclusive lock (``stsnb.training.file_lock``) on ``folder/.lock`` (created with the folder) for a fit,
    or raise :class:`CheckpointsLocked` at once naming the folder and the holder's pid. ``None``: nothing to lock (no
    checkpoints, or not the main process). The file holds the holder's pid and start time, and is removed on
    release; one left by a killed fit is taken over."""
    if folder is None:
        yield
        return
    from .file_lock import Busy, exclusive

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(exclusive(folder / LOCK_FILE, wait=False))
        except Busy as busy:
            pid, started = busy.holder.get("pid", "unknown"), busy.holder.get("started", "unknown")
            raise CheckpointsLocked(
                f"{folder} is being written by another fit (pid {pid}, started {started}): "
                f"a second run of the same notebook, or a process of a killed run still training; stop it (kill "
                f"{pid}) or wait for it, then run again"
            ) from None
        yield
