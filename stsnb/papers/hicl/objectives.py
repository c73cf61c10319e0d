"""HiCL Section 3.2 and the three baselines' global objectives, on embeddings.

- ``global_loss``: Eq. 1, InfoNCE over sequence embeddings with the other sequences' positive views as negatives
  (``stsnb.training.losses.info_nce``, unsupervised SimCSE when the positive is a second dropout view), plus
  ESimCSE's queue of momentum-encoder embeddings as extra negatives (``queue``) and SNCSE's bidirectional margin
  loss on the soft negative (``soft_negative``, weighted by ``bml_weight``).
- ``queue_info_nce``: Eq. 1 with extra negative columns (ESimCSE's momentum contrast).
- ``bml_loss``: SNCSE's bidirectional margin loss, ``ReLU(d + alpha) + ReLU(-d - beta)`` with
  ``d = cos(h, h_neg) - cos(h, h^+)`` (Sense-GVT/SNCSE ``simcse/models.py``; alpha 0.1, beta 0.3, lambda 1e-3 BERT,
  5e-4 RoBERTa).
- ``hicl_objective``: ``alpha * L_l + (1 - alpha) * L_g`` (Section 3.2) with ``L_l`` = Eq. 2
  (``stsnb.training.losses.hicl_local_loss``: same-sequence relation of Table 4, summation / averaging of Appendix A.8).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from ...training import losses
from ...training.losses import NegativeWeighting, SameSequence


def queue_info_nce(anchor: Tensor, positive: Tensor, queue: Tensor | None, temperature: float = 0.05) -> Tensor:
    r"""Eq. 1 with the rows of ``queue`` as extra negatives of every anchor (ESimCSE's momentum contrast).

    .. math:: \ell_i = -\log \frac{e^{s(h_i, h_i^+)/\tau}}{\sum_j e^{s(h_i, h_j^+)/\tau} + \sum_q e^{s(h_i, q)/\tau}}

    Without a queue (or an empty one) this is ``stsnb.training.losses.info_nce``. The queue holds no gradient.
    """
    if queue is None or queue.shape[0] == 0:
        return losses.info_nce(anchor, positive, temperature=temperature)
    if queue.dim() != 2 or queue.shape[1] != anchor.shape[1]:
        raise ValueError(f"queue must be (Q, {anchor.shape[1]}), got {tuple(queue.shape)}")
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    a = F.normalize(anchor, dim=-1)
    in_batch = a @ F.normalize(positive, dim=-1).T
    queued = a @ F.normalize(queue.detach().to(anchor), dim=-1).T
    logits = torch.cat([in_batch, queued], dim=1) / temperature
    return F.cross_entropy(logits, torch.arange(anchor.shape[0], device=anchor.device))


def bml_loss(anchor: Tensor, positive: Tensor, soft_negative: Tensor, alpha: float = 0.1, beta: float = 0.3) -> Tensor:
    r"""SNCSE's bidirectional margin loss (batch mean):
    :math:`\mathrm{ReLU}(\Delta + \alpha) + \mathrm{ReLU}(-\Delta - \beta)`,
    :math:`\Delta = \cos(h, h^{neg}) - \cos(h, h^{+})`: the soft negative should be less similar than the
    positive by at least ``alpha`` and at most ``beta``."""
    if not 0 <= alpha <= beta:
        raise ValueError(f"need 0 <= alpha <= beta, got alpha={alpha}, beta={beta}")
    delta = F.cosine_similarity(anchor, soft_negative, dim=-1) - F.cosine_similarity(anchor, positive, dim=-1)
    return (torch.relu(delta + alpha) + torch.relu(-delta - beta)).mean()


@dataclass(frozen=True)
class ObjectiveSettings:
    """Every knob of the objective. Paper values beside each: Section 3.2, Tables 4 and 7, Appendix A.8."""

    alpha: float = 0.05  # weight of the local loss, tuned in {0.01, 0.05, 0.15} (Section 3.2, Table 13)
    temperature: float = 0.05  # tau, "set to 0.05 following SimCSE" (Section 2)
    same_sequence: SameSequence = "neither"  # Table 4: neither (the paper's) | negative | positive
    negative_weighting: NegativeWeighting = "summation"  # Appendix A.8: summation (Eq. 2) | averaging
    bml_weight: float = 1e-3  # SNCSE's lambda (1e-3 BERT, 5e-4 RoBERTa in its code)
    bml_alpha: float = 0.1  # SNCSE's alpha
    bml_beta: float = 0.3  # SNCSE's beta

    def __post_init__(self) -> None:
        if not 0.0 <= self.alpha <= 1.0:
            raise ValueError(f"alpha must be in [0, 1], got {self.alpha}")
        if self.temperature <= 0:
            raise ValueError(f"temperature must be > 0, got {self.temperature}")
        if self.bml_weight < 0:
            raise ValueError(f"bml_weight must be >= 0, got {self.bml_weight}")


def global_loss(
    sequences: Tensor,
    sequences_positive: Tensor,
    settings: ObjectiveSettings,
    *,
    queue: Tensor | None = None,
    soft_negative: Tensor | None = None,
) -> Tensor:
    """The baseline's own objective ``L_g`` on sequence embeddings: Eq. 1 (+ ESimCSE queue) (+ SNCSE's BML)."""
    loss = queue_info_nce(sequences, sequences_positive, queue, settings.temperature)
    if soft_negative is not None:
        bml = bml_loss(sequences, sequences_positive, soft_negative, settings.bml_alpha, settings.bml_beta)
        loss = loss + settings.bml_weight * bml
    return loss


def hicl_objective(
    segments: Tensor,
    segments_positive: Tensor,
    sequence_ids: Tensor,
    global_term: Tensor,
    settings: ObjectiveSettings,
) -> tuple[Tensor, Tensor]:
    """``(alpha * L_l + (1 - alpha) * L_g, L_l)``, Section 3.2, with ``L_l`` = Eq. 2 over the segments.

    ``global_term`` is the baseline's ``L_g`` (``global_loss``). A batch whose segments all come from one sequence
    has no local negative; then ``L_l`` is undefined and raises (``stsnb.training.losses.hicl_local_loss``).
    """
    local = losses.hicl_local_loss(
        segments,
        segments_positive,
        sequence_ids.to(segments.device),  # built on the CPU with the segments (segments.build_segments)
        settings.temperature,
        settings.negative_weighting,
        same_sequence=settings.same_sequence,
    )
    return settings.alpha * local + (1.0 - settings.alpha) * global_term, local
