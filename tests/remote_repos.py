"""Model repos with remote code for the local Hub (``tests/hub_server.py``): a tiny BERT whose ``auto_map`` takes its
config and model classes from another repo, as Jina v2 does (``owner/code--module.Class``), and one whose own code
raises when the model is built under transformers 5 (it calls ``get_head_mask``, which transformers 5 removed, as the
4.x-era Jina and Nomic code does).

The code repo's ``main`` raises at construction; the commit ``WORKING_CODE`` holds the working code: a check that
runs it at the pinned ``code_revision`` passes, one that reads ``main`` fails."""

from __future__ import annotations

import json
from pathlib import Path

from hub_server import Repo

from stsnb.models import tiny as tiny_models

WORKS, CODE, BROKEN, PLAIN = "acme/works-encoder", "acme/works-code", "acme/broken-encoder", "acme/plain-bert"
WORKING_CODE = "1" * 40  # the commit of acme/works-code whose code runs
MODEL_COMMIT = "2" * 40  # the commit of acme/works-encoder the pins name

CONFIGURATION = """from transformers import BertConfig


class {name}Config(BertConfig):
    model_type = "{kind}"
"""
WORKING_MODEL = """from transformers import BertModel

from .configuration_works import WorksConfig


class WorksModel(BertModel):
    config_class = WorksConfig
"""
BROKEN_AT_CONSTRUCTION = """from transformers import BertModel

from .configuration_{module} import {name}Config


class {name}Model(BertModel):
    config_class = {name}Config

    def __init__(self, config):
        super().__init__(config)
        self.head_mask = self.get_head_mask(None, config.num_hidden_layers)  # removed in transformers 5
"""


def tiny_bert_files(root: Path, weights: bool = False) -> dict[str, bytes]:
    """A tiny random BERT's config and tokenizer files (``weights``: its model.safetensors too)."""
    folder = root / "tiny-bert"
    if not folder.is_dir():
        tiny_models.build("tiny-random-bert", folder)
    return {p.name: p.read_bytes() for p in folder.iterdir() if weights or p.suffix != ".safetensors"}


def _with_auto_map(files: dict[str, bytes], kind: str, auto_map: dict[str, str]) -> dict[str, bytes]:
    config = json.loads(files["config.json"])
    config.update(model_type=kind, auto_map=auto_map, architectures=[auto_map["AutoModel"].split(".")[-1]])
    return {**files, "config.json": json.dumps(config, indent=2).encode()}


def remote_code_repos(root: Path, weights: bool = False) -> dict[str, Repo]:
    """``WORKS`` (code in ``CODE`` at ``WORKING_CODE``), ``CODE`` and ``BROKEN`` (its own code raises when built)."""
    bert = tiny_bert_files(root, weights)
    works = _with_auto_map(
        bert,
        "works_bert",
        {"AutoConfig": f"{CODE}--configuration_works.WorksConfig", "AutoModel": f"{CODE}--modeling_works.WorksModel"},
    )
    configuration = CONFIGURATION.format(name="Works", kind="works_bert").encode()
    working = {"configuration_works.py": configuration, "modeling_works.py": WORKING_MODEL.encode()}
    broken_main = {
        "configuration_works.py": configuration,
        "modeling_works.py": BROKEN_AT_CONSTRUCTION.format(module="works", name="Works").encode(),
    }
    broken = _with_auto_map(
        bert,
        "broken_bert",
        {"AutoConfig": "configuration_broken.BrokenConfig", "AutoModel": "modeling_broken.BrokenModel"},
    )
    broken |= {
        "configuration_broken.py": CONFIGURATION.format(name="Broken", kind="broken_bert").encode(),
        "modeling_broken.py": BROKEN_AT_CONSTRUCTION.format(module="broken", name="Broken").encode(),
    }
    return {
        WORKS: Repo(works, history={MODEL_COMMIT: works}),
        CODE: Repo(broken_main, history={WORKING_CODE: working}),
        BROKEN: Repo(broken),
    }
