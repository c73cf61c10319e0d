"""The verdict rules: what a claim's intervals say, how large an effect they can see, how many they are.

- :func:`verdict` -- ``supported`` when the interval of every seed run excludes 0 in the paper's direction,
  ``contradicted`` when every one excludes 0 the other way, otherwise ``unresolved``.
- :func:`equivalence_verdict` -- for a robustness claim ("X hardly matters"): ``equivalent`` when every seed's
  interval lies inside +-margin, ``contradicted`` when every one lies wholly outside it on one side.
- :func:`claim_row` -- one claim's row for metrics.json / results tables (difference, envelope, seeds, verdict).
- :func:`detectable_effect` -- the smallest true difference an interval of a given half-width detects with 80%
  power at 5% two-sided (a normal approximation).
- :func:`multiplicity` -- how many intervals a run computed and how many of them would exclude 0 by chance alone.

The intervals themselves come from ``stsnb.evaluation.stats`` (one seed) and ``stsnb.evaluation.seed_bootstrap``
(seeds and pairs).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Literal, NamedTuple

import numpy as np
from scipy.stats import norm

from .stats import PairedDifference, across_seeds, check_confidence_level, check_direction, interval_direction

Verdict = Literal["supported", "contradicted", "unresolved", "equivalent", "not tested"]


SUPPORTED: Verdict = "supported"


CONTRADICTED: Verdict = "contradicted"


UNRESOLVED: Verdict = "unresolved"


EQUIVALENT: Verdict = "equivalent"  # a robustness claim: every seed's interval inside +-margin


NOT_TESTED: Verdict = "not tested"  # a precondition failed (``stsnb.evaluation.claims``)


VERDICTS: tuple[Verdict, ...] = (SUPPORTED, CONTRADICTED, UNRESOLVED, EQUIVALENT, NOT_TESTED)


DEFAULT_MARGIN = 1.0  # Spearman x100 points: "X hardly matters" means |difference| < 1 point


def _bounds(interval, position: int) -> tuple[float, float, float]:
    """(difference, low, high) of a PairedDifference or a plain 3-tuple, checked."""
    try:
        difference, low, high = (float(v) for v in interval)
    except (TypeError, ValueError) as err:
        raise ValueError(f"interval {position} must be a PairedDifference or (difference, low, high): {err}") from err
    if not all(math.isfinite(v) for v in (difference, low, high)):
        raise ValueError(f"interval {position} is not finite: {(difference, low, high)}")
    if low > high:
        raise ValueError(f"interval {position} has low {low} above high {high}")
    return difference, low, high


def _as_list(intervals) -> list:
    if isinstance(intervals, PairedDifference):
        return [intervals]
    if isinstance(intervals, Mapping):
        return list(intervals.values())
    items = list(intervals)
    if len(items) == 3 and all(isinstance(v, int | float | np.floating) for v in items):
        return [tuple(items)]  # one plain (difference, low, high)
    return items


def verdict(intervals, paper_direction: int = +1) -> Verdict:
    """The verdict on a claim from one interval or one interval per seed run.

    ``paper_direction`` is +1 when the paper says a > b (difference above 0), -1 when it says a < b.
    ``supported``: every seed's interval excludes 0 on the paper's side; ``contradicted``: every seed's interval
    excludes 0 on the other side; anything else (an interval containing or touching 0, or seeds that disagree)
    is ``unresolved``. ``intervals``: a PairedDifference, a (difference, low, high) tuple, or a sequence or
    {seed: interval} mapping of them.
    """
    paper_direction = check_direction(paper_direction)
    bounds = [_bounds(v, i) for i, v in enumerate(_as_list(intervals))]
    if not bounds:
        raise ValueError("verdict needs at least one interval")
    directions = {interval_direction(low, high) for _, low, high in bounds}
    if directions == {paper_direction}:
        return SUPPORTED
    if directions == {-paper_direction}:
        return CONTRADICTED
    return UNRESOLVED


def equivalence_verdict(intervals, margin: float = DEFAULT_MARGIN) -> Verdict:
    """The verdict on a robustness claim ("the setting hardly matters") from one interval or one per seed run.

    ``equivalent``: every seed's interval lies inside [-margin, +margin]: two one-sided tests (TOST), each at half
    the interval's complement, so with 95% intervals each side is tested at 2.5% (a 5% TOST would use 90%
    intervals; ours is the stricter); ``contradicted``: every seed's interval lies wholly above +margin, or wholly
    below -margin (the setting matters by more than the margin); otherwise ``unresolved``. A direction test can
    never support "X does not matter": an interval that contains 0 says only that we could not tell.
    """
    margin = float(margin)
    if not math.isfinite(margin) or margin <= 0:
        raise ValueError(f"margin must be a positive number of Spearman x100 points, got {margin!r}")
    bounds = [_bounds(v, i) for i, v in enumerate(_as_list(intervals))]
    if not bounds:
        raise ValueError("equivalence_verdict needs at least one interval")
    if all(-margin < low and high < margin for _, low, high in bounds):
        return EQUIVALENT
    if all(low > margin for _, low, _ in bounds) or all(high < -margin for _, _, high in bounds):
        return CONTRADICTED
    return UNRESOLVED


def claim_row(claim: str, intervals, paper_direction: int = +1) -> dict:
    """One claim as a JSON-ready row: the verdict, the mean and spread of the difference over seeds, and the
    envelope of the per-seed intervals (lowest low, highest high).

    The envelope excludes 0 on one side exactly when every seed's interval does, so ``low``/``high`` agree with
    the verdict. ``intervals``: as for :func:`verdict`; a {seed: interval} mapping keeps the seeds in
    ``per_seed``.
    """
    paper_direction = check_direction(paper_direction)
    items = _as_list(intervals)
    labels = list(intervals) if isinstance(intervals, Mapping) else [None] * len(items)
    bounds = [_bounds(v, i) for i, v in enumerate(items)]
    if not bounds:
        raise ValueError(f"claim {claim!r} needs at least one interval")
    spread = across_seeds([d for d, _, _ in bounds])
    per_seed = []
    for label, item, (difference, low, high) in zip(labels, items, bounds, strict=True):
        entry = item.to_dict() if isinstance(item, PairedDifference) else {}
        entry.update(seed_run=label, difference=difference, low=low, high=high)
        per_seed.append(entry)
    return {
        "claim": claim,
        "paper_direction": paper_direction,
        "verdict": verdict(items, paper_direction),
        "difference": spread.mean,
        "difference_std": spread.std,
        "difference_min": spread.min,
        "difference_max": spread.max,
        "seeds": spread.n,
        "low": min(low for _, low, _ in bounds),
        "high": max(high for _, _, high in bounds),
        "per_seed": per_seed,
    }


DEFAULT_POWER = 0.8


def detectable_effect(
    low: float, high: float, *, confidence_level: float = 0.95, power: float = DEFAULT_POWER
) -> float:
    """The smallest true difference an interval ``[low, high]`` would detect (exclude 0 on its side) with
    probability ``power``: ``half-width x (z_{(1+level)/2} + z_{power}) / z_{(1+level)/2}``; at a 95% interval and
    80% power, ``half-width x (1.960 + 0.842) / 1.960 = 1.43 x half-width``.

    Assumption: the estimate is roughly normal around the true difference with a standard error SE = half-width /
    z_{(1+level)/2} that does not depend on the true difference (the percentile interval of a symmetric bootstrap
    distribution). A true difference delta then gives an interval above 0 when the estimate exceeds z SE, which
    happens with probability Phi(delta / SE - z): ``power`` at delta = (z + z_power) SE. For a claim judged on
    several seeds give the widest seed's interval (every seed must exclude 0; the seeds share their test pairs, so
    their intervals move together and the widest one decides, approximately)."""
    low, high = float(low), float(high)
    if not (math.isfinite(low) and math.isfinite(high)) or low > high:
        raise ValueError(f"detectable_effect needs a finite interval with low <= high, got [{low}, {high}]")
    level = check_confidence_level(confidence_level)
    if not 0.0 < float(power) < 1.0:
        raise ValueError(f"power must lie strictly between 0 and 1, got {power!r}")
    z = float(norm.ppf((1 + level) / 2))
    return (high - low) / 2 * (z + float(norm.ppf(power))) / z


class Multiplicity(NamedTuple):
    """How many intervals were computed at ``confidence_level`` and how many would exclude 0 by chance alone if
    no difference were real (``(1 - level) x intervals``, an expectation: the intervals are not independent)."""

    intervals: int
    confidence_level: float
    expected_false: float

    def describe(self) -> str:
        """ "38 intervals computed; about 1.9 (5% of them) would exclude 0 by chance if no difference were real"."""
        share = f"{100 * (1 - self.confidence_level):g}%"
        return (
            f"{self.intervals} interval{'s' * (self.intervals != 1)} computed; about {self.expected_false:.1f} "
            f"({share} of them) would exclude 0 by chance if no difference were real"
        )


def multiplicity(intervals: int, confidence_level: float = 0.95) -> Multiplicity:
    """:class:`Multiplicity` of ``intervals`` intervals: the expected number excluding 0 by chance is
    ``(1 - confidence_level) x intervals`` (0.05 x n at 95%), whatever their dependence (linearity of expectation);
    how many would do so at once does depend on it."""
    if isinstance(intervals, bool) or int(intervals) != intervals or intervals < 0:
        raise ValueError(f"intervals must be a non-negative integer, got {intervals!r}")
    level = check_confidence_level(confidence_level)
    return Multiplicity(int(intervals), level, (1 - level) * int(intervals))
