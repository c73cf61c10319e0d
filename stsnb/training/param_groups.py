"""AdamW parameter groups: the BERT convention (no weight decay on biases and normalisation weights) and
STS-Regression's layer-wise learning-rate decay (its official ``train-*.py``, REFERENCE_NOTES A2)."""

from __future__ import annotations

import re

from torch import nn

_LAYER = re.compile(r"\.layers?\.(\d+)\.")


def default_param_groups(model: nn.Module, weight_decay: float) -> list[dict]:
    """Trainable parameters, no weight decay on biases and normalization weights (BERT convention)."""
    decay, no_decay = [], []
    for name, parameter in model.named_parameters():
        if not parameter.requires_grad:
            continue
        (no_decay if name.endswith("bias") or "norm" in name.lower() else decay).append(parameter)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def layerwise_param_groups(
    model: nn.Module,
    lr: float,
    decay: float = 0.95,
    weight_decay: float = 0.01,
    head_lr: float | None = None,
    head_prefix: str = "head.",
) -> list[dict]:
    """AdamW groups with layer-wise LR decay (STS-Regression's official ``train-*.py``, REFERENCE_NOTES A2).

    The top transformer layer gets ``lr``, each layer below it ``decay`` times its upper neighbour's (BERT-base:
    layer 0 at ``lr * 0.95**11``). Parameters outside the numbered layers (embeddings, the head) stay at ``lr``,
    as in the official code, unless ``head_lr`` is given: then the parameters named ``head_prefix...`` get it (a new,
    randomly initialised head that has tens of steps instead of the paper's thousands needs a larger step). No
    weight decay on biases and normalisation weights. ``decay=1`` is plain AdamW.
    """
    named = [(name, p) for name, p in model.named_parameters() if p.requires_grad]
    layers = [int(m.group(1)) for name, _ in named if (m := _LAYER.search(name))]
    top = max(layers, default=0)
    groups: dict[tuple[float, float], list[nn.Parameter]] = {}
    for name, parameter in named:
        match = _LAYER.search(name)
        group_lr = lr * decay ** (top - int(match.group(1))) if match else lr
        if head_lr is not None and name.startswith(head_prefix):
            group_lr = head_lr
        no_decay = name.endswith("bias") or "norm" in name.lower()
        groups.setdefault((group_lr, 0.0 if no_decay else weight_decay), []).append(parameter)
    return [{"params": params, "lr": g_lr, "weight_decay": wd} for (g_lr, wd), params in groups.items()]
