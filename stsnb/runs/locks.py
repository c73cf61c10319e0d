"""The locks of a profile folder, so that several ``stsnb run`` of one profile can run different notebooks at once
(``stsnb run --parallel``, or two shells with ``--only``).

- ``.lock-<nb>``, one per notebook, held for a whole run by the run that executes it: the same notebook twice is
  refused before anything runs, naming the pid that holds it. Everything a run writes for a notebook is its own
  (``.partial-<nb>``, ``.failed-<time>-<nb>``, ``.checkpoints/<nb>``, ``<nb>/``, ``<nb>.failed/``).
- ``.lock``, held for seconds by whoever changes or reads the folder as a whole: promoting a result (the renames of
  ``stsnb.runs.execution.replace_folder``), putting back what a crash set aside (``recover``, which is only safe while
  no promotion is half done) and writing summary.md from the run folders (``stsnb.runs.summary.write_summary``).

Both are ``flock`` locks, which the kernel drops when their process dies however it dies (SIGKILL, the OOM killer):
a lock file left behind by a dead run is simply taken over, a pid reused since cannot block a run, and two runs
starting together cannot both take one. The file holds its owner's pid and start time for the message, and is removed
on release. POSIX only (Linux, macOS), as is the GPU server.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from .plans import PlanError

FOLDER_LOCK = ".lock"


class RunLocked(PlanError):
    """Another ``stsnb run`` is running the same notebook of the same profile folder."""


def notebook_lock_path(profile_dir: Path, name: str) -> Path:
    return Path(profile_dir) / f".lock-{name}"


def _owner(path: Path) -> dict:
    try:
        owner = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return owner if isinstance(owner, dict) else {}


@contextlib.contextmanager
def file_lock(path: Path, wait: bool, refusal: str = "") -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path``: ``wait`` until it is free, else raise ``RunLocked`` (``refusal``,
    then the holder's pid and start time). A file whose owner is gone is taken over (and said)."""
    import fcntl

    path = Path(path)
    while True:
        descriptor = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            with contextlib.suppress(FileNotFoundError):
                if os.fstat(descriptor).st_ino == os.stat(path).st_ino:
                    break  # else its holder removed it between our open and lock: lock the file now at ``path``
        except BlockingIOError:
            owner = _owner(path)
            os.close(descriptor)
            raise RunLocked(
                f"{refusal} (pid {owner.get('pid', 'unknown')}, started {owner.get('started', 'unknown')})"
            ) from None
        except BaseException:
            os.close(descriptor)
            raise
        os.close(descriptor)
    earlier = _owner(path).get("pid")
    if earlier and earlier != os.getpid():
        print(f"[stsnb run] took over {path} from a run that is gone (pid {earlier})", file=sys.stderr, flush=True)
    os.ftruncate(descriptor, 0)
    os.write(
        descriptor, json.dumps({"pid": os.getpid(), "started": dt.datetime.now().astimezone().isoformat()}).encode()
    )
    try:
        yield
    finally:
        path.unlink(missing_ok=True)  # while still held: a waiter then finds the path gone and locks a new file
        os.close(descriptor)


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
