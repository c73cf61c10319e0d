"""Section 4.2 (Figure 3, Table 3) on one contrastive encoder, run end to end: the two stages of "+Ours" and the
"+Contrast" baseline, each ending in STS predictions on the same test pairs (for ``claims.table3_claims``).

Stage 1: the encoder frozen, a new head (seeded) trained on NLI with Smooth K2 (``train_head_frozen``). Stage 2:
encoder and head together on the de-duplicated STS-B + SICK-R pairs (``train_siamese``) with STS-B dev selection.
"+Contrast": the same encoder trained with InfoNCE (Eq. 3) on the pairs scored >= the threshold.

Each arm is one job for ``stsnb.training.distributed.run`` on ``Section42.processes`` processes, as Table 1's runs are
(``table1.table1_job``): every process trains on its share of the global batch, only the main one scores the test
pairs (the others return None).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ... import data as stsdata
from ...evaluation import evaluate
from ...training import distributed
from ...training.config import TrainConfig, TrainResult
from .backbones import load_backbone
from .claims import Trained, with_flag
from .model import ClampMode, predict
from .recipes import (
    STAGE_SETTINGS,
    LossSpec,
    dev_curve,
    seeded_model,
    train_contrast,
    train_head_frozen,
    train_siamese,
)
from .scoring import Evaluation, compare
from .tasks import heldout_accuracy
from .training_data import NLI_RANGE, STS_RANGE, TrainingPair, positive_pairs


@dataclass
class TwoStageRun:
    """ "+Ours" on one encoder: predictions after stage 2, both training histories, stage 1's held-out NLI accuracy."""

    predictions: evaluate.TaskPredictions
    stage1: TrainResult
    stage2: TrainResult
    stage1_heldout_accuracy: float

    def trained(self) -> Trained:
        """The predictions with what stage 2's dev selection kept (stage 1 leaves the encoder as it was)."""
        return Trained.of(self.predictions, self.stage2)


@dataclass
class ContrastRun:
    """ "+Contrast" on one encoder: predictions, the training history, how many positive pairs it trained on."""

    predictions: evaluate.TaskPredictions
    result: TrainResult
    positives: int
    batch_size: int

    def trained(self) -> Trained:
        """The predictions with what dev selection kept (step 0: the encoder it started from)."""
        return Trained.of(self.predictions, self.result)


def stage2_config(config: TrainConfig, schedule_steps_factor: float = 1.0) -> TrainConfig:
    """Stage 2's (and +Contrast's) settings: ``config`` with the scheduler counting ``schedule_steps_factor`` times
    the steps taken. The official tune-jina-nomic.py counts 2x (REFERENCE_NOTES A2), train-bert-roberta.py 4x
    (Table 1); 1 is the schedule as the paper describes it (warmup, then linear decay to zero)."""
    if schedule_steps_factor < 1:
        raise ValueError(
            f"schedule_steps_factor must be >= 1 (the schedule counts at least the steps taken), got "
            f"{schedule_steps_factor}"
        )
    return replace(config, schedule_steps_factor=schedule_steps_factor)


def two_stage_run(
    backbone: str,
    nli_pairs: Sequence[TrainingPair],
    sts_pairs: Sequence[TrainingPair],
    heldout_nli: Sequence[TrainingPair],
    stage1_loss: LossSpec,
    stage2_loss: LossSpec,
    stage1_config: TrainConfig,
    stage2_config: TrainConfig,
    dev_pairs: Sequence[stsdata.STSPair] | None,
    evaluation: Evaluation,
    *,
    clamp: ClampMode = "both",
    max_length: int | None = None,
    lr_decay: float = 0.95,
    head_lr: float | None = None,
    seed: int = 0,
    gradient_checkpointing: bool = False,
) -> TwoStageRun | None:
    """ "+Ours" of Table 3 from a fresh copy of ``backbone``: stage 1 then stage 2, scored on ``evaluation`` (by
    the main process; the others return None). ``gradient_checkpointing`` acts in stage 2 (stage 1 embeds with the
    encoder frozen, without gradients)."""
    encoder = load_backbone(backbone, max_length, gradient_checkpointing=gradient_checkpointing)
    model = seeded_model(encoder, seed=seed)
    stage1 = train_head_frozen(model, nli_pairs, stage1_loss, stage1_config, clamp=clamp, label_range=NLI_RANGE)
    accuracy = heldout_accuracy(predict(model, heldout_nli), heldout_nli) if heldout_nli else float("nan")
    stage2 = train_siamese(
        model,
        sts_pairs,
        stage2_loss,
        stage2_config,
        dev_pairs=dev_pairs,
        clamp=clamp,
        label_range=STS_RANGE,
        lr_decay=lr_decay,
        head_lr=head_lr,
    )
    if not distributed.is_main_process():
        return None
    return TwoStageRun(evaluation.predictions(model.encoder), stage1, stage2, accuracy)


def contrast_run(
    backbone: str,
    sts_pairs: Sequence[TrainingPair],
    config: TrainConfig,
    dev_pairs: Sequence[stsdata.STSPair] | None,
    evaluation: Evaluation,
    *,
    threshold: float = 4.0,
    temperature: float = 0.05,
    max_length: int | None = None,
    lr_decay: float = 0.95,
    gradient_checkpointing: bool = False,
) -> ContrastRun | None:
    """ "+Contrast" of Table 3 from a fresh copy of ``backbone`` on the pairs of ``sts_pairs`` scored >= ``threshold``
    (the batch is cut to the number of positives when there are fewer: InfoNCE drops a short last batch), scored by
    the main process (the others return None)."""
    positives = positive_pairs(sts_pairs, threshold)
    processes = distributed.world_size()
    if len(positives) < 2 * processes:
        raise ValueError(
            f"+Contrast needs at least 2 pairs scored >= {threshold} per process, got {len(positives)} on {processes}"
        )
    encoder = load_backbone(backbone, max_length, gradient_checkpointing=gradient_checkpointing)
    batch = min(config.batch_size, len(positives) // processes)  # one process's share
    result = train_contrast(
        encoder,
        positives,
        replace(config, batch_size=batch),
        dev_pairs=dev_pairs,
        temperature=temperature,
        lr_decay=lr_decay,
    )
    if not distributed.is_main_process():
        return None
    return ContrastRun(evaluation.predictions(encoder), result, len(positives), batch * processes)


@dataclass(frozen=True)
class Section42:
    """What every Section 4.2 run of a notebook shares: the stage-1 NLI pairs, the de-duplicated STS pairs of stage 2
    (and of +Contrast), the held-out NLI pairs, both stages' settings, the dev pairs, the test pairs and the options
    of the trained encoder. ``ours`` and ``contrast`` run Table 3's two arms on one backbone (Table 5's stage-2
    sweep reruns ``ours`` with another stage-2 loss), each on ``processes`` processes
    (``stsnb.training.distributed.run``; the configs' batch sizes are one process's share)."""

    stage1_pairs: Sequence[TrainingPair]
    stage2_pairs: Sequence[TrainingPair]
    heldout_nli: Sequence[TrainingPair]
    stage1_config: TrainConfig
    stage2_config: TrainConfig
    dev_pairs: Sequence[stsdata.STSPair] | None
    evaluation: Evaluation
    clamp: ClampMode = "both"
    max_length: int | None = None
    gradient_checkpointing: bool = False
    lr_decay: float = 0.95
    head_lr: float | None = None
    seed: int = 0
    processes: int = 1

    def ours(self, backbone: str, row: str, stage2_loss: LossSpec | None = None) -> TwoStageRun:
        """ "+Ours" (``two_stage_run``) with Smooth K2 at the official stage settings of the Table 3 ``row``
        (``STAGE_SETTINGS``; ``stage2_loss`` replaces stage 2's)."""
        job = functools.partial(
            two_stage_run,
            backbone,
            self.stage1_pairs,
            self.stage2_pairs,
            self.heldout_nli,
            LossSpec("smooth_k2", *STAGE_SETTINGS[row]["stage1"]),
            stage2_loss or LossSpec("smooth_k2", *STAGE_SETTINGS[row]["stage2"]),
            self.stage1_config,
            self.stage2_config,
            self.dev_pairs,
            self.evaluation,
            clamp=self.clamp,
            max_length=self.max_length,
            gradient_checkpointing=self.gradient_checkpointing,
            lr_decay=self.lr_decay,
            head_lr=self.head_lr,
            seed=self.seed,
        )
        return distributed.run(job, (), self.processes)

    def contrast(self, backbone: str, threshold: float = 4.0, temperature: float = 0.05) -> ContrastRun:
        """ "+Contrast" (``contrast_run``) on the stage-2 pairs with stage 2's settings."""
        job = functools.partial(
            contrast_run,
            backbone,
            self.stage2_pairs,
            self.stage2_config,
            self.dev_pairs,
            self.evaluation,
            threshold=threshold,
            temperature=temperature,
            max_length=self.max_length,
            gradient_checkpointing=self.gradient_checkpointing,
            lr_decay=self.lr_decay,
        )
        return distributed.run(job, (), self.processes)

    def ours_line(self, backbone: str, run: TwoStageRun, seconds: float) -> str:
        """The printed line of a "+Ours" run: both stages' pairs and steps, the head's held-out accuracy, the dev
        score and step stage 2 kept."""
        return (
            f"{backbone} +Ours: stage 1 {len(self.stage1_pairs)} NLI pairs, {run.stage1.steps} steps, held-out NLI "
            f"accuracy of the head {run.stage1_heldout_accuracy:.1f}%; stage 2 {len(self.stage2_pairs)} pairs, "
            f"best dev {run.stage2.best_score:.2f} @ {run.stage2.best_step}/{run.stage2.steps}  [{seconds:.0f} s]"
        )


def contrast_line(backbone: str, run: ContrastRun, threshold: float, seconds: float) -> str:
    """The printed line of a "+Contrast" run: its positives, batch, the dev score and step kept."""
    return (
        f"{backbone} +Contrast: {run.positives} positive pairs (>= {threshold:g}), batch {run.batch_size}, best dev "
        f"{run.result.best_score:.2f} @ {run.result.best_step}/{run.result.steps}  [{seconds:.0f} s]"
    )


def stage2_sweep_line(backbone: str, stage2_loss: LossSpec, run: TwoStageRun, seconds: float) -> str:
    """The printed line of a Table 5 stage-2 sweep run (Section 4.4): its setting, average, the step kept."""
    return (
        f"{backbone} stage 2 {stage2_loss.label():<26} avg {evaluate.spearman_scores(run.predictions)['avg']:.2f}  "
        f"kept step {run.stage2.best_step}/{run.stage2.steps}  [{seconds:.0f} s]"
    )


TABLE3_ARMS = {"before": "", "+Contrast": " +Contrast", "+Ours": " +Ours"}  # our arm -> the paper's row suffix


@dataclass
class Table3Result:
    """Table 3 on one contrastive encoder: its predictions before training and after each arm (the same test pairs),
    what dev selection kept of each arm, their scores and STS-B dev curves."""

    before: evaluate.TaskPredictions
    ours: TwoStageRun
    contrast: ContrastRun

    @property
    def kept(self) -> dict[str, Trained]:
        """What dev selection kept of each arm (step 0: the encoder it started from), for the claims."""
        return {"+Contrast": self.contrast.trained(), "+Ours": self.ours.trained()}

    @property
    def predictions(self) -> dict[str, evaluate.TaskPredictions]:
        return {"before": self.before, "+Contrast": self.contrast.predictions, "+Ours": self.ours.predictions}

    @property
    def scores(self) -> dict[str, dict[str, float]]:
        """Arm -> task -> Spearman x100 (with ``avg``)."""
        return {label: evaluate.spearman_scores(p) for label, p in self.predictions.items()}

    @property
    def curves(self) -> dict[str, list[tuple[int, float]]]:
        """Arm -> (step, STS-B dev Spearman) of stage 2 and of +Contrast."""
        return {"+Ours": dev_curve(self.ours.stage2), "+Contrast": dev_curve(self.contrast.result)}

    def metrics(self, evaluation: Evaluation, stage2_pairs: int) -> dict:
        """The ``metrics.json`` entry: each arm's scores (the average named by ``evaluation``), the stage-2 pairs,
        +Contrast's positives, the stage-1 head's held-out accuracy, the (step, weight change) each arm kept."""
        return {
            **{label: evaluation.comparable(s) for label, s in self.scores.items()},
            "stage2_pairs": stage2_pairs,
            "positives": self.contrast.positives,
            "stage1_heldout_nli_accuracy": self.ours.stage1_heldout_accuracy,
            "kept (step, weight change)": {k: (r.best_step, r.weight_change) for k, r in self.kept.items()},
        }

    def comparison(self, evaluation: Evaluation, row: str, backbone: str, note: str) -> list[dict]:
        """Ours beside the paper's Table 3 ``row`` (e.g. "Jina v2"), arm by arm (``compare``); an arm that kept its
        start is flagged UNTRAINED in its note (``claims.with_flag``), beside the paper's trained number."""
        scores, kept = self.scores, self.kept
        return [
            line
            for label, suffix in TABLE3_ARMS.items()
            for line in compare(
                scores[label],
                evaluation,
                "Table 3",
                f"{row}{suffix}",
                our_setting=f"{backbone} {label}",
                note=with_flag(note, [kept[label]]) if label in kept else note,
            )
        ]
