"""The code base stays ruff clean (lint and format), so CI catches style drift too."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _ruff() -> list[str]:
    local = Path(sys.executable).with_name("ruff")
    if local.exists():
        return [str(local)]
    if shutil.which("ruff"):
        return ["ruff"]
    pytest.fail("ruff is not installed: it is in the dev extra (pip install -e '.[dev]')")


def test_ruff_check_is_clean():
    result = subprocess.run([*_ruff(), "check", "."], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean():
    result = subprocess.run([*_ruff(), "format", "--check", "."], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
