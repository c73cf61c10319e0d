"""The lock under the runner's and a fit's locks (``stsnb.training.file_lock``): flock where the file system has it,
an exclusive-create lock file where it does not (Lustre without ``-o flock``), saying which once."""

from __future__ import annotations

import errno
import json
import os
import socket

import pytest

from stsnb.runs import locks
from stsnb.training import file_lock


@pytest.fixture
def no_flock(monkeypatch):
    """A file system whose flock answers ENOSYS, as Lustre mounted without ``-o flock`` does."""
    import fcntl

    def unsupported(descriptor, operation):
        raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))

    monkeypatch.setattr(fcntl, "flock", unsupported)
    monkeypatch.setattr(file_lock, "_kinds", {})


def test_flock_is_used_where_it_works_and_a_held_lock_is_refused(tmp_path):
    said = []
    with file_lock.exclusive(tmp_path / ".lock", wait=False, say=said.append) as kind:
        assert kind == file_lock.FLOCK and said == []
        owner = json.loads((tmp_path / ".lock").read_text())
        assert owner["pid"] == os.getpid() and owner["host"] == socket.gethostname()
    assert not (tmp_path / ".lock").exists()


def test_without_flock_an_exclusive_file_is_used_and_said_once(tmp_path, no_flock):
    said = []
    with file_lock.exclusive(tmp_path / ".lock", wait=False, say=said.append) as kind:
        assert kind == file_lock.EXCLUSIVE_FILE
        again = file_lock.exclusive(tmp_path / ".lock", wait=False, say=said.append)
        with pytest.raises(file_lock.Busy) as busy, again:  # held by a live process (this one)
            pass
        assert busy.value.holder["pid"] == os.getpid()
    assert not (tmp_path / ".lock").exists()
    with file_lock.exclusive(tmp_path / ".other", wait=False, say=said.append) as kind:
        assert kind == file_lock.EXCLUSIVE_FILE
    assert len(said) == 1 and "flock is not supported on this file system" in said[0]
    assert "exclusive-create lock files" in said[0]


def test_without_flock_a_dead_holders_file_is_taken_over_and_another_hosts_is_named(tmp_path, no_flock):
    said = []
    path = tmp_path / ".lock-tiny_ok"
    path.write_text(json.dumps({"pid": 2**22 + 12345, "host": socket.gethostname(), "started": "long ago"}))
    with file_lock.exclusive(path, wait=False, say=said.append):
        assert json.loads(path.read_text())["pid"] == os.getpid()
    assert any(f"from pid {2**22 + 12345}, which is gone" in line for line in said)
    path.write_text(json.dumps({"pid": 1, "host": "another-node", "started": "an hour ago"}))
    held = r"pid 1 on another-node, started an hour ago; lock file .*lock-tiny_ok"
    with pytest.raises(locks.RunLocked, match=held), locks.notebook_locks(tmp_path, ["tiny_ok"]):
        pass
    assert path.exists()  # not ours to delete: the message names it
