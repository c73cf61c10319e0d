"""What notebook 20's training step by hand (Section 3.1, Figure 1; Eq. 2) needs of this paper; the step itself (the
same dropout masks before and after, the printed line) is ``stsnb.training.training_step``, shared with notebooks 10,
30, 40.

- ``step_optimizer``: AdamW over the model's trainable weights with Table 1's groups (the official layer-wise decay,
  the head's own learning rate), at the peak learning rates (``fit`` warms up to them from 0).
- ``scored_batch``: the predictions of a batch, clamped as in training (Section 3.3), and its labels.
- ``inside_buffer``: the share of predictions within ``x0`` of their label, where Translated ReLU (Eq. 1) and Smooth K2
  (Eq. 2) are zero and pass no gradient.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from ...training.param_groups import layerwise_param_groups
from .model import ClampMode, SiameseModel, clamp_prediction
from .training_data import TrainingPair


def step_optimizer(
    model: SiameseModel,
    lr: float,
    *,
    head_lr: float | None = None,
    lr_decay: float = 0.95,
    weight_decay: float = 0.01,
) -> torch.optim.AdamW:
    """AdamW with Table 1's parameter groups (``stsnb.training.param_groups.layerwise_param_groups``: the top layer at
    ``lr``,
    each layer below ``lr_decay`` times its upper neighbour, the head at ``head_lr``), as ``train_siamese`` builds
    them."""
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
