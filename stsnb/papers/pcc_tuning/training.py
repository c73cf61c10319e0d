"""Pcc-tuning's two stages (Section 3, Figure 2) on the shared ``stsnb.train.fit`` loop.

The sentence embedding of a causal LM is the final hidden state of the last token of a prompt that wraps the
sentence (Table 3; PromptSTH by default): ``stsnb.models.load_encoder(..., pooling="last", template=...)`` with left
padding. Training follows the official code (REFERENCE_NOTES A1): LoRA r=64, alpha=16, dropout 0.05 on every linear
layer but the LM head, on a 4-bit NF4 base with double quantisation (QLoRA) where asked; each training sentence is cut
to ``cutoff`` tokens *before* it is put into the template (32 in stage 1, 64 in stage 2), so the template's end,
where the embedding is read, is never truncated.

- Stage 1 (Eq. 8): InfoNCE over (anchor, entailment, contradiction) triplets, temperature 0.05, in-batch negatives
  and every row's hard negative; across processes the batch is gathered with gradients (the global batch).
- Stage 2 (Eq. 9): the same adapter keeps training with ``1 - Pearson(cos(u, v), gold)`` over the whole batch in one
  forward and backward (no gradient accumulation: Pearson is a batch statistic, a mean of per-micro-batch Pearsons
  is another loss); across processes the cosines and gold scores are gathered with gradients.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import torch
import torch.nn.functional as F
from torch import Tensor

from ... import data as stsdata
from ... import evaluate, losses, models
from ...distributed import gather_with_grad
from ...train import TrainConfig, TrainResult, fit
from .prompts import template as template_text


def load_prompt_encoder(
    backbone: str,
    template: str = "sth",
    *,
    lora: models.LoraSettings | None = None,
    quantize_4bit: bool = False,
    max_length: int | None = None,
    gradient_checkpointing: bool = False,
) -> models.SentenceEncoder:
    """A causal LM as a sentence encoder through a Table 3 template (``"sth"``, ``"eol"``, ``"sum"``), last-token
    pooling, with LoRA (and a 4-bit base: QLoRA) when ``lora`` is given."""
    return models.load_encoder(
        backbone,
        pooling="last",
        template=template_text(template),
        max_length=max_length,
        lora=lora,
        quantize_4bit=quantize_4bit,
        gradient_checkpointing=gradient_checkpointing,
    )


def cut(tokenizer, sentences: Sequence[str], cutoff: int | None) -> list[str]:
    """Each sentence cut to its first ``cutoff`` tokens (the official ``generate_sentemb_prompt`` does this before
    templating); ``None`` keeps them whole."""
    if cutoff is None:
        return list(sentences)
    if cutoff < 1:
        raise ValueError(f"cutoff must be >= 1 token or None, got {cutoff}")
    ids = tokenizer(list(sentences), add_special_tokens=False, truncation=True, max_length=cutoff)["input_ids"]
    return [s if len(i) < cutoff else tokenizer.decode(i) for s, i in zip(sentences, ids, strict=True)]


def _tokenizer(encoder):
    """The tokenizer of an encoder, also when ``fit`` hands the loss a DDP-wrapped one (several processes)."""
    return getattr(encoder, "module", encoder).tokenizer


def stage1_loss(temperature: float = 0.05, cutoff: int | None = 32) -> Callable[[models.SentenceEncoder, list], Tensor]:
    """Eq. 8 on a batch of ``stsnb.data.Triplet``: anchors, positives and hard negatives encoded in one forward,
    gathered across processes, then ``stsnb.losses.info_nce`` (in-batch + hard negatives)."""

    def step(encoder: models.SentenceEncoder, batch: list[stsdata.Triplet]) -> Tensor:
        texts = [t.anchor for t in batch] + [t.positive for t in batch] + [t.negative for t in batch]
        embedded = encoder(cut(_tokenizer(encoder), texts, cutoff))  # through DDP's forward: its gradients sync
        n = len(batch)
        anchor, positive, negative = (gather_with_grad(embedded[i * n : (i + 1) * n]) for i in range(3))
        return losses.info_nce(anchor, positive, hard_negative=negative, temperature=temperature)

    return step


def stage2_loss(cutoff: int | None = 64) -> Callable[[models.SentenceEncoder, list], Tensor]:
    """Eq. 9 on a batch of ``stsnb.data.STSPair`` (scores 0-5): ``1 - Pearson(cos(u, v), gold)`` over the gathered
    global batch."""

    def step(encoder: models.SentenceEncoder, batch: list[stsdata.STSPair]) -> Tensor:
        texts = cut(_tokenizer(encoder), [p.sent1 for p in batch] + [p.sent2 for p in batch], cutoff)
        embedded = encoder(texts)
        cosine = F.cosine_similarity(embedded[: len(batch)], embedded[len(batch) :], dim=-1)
        gold = torch.tensor([p.score for p in batch], dtype=cosine.dtype, device=cosine.device)
        return losses.pearson_loss(gather_with_grad(cosine), gather_with_grad(gold))

    return step


def train_stage(
    encoder: models.SentenceEncoder,
    stage: int,
    train_data: Sequence,
    config: TrainConfig,
    *,
    dev_pairs: Sequence[stsdata.STSPair] | None = None,
    cutoff: int | None = None,
    temperature: float = 0.05,
) -> TrainResult:
    """Stage 1 (triplets, Eq. 8) or stage 2 (scored pairs, Eq. 9) on the trainable (LoRA) weights of ``encoder``,
    with STS-B dev selection when ``dev_pairs`` are given (the untrained adapter, step 0, included)."""
    if stage == 1:
        loss = stage1_loss(temperature, 32 if cutoff is None else cutoff)
    elif stage == 2:
        if config.grad_accum != 1:
            raise ValueError(
                "stage 2's loss is Pearson's r over the whole batch: gradient accumulation would average the "
                f"Pearsons of micro-batches, another loss (grad_accum={config.grad_accum}; use one larger batch)"
            )
        loss = stage2_loss(64 if cutoff is None else cutoff)
        config = replace(config, drop_last=True)  # a batch of 1-2 pairs has no Pearson to speak of
    else:
        raise ValueError(f"stage must be 1 or 2, got {stage!r}")
    return fit(
        encoder,
        loss,
        list(train_data),
        config,
        evaluate=evaluate.dev_evaluator(dev_pairs) if dev_pairs is not None else None,
    )
