"""One C-STS experiment: build a bi- or tri-encoder, train it on quadruples with an objective, keep the checkpoint
that scores best on a selection set, and score it on evaluation rows (Spearman and Pearson x100).

Section 4.1: the paper validates after every epoch on the C-STS validation set, keeps the best model and reports
the test split. Test labels are withheld (the C-STS release keeps them), so here the validation split is the
evaluation set and selection uses rows held out of the training split (or the validation rows, on request, as the
paper did; then the validation numbers are optimistic). Training goes through ``stsnb.training.train.fit``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from ...data import CSTSRecord
from ...evaluation import evaluate
from ...models.loading import Pooling
from ...training.config import TrainConfig, TrainResult
from ...training.train import fit
from .encoders import Architecture, ConditionalEncoder, Projection, build_encoder
from .objectives import Objective, loss_function
from .quadruples import Quadruple, scale_label


@dataclass(frozen=True)
class ModelSettings:
    """What decides the model before training: backbone, architecture (Section 3.2.1), pooling, ``g``."""

    backbone: str
    architecture: Architecture
    pooling: Pooling = "cls"
    max_length: int = 64
    projection: Projection = "mlp"
    condition_transform: bool = False  # tri-encoder only: the c-sts Dropout + Linear on f(c)
    dropout: float | None = None  # for backbones without dropout (smollm2-135m-l6)
    gradient_checkpointing: bool = False  # non-reentrant activation checkpointing: less memory, same gradients

    def build(self, seed: int = 0, device: str | torch.device | None = None) -> ConditionalEncoder:
        return build_encoder(
            self.backbone,
            self.architecture,
            pooling=self.pooling,
            max_length=self.max_length,
            projection=self.projection,
            condition_transform=self.condition_transform,
            dropout=self.dropout,
            gradient_checkpointing=self.gradient_checkpointing,
            seed=seed,
            device=device,
        )

    def label(self) -> str:
        return f"{self.architecture}-encoder {self.backbone}"

    @property
    def untrained_depends_on_seed(self) -> bool:
        """Whether the untrained model's similarities depend on the seed: only the tri-encoder's condition transform
        (a new layer drawn from the seed) lies on the path of Eq. 2; ``g`` is used by BCL and C-MSE only."""
        return self.architecture == "tri" and self.condition_transform


@dataclass
class Evaluation:
    """Spearman and Pearson x100 of the cosines against the scaled labels, the per-row cosines, and each row's
    sentence pair (:func:`pair_id`), the unit a bootstrap resamples (a pair's two conditions are not independent)."""

    spearman: float
    pearson: float
    predictions: np.ndarray = field(repr=False)
    gold: np.ndarray = field(repr=False)
    sources: list[str] = field(repr=False)
    groups: list[str] = field(repr=False, default_factory=list)

    @property
    def n(self) -> int:
        return len(self.gold)

    def by_source(self) -> dict[str, float]:
        """Row source (``file:line``) -> predicted cosine."""
        return dict(zip(self.sources, self.predictions.tolist(), strict=True))

    def scores(self) -> dict[str, float]:
        return {"spearman": self.spearman, "pearson": self.pearson}

    def dev_score(self) -> evaluate.DevScore:
        """As a dev evaluation for ``fit``: the Spearman with the rows it scored, grouped by sentence pair."""
        return evaluate.DevScore(self.spearman, self.gold, self.predictions, self.groups or None)


def pair_id(record: CSTSRecord) -> str:
    """The sentence pair a C-STS row belongs to, as one label: its two sentences, unordered (the validation split
    holds two pairs also in reverse order; those count as one pair). Rows with one id share their sentences and
    differ only in the condition, so a bootstrap must draw them together."""
    return "\x1f".join(sorted((record.sent1, record.sent2)))


def gold_labels(records: Sequence[CSTSRecord]) -> np.ndarray:
    return np.array([scale_label(r.label) for r in records], dtype=np.float64)


def evaluate_rows(model: ConditionalEncoder, records: Sequence[CSTSRecord], batch_size: int = 64) -> Evaluation:
    """Eq. 2 on every row, then Spearman/Pearson x100 against the labels scaled to [0, 1] (c-sts ``run_sts.py``)."""
    if len(records) < 3:
        raise ValueError(f"evaluation needs at least 3 rows, got {len(records)}")
    predictions = model.similarities(records, batch_size)
    if not np.all(np.isfinite(predictions)):
        raise FloatingPointError(f"{int((~np.isfinite(predictions)).sum())} non-finite similarities")
    gold = gold_labels(records)
    spearman, pearson = evaluate.correlations(predictions, gold)
    return Evaluation(spearman, pearson, predictions, gold, [r.source for r in records], [pair_id(r) for r in records])


def param_groups(model: ConditionalEncoder, lr: float, weight_decay: float, head_lr: float | None = None) -> list[dict]:
    """AdamW groups: the backbone at ``lr``; the new layers (``g``, the condition transform) at ``head_lr`` (``lr``
    when None, as one optimizer in the c-sts framework); no weight decay on biases and normalisation weights."""
    new = set(model.new_parameters())
    groups: dict[tuple[float, float], list[torch.nn.Parameter]] = {}
    for name, parameter in model.named_parameters():
        if not parameter.requires_grad:
            continue
        group_lr = head_lr if (head_lr is not None and name in new) else lr
        decay = 0.0 if name.endswith("bias") or "norm" in name.lower() else weight_decay
        groups.setdefault((group_lr, decay), []).append(parameter)
    return [{"params": params, "lr": g_lr, "weight_decay": wd} for (g_lr, wd), params in groups.items()]


@dataclass
class RunOutcome:
    """One trained model's scores on the evaluation rows, with its training history."""

    name: str
    settings: ModelSettings
    objective: Objective | None  # None: untrained
    evaluation: Evaluation
    result: TrainResult | None
    seconds: float
    model: ConditionalEncoder | None = field(default=None, repr=False)
    seed: int = 0  # the training seed: new layers, batch order, dropout

    def describe(self) -> str:
        """One line: the scores, the selected step, how far the weights moved (relative L2, a distance), the largest
        change of one weight (with Adam about the sum of the learning rates, not a distance) and the time; a second
        line when the run kept its starting point (selected step 0 or no weight changed: it *is* the untrained
        model)."""
        ev, r = self.evaluation, self.result
        line = f"{self.name:<40} Spearman {ev.spearman:6.2f}  Pearson {ev.pearson:6.2f}  ("
        if r is None:
            return line + f"untrained; {self.seconds:.0f} s)"
        change = "n/a" if r.weight_change is None else f"{r.weight_change:.1e}"
        moved = "" if r.relative_change is None else f"weights moved {100 * r.relative_change:.2f}% (relative L2), "
        line += f"best selection {r.best_score:.2f} at step {r.best_step}/{r.steps}, {moved}"
        line += f"largest weight change {change}; "
        line += f"{self.seconds:.0f} s)"
        if not r.best_step or not r.weight_change:
            line += "\n   -> this run kept its starting point (step 0 or no weight changed): it IS the untrained model"
        return line

    def metrics(self) -> dict:
        trained = self.result is not None
        return {
            **self.evaluation.scores(),
            "seed": self.seed,
            "best_selection_spearman": self.result.best_score if trained else None,
            "best_step": self.result.best_step if trained else None,
            "steps": self.result.steps if trained else 0,
            "weight_change": self.result.weight_change if trained else 0.0,
            "relative_change": self.result.relative_change if trained else 0.0,
            "seconds": round(self.seconds, 1),
        }


def train_and_evaluate(
    settings: ModelSettings,
    objective: Objective,
    train_quadruples: Sequence[Quadruple],
    selection_rows: Sequence[CSTSRecord],
    eval_rows: Sequence[CSTSRecord],
    config: TrainConfig,
    *,
    head_lr: float | None = None,
    keep_model: bool = False,
    name: str | None = None,
) -> RunOutcome:
    """Build the model from ``config.seed``, ``fit`` it on ``train_quadruples`` (batches of ``config.batch_size``
    quadruples = twice as many rows), select on ``selection_rows`` (Spearman), score ``eval_rows``."""
    started = time.perf_counter()
    model = settings.build(seed=config.seed)
    selection, gate = list(selection_rows), list(getattr(selection_rows, "gate", None) or ())
    result = fit(
        model,
        loss_function(objective),
        list(train_quadruples),
        config.labelled(name or f"{settings.label()} {objective.name}, seed {config.seed}"),
        evaluate=(lambda m: evaluate_rows(m, selection).dev_score()) if selection else None,
        gate=(lambda m: evaluate_rows(m, gate).dev_score()) if gate else None,
        param_groups=param_groups(model, config.lr, config.weight_decay, head_lr),
    )
    evaluation = evaluate_rows(model, eval_rows)
    return RunOutcome(
        name or f"{settings.label()} {objective.name}",
        settings,
        objective,
        evaluation,
        result,
        time.perf_counter() - started,
        model if keep_model else None,
        config.seed,
    )


def zero_shot(settings: ModelSettings, eval_rows: Sequence[CSTSRecord], seed: int = 0) -> RunOutcome:
    """The untrained model (its new layers drawn from ``seed``) on the evaluation rows: the starting point."""
    started = time.perf_counter()
    model = settings.build(seed=seed)
    evaluation = evaluate_rows(model, eval_rows)
    seconds = time.perf_counter() - started
    return RunOutcome(f"{settings.label()} untrained", settings, None, evaluation, None, seconds, seed=seed)
