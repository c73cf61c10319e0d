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


@dataclass
class TemplateRun:
    """Everything one template's run produced: predictions before training, after stage 1, after each stage-2
    variant (from the same stage-1 adapter), and the transfer probe's results per model."""

    template: str
    untrained: evaluate.TaskPredictions
    stage1: StageRun
    stage2: dict[str, StageRun]
    transfer: dict[str, object]
    seconds: dict[str, float]


def run_template(
    backbone: str,
    template: str,
    triplets: Sequence[stsdata.Triplet],
    stage2_variants: dict[str, tuple[Sequence[stsdata.STSPair], TrainConfig]],
    stage1_config: TrainConfig,
    dev_pairs: Sequence[stsdata.STSPair] | None,
    scoring: Scoring,
    *,
    lora: models.LoraSettings,
    quantize_4bit: bool = False,
    max_length: int | None = None,
    stage1_cutoff: int = 32,
    stage2_cutoff: int = 64,
    temperature: float = 0.05,
    transfer_splits: tuple | None = None,
) -> TemplateRun:
    """One template end to end (a picklable unit for ``stsnb.distributed.run``): load the backbone with a fresh
    adapter, score it, stage 1, then every stage-2 variant (label -> (pairs, config)) from the stage-1 adapter.
    ``transfer_splits`` (train, dev, test of ``transfer.Labelled``) probes the untrained and the last model."""
    import time

    from . import transfer
    from .training import load_prompt_encoder

    seconds: dict[str, float] = {}
    tic = time.perf_counter()
    encoder = load_prompt_encoder(backbone, template, lora=lora, quantize_4bit=quantize_4bit, max_length=max_length)
    untrained = scoring.predictions(encoder)
    probes: dict[str, object] = {}
    if transfer_splits is not None:
        probes["untrained"] = transfer.probe(encoder, *transfer_splits)
    seconds["untrained"] = time.perf_counter() - tic
    tic = time.perf_counter()
    first, weights = stage1(
        encoder, triplets, stage1_config, dev_pairs, scoring, cutoff=stage1_cutoff, temperature=temperature
    )
    seconds["stage 1"] = time.perf_counter() - tic
    second = {}
    for label, (pairs, config) in stage2_variants.items():
        tic = time.perf_counter()
        second[label] = stage2_from(encoder, weights, pairs, config, dev_pairs, scoring, cutoff=stage2_cutoff)
        seconds[f"stage 2, {label}"] = time.perf_counter() - tic
        if transfer_splits is not None and label == next(iter(stage2_variants)):
            probes["stage 2"] = transfer.probe(encoder, *transfer_splits)
    return TemplateRun(template, untrained, first, second, probes, seconds)
