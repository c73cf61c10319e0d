"""The losses of Pcc-tuning, STS-Regression and HiCL, on plain tensors (no model needed), each beside its equation;
CCL's conditional losses are in ``stsnb.training.conditional_losses``.

| function | paper, equation | inputs |
|---|---|---|
| ``translated_relu`` | STS-Regression Eq. 1 | predicted and gold scores |
| ``smooth_k2`` | STS-Regression Eq. 2 | predicted and gold scores |
| ``l1_loss``, ``mse_loss`` | STS-Regression Table 1 baselines (MSE is also CCL's MSE / C-MSE) | scores |
| ``softmax_cross_entropy`` | Sentence-BERT's objective (STS-Regression Table 1 "Cross Entropy") | logits |
| ``clamp_to_label_range`` | STS-Regression Section 3.3 (predictions outside the label range) | predicted scores |
| ``info_nce`` | Pcc-tuning Eq. 1 and Eq. 8 (SimCSE; also HiCL Eq. 1, the global objective) | embeddings |
| ``pearson_loss`` | Pcc-tuning Eq. 9 | cosines and gold scores of one batch |
| ``hicl_local_loss``, ``hicl_loss`` | HiCL Eq. 2; the overall objective (Section 3.2) | segment, sequence embeddings |

Conventions shared by every function:

- ``reduction`` is ``"mean"`` (default: the batch mean), ``"sum"`` or ``"none"`` (one value per example, the
  shape documented per function). The two batch-level objectives (``pearson_loss``, ``hicl_loss``) accept only
  ``"mean"`` and raise ``ValueError`` otherwise, because they have no meaningful per-example value.
- Inputs are checked: a wrong shape, an empty batch, a hyperparameter out of range, or a batch too small for the
  loss raises ``ValueError`` naming the argument and what was expected. Shapes must match exactly (no silent
  broadcasting: a ``(N, 1)`` regression head output against ``(N,)`` labels is an error, not an ``(N, N)`` loss).
- Cosines between embeddings use ``torch.nn.functional.normalize`` (an all-zero embedding has cosine 0 with
  everything), as SimCSE / Pcc-tuning / c-sts do with ``cosine_similarity`` up to its ``eps``.
"""

from __future__ import annotations

import math
from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor

Reduction = Literal["mean", "sum", "none"]
NegativeWeighting = Literal["summation", "averaging"]
SameSequence = Literal["neither", "negative", "positive"]
SAME_SEQUENCE_RELATIONS: tuple[str, ...] = ("neither", "negative", "positive")
_REDUCTIONS = ("mean", "sum", "none")


# ---- validation helpers ---------------------------------------------------------------------------------------


def has_values(*tensors: Tensor) -> bool:
    """False for tensors on the ``meta`` device (shapes only): checks that read values are skipped there, so one
    training step can run on ``meta`` to prove every tensor follows the model's device (tests/test_meta_device.py)."""
    return all(t.device.type != "meta" for t in tensors)


def check_reduction(reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be one of {_REDUCTIONS}, got {reduction!r}")


def reduce_values(values: Tensor, reduction: str) -> Tensor:
    check_reduction(reduction)
    if reduction == "mean":
        return values.mean()
    if reduction == "sum":
        return values.sum()
    return values


def check_number(name: str, value: float, *, low: float, low_inclusive: bool, high: float = math.inf) -> None:
    value = float(value)
    ok = math.isfinite(value) and (value >= low if low_inclusive else value > low) and value <= high
    if not ok:
        bound = f"{'>=' if low_inclusive else '>'} {low:g}" + (f" and <= {high:g}" if math.isfinite(high) else "")
        raise ValueError(f"{name} must be a finite number {bound}, got {value!r}")


def check_same_shape(name_a: str, a: Tensor, name_b: str, b: Tensor) -> None:
    if a.shape != b.shape:
        raise ValueError(
            f"{name_a} and {name_b} must have the same shape, got {name_a} {tuple(a.shape)} and {name_b} "
            f"{tuple(b.shape)} (reshape explicitly, e.g. pred.squeeze(-1), rather than rely on broadcasting)"
        )


def check_floating(name: str, x: Tensor) -> None:
    if not torch.is_floating_point(x):
        raise ValueError(f"{name} must be a floating-point tensor, got dtype {x.dtype}")


def _check_nonempty(name: str, x: Tensor) -> None:
    if x.numel() == 0:
        raise ValueError(f"{name} is empty: a loss needs at least one example")


def check_vector(name: str, x: Tensor) -> None:
    if x.dim() != 1:
        raise ValueError(f"{name} must be 1-D (one value per example), got shape {tuple(x.shape)}")
    _check_nonempty(name, x)


def check_matrix(name: str, x: Tensor) -> None:
    if x.dim() != 2:
        raise ValueError(f"{name} must be 2-D (batch, embedding dim), got shape {tuple(x.shape)}")
    _check_nonempty(name, x)
    check_floating(name, x)


def _scores(pred: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:
    """Check a (prediction, gold) pair and return the gold as ``pred``'s dtype (labels may be integers)."""
    check_floating("pred", pred)
    check_same_shape("pred", pred, "target", target)
    _check_nonempty("pred", pred)
    return pred, target.to(pred.dtype)


def cosine_matrix(a: Tensor, b: Tensor) -> Tensor:
    """``[cos(a_i, b_j)]_ij`` for rows of ``a`` (N, D) and ``b`` (M, D)."""
    return F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).T


# ---- STS-Regression (Zhang & Li): regression losses ----------------------------------------------------------


def translated_relu(pred: Tensor, target: Tensor, k: float, x0: float, reduction: Reduction = "mean") -> Tensor:
    r"""Translated ReLU, STS-Regression Eq. 1: a zero-loss buffer of half-width ``x0``, then a slope ``k``.

    .. math::
        x = |\mathrm{prediction} - \mathrm{label}|, \qquad f(x) = \max(0,\ k\,(x - x_0))

    With labels on a grid of spacing ``d`` (NLI 0/1/2: ``d = 1``) a prediction within ``d/2`` of its label rounds
    to the right class, so the paper asks for ``x0 <= d/2``; ``d`` is not known here, so that bound is the caller's
    (``x0 >= 0`` is checked). ``k = 1, x0 = 0`` is exactly L1. Same as ``code/loss.py`` of ZBWpro/STS-Regression.

    At ``x == x0`` the value is 0 and the gradient with respect to ``pred`` is ``k * sign(pred - target)`` (the
    ``x0 <= x`` branch of Eq. 1, also what ``torch.clamp`` gives); inside the buffer it is 0, beyond it ``±k``.

    Args:
        pred: predicted scores, any shape (e.g. ``(N,)``), floating point.
        target: gold scores, same shape as ``pred`` (integer labels are cast to ``pred.dtype``).
        k: slope, ``> 0`` (paper Table 2: 2.5 for BERT, 1 for RoBERTa).
        x0: buffer half-width, ``>= 0`` (paper: 0.25).
        reduction: ``"mean"`` | ``"sum"`` | ``"none"`` (``"none"`` returns ``pred``'s shape).
    """
    check_number("k", k, low=0.0, low_inclusive=False)
    check_number("x0", x0, low=0.0, low_inclusive=True)
    pred, target = _scores(pred, target)
    x = (pred - target).abs()  # x = abs(prediction - label) >= 0
    loss = k * torch.clamp(x - x0, min=0.0)  # f(x) = max(0, k (x - x0))            (Eq. 1)
    return reduce_values(loss, reduction)


def smooth_k2(pred: Tensor, target: Tensor, k: float, x0: float, reduction: Reduction = "mean") -> Tensor:
    r"""Smooth K2 loss, STS-Regression Eq. 2: zero inside ``[0, x0)``, then ``k (x - x0)^2``.

    .. math::
        x = |\mathrm{prediction} - \mathrm{label}|, \qquad
        f(x) = \begin{cases} 0 & x < x_0 \\ k\,(x^2 - 2 x_0 x + x_0^2) = k\,(x - x_0)^2 & x_0 \le x \end{cases},
        \qquad \frac{\partial f}{\partial x} = 2k\,(x - x_0)\ [x \ge x_0]

    Value and derivative are continuous at ``x0`` (both 0 there). ``k = 1, x0 = 0`` is exactly MSE. Same as
    ``code/loss.py`` of ZBWpro/STS-Regression. The ``x0 <= d/2`` bound is the caller's, as for ``translated_relu``.

    Args:
        pred: predicted scores, any shape, floating point.
        target: gold scores, same shape as ``pred``.
        k: curvature, ``> 0`` (paper Table 2: 2 for BERT, 3 for RoBERTa; Section 4.2: 2-3.5 for Jina/Nomic).
        x0: buffer half-width, ``>= 0`` (paper: 0.25; 0.2 for Jina/Nomic).
        reduction: ``"mean"`` | ``"sum"`` | ``"none"`` (``"none"`` returns ``pred``'s shape).
    """
    check_number("k", k, low=0.0, low_inclusive=False)
    check_number("x0", x0, low=0.0, low_inclusive=True)
    pred, target = _scores(pred, target)
    x = (pred - target).abs()  # x = abs(prediction - label) >= 0
    loss = k * torch.clamp(x - x0, min=0.0) ** 2  # f(x) = k (x - x0)^2 for x >= x0, else 0   (Eq. 2)
    return reduce_values(loss, reduction)


def l1_loss(pred: Tensor, target: Tensor, reduction: Reduction = "mean") -> Tensor:
    """L1 loss ``|pred - target|`` (STS-Regression Table 1 baseline; ``translated_relu`` with k=1, x0=0)."""
    pred, target = _scores(pred, target)
    return reduce_values((pred - target).abs(), reduction)


def mse_loss(pred: Tensor, target: Tensor, reduction: Reduction = "mean") -> Tensor:
    """Squared error ``(pred - target)^2`` (STS-Regression Table 1 baseline; ``smooth_k2`` with k=1, x0=0).

    Also CCL's ``l_MSE`` (cosine of the encoder embeddings vs the label scaled to [0, 1]) and, under our reading,
    ``l_C-MSE`` (the same on the projected embeddings ``g(.)`` of the contrastive space; CCL Eq. 3).
    """
    pred, target = _scores(pred, target)
    return reduce_values((pred - target) ** 2, reduction)


def softmax_cross_entropy(logits: Tensor, labels: Tensor, reduction: Reduction = "mean") -> Tensor:
    r"""Sentence-BERT's classification objective: cross-entropy of ``softmax(W [u; v; |u - v|])``.

    .. math:: \ell = -\log \mathrm{softmax}(z)_{y}, \qquad \frac{\partial \ell}{\partial z} = \mathrm{softmax}(z) - e_y

    The head (``Linear(3 d, C)`` on the concatenation) belongs to the model; this is the loss on its logits. It is
    the "Cross Entropy" row of STS-Regression Table 1 (NLI with C = 3 classes; Sentence-BERT orders them
    contradiction 0, entailment 1, neutral 2, the regression framework 0/1/2 by similarity — the loss does not care).

    Args:
        logits: ``(N, C)`` floating point, ``C >= 2``.
        labels: ``(N,)`` integer class ids in ``[0, C)``.
        reduction: ``"mean"`` | ``"sum"`` | ``"none"`` (``"none"`` returns ``(N,)``).
    """
    check_reduction(reduction)
    check_matrix("logits", logits)
    if logits.shape[1] < 2:
        raise ValueError(f"logits must have at least 2 classes (columns), got shape {tuple(logits.shape)}")
    check_vector("labels", labels)
    if labels.dtype.is_floating_point or labels.dtype == torch.bool:
        raise ValueError(f"labels must be integer class ids, got dtype {labels.dtype}")
    if labels.shape[0] != logits.shape[0]:
        raise ValueError(f"labels must have one entry per row of logits ({logits.shape[0]}), got {labels.shape[0]}")
    if has_values(labels) and (labels.min() < 0 or labels.max() >= logits.shape[1]):
        raise ValueError(f"labels must lie in [0, {logits.shape[1]}), got min {labels.min()} max {labels.max()}")
    return F.cross_entropy(logits, labels.long(), reduction=reduction)  # -log softmax(z)_y


def clamp_to_label_range(pred: Tensor, low: float | None = None, high: float | None = None) -> Tensor:
    """STS-Regression Section 3.3: move predictions beyond the label range to the nearest boundary before the loss.

    A prediction of 3.57 for a gold 3 on a 0..3 scale is then loss-free. Clamped entries get zero gradient. The
    paper describes both ends; the official training scripts clamp only the lower end at 0
    (``prediction * (prediction >= 0)``, i.e. ``low=0, high=None``), which this reproduces in value and gradient.
    """
    check_floating("pred", pred)
    if low is not None and high is not None and low > high:
        raise ValueError(f"low must not exceed high, got low={low} and high={high}")
    if low is None and high is None:
        return pred  # no range given: nothing to clamp
    return torch.clamp(pred, min=low, max=high)


# ---- Pcc-tuning (Zhang & Li): InfoNCE and the Pearson loss ---------------------------------------------------


def info_nce(
    anchor: Tensor,
    positive: Tensor,
    hard_negative: Tensor | None = None,
    temperature: float = 0.05,
    reduction: Reduction = "mean",
) -> Tensor:
    r"""InfoNCE with in-batch negatives (Pcc-tuning Eq. 1) and optional hard negatives (Pcc-tuning Eq. 8).

    .. math::
        \ell_i = -\log \frac{e^{\cos(f(x_i), f(x_i^+))/\tau}}
        {\sum_{j=1}^N \left(e^{\cos(f(x_i), f(x_j^+))/\tau} + e^{\cos(f(x_i), f(x_j^-))/\tau}\right)}

    Logits ``[cos(anchor, positive^T) | cos(anchor, hard_negative^T)] / tau`` (N x N, or N x 2N), cross-entropy with
    the diagonal as labels — SimCSE's supervised loss and the stage-1 loss of ZBWpro/Pcc-tuning ``train.py`` (whose
    in-batch negatives are all-gathered across GPUs: pass the whole global batch here to match it). Without hard
    negatives this is also HiCL Eq. 1 (the global objective), with the other rows' *positive views* as negatives,
    as in SimCSE's code.

    Args:
        anchor: ``(N, D)`` embeddings ``f(x_i)``.
        positive: ``(N, D)`` embeddings ``f(x_i^+)``.
        hard_negative: optional ``(N, D)`` embeddings ``f(x_i^-)``; every row's hard negative is a negative for
            every anchor (Eq. 8 sums over ``j``).
        temperature: ``tau > 0`` (0.05 in SimCSE, PromptEOL, Pcc-tuning and HiCL).
        reduction: ``"mean"`` | ``"sum"`` | ``"none"`` (``"none"`` returns ``(N,)``).

    Raises:
        ValueError: on shape mismatches, ``temperature <= 0``, or a batch of one without hard negatives (its only
            logit is the positive, so the loss would be identically 0).
    """
    check_reduction(reduction)
    check_number("temperature", temperature, low=0.0, low_inclusive=False)
    check_matrix("anchor", anchor)
    check_same_shape("anchor", anchor, "positive", positive)
    candidates = positive
    if hard_negative is not None:
        check_same_shape("anchor", anchor, "hard_negative", hard_negative)
        candidates = torch.cat([positive, hard_negative], dim=0)  # columns j: x_j^+ then x_j^-
    if candidates.shape[0] < 2:
        raise ValueError(
            "info_nce needs at least one negative: got a batch of 1 (anchor) and no hard_negative, so the loss "
            "would be identically 0; use a batch of >= 2 or pass hard_negative"
        )
    logits = cosine_matrix(anchor, candidates) / temperature  # cos(f(x_i), f(x_j^±)) / tau
    labels = torch.arange(anchor.shape[0], device=anchor.device)  # the positive of row i is column i
    return F.cross_entropy(logits, labels, reduction=reduction)  # -log e^{pos}/sum_j e^{...}   (Eq. 1 / Eq. 8)


class ConstantBatchError(ValueError):
    """``pearson_loss`` on a batch whose cosines or gold scores are all equal: Pearson r is undefined there.

    ``argument`` is ``"x"`` (the cosines: e.g. a collapsed encoder) or ``"y"`` (the gold scores: e.g. a small batch
    drawn from one score bucket); ``n`` is the batch size and ``value`` the one value. ``stsnb.training.train.fit`` adds
    its step, epoch and batch to the message; a loop that would rather skip such batches catches it and counts them.
    """

    def __init__(self, argument: str, n: int, value: float) -> None:
        self.argument, self.n, self.value = argument, n, value
        what = "gold scores" if argument == "y" else "predicted similarities"
        super().__init__(
            f"pearson_loss: {argument} ({what}) has zero variance: all {n} values of the batch equal {value:g}, so "
            f"Pearson r (Eq. 9) is undefined; no loss or gradient is returned for such a batch"
        )


def pearson_loss(x: Tensor, y: Tensor, reduction: Reduction = "mean", *, official_code_bias: bool = False) -> Tensor:
    r"""Pcc-tuning's stage-2 loss, Eq. 9: one minus Pearson's r over the whole batch.

    .. math::
        r = \frac{\mathrm{cov}(X, Y)}{\sigma_X \sigma_Y}, \qquad \ell_p = 1 - r \in [0, 2]

    ``X`` = cosines of the pairs' embeddings, ``Y`` = gold scores. ``r`` is a statistic of the batch: there is no
    per-example value, and gradient accumulation over micro-batches is not the same loss (REFERENCE_NOTES A1/D11).
    So ``reduction`` must be ``"mean"`` and the result is that single value (``"sum"`` / ``"none"`` raise
    ``ValueError``). ``1 - r`` is invariant to ``a X + b`` for ``a > 0``: only the linear trend of cosines vs scores
    matters, not their scale.

    Constant batches (policy): when every gold score (or every cosine) of the batch is the same, ``r`` is 0/0.
    The paper does not say what happens then (the official ``tune.py`` formula divides 0 by 0: NaN). We raise
    ``ConstantBatchError`` (a ``ValueError``) naming the argument, the batch size and the value, rather than return
    NaN or a made-up 0: nothing is silently trained on or dropped. ``stsnb.training.train.fit`` re-raises it with its
    optimizer step, epoch and batch; a caller that prefers to skip such batches catches it and reports how many it
    skipped.

    Args:
        x: ``(N,)`` predicted similarities (cosines), floating point, ``N >= 2``.
        y: ``(N,)`` gold scores (any scale; cast to ``x.dtype``).
        reduction: must be ``"mean"`` (kept for a uniform call signature).
        official_code_bias: ``False`` (default) computes Eq. 9 exactly. ``True`` reproduces ZBWpro/Pcc-tuning
            ``tune.py``, whose covariance divides by ``N`` but whose standard deviations divide by ``N - 1``, i.e.
            ``r * (N - 1) / N`` (a 0.4% shrink at N = 232: the same optimum, a slightly smaller gradient).

    Raises:
        ConstantBatchError: ``x`` or ``y`` is constant over the batch (zero variance: ``r`` is undefined).
        ValueError: if shapes differ or are not 1-D, or ``N < 2``.
    """
    if reduction != "mean":
        check_reduction(reduction)
        raise ValueError(
            f"pearson_loss is a batch statistic (1 - Pearson r over the batch): reduction must be 'mean', got "
            f"{reduction!r}; there is no per-example value"
        )
    check_floating("x", x)
    check_vector("x", x)
    check_same_shape("x", x, "y", y)
    n = x.shape[0]
    if n < 2:
        raise ValueError(f"pearson_loss needs a batch of at least 2 pairs to define a correlation, got {n}")
    y = y.to(x.dtype)
    for name, values in (("x", x), ("y", y)):
        if has_values(values) and bool(values.max() == values.min()):
            raise ConstantBatchError(name, n, float(values[0]))
    xc, yc = x - x.mean(), y - y.mean()  # X - E[X], Y - E[Y]
    r = (xc * yc).sum() / (xc.norm() * yc.norm())  # r = cov(X, Y) / (sigma_X sigma_Y)   (Eq. 9)
    if official_code_bias:
        r = r * (n - 1) / n  # tune.py: mean((x - x̄)(y - ȳ)) / (std_unbiased(x) std_unbiased(y))
    return 1.0 - r  # l_p = -r + 1


# ---- CCL (Liu et al.) for C-STS: Quad, W-ACL, BCL -----------------------------------------------------------


# ---- HiCL (Wu et al.): local (segment) and global (sequence) contrast ---------------------------------------


def _check_sequence_ids(sequence_ids: Tensor, n_segments: int) -> None:
    if sequence_ids.dtype.is_floating_point or sequence_ids.dtype == torch.bool:
        raise ValueError(f"sequence_ids must be an integer tensor, got dtype {sequence_ids.dtype}")
    if sequence_ids.shape != (n_segments,):
        raise ValueError(
            f"sequence_ids must have shape ({n_segments},) (one sequence id per segment), got "
            f"{tuple(sequence_ids.shape)}"
        )
    if has_values(sequence_ids) and bool((sequence_ids < 0).any()):
        raise ValueError("sequence_ids must be >= 0")
    if has_values(sequence_ids) and sequence_ids.unique().numel() < 2:
        raise ValueError(
            "hicl_local_loss needs segments from at least 2 sequences: segments of the same sequence are neither "
            "positives nor negatives, so a single sequence leaves no negative"
        )


def hicl_local_loss(
    segments: Tensor,
    segments_positive: Tensor,
    sequence_ids: Tensor,
    temperature: float = 0.05,
    negative_weighting: NegativeWeighting = "summation",
    reduction: Reduction = "mean",
    same_sequence: SameSequence = "neither",
) -> Tensor:
    r"""HiCL's local (segment-level) contrastive objective, HiCL Eq. 2.

    .. math::
        \mathcal{L}_l = -\log \frac{e^{sim(h_{i,j}, h_{i,j}^+)/\tau}}
        {e^{sim(h_{i,j}, h_{i,j}^+)/\tau} + \sum_{k \ne i} w_k \sum_{m} e^{sim(h_{i,j}, h_{k,m})/\tau}}

    Segment ``j`` of sequence ``i`` has its second dropout view as positive; segments of *other* sequences are
    negatives; other segments of the *same* sequence are neither (masked out of the denominator). Decisions:

    - Negatives ``h_{k,*}`` are taken from the positive view (the columns of ``sim(h, h^+)``), as SimCSE's code
      builds its in-batch negatives; the paper does not say which view.
    - ``negative_weighting="summation"`` (Eq. 2, ``w_k = 1``, the paper's choice) or ``"averaging"`` (HiCL
      Appendix A.8: ``w_k = 1 / v_k``, ``v_k`` = number of segments of sequence ``k`` in the batch).
    - The batch mean is over all segments (the paper does not say; this weights a sequence by its segment count).
    - ``same_sequence`` (HiCL Section 5.2, Table 4): the other segments of segment ``(i, j)``'s own sequence are
      ``"neither"`` positives nor negatives (Eq. 2, the paper's choice), ``"negative"`` (terms of the denominator,
      weighted like any negative), or ``"positive"``: then they join the positive view in the numerator and the
      denominator, ``-log sum_{p in P} e^{s_p} / (sum_{p in P} e^{s_p} + sum_{neg} w e^{s_n})`` with ``P`` = the
      segment's dropout view and the positive views of its sibling segments (one term per anchor, the
      "summed-in-the-log" multi-positive form; the paper does not write the formula).

    Args:
        segments: ``(M, D)`` segment embeddings ``h_{i,j}`` of all sequences of the batch, stacked.
        segments_positive: ``(M, D)`` the same segments under another dropout mask, ``h_{i,j}^+``.
        sequence_ids: ``(M,)`` integer id of the sequence each segment was cut from; at least 2 distinct ids.
        temperature: ``tau > 0`` (0.05, following SimCSE).
        negative_weighting: ``"summation"`` | ``"averaging"``.
        reduction: ``"mean"`` | ``"sum"`` | ``"none"`` (``"none"`` returns ``(M,)``, one value per segment).
        same_sequence: ``"neither"`` | ``"negative"`` | ``"positive"`` (Table 4).
    """
    check_reduction(reduction)
    check_number("temperature", temperature, low=0.0, low_inclusive=False)
    if negative_weighting not in ("summation", "averaging"):
        raise ValueError(f"negative_weighting must be 'summation' or 'averaging', got {negative_weighting!r}")
    if same_sequence not in SAME_SEQUENCE_RELATIONS:
        raise ValueError(f"same_sequence must be one of {SAME_SEQUENCE_RELATIONS}, got {same_sequence!r}")
    check_matrix("segments", segments)
    check_same_shape("segments", segments, "segments_positive", segments_positive)
    _check_sequence_ids(sequence_ids, segments.shape[0])
    logits = cosine_matrix(segments, segments_positive) / temperature  # sim(h_{i,j}, h^+_{k,m}) / tau
    same_sequence_mask = sequence_ids[:, None] == sequence_ids[None, :]
    is_positive = torch.eye(len(sequence_ids), dtype=torch.bool, device=segments.device)
    log_w = torch.zeros_like(logits)
    if negative_weighting == "averaging":
        counts = torch.bincount(sequence_ids)[sequence_ids].to(logits.dtype)  # v_k of each column's sequence
        log_w = log_w - counts.log()[None, :]  # w_k = 1 / v_k
    siblings = same_sequence_mask & ~is_positive
    if same_sequence == "neither":
        log_w = log_w.masked_fill(siblings, -math.inf)  # same sequence: neither pos nor neg   (Eq. 2)
    positives = is_positive | siblings if same_sequence == "positive" else is_positive
    log_w = log_w.masked_fill(positives, 0.0)  # positives count once each, unweighted
    denominator = torch.logsumexp(logits + log_w, dim=1)
    numerator = torch.logsumexp(logits.masked_fill(~positives, -math.inf), dim=1)  # = the diagonal unless "positive"
    loss = denominator - numerator  # -log e^{pos} / (e^{pos} + sum_{k != i} w_k e^{neg})   (Eq. 2)
    return reduce_values(loss, reduction)


def hicl_loss(
    segments: Tensor,
    segments_positive: Tensor,
    sequence_ids: Tensor,
    sequences: Tensor,
    sequences_positive: Tensor,
    alpha: float,
    temperature: float = 0.05,
    negative_weighting: NegativeWeighting = "summation",
    reduction: Reduction = "mean",
    same_sequence: SameSequence = "neither",
) -> Tensor:
    r"""HiCL's overall objective (Section 3.2): :math:`\mathcal{L} = \alpha \mathcal{L}_l + (1 - \alpha) \mathcal{L}_g`.

    ``L_l`` = ``hicl_local_loss`` (Eq. 2, mean over segments) and ``L_g`` = ``info_nce`` without hard negatives
    (Eq. 1, mean over sequences) on the sequence embeddings ``h_i``. HiCL builds ``h_i`` as the length-weighted
    average of its segment embeddings (Section 3.1) — that pooling belongs to the model, so pass ``sequences`` /
    ``sequences_positive`` already pooled (from ``segments`` / ``segments_positive`` respectively). The two terms
    average over different sets (segments vs sequences), so there is no per-example value: ``reduction`` must be
    ``"mean"`` (call the two functions with ``reduction="none"`` for the parts).

    Args:
        segments, segments_positive, sequence_ids: as in ``hicl_local_loss``; ids index rows of ``sequences``.
        sequences, sequences_positive: ``(n, D)`` sequence embeddings ``h_i``, ``h_i^+``.
        alpha: weight of the local term in [0, 1] (HiCL tunes it in {0.01, 0.05, 0.15}).
        temperature: ``tau > 0`` shared by both terms (0.05).
        negative_weighting: of the local term, see ``hicl_local_loss``.
        reduction: must be ``"mean"``.
        same_sequence: of the local term (Table 4), see ``hicl_local_loss``.
    """
    if reduction != "mean":
        check_reduction(reduction)
        raise ValueError(
            f"hicl_loss mixes a mean over segments and a mean over sequences: reduction must be 'mean', got "
            f"{reduction!r}; use hicl_local_loss / info_nce with reduction='none' for per-element values"
        )
    check_number("alpha", alpha, low=0.0, low_inclusive=True, high=1.0)
    check_matrix("sequences", sequences)
    if has_values(sequence_ids) and sequence_ids.numel() and int(sequence_ids.max()) >= sequences.shape[0]:
        raise ValueError(
            f"sequence_ids index rows of sequences: every id must be < {sequences.shape[0]}, got max "
            f"{int(sequence_ids.max())}"
        )
    local = hicl_local_loss(
        segments, segments_positive, sequence_ids, temperature, negative_weighting, same_sequence=same_sequence
    )
    global_ = info_nce(sequences, sequences_positive, temperature=temperature)  # Eq. 1
    return alpha * local + (1.0 - alpha) * global_  # L = alpha L_l + (1 - alpha) L_g
