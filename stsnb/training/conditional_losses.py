"""The losses of conditional STS (CCL, Section 3), on plain tensors, each beside its equation.

| function | paper, equation | inputs |
|---|---|---|
| ``quad_loss`` | CCL Eq. 1 / Eq. 4 (C-STS "Quad" loss, princeton-nlp/c-sts) | cosines |
| ``w_acl`` | CCL Eq. 9 | cosines and labels |
| ``bcl``, ``bcl_weights`` | CCL Eq. 10-12 and Eq. 11 | embeddings and labels |

The conventions (reductions, checked inputs, cosines) are those of ``stsnb.training.losses``, whose checks these
functions share.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .losses import (
    Reduction,
    check_floating,
    check_matrix,
    check_number,
    check_reduction,
    check_same_shape,
    check_vector,
    cosine_matrix,
    has_values,
    reduce_values,
)


def _check_pair_vectors(name_a: str, a: Tensor, name_b: str, b: Tensor) -> None:
    check_floating(name_a, a)
    check_vector(name_a, a)
    check_same_shape(name_a, a, name_b, b)


def quad_loss(cos_pos: Tensor, cos_neg: Tensor, margin: float = 1.0, reduction: Reduction = "mean") -> Tensor:
    r"""The C-STS quadruplet ("Quad") loss, CCL Eq. 1 / Eq. 4 (Deshpande et al. 2023; QuMSE's contrastive part).

    .. math::
        \mathrm{Quad} = \max\left(\lambda + \cos(h_1^{neg}, h_2^{neg}) - \cos(h_1^{pos}, h_2^{pos}),\ 0\right)

    ``cos_pos[i]`` is the cosine of pair ``i`` (s1, s2) under its higher-similarity condition, ``cos_neg[i]`` of the
    same pair under its lower one. princeton-nlp/c-sts ``QuadrupletLoss`` writes it with the distance ``1 - cos``:
    ``clamp(margin + (1 - cos_pos) - (1 - cos_neg), 0)``, identical; its margin is 1.0 and it takes the mean.

    Args:
        cos_pos, cos_neg: ``(N,)`` cosines, floating point.
        margin: ``lambda >= 0`` (1.0 in c-sts and CCL's account of QuMSE).
        reduction: ``"mean"`` | ``"sum"`` | ``"none"`` (``"none"`` returns ``(N,)``).
    """
    check_number("margin", margin, low=0.0, low_inclusive=True)
    _check_pair_vectors("cos_pos", cos_pos, "cos_neg", cos_neg)
    loss = torch.clamp(margin + cos_neg - cos_pos, min=0.0)  # max(lambda + cos_neg - cos_pos, 0)   (Eq. 1 / 4)
    return reduce_values(loss, reduction)


def w_acl(
    cos_pos: Tensor, cos_neg: Tensor, label_pos: Tensor, label_neg: Tensor, reduction: Reduction = "mean"
) -> Tensor:
    r"""Weighted Adaptive Contrastive Loss, CCL Eq. 9 (FDL Eq. 5 + RDL Eq. 6 = ACL Eq. 8, weighted by the gap).

    .. math::
        l_{W\text{-}ACL} = (l_{pos} - l_{neg}) \cdot
        \left| l_{pos} - l_{neg} + \cos(h_1^{neg}, h_2^{neg}) - \cos(h_1^{pos}, h_2^{pos}) \right|

    Pulls the cosine gap ``cos_pos - cos_neg`` towards the label gap ``l_pos - l_neg`` from either side (a Quad
    loss whose margin is the label gap, plus its mirror image), weighting pairs by how different their two
    conditions are. Labels must be on the cosine's scale: c-sts scales C-STS's 1..5 to ``(l - 1) / 4`` in [0, 1]
    (CCL Table 1 shows such labels). The paper assumes ``l_pos >= l_neg`` (Section 3.1); a pair violating it
    would get a negative weight (the loss would push the gap away), so it raises. Batch mean by default (the paper
    writes the per-sample term only).

    Args:
        cos_pos, cos_neg: ``(N,)`` cosines of the same pair under its positive / negative condition.
        label_pos, label_neg: ``(N,)`` their gold scores (cast to ``cos_pos.dtype``), ``label_pos >= label_neg``.
        reduction: ``"mean"`` | ``"sum"`` | ``"none"`` (``"none"`` returns ``(N,)``).
    """
    check_reduction(reduction)
    _check_pair_vectors("cos_pos", cos_pos, "cos_neg", cos_neg)
    check_same_shape("cos_pos", cos_pos, "label_pos", label_pos)
    check_same_shape("cos_pos", cos_pos, "label_neg", label_neg)
    label_pos, label_neg = label_pos.to(cos_pos.dtype), label_neg.to(cos_pos.dtype)
    if has_values(label_pos, label_neg) and bool((label_pos < label_neg).any()):
        raise ValueError("label_pos must be >= label_neg for every pair (CCL Section 3.1: l_pos >= l_neg)")
    gap = label_pos - label_neg  # l_pos - l_neg: target gap and confidence weight
    loss = gap * (gap + cos_neg - cos_pos).abs()  # (l_pos - l_neg) |l_pos - l_neg + cos_neg - cos_pos|   (Eq. 9)
    return reduce_values(loss, reduction)


def bcl_weights(labels: Tensor, sigma: float) -> Tensor:
    r"""The negative weights alpha of BCL, CCL Eq. 11, as an ``(N, N)`` matrix (row = anchor ``i``, column ``j``).

    .. math::
        \alpha_{ij} = \begin{cases} 0 & i = j,\ l_i \ge \sigma \quad\text{(false negative: excluded)} \\
        1 & i \ne j \quad\text{(general negative)} \\
        1 - l_i & i = j,\ l_i < \sigma \quad\text{(hard negative, down-weighted by its similarity)} \end{cases}

    ``l_i`` is the gold score of (s1_i, s2_i) under condition c_i, scaled to [0, 1] (c-sts: ``(l - 1) / 4``), so
    ``sigma`` lives in [0, 1] too (CCL Table 5 tries 0, 0.25, 0.5, 0.75, 1; ``sigma = 0`` drops every same-pair
    negative). Both are validated to catch unscaled 1..5 labels.
    """
    check_number("sigma", sigma, low=0.0, low_inclusive=True, high=1.0)
    check_vector("labels", labels)
    if has_values(labels) and bool((labels < 0).any() or (labels > 1).any()):
        raise ValueError(
            f"labels must be scaled to [0, 1] (e.g. (l - 1) / 4 for C-STS's 1..5), got min {labels.min()} "
            f"max {labels.max()}"
        )
    if not labels.is_floating_point():
        labels = labels.to(torch.get_default_dtype())
    n = labels.shape[0]
    alpha = torch.ones(n, n, dtype=labels.dtype, device=labels.device)  # i != j: alpha = 1
    same_pair = torch.where(labels >= sigma, torch.zeros_like(labels), 1.0 - labels)  # i = j: 0 | 1 - l
    alpha[torch.arange(n), torch.arange(n)] = same_pair.detach()
    return alpha


def bcl(
    anchor: Tensor,
    positive: Tensor,
    negatives: Tensor,
    labels: Tensor,
    sigma: float,
    temperature: float,
    reduction: Reduction = "mean",
) -> Tensor:
    r"""Balanced Contrastive Loss, CCL Eq. 10-12 (per anchor, Eq. 12; averaged over the batch).

    .. math::
        \ell_i = -\log \frac{e^{\cos_{i,i}^{+}/\tau}}{e^{\cos_{i,i}^{+}/\tau} + \sum_{j=1}^N \alpha_{ij}\,
        e^{\cos_{i,j}/\tau}}, \qquad
        \cos_{i,i}^{+} = \cos(g(f(s_1^i, c^i)), g(f'(s_1^i, c^i))), \quad
        \cos_{i,j} = \cos(g(f(s_1^i, c^i)), g(f(s_2^j, c^j)))

    The positive is a second dropout view of the same (sentence, condition); the negatives are the *second*
    sentences of every row of the batch, the one of the same row (same condition, ``i = j``) weighted by Eq. 11
    (``bcl_weights``). Decisions where the paper is open (CCL has no released code):

    - Eq. 10 writes ``-log sum_i (ratio_i)``; we read it as the usual mean over anchors of ``-log ratio_i``
      (Eq. 12 is the per-anchor term, and the gradient analysis Eq. 13-15 is per anchor).
    - The paper overloads ``cos_{i,i}`` for the positive and for the ``j = i`` negative; here they are
      ``positive`` and ``negatives[i]``.
    - ``g`` (a projection head?) is unspecified: pass embeddings already mapped by your ``g``.
    - ``temperature`` divides the cosine as written in Eq. 10. CCL Table 2 reports tau in 3..10, which makes the
      softmax nearly uniform (logits within ±1/tau); whether the code divided or multiplied is unknown.
    - Only ``s1`` is an anchor (the paper does not symmetrise); labels are constants (no gradient through alpha).

    Args:
        anchor: ``(N, D)`` ``g(f(s1_i, c_i))``.
        positive: ``(N, D)`` ``g(f'(s1_i, c_i))``, the same inputs under another dropout mask.
        negatives: ``(N, D)`` ``g(f(s2_j, c_j))``.
        labels: ``(N,)`` gold score of row ``i`` in [0, 1].
        sigma: threshold of Eq. 11 in [0, 1] (CCL Table 2: 0.25-1).
        temperature: ``tau > 0``.
        reduction: ``"mean"`` | ``"sum"`` | ``"none"`` (``"none"`` returns ``(N,)``).
    """
    check_reduction(reduction)
    check_number("temperature", temperature, low=0.0, low_inclusive=False)
    check_matrix("anchor", anchor)
    check_same_shape("anchor", anchor, "positive", positive)
    check_same_shape("anchor", anchor, "negatives", negatives)
    if labels.shape != anchor.shape[:1]:
        raise ValueError(f"labels must have shape ({anchor.shape[0]},) (one per row), got {tuple(labels.shape)}")
    alpha = bcl_weights(labels, sigma).to(anchor.dtype)  # Eq. 11
    pos = (F.normalize(anchor, dim=-1) * F.normalize(positive, dim=-1)).sum(-1) / temperature  # cos+_{i,i} / tau
    neg = cosine_matrix(anchor, negatives) / temperature  # cos_{i,j} / tau
    # log(e^{pos} + sum_j alpha_ij e^{neg_ij}) as one logsumexp; alpha = 0 becomes log-weight -inf (no term).
    log_alpha = torch.log(alpha)
    denominator = torch.logsumexp(torch.cat([pos[:, None], neg + log_alpha], dim=1), dim=1)
    loss = denominator - pos  # -log e^{pos} / (e^{pos} + sum_j alpha_ij e^{cos_ij / tau})   (Eq. 12)
    return reduce_values(loss, reduction)
