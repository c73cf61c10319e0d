"""Does unsupervised SimCSE move the raw backbone at all?

HiCL's claim is that the local loss adds to a contrastive objective that *works* (Table 1): a +HiCL difference on a
backbone the baseline does not improve says nothing about the paper. This probe asks the prior question for one
setting (learning rate, dropout, pooling): train plain unsupervised SimCSE (Eq. 1, dropout positives) for a fixed
number of steps with **no checkpoint selection**, then score the last weights against the untrained backbone on the
same STS-B dev pairs, as a paired bootstrap difference with a verdict (``stsnb.evaluation.stats``). The loss at the
first and the last step tells whether the objective itself trained (a falling loss with a falling score is a finding,
not a failure to train).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ...data import STSPair
from ...evaluation import evaluate, stats, verdict_rules
from ...training.config import TrainConfig
from .objectives import ObjectiveSettings
from .training import BackboneSettings, HiclSettings, make_examples, train_method


@dataclass(frozen=True)
class ProbeSetting:
    """One SimCSE setting to probe: the knobs the raw decoder's response depends on."""

    lr: float
    dropout: float | None = 0.1  # attention + hidden dropout added to the decoder (None: the model's own)
    pooling: str = "mean"

    def label(self) -> str:
        return f"lr {self.lr:g}, dropout {self.dropout}, {self.pooling} pooling"


def simcse_moves(
    setting: ProbeSetting,
    backbone: BackboneSettings,
    sentences: Sequence[str],
    dev_pairs: Sequence[STSPair],
    *,
    batch_size: int = 32,
    temperature: float = 0.05,
    seed: int = 0,
    n_resamples: int = 1000,
) -> dict:
    """Train SimCSE with ``setting`` on ``sentences`` (one epoch, ``len(sentences) // batch_size`` steps, no
    warmup, no selection) and return ``verdict_rules.claim_row`` of last-step minus untrained STS-B dev Spearman, with
    ``dev_before``, ``dev_after``, ``loss_first``, ``loss_last``, ``steps`` and ``seconds``."""
    if len(sentences) < 2 * batch_size:
        raise ValueError(f"need at least two batches of {batch_size} sentences, got {len(sentences)}")
    started = time.perf_counter()
    encoder = replace(backbone, pooling=setting.pooling, dropout=setting.dropout).load()
    before = evaluate.dev_predictions(encoder, dev_pairs)
    examples, _ = make_examples(encoder.tokenizer, sentences, backbone.max_length, "simcse")
    config = TrainConfig(
        batch_size=batch_size,
        lr=setting.lr,
        warmup_ratio=0.0,
        eval_at_start=False,
        seed=seed,
        drop_last=True,
        progress=False,
    )
    trained = train_method(
        encoder,
        examples,
        "simcse",
        HiclSettings(enabled=False),
        ObjectiveSettings(alpha=0.0, temperature=temperature),
        config,
    )
    after = evaluate.dev_predictions(trained.encoder, dev_pairs)
    gap = stats.paired_predictions_difference(after, before, n_resamples=n_resamples, seed=seed)
    row = verdict_rules.claim_row(f"SimCSE ({setting.label()}) improves STS-B dev", [gap], paper_direction=+1)
    row.pop("per_seed")
    return {
        **row,
        "setting": setting.label(),
        "dev_before": evaluate.spearman_scores(before)["avg"],
        "dev_after": evaluate.spearman_scores(after)["avg"],
        "loss_first": trained.losses[0]["global"],
        "loss_last": trained.losses[-1]["global"],
        "steps": trained.result.steps,
        "seconds": round(time.perf_counter() - started, 1),
    }
