"""What decides an embedding, as one short hash: the cache key of ``stsnb.evaluation.evaluate``.

An embedding depends on the weights, the tokenizer, the model config, the pooling, the prompt template text, the
maximum length, the dtype / quantization and this package's code. Hashing every weight on every call would cost
seconds on a small model and minutes on a 7B one, so the weights enter in two parts:

- the files they were loaded from: a digest of every file of the model folder (weights, tokenizer, config),
  remembered in ``<cache>/file_digests.json`` by path, size and modification time, so a file is read once;
- what changed since loading: every parameter or buffer whose autograd version counter moved (optimizer steps,
  ``load_state_dict`` and in-place edits under ``no_grad`` all move it) or that did not exist at load time (LoRA
  adapters) is hashed by value. Only a change made through ``tensor.data`` escapes the counter; ``strict=True``
  hashes every tensor.

Two changes escape the counters: a dtype or device cast (``model.to(torch.bfloat16)`` swaps ``param.data``) and
an edit through ``tensor.data`` (peft's ``merge_and_unload`` adds the LoRA product that way). So the key also holds
a cheap **strided sample** of every tensor (:func:`weights_sample`: name, shape, dtype, device type and 16 values
taken at a stride), the cache **schema version** and the **library versions** (torch, transformers, peft) that
compute the embeddings.

A model built in memory (no folder) is hashed whole. ``stsnb.models.folder_cache_key`` computes the same key for
an untouched model from its folder and the sample remembered when it was last loaded (``remember_sample``), so
``stsnb eval`` can answer from the cache without loading the model.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from functools import cache
from importlib import metadata
from pathlib import Path

import torch

from .. import __version__

DIGESTS_FILE = "file_digests.json"
SAMPLES_FILE = "weight_samples.json"
SCHEMA = 2  # the cache key's layout: bump when what enters the key changes
SAMPLE_VALUES = 16  # values per tensor in the strided sample


def _digest_file(path: Path) -> str:
    digest = hashlib.blake2b(digest_size=16)
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def folder_digest(folder: str | os.PathLike, remember_in: Path | None) -> str:
    """A digest of every file below ``folder`` (names and contents); file digests are remembered by size + mtime."""
    folder = Path(folder).resolve()
    known: dict[str, list] = {}
    store = remember_in / DIGESTS_FILE if remember_in is not None else None
    if store is not None and store.is_file():
        try:
            known = json.loads(store.read_text())
        except (OSError, json.JSONDecodeError):
            known = {}
    changed = False
    digest = hashlib.blake2b(digest_size=16)
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and ".cache" not in p.parts):
        stat = path.stat()
        entry = known.get(str(path))
        if entry is None or entry[:2] != [stat.st_size, stat.st_mtime_ns]:
            entry = [stat.st_size, stat.st_mtime_ns, _digest_file(path)]
            known[str(path)] = entry
            changed = True
        digest.update(f"{path.relative_to(folder)}|{entry[2]}\n".encode())
    if changed and store is not None:
        store.parent.mkdir(parents=True, exist_ok=True)
        tmp = store.with_name(f".{store.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(known))
        tmp.replace(store)
    return digest.hexdigest()


def load_record(module: torch.nn.Module) -> dict[int, int]:
    """Each parameter's and buffer's version counter right after loading (keyed by tensor identity)."""
    return {id(t): t._version for t in _tensors(module)}


def _tensors(module: torch.nn.Module) -> Iterable[torch.Tensor]:
    yield from module.parameters()
    yield from module.buffers()


def settings_key(**settings: object) -> str:
    """The non-weight settings in a stable text form (sorted names)."""
    return "|".join(f"{k}={settings[k]!r}" for k in sorted(settings))


@cache
def library_versions() -> str:
    """The versions of the libraries that compute an embedding (part of every key)."""
    versions = []
    for package in ("torch", "transformers", "peft"):
        try:
            versions.append(f"{package}={metadata.version(package)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{package}=none")
    return ",".join(versions)


def weights_sample(module: torch.nn.Module) -> str:
    """A cheap digest of every parameter and buffer: name, shape, dtype, device type and ``SAMPLE_VALUES`` values
    taken at an even stride (one transfer to the CPU in all). It changes with a dtype cast, a move to another kind
    of device and any edit that touches a sampled value, all of which the version counters can miss."""
    digest = hashlib.blake2b(digest_size=16)
    samples = []
    named = list(module.named_parameters()) + list(module.named_buffers())
    for name, tensor in sorted(named, key=lambda item: item[0]):
        digest.update(f"{name}|{tuple(tensor.shape)}|{tensor.dtype}|{tensor.device.type}\n".encode())
        if tensor.device.type == "meta" or tensor.numel() == 0:
            continue
        flat = tensor.detach().reshape(-1)
        stride = max(1, flat.numel() // SAMPLE_VALUES)
        samples.append(flat[::stride][:SAMPLE_VALUES].to(torch.float32).cpu())
    if samples:
        digest.update(torch.cat(samples).numpy().tobytes())
    return digest.hexdigest()


def remember_sample(folder: Path | None, loaded_as: str, sample: str) -> None:
    """Remember the ``weights_sample`` of a model as loaded (``loaded_as``: its files' digest and load settings)."""
    if folder is None:
        return
    store = folder / SAMPLES_FILE
    try:
        known = json.loads(store.read_text()) if store.is_file() else {}
    except (OSError, json.JSONDecodeError):
        known = {}
    if known.get(loaded_as) == sample:
        return
    known[loaded_as] = sample
    store.parent.mkdir(parents=True, exist_ok=True)
    tmp = store.with_name(f".{store.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(known))
    tmp.replace(store)


def recall_sample(folder: Path | None, loaded_as: str) -> str | None:
    """The sample :func:`remember_sample` stored for ``loaded_as`` (None when that model was never loaded here)."""
    store = folder / SAMPLES_FILE if folder is not None else None
    if store is None or not store.is_file():
        return None
    try:
        return json.loads(store.read_text()).get(loaded_as)
    except (OSError, json.JSONDecodeError):
        return None


def key(source: str | None, settings: str, changed: Iterable[tuple[str, torch.Tensor]] = ()) -> str:
    """The cache key: schema, package and library versions, weights source, settings (the weights sample among
    them) and the tensors that changed since loading."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"schema {SCHEMA}|stsnb {__version__}|{library_versions()}|{source}|{settings}".encode())
    for name, tensor in changed:
        digest.update(name.encode())
        data = tensor.detach().cpu().contiguous().flatten()
        digest.update(data.view(torch.uint8).numpy().tobytes() if data.numel() else b"")
    return digest.hexdigest()


def changed_tensors(
    module: torch.nn.Module, record: dict[int, int] | None, strict: bool = False
) -> list[tuple[str, torch.Tensor]]:
    """Named parameters and buffers that are new or modified since ``record`` (all of them without a record)."""
    named = list(module.named_parameters()) + list(module.named_buffers())
    if record is None or strict:
        return sorted(named, key=lambda item: item[0])
    return sorted(((n, t) for n, t in named if record.get(id(t)) != t._version), key=lambda item: item[0])
