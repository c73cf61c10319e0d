"""Ours beside HiCL's claims: per-pair predictions on the STS tasks, paired intervals, verdicts (``stsnb.stats``).

The claim of Table 1 is "+HiCL beats the baseline" for each baseline, a difference of seven-task averages. We check
it as ``stsnb.stats.paired_average_difference`` of +HiCL minus the baseline on the same test pairs (a stratified
paired bootstrap), and say whether the baseline itself moved from the untrained backbone (the same statistic,
baseline minus before): a +HiCL difference on a backbone the baseline did not move says nothing about the paper.
All claim and verdict logic is in this module (``plus_hicl_claim``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ... import evaluate, stats

Predictions = evaluate.TaskPredictions  # task -> (gold, cosine of each pair)


def task_predictions(encoder, tasks: str | Sequence[str] = "all", max_pairs: int | None = None, seed: int = 0):
    """``evaluate.task_predictions`` uncached: the encoder's weights change between calls."""
    return evaluate.task_predictions(encoder, tasks, max_pairs, seed, cache=None)


spearman_scores = evaluate.spearman_scores


def paired_difference(a: Predictions, b: Predictions, n_resamples: int = 2000, seed: int = 0):
    """Average over tasks of Spearman(a) - Spearman(b) x100 with its stratified paired bootstrap interval."""
    return stats.paired_predictions_difference(a, b, n_resamples=n_resamples, seed=seed)


def plus_hicl_claim(
    method: str,
    before: Predictions,
    baseline: Mapping[int, Predictions],
    plus_hicl: Mapping[int, Predictions],
    n_resamples: int = 2000,
) -> dict:
    """The Table 1 claim "+HiCL beats <method>" on our runs, one interval per seed, labelled by whether the
    baseline itself moved the backbone (baseline minus ``before``, same test pairs, per seed).

    Returns ``stats.claim_row`` of +HiCL minus baseline plus ``baseline_moved`` ("improved" | "worsened" |
    "did not move", from the verdict on baseline minus before) and that row.
    """
    if set(baseline) != set(plus_hicl) or not baseline:
        raise ValueError(f"baseline and +HiCL need the same seeds, got {sorted(baseline)} and {sorted(plus_hicl)}")
    gains = {seed: paired_difference(plus_hicl[seed], baseline[seed], n_resamples, seed) for seed in baseline}
    moves = {seed: paired_difference(baseline[seed], before, n_resamples, seed) for seed in baseline}
    moved_verdict = stats.verdict(moves, paper_direction=+1)
    label = {stats.SUPPORTED: "improved", stats.CONTRADICTED: "worsened"}.get(moved_verdict, "did not move")
    row = stats.claim_row(f"+HiCL beats {method}", gains, paper_direction=+1)
    row["baseline_moved"] = label
    row["baseline_vs_before"] = stats.claim_row(f"{method} improves the backbone", moves, paper_direction=+1)
    return row
