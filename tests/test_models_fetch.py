"""``stsnb models fetch --paper`` and ``stsnb run --check --offline``, offline: a local Hub (``tests/hub_server.py``)
serves a plain tiny BERT and a tiny BERT whose code lives in another repo at a pinned commit
(``tests/remote_repos.py``); the plan's model list is monkeypatched to those two, so the real commands run on small
repos. Before the fetch the offline check names the missing repos and the command; after it the check passes, and the
models load with ``HF_HUB_OFFLINE=1`` at the pinned commits, as a compute node loads them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hub_server import LocalHub, Repo
from remote_repos import CODE, MODEL_COMMIT, PLAIN, WORKING_CODE, WORKS, remote_code_repos, tiny_bert_files

from stsnb.gpu import local_models

pytestmark = pytest.mark.usefixtures("local_hub_online")  # served on 127.0.0.1, whatever HF_HUB_OFFLINE says

SCRIPT = """
import stsnb.cli as cli
import stsnb.gpu.check_command as check_command
import stsnb.gpu.local_models as lm
import stsnb.gpu.preflight as pf
from stsnb.models.revisions import Pin
from stsnb.runs.plans import load_plan, plan_path

PINS = {{"{works}": Pin("{commit}", "{code}")}}
PARAMS = {{"20_sts_regression": {{"contrastive_backbones": ["{works}"], "nli_source": "paper"}},
          "30_hicl": {{"backbone": "{plain}", "corpus_source": "sample"}}}}
pf.plan_params = lambda plan, notebooks: PARAMS  # the paper plan's models replaced by the two tiny ones
pf.plan_settings = lambda path: {{"trust_remote_code": list(PINS), "pins": PINS}}
lm.plan_models_and_pins = lambda plan, notebooks: (pf.plan_models(PARAMS), PINS)
plan = load_plan(plan_path("paper"))
for step, call in (("BEFORE", lambda: check_command.offline_check(plan, None)),
                   ("FETCH", lambda: cli.main(["models", "fetch", "--paper"])),
                   ("AFTER", lambda: check_command.offline_check(plan, None))):
    print("==", step, flush=True)
    print(step, call(), flush=True)
"""

LOAD_OFFLINE = f"""
from stsnb.models import load_encoder

for name, remote in (("{WORKS}", True), ("{PLAIN}", False)):
    encoder = load_encoder(name, trust_remote_code=remote, device="cpu")
    print("LOADED", name, type(encoder.backbone).__name__, tuple(encoder.encode(["one", "two"]).shape))
"""


@pytest.fixture(scope="module")
def model_repos(tmp_path_factory) -> dict[str, Repo]:
    root = tmp_path_factory.mktemp("repos")
    plain = tiny_bert_files(root, weights=True)
    plain |= {  # copies a run does not read: the fetch leaves them on the Hub
        "pytorch_model.bin": b"\0" * 1000,
        "onnx/model.onnx": b"\0" * 1000,
        "README.md": b"a tiny BERT\n",
    }
    return {PLAIN: Repo(plain), **remote_code_repos(root, weights=True)}


def _data_folder(data_dir: Path, target: Path) -> Path:
    """The real data folder (linked) with the paper corpora 20_sts_regression's nli_source: paper reads."""
    target.mkdir()
    for entry in data_dir.iterdir():
        (target / entry.name).symlink_to(entry)
    (target / "paper").mkdir()
    for name in ("snli_train.csv", "multinli_train.csv"):
        (target / "paper" / name).write_text("gold_label,sentence1,sentence2\nentailment,A man sleeps.,A man rests.\n")
    return target


def _run(code: str, env_extra: dict[str, str]) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "STSNB_HUB"))}
    env.update({"HF_HUB_DISABLE_TELEMETRY": "1", **env_extra})
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)


def test_only_one_weights_format_and_the_settings_files_are_fetched():
    listing = {
        "config.json": 600,
        "model.safetensors": 10,
        "pytorch_model.bin": 10,
        "tf_model.h5": 10,
        "onnx/model.onnx": 10,
        "tokenizer.json": 5,
        "vocab.txt": 5,
        "modeling_x.py": 1,
        "README.md": 1,
    }
    chosen = local_models.chosen_files(listing, "model")
    assert sorted(chosen) == ["config.json", "model.safetensors", "modeling_x.py", "tokenizer.json", "vocab.txt"]
    sharded = {"config.json": 1, "pytorch_model-00001-of-00002.bin": 5, "pytorch_model.bin.index.json": 1}
    assert sorted(local_models.chosen_files(sharded, "model")) == sorted(sharded)
    assert list(local_models.chosen_files(listing, "code")) == ["modeling_x.py"]


@pytest.mark.long  # downloads and a fresh offline process (13 s): off the default tier
def test_models_fetch_puts_the_plans_repos_local_and_the_offline_check_then_passes(model_repos, data_dir, tmp_path):
    env = {
        "HF_HOME": str(tmp_path / "hf-home"),
        "STSNB_DATA_DIR": str(_data_folder(data_dir, tmp_path / "data")),
    }
    script = SCRIPT.format(works=WORKS, plain=PLAIN, commit=MODEL_COMMIT, code=WORKING_CODE)
    with LocalHub({}, models={name: model_repos[name] for name in (PLAIN, WORKS, CODE)}) as hub:
        result = _run(script, {**env, "HF_ENDPOINT": hub.url})
        requests = list(hub.requests)
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    before, fetched, after = (
        out.split("== FETCH")[0],
        out.split("== FETCH")[1].split("== AFTER")[0],
        out.split("== AFTER")[1],
    )
    # before: each missing repo named with the command that fetches it; the data folder is fine
    assert "BEFORE False" in before
    assert f"NO  {WORKS} at {MODEL_COMMIT[:12]} [20_sts_regression]: not in the HF cache" in before
    assert f"NO  {PLAIN} at main [30_hicl]: not in the HF cache" in before and "`stsnb models fetch --paper`" in before
    assert "ok  data folder: paper/snli_train.csv" in before and "offline check: 3 local, 2 missing" in before
    # the fetch: sizes first (the code repo found through the model's auto_map), then the downloads
    lines = fetched.splitlines()
    sizes = next(i for i, line in enumerate(lines) if line.startswith("3 repos, "))
    assert sizes < min(i for i, line in enumerate(lines) if line.startswith("ok  "))
    assert any(line.startswith(f"  {CODE} at {WORKING_CODE[:12]} [code of {WORKS}]: 2 files") for line in lines)
    assert "stsnb models fetch: 3 repos in the HF cache" in fetched and "FETCH 0" in out
    downloaded = {r["path"] for r in requests if r["method"] == "GET" and "/resolve/" in r["path"]}
    assert not any(p.endswith(("pytorch_model.bin", "model.onnx", "README.md")) for p in downloaded), downloaded
    assert f"/{CODE}/resolve/{WORKING_CODE}/modeling_works.py" in downloaded  # at the pinned code_revision
    # after: everything local
    assert "AFTER True" in out and "compute nodes can run with HF_HUB_OFFLINE=1" in after
    assert f"ok  {CODE} at {WORKING_CODE[:12]} [code of {WORKS}]: in the HF cache at its pinned commit" in after
    # a compute node: no Hub at all, the pins from the plan as `stsnb run` passes them
    from stsnb.models.revisions import Pin, to_env

    offline = {**env, "HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9", "STSNB_HUB_REVISIONS": to_env(
        {WORKS: Pin(MODEL_COMMIT, WORKING_CODE)})}  # fmt: skip
    loaded = _run(LOAD_OFFLINE, offline)
    assert f"LOADED {WORKS} WorksModel (2, 64)" in loaded.stdout, loaded.stdout + loaded.stderr[-3000:]
    assert f"LOADED {PLAIN} BertModel (2, 64)" in loaded.stdout


def test_the_offline_check_names_a_missing_weights_file_and_a_missing_code_repo(model_repos, tmp_path):
    """A snapshot without its weights, and a model whose code repo is not in the cache: each named."""
    cache = tmp_path / "hub"
    for repo, files in ((PLAIN, ("config.json", "tokenizer.json")), (WORKS, ("config.json", "tokenizer.json"))):
        commit = model_repos[repo].commit if repo == PLAIN else MODEL_COMMIT
        folder = cache / f"models--{repo.replace('/', '--')}" / "snapshots" / commit
        folder.mkdir(parents=True)
        for name in files:
            (folder / name).write_bytes(model_repos[repo].files[name])
        (folder / "model.safetensors").write_bytes(b"x") if repo == WORKS else None
        if repo == PLAIN:
            (cache / f"models--{repo.replace('/', '--')}" / "refs").mkdir()
            (cache / f"models--{repo.replace('/', '--')}" / "refs" / "main").write_text(commit)
    from stsnb.models.revisions import Pin

    lines = local_models.check_local(
        {PLAIN: ["30_hicl"], WORKS: ["20_sts_regression"]}, {WORKS: Pin(MODEL_COMMIT, WORKING_CODE)}, cache_dir=cache
    )
    text = "\n".join(f"{'ok' if ok else 'NO'}  {line}" for ok, line in lines)
    assert f"NO  {PLAIN} at main [30_hicl]: the HF cache lacks weights (*.safetensors or pytorch_model*.bin)" in text
    assert f"ok  {WORKS} at {MODEL_COMMIT[:12]} [20_sts_regression]: in the HF cache at its pinned commit" in text
    assert f"NO  {CODE} at {WORKING_CODE[:12]} [code of {WORKS}]: not in the HF cache ({cache})" in text
    shutil.rmtree(cache)
