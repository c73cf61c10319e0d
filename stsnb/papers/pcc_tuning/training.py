"""Pcc-tuning's two stages (Section 3, Figure 2) on the shared ``stsnb.training.train.fit`` loop.

The sentence embedding of a causal LM is the final hidden state of the last token of a prompt that wraps the
sentence (Table 3; PromptSTH by default): ``stsnb.models.load_encoder(..., pooling="last", template=...)`` with left
padding. Training follows the official code (ZBWpro/Pcc-tuning ``train.py``, ``tune.py``): LoRA r=64, alpha=16,
dropout 0.05 on every linear layer but the LM head, on a 4-bit NF4 base with double quantisation (QLoRA) where asked;
each training sentence is cut to ``cutoff`` tokens *before* it is put into the template (32 in stage 1, 64 in stage
2), so the template's end, where the embedding is read, is never truncated.

- Stage 1 (Eq. 8): InfoNCE over (anchor, entailment, contradiction) triplets, temperature 0.05, in-batch negatives
  and every row's hard negative; across processes the batch is gathered with gradients (the global batch).
- Stage 2 (Eq. 9): the same adapter keeps training with ``1 - Pearson(cos(u, v), gold)`` over the whole batch in one
  forward and backward (no gradient accumulation: Pearson is a batch statistic, a mean of per-micro-batch Pearsons
  is another loss); across processes the cosines and gold scores are gathered with gradients.
- The control of stage 2 (ours, not the paper's): stage 2's scored pairs under stage 1's objective, so that the
  Pearson loss is the only difference (:func:`scored_pairs_info_nce`, :func:`train_control`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import torch
import torch.nn.functional as F
from torch import Tensor

from ... import data as stsdata
from ...evaluation import evaluate
from ...models import loading as models
from ...training import losses
from ...training.config import TrainConfig, TrainResult
from ...training.distributed import gather_with_grad
from ...training.train import fit
from .prompts import template as template_text

STAGE2_OBJECTIVES = ("pearson", "infonce")  # Eq. 9 (the paper's stage 2); Eq. 8's form on the same pairs (control)


def load_prompt_encoder(
    backbone: str,
    template: str = "sth",
    *,
    lora: models.LoraSettings | None = None,
    quantize_4bit: bool = False,
    max_length: int | None = None,
    gradient_checkpointing: bool = False,
    dtype: torch.dtype | None = None,
) -> models.SentenceEncoder:
    """A causal LM as a sentence encoder through a Table 3 template (``"sth"``, ``"eol"``, ``"sum"``), last-token
    pooling, with LoRA (and a 4-bit base: QLoRA) when ``lora`` is given; ``dtype`` for an unquantized base."""
    return models.load_encoder(
        backbone,
        pooling="last",
        template=template_text(template),
        max_length=max_length,
        lora=lora,
        quantize_4bit=quantize_4bit,
        gradient_checkpointing=gradient_checkpointing,
        dtype=None if quantize_4bit else dtype,
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
    gathered across processes, then ``stsnb.training.losses.info_nce`` (in-batch + hard negatives)."""

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


def scored_pairs_info_nce(
    first: Tensor, second: Tensor, gold: Tensor, positive_score: float = 4.0, temperature: float = 0.05
) -> Tensor:
    r"""Eq. 8's form on a batch of *scored* pairs (the control of stage 2; ours, not the paper's).

    A contrastive loss is a binary classifier of pairs (the paper's Section 2): it can only use a graded score by
    cutting it. The pairs scored at least ``positive_score`` (4 of 5: "mostly equivalent" in the STS guidelines; SICK's
    4.2 of 5 after the 0-5 rescaling; the threshold STS-Regression's +Contrast uses) are the positives
    :math:`(h_i, h_i^+)`; every pair's second sentence in the batch is a candidate, so the other positives' are Eq. 8's
    in-batch negatives :math:`h_j^+` and the lower-scored pairs' are extra negatives in the place of Eq. 8's
    :math:`h_j^-`:

    .. math:: \ell_i = -\log \frac{e^{\cos(h_i, h_i^+)/\tau}}{\sum_{j \in \text{batch}} e^{\cos(h_i, s_j)/\tau}},
        \quad i: y_i \ge \text{positive\_score}

    averaged over the positives. So the control sees the same pairs, in the same batches, as Pearson stage 2, and
    only the objective differs; the lower-scored pairs' first sentences and the grades above and below the cut are
    what a contrastive loss cannot use. A batch without a positive gives a loss of 0 (with its graph, no gradient).
    With every pair a positive this is ``stsnb.training.losses.info_nce(first, second)`` exactly.
    """
    if first.shape != second.shape or first.ndim != 2:
        raise ValueError(
            f"first and second must be (N, D) of one shape, got {tuple(first.shape)} and {tuple(second.shape)}"
        )
    if gold.shape != first.shape[:1]:
        raise ValueError(f"gold must hold one score per pair ({first.shape[0]}), got shape {tuple(gold.shape)}")
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    positives = torch.nonzero(gold >= positive_score).flatten()
    if positives.numel() == 0:
        return (first.sum() + second.sum()) * 0.0
    logits = F.normalize(first[positives], dim=-1) @ F.normalize(second, dim=-1).T / temperature
    return F.cross_entropy(logits, positives)


def control_loss(
    positive_score: float = 4.0, temperature: float = 0.05, cutoff: int | None = 64
) -> Callable[[models.SentenceEncoder, list], Tensor]:
    """:func:`scored_pairs_info_nce` on a batch of ``stsnb.data.STSPair`` (scores 0-5), encoded as stage 2 encodes
    them (sentences cut to ``cutoff`` tokens) and gathered across processes (the negatives span the global batch)."""

    def step(encoder: models.SentenceEncoder, batch: list[stsdata.STSPair]) -> Tensor:
        texts = cut(_tokenizer(encoder), [p.sent1 for p in batch] + [p.sent2 for p in batch], cutoff)
        embedded = encoder(texts)
        n = len(batch)
        gold = torch.tensor([p.score for p in batch], dtype=embedded.dtype, device=embedded.device)
        first, second = gather_with_grad(embedded[:n]), gather_with_grad(embedded[n:])
        return scored_pairs_info_nce(first, second, gather_with_grad(gold), positive_score, temperature)

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
    objective: str = "pearson",
    positive_score: float = 4.0,
) -> TrainResult:
    """Stage 1 (triplets, Eq. 8) or stage 2 (scored pairs) on the trainable (LoRA) weights of ``encoder``, with
    STS-B dev selection when ``dev_pairs`` are given (the untrained adapter, step 0, included). Stage 2's
    ``objective``: ``"pearson"`` (Eq. 9, the paper's) or ``"infonce"`` (the control: Eq. 8's form on the same pairs,
    positives scored >= ``positive_score``, :func:`scored_pairs_info_nce`), both in the same batches and steps."""
    if stage == 1:
        loss = stage1_loss(temperature, 32 if cutoff is None else cutoff)
    elif stage == 2:
        if objective not in STAGE2_OBJECTIVES:
            raise ValueError(f"objective must be one of {STAGE2_OBJECTIVES}, got {objective!r}")
        if config.grad_accum != 1:
            raise ValueError(
                f"stage 2's loss ({objective}) is a statistic of the whole batch (Pearson's r; in-batch negatives): "
                f"gradient accumulation would average the losses of micro-batches, another loss "
                f"(grad_accum={config.grad_accum}; use one larger batch)"
            )
        stage2_cutoff = 64 if cutoff is None else cutoff
        if objective == "pearson":
            loss = stage2_loss(stage2_cutoff)
        else:
            loss = control_loss(positive_score, temperature, stage2_cutoff)
        config = replace(config, drop_last=True)  # a batch of 1-2 pairs has no Pearson to speak of
    else:
        raise ValueError(f"stage must be 1 or 2, got {stage!r}")
    arm = "stage 1" if stage == 1 else ("stage 2" if objective == "pearson" else "stage 2 control (InfoNCE)")
    return fit(
        encoder,
        loss,
        list(train_data),
        config.labelled(f"{arm}, seed {config.seed}"),
        evaluate=evaluate.dev_evaluator(dev_pairs) if dev_pairs is not None else None,
        gate=evaluate.gate_evaluator(dev_pairs),
    )
