"""The record one training run leaves (``RunOutcome``): ``training`` writes it, ``results`` and ``protocol`` read it;
``histories_by_method`` groups the runs' training histories for the notebook's training curves.

A module of its own so that training and the claims meet here rather than importing each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ...training.config import TrainResult


@dataclass
class RunOutcome:
    """One trained model's record: its STS predictions and scores, the dev curve, the loss parts, the times:
    ``seconds`` for everything (loading, training, dev and test evaluation), ``train_seconds`` for the optimizer
    steps alone (``fit`` without its dev evaluations)."""

    method: str
    hicl: bool
    seed: int
    predictions: dict
    scores: dict[str, float]
    result: TrainResult
    losses: list[dict]
    seconds: float
    train_seconds: float = float("nan")
    longest_example: int | None = None  # sentence tokens of the longest training example after truncation

    @property
    def dev_curve(self) -> list[tuple[int, float]]:
        return [(h["step"], h["dev"]) for h in self.result.history if "dev" in h]


def histories_by_method(outcomes: Mapping[tuple[str, str, int], RunOutcome]) -> dict[str, dict[str, list[dict]]]:
    """The training histories (``stsnb.training.train`` rows: the loss by step, the STS-B dev score by evaluation) of
    the notebook's runs, keyed ``(method, "baseline" | "+HiCL", seed)``, grouped by method and labelled "arm seed N":
    one figure per method (``stsnb.teaching.training_curves``), so that each method's curves keep their own scale
    (SNCSE's dev score sits far below the others')."""
    grouped: dict[str, dict[str, list[dict]]] = {}
    for (method, arm, seed), outcome in outcomes.items():
        grouped.setdefault(method, {})[f"{arm} seed {seed}"] = list(outcome.result.history)
    return grouped
