"""Does Table 1's baseline train the raw backbone at all, and in which setting?

Table 1's claims compare losses *after* fine-tuning; on an encoder that fine-tuning did not move they compare two
copies of the untrained model. This probe asks the prior question for one setting (task, loss, learning rate,
pairs, batch, cutoff length): fine-tune ``fine_tune_table1`` as notebook 20 does (layer-wise decay, the head's own
learning rate, warmup then decay) for one epoch with **no checkpoint selection**, then score the last weights
against the untrained backbone on the same STS-B dev pairs as a paired bootstrap difference with a verdict
(``stsnb.stats``). The loss at the first and last logged interval tells whether the objective itself trained.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from ... import evaluate, stats
from ...data import STSPair
from ...train import TrainConfig
from .backbones import load_backbone
from .recipes import fine_tune_table1, table2_loss
from .tasks import table1_task
from .training_data import TrainingPair

LOSS_INTERVALS = 6  # logged loss intervals per run (the first and the last are reported)


@dataclass(frozen=True)
class ProbeSetting:
    """One Table 1 setting to probe on a backbone."""

    task: str  # "nli" | "sts" (``tasks.TASKS``)
    loss: str  # a Table 1 loss, with Table 2's k, x0 for the buffered ones
    lr: float
    pairs: int
    batch_size: int = 16
    max_length: int = 64

    def label(self) -> str:
        return (
            f"{self.task} {self.loss}, lr {self.lr:g}, {self.pairs} pairs, batch {self.batch_size}, "
            f"length {self.max_length}"
        )


def table1_moves(
    setting: ProbeSetting,
    backbone: str,
    pairs: Sequence[TrainingPair],
    dev_pairs: Sequence[STSPair],
    *,
    row: str = "BERT-base",
    head_lr: float | None = 1e-3,
    lr_decay: float = 0.95,
    warmup_ratio: float = 0.2,
    weight_decay: float = 0.01,
    max_grad_norm: float | None = 10.0,
    freeze_embeddings: bool = True,
    seed: int = 0,
    n_resamples: int = 1000,
) -> dict:
    """Fine-tune ``backbone`` on the first ``setting.pairs`` of ``pairs`` (one epoch, no selection) and return
    ``stats.claim_row`` of last-step minus untrained STS-B dev Spearman, with ``dev_before``, ``dev_after``,
    ``loss_first``, ``loss_last``, ``steps`` and ``seconds`` (loading, training and both scorings)."""
    if len(pairs) < setting.pairs:
        raise ValueError(f"{setting.label()}: needs {setting.pairs} training pairs, got {len(pairs)}")
    started = time.perf_counter()
    before = evaluate.dev_predictions(load_backbone(backbone, setting.max_length), dev_pairs)
    steps = setting.pairs // setting.batch_size
    config = TrainConfig(
        batch_size=setting.batch_size,
        lr=setting.lr,
        weight_decay=weight_decay,
        warmup_ratio=warmup_ratio,
        max_grad_norm=max_grad_norm,
        eval_every=max(1, steps // LOSS_INTERVALS),  # logs the loss; no dev pairs, so no selection
        eval_at_start=False,
        seed=seed,
        progress=False,
    )
    model, result = fine_tune_table1(
        backbone,
        list(pairs[: setting.pairs]),
        table2_loss(setting.loss, row),
        config,
        dev_pairs=None,
        clamp="none",
        max_length=setting.max_length,
        lr_decay=lr_decay,
        head_lr=head_lr,
        seed=seed,
        freeze_embeddings=freeze_embeddings,
        task=table1_task(setting.task),
    )
    after = evaluate.dev_predictions(model.encoder, dev_pairs)
    gap = stats.paired_predictions_difference(after, before, n_resamples=n_resamples, seed=seed)
    row_out = stats.claim_row(f"{setting.label()} improves STS-B dev", [gap], paper_direction=+1)
    row_out.pop("per_seed")
    losses = [h["loss"] for h in result.history if "loss" in h]
    return {
        **row_out,
        "setting": setting.label(),
        "dev_before": evaluate.spearman_scores(before)["avg"],
        "dev_after": evaluate.spearman_scores(after)["avg"],
        "loss_first": losses[0] if losses else float("nan"),
        "loss_last": losses[-1] if losses else float("nan"),
        "steps": result.steps,
        "seconds": round(time.perf_counter() - started, 1),
    }
