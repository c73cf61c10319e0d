"""The verdict rules: what a claim's intervals say, how large an effect they can see, how many they are.

- :func:`verdict` -- ``supported`` when the interval of every seed run excludes 0 in the paper's direction,
  ``contradicted`` when every one excludes 0 the other way, otherwise ``unresolved``.
- :func:`equivalence_verdict` -- for a robustness claim ("X hardly matters"): ``equivalent`` when every seed's
  interval lies inside +-margin, ``contradicted`` when every one lies wholly outside it on one side.
- :func:`claim_row` -- one claim's row for metrics.json / results tables (difference, envelope, seeds, verdict).
- :func:`detectable_effect` -- the smallest true difference an interval of a given half-width detects with 80%
  power at 5% two-sided (a normal approximation).
- :func:`multiplicity` -- how many intervals a run computed and how many of them would exclude 0 by chance alone;
  claim and precondition intervals counted apart, timing ranges left out.
- :func:`sized_verdict` -- the verdict that weighs size: ``contradicted`` needs the estimate beyond the
  smallest meaningful effect; an interval wholly inside it reads ``small effect`` (with its side,
  :func:`effect_side`) when it excludes 0, ``no meaningful effect`` when it contains 0.
- :func:`equivalence_reachable` -- whether an equivalence margin is wide enough for "equivalent" to be reachable
  with intervals of a given half-width.

The power of a claim under training variance and the every-seed rule, by simulation: ``stsnb.evaluation.power``.

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

Verdict = Literal[
    "supported", "contradicted", "unresolved", "equivalent", "not tested", "no meaningful effect", "small effect"
]


SUPPORTED: Verdict = "supported"


CONTRADICTED: Verdict = "contradicted"


UNRESOLVED: Verdict = "unresolved"


EQUIVALENT: Verdict = "equivalent"  # a robustness claim: every seed's interval inside +-margin


NOT_TESTED: Verdict = "not tested"  # a precondition failed (``stsnb.evaluation.claims``)


NO_MEANINGFUL_EFFECT: Verdict = "no meaningful effect"  # :func:`sized_verdict`: inside +-the effect, 0 inside too


# :func:`sized_verdict`: the interval excludes 0 but lies inside +-the smallest effect: a direction, too small to matter
SMALL_EFFECT: Verdict = "small effect"


VERDICTS: tuple[Verdict, ...] = (
    SUPPORTED,
    CONTRADICTED,
    UNRESOLVED,
    EQUIVALENT,
    SMALL_EFFECT,
    NO_MEANINGFUL_EFFECT,
    NOT_TESTED,
)


# the verdicts that decide a claim one way or the other (a decisive verdict on one seed is provisional)
DECISIVE: frozenset[str] = frozenset({SUPPORTED, CONTRADICTED, EQUIVALENT, SMALL_EFFECT, NO_MEANINGFUL_EFFECT})


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


def interval_list(intervals) -> list:
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
    bounds = [_bounds(v, i) for i, v in enumerate(interval_list(intervals))]
    if not bounds:
        raise ValueError("verdict needs at least one interval")
    directions = {interval_direction(low, high) for _, low, high in bounds}
    if directions == {paper_direction}:
        return SUPPORTED
    if directions == {-paper_direction}:
        return CONTRADICTED
    return UNRESOLVED


def _check_size(value: float, name: str) -> float:
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive number of Spearman x100 points, got {value!r}")
    return value


def sized_verdict(intervals, paper_direction: int, smallest_effect: float) -> Verdict:
    """The verdict on a direction claim that weighs the size of the difference against ``smallest_effect`` (> 0,
    Spearman x100 points: the smallest difference that would matter, e.g. half the paper's reported effect). A
    direction the intervals show is never hidden, and a verdict against the paper carries the burden of size:

    1. every interval excludes 0 on the paper's side: ``small effect`` when every one also lies wholly inside
       (-smallest_effect, +smallest_effect) (a direction too small to be the paper's effect: "a small effect on the
       paper's side, below +-x"), else ``supported``;
    2. every interval excludes 0 on the other side: ``small effect`` when every one lies inside +-smallest_effect ("a
       small effect against the paper, below +-x"), ``contradicted`` when the mean of the estimates lies beyond
       ``smallest_effect`` on that side, else ``unresolved``;
    3. every interval contains 0 and lies inside +-smallest_effect: ``no meaningful effect``;
    4. otherwise ``unresolved``.

    Which side a small effect lies on is :func:`effect_side`'s. Examples from the committed runs: Translated ReLU
    minus L1, +0.45 [+0.12, +0.78] against +-1.525, is a small effect on the paper's side (it read "no meaningful
    effect" under the rule before this one, which tested the size first and hid the direction); CCL's sigma, -0.03
    [-0.06, -0.01] against +-0.45, a small effect against the paper. ``intervals``: as for :func:`verdict` (one
    deciding interval, or one per seed, all of which must agree).
    """
    paper_direction = check_direction(paper_direction)
    smallest_effect = _check_size(smallest_effect, "smallest_effect")
    bounds = [_bounds(v, i) for i, v in enumerate(interval_list(intervals))]
    if not bounds:
        raise ValueError("sized_verdict needs at least one interval")
    inside = all(-smallest_effect < low and high < smallest_effect for _, low, high in bounds)
    directions = {interval_direction(low, high) for _, low, high in bounds}
    if directions == {paper_direction}:
        return SMALL_EFFECT if inside else SUPPORTED
    if directions == {-paper_direction}:
        if inside:
            return SMALL_EFFECT
        mean = float(np.mean([d for d, _, _ in bounds]))
        return CONTRADICTED if -paper_direction * mean > smallest_effect else UNRESOLVED
    if directions == {0} and inside:
        return NO_MEANINGFUL_EFFECT
    return UNRESOLVED


def effect_side(difference: float, paper_direction: int) -> str:
    """ "on the paper's side" or "against the paper": where a difference lies for a claim of ``paper_direction``."""
    return "on the paper's side" if check_direction(paper_direction) * float(difference) > 0 else "against the paper"


def equivalence_verdict(intervals, margin: float = DEFAULT_MARGIN) -> Verdict:
    """The verdict on a robustness claim ("the setting hardly matters") from one interval or one per seed run.

    ``equivalent``: every seed's interval lies inside [-margin, +margin]: two one-sided tests (TOST), each at half
    the interval's complement, so with 95% intervals each side is tested at 2.5% (a 5% TOST would use 90%
    intervals; ours is the stricter); ``contradicted``: every seed's interval lies wholly above +margin, or wholly
    below -margin (the setting matters by more than the margin); otherwise ``unresolved``. A direction test can
    never support "X does not matter": an interval that contains 0 says only that we could not tell.
    """
    margin = _check_size(margin, "margin")
    bounds = [_bounds(v, i) for i, v in enumerate(interval_list(intervals))]
    if not bounds:
        raise ValueError("equivalence_verdict needs at least one interval")
    if all(-margin < low and high < margin for _, low, high in bounds):
        return EQUIVALENT
    if all(low > margin for _, low, _ in bounds) or all(high < -margin for _, _, high in bounds):
        return CONTRADICTED
    return UNRESOLVED


class Reachability(NamedTuple):
    """Whether "equivalent" is reachable at a margin with intervals of a given half-width; ``sentence`` says so.
    Test it with ``.reachable`` (a tuple is always true)."""

    reachable: bool
    margin: float
    half_width: float
    sentence: str


def equivalence_reachable(margin: float, interval_half_width: float) -> Reachability:
    """Whether an interval of half-width ``interval_half_width`` can lie inside (-margin, +margin) at all: reachable
    exactly when its full width is below the margin's, ``2 x half_width < 2 x margin`` (an interval as wide as the
    margin band, or wider, cannot fit strictly inside it wherever its estimate falls, so :func:`equivalence_verdict`
    cannot say "equivalent": a margin narrower than one seed's interval makes "equivalent" unreachable, which a claim
    must then say). Give the widest seed's half-width: every seed's interval must fit. Reachable
    is necessary, not sufficient: the estimate must also lie within ``margin - half_width`` of 0."""
    margin = _check_size(margin, "margin")
    half = float(interval_half_width)
    if not math.isfinite(half) or half < 0:
        raise ValueError(f"interval_half_width must be a non-negative number, got {interval_half_width!r}")
    reachable = 2 * half < 2 * margin
    if reachable:
        sentence = (
            f"equivalence reachable: one seed's interval (+-{half:.2f}) is narrower than the margin +-{margin:g}, so "
            f"an estimate within {margin - half:.2f} of 0 would read equivalent"
        )
    else:
        sentence = (
            f"equivalence not reachable at this size: one seed's interval (+-{half:.2f}) is at least as wide as the "
            f"margin +-{margin:g}, so no interval can lie inside it and 'equivalent' cannot be the verdict"
        )
    return Reachability(reachable, margin, half, sentence)


def claim_row(claim: str, intervals, paper_direction: int = +1) -> dict:
    """One claim as a JSON-ready row: the verdict, the mean and spread of the difference over seeds, and the
    envelope of the per-seed intervals (lowest low, highest high).

    The envelope excludes 0 on one side exactly when every seed's interval does, so ``low``/``high`` agree with
    the verdict. ``intervals``: as for :func:`verdict`; a {seed: interval} mapping keeps the seeds in
    ``per_seed``.
    """
    paper_direction = check_direction(paper_direction)
    items = interval_list(intervals)
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
    no difference were real (``(1 - level) x intervals``, an expectation: the intervals are not independent).

    ``intervals``: the claims' intervals (all intervals in the old call, ``multiplicity(n)``); ``preconditions``: the
    preconditions' intervals (e.g. "the baseline moved the encoder", one per seed), None when not counted apart;
    ``timing_ranges_excluded``: timing ranges (min..max of measured seconds, no test of anything) left out of both."""

    intervals: int
    confidence_level: float
    expected_false: float
    preconditions: int | None = None
    timing_ranges_excluded: int = 0

    @property
    def total(self) -> int:
        """Claim and precondition intervals together."""
        return self.intervals + (self.preconditions or 0)

    def describe(self) -> str:
        """ "38 intervals computed; about 1.9 (5% of them) would exclude 0 by chance if no difference were real";
        with preconditions counted apart "38 claim intervals and 12 precondition intervals computed (50 in all);
        about 2.5 ...", and "; 1 timing range not counted (measured seconds, not a test)" when one was left out."""
        share = f"{100 * (1 - self.confidence_level):g}%"
        chance = (
            f"about {self.expected_false:.1f} ({share} of them) would exclude 0 by chance if no difference were real"
        )
        if self.preconditions is None:
            text = f"{_count(self.intervals, 'interval')} computed; {chance}"
        else:
            text = (
                f"{_count(self.intervals, 'claim interval')} and {_count(self.preconditions, 'precondition interval')}"
                f" computed ({self.total} in all); {chance}"
            )
        if self.timing_ranges_excluded:
            ranges = _count(self.timing_ranges_excluded, "timing range")
            text += f"; {ranges} not counted (measured seconds, not a test)"
        return text


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"


def _check_count(value, name: str) -> int:
    if isinstance(value, bool) or int(value) != value or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


def multiplicity(
    intervals: int,
    confidence_level: float = 0.95,
    *,
    preconditions: int | None = None,
    timing_ranges_excluded: int = 0,
) -> Multiplicity:
    """:class:`Multiplicity` of ``intervals`` intervals: the expected number excluding 0 by chance is
    ``(1 - confidence_level) x intervals`` (0.05 x n at 95%), whatever their dependence (linearity of expectation);
    how many would do so at once does depend on it.

    Why (the count omitted the precondition intervals and included a timing range): ``preconditions`` counts
    the preconditions' intervals apart from the claims' (``intervals``) and adds them to the expectation;
    ``timing_ranges_excluded`` says how many timing ranges the caller left out of both (they are ranges of measured
    seconds, not intervals that test a difference), so the description can say so. ``stsnb.evaluation.claims
    .interval_counts`` counts all three from claim rows. ``multiplicity(n)`` and ``multiplicity(n, level)`` are
    unchanged."""
    intervals = _check_count(intervals, "intervals")
    if preconditions is not None:
        preconditions = _check_count(preconditions, "preconditions")
    timing_ranges_excluded = _check_count(timing_ranges_excluded, "timing_ranges_excluded")
    level = check_confidence_level(confidence_level)
    total = intervals + (preconditions or 0)
    return Multiplicity(intervals, level, (1 - level) * total, preconditions, timing_ranges_excluded)
