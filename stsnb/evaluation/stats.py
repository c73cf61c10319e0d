"""Paired bootstrap intervals for Spearman differences, and their spread over seeds.

A paper claim such as "loss A beats loss B" is checked on our own runs as the difference
Spearman(A) - Spearman(B) x100 on the same test pairs, with a paired bootstrap interval (the pairs are resampled
once and both systems are scored on the same resample, so the shared difficulty of the pairs cancels).

- :func:`paired_spearman_difference` -- one task: (difference, low, high).
- :func:`paired_average_difference` -- the unweighted mean over several tasks (the papers' seven-task "Avg."
  column): every bootstrap replicate resamples the pairs of every task independently (a stratified bootstrap)
  and averages the per-task differences of that replicate.
- :func:`paired_predictions_difference` -- the same for two systems' ``task -> (gold, predictions)`` mappings.
- :func:`across_seeds` -- mean and spread of a number over training seeds, reported beside the interval.
- :func:`paired_grouped_difference` -- one task whose rows come in dependent groups (C-STS: one sentence pair under
  two conditions): the bootstrap resamples whole groups.

What the intervals say about a claim is decided in ``stsnb.evaluation.verdict_rules``; the interval over training
seeds and test pairs together is ``stsnb.evaluation.seed_bootstrap``.

Spearman here is scipy's (Pearson correlation of mid-ranks, ties averaged), x100, exactly as
``stsnb.evaluation.evaluate.correlations`` reports it.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Literal, NamedTuple

import numpy as np
from scipy.stats import DegenerateDataWarning, bootstrap, spearmanr

Method = Literal["percentile", "basic", "BCa"]
METHODS: tuple[str, ...] = ("percentile", "basic", "BCa")
MIN_PAIRS = 3

# Resamples per batch are chosen so that one (batch x pairs) float array stays near 8 MiB (about 250 resamples of
# SICK-R's 4927 pairs); the statistic holds a handful of such arrays at a time.
BATCH_ELEMENTS = 1 << 20


@dataclass(frozen=True)
class PairedDifference:
    """Spearman(a) - Spearman(b) x100 with its bootstrap interval; iterates as ``(difference, low, high)``.

    ``n`` is the number of test pairs (summed over tasks for an average), ``tasks`` the per-task point
    differences of an average (empty for a single task), ``standard_error`` the standard deviation of the
    bootstrap replicates, ``seed`` the bootstrap's seed.
    """

    difference: float
    low: float
    high: float
    n: int
    confidence_level: float
    n_resamples: int
    method: str
    seed: int | None
    standard_error: float
    tasks: dict[str, float] = field(default_factory=dict, compare=False)

    def __iter__(self) -> Iterator[float]:
        return iter(self.as_tuple())

    def as_tuple(self) -> tuple[float, float, float]:
        return (self.difference, self.low, self.high)

    @property
    def direction(self) -> int:
        """+1 when the interval lies above 0, -1 when below, 0 when it contains (or touches) 0."""
        return interval_direction(self.low, self.high)

    @property
    def excludes_zero(self) -> bool:
        return self.direction != 0

    def describe(self) -> str:
        """``+1.23 [+0.40, +2.05]`` (x100 Spearman points, interval at ``confidence_level``)."""
        return f"{self.difference:+.2f} [{self.low:+.2f}, {self.high:+.2f}]"

    def to_dict(self) -> dict:
        """Plain JSON-ready values for metrics.json."""
        return asdict(self)


class SeedSpread(NamedTuple):
    """Mean and spread of one number over seed runs; ``std`` (ddof=1) is None for a single seed."""

    mean: float
    std: float | None
    min: float
    max: float
    n: int

    def to_dict(self) -> dict:
        return self._asdict()


# ---- input checks --------------------------------------------------------------------------------------------


def check_confidence_level(confidence_level: float) -> float:
    value = float(confidence_level)
    if not 0.0 < value < 1.0:
        raise ValueError(f"confidence_level must lie strictly between 0 and 1, got {confidence_level!r}")
    return value


def check_n_resamples(n_resamples: int) -> int:
    if isinstance(n_resamples, bool) or int(n_resamples) != n_resamples or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    return int(n_resamples)


def _check_method(method: str) -> str:
    for known in METHODS:
        if str(method).lower() == known.lower():
            return known
    raise ValueError(f"method must be one of {METHODS}, got {method!r}")


def check_seed(seed: int | None) -> int | None:
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
    return int(seed)


def interval_direction(low: float, high: float) -> int:
    return 1 if low > 0 else -1 if high < 0 else 0


def check_direction(paper_direction: int) -> int:
    if isinstance(paper_direction, bool) or paper_direction not in (1, -1):
        raise ValueError(f"paper_direction must be +1 or -1, got {paper_direction!r}")
    return int(paper_direction)


def _scores(values, name: str, where: str) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name}{where} must be numbers: {err}") from err
    if array.ndim != 1:
        raise ValueError(f"{name}{where} must be one-dimensional (one score per pair), got shape {array.shape}")
    bad = ~np.isfinite(array)
    if bad.any():
        nan = int(np.isnan(array).sum())
        raise ValueError(
            f"{name}{where} has {int(bad.sum())} non-finite values of {len(array)} ({nan} NaN, "
            f"{int(bad.sum()) - nan} inf), first at index {int(np.flatnonzero(bad)[0])}"
        )
    return array


def task_arrays(gold, pred_a, pred_b, where: str = "") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Checked float arrays: one-dimensional, equal lengths, at least 3 pairs, finite, not constant."""
    arrays = {name: _scores(v, name, where) for name, v in (("gold", gold), ("pred_a", pred_a), ("pred_b", pred_b))}
    n = len(arrays["gold"])
    for name in ("pred_a", "pred_b"):
        if len(arrays[name]) != n:
            raise ValueError(f"{name}{where} has {len(arrays[name])} values but gold has {n}: one score per pair")
    if n < MIN_PAIRS:
        raise ValueError(f"a paired Spearman difference{where} needs at least {MIN_PAIRS} pairs, got {n}")
    for name, array in arrays.items():
        if np.all(array == array[0]):
            raise ValueError(f"{name}{where} is constant ({n} equal values): Spearman is undefined")
    return arrays["gold"], arrays["pred_a"], arrays["pred_b"]


# ---- Spearman of resamples -----------------------------------------------------------------------------------


def _tie_groups(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Per value, the index of its tie group in ascending order (equal values share a group); number of groups."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.r_[True, ordered[1:] != ordered[:-1]]
    group = np.empty(len(values), dtype=np.intp)
    group[order] = np.cumsum(starts) - 1
    return group, int(starts.sum())


def _centred_midranks(counts: np.ndarray, group: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Mid-ranks minus their mean, per original pair, in every resample; and the sum of squares per resample.

    In a resample where tie group g was drawn c_g times, its copies take the mid-rank (draws of lower groups) +
    (c_g + 1) / 2, which is what scipy.stats.rankdata gives the resampled values; the mean rank is (N + 1) / 2.
    """
    rows = counts.shape[0]
    flat = (group[None, :] + n_groups * np.arange(rows)[:, None]).ravel()
    per_group = np.bincount(flat, weights=counts.ravel(), minlength=rows * n_groups).reshape(rows, n_groups)
    total = per_group.sum(axis=1, keepdims=True)
    ranks = np.cumsum(per_group, axis=1) - per_group + (per_group + 1) / 2 - (total + 1) / 2
    return ranks[:, group], np.einsum("ij,ij->i", per_group, ranks * ranks)


def bootstrap_counts(indices: np.ndarray, n: int) -> np.ndarray:
    """How often each of the n pairs occurs in each resample (rows of ``indices``)."""
    indices = np.atleast_2d(np.asarray(indices))
    rows = indices.shape[0]
    flat = (indices + n * np.arange(rows)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(np.float64)


class TaskRanks:
    """One task's pairs prepared for fast Spearman of any resample given as index arrays."""

    def __init__(self, gold: np.ndarray, pred_a: np.ndarray, pred_b: np.ndarray):
        self.n = len(gold)
        self.gold = _tie_groups(gold)
        self.pred_a = _tie_groups(pred_a)
        self.pred_b = _tie_groups(pred_b)

    def same_order(self) -> bool:
        """pred_a and pred_b rank the pairs identically (ties included), so every resample's difference is 0."""
        return bool(np.array_equal(self.pred_a[0], self.pred_b[0]))

    def difference(self, indices: np.ndarray) -> np.ndarray:
        """Spearman(a) - Spearman(b) x100 for every row of ``indices`` (each row one resample of pair indices)."""
        return self.difference_of_counts(bootstrap_counts(indices, self.n))

    def difference_of_counts(self, counts: np.ndarray) -> np.ndarray:
        """The same from how often each pair was drawn in each resample (rows of ``counts``, shape (rows, n))."""
        gold, gold_ss = _centred_midranks(counts, *self.gold)
        weighted_gold = counts * gold
        out = []
        for groups in (self.pred_a, self.pred_b):
            ranks, ss = _centred_midranks(counts, *groups)
            with np.errstate(invalid="ignore", divide="ignore"):  # a constant resample -> NaN, reported by caller
                out.append(np.einsum("ij,ij->i", weighted_gold, ranks) / np.sqrt(gold_ss * ss))
        return 100 * (out[0] - out[1])


def resampled_spearman(gold, pred, indices) -> np.ndarray:
    """Spearman(pred, gold) x100 of every resample: row r of ``indices`` lists the pair indices drawn.

    Equals ``100 * scipy.stats.spearmanr(pred[i], gold[i])[0]`` for each row ``i``, computed without sorting:
    the resample's mid-ranks follow from how often each tie group of the original scores was drawn (O(n) per
    resample instead of rankdata's O(n log n) sort, about 4x faster at SICK-R's 4927 pairs).
    """
    gold_arr, pred_arr = _scores(gold, "gold", ""), _scores(pred, "pred", "")
    n = len(gold_arr)
    if len(pred_arr) != n:
        raise ValueError(f"pred has {len(pred_arr)} values but gold has {n}: one score per pair")
    rows = np.atleast_2d(np.asarray(indices))
    if rows.ndim != 2 or not np.issubdtype(rows.dtype, np.integer) or rows.size == 0:
        raise ValueError(f"indices must be a non-empty integer array of shape (resamples, drawn), got {rows.shape}")
    if rows.min() < 0 or rows.max() >= n:
        raise ValueError(f"indices must lie in [0, {n}), got {rows.min()}..{rows.max()}")
    counts = bootstrap_counts(rows, n)
    gold_ranks, gold_ss = _centred_midranks(counts, *_tie_groups(gold_arr))
    ranks, ss = _centred_midranks(counts, *_tie_groups(pred_arr))
    with np.errstate(invalid="ignore", divide="ignore"):
        return 100 * np.einsum("ij,ij,ij->i", counts, gold_ranks, ranks) / np.sqrt(gold_ss * ss)


def spearman_x100(pred: np.ndarray, gold: np.ndarray) -> float:
    return 100 * float(spearmanr(pred, gold)[0])


# ---- paired bootstrap ----------------------------------------------------------------------------------------


def paired_average_difference(
    tasks: Mapping[str, tuple[Sequence[float], Sequence[float], Sequence[float]]],
    *,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    seed: int | None = 0,
    method: Method = "percentile",
) -> PairedDifference:
    """Mean over tasks of Spearman(a) - Spearman(b) x100, with a stratified paired bootstrap interval.

    ``tasks`` maps a task name to ``(gold, pred_a, pred_b)``. The point estimate is the unweighted mean of the
    per-task differences (the papers' "Avg." column is the plain mean of the seven tasks). Each bootstrap
    replicate draws, for every task independently, as many pairs as the task has (with replacement, gold and
    both predictions of a pair kept together), scores both systems on that resample, and averages the per-task
    differences of the replicate.

    scipy expresses this directly: ``scipy.stats.bootstrap`` resamples each sample of an *unpaired* call
    independently, so the samples passed are the index arrays ``arange(n_task)`` of the tasks (sizes may differ)
    and the statistic looks the pairs up by index. For one task this is exactly scipy's ``paired=True``, which
    also resamples ``arange(n)`` and indexes every sample with it (same draws from the same seeded Generator).

    ``method="percentile"`` (default) takes the (1 - level)/2 and (1 + level)/2 quantiles of the replicates.
    Chosen over scipy's default BCa because BCa's acceleration needs a jackknife, one statistic evaluation per
    pair: O(n^2), 3x the time on SICK-R alone and far more for the seven-task average (the jackknife of each
    task re-scores all seven); BCa is also undefined when the replicates are all equal. What BCa buys is small
    here: on bivariate-normal scores with a known Spearman difference (n = 150 and 400, 300 trials each) both
    covered 95% of the time; the ends differ by about a tenth of a point on real STS-B predictions
    (tests/test_stats.py) and by up to 0.4 points (0.3 standard errors) on noisy predictions of SICK-R's gold.
    ``"BCa"`` and ``"basic"`` are passed to scipy on request.

    When pred_a and pred_b order the pairs of every task identically (ties included, e.g. identical
    predictions), every replicate's difference is exactly 0, so (0, 0, 0) is returned without resampling.
    ``seed`` seeds ``numpy.random.default_rng``; None draws fresh entropy (not reproducible).
    """
    if not isinstance(tasks, Mapping) or not tasks:
        raise ValueError("tasks must be a non-empty mapping of task name -> (gold, pred_a, pred_b)")
    n_resamples = check_n_resamples(n_resamples)
    confidence_level = check_confidence_level(confidence_level)
    method = _check_method(method)
    seed = check_seed(seed)
    prepared: dict[str, TaskRanks] = {}
    per_task: dict[str, float] = {}
    for name, triple in tasks.items():
        if not isinstance(triple, tuple | list) or len(triple) != 3:
            raise ValueError(f"tasks[{name!r}] must be (gold, pred_a, pred_b), got {type(triple).__name__}")
        gold, pred_a, pred_b = task_arrays(*triple, where=f" (task {name!r})")
        prepared[name] = TaskRanks(gold, pred_a, pred_b)
        per_task[name] = spearman_x100(pred_a, gold) - spearman_x100(pred_b, gold)
    difference = float(np.mean(list(per_task.values())))
    total = sum(task.n for task in prepared.values())
    result = dict(
        n=total,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        method=method,
        seed=seed,
        tasks=per_task if len(tasks) > 1 else {},
    )
    if all(task.same_order() for task in prepared.values()):
        return PairedDifference(0.0, 0.0, 0.0, standard_error=0.0, **result)

    ranked = list(prepared.values())

    def statistic(*indices: np.ndarray, axis: int = -1) -> np.ndarray:
        # scipy passes one index array per task: (resamples, n_task) rows, or the 1-D originals (BCa, basic)
        per = [task.difference(i) for task, i in zip(ranked, indices, strict=True)]
        out = np.mean(np.broadcast_arrays(*per), axis=0)
        return out if np.ndim(indices[0]) > 1 else out[0]

    with warnings.catch_warnings():  # scipy's DegenerateDataWarning: every NaN outcome becomes an error below
        warnings.simplefilter("ignore", DegenerateDataWarning)
        boot = bootstrap(
            tuple(np.arange(task.n) for task in ranked),
            statistic,
            n_resamples=n_resamples,
            batch=max(1, BATCH_ELEMENTS // total),
            vectorized=True,
            paired=False,
            confidence_level=confidence_level,
            method=method,
            rng=np.random.default_rng(seed),
        )
    undefined = int(np.isnan(boot.bootstrap_distribution).sum())
    if undefined:
        sizes = {name: task.n for name, task in prepared.items()}
        raise ValueError(
            f"{undefined} of {n_resamples} resamples drew only tied gold or prediction scores in some task "
            f"(Spearman undefined): too few distinct pairs, sizes {sizes}"
        )
    low, high = float(boot.confidence_interval.low), float(boot.confidence_interval.high)
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError(f"the {method} interval is undefined ({low}, {high}); use method='percentile'")
    return PairedDifference(difference, low, high, standard_error=float(boot.standard_error), **result)


def paired_spearman_difference(
    gold: Sequence[float],
    pred_a: Sequence[float],
    pred_b: Sequence[float],
    *,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    seed: int | None = 0,
    method: Method = "percentile",
) -> PairedDifference:
    """Spearman(pred_a, gold) - Spearman(pred_b, gold), x100, with a paired bootstrap interval over the pairs.

    Unpacks as ``difference, low, high = paired_spearman_difference(...)``; the returned
    :class:`PairedDifference` also carries n, the settings and the bootstrap standard error. The resampling is
    scipy's ``bootstrap(..., paired=True)`` (see :func:`paired_average_difference`, of which this is the
    one-task case, for the method and the identical-predictions rule: identical predictions give (0, 0, 0)).
    """
    checked = task_arrays(gold, pred_a, pred_b)  # errors name the argument without a task
    return paired_average_difference(
        {"task": checked},
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        seed=seed,
        method=method,
    )


def paired_grouped_difference(
    gold: Sequence[float],
    pred_a: Sequence[float],
    pred_b: Sequence[float],
    groups: Sequence,
    *,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    seed: int | None = 0,
) -> PairedDifference:
    """Spearman(a) - Spearman(b) x100 on rows that come in dependent groups, with a paired cluster bootstrap.

    ``groups[i]`` labels the unit row i belongs to (any hashable; C-STS: the sentence pair, which the data set
    scores under two conditions). Each replicate draws as many groups as there are, with replacement, and keeps
    every row of a drawn group, so two rows that share a sentence pair never count as two independent draws (a
    row bootstrap would: its interval is too narrow). Percentile interval; ``n`` counts the groups. Identical
    orderings give (0, 0, 0) as in :func:`paired_average_difference`.
    """
    checked_gold, checked_a, checked_b = task_arrays(gold, pred_a, pred_b)
    labels = list(groups)
    if len(labels) != len(checked_gold):
        raise ValueError(f"groups has {len(labels)} labels but gold has {len(checked_gold)}: one group per row")
    index: dict = {}
    try:
        group_of_row = np.array([index.setdefault(label, len(index)) for label in labels], dtype=np.intp)
    except TypeError as err:
        raise ValueError(f"groups must be hashable labels (e.g. a pair id), got {err}") from err
    n_groups = len(index)
    if n_groups < MIN_PAIRS:
        raise ValueError(f"a grouped bootstrap needs at least {MIN_PAIRS} groups, got {n_groups}")
    n_resamples = check_n_resamples(n_resamples)
    confidence_level = check_confidence_level(confidence_level)
    seed = check_seed(seed)
    ranks = TaskRanks(checked_gold, checked_a, checked_b)
    difference = spearman_x100(checked_a, checked_gold) - spearman_x100(checked_b, checked_gold)
    settings = dict(n=n_groups, confidence_level=confidence_level, n_resamples=n_resamples, method="percentile")
    if ranks.same_order():
        return PairedDifference(0.0, 0.0, 0.0, seed=seed, standard_error=0.0, **settings)
    rng = np.random.default_rng(seed)
    batch = max(1, BATCH_ELEMENTS // len(checked_gold))
    replicates = []
    for start in range(0, n_resamples, batch):
        draws = rng.integers(0, n_groups, size=(min(batch, n_resamples - start), n_groups))
        replicates.append(ranks.difference_of_counts(bootstrap_counts(draws, n_groups)[:, group_of_row]))
    values = np.concatenate(replicates)
    if np.isnan(values).any():
        raise ValueError(
            f"{int(np.isnan(values).sum())} of {n_resamples} group resamples drew only tied gold or prediction "
            f"scores (Spearman undefined): too few distinct groups ({n_groups})"
        )
    low, high = np.quantile(values, [(1 - confidence_level) / 2, (1 + confidence_level) / 2])
    return PairedDifference(
        float(difference), float(low), float(high), seed=seed, standard_error=float(values.std(ddof=1)), **settings
    )


def paired_predictions_difference(
    a: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    b: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    seed: int | None = 0,
) -> PairedDifference:
    """:func:`paired_average_difference` of two systems' ``task -> (gold, predictions)`` mappings (as
    ``stsnb.evaluation.evaluate.task_predictions`` returns them): both must cover the same tasks with the same gold
    pairs."""
    return paired_average_difference(
        paired_triples(a, b), n_resamples=n_resamples, confidence_level=confidence_level, seed=seed
    )


def paired_triples(
    a: Mapping[str, tuple[Sequence[float], Sequence[float]]], b: Mapping[str, tuple[Sequence[float], Sequence[float]]]
) -> dict[str, tuple[Sequence[float], Sequence[float], Sequence[float]]]:
    """``task -> (gold, pred_a, pred_b)`` of two systems' ``task -> (gold, predictions)``, checked to cover the same
    tasks with the same gold pairs: what a paired bootstrap, or a claim's ``paired=`` data per seed, takes."""
    if set(a) != set(b) or not a:
        raise ValueError(f"a and b must cover the same non-empty set of tasks, got {sorted(a)} and {sorted(b)}")
    triples = {}
    for task in a:
        gold_a, pred_a = a[task]
        gold_b, pred_b = b[task]
        if not np.array_equal(np.asarray(gold_a, dtype=float), np.asarray(gold_b, dtype=float)):
            raise ValueError(f"{task}: a and b were scored on different pairs (their gold scores differ)")
        triples[task] = (gold_a, pred_a, pred_b)
    return triples


# ---- seeds and the verdict -----------------------------------------------------------------------------------


def across_seeds(values: Sequence[float]) -> SeedSpread:
    """Mean, sample standard deviation (ddof=1; None with one seed), min, max and count over seed runs."""
    array = np.asarray(list(values), dtype=np.float64)
    if array.ndim != 1 or len(array) == 0:
        raise ValueError("across_seeds needs a non-empty sequence of numbers, one per seed run")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"across_seeds got non-finite values: {array.tolist()}")
    std = float(array.std(ddof=1)) if len(array) > 1 else None
    return SeedSpread(float(array.mean()), std, float(array.min()), float(array.max()), len(array))


# ---- seeds and pairs, power, multiplicity --------------------------------------------------------------------

PairDesign = Literal["shared", "per seed"]
