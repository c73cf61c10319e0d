"""Pcc-tuning end to end on one backbone and template: the untrained prompt embedding, stage 1, then stage 2 from
the stage-1 adapter (as the official ``tune.py`` loads it), each scored on the same test pairs.

Stage 2 may run several times from the same stage-1 adapter (Table 5's batch sizes; with and without the pairs
shared with the test sets): :func:`stage2_from` puts the stage-1 weights back before each run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from ... import data as stsdata
from ... import evaluate, models
from ...train import TrainConfig, TrainResult, trainable_state
from .training import train_stage

Scoring = evaluate.EvalPairs  # the test pairs every model of the notebook is scored on


@dataclass
class StageRun:
    """One stage's training history and the predictions after it."""

    result: TrainResult
    predictions: evaluate.TaskPredictions

    @property
    def scores(self) -> dict[str, float]:
        return evaluate.spearman_scores(self.predictions)


def stage1(
    encoder: models.SentenceEncoder,
    triplets: Sequence[stsdata.Triplet],
    config: TrainConfig,
    dev_pairs: Sequence[stsdata.STSPair] | None,
    scoring: Scoring,
    *,
    cutoff: int = 32,
    temperature: float = 0.05,
) -> tuple[StageRun, dict[str, torch.Tensor]]:
    """Stage 1 (Eq. 8) on ``encoder``'s adapter; returns the run and a copy of the adapter weights after it."""
    result = train_stage(encoder, 1, triplets, config, dev_pairs=dev_pairs, cutoff=cutoff, temperature=temperature)
    return StageRun(result, scoring.predictions(encoder)), trainable_state(encoder)


def stage2_from(
    encoder: models.SentenceEncoder,
    stage1_weights: dict[str, torch.Tensor],
    pairs: Sequence[stsdata.STSPair],
    config: TrainConfig,
    dev_pairs: Sequence[stsdata.STSPair] | None,
    scoring: Scoring,
    *,
    cutoff: int = 64,
) -> StageRun:
    """Stage 2 (Eq. 9) from the stage-1 adapter weights (put back first, so runs from the same stage 1 compare)."""
    missing = set(stage1_weights) - set(encoder.state_dict())
    if missing:
        raise ValueError(f"the stage-1 weights do not fit this encoder: {sorted(missing)[:3]}")
    encoder.load_state_dict(stage1_weights, strict=False)
    result = train_stage(encoder, 2, pairs, config, dev_pairs=dev_pairs, cutoff=cutoff)
    return StageRun(result, scoring.predictions(encoder))
