"""Conditional sentence representations h = f(s, c) for C-STS: the bi-encoder and the tri-encoder (CCL Section
3.2.1), the score of Eq. 2 (cosine), and the projection g of BCL (Eq. 10).

- **Bi-encoder**: the sentence and the condition go through the encoder together as a *text pair*
  (``[CLS] s [SEP] c [SEP]`` for BERT-style tokenizers, as the c-sts framework's ``tokenizer(sentence, condition)``)
  and the first token's last hidden state is the representation ("the [CLS] output of the model's last layer").
- **Tri-encoder**: sentence and condition are encoded separately and fused by the Hadamard product,
  ``h = f(s) * T(f(c))``. ``T`` is the identity (the paper's text), or the c-sts framework's condition transform
  ``Dropout + Linear(d, d)`` (``condition_transform=True``; its code applies it always).
- **g** (BCL's projection; the paper does not say what it is): ``"identity"``, ``"linear"`` (``Linear(d, d)``) or
  ``"mlp"`` (``Linear(d, d) + tanh``, the form of SimCSE's training-time MLP). It is used by BCL and C-MSE only; the
  similarity of Eq. 2 is always the cosine of ``h`` itself.

For a tokenizer without a separator token (decoder LMs such as SmolLM2) the pair is joined as text with the EOS
token between sentence and condition (``s</s>c``), which is what RoBERTa's pair template does with its own tokens.
A decoder's first token sees nothing but itself, so such backbones need ``pooling="mean"`` (or ``"last"``).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Literal

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ...data import CSTSRecord
from ...models import loading as models
from ...models import progress

Architecture = Literal["bi", "tri"]
ARCHITECTURES: tuple[Architecture, ...] = ("bi", "tri")
Projection = Literal["identity", "linear", "mlp"]
PROJECTIONS: tuple[Projection, ...] = ("identity", "linear", "mlp")


def hadamard(sentence: Tensor, condition: Tensor) -> Tensor:
    """The tri-encoder's fusion ``I(f(s), f(c)) = f(s) * f(c)`` (Section 3.2.1), element by element."""
    if sentence.shape != condition.shape:
        raise ValueError(
            f"sentence and condition features must have the same shape, got {tuple(sentence.shape)} and "
            f"{tuple(condition.shape)}"
        )
    return sentence * condition


def make_projection(kind: Projection, dim: int) -> nn.Module:
    """BCL's ``g`` (Eq. 10): identity, ``Linear(d, d)``, or ``Linear(d, d) + tanh``."""
    if kind == "identity":
        return nn.Identity()
    if kind == "linear":
        return nn.Linear(dim, dim)
    if kind == "mlp":
        return nn.Sequential(nn.Linear(dim, dim), nn.Tanh())
    raise ValueError(f"projection must be one of {PROJECTIONS}, got {kind!r}")


def make_condition_transform(dim: int, dropout: float, init_std: float = 0.02) -> nn.Module:
    """The c-sts tri-encoder's ``condition_transform``: ``Dropout + Linear(d, d)``, no activation, initialised like a
    BERT linear layer (normal(0, 0.02) weights, zero bias)."""
    linear = nn.Linear(dim, dim)
    nn.init.normal_(linear.weight, std=init_std)
    nn.init.zeros_(linear.bias)
    return nn.Sequential(nn.Dropout(dropout), linear)


def _check_lengths(sentences: Sequence[str], conditions: Sequence[str]) -> None:
    if len(sentences) != len(conditions):
        raise ValueError(f"{len(sentences)} sentences for {len(conditions)} conditions: one condition per sentence")
    if not sentences:
        raise ValueError("no sentences given")


class ConditionalEncoder(nn.Module):
    """``h = f(s, c)`` from a :class:`stsnb.models.SentenceEncoder` (backbone + tokenizer + pooling), plus ``g``.

    Subclasses define :meth:`represent_batch`. ``forward(sentences, conditions)`` returns ``h`` (N, D);
    ``forward(..., project=True)`` returns ``(h, g(h))``, so a training step goes through ``forward`` only.
    """

    architecture: Architecture

    def __init__(self, encoder: models.SentenceEncoder, projection: Projection = "mlp"):
        super().__init__()
        self.encoder = encoder
        self.projection_kind: Projection = projection
        self.projection = make_projection(projection, encoder.dim).to(encoder.device)
        self.train(encoder.training)

    @property
    def device(self) -> torch.device:
        return self.encoder.device

    @property
    def dim(self) -> int:
        return self.encoder.dim

    def new_parameters(self) -> list[str]:
        """Names of the parameters that are not the pretrained backbone's (``g``, the condition transform)."""
        return [name for name, _ in self.named_parameters() if not name.startswith("encoder.")]

    def represent_batch(self, sentences: Sequence[str], conditions: Sequence[str]) -> Tensor:
        raise NotImplementedError

    def forward(self, sentences: Sequence[str], conditions: Sequence[str], project: bool = False):
        _check_lengths(sentences, conditions)
        h = self.represent_batch(list(sentences), list(conditions))
        return (h, self.projection(h)) if project else h

    @torch.inference_mode()
    def represent(self, sentences: Sequence[str], conditions: Sequence[str], batch_size: int = 64) -> Tensor:
        """``h`` for every (sentence, condition), in eval mode, without gradients, in input order (CPU tensor).

        Identical inputs are encoded once; inputs are sorted by length so that batches carry little padding.
        """
        _check_lengths(sentences, conditions)
        was_training = self.training
        self.eval()
        try:
            unique = list(dict.fromkeys(zip(sentences, conditions, strict=True)))
            order = sorted(range(len(unique)), key=lambda i: len(unique[i][0]) + len(unique[i][1]))
            table: dict[tuple[str, str], Tensor] = {}
            with progress.bar(len(unique), "evaluate", "input", leave=False) as shown:
                for start in range(0, len(order), batch_size):
                    chunk = [unique[i] for i in order[start : start + batch_size]]
                    h = self.represent_batch([s for s, _ in chunk], [c for _, c in chunk]).float().cpu()
                    table.update(zip(chunk, h, strict=True))
                    shown.update(len(chunk))
            return torch.stack([table[key] for key in zip(sentences, conditions, strict=True)])
        finally:
            self.train(was_training)

    def similarities(self, records: Sequence[CSTSRecord], batch_size: int = 64) -> np.ndarray:
        """Eq. 2 for every row: ``cos(f(s1, c), f(s2, c))`` (both sides in one :meth:`represent` call, so an input
        shared by several rows is encoded once)."""
        conditions = [r.condition for r in records]
        h = self.represent([r.sent1 for r in records] + [r.sent2 for r in records], conditions + conditions, batch_size)
        h1, h2 = h[: len(records)], h[len(records) :]
        return F.cosine_similarity(h1, h2, dim=-1).numpy().astype(np.float64)


class BiEncoder(ConditionalEncoder):
    """Section 3.2.1 bi-encoder: ``h = pool(f([s; c]))``, sentence and condition in one input (a text pair)."""

    architecture: Architecture = "bi"

    def __init__(self, encoder: models.SentenceEncoder, projection: Projection = "mlp"):
        super().__init__(encoder, projection)
        tokenizer = encoder.tokenizer
        self.text_separator = None if tokenizer.sep_token else (tokenizer.eos_token or "\n")
        accepted = inspect.signature(encoder.backbone.forward).parameters
        self.pass_token_types = "token_type_ids" in accepted

    def pair_ids(self, sentences: Sequence[str], conditions: Sequence[str]) -> dict[str, list[list[int]]]:
        """Unpadded token ids of (sentence, condition) pairs: the tokenizer's pair template, or ``s<eos>c`` as text;
        with the token types where the backbone takes them."""
        tokenizer, length = self.encoder.tokenizer, self.encoder.max_length
        if self.text_separator is None:
            encoded = tokenizer(list(sentences), list(conditions), truncation=True, max_length=length)
        else:
            joined = [f"{s}{self.text_separator}{c}" for s, c in zip(sentences, conditions, strict=True)]
            encoded = tokenizer(joined, truncation=True, max_length=length)
        keys = ("input_ids", "attention_mask") + (("token_type_ids",) if self.pass_token_types else ())
        return {k: encoded[k] for k in keys}

    def tokenize_pairs(self, sentences: Sequence[str], conditions: Sequence[str]) -> dict[str, Tensor]:
        """:meth:`pair_ids` padded into one batch on the encoder's device."""
        return self.encoder.pad(self.pair_ids(sentences, conditions))

    def represent_batch(self, sentences: Sequence[str], conditions: Sequence[str]) -> Tensor:
        return self.encoder.embed_unpadded(self.pair_ids(sentences, conditions))


class TriEncoder(ConditionalEncoder):
    """Section 3.2.1 tri-encoder: ``h = f(s) * T(f(c))``, sentence and condition encoded separately, one backbone."""

    architecture: Architecture = "tri"

    def __init__(
        self,
        encoder: models.SentenceEncoder,
        projection: Projection = "mlp",
        condition_transform: bool = False,
        transform_dropout: float = 0.1,
    ):
        super().__init__(encoder, projection)
        self.condition_transform = (
            make_condition_transform(encoder.dim, transform_dropout).to(encoder.device)
            if condition_transform
            else nn.Identity()
        )

    @torch.inference_mode()
    def represent(self, sentences: Sequence[str], conditions: Sequence[str], batch_size: int = 64) -> Tensor:
        """``h = f(s) * T(f(c))`` for every (sentence, condition), in eval mode, in input order (CPU tensor).

        ``f(s)`` does not depend on ``c`` here, so each distinct sentence and each distinct condition is encoded once
        (``SentenceEncoder.encode``: sorted by length) and the products are formed afterwards; the same numbers as
        :meth:`represent_batch` in eval mode, at about half the encoder passes of encoding every (s, c) input."""
        _check_lengths(sentences, conditions)
        was_training = self.training
        self.eval()
        try:
            texts = {"s": list(dict.fromkeys(sentences)), "c": list(dict.fromkeys(conditions))}
            with progress.bar(len(texts["s"]) + len(texts["c"]), "evaluate", "sentence", leave=False):
                encoded = {k: self.encoder.encode(v, batch_size).to(self.device) for k, v in texts.items()}
            condition = self.condition_transform(encoded["c"]).float().cpu()
            where = {k: {t: i for i, t in enumerate(v)} for k, v in texts.items()}
            s_index = torch.tensor([where["s"][s] for s in sentences])
            c_index = torch.tensor([where["c"][c] for c in conditions])
            return hadamard(encoded["s"].float().cpu()[s_index], condition[c_index])
        finally:
            self.train(was_training)

    def represent_batch(self, sentences: Sequence[str], conditions: Sequence[str]) -> Tensor:
        distinct = list(dict.fromkeys(conditions))  # a batch repeats each condition (s1 and s2 share it)
        features = self.encoder(list(sentences) + distinct)  # one pass, as c-sts stacks s1, s2 and c
        sentence, condition = features[: len(sentences)], features[len(sentences) :]
        where = {c: i for i, c in enumerate(distinct)}
        index = torch.tensor([where[c] for c in conditions], device=condition.device)
        condition = self.condition_transform(condition)[index]
        return hadamard(sentence, condition)


def build_encoder(
    backbone: str,
    architecture: Architecture,
    *,
    pooling: models.Pooling = "cls",
    max_length: int = 64,
    projection: Projection = "mlp",
    condition_transform: bool = False,
    transform_dropout: float = 0.1,
    dropout: float | None = None,
    gradient_checkpointing: bool = False,
    seed: int = 0,
    device: str | torch.device | None = None,
) -> ConditionalEncoder:
    """Load ``backbone`` (``stsnb.models.load_encoder``) and wrap it as a bi- or tri-encoder.

    ``dropout``: for Llama-family backbones without dropout (``smollm2-135m-l6``), which BCL's dropout positives
    need (``stsnb.models.raw_backbone.set_dropout``); BERT-style encoders keep their own. ``gradient_checkpointing``
    (non-reentrant) recomputes activations in the backward pass: less memory, the same gradients. The new layers
    (``g``, the condition transform) are drawn from ``seed``, so two runs with the same seed start from the same model.
    """
    if architecture not in ARCHITECTURES:
        raise ValueError(f"architecture must be one of {ARCHITECTURES}, got {architecture!r}")
    encoder = models.load_encoder(
        backbone,
        pooling=pooling,
        max_length=max_length,
        device=device,
        dropout=dropout,
        gradient_checkpointing=gradient_checkpointing,
    )
    if pooling == "cls" and models.resolve(backbone).kind == "causal":
        raise ValueError(
            f"{backbone} is a decoder: its first token sees only itself, so first-token pooling gives every input the "
            "same embedding; use pooling='mean' (or 'last')"
        )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        if architecture == "bi":
            return BiEncoder(encoder, projection)
        return TriEncoder(encoder, projection, condition_transform, transform_dropout)
