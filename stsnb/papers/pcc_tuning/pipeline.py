"""Pcc-tuning end to end on one backbone and template: the untrained prompt embedding, stage 1, then stage 2 from
the stage-1 adapter (as the official ``tune.py`` loads it), each scored on the same test pairs.

Stage 2 may run several times from the same stage-1 adapter (Table 5's batch sizes; with and without the pairs
shared with the test sets; the control, stage 2's pairs under stage 1's objective): :func:`stage2_from` puts the
stage-1 weights back before each run. One call of :func:`run_template` is one training seed: the seed fixes the
adapter's initialisation (before loading) and every stage's batch order (``TrainConfig.seed``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from ... import data as stsdata
from ...evaluation import evaluate
from ...models import loading as models
from ...training import distributed
from ...training.checkpoints import trainable_state
from ...training.config import TrainConfig, TrainResult
from . import corpora
from .protocol import Scorer, scores_unquantized
from .training import train_stage

Scoring = evaluate.EvalPairs  # the test pairs every model of the notebook is scored on
Scores = evaluate.EvalPairs | Scorer  # anything with ``predictions(encoder)``: the pairs, or a protocol.Scorer


@dataclass
class StageRun:
    """One stage's training history and the predictions after it."""

    result: TrainResult
    predictions: evaluate.TaskPredictions

    @property
    def scores(self) -> dict[str, float]:
        return evaluate.spearman_scores(self.predictions)

    @property
    def kept_step(self) -> int:
        """The step whose weights were kept: dev selection's best step, the last one without selection."""
        return int(self.result.steps if self.result.best_step is None else self.result.best_step)

    def summary(self) -> str:
        """ "best dev 60.90 @ step 4/4, adapter moved 2.31% (relative L2), largest single weight change 1.2e-03":
        what selection kept, how far the kept adapter lies from its start (``TrainResult.relative_change``, a
        distance) and the largest change of one weight (``weight_change``: with Adam about the sum of the learning
        rates over the kept steps, whatever the run; it says only that the run stepped)."""
        dev = "no dev selection" if self.result.best_score is None else f"best dev {self.result.best_score:.2f}"
        change, moved = self.result.weight_change, self.result.relative_change
        distance = "" if moved is None else f"adapter moved {100 * moved:.2f}% (relative L2), "
        return (
            f"{dev} @ step {self.kept_step}/{self.result.steps}, {distance}largest single weight change "
            f"{'n/a' if change is None else f'{change:.1e}'}"
        )


@dataclass(frozen=True)
class Stage2Variant:
    """One stage-2 run from the stage-1 adapter: its pairs, its training settings and its objective, ``"pearson"``
    (Eq. 9, the paper's) or ``"infonce"`` (the control: Eq. 8's form, pairs scored >= ``positive_score`` as
    positives, ``training.scored_pairs_info_nce``)."""

    pairs: Sequence[stsdata.STSPair]
    config: TrainConfig
    objective: str = "pearson"
    positive_score: float = 4.0


def stage1(
    encoder: models.SentenceEncoder,
    triplets: Sequence[stsdata.Triplet],
    config: TrainConfig,
    dev_pairs: Sequence[stsdata.STSPair] | None,
    scoring: Scores,
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
    scoring: Scores,
    *,
    cutoff: int = 64,
    objective: str = "pearson",
    positive_score: float = 4.0,
    temperature: float = 0.05,
) -> StageRun:
    """Stage 2 from the stage-1 adapter weights (put back first, so runs from the same stage 1 compare): Eq. 9, or
    with ``objective="infonce"`` the control (``training.train_stage``)."""
    missing = set(stage1_weights) - set(encoder.state_dict())
    if missing:
        raise ValueError(f"the stage-1 weights do not fit this encoder: {sorted(missing)[:3]}")
    encoder.load_state_dict(stage1_weights, strict=False)
    result = train_stage(
        encoder,
        2,
        pairs,
        config,
        dev_pairs=dev_pairs,
        cutoff=cutoff,
        temperature=temperature,
        objective=objective,
        positive_score=positive_score,
    )
    return StageRun(result, scoring.predictions(encoder))


@dataclass
class TemplateRun:
    """Everything one template's run on one training seed produced: predictions before training (None when not
    asked for: with LoRA's B at 0 the untrained model is the same for every seed), after stage 1, after each stage-2
    variant (from the same stage-1 adapter), and the transfer probe's results per model."""

    template: str
    untrained: evaluate.TaskPredictions | None
    stage1: StageRun
    stage2: dict[str, StageRun]
    transfer: dict[str, object]
    seconds: dict[str, float]
    seed: int = 0


class _NotScored:
    """The scorer of every process but the main one: the test sets are scored once, on the main process."""

    def predictions(self, encoder) -> None:
        return None


def run_template(
    backbone: str,
    template: str,
    triplets: Sequence[stsdata.Triplet],
    stage2_variants: dict[str, Stage2Variant],
    stage1_config: TrainConfig,
    dev_pairs: Sequence[stsdata.STSPair] | None,
    scoring: Scoring,
    *,
    lora: models.LoraSettings,
    quantize_4bit: bool = False,
    gradient_checkpointing: bool = False,
    max_length: int | None = None,
    stage1_cutoff: int = 32,
    stage2_cutoff: int = 64,
    temperature: float = 0.05,
    transfer_splits: tuple | None = None,
    score_untrained: bool = True,
    score_unquantized: bool = True,
) -> TemplateRun | None:
    """One template on one training seed (``stage1_config.seed``) end to end, a picklable unit for
    ``stsnb.training.distributed.run``: load the backbone with a fresh adapter initialised from the seed, score it (when
    ``score_untrained``), stage 1, then every stage-2 variant (label -> :class:`Stage2Variant`) from the stage-1
    adapter. ``transfer_splits`` (train, dev, test of ``transfer.Labelled``) probes the untrained model and the
    first variant's. ``gradient_checkpointing`` (non-reentrant; the official code uses it) recomputes activations in
    the backward pass, which the paper's batches on a 7B model need to fit a GPU (``stsnb run --check``). With
    ``quantize_4bit`` and ``score_unquantized`` every model is scored (and probed) on the unquantized base with its
    adapter, as the official evaluation (``protocol.Scorer``). On several processes every process trains, and only
    the main one scores and probes (each model once, and the 16-bit copy on one GPU only); the others return None
    (``stsnb.training.distributed.run`` hands back the main process's run)."""
    import time

    from . import transfer
    from .training import load_prompt_encoder

    bad = {k: type(v).__name__ for k, v in stage2_variants.items() if not isinstance(v, Stage2Variant)}
    if bad:
        raise TypeError(f"stage2_variants must map labels to pipeline.Stage2Variant, got {bad}")
    seconds: dict[str, float] = {}
    tic = time.perf_counter()
    torch.manual_seed(stage1_config.seed)  # the adapter's initialisation (LoRA's A; B starts at 0)
    encoder = load_prompt_encoder(
        backbone,
        template,
        lora=lora,
        quantize_4bit=quantize_4bit,
        max_length=max_length,
        gradient_checkpointing=gradient_checkpointing,
    )
    main = distributed.is_main_process()
    scorer = Scorer(
        scoring, backbone, template, lora, max_length, unquantized=scores_unquantized(quantize_4bit, score_unquantized)
    )
    scores = scorer if main else _NotScored()
    untrained = scores.predictions(encoder) if score_untrained else None
    probes: dict[str, object] = {}
    if transfer_splits is not None and main:
        with scorer.model(encoder) as model:
            probes["untrained"] = transfer.probe(model, *transfer_splits)
    seconds["untrained"] = time.perf_counter() - tic
    tic = time.perf_counter()
    first, weights = stage1(
        encoder, triplets, stage1_config, dev_pairs, scores, cutoff=stage1_cutoff, temperature=temperature
    )
    seconds["stage 1"] = time.perf_counter() - tic
    second = {}
    for label, variant in stage2_variants.items():
        tic = time.perf_counter()
        second[label] = stage2_from(
            encoder,
            weights,
            variant.pairs,
            variant.config,
            dev_pairs,
            scores,
            cutoff=stage2_cutoff,
            objective=variant.objective,
            positive_score=variant.positive_score,
            temperature=temperature,
        )
        seconds[f"stage 2, {label}"] = time.perf_counter() - tic
        if transfer_splits is not None and main and label == next(iter(stage2_variants)):
            with scorer.model(encoder) as model:
                probes["stage 2"] = transfer.probe(model, *transfer_splits)
    if not main:
        return None
    return TemplateRun(template, untrained, first, second, probes, seconds, stage1_config.seed)


DEDUP = "de-duplicated"  # the stage-2 arm drawn without the pairs shared with a test set (matched mix)
KEPT = "kept, matched mix"  # its partner when it is not stage 2's own draw (``dedup_pairs`` != ``stage2_pairs``)
CONTROL = "InfoNCE control"  # stage 2's pairs under stage 1's objective


def main_label(batch_sizes: Sequence[int]) -> str:
    """The label of the stage-2 run every claim starts from: the first batch size."""
    return f"batch {batch_sizes[0]}"


@dataclass(frozen=True)
class SeedPlan:
    """One call of :func:`run_template`: a template on a training seed, its stage-2 variants, whether it scores
    the untrained embedding and probes transfer."""

    template: str
    seed: int
    variants: dict[str, Stage2Variant]
    score_untrained: bool
    probe: bool


def plan(
    templates: Sequence[str],
    training_seeds: Sequence[int],
    pairs_of: Callable[[int], list[stsdata.STSPair]],
    config_of: Callable[[str, int, int, int], TrainConfig],
    batch_sizes: Sequence[int] | Callable[[str], Sequence[int]],
    *,
    arms_of: Callable[[int], corpora.Arms] | None = None,
    control_positive_score: float | None = None,
) -> list[SeedPlan]:
    """The runs of the notebook, in order. The first template runs on every training seed: stage 1, then stage 2
    at the first batch size (the main claim's), the de-duplication arms (``arms_of(seed)``, when given) and the control
    (when ``control_positive_score`` is given). The sweeps, the other batch sizes (Table 5) and the other templates
    (Table 4), run on the first seed only. ``pairs_of(seed)``: stage 2's pairs; ``config_of(template, global batch,
    seed, number of pairs)``; ``batch_sizes``: the sizes, or a function of the template (``protocol.Protocol``'s
    ``batch_sizes``: each template's own official batch first)."""

    def sizes_of(template: str) -> list[int]:
        return list(batch_sizes(template) if callable(batch_sizes) else batch_sizes)

    if not templates or not training_seeds or any(not sizes_of(t) for t in templates):
        raise ValueError("templates, training_seeds and stage2_batch_sizes each need at least one value")
    if len(set(training_seeds)) != len(training_seeds):
        raise ValueError(f"training_seeds must differ from each other, got {list(training_seeds)}")
    first_seed = training_seeds[0]
    plans = []
    for number, template in enumerate(templates):
        b0 = sizes_of(template)[0]
        for seed in training_seeds if number == 0 else training_seeds[:1]:
            pairs = pairs_of(seed)
            sizes = sizes_of(template) if seed == first_seed and number == 0 else [b0]
            variants = {f"batch {b}": Stage2Variant(pairs, config_of(template, b, seed, len(pairs))) for b in sizes}
            if number == 0 and arms_of is not None:
                arms = arms_of(seed)
                if list(arms.kept) != list(pairs):
                    variants[KEPT] = Stage2Variant(arms.kept, config_of(template, b0, seed, len(arms.kept)))
                variants[DEDUP] = Stage2Variant(arms.removed, config_of(template, b0, seed, len(arms.removed)))
            if number == 0 and control_positive_score is not None:
                config = config_of(template, b0, seed, len(pairs))
                variants[CONTROL] = Stage2Variant(pairs, config, "infonce", control_positive_score)
            plans.append(SeedPlan(template, seed, variants, seed == first_seed, number == 0 and seed == first_seed))
    return plans


def report(run: TemplateRun, variants: dict[str, Stage2Variant]) -> list[str]:
    """What a :func:`run_template` call printed: each stage's average and what dev selection kept, the seconds."""
    head = f"seed {run.seed}: "
    if run.untrained is not None:
        head += f"untrained avg {evaluate.spearman_scores(run.untrained)['avg']:.2f} -> "
    lines = [f"{head}stage 1 {run.stage1.scores['avg']:.2f} ({run.stage1.summary()})"]
    for label, second in run.stage2.items():
        variant = variants[label]
        lines.append(
            f"  stage 2, {label} ({len(variant.pairs)} pairs, {variant.objective}): avg {second.scores['avg']:.2f} "
            f"({second.summary()})"
        )
    lines.append("  seconds: " + ", ".join(f"{k} {v:.0f}" for k, v in run.seconds.items()))
    return lines


def run_metrics(run: TemplateRun) -> dict[str, dict]:
    """metrics.json entries of one call: scores, kept step and weight change of each stage, the seconds."""

    def entry(stage: StageRun) -> dict:
        r = stage.result
        kept = {"kept_step": stage.kept_step, "steps": r.steps, "weight_change": r.weight_change}
        return {**stage.scores, **kept, "relative_change": r.relative_change, "best_dev": r.best_score}

    prefix = f"{run.template}/seed{run.seed}"
    out = {f"{prefix}/stage1": entry(run.stage1), f"{prefix}/seconds": dict(run.seconds)}
    out.update({f"{prefix}/stage2/{label}": entry(s) for label, s in run.stage2.items()})
    if run.untrained is not None:
        out[f"{run.template}/untrained"] = evaluate.spearman_scores(run.untrained)
    return out


def mean_scores(runs: Sequence[StageRun]) -> dict[str, float]:
    """Each task's Spearman x100 (and ``avg``) averaged over runs, e.g. one stage over the training seeds."""
    if not runs:
        raise ValueError("mean_scores needs at least one run")
    scores = [r.scores for r in runs]
    return {task: sum(s[task] for s in scores) / len(scores) for task in scores[0]}
