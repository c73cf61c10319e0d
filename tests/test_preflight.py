"""``stsnb run --check --online`` on the paper plan, offline: a Hub-shaped endpoint on 127.0.0.1 serves the plan's
models (tiny random models of their families under the plan's ids, at the commits the plan pins; config and tokenizer,
no weights needed), a gated Mistral, Jina v2 with remote code importing a package that is not installed, and the
datasets; every model is reached through transformers and huggingface_hub as on a GPU server. The remote code that
runs is tested in tests/test_remote_code.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hub_repos import build_repos
from hub_server import LocalHub, Repo

from stsnb.models import tiny as tiny_models
from stsnb.runs.plans import plan_path, plan_pins

pytestmark = pytest.mark.usefixtures("local_hub_online")  # served on 127.0.0.1, whatever HF_HUB_OFFLINE says

REMOTE_CONFIG = """from transformers import BertConfig


class JinaLikeConfig(BertConfig):
    model_type = "jina_like_bert"
"""
REMOTE_MODEL = """import not_an_installed_package_for_stsnb_tests  # noqa: F401
from transformers import BertModel


class JinaLikeModel(BertModel):
    pass
"""


def _files(folder: Path, *, weights: bool = False) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if weights or p.suffix != ".safetensors"}


@pytest.fixture(scope="module")
def model_repos(tmp_path_factory) -> dict[str, Repo]:
    root = tmp_path_factory.mktemp("tiny")
    bert = _files(tiny_models.build("tiny-random-bert", root / "bert"))
    roberta = _files(tiny_models.build("tiny-random-roberta", root / "roberta"))
    mistral = _files(tiny_models.build("tiny-random-mistral", root / "mistral"))
    remote_config = json.loads(bert["config.json"])
    remote_config["auto_map"] = {
        "AutoConfig": "configuration_jina.JinaLikeConfig",
        "AutoModel": "modeling_jina.JinaLikeModel",
    }
    remote_config["model_type"] = "jina_like_bert"
    jina = {
        **bert,
        "config.json": json.dumps(remote_config).encode(),
        "configuration_jina.py": REMOTE_CONFIG.encode(),
        "modeling_jina.py": REMOTE_MODEL.encode(),
    }
    repos = {name: Repo(dict(bert)) for name in ("bert-base-uncased", "nomic-ai/nomic-embed-text-v1")}
    repos["jinaai/jina-embeddings-v2-base-en"] = Repo(jina)
    for name, pin in plan_pins(plan_path("paper")).items():  # the commits the plan pins hold what main holds here
        repos[name].history.update({pin.revision: repos[name].files, pin.code_revision: repos[name].files})
    repos["mistralai/Mistral-7B-v0.1"] = Repo(mistral, gated=True)
    for name in ("roberta-base", "FacebookAI/roberta-base", "FacebookAI/roberta-large",
                 "princeton-nlp/sup-simcse-roberta-base", "princeton-nlp/sup-simcse-roberta-large",
                 "voidism/diffcse-roberta-base-sts"):  # fmt: skip
        repos[name] = Repo(dict(roberta))
    # Nomic v1 needs remote code on the real Hub too: here its copy has none, so the plan's trust list is exercised
    # by Jina alone
    return repos


def _check_online(hub: LocalHub, tmp_path: Path, token: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update({"HF_ENDPOINT": hub.url, "HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_DISABLE_TELEMETRY": "1"})
    if token:
        env["HF_TOKEN"] = token
    return subprocess.run(
        [sys.executable, "-m", "stsnb.cli", "run", "--check", "--online", "--profile", "paper"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


@pytest.mark.long  # runs --check --online in a child (30 s)
def test_preflight_names_the_gated_model_and_the_missing_package_of_remote_code(model_repos, data_dir, tmp_path):
    with LocalHub(build_repos(data_dir), models=model_repos) as hub:
        refused = _check_online(hub, tmp_path, token=None)
        allowed = _check_online(hub, tmp_path, token=hub.token)
    out = refused.stdout
    assert refused.returncode == 1, out + refused.stderr
    assert "NO  mistralai/Mistral-7B-v0.1: gated on the Hub" in out and "HF_TOKEN" in out
    assert "NO  jinaai/jina-embeddings-v2-base-en: its remote code needs packages that are not installed" in out
    assert "not_an_installed_package_for_stsnb_tests" in out
    for reached in ("ok  bert-base-uncased: config (bert) and tokenizer", "ok  roberta-base: config (roberta)",
                    "ok  nomic-ai/nomic-embed-text-v1: config (bert) and tokenizer at 0759316f275a",
                    "ok  data folder: "):  # fmt: skip
        assert reached in out, out
    assert "BERT-base" not in out.split("preflight (")[1], "paper_* parameters are row labels, not models"
    assert "(dataset)" not in out, "the paper plan reads its corpora from the data folder, not the Hub"
    for corpus in ("nli_for_simcse.csv", "snli_train.csv", "multinli_train.csv", "wiki1m_for_simcse.txt"):
        assert f"NO  data folder: paper/{corpus} missing: `stsnb data fetch --paper`" in out
    # with the user's token the gated model is reached; the missing package is still named
    assert "ok  mistralai/Mistral-7B-v0.1: config (mistral) and tokenizer" in allowed.stdout
    assert "NO  jinaai/jina-embeddings-v2-base-en" in allowed.stdout and allowed.returncode == 1
    assert hub.token not in refused.stdout + refused.stderr + allowed.stdout + allowed.stderr


def test_remote_code_the_plan_does_not_trust_is_not_run(model_repos, tmp_path):
    """A model with remote code outside the plan's trust_remote_code list: named, and its code never imported."""
    code = (
        "from stsnb.gpu.preflight import run_preflight\n"
        "r = run_preflight({'20_sts_regression': {'backbones': ['jinaai/jina-embeddings-v2-base-en']}}, say=print)\n"
        "print('OK' if r.ok else 'PROBLEMS')\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    with LocalHub({}, models=model_repos) as hub:
        env.update({"HF_ENDPOINT": hub.url, "HF_HOME": str(tmp_path / "hf-home")})
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert "PROBLEMS" in result.stdout, result.stdout + result.stderr
    assert "needs the Hub's remote code, which the plan does not allow" in result.stdout
    assert not list((tmp_path / "hf-home").rglob("modeling_jina.py")), "the untrusted code was not even fetched"


def test_bin_only_weights_are_named_under_a_torch_older_than_2_6():
    """transformers refuses .bin weights under torch < 2.6: a .bin-only repo (SimCSE's, DiffCSE's) is named then."""
    from stsnb.gpu.preflight import bin_only_problem

    bins = ["config.json", "pytorch_model.bin", "vocab.txt"]
    problem = bin_only_problem("voidism/diffcse-roberta-base-sts", bins, "2.5.1+cu121")
    assert problem is not None and "older than 2.6" in problem and "torch >= 2.6" in problem
    assert bin_only_problem("voidism/diffcse-roberta-base-sts", bins, "2.6.0") is None
    assert bin_only_problem("bert-base-uncased", [*bins, "model.safetensors"], "2.5.1") is None
