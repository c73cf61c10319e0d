"""The locks of a profile folder, so that several ``stsnb run`` of one profile can run different notebooks at once
(``stsnb run --parallel``, or two shells with ``--only``).

- ``.lock-<nb>``, one per notebook, held for a whole run by the run that executes it: the same notebook twice is
  refused before anything runs, naming the pid that holds it. Everything a run writes for a notebook is its own
  (``.partial-<nb>``, ``.failed-<time>-<nb>``, ``.checkpoints/<nb>``, ``<nb>/``, ``<nb>.failed/``).
- ``.lock``, held for seconds by whoever changes or reads the folder as a whole: promoting a result (the renames of
  ``stsnb.runs.execution.replace_folder``), putting back what a crash set aside (``recover``, which is only safe while
  no promotion is half done) and writing summary.md from the run folders (``stsnb.runs.summary.write_summary``).

Both are ``stsnb.training.file_lock`` locks: an ``flock``, which the kernel drops when its process dies however it
dies (SIGKILL, the OOM killer), so a lock file left behind by a dead run is simply taken over and two runs starting
together cannot both take one; where the file system does not support flock (Lustre without ``-o flock``), a lock file
created with ``O_EXCL``, which the first lock says. The file holds its owner's pid, host and start time for the message
and ``stsnb status``, and is removed on release. POSIX only (Linux, macOS), as is the GPU server.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..training import file_lock as file_lock_module
from .plans import PlanError

FOLDER_LOCK = ".lock"


class RunLocked(PlanError):
    """Another ``stsnb run`` is running the same notebook of the same profile folder."""


def notebook_lock_path(profile_dir: Path, name: str) -> Path:
    return Path(profile_dir) / f".lock-{name}"


@contextlib.contextmanager
def file_lock(path: Path, wait: bool, refusal: str = "") -> Iterator[None]:
    """Hold the exclusive lock on ``path`` (``stsnb.training.file_lock.exclusive``): ``wait`` until it is free, else
    raise ``RunLocked`` (``refusal``, then the holder's pid, host and start time, and the file)."""
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(file_lock_module.exclusive(path, wait, say=_say))
        except file_lock_module.Busy as busy:
            owner = busy.holder
            raise RunLocked(
                f"{refusal} (pid {owner.get('pid', 'unknown')} on {owner.get('host', 'an unknown host')}, started "
                f"{owner.get('started', 'unknown')}; lock file {path})"
            ) from None
        yield


def _say(line: str) -> None:
    print(f"[stsnb run] {line}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def notebook_locks(profile_dir: Path, names: Iterable[str]) -> Iterator[None]:
    """Hold the lock of every notebook in ``names`` (all or none): a run of any of them elsewhere raises
    ``RunLocked`` naming it and its pid, before anything runs."""
    with contextlib.ExitStack() as stack:
        for name in names:
            refusal = (
                f"{name} of {profile_dir} is being run by another stsnb run; wait for it, stop it, or leave {name} "
                "out (--only) or use another --out"
            )
            stack.enter_context(file_lock(notebook_lock_path(profile_dir, name), wait=False, refusal=refusal))
        yield


def folder_lock(profile_dir: Path) -> contextlib.AbstractContextManager[None]:
    """The short lock around a promotion, a recovery or a summary.md write of ``profile_dir`` (waits for it)."""
    return file_lock(Path(profile_dir) / FOLDER_LOCK, wait=True)
