"""The Hub commits a run loads its models at: a plan pins them (``trust_remote_code:`` in ``paper.yaml``), ``stsnb run``
hands them to each notebook's kernel in ``$STSNB_HUB_REVISIONS`` (JSON, inherited by its training processes), and
``load_encoder`` passes them to ``from_pretrained``, so a run reads the weights ``stsnb models fetch --paper`` put in
the HF cache, with ``HF_HUB_OFFLINE=1`` too.

A pin: ``revision``, the model repo's commit (weights, config, tokenizer), and ``code_revision``, the commit of the
repo that holds the code its ``auto_map`` names (``jinaai/jina-bert-implementation--modeling_bert.JinaBertModel``:
another repo; without ``--``: the model repo itself, read at ``revision``). A model without a pin is read at ``main``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

REVISIONS_ENV = "STSNB_HUB_REVISIONS"
MAIN = "main"
_COMMIT = re.compile(r"[0-9a-f]{40}")


class PinError(ValueError):
    """A pin that is not a 40-hex commit (or ``main``), named with where it was read."""


class Pin(NamedTuple):
    revision: str = MAIN  # the model repo's commit
    code_revision: str | None = None  # the commit of the repo its auto_map's code lives in (None: ``revision``)

    def code_at(self, code_repo: str, model: str) -> str:
        """The revision the code repo ``code_repo`` is read at: ``code_revision``, or ``revision`` for code that
        lives in the model repo itself."""
        if code_repo == model:
            return self.code_revision or self.revision
        return self.code_revision or MAIN

    def kwargs(self) -> dict[str, str]:
        """``from_pretrained`` keyword arguments: ``revision`` and, when pinned, ``code_revision``."""
        return {"revision": self.revision, **({"code_revision": self.code_revision} if self.code_revision else {})}


UNPINNED = Pin()  # main, the code at its default


def is_commit(revision: str) -> bool:
    return bool(_COMMIT.fullmatch(revision))


def parse(raw: Any, where: str) -> dict[str, Pin]:
    """Model id -> pin from a plan's ``trust_remote_code:`` (a list of ids: no pins; a mapping of id ->
    ``{revision, code_revision}``); a value that is not a 40-hex commit or ``main`` raises ``PinError`` naming
    ``where``."""
    if raw is None:
        return {}
    if isinstance(raw, list | tuple):
        return {str(name): Pin() for name in raw}
    if not isinstance(raw, Mapping):
        raise PinError(f"{where}: expected a list of Hub ids or a mapping of id -> {{revision, code_revision}}")
    pins = {}
    for name, value in raw.items():
        value = value or {}
        if not isinstance(value, Mapping) or set(value) - {"revision", "code_revision"}:
            raise PinError(f"{where}.{name}: expected {{revision: <40-hex commit>, code_revision: <40-hex commit>}}")
        for key in ("revision", "code_revision"):
            commit = value.get(key)
            if commit is not None and not (commit == MAIN or is_commit(str(commit))):
                raise PinError(
                    f"{where}.{name}.{key}: {commit!r} is not a full 40-hex commit (or main); read it from the "
                    f"repo's history on the Hub (https://huggingface.co/{name}/commits/main)"
                )
        pins[str(name)] = Pin(str(value.get("revision") or MAIN), value.get("code_revision"))
    return pins


def to_env(pins: Mapping[str, Pin]) -> str:
    """The pins as ``$STSNB_HUB_REVISIONS`` holds them."""
    return json.dumps({name: pin._asdict() for name, pin in sorted(pins.items())}, sort_keys=True)


def from_env() -> dict[str, Pin]:
    """The pins ``$STSNB_HUB_REVISIONS`` holds ({} when unset)."""
    text = os.environ.get(REVISIONS_ENV, "").strip()
    if not text:
        return {}
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as err:
        raise PinError(f"${REVISIONS_ENV}: not JSON ({err}); `stsnb run` sets it from the plan") from err
    return parse(raw, f"${REVISIONS_ENV}")


def pin_of(model: str) -> Pin:
    """The pin this process loads ``model`` at (``main`` where none is set)."""
    return from_env().get(model, UNPINNED)


# Set by ``stsnb run`` for a notebook's kernel (inherited by its training processes): the file each loaded model is
# noted in (``note_loaded``), which ``stsnb.runs.context.Run`` copies into env.json's ``models`` as sections finish.
LOADED_ENV = "STSNB_MODELS_LOADED"


def note_loaded(model: str, source: str, commit: str | None, pin: Pin | None = None) -> None:
    """Append what ``model`` was loaded from (``hub``: the commit the HF cache or the Hub resolved, with the pin it
    was asked at; a packaged model or a folder: no commit) to ``$STSNB_MODELS_LOADED``; nothing without it. One line
    per load, appended whole, so several processes may write it."""
    target = os.environ.get(LOADED_ENV, "").strip()
    if not target:
        return
    record = {"model": model, "source": source, "commit": commit}
    if pin is not None and source == "hub":
        record |= {"revision": pin.revision, **({"code_revision": pin.code_revision} if pin.code_revision else {})}
    try:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, sort_keys=True) + "\n")
    except OSError:  # a record must never stop a load
        return


def loaded_models(path: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """Model -> what it was loaded from, from a ``$STSNB_MODELS_LOADED`` file ({} when missing); the last load of
    a model wins."""
    models: dict[str, dict[str, Any]] = {}
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return models
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut by a process killed while writing it
        models[str(record.pop("model"))] = record
    return models
