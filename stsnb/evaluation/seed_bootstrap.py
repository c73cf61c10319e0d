"""The seeds-and-pairs bootstrap: a difference averaged over training seeds, with an interval that covers
seed-to-seed variation as well as test-pair noise.

- :func:`seeds_and_pairs_difference` -- the mean over training seeds of a paired average difference, with a
  hierarchical bootstrap interval: each replicate resamples the seeds, then the test pairs of every task.
- :func:`seeds_and_pairs_predictions_difference` -- the same from each seed's ``task -> (gold, predictions)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

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


def _seed_tasks(runs: Mapping, name: str) -> dict[object, list[TaskRanks]]:
    """``{seed: [TaskRanks per task]}`` in one task order, every seed with the same tasks (checked)."""
    if not isinstance(runs, Mapping) or not runs:
        raise ValueError(f"{name} must be a non-empty mapping of training seed -> {{task: (gold, pred_a, pred_b)}}")
    tasks = None
    out: dict[object, list[TaskRanks]] = {}
    for label, per_task in runs.items():
        if not isinstance(per_task, Mapping) or not per_task:
            raise ValueError(f"{name}[{label!r}] must be a non-empty mapping of task -> (gold, pred_a, pred_b)")
        if tasks is None:
            tasks = list(per_task)
        elif set(per_task) != set(tasks):
            raise ValueError(f"every seed needs the same tasks: {sorted(per_task)} vs {sorted(tasks)}")
        out[label] = [TaskRanks(*task_arrays(*per_task[t], where=f" (seed {label!r}, task {t!r})")) for t in tasks]
    return out


def seeds_and_pairs_difference(
    runs: Mapping[object, Mapping[str, tuple[Sequence[float], Sequence[float], Sequence[float]]]],
    *,
    pairs: PairDesign = "shared",
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    seed: int | None = 0,
) -> SeedsAndPairsDifference:
    """Mean over training seeds of the seven-task average difference Spearman(a) - Spearman(b) x100, with a
    hierarchical (seeds-and-pairs) percentile bootstrap interval.

    ``runs`` maps a training seed to ``{task: (gold, pred_a, pred_b)}``. The point estimate is the mean over seeds
    of :func:`paired_average_difference`'s point estimates. Each replicate draws as many seeds as there are, with
    replacement, then resamples the test pairs of every task (stratified by task, as the paired bootstrap does) and
    averages the drawn seeds' average differences on that resample. ``pairs="shared"`` (our notebooks): every seed
    was scored on the same test pairs, so one draw of pairs serves every drawn seed (the pairs are crossed with the
    seeds: a hard pair is hard for every seed, and drawing it for one seed and not another would hide that shared
    noise); the seeds' gold scores must then be equal. ``pairs="per seed"``: each drawn seed gets its own draw of
    pairs (seeds scored on different test draws). With one seed this is :func:`paired_average_difference`'s
    bootstrap (percentile). Unlike the per-seed rule (every seed's interval on one side), this interval answers
    "is the mean over seeds of the difference away from 0", the seeds counted as a sample of training runs.
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
    sizes = [t.n for t in prepared[labels[0]]]
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
        n=sum(sizes),
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        method="percentile",
        seed=seed,
        tasks=per_task if len(task_names) > 1 else {},
        seeds=len(labels),
        pairs=pairs,
    )
    if all(task.same_order() for tasks in prepared.values() for task in tasks):
        return SeedsAndPairsDifference(0.0, 0.0, 0.0, standard_error=0.0, **settings)
    rng = np.random.default_rng(seed)
    n_seeds, total = len(labels), sum(sizes)
    batch = max(1, BATCH_ELEMENTS // total)
    values = []
    for start in range(0, n_resamples, batch):
        rows = min(batch, n_resamples - start)
        drawn = rng.integers(0, n_seeds, size=(rows, n_seeds))  # seed positions of each replicate
        sums = np.zeros(rows)
        shared = [bootstrap_counts(rng.integers(0, n, size=(rows, n)), n) for n in sizes] if pairs == "shared" else None
        for position in range(n_seeds):
            counts = shared or [bootstrap_counts(rng.integers(0, n, size=(rows, n)), n) for n in sizes]
            for index, label in enumerate(labels):
                chosen = drawn[:, position] == index
                if chosen.any():
                    per_task_values = [
                        task.difference_of_counts(c[chosen]) for task, c in zip(prepared[label], counts, strict=True)
                    ]
                    sums[chosen] += np.mean(per_task_values, axis=0)
        values.append(sums / n_seeds)
    replicates = np.concatenate(values)
    if np.isnan(replicates).any():
        raise ValueError(
            f"{int(np.isnan(replicates).sum())} of {n_resamples} resamples drew only tied gold or prediction scores "
            f"in some task (Spearman undefined): too few distinct pairs, sizes {sizes} ({task_names})"
        )
    low, high = np.quantile(replicates, [(1 - confidence_level) / 2, (1 + confidence_level) / 2])
    return SeedsAndPairsDifference(
        float(np.mean(seed_means)),
        float(low),
        float(high),
        standard_error=float(replicates.std(ddof=1)),
        **settings,
    )


def seeds_and_pairs_predictions_difference(
    a: Mapping[object, Mapping[str, tuple[Sequence[float], Sequence[float]]]],
    b: Mapping[object, Mapping[str, tuple[Sequence[float], Sequence[float]]]],
    *,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    seed: int | None = 0,
) -> SeedsAndPairsDifference:
    """:func:`seeds_and_pairs_difference` of two systems' ``{seed: {task: (gold, predictions)}}`` (``b`` may be one
    ``{task: (gold, predictions)}`` shared by every seed, e.g. the untrained model): same seeds, tasks and gold
    pairs, so the test pairs are shared (``pairs="shared"``)."""
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
    return seeds_and_pairs_difference(runs, n_resamples=n_resamples, confidence_level=confidence_level, seed=seed)
