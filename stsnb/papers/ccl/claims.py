"""The paper's claims checked on our runs: paired differences with bootstrap intervals and the verdict rule of
``stsnb.stats``, in one place (a change of the statistics touches only this module).

Spearman differences (the paper's headline metric, Section 4.2) get a paired bootstrap interval over the evaluation
rows (``stats.paired_spearman_difference``); Pearson differences are reported as point values. The over-estimation
count of Appendix A gets a paired bootstrap over quadruples (:func:`paired_count_difference`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ... import stats
from .training import RunOutcome


def _check_same_rows(a: RunOutcome, b: RunOutcome) -> None:
    if a.evaluation.sources != b.evaluation.sources:
        raise ValueError(f"{a.name} and {b.name} were scored on different rows: a paired comparison needs the same")


def spearman_claim(
    claim: str,
    a: RunOutcome,
    b: RunOutcome,
    paper_direction: int = +1,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
    paper_difference: float | None = None,
) -> dict:
    """``a - b`` in Spearman x100 on the same evaluation rows, its paired 95% interval and the verdict
    (``supported`` / ``contradicted`` / ``unresolved``; ``paper_direction`` = +1 when the paper has a > b).

    The row also carries the Pearson difference (point value) and, when given, the paper's own difference.
    """
    _check_same_rows(a, b)
    interval = stats.paired_spearman_difference(
        a.evaluation.gold, a.evaluation.predictions, b.evaluation.predictions, n_resamples=n_resamples, seed=seed
    )
    row = stats.claim_row(claim, {f"seed {seed}": interval}, paper_direction)
    row.update(
        a=a.name,
        b=b.name,
        spearman_a=a.evaluation.spearman,
        spearman_b=b.evaluation.spearman,
        pearson_difference=a.evaluation.pearson - b.evaluation.pearson,
        paper_difference=paper_difference,
        interval=interval.describe(),
    )
    return row


def paired_count_difference(
    flags_a: Sequence[bool], flags_b: Sequence[bool], *, n_resamples: int = 2000, seed: int = 0, level: float = 0.95
) -> tuple[float, float, float]:
    """``sum(flags_a) - sum(flags_b)`` with a paired percentile bootstrap interval over the items (quadruples)."""
    a, b = np.asarray(flags_a, dtype=np.float64), np.asarray(flags_b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or len(a) == 0:
        raise ValueError(f"flags_a and flags_b must be 1-D of one non-zero length, got {a.shape} and {b.shape}")
    rng = np.random.default_rng(seed)
    difference = a - b
    draws = rng.integers(0, len(a), size=(n_resamples, len(a)))
    replicates = difference[draws].sum(axis=1)
    low, high = np.quantile(replicates, [(1 - level) / 2, (1 + level) / 2])
    return float(difference.sum()), float(low), float(high)


def count_claim(
    claim: str, flags_a: Sequence[bool], flags_b: Sequence[bool], paper_direction: int, *, seed: int = 0
) -> dict:
    """Appendix A: the difference of over-estimated counts (a - b), its paired interval and the verdict."""
    difference, low, high = paired_count_difference(flags_a, flags_b, seed=seed)
    return {
        "claim": claim,
        "paper_direction": paper_direction,
        "difference": difference,
        "low": low,
        "high": high,
        "interval": f"{difference:+.0f} [{low:+.0f}, {high:+.0f}]",
        "verdict": stats.verdict((difference, low, high), paper_direction),
    }
