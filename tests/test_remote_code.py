"""The remote code a plan trusts, run before compute (``stsnb.gpu.remote_code`` through ``stsnb run --check
--online``'s preflight), and notebook 20's guarded load of a contrastive backbone, offline: a local Hub serves a model
whose code (in another repo, at a pinned commit) works under the installed transformers and one whose code raises when
the model is built."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hub_server import LocalHub
from remote_repos import BROKEN, CODE, MODEL_COMMIT, WORKING_CODE, WORKS, remote_code_repos

from stsnb.models.revisions import REVISIONS_ENV, Pin, PinError, from_env, parse, to_env

pytestmark = pytest.mark.usefixtures("local_hub_online")  # served on 127.0.0.1, whatever HF_HUB_OFFLINE says

PREFLIGHT = """
from stsnb.gpu.preflight import run_preflight
from stsnb.models.revisions import Pin
pins = {pins}
params = {{"20_sts_regression": {{"contrastive_backbones": ["{broken}", "{works}"]}}}}
r = run_preflight(params, trust_remote_code=["{broken}", "{works}"], pins=pins, say=print)
print("OK" if r.ok else "PROBLEMS", len(r.problems))
"""


def _preflight(hub: LocalHub, tmp_path: Path, pins: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update({"HF_ENDPOINT": hub.url, "HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_DISABLE_TELEMETRY": "1"})
    code = PREFLIGHT.format(pins=pins, broken=BROKEN, works=WORKS)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.long  # remote code built and run twice (18 s): off the default tier
def test_the_check_runs_the_working_remote_code_and_names_the_failing_one(tmp_path):
    """Each trusted model is built with one layer and run on two sentences; the one whose code raises at
    construction is named with its exception, and the check goes on to the next model."""
    import transformers

    pinned = f"{{'{WORKS}': Pin('{MODEL_COMMIT}', '{WORKING_CODE}')}}"
    with LocalHub({}, models=remote_code_repos(tmp_path)) as hub:
        result = _preflight(hub, tmp_path, pinned)
        unpinned = _preflight(hub, tmp_path / "main", "{}")
    out = result.stdout
    assert "PROBLEMS 1" in out, out + result.stderr
    broken_line = next(line for line in out.splitlines() if line.startswith(f"NO  {BROKEN}"))
    assert f"its remote code failed at construction under transformers {transformers.__version__}" in broken_line
    assert "AttributeError" in broken_line and "get_head_mask" in broken_line and "[20_sts_regression]" in broken_line
    assert out.index(broken_line) < out.index(f"ok  {WORKS}: remote code WorksModel built with 1 layer"), (
        "the failing model comes first (sorted) and the check continued past it"
    )
    assert f"ok  {WORKS}: config (works_bert) and tokenizer at {MODEL_COMMIT[:12]}" in out
    assert "num_hidden_layers = 1, random weights) and run on 2 sentences on the CPU" in out
    assert not list((tmp_path / "hf-home").rglob("*.safetensors")), "no weights were downloaded"
    # at main the code repo holds code that raises: the pin is what made it run
    assert f"NO  {WORKS}: its remote code failed at construction" in unpinned.stdout, unpinned.stdout


def test_pins_are_full_commits_and_travel_in_the_environment(monkeypatch):
    pins = parse({WORKS: {"revision": MODEL_COMMIT, "code_revision": WORKING_CODE}, "a/b": None}, "plan")
    assert pins == {WORKS: Pin(MODEL_COMMIT, WORKING_CODE), "a/b": Pin()}
    assert parse(["x/y"], "plan") == {"x/y": Pin()}
    with pytest.raises(PinError, match=r"plan.a/b.revision: 'c7fd046' is not a full 40-hex commit"):
        parse({"a/b": {"revision": "c7fd046"}}, "plan")
    with pytest.raises(PinError, match="expected"):
        parse({"a/b": {"commit": MODEL_COMMIT}}, "plan")
    from stsnb.runs.execution import hub_revisions

    monkeypatch.delenv(REVISIONS_ENV, raising=False)
    with hub_revisions(pins):  # what `stsnb run` sets for its kernels, and takes back after the batch
        assert from_env() == pins
    assert REVISIONS_ENV not in os.environ
    monkeypatch.setenv(REVISIONS_ENV, to_env(pins))
    assert from_env() == pins
    assert Pin(MODEL_COMMIT, WORKING_CODE).code_at(CODE, WORKS) == WORKING_CODE
    assert Pin(MODEL_COMMIT).code_at(WORKS, WORKS) == MODEL_COMMIT  # code in the model repo: read at its revision
    assert Pin(MODEL_COMMIT).code_at(CODE, WORKS) == "main"


def test_the_paper_plan_pins_its_remote_code_models():
    from stsnb.papers.sts_regression import REMOTE_CODE_MODELS
    from stsnb.runs.plans import plan_path, plan_pins

    pins = plan_pins(plan_path("paper"))
    assert set(pins) == set(REMOTE_CODE_MODELS)
    for pin in pins.values():
        assert len(pin.revision) == 40 and pin.code_revision is not None and len(pin.code_revision) == 40
    assert plan_pins(plan_path("rehearsal")) == {}  # not inherited: the rehearsal runs tiny models


class _Run:
    def __init__(self):
        self.sections: list[str] = []

    def record(self, section, metrics, comparison=()):
        self.sections.append(section)


def test_a_contrastive_backbone_that_fails_is_recorded_as_not_run_and_the_rest_loads(tmp_path):
    from stsnb.papers import sts_regression as reg

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text('{"model_type": "no_such_architecture_for_stsnb"}')
    run, metrics = _Run(), {}
    assert reg.guarded_backbone(str(broken), 32, run=run, metrics=metrics) is None
    encoder = reg.guarded_backbone("tiny-random-bert", 32, run=run, metrics=metrics)
    assert encoder is not None and encoder.encode(["a sentence"]).shape[0] == 1
    (row,) = metrics["not_run"]
    assert row["model"] == str(broken) and row["status"] == "not run"
    assert row["skipped"] == ["Table 3", "Table 5 (stage-2 sweep)"] and row["reason"].startswith("ValueError: ")
    assert run.sections == [f"{broken} not run"]


def test_a_backbone_whose_embeddings_are_not_finite_is_recorded_as_not_run(monkeypatch):
    """Code that runs but returns NaN (a half-supported remote model under a new transformers) trains on nothing: the
    guard records it as not run, as it does code that raises."""
    import torch

    from stsnb.papers import sts_regression as reg
    from stsnb.papers.sts_regression import backbones

    real = backbones.load_backbone

    def nan_backbone(name, max_length):
        encoder = real("tiny-random-bert", max_length)
        monkeypatch.setattr(encoder, "encode", lambda sentences, **kw: torch.full((len(sentences), 8), float("nan")))
        return encoder

    monkeypatch.setattr(backbones, "load_backbone", nan_backbone)
    run, metrics = _Run(), {}
    assert reg.guarded_backbone("nan-model", 32, run=run, metrics=metrics) is None
    (row,) = metrics["not_run"]
    assert row["model"] == "nan-model" and row["reason"].startswith("ValueError: its embeddings of 2 sentences hold")
