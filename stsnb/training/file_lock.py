"""One exclusive lock on a file, for the runner's notebook and folder locks (``stsnb.runs.locks``) and a fit's
checkpoint folder (``stsnb.training.orphans``).

The lock is an ``flock`` where the file system supports it: the kernel drops it when its process dies however it
dies (SIGKILL, the OOM killer), so a file left by a dead holder is simply taken over. Some cluster file systems do
not (Lustre mounted without ``-o flock``, some NFS setups answer ``ENOLCK`` or ``ENOSYS``); there the lock is the
file itself, created with ``O_EXCL`` (atomic on NFS 3+ and Lustre) and removed on release. Such a file outlives a
holder killed with SIGKILL: one left by a process of this host that is gone is taken over; one from another host
cannot be told apart from a live holder, and the message names the file to delete. The first lock of a process on
such a file system says which kind it uses, once (:func:`kind`).

The file holds its holder's pid, host and start time, for the messages and ``stsnb status``.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import json
import os
import socket
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

FLOCK = "flock"
EXCLUSIVE_FILE = "exclusive-create lock files"
_UNSUPPORTED = {errno.ENOLCK, errno.ENOSYS, errno.EOPNOTSUPP, errno.EINVAL}
_kinds: dict[str, str] = {}  # st_dev of a folder -> the kind of lock used there, said once per process
WAIT_POLL_SECONDS = 0.2


class Busy(Exception):
    """The lock is held by another process: ``holder`` is what its file says (pid, host, started)."""

    def __init__(self, holder: dict[str, Any]):
        super().__init__(str(holder))
        self.holder = holder


def holder(path: Path) -> dict[str, Any]:
    """What a lock file says of its holder ({} when it is missing or unreadable)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _stamp() -> bytes:
    started = dt.datetime.now().astimezone().isoformat()
    return json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "started": started}).encode()


def kind(folder: Path, say: Callable[[str], None] | None = None) -> str:
    """The kind of lock used in ``folder``: :data:`FLOCK` where a probe file there takes an flock, else
    :data:`EXCLUSIVE_FILE` (said once per file system and process through ``say``)."""
    import fcntl

    device = str(os.stat(folder).st_dev)
    if device in _kinds:
        return _kinds[device]
    probe = Path(folder) / f".flock-probe-{os.getpid()}"
    descriptor = os.open(probe, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        _kinds[device] = FLOCK
    except OSError as err:
        if err.errno not in _UNSUPPORTED:
            raise
        _kinds[device] = EXCLUSIVE_FILE
        (say or print)(
            f"locks in {folder}: flock is not supported on this file system ({os.strerror(err.errno or 0)}; Lustre "
            f"without -o flock?), so {EXCLUSIVE_FILE} are used: one left by a run killed with SIGKILL on another host "
            "must be deleted by hand (the refusal names it)"
        )
    finally:
        os.close(descriptor)
        probe.unlink(missing_ok=True)
    return _kinds[device]


def _flock(path: Path, wait: bool) -> int:
    """An flocked descriptor of ``path``; raises Busy when it is held and not ``wait``."""
    import fcntl

    while True:
        descriptor = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            with contextlib.suppress(FileNotFoundError):
                if os.fstat(descriptor).st_ino == os.stat(path).st_ino:
                    return descriptor  # else its holder removed it between our open and lock: lock the new file
        except BlockingIOError:
            os.close(descriptor)
            raise Busy(holder(path)) from None
        except BaseException:
            os.close(descriptor)
            raise
        os.close(descriptor)


def holder_alive(owner: dict[str, Any]) -> bool | None:
    """Whether a lock file's holder is alive: None where it cannot be told from here (another host, no pid)."""
    if owner.get("host") != socket.gethostname() or not owner.get("pid"):
        return None
    try:
        os.kill(int(owner["pid"]), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError):
        return True
    return True


def _create(path: Path, wait: bool, say: Callable[[str], None]) -> int:
    """The lock file created with ``O_EXCL``, waiting for it (``wait``) or raising Busy; a stale one taken over."""
    while True:
        try:
            return os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            owner = holder(path)
            if holder_alive(owner) is False:  # a holder of this host that is gone
                say(f"took over {path} from pid {owner.get('pid')}, which is gone")
                path.unlink(missing_ok=True)
                continue
            if not wait:
                raise Busy(owner) from None
            time.sleep(WAIT_POLL_SECONDS)


@contextlib.contextmanager
def exclusive(path: Path, wait: bool, say: Callable[[str], None] | None = None) -> Iterator[str]:
    """Hold the lock on ``path`` (created if missing): ``wait`` until it is free, else raise :class:`Busy`; yields
    the kind used. ``say`` prints the one-time fallback notice and take-overs (default: stderr)."""
    say = say or (lambda line: print(f"[stsnb] {line}", file=sys.stderr, flush=True))
    path = Path(path)
    used = kind(path.parent, say)
    if used == FLOCK:
        descriptor = _flock(path, wait)
        earlier = holder(path).get("pid")
        if earlier and earlier != os.getpid():
            say(f"took over {path} from a process that is gone (pid {earlier})")
        os.ftruncate(descriptor, 0)
    else:
        descriptor = _create(path, wait, say)
    os.write(descriptor, _stamp())
    try:
        yield used
    finally:
        path.unlink(missing_ok=True)  # while still held: a waiter then finds the path gone and locks a new file
        os.close(descriptor)
