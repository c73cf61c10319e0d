"""Synthetic paired test pairs for claims on several training seeds: each seed's interval and the data it was
computed from (what ``claims.claim(..., paired=...)`` decides a multi-seed claim on). Pure statistics, no model."""

from __future__ import annotations

import numpy as np

from stsnb.evaluation import stats


def paired_seeds(seed_means: dict[str, float], rng: np.random.Generator, n: int = 400) -> tuple[dict, dict]:
    """Per seed the test pairs of one task, shared by every seed, ``a`` better than ``b`` by roughly the given amount
    (Spearman x100; negative: worse), and each seed's paired interval computed from them."""
    gold = rng.uniform(0, 5, n)
    b = gold + rng.normal(0, 2.0, n)
    data, intervals = {}, {}
    for label, mean in seed_means.items():
        a = gold + (b - gold) * (1 - mean / 40) + rng.normal(0, 0.05, n)
        data[label] = {"task": (gold, a, b)}
        intervals[label] = stats.paired_spearman_difference(gold, a, b, n_resamples=500)
    return data, intervals


def fit_result(
    moved: str = "trained", *, step: int = 10, steps: int = 20, change: float | None = 0.01, dev: float | None = 70.0
):
    """A ``TrainResult`` whose dev records (step 0 and the kept evaluation, two evaluations after step 0) show an arm
    that ``moved``: "trained" (its dev error shrinks on every pair: a gain far above the best-of-2 noise bound),
    "lost" (its dev error grows: a dev loss) or "stayed" (the kept checkpoint is its start). ``dev``: the kept score
    selection reports (what ``best_by_dev`` compares)."""
    from stsnb.evaluation.evaluate import DevScore
    from stsnb.training.config import TrainResult

    rng = np.random.default_rng(17)
    gold = rng.uniform(0, 5, 300)
    error = rng.normal(0, 2.5, 300)
    start = DevScore(stats.spearman_x100(gold + error, gold), gold, gold + error)
    factor = {"trained": 0.6, "lost": 1.6, "stayed": 1.0}[moved]
    kept = (
        start
        if moved == "stayed"
        else DevScore(stats.spearman_x100(gold + factor * error, gold), gold, gold + factor * error)
    )
    history = [
        {"step": 0, "dev": start.score},
        {"step": steps // 2, "dev": kept.score},
        {"step": steps, "dev": kept.score},
    ]
    return TrainResult(
        steps, dev, step, 1.0, history, weight_change=change, dev_start=start.record(), dev_kept=kept.record()
    )


def stored_claim(text: str, intervals: dict, both: tuple[float, float, float], **kwargs) -> dict:
    """A claim row on several seeds as a run stores it, its seeds-and-pairs interval ``both`` (difference, low, high)
    given instead of computed from test pairs: synthetic rows for the code that reads stored rows (summary.md, the
    answer sheet, the book), which never recomputes an interval."""
    from unittest import mock

    from stsnb.evaluation import claims, seed_bootstrap

    given = seed_bootstrap.SeedsAndPairsDifference(
        *both, n=100, confidence_level=0.95, n_resamples=2000, method="percentile", seed=0, standard_error=0.0,
        seeds=len(intervals), pairs="shared",
    )  # fmt: skip
    with mock.patch.object(claims, "_seeds_and_pairs", return_value=given):
        return claims.claim(text, intervals, **kwargs)
