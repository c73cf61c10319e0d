"""env.json records what a run loaded: each model with the commit it resolved to (noted by every load, in any of the
run's processes), and the lock of the environment it ran in (the GPU lock where torch is a CUDA build)."""

from __future__ import annotations

import json

import torch

from stsnb.models import load_encoder
from stsnb.models.revisions import LOADED_ENV, Pin, loaded_models, note_loaded
from stsnb.runs import context as runs


def test_env_json_records_each_loaded_model_and_its_commit(tmp_path, monkeypatch):
    monkeypatch.setenv(runs.RUN_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(LOADED_ENV, str(tmp_path / runs.MODELS_LOADED_FILE))  # as stsnb run sets it for a kernel
    run = runs.start("fixture", params={"seed": 0})
    load_encoder("tiny-random-bert", device="cpu")  # a model built here: no commit
    pin = Pin("6e85f575bc273f1fd840a658067d0157933c83f0", "f3ec4cf7de7e561007f27c9efc7148b0bd713f81")
    note_loaded("jinaai/jina-embeddings-v2-base-en", "hub", pin.revision, pin)  # as a torchrun worker notes a load
    with (tmp_path / runs.MODELS_LOADED_FILE).open("a") as handle:
        handle.write('{"model": "cut by a kill')  # a line a kill cut short
    run.record("Table 1", {"avg": 1.0})
    models = json.loads((tmp_path / "env.json").read_text())["models"]
    assert models["jinaai/jina-embeddings-v2-base-en"] == {
        "source": "hub",
        "commit": pin.revision,
        "revision": pin.revision,
        "code_revision": pin.code_revision,
    }
    assert models["tiny-random-bert"]["commit"] is None and models["tiny-random-bert"]["source"] != "hub"
    assert loaded_models(tmp_path / "missing.jsonl") == {}


def test_the_lock_recorded_is_the_environments(monkeypatch):
    assert runs.lock_record()["file"] == runs.LOCK_FILE  # the CPU build here
    monkeypatch.setattr(torch.version, "cuda", "12.6")
    record = runs.lock_record()
    assert record["file"] == runs.GPU_LOCK_FILE and len(record["sha256"]) == 64
    assert "torch" not in (record["differs"] or {})  # the installed 2.13.0+cpu matches the lock's torch==2.13.0
