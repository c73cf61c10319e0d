"""The seeds-and-pairs bootstrap: a difference averaged over training seeds, with an interval that covers
seed-to-seed variation as well as test-pair noise.

- :func:`seeds_and_pairs_difference` -- the mean over training seeds of a paired average difference, with a
  hierarchical bootstrap interval: each replicate resamples the seeds, then the test pairs of every task.
- :func:`seeds_and_pairs_predictions_difference` -- the same from each seed's ``task -> (gold, predictions)``.
- :func:`seeds_and_pairs_sum_difference` -- the same for a difference of sums over items (flag counts).
- :func:`seed_mean_t_interval` -- the t interval of the seed means (n - 1 degrees of freedom), the floor that
  ``t_floor=True`` puts under the bootstrap interval (with 3 seeds a bootstrap of the seeds behaves like a
  z interval where a t with 2 degrees of freedom applies).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np
from scipy.stats import t as student_t

from .stats import (
    BATCH_ELEMENTS,
    PairDesign,
    PairedDifference,
    TaskRanks,
    bootstrap_counts,
    check_confidence_level,
    check_n_resamples,
    check_seed,
    spearman_x100,
    task_arrays,
)


@dataclass(frozen=True)
class SeedsAndPairsDifference(PairedDifference):
    """A :class:`PairedDifference` over several training seeds (``seeds``): the mean of the seeds' paired average
    differences with a hierarchical bootstrap interval; ``pairs`` says how the test pairs were resampled."""

    seeds: int = 1
    pairs: str = "shared"


@dataclass(frozen=True)
class TFlooredDifference(SeedsAndPairsDifference):
    """A :class:`SeedsAndPairsDifference` whose interval was floored by the t interval of the seed means
    (``seeds_and_pairs_difference(..., t_floor=True)``): ``low``/``high`` are the reported ends, ``bootstrap_low`` /
    ``bootstrap_high`` the percentile bootstrap's, ``t_half_width`` the t interval's half-width (None for one seed,
    where no floor applies) and ``floored`` whether the floor moved either end."""

    bootstrap_low: float = math.nan
    bootstrap_high: float = math.nan
    t_half_width: float | None = None
    floored: bool = False


class SeedMeanT(NamedTuple):
    """The t interval of the mean of per-seed differences: ``mean +- half_width`` with
    ``half_width = t_{(1+level)/2, n-1} x std / sqrt(n)`` (``std`` with ddof=1)."""

    mean: float
    std: float
    half_width: float
    low: float
    high: float
    df: int
    confidence_level: float


def seed_mean_t_interval(differences, confidence_level: float = 0.95) -> SeedMeanT | None:
    """The t interval of the seed means: each training seed's difference counted as one draw of a training run,
    ``mean +- t_{(1+level)/2, n-1} x sd / sqrt(n)`` (sd with ddof=1), None for one seed (no degrees of freedom).

    Why: a bootstrap that resamples 3 seeds behaves like a z interval of their mean with the plug-in sd (and a
    3-point bootstrap distribution), where the t distribution with 2 degrees of freedom applies; HiCL's seed
    differences 0.44, 0.00, 0.00 give mean 0.147, sd 0.254, t(0.975, 2) = 4.303, half-width 0.631. The interval
    covers the seed-to-seed spread only: noise of the test pairs that every seed shares (the same pairs) is not in
    it, so it is a floor under the seeds-and-pairs interval, never a replacement."""
    values = np.asarray(list(differences), dtype=np.float64)
    if values.ndim != 1 or len(values) == 0:
        raise ValueError("seed_mean_t_interval needs a non-empty sequence of numbers, one difference per seed")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"seed_mean_t_interval got non-finite differences: {values.tolist()}")
    level = check_confidence_level(confidence_level)
    if len(values) < 2:
        return None
    n, mean, std = len(values), float(values.mean()), float(values.std(ddof=1))
    half = float(student_t.ppf((1 + level) / 2, n - 1)) * std / math.sqrt(n)
    return SeedMeanT(mean, std, half, mean - half, mean + half, n - 1, level)


def floored_bounds(
    difference: float, low: float, high: float, seed_differences, confidence_level: float = 0.95
) -> tuple[float, float, float | None]:
    """The t floor's rule on one interval: ``(min(low, difference - h), max(high, difference + h), h)`` with ``h`` the
    half-width of :func:`seed_mean_t_interval` (None, and the interval unchanged, with one seed)."""
    t_interval = seed_mean_t_interval(seed_differences, confidence_level)
    if t_interval is None:
        return low, high, None
    half = t_interval.half_width
    return min(low, difference - half), max(high, difference + half), half


def t_floored(result: SeedsAndPairsDifference, seed_differences) -> TFlooredDifference:
    """``result`` with each end moved out, where needed, to the t interval of ``seed_differences`` around the point
    estimate: ``low = min(bootstrap low, difference - h)``, ``high = max(bootstrap high, difference + h)`` with ``h``
    the half-width of :func:`seed_mean_t_interval` (its centre, the mean of the seeds' differences, is the point
    estimate). Neither end moves in, so the interval is never narrower than the bootstrap's nor than the t interval;
    with one seed nothing changes (``t_half_width`` None)."""
    low, high, half = floored_bounds(
        result.difference, result.low, result.high, seed_differences, result.confidence_level
    )
    kept = {f.name: getattr(result, f.name) for f in fields(SeedsAndPairsDifference)}
    kept.update(low=low, high=high)
    return TFlooredDifference(
        **kept,
        bootstrap_low=result.low,
        bootstrap_high=result.high,
        t_half_width=half,
        floored=(low, high) != (result.low, result.high),
    )


class _Task(NamedTuple):
    """One task of one seed, ready to resample: its ranks, how many units a resample draws (pairs, or groups of rows)
    and, for grouped rows, the unit of each row (None: every row is its own unit)."""

    ranks: TaskRanks
    units: int
    unit_of_row: np.ndarray | None

    def counts(self, unit_counts: np.ndarray) -> np.ndarray:
        """How often each row was drawn, from how often each unit was."""
        return unit_counts if self.unit_of_row is None else unit_counts[:, self.unit_of_row]


def _units(groups, n_rows: int, where: str) -> tuple[int, np.ndarray | None]:
    """(number of units, the unit of each row) of a task's optional ``groups`` (C-STS: a sentence pair's two rows)."""
    if groups is None:
        return n_rows, None
    labels = list(groups)
    if len(labels) != n_rows:
        raise ValueError(f"groups has {len(labels)} labels for {n_rows} rows{where}: one group per row")
    index: dict = {}
    unit_of_row = np.array([index.setdefault(label, len(index)) for label in labels], dtype=np.intp)
    return len(index), unit_of_row


def _seed_tasks(runs: Mapping, name: str) -> dict[object, list[_Task]]:
    """``{seed: [_Task per task]}`` in one task order, every seed with the same tasks (checked). A task is ``(gold,
    pred_a, pred_b)``, or ``(gold, pred_a, pred_b, groups)`` when its rows come in dependent groups that a resample
    draws whole (``stats.paired_grouped_difference``)."""
    if not isinstance(runs, Mapping) or not runs:
        raise ValueError(f"{name} must be a non-empty mapping of training seed -> {{task: (gold, pred_a, pred_b)}}")
    tasks = None
    out: dict[object, list[_Task]] = {}
    for label, per_task in runs.items():
        if not isinstance(per_task, Mapping) or not per_task:
            raise ValueError(f"{name}[{label!r}] must be a non-empty mapping of task -> (gold, pred_a, pred_b)")
        if tasks is None:
            tasks = list(per_task)
        elif set(per_task) != set(tasks):
            raise ValueError(f"every seed needs the same tasks: {sorted(per_task)} vs {sorted(tasks)}")
        prepared = []
        for t in tasks:
            where = f" (seed {label!r}, task {t!r})"
            values = tuple(per_task[t])
            if len(values) not in (3, 4):
                raise ValueError(f"{name}[{label!r}][{t!r}] must be (gold, pred_a, pred_b[, groups]){where}")
            arrays = task_arrays(*values[:3], where=where)
            units, unit_of_row = _units(values[3] if len(values) == 4 else None, len(arrays[0]), where)
            prepared.append(_Task(TaskRanks(*arrays), units, unit_of_row))
        out[label] = prepared
    return out


def seeds_and_pairs_difference(
    runs: Mapping[object, Mapping[str, tuple]],
    *,
    pairs: PairDesign = "shared",
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    seed: int | None = 0,
    t_floor: bool = False,
) -> SeedsAndPairsDifference:
    """Mean over training seeds of the seven-task average difference Spearman(a) - Spearman(b) x100, with a
    hierarchical (seeds-and-pairs) percentile bootstrap interval.

    ``runs`` maps a training seed to ``{task: (gold, pred_a, pred_b)}``; a task whose rows come in dependent groups
    (C-STS: one sentence pair under two conditions) is ``(gold, pred_a, pred_b, groups)`` and a resample draws its
    groups whole. The point estimate is the mean over seeds of :func:`paired_average_difference`'s point estimates.
    Each replicate draws as many seeds as there are, with replacement, then resamples the test pairs (or groups) of
    every task (stratified by task, as the paired bootstrap does) and averages the drawn seeds' average differences
    on that resample. ``pairs="shared"`` (our notebooks): every seed was scored on the same test pairs, so one draw
    of pairs serves every drawn seed (the pairs are crossed with the seeds: a hard pair is hard for every seed, and
    drawing it for one seed and not another would hide that shared noise); the seeds' gold scores must then be
    equal. ``pairs="per seed"``: each drawn seed gets its own draw of pairs (seeds scored on different test draws).
    With one seed this is :func:`paired_average_difference`'s bootstrap (percentile). Unlike the per-seed rule
    (every seed's interval on one side), this interval answers "is the mean over seeds of the difference away from
    0", the seeds counted as a sample of training runs.

    ``t_floor=True`` (off by default, so existing runs keep their intervals): with two or more seeds the
    reported interval is never narrower than the t interval of the seed means (:func:`seed_mean_t_interval`, n - 1
    degrees of freedom): each end is moved out to ``difference -+ h`` where the bootstrap's end lies inside it, ``h``
    the t half-width (:func:`t_floored`), and a :class:`TFlooredDifference` keeps both intervals.
    """
    if pairs not in ("shared", "per seed"):
        raise ValueError(f"pairs must be 'shared' or 'per seed', got {pairs!r}")
    n_resamples = check_n_resamples(n_resamples)
    confidence_level = check_confidence_level(confidence_level)
    seed = check_seed(seed)
    prepared = _seed_tasks(runs, "runs")
    labels = list(prepared)
    first = next(iter(runs.values()))
    task_names = list(first)
    units = [t.units for t in prepared[labels[0]]]
    if pairs == "shared":
        for label in labels[1:]:
            for name in task_names:
                if not np.array_equal(np.asarray(runs[label][name][0], float), np.asarray(first[name][0], float)):
                    raise ValueError(
                        f"pairs='shared' needs every seed scored on the same pairs; task {name!r} of seed {label!r} "
                        "has other gold scores"
                    )
    per_seed = {
        label: [
            spearman_x100(np.asarray(runs[label][t][1], float), np.asarray(runs[label][t][0], float))
            - spearman_x100(np.asarray(runs[label][t][2], float), np.asarray(runs[label][t][0], float))
            for t in task_names
        ]
        for label in labels
    }
    seed_means = [float(np.mean(v)) for v in per_seed.values()]
    per_task = {t: float(np.mean([per_seed[s][i] for s in labels])) for i, t in enumerate(task_names)}
    settings = dict(
        n=sum(units),
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        method="percentile",
        seed=seed,
        tasks=per_task if len(task_names) > 1 else {},
        seeds=len(labels),
        pairs=pairs,
    )
    if all(task.ranks.same_order() for tasks in prepared.values() for task in tasks):
        zero = SeedsAndPairsDifference(0.0, 0.0, 0.0, standard_error=0.0, **settings)
        return t_floored(zero, [0.0] * len(labels)) if t_floor else zero
    rng = np.random.default_rng(seed)
    n_seeds, rows_per_seed = len(labels), sum(t.ranks.n for t in prepared[labels[0]])
    batch = max(1, BATCH_ELEMENTS // rows_per_seed)

    def draw(rows: int) -> list[np.ndarray]:
        return [bootstrap_counts(rng.integers(0, n, size=(rows, n)), n) for n in units]

    values = []
    for start in range(0, n_resamples, batch):
        rows = min(batch, n_resamples - start)
        drawn = rng.integers(0, n_seeds, size=(rows, n_seeds))  # seed positions of each replicate
        sums = np.zeros(rows)
        shared = draw(rows) if pairs == "shared" else None
        for position in range(n_seeds):
            counts = shared or draw(rows)
            for index, label in enumerate(labels):
                chosen = drawn[:, position] == index
                if chosen.any():
                    per_task_values = [
                        task.ranks.difference_of_counts(task.counts(c[chosen]))
                        for task, c in zip(prepared[label], counts, strict=True)
                    ]
                    sums[chosen] += np.mean(per_task_values, axis=0)
        values.append(sums / n_seeds)
    replicates = np.concatenate(values)
    if np.isnan(replicates).any():
        raise ValueError(
            f"{int(np.isnan(replicates).sum())} of {n_resamples} resamples drew only tied gold or prediction scores "
            f"in some task (Spearman undefined): too few distinct pairs, sizes {units} ({task_names})"
        )
    low, high = np.quantile(replicates, [(1 - confidence_level) / 2, (1 + confidence_level) / 2])
    result = SeedsAndPairsDifference(
        float(np.mean(seed_means)),
        float(low),
        float(high),
        standard_error=float(replicates.std(ddof=1)),
        **settings,
    )
    return t_floored(result, seed_means) if t_floor else result


def seeds_and_pairs_sum_difference(
    runs: Mapping[object, tuple[Sequence[float], Sequence[float], Sequence | None]],
    *,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    seed: int | None = 0,
) -> TFlooredDifference:
    """The mean over training seeds of a *sum* difference, ``sum(a) - sum(b)`` over items (CCL's Appendix A: counts of
    flagged quadruples), with the seeds-and-pairs bootstrap of :func:`seeds_and_pairs_difference` (seeds drawn, then
    one shared draw of the item groups) and its t floor. ``runs``: ``{seed: (a, b, groups)}``, ``groups`` None when
    every item is its own unit; every seed scores the same items."""
    if not isinstance(runs, Mapping) or not runs:
        raise ValueError("runs must be a non-empty mapping of training seed -> (a, b, groups)")
    n_resamples = check_n_resamples(n_resamples)
    confidence_level = check_confidence_level(confidence_level)
    seed = check_seed(seed)
    per_unit, units, unit_of_row = [], None, None
    for label, (a, b, groups) in runs.items():
        diff = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
        if diff.ndim != 1 or len(diff) == 0:
            raise ValueError(f"seed {label!r}: a and b must be 1-D of one non-zero length")
        n, rows = _units(groups, len(diff), f" (seed {label!r})")
        if units is not None and (n != units or not np.array_equal(rows, unit_of_row)):
            raise ValueError(f"seed {label!r} was scored on other items than the first seed: sums must pair up")
        units, unit_of_row = n, rows
        per_unit.append(diff if rows is None else np.bincount(rows, weights=diff, minlength=n))
    table = np.stack(per_unit)  # (seeds, units)
    seed_sums = table.sum(axis=1)
    rng = np.random.default_rng(seed)
    drawn = rng.integers(0, len(table), size=(n_resamples, len(table)))
    counts = bootstrap_counts(rng.integers(0, units, size=(n_resamples, units)), units)
    replicates = np.einsum("ru,rsu->r", counts, table[drawn]) / len(table)
    low, high = np.quantile(replicates, [(1 - confidence_level) / 2, (1 + confidence_level) / 2])
    result = SeedsAndPairsDifference(
        float(seed_sums.mean()),
        float(low),
        float(high),
        n=int(units),
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        method="percentile",
        seed=seed,
        standard_error=float(replicates.std(ddof=1)),
        seeds=len(table),
        pairs="shared",
    )
    return t_floored(result, seed_sums.tolist())


def seeds_and_pairs_predictions_difference(
    a: Mapping[object, Mapping[str, tuple[Sequence[float], Sequence[float]]]],
    b: Mapping[object, Mapping[str, tuple[Sequence[float], Sequence[float]]]],
    *,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    seed: int | None = 0,
    t_floor: bool = False,
) -> SeedsAndPairsDifference:
    """:func:`seeds_and_pairs_difference` of two systems' ``{seed: {task: (gold, predictions)}}`` (``b`` may be one
    ``{task: (gold, predictions)}`` shared by every seed, e.g. the untrained model): same seeds, tasks and gold
    pairs, so the test pairs are shared (``pairs="shared"``); ``t_floor`` as there."""
    if not isinstance(a, Mapping) or not a:
        raise ValueError("a must be a non-empty mapping of training seed -> {task: (gold, predictions)}")
    shared_b = isinstance(b, Mapping) and bool(b) and all(isinstance(v, tuple | list) for v in b.values())
    if not shared_b and (not isinstance(b, Mapping) or set(b) != set(a)):
        raise ValueError(f"a and b need the same training seeds, got {sorted(map(str, a))} and {sorted(map(str, b))}")
    runs = {}
    for label, per_task in a.items():
        other = b if shared_b else b[label]
        if set(per_task) != set(other):
            raise ValueError(f"seed {label!r}: a and b cover different tasks, {sorted(per_task)} and {sorted(other)}")
        triples = {}
        for task, (gold, pred_a) in per_task.items():
            gold_b, pred_b = other[task]
            if not np.array_equal(np.asarray(gold, dtype=float), np.asarray(gold_b, dtype=float)):
                raise ValueError(f"seed {label!r}, {task}: a and b were scored on different pairs")
            triples[task] = (gold, pred_a, pred_b)
        runs[label] = triples
    return seeds_and_pairs_difference(
        runs, n_resamples=n_resamples, confidence_level=confidence_level, seed=seed, t_floor=t_floor
    )
