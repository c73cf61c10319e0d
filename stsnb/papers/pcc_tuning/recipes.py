"""The official training settings per backbone and template (ZBWpro/Pcc-tuning ``train.py`` / ``tune.py`` on 4
GPUs), for the ``paper`` profile (``protocol.Protocol`` with ``use_paper_recipe``). Batches are global (all GPUs,
gathered for the loss)."""

from __future__ import annotations

from dataclasses import dataclass

# the paper's rows -> Hub ids (Section 4.1: OPT-6.7b, LLaMA-7b, LLaMA-2-7b, Mistral-7b v0.1)
PAPER_BACKBONES: dict[str, str] = {
    "OPT-6.7b": "facebook/opt-6.7b",
    "LLaMA-7b": "huggyllama/llama-7b",
    "LLaMA2-7b": "meta-llama/Llama-2-7b-hf",
    "Mistral-7b": "mistralai/Mistral-7B-v0.1",
}
_STAGE1_BATCH = {"OPT-6.7b": 256, "LLaMA-7b": 248, "LLaMA2-7b": 248, "Mistral-7b": 240}
_STAGE2 = {  # (backbone, template) -> (epochs, global batch), tune.py:452-583
    ("OPT-6.7b", "sth"): (10, 216),
    ("OPT-6.7b", "sum"): (8, 200),
    ("OPT-6.7b", "eol"): (10, 232),
    ("LLaMA-7b", "sth"): (10, 232),
    ("LLaMA-7b", "sum"): (10, 200),
    ("LLaMA-7b", "eol"): (8, 192),
    ("LLaMA2-7b", "sth"): (10, 208),
    ("LLaMA2-7b", "sum"): (8, 216),
    ("LLaMA2-7b", "eol"): (10, 216),
    ("Mistral-7b", "sth"): (8, 240),
    ("Mistral-7b", "sum"): (8, 208),
    ("Mistral-7b", "eol"): (8, 216),
}


@dataclass(frozen=True)
class Recipe:
    """One backbone + template's official settings: both stages at lr 5e-4 with 100 warmup steps, 1 epoch of
    stage 1 on sentences cut to 32 tokens, stage 2 on sentences cut to 64."""

    stage1_batch: int
    stage2_epochs: int
    stage2_batch: int
    lr: float = 5e-4
    warmup_steps: int = 100
    stage1_epochs: int = 1
    stage1_cutoff: int = 32
    stage2_cutoff: int = 64


def paper_recipe(row: str, template: str = "sth") -> Recipe:
    """The official recipe of a paper row ("Mistral-7b", ...) and template ("sth", "eol", "sum")."""
    if (row, template) not in _STAGE2:
        raise KeyError(f"no official recipe for ({row!r}, {template!r}); rows {sorted(PAPER_BACKBONES)}")
    stage1 = 224 if (row, template) == ("Mistral-7b", "sth") else _STAGE1_BATCH[row]
    return Recipe(stage1, *_STAGE2[(row, template)])


def warmup_ratio(warmup_steps: int, steps: int) -> float:
    """The official fixed warmup (100 steps) as the ratio ``stsnb.training.train.TrainConfig`` takes."""
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    return min(1.0, warmup_steps / steps)
