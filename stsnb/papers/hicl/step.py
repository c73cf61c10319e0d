"""One HiCL training step by hand (Section 3.2, Eq. 1-2): the loss of a batch with the dropout masks drawn from a seed,
so that the loss before an optimizer step and the loss after it, on the same batch, differ by the step alone.

SimCSE's positive is a second dropout pass, so two calls of the same model on the same batch give different losses;
``seeded_loss`` seeds torch (and the model's own random source, ESimCSE's word repetition) before the forward pass, and
the two calls draw the same masks. ESimCSE's momentum queue is state the call changes (it pushes the batch), so for
ESimCSE the second call also sees a fuller queue: use SimCSE to show a step. ``step_record`` and ``step_line`` keep and
print what the step did.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

import torch

from .training import ContrastiveModel, TrainingExample


def seeded_loss(
    model: ContrastiveModel, batch: Sequence[TrainingExample], seed: int, *, grad: bool = True
) -> torch.Tensor:
    """``model.loss(batch)`` (``alpha L_l + (1 - alpha) L_g`` under HiCL, Eq. 1 alone without) after seeding torch
    and the model's random source with ``seed``; ``model.last_parts`` then holds its terms. ``grad=False``: without
    building the graph (the loss after a step)."""
    torch.manual_seed(seed)
    model.rng = random.Random(seed)
    with torch.set_grad_enabled(grad):
        return model.loss(batch)


def step_record(before: float, after: float, terms: Mapping[str, float], sentences: int, seconds: float) -> dict:
    """What one step did, for ``metrics.json``: the loss before and after it on the same batch and dropout masks,
    the terms of the loss before it (``terms``: ``global`` L_g, ``local`` L_l, ``alpha``), the sentences and seconds."""
    return {
        "loss_before": float(before),
        "loss_after": float(after),
        **{name: float(value) for name, value in terms.items()},
        "sentences": int(sentences),
        "seconds": round(float(seconds), 1),
    }


def step_line(record: Mapping[str, float]) -> str:
    """``step_record`` as one printed sentence (the local term only where the loss has one)."""
    change = record["loss_after"] - record["loss_before"]
    terms = f"L_g {record['global']:.4f}"
    if "local" in record:
        terms += f", L_l {record['local']:.4f}, alpha {record.get('alpha', float('nan')):g}"
    return (
        f"one step on {record['sentences']} training sentences: loss {record['loss_before']:.4f} before it ({terms}), "
        f"{record['loss_after']:.4f} after it ({change:+.4f}) on the same batch and dropout masks; "
        f"{record['seconds']:.0f} s"
    )
