"""The execution of a plan behind ``stsnb run``: every notebook in a kernel of its own, timeouts, a lock per
notebook, Ctrl-C and SIGTERM, and only good results promoted (the plan: ``stsnb.runs.plans``; summary.md:
``stsnb.runs.summary``; the locks: ``stsnb.runs.locks``).

Each notebook runs (papermill, kernel ``python3``, cwd = its folder) into ``<out>/<profile>/.partial-<nb>/``; the
notebook itself writes params.yaml, env.json, metrics.json, results.csv, figures/ and STATUS there through
``stsnb.runs`` (``$STSNB_RUN_DIR``), metrics.json and results.csv after each section it records. Only a run that
ends with STATUS ``ok`` replaces ``<out>/<profile>/<nb>/``; a failed attempt goes to ``<out>/<profile>/<nb>.failed/``
(with STATUS ``failed: <reason>``, error.log and what its finished sections recorded) and the earlier good result
stays untouched. A notebook past its timeout, or whose kernel died (e.g. killed by the out-of-memory killer), is a
failed notebook like one that raised: the batch goes on with the next one and exits 1 at the end. The commits the
plan pins its Hub models at (``trust_remote_code:``) reach every kernel in ``$STSNB_HUB_REVISIONS``
(``stsnb.models.revisions``).

With ``checkpoints: true`` every ``stsnb.training.train.fit`` of a notebook checkpoints under
``<out>/<profile>/.checkpoints/<nb>/<run key>/`` (``$STSNB_CHECKPOINTS``). A notebook that succeeds keeps each
run's selected weights as ``<nb>/weights/<run key>.pt`` (with ``about.json``: settings, loss, best step) and the
rest is deleted; a failed or killed one leaves them for ``stsnb run --resume``, whose fits continue from their last
checkpoint (those a killed run finished return at once). Without ``--resume``, checkpoints left by an earlier run
are moved aside (``.checkpoints/<nb>.earlier-<time>``), never deleted.

A folder is replaced by renaming the old one aside (``.old-<name>``), the new one into place, then deleting the
aside; ``recover`` (at the start of every batch) puts back an aside that a crash left without its replacement.
``<out>/<profile>/summary.md`` (``stsnb.runs.summary``) is rewritten after every notebook and on the way out.

What a kernel prints outside its cells (ipykernel's start-up warnings, a library's C-level messages) goes to
``kernel.log`` in the scratch folder, not the terminal; the progress lines of its fits and evaluations go to
``progress.log`` there (``$STSNB_PROGRESS_LOG``, ``stsnb.models.progress``), which the terminal shows as one live line
per notebook (``stsnb.runs.live``). A good run drops both; a failed one keeps them beside its error.log.

Runs of one profile may share its folder when they run different notebooks (``stsnb run --parallel``, two shells
with ``--only``): each holds the locks of the notebooks it runs, and promotions, ``recover`` and summary.md take the
folder's short lock (``stsnb.runs.locks``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import math
import os
import re
import shutil
import sys
import time
import traceback
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..models.revisions import LOADED_ENV
from ..training.heartbeat import HEARTBEAT_ENV, HEARTBEAT_FILE
from .context import MODELS_LOADED_FILE, RUN_DIR_ENV
from .live import LiveLine
from .locks import folder_lock, notebook_locks
from .plans import DEFAULT_OUT, NOTEBOOKS_DIR, PLANS_DIR, PlanError, check_plan, load_plan, plan_path, plan_pins
from .resume import skip_reason, source_state, write_record
from .summary import Outcome, read_status, recorded_outcome, status_text, write_runtime, write_summary

KERNEL = "python3"
# Read by tqdm and huggingface_hub when they are imported, so they are set before the kernel starts.
QUIET_ENV = {"TQDM_DISABLE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
PROGRESS_LOG = "progress.log"  # in the scratch folder: the plain progress lines of the notebook's fits and evaluations
KERNEL_LOG = "kernel.log"  # in the scratch folder: what the kernel process printed outside its cells
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def kernel_interpreter(kernel: str = KERNEL) -> str:
    """The Python that the Jupyter kernel ``kernel`` runs (jupyter_client maps a bare ``python`` to ours)."""
    from jupyter_client.kernelspec import KernelSpecManager

    executable = KernelSpecManager().get_kernel_spec(kernel).argv[0]
    major, minor = sys.version_info[:2]
    if executable in {"python", f"python{major}", f"python{major}.{minor}"}:
        return sys.executable
    return executable


def check_kernel(kernel: str = KERNEL) -> None:
    """Refuse to run when kernel ``python3`` is another interpreter than this one (e.g. a user-wide kernelspec)."""
    executable = kernel_interpreter(kernel)
    if Path(executable).absolute().parent != Path(sys.executable).absolute().parent:
        raise PlanError(
            f"the Jupyter kernel {kernel!r} runs {executable}, not this interpreter {sys.executable}: "
            f"install ours with `{sys.executable} -m ipykernel install --sys-prefix` and remove the other kernelspec"
        )


@contextlib.contextmanager
def kernel_environment(
    run_dir: Path, checkpoints: Path | None = None, resume: bool = False, timeout: float | None = None
) -> Iterator[None]:
    """Set the variables a kernel must see at start-up (it inherits our environment), restore them after: its run
    folder, quiet progress bars writing plain lines to ``progress.log`` there, the checkpoints, when it starts with
    its ``timeout`` (a fit's pace line projects its end against it, ``stsnb.training.progress.Pace``) and where its
    fits write their heartbeat for ``stsnb status`` (``stsnb.training.heartbeat``)."""
    from ..models.progress import PROGRESS_LOG_ENV
    from ..training.checkpoints import CHECKPOINTS_ENV, RESUME_ENV
    from ..training.progress import NOTEBOOK_STARTED_ENV, NOTEBOOK_TIMEOUT_ENV

    values = {RUN_DIR_ENV: str(run_dir), **QUIET_ENV, CHECKPOINTS_ENV: "", RESUME_ENV: "0"}
    values[PROGRESS_LOG_ENV] = str(Path(run_dir) / PROGRESS_LOG)
    values[HEARTBEAT_ENV] = str(Path(run_dir) / HEARTBEAT_FILE)
    values[LOADED_ENV] = str(Path(run_dir) / MODELS_LOADED_FILE)  # env.json "models": the commits loaded
    values |= {
        NOTEBOOK_STARTED_ENV: f"{time.time():.0f}",
        NOTEBOOK_TIMEOUT_ENV: "" if timeout is None else f"{timeout:g}",
    }
    if checkpoints is not None:
        values |= {CHECKPOINTS_ENV: str(checkpoints), RESUME_ENV: "1" if resume else "0"}
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def hub_revisions(pins: Mapping[str, Any]) -> Iterator[None]:
    """``$STSNB_HUB_REVISIONS`` for a batch: the commits the plan pins its Hub models at (``plans.plan_pins``), which
    every kernel and its training processes inherit (``stsnb.models.revisions``); unchanged when it pins none."""
    from ..models.revisions import REVISIONS_ENV, to_env

    if not pins:
        yield
        return
    saved = os.environ.get(REVISIONS_ENV)
    os.environ[REVISIONS_ENV] = to_env(pins)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(REVISIONS_ENV, None)
        else:
            os.environ[REVISIONS_ENV] = saved


class NotebookTimeout(TimeoutError):
    """The notebook ran past its plan's timeout."""


class KernelDied(RuntimeError):
    """The notebook's kernel process ended while a cell ran (killed, e.g. by the out-of-memory killer, or crashed)."""


def _exit_recording_kernel_manager(output: Path | None = None) -> type:
    """A jupyter_client kernel manager class that remembers how its kernel process ended (exit code, ``-N`` for
    signal ``N``), so that a dead kernel's failure can say it was killed (SIGKILL: typically the OOM killer), and
    sends what the kernel process prints outside its cells to the file ``output`` (None: our terminal): ipykernel's
    "Kernel is running over TCP without encryption" warning, for one, never reaches the terminal."""
    import subprocess

    from jupyter_client.manager import AsyncKernelManager

    class ExitRecordingKernelManager(AsyncKernelManager):
        exit_codes: list[int] = []  # a new class per notebook (``execute``): its kernel's exit code

        async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> None:
            if output is None:
                return await super()._async_launch_kernel(kernel_cmd, **kw)
            with open(output, "ab") as log:  # the kernel holds its own copy of the descriptor
                kw.setdefault("stdout", log)
                kw.setdefault("stderr", subprocess.STDOUT)
                return await super()._async_launch_kernel(kernel_cmd, **kw)

        async def _async_is_alive(self) -> bool:  # what nbclient polls while a cell runs
            alive = await super()._async_is_alive()
            if not alive and self.provisioner is not None:
                code = await self.provisioner.poll()
                if code is not None:
                    ExitRecordingKernelManager.exit_codes.append(int(code))
            return alive

        is_alive = _async_is_alive

    return ExitRecordingKernelManager


def execute(
    notebook: Path,
    parameters: Mapping[str, Any],
    run_dir: Path,
    timeout: float | None = None,
    checkpoints: Path | None = None,
    resume: bool = False,
    live: LiveLine | None = None,
) -> None:
    """Execute one notebook with papermill into ``run_dir/<name>.ipynb``; raises what the notebook raised.

    The kernel's own output goes to ``run_dir/kernel.log``, its progress lines to ``run_dir/progress.log``; ``live``
    (``stsnb.runs.live``) is told which cell runs.

    ``checkpoints``: the folder its training runs checkpoint under (``$STSNB_CHECKPOINTS``), ``resume``: they
    continue from there (``$STSNB_RESUME``).

    ``timeout`` (seconds, None: no limit) bounds the whole notebook, counted from its start: each cell gets
    papermill's ``execution_timeout`` of what is left (nbclient's per-cell ``timeout_func``), so the cell that runs
    past the limit is stopped and ``NotebookTimeout`` raised. A kernel that dies mid-cell raises ``KernelDied``
    naming the signal that killed it. The runner records either as a failed notebook and goes on.
    """
    import nbformat
    import papermill
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    notebook = notebook.resolve()
    cells = len(nbformat.read(notebook, as_version=4).cells) + (1 if parameters else 0)  # papermill adds one

    def cell_started(cell: Any = None, cell_index: int = 0, **_: Any) -> None:
        if live is not None:
            live.cell(cell_index, cells)

    deadline = time.monotonic() + timeout if timeout is not None else None

    def remaining_seconds(cell: Any = None) -> int | None:
        if deadline is None:
            return None
        return max(1, math.ceil(deadline - time.monotonic()))  # nbclient reads 0 as "no limit"

    manager = _exit_recording_kernel_manager(run_dir / KERNEL_LOG)
    with kernel_environment(run_dir, checkpoints, resume, timeout):
        try:
            papermill.execute_notebook(
                str(notebook),
                str(run_dir / notebook.name),
                parameters=dict(parameters),
                kernel_name=KERNEL,
                request_save_on_cell_execute=True,
                progress_bar=False,
                cwd=str(notebook.parent),
                execution_timeout=remaining_seconds(),
                timeout_func=remaining_seconds,
                kernel_manager_class=manager,
                on_cell_start=cell_started,
            )
        except CellTimeoutError as err:
            raise NotebookTimeout(
                f"timed out: the notebook ran past its plan timeout of {timeout:.0f} s (its kernel was stopped)"
            ) from err
        except DeadKernelError as err:
            raise KernelDied(kernel_death(manager.exit_codes[-1] if manager.exit_codes else None)) from err


def kernel_death(exit_code: int | None) -> str:
    """Why a kernel died, from its process's exit code (``-N``: killed by signal ``N``)."""
    import signal

    if exit_code is None:
        return "the kernel died mid-cell (exit code unknown)"
    if exit_code < 0:
        try:
            name = signal.Signals(-exit_code).name
        except ValueError:
            name = f"signal {-exit_code}"
        why = " (on Linux typically the out-of-memory killer)" if -exit_code == signal.SIGKILL else ""
        return f"the kernel died mid-cell, killed by {name}{why}"
    return f"the kernel died mid-cell, exit code {exit_code}"


def failure_reason(err: BaseException) -> tuple[str, str]:
    """(one-line reason, full error log) of a failed execution."""
    from papermill.exceptions import PapermillExecutionError

    if isinstance(err, PapermillExecutionError):
        first_line = (str(err.evalue).strip().splitlines() or [""])[0]
        reason = f"{err.ename}: {first_line}" if first_line else err.ename
        reason += f" (In [{err.exec_count}])"
        log = "\n".join(_ANSI.sub("", line) for line in err.traceback)
    elif isinstance(err, NotebookTimeout | KernelDied):
        reason, log = str(err), "".join(traceback.format_exception(err))
    else:
        first_line = (str(err).strip().splitlines() or [""])[0]
        reason = f"{type(err).__name__}: {first_line}" if first_line else type(err).__name__
        log = "".join(traceback.format_exception(err))
    return (reason[:157] + "..." if len(reason) > 160 else reason), log


def recover(profile_dir: Path) -> list[str]:
    """Undo what a crash inside ``replace_folder`` left: a good result renamed aside (``.old-<name>``) whose
    replacement never arrived is moved back; an aside whose replacement is in place is removed. Returns the names
    restored."""
    restored = []
    for aside in sorted(Path(profile_dir).glob(".old-*")):
        target = aside.with_name(aside.name.removeprefix(".old-"))
        if target.exists():
            shutil.rmtree(aside)
        else:
            aside.rename(target)
            restored.append(target.name)
    return restored


def replace_folder(new: Path, target: Path) -> None:
    """Move ``new`` to ``target`` by rename; an existing ``target`` is renamed aside first and removed after (a crash
    in between leaves the aside, which ``recover`` puts back at the next start)."""
    aside = target.with_name(f".old-{target.name}")
    if aside.exists() and not target.exists():  # the only copy of the earlier result: put it back before going on
        aside.rename(target)
    if aside.exists():
        shutil.rmtree(aside)
    if target.exists():
        target.rename(aside)
    new.rename(target)
    if aside.exists():
        shutil.rmtree(aside)


def run_notebook(
    name: str,
    parameters: Mapping[str, Any],
    notebooks_dir: Path,
    profile_dir: Path,
    timeout: float | None = None,
    checkpoints: bool = False,
    resume: bool = False,
    shown_as: str = "",
) -> Outcome:
    """Execute one notebook into a scratch folder; promote it on success, keep it as ``<nb>.failed`` otherwise.

    ``checkpoints``: its training runs checkpoint under ``.checkpoints/<nb>`` (kept when it fails, for ``resume``).
    While it runs, its live line (``stsnb.runs.live``) shows ``shown_as`` (default: its name) and its progress."""
    good, failed, partial = profile_dir / name, profile_dir / f"{name}.failed", profile_dir / f".partial-{name}"
    keep_abandoned(partial)
    partial.mkdir(parents=True)
    write_record(partial, name, parameters, timeout, resume)  # runner.json: what --resume and stsnb status read
    checkpoint_dir = prepare_checkpoints(profile_dir, name, resume) if checkpoints else None
    started = time.perf_counter()
    reason = log = ""
    interrupted: BaseException | None = None
    live = LiveLine(f"[stsnb run] {shown_as or name}: ", partial / PROGRESS_LOG).start()
    try:
        notebook = Path(notebooks_dir) / f"{name}.ipynb"
        execute(notebook, parameters, partial.resolve(), timeout, checkpoint_dir, resume, live)
        if read_status(partial) != "ok":
            reason = "the notebook ended without run.finish() writing STATUS ok"
            log = f"{reason}; STATUS: {read_status(partial) or 'missing'}\n"
    except Exception as err:  # any failure of one notebook is recorded and the batch goes on
        reason, log = failure_reason(err)
    except KeyboardInterrupt as err:  # Ctrl-C or SIGTERM (see ``run``): keep what it finished, then stop the batch
        reason, log = "interrupted (Ctrl-C or SIGTERM)", "".join(traceback.format_exception(err))
        interrupted = err
    finally:
        live.stop()
    seconds = time.perf_counter() - started
    drop_empty_logs(partial, keep=bool(reason))
    if not reason:
        write_runtime(partial, name)
        (partial / HEARTBEAT_FILE).unlink(missing_ok=True)  # a live status, not a result
        if checkpoint_dir is not None:
            keep_selected_weights(checkpoint_dir, partial / "weights")
        with folder_lock(profile_dir):  # a summary written meanwhile sees the old result or the new, never neither
            replace_folder(partial, good)
            if failed.exists():  # superseded by this good run
                shutil.rmtree(failed)
        return Outcome(name, "ok", seconds=seconds, good=good)
    (partial / "STATUS").write_text(f"failed: {reason}\n")
    (partial / "error.log").write_text(log)
    with folder_lock(profile_dir):
        replace_folder(partial, failed)
    if interrupted is not None:
        raise interrupted
    return Outcome(name, "failed", reason, seconds, good=good if read_status(good) == "ok" else None)


def drop_empty_logs(folder: Path, keep: bool) -> None:
    """``progress.log`` and ``kernel.log`` of a run: deleted after a good run (``keep`` False), kept after a failed
    one where they hold anything."""
    for name in (PROGRESS_LOG, KERNEL_LOG):
        path = folder / name
        if path.is_file() and not (keep and path.stat().st_size):
            path.unlink()


def prepare_checkpoints(profile_dir: Path, name: str, resume: bool) -> Path:
    """The checkpoint folder of notebook ``name``: kept for ``resume``, else an earlier run's is moved aside (it may
    hold hours of training: deleting it is the user's call) and a fresh one is used."""
    folder = profile_dir / ".checkpoints" / name
    if folder.exists() and not resume and any(folder.iterdir()):
        aside = folder.with_name(f"{name}.earlier-{dt.datetime.now():%Y%m%d-%H%M%S}")
        folder.rename(aside)
        _log(f"{name}: checkpoints of an earlier run kept in {aside} (stsnb run --resume continues from them)")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def keep_selected_weights(checkpoints: Path, weights: Path) -> None:
    """After a successful notebook: each training run's selected weights (``<key>/best.pt``) and ``about.json`` go to
    ``weights/``; the rest of the checkpoints (full optimizer states) is deleted."""
    for run in sorted(p for p in checkpoints.iterdir() if p.is_dir()):
        if (run / "best.pt").is_file():
            weights.mkdir(parents=True, exist_ok=True)
            (run / "best.pt").rename(weights / f"{run.name}.pt")
            if (run / "about.json").is_file():
                (run / "about.json").rename(weights / f"{run.name}.json")
    shutil.rmtree(checkpoints)


def keep_abandoned(partial: Path) -> Path | None:
    """A scratch folder left by a runner that died (``.partial-<nb>``) is kept as ``.failed-<time>-<nb>``, never
    deleted: it may hold the only copy of hours of finished sections. Returns where it went."""
    if not partial.exists():
        return None
    stamp = dt.datetime.fromtimestamp(partial.stat().st_mtime).strftime("%Y%m%d-%H%M%S")
    kept = partial.with_name(f".failed-{stamp}-{partial.name.removeprefix('.partial-')}")
    counter = 1
    while kept.exists():
        counter += 1
        kept = kept.with_name(f"{kept.name}-{counter}")
    partial.rename(kept)
    _log(f"kept the scratch folder a dead run left as {kept.name}")
    return kept


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (a scheduler's stop, ``kill``) raises KeyboardInterrupt like Ctrl-C, so the batch still records the
    notebook it was in and writes summary.md on the way out."""
    import signal

    def interrupt(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM (a scheduler's, a forwarded one) would
        raise KeyboardInterrupt(f"signal {signum}")  # interrupt the recording of the first: one stop is enough

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _log(message: str) -> None:
    print(f"[stsnb run] {message}", file=sys.stderr, flush=True)


def _terminal() -> bool:
    """Whether our stderr is a terminal (where each notebook's live line is rewritten in place)."""
    return bool(getattr(sys.stderr, "isatty", lambda: False)())


def run(
    profile: str = "cpu",
    only: Sequence[str] | None = None,
    out: Path = DEFAULT_OUT,
    plans_dir: Path = PLANS_DIR,
    notebooks_dir: Path = NOTEBOOKS_DIR,
    timeout: float | None | str = "plan",
    resume: bool = False,
) -> int:
    """Run a profile's plan (or the ``only`` notebooks of it); 0 if every executed notebook succeeded, else 1.

    ``resume``: a notebook whose run in the folder finished ok at the same plan values and source is skipped
    (``stsnb.runs.resume``), and training runs continue from the checkpoints a failed or killed earlier run left
    (turns checkpoints on for a plan without them).

    Raises ``PlanError`` before anything runs when the plan names an unknown notebook or parameter, and
    ``stsnb.runs.locks.RunLocked`` when another run holds one of its notebooks. ``timeout``: "plan" (the plan's limits),
    seconds for every notebook, or None for no limit. summary.md is rewritten after every notebook and on Ctrl-C /
    SIGTERM.
    """
    plan = load_plan(plan_path(profile, plans_dir))
    selected = check_plan(plan, notebooks_dir, only)
    pins = plan_pins(plan.path)
    check_kernel()
    profile_dir = Path(out).resolve() / plan.profile
    profile_dir.mkdir(parents=True, exist_ok=True)
    outcomes: dict[str, Outcome] = {}
    with notebook_locks(profile_dir, selected), sigterm_as_interrupt(), hub_revisions(pins):
        with folder_lock(profile_dir):  # no promotion is half done: every aside is a crash's
            restored = recover(profile_dir)
        for name in restored:
            _log(f"{name}: restored the good result an interrupted run had set aside")
        source = source_state() if resume else ""
        try:
            for number, name in enumerate(selected, start=1):
                limit = plan.timeouts.get(name) if timeout == "plan" else timeout
                if resume:
                    skip, why = skip_reason(profile_dir, name, plan.notebooks[name], source)
                    _log(f"{number}/{len(selected)} {name}: {why}: " + ("skipped, its result kept" if skip else "run"))
                    if skip:
                        outcomes[name] = recorded_outcome(name, profile_dir)
                        continue
                if not _terminal():  # a terminal shows the live line instead
                    _log(f"{number}/{len(selected)} {name}: started" + (f" (timeout {limit:.0f} s)" if limit else ""))
                shown = f"{number}/{len(selected)} {name}"
                outcome = run_notebook(
                    name,
                    plan.notebooks[name],
                    notebooks_dir,
                    profile_dir,
                    limit,
                    plan.checkpoints or resume,
                    resume,
                    shown,
                )
                detail = "ok" if outcome.status == "ok" else status_text(outcome)
                _log(f"{number}/{len(selected)} {name}: {detail} ({outcome.seconds:.1f} s)")
                outcomes[name] = outcome
                write_summary(plan.profile, out, plans_dir, outcomes)  # after every notebook: a crash loses none
        except KeyboardInterrupt:
            _log("interrupted: the notebook in progress is kept as <notebook>.failed; summary.md written")
            write_summary(plan.profile, out, plans_dir, outcomes)
            raise
    summary = write_summary(plan.profile, out, plans_dir, outcomes)
    failures = sum(outcome.status == "failed" for outcome in outcomes.values())
    _log(f"{len(outcomes) - failures} ok, {failures} failed; summary: {summary}")
    return 1 if failures else 0
