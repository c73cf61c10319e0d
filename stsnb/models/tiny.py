"""Tiny random models of the papers' architecture families, built offline: for rehearsing code paths, never results.

The ``rehearsal`` plan runs every notebook with the ``paper`` plan's values on these instead of BERT/RoBERTa-base and
Mistral-7B, so the code a GPU server runs (model classes, 4-bit loading, LoRA targets, multi-process launch) is
exercised on 2 CPU cores. Their weights are random (seeded): any score they produce is noise. They borrow real
tokenizers from the packaged models (MiniLM's WordPiece for the encoders, SmolLM2's BPE for the decoders).
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .folders import packaged

PREFIX = "tiny-random-"


@dataclass(frozen=True)
class TinyModel:
    family: str  # the paper architecture it stands in for
    kind: str  # "encoder" | "causal"
    tokenizer_from: str  # packaged model whose tokenizer it uses (a name of stsnb.models.folders.KNOWN_MODELS)


TINY_MODELS: dict[str, TinyModel] = {
    f"{PREFIX}bert": TinyModel("bert", "encoder", "minilm-l6"),  # BERT-base (STS-Regression, HiCL)
    f"{PREFIX}roberta": TinyModel("roberta", "encoder", "minilm-l6"),  # RoBERTa / SimCSE / DiffCSE (CCL, HiCL)
    f"{PREFIX}mistral": TinyModel("mistral", "causal", "smollm2-135m"),  # Mistral-7B (Pcc-tuning)
}
WIDTH, LAYERS, HEADS = 64, 2, 4
MAX_POSITIONS = 514  # the papers' 512-token inputs (RoBERTa offsets positions by 2)


def is_tiny(name: str) -> bool:
    return name in TINY_MODELS


def _config(spec: TinyModel, vocab_size: int, pad_token_id: int | None):
    from transformers import BertConfig, MistralConfig, RobertaConfig

    common = dict(vocab_size=vocab_size, hidden_size=WIDTH, num_hidden_layers=LAYERS, num_attention_heads=HEADS)
    if spec.family == "bert":
        return BertConfig(**common, intermediate_size=2 * WIDTH, max_position_embeddings=MAX_POSITIONS)
    if spec.family == "roberta":
        return RobertaConfig(
            **common, intermediate_size=2 * WIDTH, max_position_embeddings=MAX_POSITIONS, pad_token_id=pad_token_id
        )
    if spec.family == "mistral":
        return MistralConfig(**common, intermediate_size=2 * WIDTH, num_key_value_heads=2, max_position_embeddings=4096)
    raise ValueError(f"no tiny model for family {spec.family!r}")


def build(name: str, folder: Path, seed: int = 0) -> Path:
    """Write the tiny random model ``name`` (a key of ``TINY_MODELS``) with its tokenizer into ``folder``."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    if name not in TINY_MODELS:
        raise ValueError(f"{name!r} is not a tiny model (known: {sorted(TINY_MODELS)})")
    spec = TINY_MODELS[name]
    tokenizer = AutoTokenizer.from_pretrained(packaged(spec.tokenizer_from).path)
    torch.manual_seed(seed)
    config = _config(spec, len(tokenizer), tokenizer.pad_token_id)
    model = AutoModel.from_config(config)  # the bare model, as stsnb.models.load_encoder loads it (no LM head)
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    model.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    try:
        partial.rename(folder)  # atomic: a reader never sees half a model
    except OSError:  # another process built it first
        shutil.rmtree(partial)
    return folder
