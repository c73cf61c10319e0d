"""One training step of the Siamese regression model by hand (Section 3.1, Figure 1; Eq. 2): what ``stsnb.train.fit``
repeats in every Table 1 run, small enough for notebook 20 to show.

- ``step_optimizer``: AdamW over the model's trainable weights with Table 1's groups (the official layer-wise decay,
  the head's own learning rate), at the peak learning rates (``fit`` warms up to them from 0).
- ``scored_batch``: the predictions of a batch, clamped as in training (Section 3.3), and its labels.
- ``inside_buffer``: the share of predictions within ``x0`` of their label, where Translated ReLU (Eq. 1) and Smooth K2
  (Eq. 2) are zero and pass no gradient; ``step_record`` and ``step_line``: what one step did, kept and printed.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from ...train import layerwise_param_groups
from .model import ClampMode, SiameseModel, clamp_prediction
from .recipes import LossSpec
from .training_data import TrainingPair


def step_optimizer(
    model: SiameseModel,
    lr: float,
    *,
    head_lr: float | None = None,
    lr_decay: float = 0.95,
    weight_decay: float = 0.01,
) -> torch.optim.AdamW:
    """AdamW with Table 1's parameter groups (``stsnb.train.layerwise_param_groups``: the top layer at ``lr``, each
    layer below ``lr_decay`` times its upper neighbour, the head at ``head_lr``), as ``train_siamese`` builds them."""
    return torch.optim.AdamW(layerwise_param_groups(model, lr, lr_decay, weight_decay, head_lr), lr=lr)


def scored_batch(
    model: SiameseModel, batch: Sequence[TrainingPair], label_range: tuple[float, float], clamp: ClampMode = "none"
) -> tuple[Tensor, Tensor]:
    """The head's predictions ``y_hat`` for ``batch`` (Figure 1), clamped as in training (Section 3.3), and the
    labels ``y``: what a regression loss is applied to."""
    output = model([p.sent1 for p in batch], [p.sent2 for p in batch])
    return clamp_prediction(output, label_range, clamp), torch.tensor([p.target for p in batch], device=output.device)


def inside_buffer(prediction: Tensor, target: Tensor, x0: float) -> float:
    """Share of ``prediction`` within ``x0`` of ``target`` (``|y_hat - y| < x0``): Eq. 1 and 2 give those pairs zero
    loss and zero gradient, the buffer of Section 3.2. NaN for an empty batch."""
    if prediction.shape != target.shape:
        raise ValueError(f"prediction and target shapes differ: {tuple(prediction.shape)} and {tuple(target.shape)}")
    if prediction.numel() == 0:
        return float("nan")
    return float(((prediction.detach() - target).abs() < x0).float().mean())


def step_record(
    loss: LossSpec, prediction: Tensor, target: Tensor, before: float, after: float, seconds: float
) -> dict:
    """What one step did, for ``metrics.json``: the loss before and after it on the same batch, the share of the
    batch inside the buffer before it (``inside_buffer`` at ``loss.x0``), the pairs and the seconds it took."""
    return {
        "loss": loss.label(),
        "pairs": int(target.numel()),
        "loss_before": float(before),
        "loss_after": float(after),
        "inside_buffer": inside_buffer(prediction, target, loss.x0),
        "seconds": round(float(seconds), 1),
    }


def step_line(record: dict) -> str:
    """``step_record`` as one printed sentence."""
    change = record["loss_after"] - record["loss_before"]
    return (
        f"{record['loss']} on {record['pairs']} training pairs: loss {record['loss_before']:.3f} before the step, "
        f"{record['loss_after']:.3f} after it ({change:+.3f}); {record['inside_buffer']:.0%} of the pairs were inside "
        f"the buffer before it (no gradient); {record['seconds']:.0f} s"
    )
