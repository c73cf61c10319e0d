"""The papermill batch runner behind ``stsnb run``: every notebook of a plan, good results kept safe, summary.md.

A plan is ``papermill_runs/plans/<profile>.yaml``::

    description: what the profile is for and the hardware it assumes (no runtimes: summary.md has the measured ones)
    timeout: 3600                   # optional: seconds each notebook may run (null or absent: no limit)
    timeouts: {20_sts_regression: 7200}  # optional: per-notebook limits that replace ``timeout``
    checkpoints: true               # optional: every training run checkpoints, so ``stsnb run --resume`` can go on
    notebooks:                      # executed in this order
      00_contrastive_ceiling: {}    # no overrides: the notebook's defaults (= the cpu profile)
      20_sts_regression:            # only what differs from the notebook's parameters cell
        epochs: 1

Each notebook runs (papermill, kernel ``python3``, cwd = its folder) into ``<out>/<profile>/.partial-<nb>/``; the
notebook itself writes params.yaml, env.json, metrics.json, results.csv, figures/ and STATUS there through
``stsnb.runs`` (``$STSNB_RUN_DIR``), metrics.json and results.csv after each section it records. Only a run that
ends with STATUS ``ok`` replaces ``<out>/<profile>/<nb>/``; a failed attempt goes to ``<out>/<profile>/<nb>.failed/``
(with STATUS ``failed: <reason>``, error.log and what its finished sections recorded) and the earlier good result
stays untouched. A notebook past its timeout, or whose kernel died (e.g. killed by the out-of-memory killer), is a
failed notebook like one that raised: the batch goes on with the next one and exits 1 at the end.

With ``checkpoints: true`` every ``stsnb.train.fit`` of a notebook checkpoints under
``<out>/<profile>/.checkpoints/<nb>/<run key>/`` (``$STSNB_CHECKPOINTS``). A notebook that succeeds keeps each
run's selected weights as ``<nb>/weights/<run key>.pt`` (with ``about.json``: settings, loss, best step) and the
rest is deleted; a failed or killed one leaves them for ``stsnb run --resume``, whose fits continue from their last
checkpoint (those a killed run finished return at once). Without ``--resume``, checkpoints left by an earlier run
are moved aside (``.checkpoints/<nb>.earlier-<time>``), never deleted.

A folder is replaced by renaming the old one aside (``.old-<name>``), the new one into place, then deleting the
aside; ``recover`` (at the start of every batch) puts back an aside that a crash left without its replacement.
``<out>/<profile>/summary.md`` then shows, from the run folders only: an overview with one row per notebook of the
plan (status, runtime, the commit its run came from, claims by verdict, the notebook's takeaway and whether its
levels are comparable with the paper's; ``overview_rows``, which ``stsnb book`` shows first too), the claims with
their seeds and preconditions, and the average rows of each results.csv. ``stsnb summary`` rewrites it alone.
"""

from __future__ import annotations

import ast
import contextlib
import csv
import datetime as dt
import json
import math
import os
import re
import shutil
import sys
import time
import traceback
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from . import stats
from .claims import failed_preconditions, verdict_counts
from .runs import REPO_ROOT, RUN_DIR_ENV, git_sha, write_text_atomic

NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
PLANS_DIR = REPO_ROOT / "papermill_runs" / "plans"
DEFAULT_OUT = REPO_ROOT / "papermill_runs"
KERNEL = "python3"
# Read by tqdm and huggingface_hub when they are imported, so they are set before the kernel starts.
QUIET_ENV = {"TQDM_DISABLE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class PlanError(ValueError):
    """A plan (or --only) that cannot run as written; raised before any notebook starts."""


@dataclass(frozen=True)
class Plan:
    profile: str
    path: Path
    description: str
    notebooks: dict[str, dict[str, Any]]  # notebook name -> parameter overrides, in execution order
    timeouts: dict[str, float | None] = field(default_factory=dict)  # notebook -> seconds it may run (None: no limit)
    checkpoints: bool = False  # every training run checkpoints (``stsnb run --resume`` continues a killed run)


@dataclass
class Outcome:
    """What summary.md says about one notebook of the plan."""

    notebook: str
    status: str  # "ok", "failed" or "not run"
    reason: str = ""  # why it failed
    seconds: float | None = None
    earlier: bool = False  # the status comes from an earlier invocation (not run this time, e.g. --only)
    good: Path | None = None  # folder of the good result shown (the notebook's folder), if any


def plan_path(profile: str, plans_dir: Path = PLANS_DIR) -> Path:
    path = Path(plans_dir) / f"{profile}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in Path(plans_dir).glob("*.yaml"))
        raise PlanError(f"no plan for profile {profile!r}: {path} does not exist (profiles: {', '.join(known)})")
    return path


def load_plan(path: Path, _extending: tuple[Path, ...] = ()) -> Plan:
    """Read and shape-check a plan file (parameters are checked against the notebooks by ``check_plan``).

    ``extends: <profile>`` starts from that plan in the same folder: its notebooks, in its order, each with its
    values and this plan's values on top (a notebook this plan names that the base lacks is refused); this plan's
    ``timeout`` and ``timeouts`` apply when given, else the base's. The ``rehearsal`` plan is the ``paper`` plan
    with smaller models and data, so the two cannot drift apart."""
    path = Path(path)
    if path.resolve() in _extending:
        raise PlanError(f"{path}: 'extends' forms a cycle ({' -> '.join(p.stem for p in _extending)} -> {path.stem})")
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        raise PlanError(f"{path}: not valid YAML: {err}") from err
    if not isinstance(raw, dict) or not isinstance(raw.get("notebooks"), dict):
        raise PlanError(f"{path}: expected a mapping with 'description' and 'notebooks: {{name: {{param: value}}}}'")
    base = None
    if raw.get("extends") is not None:
        base = load_plan(plan_path(str(raw["extends"]), path.parent), (*_extending, path.resolve()))
    notebooks: dict[str, dict[str, Any]] = {
        name: dict(values) for name, values in (base.notebooks if base else {}).items()
    }
    for name, overrides in raw["notebooks"].items():
        if overrides is None:
            overrides = {}
        if not isinstance(overrides, dict):
            raise PlanError(f"{path}: notebook {name}: overrides must be a mapping of parameter -> value")
        if base is not None and str(name) not in base.notebooks:
            raise PlanError(f"{path}: notebook {name} is not in the plan it extends ({base.path.name})")
        notebooks[str(name)] = {**notebooks.get(str(name), {}), **overrides}
    if base is not None and "timeout" not in raw:
        raw = {**raw, "timeout": None, "timeouts": {**base.timeouts, **(raw.get("timeouts") or {})}}
    default = _timeout(raw.get("timeout"), f"{path}: timeout")
    per_notebook = raw.get("timeouts") or {}
    if not isinstance(per_notebook, dict):
        raise PlanError(f"{path}: timeouts must be a mapping of notebook -> seconds")
    unknown = sorted(set(per_notebook) - set(notebooks))
    if unknown:
        raise PlanError(f"{path}: timeouts names notebooks the plan does not run: {unknown}")
    timeouts = {name: _timeout(per_notebook.get(name, default), f"{path}: timeouts.{name}") for name in notebooks}
    checkpoints = raw.get("checkpoints", base.checkpoints if base is not None else False)
    if not isinstance(checkpoints, bool):
        raise PlanError(f"{path}: checkpoints must be true or false, got {checkpoints!r}")
    return Plan(path.stem, path, str(raw.get("description", "")).strip(), notebooks, timeouts, checkpoints)


def _timeout(value: Any, where: str) -> float | None:
    """Seconds a notebook may run (see ``execute``); None or absent: no limit."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
        raise PlanError(f"{where}: expected a positive number of seconds, got {value!r}")
    return float(value)


def check_plan(plan: Plan, notebooks_dir: Path = NOTEBOOKS_DIR, only: Sequence[str] | None = None) -> list[str]:
    """The notebooks to run, after refusing unknown notebooks and parameters a notebook does not declare."""
    import papermill

    problems = []
    for name in only or ():
        if name not in plan.notebooks:
            problems.append(f"--only {name}: not a notebook of {plan.path} (it has: {', '.join(plan.notebooks)})")
    selected = [name for name in plan.notebooks if not only or name in only]
    for name in plan.notebooks:
        notebook = Path(notebooks_dir) / f"{name}.ipynb"
        if not notebook.is_file():
            problems.append(f"{plan.path}: notebook {name}: {notebook} does not exist")
            continue
        try:
            declared = papermill.inspect_notebook(str(notebook))
        except ValueError as err:  # e.g. no kernelspec in its metadata
            problems.append(f"{plan.path}: notebook {name}: papermill cannot read its parameters: {err}")
            continue
        for parameter in plan.notebooks[name]:
            if parameter in declared:
                continue
            if parameter in assigned_parameters(notebook):
                why = "is assigned on a line papermill cannot parse (a second '=', e.g. in its comment)"
            else:
                why = f"is not declared in its parameters cell (declared: {', '.join(declared) or 'none'})"
            problems.append(f"{plan.path}: notebook {name}: parameter {parameter!r} {why}")
    if problems:
        raise PlanError("the plan cannot run as written:\n  " + "\n  ".join(problems))
    return selected


def assigned_parameters(notebook: Path) -> list[str]:
    """Names the ``parameters``-tagged cell assigns, read with ``ast`` (papermill's own parser skips any line
    holding a second ``=``, so a parameter it misses cannot be overridden)."""
    import nbformat

    names: list[str] = []
    for cell in nbformat.read(notebook, as_version=4).cells:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            for statement in ast.parse(cell.source).body:
                if isinstance(statement, ast.Assign):
                    names += [target.id for target in statement.targets if isinstance(target, ast.Name)]
                elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                    names.append(statement.target.id)
    return names


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
def kernel_environment(run_dir: Path, checkpoints: Path | None = None, resume: bool = False) -> Iterator[None]:
    """Set the variables a kernel must see at start-up (it inherits our environment), restore them after."""
    from .train import CHECKPOINTS_ENV, RESUME_ENV

    values = {RUN_DIR_ENV: str(run_dir), **QUIET_ENV, CHECKPOINTS_ENV: "", RESUME_ENV: "0"}
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


class NotebookTimeout(TimeoutError):
    """The notebook ran past its plan's timeout."""


class KernelDied(RuntimeError):
    """The notebook's kernel process ended while a cell ran (killed, e.g. by the out-of-memory killer, or crashed)."""


def _exit_recording_kernel_manager() -> type:
    """A jupyter_client kernel manager class that remembers how its kernel process ended (exit code, ``-N`` for
    signal ``N``), so that a dead kernel's failure can say it was killed (SIGKILL: typically the OOM killer)."""
    from jupyter_client.manager import AsyncKernelManager

    class ExitRecordingKernelManager(AsyncKernelManager):
        exit_codes: list[int] = []  # a new class per notebook (``execute``): its kernel's exit code

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
) -> None:
    """Execute one notebook with papermill into ``run_dir/<name>.ipynb``; raises what the notebook raised.

    ``checkpoints``: the folder its training runs checkpoint under (``$STSNB_CHECKPOINTS``), ``resume``: they
    continue from there (``$STSNB_RESUME``).

    ``timeout`` (seconds, None: no limit) bounds the whole notebook, counted from its start: each cell gets
    papermill's ``execution_timeout`` of what is left (nbclient's per-cell ``timeout_func``), so the cell that runs
    past the limit is stopped and ``NotebookTimeout`` raised. A kernel that dies mid-cell raises ``KernelDied``
    naming the signal that killed it. The runner records either as a failed notebook and goes on.
    """
    import papermill
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    notebook = notebook.resolve()
    deadline = time.monotonic() + timeout if timeout is not None else None

    def remaining_seconds(cell: Any = None) -> int | None:
        if deadline is None:
            return None
        return max(1, math.ceil(deadline - time.monotonic()))  # nbclient reads 0 as "no limit"

    manager = _exit_recording_kernel_manager()
    with kernel_environment(run_dir, checkpoints, resume):
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


def read_status(folder: Path) -> str:
    path = folder / "STATUS"
    return path.read_text().strip() if path.is_file() else ""


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
) -> Outcome:
    """Execute one notebook into a scratch folder; promote it on success, keep it as ``<nb>.failed`` otherwise.

    ``checkpoints``: its training runs checkpoint under ``.checkpoints/<nb>`` (kept when it fails, for ``resume``)."""
    good, failed, partial = profile_dir / name, profile_dir / f"{name}.failed", profile_dir / f".partial-{name}"
    keep_abandoned(partial)
    partial.mkdir(parents=True)
    checkpoint_dir = prepare_checkpoints(profile_dir, name, resume) if checkpoints else None
    started = time.perf_counter()
    reason = log = ""
    interrupted: BaseException | None = None
    try:
        execute(Path(notebooks_dir) / f"{name}.ipynb", parameters, partial.resolve(), timeout, checkpoint_dir, resume)
        if read_status(partial) != "ok":
            reason = "the notebook ended without run.finish() writing STATUS ok"
            log = f"{reason}; STATUS: {read_status(partial) or 'missing'}\n"
    except Exception as err:  # any failure of one notebook is recorded and the batch goes on
        reason, log = failure_reason(err)
    except KeyboardInterrupt as err:  # Ctrl-C or SIGTERM (see ``run``): keep what it finished, then stop the batch
        reason, log = "interrupted (Ctrl-C or SIGTERM)", "".join(traceback.format_exception(err))
        interrupted = err
    seconds = time.perf_counter() - started
    if not reason:
        if checkpoint_dir is not None:
            keep_selected_weights(checkpoint_dir, partial / "weights")
        replace_folder(partial, good)
        if failed.exists():  # superseded by this good run
            shutil.rmtree(failed)
        return Outcome(name, "ok", seconds=seconds, good=good)
    (partial / "STATUS").write_text(f"failed: {reason}\n")
    (partial / "error.log").write_text(log)
    replace_folder(partial, failed)
    if interrupted is not None:
        raise interrupted
    return Outcome(name, "failed", reason, seconds, good=good if read_status(good) == "ok" else None)


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


class RunLocked(PlanError):
    """Another ``stsnb run`` is writing the same profile folder."""


LOCK_FILE = ".lock"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def profile_lock(profile_dir: Path) -> Iterator[None]:
    """One ``stsnb run`` per profile folder: ``.lock`` holds the owner's pid; a lock whose process is gone is taken
    over (and said), a live one refuses with its pid and start time."""
    lock = profile_dir / LOCK_FILE
    for _ in range(2):
        try:
            descriptor = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            try:
                owner = json.loads(lock.read_text())
            except (OSError, ValueError):
                owner = {}
            pid = int(owner.get("pid", 0) or 0)
            if pid and _pid_alive(pid) and pid != os.getpid():
                raise RunLocked(
                    f"{profile_dir} is being written by another stsnb run (pid {pid}, started {owner.get('started')}); "
                    f"wait for it, or stop it, or run with another --out"
                ) from None
            _log(f"took over {lock} from a run that is gone (pid {pid or 'unknown'})")
            lock.unlink(missing_ok=True)
            continue
        with os.fdopen(descriptor, "w") as handle:
            json.dump({"pid": os.getpid(), "started": dt.datetime.now().astimezone().isoformat()}, handle)
        break
    try:
        yield
    finally:
        lock.unlink(missing_ok=True)


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (a scheduler's stop, ``kill``) raises KeyboardInterrupt like Ctrl-C, so the batch still records the
    notebook it was in and writes summary.md on the way out."""
    import signal

    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def recorded_outcome(name: str, profile_dir: Path) -> Outcome:
    """What an earlier invocation left for a notebook that was not run this time."""
    good, failed = profile_dir / name, profile_dir / f"{name}.failed"
    good = good if read_status(good) == "ok" else None
    failed_status = read_status(failed)
    if failed_status:
        reason = failed_status.removeprefix("failed:").strip()
        return Outcome(name, "failed", reason, recorded_seconds(failed / f"{name}.ipynb"), earlier=True, good=good)
    if good is not None:
        return Outcome(name, "ok", seconds=recorded_seconds(good / f"{name}.ipynb"), earlier=True, good=good)
    return Outcome(name, "not run")


def recorded_seconds(executed_notebook: Path) -> float | None:
    """The duration papermill recorded in an executed notebook's metadata."""
    try:
        return float(json.loads(executed_notebook.read_text())["metadata"]["papermill"]["duration"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def read_metrics(folder: Path) -> dict[str, Any]:
    path = folder / "metrics.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def read_env(folder: Path) -> dict[str, Any]:
    path = folder / "env.json"
    try:
        return json.loads(path.read_text()) if path.is_file() else {}
    except ValueError:
        return {}


def section_notes(folder: Path) -> list[str]:
    """``<section>: out of memory`` for each section the notebook recorded as not done (``Run.attempt``); the error
    itself is in metrics.json (``<section>/error``)."""
    metrics = read_metrics(folder)
    return [
        f"{key.removesuffix('/status')}: {str(value).replace('_', ' ')}"
        for key, value in sorted(metrics.items())
        if key.endswith("/status") and value != "done"
    ]


def comparison_rows(folder: Path) -> list[dict[str, str]]:
    """results.csv rows (written by ``Run.finish``): ours | paper | delta per setting and task."""
    path = folder / "results.csv"
    if not path.is_file():
        return []
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def is_average(row: Mapping[str, str]) -> bool:
    """A results.csv row whose task is an average over tasks (``avg``, ``avg of stsb``, ...)."""
    return str(row.get("task", "")).strip().lower().startswith("avg")


def average_rows(folder: Path) -> list[dict[str, str]]:
    """The average rows of results.csv (summary.md shows only these; per-task rows stay in results.csv)."""
    return [row for row in comparison_rows(folder) if is_average(row)]


def claim_rows(folder: Path) -> list[dict[str, Any]]:
    """The claims a notebook checked (metrics.json ``claims``: a list of rows, or a mapping of them), each with
    ``claim``, ``verdict`` and its paired interval (``stsnb.claims.claim``; older runs: ``stats.claim_row``)."""
    claims = read_metrics(folder).get("claims") or []
    rows = list(claims.values()) if isinstance(claims, dict) else list(claims)
    return [r for r in rows if isinstance(r, dict) and "claim" in r and "verdict" in r]


def shown_folder(outcome: Outcome, profile_dir: Path) -> Path | None:
    """The folder whose results represent a notebook: its good result, else what its failed run recorded."""
    if outcome.good is not None:
        return outcome.good
    failed = Path(profile_dir) / f"{outcome.notebook}.failed"
    return failed if failed.is_dir() else None


def run_seconds(folder: Path, notebook: str) -> float | None:
    """How long the run in ``folder`` took: papermill's duration in its executed notebook, else metrics ``seconds``."""
    seconds = recorded_seconds(folder / f"{notebook}.ipynb")
    if seconds is None:
        value = read_metrics(folder).get("seconds")
        seconds = float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    return seconds


def short_sha(sha: str) -> str:
    """``abcdef1`` (or ``abcdef1-dirty``) of a full git sha; other text (e.g. ``unknown``) unchanged."""
    dirty = sha.endswith("-dirty")
    base = sha.removesuffix("-dirty")
    if re.fullmatch(r"[0-9a-f]{40}", base):
        return base[:7] + ("-dirty" if dirty else "")
    return sha


def run_commit(folder: Path) -> str | None:
    """The commit the run in ``folder`` came from (env.json ``git_sha``, short), None if it did not record one."""
    sha = read_env(folder).get("git_sha")
    return short_sha(str(sha)) if sha else None


MISSING = "—"  # a value the run did not record: shown as missing, never invented
OVERVIEW_COLUMNS = (
    "notebook",
    "status",
    "runtime (s)",
    "commit",
    *stats.VERDICTS,
    "takeaway",
    "comparable with the paper",
)


@dataclass(frozen=True)
class OverviewRow:
    """One notebook at a glance (summary.md's first table and the book's first table; ``overview_rows``)."""

    notebook: str
    status: str
    folder: Path | None  # the folder whose values are shown (its good result, else its failed run's), if any
    seconds: float | None
    commit: str | None
    verdicts: dict[str, int] | None  # claims by verdict; None when the run recorded no claims
    takeaway: str | None
    comparable: str | None

    def cells(self) -> list[str]:
        """The texts of ``OVERVIEW_COLUMNS`` after ``notebook`` (renderers add the link and escape)."""
        verdicts = (
            [str(self.verdicts.get(v, 0)) for v in stats.VERDICTS]
            if self.verdicts is not None
            else [MISSING] * len(stats.VERDICTS)
        )
        return [
            self.status,
            f"{self.seconds:.0f}" if self.seconds is not None else MISSING,
            self.commit or MISSING,
            *verdicts,
            self.takeaway or MISSING,
            self.comparable or MISSING,
        ]


def _text(value: Any) -> str | None:
    return (str(value).strip() or None) if value is not None else None


def overview_row(outcome: Outcome, profile_dir: Path) -> OverviewRow:
    """The overview of one notebook, every value read from its run's files (metrics.json, env.json, the executed
    notebook): status, runtime, commit, claims by verdict, the notebook's one-line ``takeaway`` and whether its
    levels are ``comparable`` with the paper's."""
    folder = shown_folder(outcome, profile_dir)
    status = _status_text(outcome)
    if folder is None:
        return OverviewRow(outcome.notebook, status, None, outcome.seconds, None, None, None, None)
    metrics = read_metrics(folder)
    notes = section_notes(folder)
    if outcome.good is None and (metrics or comparison_rows(folder)):
        done = metrics.get("sections_done") or []
        notes.insert(0, f"partial results from the failed run (sections done: {', '.join(done) or 'none'})")
    if notes:
        status += "; " + "; ".join(notes)
    seconds = run_seconds(folder, outcome.notebook)
    verdicts = verdict_counts(claim_rows(folder)) if "claims" in metrics else None
    return OverviewRow(
        outcome.notebook,
        status,
        folder,
        seconds if seconds is not None else outcome.seconds,
        run_commit(folder),
        verdicts,
        _text(metrics.get("takeaway")),
        _text(metrics.get("comparable")),
    )


def overview_rows(outcomes: Sequence[Outcome], profile_dir: Path) -> list[OverviewRow]:
    """One ``OverviewRow`` per notebook, in plan order: the one row builder of summary.md and ``stsnb book``."""
    return [overview_row(outcome, Path(profile_dir)) for outcome in outcomes]


def total_seconds(rows: Sequence[OverviewRow]) -> tuple[float, int]:
    """(sum of the runtimes the runs recorded, how many runs recorded one)."""
    known = [row.seconds for row in rows if row.seconds is not None]
    return sum(known), len(known)


CLAIM_COLUMNS = (
    "notebook",
    "claim",
    "ours: difference [95% interval]",
    "seeds",
    "paper's difference",
    "verdict",
    "precondition",
)


def _signed(value: Any) -> str:
    return f"{value:+.2f}" if isinstance(value, int | float) and not isinstance(value, bool) else MISSING


def precondition_text(row: Mapping[str, Any]) -> str:
    """What a claim needed: the preconditions that do not hold with their evidence (its verdict is then ``not
    tested``), else the names of those that hold; rows from runs made before preconditions existed say so."""
    stored = row.get("preconditions")
    if stored is None:
        because = row.get("not_tested_because")
        return str(because) if because else f"{MISSING} (the run predates preconditions)"
    if not stored:
        return "none stated"
    broken = failed_preconditions(row)
    if broken:
        return "does not hold: " + "; ".join(f"{p.get('name')} ({p.get('evidence')})" for p in broken)
    return "holds: " + "; ".join(str(p.get("name")) for p in stored)


def claim_cells(row: Mapping[str, Any]) -> list[str]:
    """The texts of ``CLAIM_COLUMNS`` after ``notebook`` for one claim row (old rows with three verdicts and no
    preconditions render too)."""
    numbers = [row.get(k) for k in ("difference", "low", "high")]
    interval = (
        f"{_signed(numbers[0])} [{_signed(numbers[1])}, {_signed(numbers[2])}]"
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in numbers)
        else MISSING
    )
    seeds = row.get("seeds")
    verdict = str(row["verdict"])
    if row.get("kind") == "equivalence" and isinstance(row.get("margin"), int | float):
        verdict += f" (margin ±{row['margin']:g})"
    return [
        str(row["claim"]),
        interval,
        str(seeds) if isinstance(seeds, int) and not isinstance(seeds, bool) else MISSING,
        _signed(row.get("paper_difference")),
        verdict,
        precondition_text(row),
    ]


AVERAGE_COLUMNS = ("notebook", "setting", "task", "ours", "paper", "delta", "comparable with the paper", "note")


def _number(text: str | None) -> str:
    try:
        return f"{float(text):.2f}"  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return text or MISSING


def average_cells(row: Mapping[str, str], comparable: str | None, partial: bool = False) -> list[str]:
    """The texts of ``AVERAGE_COLUMNS`` after ``notebook`` for one results.csv average row."""
    setting = " ".join(filter(None, (row.get("paper"), row.get("table"))))
    setting = f"{setting}: {row.get('setting', '')}" if setting else row.get("setting", "")
    if partial:
        setting = f"(failed run) {setting}"
    return [
        setting,
        row.get("task", ""),
        _number(row.get("ours")),
        _number(row.get("paper_value")),
        _number(row.get("delta")),
        comparable or MISSING,
        row.get("note", ""),
    ]


def _status_text(outcome: Outcome) -> str:
    if outcome.status == "ok":
        return "ok (earlier run)" if outcome.earlier else "ok"
    if outcome.status == "failed":
        text = f"failed{' (earlier run)' if outcome.earlier else ''}: {outcome.reason}"
        return text + ("; previous good result kept (shown)" if outcome.good is not None else "")
    return outcome.status


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(columns: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[str] = ()) -> list[str]:
    align = ["---:" if column in right else "---" for column in columns]
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join(align) + "|"]
    return lines + ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]


def _link(name: str, folder: Path | None, file: str) -> str:
    return f"[{name}]({folder.name}/{file})" if folder is not None and (folder / file).is_file() else name


def summary_markdown(plan: Plan, outcomes: Sequence[Outcome], profile_dir: Path) -> str:
    """summary.md: the overview (one row per notebook), the claims with their preconditions, then the averages.

    Every value comes from the runs' files (``overview_rows``); per-task rows stay in each results.csv. A notebook
    whose run failed with no good result before it shows what that run recorded, marked as partial.
    """
    overview = overview_rows(outcomes, profile_dir)
    total, counted = total_seconds(overview)
    lines = [f"# stsnb run --profile {plan.profile}", ""]
    if plan.description:
        lines += [plan.description, ""]
    lines += [
        f"Summary written {dt.datetime.now().astimezone():%Y-%m-%d %H:%M %Z} at git {git_sha()} from plan "
        f"`{plan.path.name}`. Each notebook's run may come from an earlier commit: its own is in the overview. "
        f"Runtimes are those the runs recorded; together {total:.0f} s ({total / 60:.0f} min) over {counted} "
        f"of {len(overview)} notebooks.",
        "",
        "## Overview",
        "",
        "Commit: the git commit the notebook's run came from; claims by verdict (see Claims below); the takeaway "
        "is the notebook's own sentence, written from its results; comparable: whether our levels can be set "
        "beside the paper's (yes / direction only / no).",
        "",
    ]
    rows = [[_link(row.notebook, row.folder, f"{row.notebook}.ipynb"), *row.cells()] for row in overview]
    lines += _table(OVERVIEW_COLUMNS, rows, right=("runtime (s)", *stats.VERDICTS))
    lines += claims_markdown(overview)
    lines += averages_markdown(overview)
    return "\n".join(lines) + "\n"


def claims_markdown(overview: Sequence[OverviewRow]) -> list[str]:
    """The claims of every notebook shown: our difference with its 95% paired interval, the training seeds, the
    paper's difference where there is one, the verdict and its precondition."""
    rows = [[row.notebook, *claim_cells(claim)] for row in overview if row.folder for claim in claim_rows(row.folder)]
    if not rows:
        return []
    return [
        "",
        "## Claims",
        "",
        "Each claim as a paired difference on the same test pairs (ours, 95% bootstrap interval; with several "
        "training seeds the envelope of their intervals). A direction claim is supported when every seed's interval "
        "excludes 0 on the paper's side, contradicted when every one excludes 0 on the other side, otherwise "
        "unresolved; a robustness claim is equivalent when every seed's interval lies inside its margin; a claim "
        "whose precondition does not hold is not tested.",
        "",
        *_table(CLAIM_COLUMNS, rows, right=("seeds", "paper's difference")),
    ]


def averages_markdown(overview: Sequence[OverviewRow]) -> list[str]:
    """The average rows of every notebook's results.csv beside the paper's, with the notebook's comparability."""
    rows, without, links = [], [], []
    for row in overview:
        if row.folder is None or not (row.folder / "results.csv").is_file():
            continue
        links.append(f"[{row.notebook}]({row.folder.name}/results.csv)")
        averages = average_rows(row.folder)
        if not averages:
            without.append(row.notebook)
        partial = row.folder.name.endswith(".failed")
        rows += [[row.notebook, *average_cells(a, row.comparable, partial)] for a in averages]
    if not links:
        return []
    lines = [
        "",
        "## Averages",
        "",
        "Scores are x100; delta = ours - paper (the paper's number as it reports it). Per-task rows are in each "
        f"notebook's results.csv: {', '.join(links)}.",
    ]
    if without:
        lines.append(f"No average row (its rows are in its results.csv): {', '.join(without)}.")
    return lines + ["", *_table(AVERAGE_COLUMNS, rows, right=("ours", "paper", "delta"))]


def write_summary(
    profile: str = "cpu",
    out: Path = DEFAULT_OUT,
    plans_dir: Path = PLANS_DIR,
    outcomes: Mapping[str, Outcome] | None = None,
) -> Path:
    """Rewrite ``<out>/<profile>/summary.md`` from the run folders (``outcomes``: those of this invocation; every
    other notebook of the plan is read from what an earlier run left). Runs no notebook."""
    plan = load_plan(plan_path(profile, plans_dir))
    profile_dir = Path(out).resolve() / plan.profile
    if not profile_dir.is_dir():
        raise PlanError(f"no runs at {profile_dir}: run `stsnb run --profile {profile}` first")
    outcomes = outcomes or {}
    every = [outcomes.get(name) or recorded_outcome(name, profile_dir) for name in plan.notebooks]
    summary = profile_dir / "summary.md"
    write_text_atomic(summary, summary_markdown(plan, every, profile_dir))
    return summary


def _log(message: str) -> None:
    print(f"[stsnb run] {message}", file=sys.stderr, flush=True)


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

    ``resume``: training runs continue from the checkpoints a failed or killed earlier run left (turns
    checkpoints on for a plan without them).

    Raises ``PlanError`` before anything runs when the plan names an unknown notebook or parameter, and
    ``RunLocked`` when another run writes the same folder. ``timeout``: "plan" (the plan's limits), seconds for
    every notebook, or None for no limit. summary.md is rewritten after every notebook and on Ctrl-C / SIGTERM.
    """
    plan = load_plan(plan_path(profile, plans_dir))
    selected = check_plan(plan, notebooks_dir, only)
    check_kernel()
    profile_dir = Path(out).resolve() / plan.profile
    profile_dir.mkdir(parents=True, exist_ok=True)
    outcomes: dict[str, Outcome] = {}
    with profile_lock(profile_dir), sigterm_as_interrupt():
        for name in recover(profile_dir):
            _log(f"{name}: restored the good result an interrupted run had set aside")
        try:
            for number, name in enumerate(selected, start=1):
                limit = plan.timeouts.get(name) if timeout == "plan" else timeout
                _log(f"{number}/{len(selected)} {name}: started" + (f" (timeout {limit:.0f} s)" if limit else ""))
                outcome = run_notebook(
                    name, plan.notebooks[name], notebooks_dir, profile_dir, limit, plan.checkpoints or resume, resume
                )
                detail = "ok" if outcome.status == "ok" else _status_text(outcome)
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
