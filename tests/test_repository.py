"""The repository stays light: every clone and every CI checkout carries what is tracked."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LIMIT_BYTES = 25_000_000  # executed notebooks of cpu and class runs included; smoke and exercise runs keep no notebook


def tracked_bytes(repo: Path = REPO) -> int:
    """The bytes of every tracked file as the working tree holds it (``git ls-files -z | xargs -0 du -cb``)."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=repo, capture_output=True, check=True).stdout
    return sum((repo / name).stat().st_size for name in listed.decode().split("\0") if name and (repo / name).is_file())


def test_the_tracked_tree_is_at_most_25_mb():
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    size = tracked_bytes()
    assert size <= LIMIT_BYTES, f"tracked files weigh {size / 1e6:.1f} MB, over {LIMIT_BYTES / 1e6:.0f} MB"
