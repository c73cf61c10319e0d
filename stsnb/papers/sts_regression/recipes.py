"""STS-Regression's losses by name with Table 2's hyperparameters (Eq. 1-2, Tables 1-2) and its training recipes:
NLI fine-tuning with STS-B dev selection (Section 4.1), the two stages of Section 4.2 (Figure 3) and the "+Contrast"
baseline of Table 3.

Where the paper and the official code (ZBWpro/STS-Regression, notes in REFERENCE_NOTES A2) differ, the choice is
a parameter and its docstring says which one each value follows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

import torch
from torch import Tensor, nn

from ... import data as stsdata
from ...evaluation import evaluate
from ...models import loading as models
from ...training import batching, distributed, losses
from ...training.config import TrainConfig, TrainResult
from ...training.param_groups import layerwise_param_groups
from ...training.train import fit
from .backbones import load_backbone
from .model import ClampMode, Concatenation, SiameseModel, clamp_prediction, head_output, predict
from .tasks import NLI_TASK, Table1Task
from .training_data import NLI_RANGE, TrainingPair

# ---- losses (Eq. 1-2, Tables 1-2) ------------------------------------------------------------------------------

LOSSES = ("cross_entropy", "l1", "translated_relu", "mse", "smooth_k2")  # the Table 1 rows, in its order

# Table 2: (k, x0) when fine-tuning on NLI.
TABLE2: dict[tuple[str, str], tuple[float, float]] = {
    ("BERT-base", "translated_relu"): (2.5, 0.25),
    ("BERT-base", "smooth_k2"): (2.0, 0.25),
    ("RoBERTa-base", "translated_relu"): (1.0, 0.25),
    ("RoBERTa-base", "smooth_k2"): (3.0, 0.25),
}
# Section 4.2, two stages with Smooth K2: (k, x0) from the official train-/tune-jina-nomic.py (REFERENCE_NOTES A2);
# the paper gives only the Table 5 sweep for these.
STAGE_SETTINGS: dict[str, dict[str, tuple[float, float]]] = {
    "Jina v2": {"stage1": (2.0, 0.2), "stage2": (3.5, 0.2)},
    "Nomic Embed v1": {"stage1": (2.0, 0.25), "stage2": (3.0, 0.2)},
}


# The official settings.py docstring: (lr, max_grad_norm) of the best NLI runs (REFERENCE_NOTES A2); the other
# Table 1 rows have no released recipe.
OFFICIAL_RECIPES: dict[tuple[str, str], tuple[float, float]] = {
    ("BERT-base", "smooth_k2"): (5e-5, 10.0),
    ("BERT-base", "translated_relu"): (2e-5, 10.0),
    ("RoBERTa-base", "smooth_k2"): (2e-5, 2.0),
    ("RoBERTa-base", "translated_relu"): (2e-5, 10.0),
}


@dataclass(frozen=True)
class LossSpec:
    """A Table 1 loss by name with its hyperparameters (``k``, ``x0`` matter for the two buffered losses)."""

    name: str
    k: float = 1.0
    x0: float = 0.0

    def __post_init__(self):
        if self.name not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {self.name!r}")

    @property
    def is_classification(self) -> bool:
        return self.name == "cross_entropy"

    def label(self) -> str:
        if self.name in ("translated_relu", "smooth_k2"):
            return f"{self.name} k={self.k:g} x0={self.x0:g}"
        return self.name

    def __call__(self, output: Tensor, target: Tensor) -> Tensor:
        """Loss of head outputs: logits ``(N, K)`` + targets for cross entropy (a target between two labels is the
        class of the nearer one, ``Table1Task.class_ids``), else predictions ``(N,)``."""
        if self.name == "cross_entropy":
            return losses.softmax_cross_entropy(output, target.round().long())
        if self.name == "l1":
            return losses.l1_loss(output, target)
        if self.name == "mse":
            return losses.mse_loss(output, target)
        if self.name == "translated_relu":
            return losses.translated_relu(output, target, self.k, self.x0)
        return losses.smooth_k2(output, target, self.k, self.x0)


def table2_loss(name: str, row: str = "BERT-base") -> LossSpec:
    """The loss with Table 2's ``k`` and ``x0`` of a backbone row (``"BERT-base"`` or ``"RoBERTa-base"``)."""
    if name in ("translated_relu", "smooth_k2"):
        if (row, name) not in TABLE2:
            raise KeyError(f"Table 2 has no row ({row!r}, {name!r}); rows: {sorted(TABLE2)}")
        k, x0 = TABLE2[(row, name)]
        return LossSpec(name, k, x0)
    return LossSpec(name)


def head_outputs_for(loss: LossSpec, classes: int = 3) -> int:
    """1 output for regression, ``classes`` for the cross-entropy classifier."""
    return classes if loss.is_classification else 1


def seeded_model(
    encoder: models.SentenceEncoder,
    loss: LossSpec | None = None,
    concatenation: Concatenation = "(u,v,|u-v|)",
    seed: int = 0,
    classes: int = 3,
) -> SiameseModel:
    """A Siamese model whose new head is drawn after seeding torch with ``seed``: runs with the same seed and
    shapes start from the same head (one output, or ``head_outputs_for(loss, classes)``)."""
    torch.manual_seed(seed)
    return SiameseModel(encoder, concatenation, head_outputs_for(loss, classes) if loss is not None else 1)


def pair_loss(
    loss: LossSpec, clamp: ClampMode, label_range: tuple[float, float]
) -> Callable[[nn.Module, list[TrainingPair]], Tensor]:
    """``loss_fn(model, batch)`` for ``stsnb.training.train.fit``: Siamese forward, Section 3.3 clamp, then the loss."""

    def step(model: nn.Module, batch: list[TrainingPair]) -> Tensor:
        output = model([p.sent1 for p in batch], [p.sent2 for p in batch])
        target = torch.tensor([p.target for p in batch], device=output.device)
        if not loss.is_classification:
            output = clamp_prediction(output, label_range, clamp)
        return loss(output, target)

    return step


# ---- training (Sections 4.1, 4.2) ----------------------------------------------------------------------


def train_siamese(
    model: SiameseModel,
    pairs: Sequence[TrainingPair],
    loss: LossSpec,
    config: TrainConfig,
    *,
    dev_pairs: Sequence[stsdata.STSPair] | None,
    clamp: ClampMode = "both",
    label_range: tuple[float, float] = NLI_RANGE,
    lr_decay: float = 0.95,
    head_lr: float | None = None,
) -> TrainResult:
    """Fine-tune encoder and head together (Section 4.1; stage 2 of Section 4.2) with ``stsnb.training.train.fit``.

    Every ``config.eval_every`` steps the STS-B dev Spearman of the cosine is computed and the best weights are
    restored at the end (Section 4.1: "checkpoints saved based on ... the STS-B development set").
    """
    if loss.is_classification != (model.outputs > 1):
        raise ValueError(f"{loss.name} needs a head with {'K > 1' if loss.is_classification else '1'} outputs")
    groups = layerwise_param_groups(model, config.lr, lr_decay, config.weight_decay, head_lr)
    return fit(
        model,
        pair_loss(loss, clamp, label_range),
        list(pairs),
        config.labelled(f"{loss.name}, seed {config.seed}"),
        evaluate=evaluate.dev_evaluator(dev_pairs) if dev_pairs is not None else None,
        gate=evaluate.gate_evaluator(dev_pairs),
        param_groups=groups,
    )


def fine_tune_table1(
    backbone: str,
    pairs: Sequence[TrainingPair],
    loss: LossSpec,
    config: TrainConfig,
    *,
    dev_pairs: Sequence[stsdata.STSPair] | None,
    concatenation: Concatenation = "(u,v,|u-v|)",
    clamp: ClampMode = "both",
    max_length: int | None = None,
    pooling: models.Pooling = "mean",
    lr_decay: float = 0.95,
    head_lr: float | None = None,
    seed: int = 0,
    freeze_embeddings: bool = False,
    gradient_checkpointing: bool = False,
    task: Table1Task = NLI_TASK,
) -> tuple[SiameseModel, TrainResult]:
    """One Table 1 / 5 / 6 run: a fresh backbone (``load_backbone``'s options), a new head (seeded: the same initial
    head for every regression loss; ``task.classes`` outputs for cross entropy), fine-tuning on ``pairs`` of
    ``task`` (the paper's NLI, Section 4.1, or the STS analogue, its targets as ``task.training_pairs`` gives them:
    rounded to the class ids for ``"sts_rounded"``) with STS-B dev selection."""
    encoder = load_backbone(
        backbone,
        max_length,
        pooling,
        freeze_embeddings=freeze_embeddings,
        gradient_checkpointing=gradient_checkpointing,
    )
    model = seeded_model(encoder, loss, concatenation, seed, task.classes)
    result = train_siamese(
        model,
        task.training_pairs(pairs),
        loss,
        config,
        dev_pairs=dev_pairs,
        clamp=clamp,
        label_range=task.label_range,
        lr_decay=lr_decay,
        head_lr=head_lr,
    )
    return model, result


@dataclass
class Table1Run:
    """One Table 1 / 5 / 6 run's results: the STS predictions (task -> (gold, cosine), for paired intervals) and
    their scores, the training history, the head's outputs on held-out pairs."""

    predictions: evaluate.TaskPredictions
    result: TrainResult
    heldout_outputs: Tensor

    @property
    def scores(self) -> dict[str, float]:
        return evaluate.spearman_scores(self.predictions)


def table1_run(
    backbone: str,
    pairs: Sequence[TrainingPair],
    loss: LossSpec,
    config: TrainConfig,
    dev_pairs: Sequence[stsdata.STSPair] | None,
    heldout: Sequence[TrainingPair],
    eval_tasks: str = "all",
    eval_max_pairs: int | None = None,
    eval_seed: int = 0,
    **fine_tune: object,
) -> Table1Run | None:
    """``fine_tune_table1`` then the STS predictions (``evaluate.task_predictions``: every test pair, or the same
    ``eval_max_pairs`` per task drawn with ``eval_seed`` for every run and training seed) and the head's outputs on
    held-out pairs of its task: the unit a notebook's ``num_processes`` parameter runs on several processes
    (``stsnb.training.distributed.run``). Every process trains; only the main one scores (the test sets once), the
    others return None."""
    model, result = fine_tune_table1(backbone, pairs, loss, config, dev_pairs=dev_pairs, **fine_tune)
    if not distributed.is_main_process():
        return None
    predictions = evaluate.task_predictions(model.encoder, eval_tasks, eval_max_pairs, eval_seed, cache=None)
    return Table1Run(predictions, result, predict(model, heldout).cpu())


def train_head_frozen(
    model: SiameseModel,
    pairs: Sequence[TrainingPair],
    loss: LossSpec,
    config: TrainConfig,
    *,
    clamp: ClampMode = "both",
    label_range: tuple[float, float] = NLI_RANGE,
) -> TrainResult:
    """Stage 1 of Section 4.2 (Figure 3, left): the encoder frozen, only the head learns, on NLI.

    With the encoder frozen its embeddings are fixed, so every distinct sentence is embedded once
    (``stsnb.evaluation.evaluate.embed_sentences``, cached by weight fingerprint) and the head trains on the cached
    vectors. One difference from the official script: it runs the frozen encoder in train mode (dropout on), we embed in
    eval mode. The cosine of the embeddings does not change in this stage, so there is nothing to select on:
    the last head is kept, as the official script keeps its last save.
    """
    table, _ = evaluate.embed_sentences(model.encoder, (s for p in pairs for s in (p.sent1, p.sent2)))
    device = model.head.weight.device
    u = torch.stack([table[p.sent1] for p in pairs]).to(device)
    v = torch.stack([table[p.sent2] for p in pairs]).to(device)
    target = torch.tensor([p.target for p in pairs], device=device)
    concatenation = model.concatenation

    def step(head: nn.Module, index: list[int]) -> Tensor:
        output = head_output(head, u[index], v[index], concatenation)
        if not loss.is_classification:
            output = clamp_prediction(output, label_range, clamp)
        return loss(output, target[index])

    return fit(model.head, step, list(range(len(pairs))), config)


def contrast_loss(temperature: float = 0.05) -> Callable[[nn.Module, list[TrainingPair]], Tensor]:
    """Eq. 3: InfoNCE of each sentence 1 against its sentence 2, the other pairs' sentences 2 as negatives: those of
    every process (``distributed.gather_with_grad``), so the negatives are the global batch's."""

    def step(encoder: nn.Module, batch: list[TrainingPair]) -> Tensor:
        both = encoder([p.sent1 for p in batch] + [p.sent2 for p in batch])
        anchors = distributed.gather_with_grad(both[: len(batch)])
        return losses.info_nce(anchors, distributed.gather_with_grad(both[len(batch) :]), temperature=temperature)

    return step


def train_contrast(
    encoder: models.SentenceEncoder,
    pairs: Sequence[TrainingPair],
    config: TrainConfig,
    *,
    dev_pairs: Sequence[stsdata.STSPair] | None,
    temperature: float = 0.05,
    lr_decay: float = 0.95,
) -> TrainResult:
    """The "+Contrast" baseline of Table 3: continue training the encoder with InfoNCE (Eq. 3).

    Its code is unreleased (REFERENCE_NOTES A2), so these are our choices: the positives are the pairs scored
    >= 4.0 (``positive_pairs``), negatives are the other positives of the batch (no hard negatives), temperature
    0.05 as SimCSE, one direction as Eq. 3 writes it, the same optimiser, schedule and STS-B dev selection as
    ours. A short last batch is dropped (InfoNCE needs at least two pairs). ``config.batch_size`` is one process's
    share of the batch; the loss sees the global batch.
    """
    if config.batch_size * distributed.world_size() < 2:
        raise ValueError("InfoNCE needs batches of at least 2 pairs (the in-batch negatives)")
    config = replace(config, drop_last=True)
    return fit(
        encoder,
        contrast_loss(temperature),
        list(pairs),
        config.labelled(f"+Contrast, seed {config.seed}"),
        evaluate=evaluate.dev_evaluator(dev_pairs) if dev_pairs is not None else None,
        gate=evaluate.gate_evaluator(dev_pairs),
        param_groups=layerwise_param_groups(encoder, config.lr, lr_decay, config.weight_decay),
    )


# ---- the settings every run of a notebook shares (Section 4.1, the official code) --------------------------------


@dataclass(frozen=True)
class Recipe:
    """The optimisation settings shared by every run of a notebook (Section 4.1 and the official code,
    REFERENCE_NOTES A2): ``config`` builds one run's ``TrainConfig`` from them, ``lr_and_clip`` picks a run's
    learning rate and gradient clipping (the official per-setting values of ``OFFICIAL_RECIPES`` when
    ``use_official_recipes`` and the row has them, else ``lr`` and ``max_grad_norm``). Batch sizes are global
    (``stsnb.training.batching``): ``config`` shares one out over ``processes`` x ``grad_accum``."""

    lr: float
    max_grad_norm: float | None
    batch_size: int
    epochs: int
    eval_every: int | None
    seed: int
    grad_accum: int = 1
    weight_decay: float = 0.01
    warmup_ratio: float = 0.2
    schedule_steps_factor: float = 1.0
    use_official_recipes: bool = False
    processes: int = 1  # training processes (``batching.resolve_processes`` of ``num_processes``)

    @classmethod
    def from_params(cls, params: Mapping[str, Any], processes: int = 1) -> Recipe:
        """The settings from a notebook's parameters of the same names (``lr``, ``max_grad_norm``, ``batch_size``,
        ``epochs``, ``eval_every``, ``seed``, ``grad_accum``, ``weight_decay``, ``warmup_ratio``,
        ``schedule_steps_factor``, ``use_official_recipes``; every one must be there), on ``processes``."""
        names = [f.name for f in fields(cls) if f.name != "processes"]
        missing = [name for name in names if name not in params]
        if missing:
            raise KeyError(f"the parameters lack {missing}")
        return cls(**{name: params[name] for name in names}, processes=processes)

    def split(self, batch: int | None = None) -> batching.BatchSplit:
        """The global ``batch`` (default ``batch_size``) over the processes and ``grad_accum`` (per-pair losses)."""
        global_batch = self.batch_size if batch is None else batch
        return batching.split_batch(global_batch, self.processes, batch_level=False, accumulation=self.grad_accum)

    def config(
        self,
        lr: float | None = None,
        clip: float | None = None,
        batch: int | None = None,
        passes: int | None = None,
        every: int | Literal["default"] | None = "default",
        run_seed: int | None = None,
    ) -> TrainConfig:
        """One run's ``TrainConfig``: these settings with any of ``lr``, ``clip``, ``batch`` (global), ``passes``
        (epochs), ``every`` (optimizer steps between dev evaluations; None: once per epoch) and ``run_seed`` replaced;
        its ``batch_size`` is one process's micro-batch (``split``)."""
        share = self.split(batch)
        return TrainConfig(
            epochs=self.epochs if passes is None else passes,
            batch_size=share.per_process,
            grad_accum=share.accumulation,
            lr=self.lr if lr is None else lr,
            weight_decay=self.weight_decay,
            warmup_ratio=self.warmup_ratio,
            schedule_steps_factor=self.schedule_steps_factor,
            max_grad_norm=self.max_grad_norm if clip is None else clip,
            eval_every=self.eval_every if every == "default" else every,
            seed=self.seed if run_seed is None else run_seed,
        )

    def lr_and_clip(self, row: str, loss: str) -> tuple[float, float | None]:
        """(lr, max_grad_norm) of the run of ``loss`` compared with the paper's ``row`` (e.g. "BERT-base")."""
        if self.use_official_recipes and (row, loss) in OFFICIAL_RECIPES:
            return OFFICIAL_RECIPES[(row, loss)]
        return self.lr, self.max_grad_norm


def dev_curve(result: TrainResult) -> list[tuple[int, float]]:
    """(optimizer step, STS-B dev Spearman x100) of every dev evaluation of a run, step 0 (untrained) first."""
    return [(h["step"], h["dev"]) for h in result.history if "dev" in h]
