"""Several processes: the global batch for batch-level losses, and launching a training function on N processes.

``gather_with_grad(x)`` concatenates every process's ``x`` in rank order and keeps the autograd graph
(the functional ``all_gather`` with autograd): a contrastive loss then sees the in-batch negatives of all processes
(the Pcc-tuning code all-gathers z1, z2, z3 for Eq. 8 and the scores for Eq. 9, REFERENCE_NOTES A1), and with DDP's
gradient average each process ends with the gradient of one process on the global batch (``stsnb.training.train``'s
docstring says why; ``tests/test_distributed.py`` checks it). With one process it returns ``x`` itself.

``run(fn, args, num_processes)`` is what a notebook's ``num_processes`` parameter calls: ``fn(*args)`` on that many
processes, the main process's return value handed back through a file. With more than one process it never forks
the notebook kernel: it pickles the job into a folder and starts a child ``python -m stsnb.training.launch --torchrun
--nproc_per_node N -m stsnb.training.launch --job FILE`` (torchrun; NCCL on GPUs, gloo on the CPU, one code path), so a
kernel that touched CUDA or holds an ``Accelerator`` cannot leak either into the workers (a forked process cannot
use CUDA, and an inherited Accelerator trains without DDP). The job must pickle: a module-level function, or a
``functools.partial`` of one with picklable arguments. The child's output is relayed line by line. No orphans
(``stsnb.training.orphans``): torchrun runs in a process group of its own, stopped on every way out of ``run``, and
torchrun and its workers stop by themselves when the runner is killed outright (SIGKILL, the OOM killer).

Work that needs no other process (scoring the test sets) runs once, on the main process: ``is_main_process()``
guards it, the other processes return None, and ``run`` hands back the main process's result. While the main
process scores, the others wait in their next collective (the next run's first step, or the end of the job), so the
process group's timeout is ``COLLECTIVE_TIMEOUT``, longer than NCCL's default of 10 minutes. Not for the first
collective: a barrier right after the processes join (``join_process_group``) waits at most
``first_collective_timeout()`` (10 minutes, ``$STSNB_FIRST_COLLECTIVE_MINUTES``), so a transport that hangs (NCCL's
peer-to-peer path on some servers, a container's small ``/dev/shm``) stops the job in minutes, not hours
(docs/gpu-server.md, section 'NCCL, shared memory and the first collective').

``launch(fn, args, num_processes)`` is the in-process launcher the tests use: it runs ``fn(*args)`` here when
``num_processes`` is 1; else on the CPU it spawns fresh worker processes over gloo (``fn`` must pickle: a module-level
function) and, on GPUs, forks them through ``accelerate.notebook_launcher``, refusing when this process already
initialised CUDA or holds accelerate state (the two ways a fork goes wrong). The CPU workers are spawned, not forked:
a fork of a process that already ran multi-threaded matrix products inherits OpenMP's (libgomp's) thread-pool state
without its threads, and a forked worker's first product could wait for them forever, even on one intra-op thread
(a test suite on a loaded 2-core machine hung so; ``test_two_process_workers_of_a_multithreaded_parent_finish``
runs the case).
"""

from __future__ import annotations

import functools
import os
import pickle
import subprocess
import sys
import tempfile
from collections import deque
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch

from .orphans import PARENT_PID_ENV, PIDS_FOLDER, guard_worker, sigterm_stops, stop_group

# how long a process may wait in a collective for the others: the main process scores the test sets alone (a 7B
# model's 16-bit copy loaded and every test pair encoded) while the others wait; a crashed worker still stops every
# process at once (torchrun), a non-finite loss too (stsnb.training.train)
COLLECTIVE_TIMEOUT = timedelta(hours=2)
# the first collective, a barrier right after the processes join: NCCL sets up its transports there (peer-to-peer,
# shared memory, the network), which is where a misconfigured server hangs; nothing else runs yet, so minutes suffice
FIRST_COLLECTIVE_TIMEOUT = timedelta(minutes=10)
FIRST_COLLECTIVE_ENV = "STSNB_FIRST_COLLECTIVE_MINUTES"  # minutes, overrides FIRST_COLLECTIVE_TIMEOUT


def world_size() -> int:
    return torch.distributed.get_world_size() if torch.distributed.is_initialized() else 1


def is_main_process() -> bool:
    """True on the process whose result ``run`` hands back (rank 0), and when there is one process: the one that
    scores the test sets."""
    return world_size() == 1 or torch.distributed.get_rank() == 0


def gather_with_grad(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor`` of every process, concatenated along dim 0 in rank order, differentiable; same shape per process."""
    if world_size() == 1:
        return tensor
    try:  # torch >= 2.4: the functional collective that torch.distributed.nn.functional.all_gather now points to
        from torch.distributed._functional_collectives import all_gather_tensor_autograd
    except ImportError:
        from torch.distributed.nn.functional import all_gather

        return torch.cat(all_gather(tensor.contiguous()), dim=0)
    group = torch.distributed.group.WORLD
    return all_gather_tensor_autograd(tensor.contiguous(), gather_dim=0, group=group)


def launch(function: Callable[..., Any], args: Sequence[Any] = (), num_processes: int = 1, **kwargs: Any) -> Any:
    """Run ``function(*args)`` on ``num_processes`` processes (GPUs if there are, else CPU); 1 = in this process.

    Several processes return nothing: write results to disk from the main process.
    """
    if num_processes < 1:
        raise ValueError(f"num_processes must be >= 1, got {num_processes}")
    if num_processes == 1:
        return function(*args)
    check_fork_safe()
    if torch.cuda.is_available():
        from accelerate import notebook_launcher

        return notebook_launcher(function, tuple(args), num_processes=num_processes, **kwargs)
    return _spawn_on_cpu(functools.partial(_on_one_thread, function), tuple(args), num_processes)


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _spawn_on_cpu(function: Callable[..., Any], args: tuple, num_processes: int) -> None:
    """``function(*args)`` on ``num_processes`` spawned CPU processes over gloo on a free loopback port: what
    ``accelerate.debug_launcher`` does, with fresh interpreters instead of forks of this one."""
    from accelerate.utils import PrepareForLaunch, patch_environment
    from torch.multiprocessing import start_processes

    try:
        pickle.dumps(function)
    except (pickle.PicklingError, AttributeError, TypeError) as err:
        raise LaunchError(
            f"the function must pickle to start fresh CPU workers (a module-level function): {err}"
        ) from err
    with (
        tempfile.TemporaryDirectory() as folder,
        patch_environment(
            world_size=num_processes,
            master_addr="127.0.0.1",
            master_port=str(_free_port()),
            accelerate_mixed_precision="no",
            accelerate_debug_rdv_file=str(Path(folder) / "rendezvous"),  # the file store removes it
            accelerate_use_cpu="yes",
            gloo_socket_ifname="lo",
        ),
    ):
        start_processes(PrepareForLaunch(function, debug=True), args=args, nprocs=num_processes, start_method="spawn")


def _on_one_thread(function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)`` with one intra-op thread (a forked CPU worker: see the module docstring), then the process
    group taken down before the worker exits: a gloo group left to the interpreter's exit can abort the process
    ("terminate called without an active exception", SIGABRT) while its threads are still joinable."""
    torch.set_num_threads(1)
    try:
        return function(*args)
    finally:
        if torch.distributed.is_available() and torch.distributed.is_initialized():
            torch.distributed.destroy_process_group()


class LaunchError(RuntimeError):
    """A multi-process launch that cannot start, or whose workers failed."""


def check_fork_safe() -> None:
    """Refuse to fork workers from a process that initialised CUDA or holds accelerate state (``launch``)."""
    from accelerate.state import AcceleratorState, PartialState

    if torch.cuda.is_available() and torch.cuda.is_initialized():
        raise LaunchError(
            "this process has initialised CUDA, and forked workers cannot use it: use stsnb.training.distributed.run "
            "(a child process started by torchrun), or restart the kernel and launch before any CUDA call"
        )
    if PartialState._shared_state or AcceleratorState._shared_state:
        raise LaunchError(
            "this process already holds accelerate state (an Accelerator was made here, e.g. by a training run); "
            "forked workers would inherit it and train without DDP: use stsnb.training.distributed.run, or restart the "
            "kernel"
        )


def first_collective_timeout() -> timedelta:
    """How long the first collective may wait for the other processes: ``$STSNB_FIRST_COLLECTIVE_MINUTES`` minutes,
    else :data:`FIRST_COLLECTIVE_TIMEOUT`."""
    raw = os.environ.get(FIRST_COLLECTIVE_ENV, "").strip()
    if not raw:
        return FIRST_COLLECTIVE_TIMEOUT
    try:
        minutes = float(raw)
    except ValueError:
        minutes = float("nan")
    if not minutes > 0:
        raise LaunchError(f"{FIRST_COLLECTIVE_ENV}={raw!r}: give minutes, a number above 0 (unset: 10)")
    return timedelta(minutes=minutes)


def join_process_group() -> None:
    """Join the process group torchrun describes (NCCL on GPUs; on a machine without, accelerate needs ``cpu=True``
    to see the processes at all, and then uses gloo) with the short first timeout, then ``meet_the_others``."""
    from accelerate import PartialState

    first = first_collective_timeout()
    PartialState(cpu=not torch.cuda.is_available(), timeout=first)
    meet_the_others(first)


def meet_the_others(first: timedelta) -> None:
    """The first collective, a barrier that waits at most ``first`` (the process group's timeout as it was created);
    then the group's timeout becomes :data:`COLLECTIVE_TIMEOUT` for the job. A barrier that times out or fails
    raises :class:`LaunchError` saying what to check (with NCCL a timeout may instead end the process, through
    its watchdog, with "Watchdog caught collective operation timeout")."""
    if not torch.distributed.is_initialized():
        return
    from torch.distributed.distributed_c10d import _set_pg_timeout

    try:
        if torch.distributed.get_backend() == "nccl":
            torch.distributed.barrier(device_ids=[torch.cuda.current_device()])
        else:
            torch.distributed.barrier()
    except RuntimeError as err:
        raise LaunchError(
            f"the processes did not all meet in their first collective within {first} ({FIRST_COLLECTIVE_ENV} "
            f"waits longer); {NCCL_HINT}: {err}"
        ) from err
    _set_pg_timeout(COLLECTIVE_TIMEOUT)


NCCL_HINT = (
    "on GPUs see docs/gpu-server.md, section 'NCCL, shared memory and the first collective' (NCCL_P2P_DISABLE=1, "
    "the size of /dev/shm, NCCL_DEBUG=INFO)"
)


def run_job(job: str | Path) -> None:
    """The worker side of :func:`run` (``python -m stsnb.training.launch --job FILE``): join the processes
    (``join_process_group``), unpickle ``(function, args)``, call it, and on the main process save what it returned
    beside the job file as ``result.pt``."""
    job = Path(job)
    guard_worker(job.with_name(PIDS_FOLDER))  # stops with the runner, however it ends
    join_process_group()
    with job.open("rb") as handle:
        function, args = pickle.load(handle)
    result = function(*args)
    if is_main_process():
        tmp = job.with_name("result.pt.tmp")
        torch.save(result, tmp)
        tmp.replace(job.with_name("result.pt"))
    if torch.distributed.is_initialized():
        torch.distributed.barrier()


def launch_command(job: Path, num_processes: int) -> list[str]:
    """The torchrun command that runs ``job`` on ``num_processes`` local processes (a free port each time), through
    ``stsnb.training.launch --torchrun``: torchrun under the runner's watchdog."""
    return [
        sys.executable,
        "-m",
        "stsnb.training.launch",
        "--torchrun",
        "--standalone",
        f"--nproc_per_node={num_processes}",
        "-m",
        "stsnb.training.launch",
        "--job",
        str(job),
    ]


def _child_environment(num_processes: int = 1) -> dict[str, str]:
    """This process's environment, with its import path (so the child unpickles functions from the same modules,
    test modules and notebook folders included) and, unless set, OMP_NUM_THREADS = cores per process (torchrun
    would set 1 and print a warning banner into the notebook's output), and this process's pid, which torchrun and its
    workers watch (``stsnb.training.orphans``)."""
    env = dict(os.environ, **{PARENT_PID_ENV: str(os.getpid())})
    paths = [p for p in sys.path if p] + env.get("PYTHONPATH", "").split(os.pathsep)
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(p for p in paths if p))
    env.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // num_processes)))
    return env


def run(function: Callable[..., Any], args: Sequence[Any] = (), num_processes: int = 1, *, workdir=None) -> Any:
    """``function(*args)`` on ``num_processes`` processes; returns what the main process's call returned.

    A notebook's ``num_processes`` parameter: 1 runs in the kernel; more runs in a child started by torchrun
    (never a fork of the kernel), and the result comes back through ``result.pt`` in ``workdir`` (a temporary
    folder by default; ``torch.save``: tensors, dicts, dataclasses). Raises :class:`LaunchError` with the last lines
    of the workers' output when they fail. However ``run`` ends, torchrun and its workers end with it
    (``stsnb.training.orphans``).
    """
    if num_processes < 1:
        raise ValueError(f"num_processes must be >= 1, got {num_processes}")
    if num_processes == 1:
        return function(*args)
    with tempfile.TemporaryDirectory(prefix="stsnb-run-", dir=workdir) as folder:
        job = Path(folder) / "job.pkl"
        try:
            job.write_bytes(pickle.dumps((function, tuple(args))))
        except (pickle.PicklingError, AttributeError, TypeError) as err:
            raise LaunchError(
                f"{getattr(function, '__name__', function)!s} cannot run on {num_processes} processes: the job must "
                f"pickle (a module-level function, or functools.partial of one): {err}"
            ) from err
        tail: deque[str] = deque(maxlen=40)
        worker: deque[str] = deque(maxlen=25)  # the workers' own lines ("[rank0]: ..."): their traceback
        with subprocess.Popen(
            launch_command(job, num_processes),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=_child_environment(num_processes),
            start_new_session=True,  # a group of its own, which stop_group stops as one (Ctrl-C too: see below)
        ) as child:
            assert child.stdout is not None
            pids = job.with_name(PIDS_FOLDER)  # torchrun's pid, then each worker's (``orphans.guard_worker``)
            try:
                pids.mkdir()
                (pids / "torchrun").write_text(str(child.pid))
                with sigterm_stops(lambda: stop_group(child, pids)):
                    for line in child.stdout:
                        tail.append(line)
                        if line.startswith("[rank"):
                            worker.append(line)
                        sys.stderr.write(line)
                    code = child.wait()
            finally:
                stop_group(child, pids)  # an exception or Ctrl-C here: torchrun and its workers stop too
        result = job.with_name("result.pt")
        if code != 0 or not result.is_file():
            hung = any("collective operation timeout" in line or "did not all meet" in line for line in tail)
            hint = f"\n(a collective timed out: {NCCL_HINT})" if hung else ""
            raise LaunchError(
                f"{getattr(function, '__name__', function)!s} on {num_processes} processes failed (exit {code}"
                f"{'' if result.is_file() else ', no result'}); last lines:\n{''.join(worker or tail)}{hint}"
            )
        return torch.load(result, weights_only=False)
