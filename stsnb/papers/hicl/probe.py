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


# the committed probe tables of SimCSE on the two backbones a cpu run could use (benchmarks/results/<name>.json)
BASELINE_PROBES = {
    "smollm2-135m-l6": "bench_simcse_moves_length32",
    "smollm2-135m": "bench_simcse_moves_135m",
}


def baseline_probes_note(paper_backbone: str = "BERT-base") -> str:
    """Markdown for notebook 30: whether any probed cpu setting trains the main claim's SimCSE baseline past the
    gate, from the committed probe tables (``BASELINE_PROBES``; no checkpoint selection, so the noise bound is the 95%
    interval's own, k = 1): a probe passes when its interval excludes 0 and its gain reaches the smallest effect of
    Table 1's SimCSE row on ``paper_backbone``; a passing setting fits the cpu profile when both arms on every seed of
    the cpu plan's main claim take at most ``profiles.CPU_NOTEBOOK_BUDGET_SECONDS``, at the probe's seconds per run."""
    from ...runs import plans, probe_tables, profiles
    from .reported import table1_gain
    from .results import paper_row
    from .results import smallest_effect as claim_effect

    smallest_effect = claim_effect(table1_gain(paper_row("simcse", paper_backbone)))[0]
    cpu = plans.load_plan(plans.plan_path("cpu")).notebooks["30_hicl"]
    fits, budget_seconds = 2 * len(cpu.get("main_claim_seeds", [0])), profiles.CPU_NOTEBOOK_BUDGET_SECONDS

    lines = [
        "**Does any cpu setting train SimCSE past the gate?** The committed probes (plain SimCSE, no checkpoint "
        "selection, the last weights against the untrained backbone on the same STS-B dev pairs; commands and "
        "machine in `benchmarks/results/`):",
        "",
    ]
    passing = []
    for backbone, name in BASELINE_PROBES.items():
        for row in probe_tables.load(name):
            moved = row["low"] > 0 and row["difference"] >= smallest_effect
            lines.append(f"- {backbone}, {probe_tables.row_line(row)}: {'past' if moved else 'not past'} the gate")
            if moved:
                passing.append((backbone, row))
    lines.append("")
    if not passing:
        lines.append(
            f"No probed setting moves SimCSE's dev score by the claim's smallest effect ({smallest_effect:.2f}) with "
            "an interval above 0: the main claim is not tested at any of them."
        )
        return "\n".join(lines)
    backbone, row = min(passing, key=lambda item: item[1]["seconds"])
    total = fits * row["seconds"]
    fit = "within" if total <= budget_seconds else "past"
    lines.append(
        f"Past the gate: {backbone} ({row['setting']}), +{row['difference']:.2f} in {row['steps']} steps. One such "
        f"run took {row['seconds']:.0f} s on the probe's machine; the main claim needs {fits} of them (both arms on "
        f"every seed), about {total:.0f} s, {fit} the cpu profile's {budget_seconds / 60:.0f}-minute budget for the "
        "whole notebook"
        + (
            ": no probed setting trains the baseline past the gate within the cpu budget, so the cpu profile keeps "
            "the cheaper stand-in, whose gate decides whether the main claim is tested (section 6); the `paper` "
            "profile (BERT-base) is the test of the paper's setting."
            if fit == "past"
            else "."
        )
    )
    return "\n".join(lines)
