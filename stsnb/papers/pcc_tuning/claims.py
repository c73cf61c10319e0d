"""Pcc-tuning's claims on our runs, each built by ``stsnb.claims.claim`` with the preconditions it needs to be tested.

Every claim is a difference ``a - b`` of the average Spearman x100 over the scored tasks, on the same test pairs, with
a paired bootstrap interval per training seed (``stsnb.stats``); a direction verdict needs every seed's interval on
the same side. Runs come as ``{training seed: pipeline.StageRun}``.

- Stage 1 (contrastive, Eq. 8) improves the untrained prompt embedding. Precondition: stage 1 is not its starting
  point (dev selection kept a step > 0 and the adapter changed). The paper reports no untrained score.
- The headline, stage 2 (Pearson, Eq. 9) improves on stage 1 (Table 4's stage-2 minus stage-1 average for the paper
  difference and its direction). Preconditions: stage 1 moved the encoder (its interval against the untrained
  embedding excludes 0 upward on every seed) and stage 2 left its start.
- The control (ours): Pearson stage 2 beats stage 2's pairs under stage 1's objective, from the same stage-1 adapter,
  in the same batches and steps (``training.scored_pairs_info_nce``), so the objective is what differs; the
  headline alone cannot tell the Pearson loss from the new in-domain data. Preconditions: stage 1 moved the encoder,
  both runs left their start, and the control's pairs hold positives.
- Beyond the paper, the pairs shared with the test sets: "kept minus removed" (our hypothesis: the shared pairs
  raise the score), both arms with the same STS-B / SICK-R mix (``corpora.matched_arms``); and "the gain survives
  removing them" (removed arm minus stage 1).
- Tables 4-5, "the template / the stage-2 batch size hardly matters": robustness claims, judged by equivalence
  within a margin (``stsnb.stats.equivalence_verdict``); both runs must have left their start (two copies of one
  model are trivially equivalent).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from ... import claims, stats
from ...evaluate import TaskPredictions
from .pipeline import StageRun
from .reported import REPORTED

Runs = Mapping[int, StageRun]  # training seed -> one stage's run


def _runs(runs, name: str) -> dict[int, StageRun]:
    """``{seed: StageRun}`` from a mapping, or ``{0: run}`` from one run; anything else is refused by name."""
    if isinstance(runs, StageRun):
        return {0: runs}
    if isinstance(runs, Mapping) and runs and all(isinstance(r, StageRun) for r in runs.values()):
        return dict(sorted(runs.items()))
    raise TypeError(f"{name} must be a pipeline.StageRun or a non-empty {{training seed: StageRun}}, got {runs!r:.80}")


def seed_intervals(
    a: Runs, b: Runs | TaskPredictions, *, n_resamples: int = 2000, seed: int = 0
) -> dict[str, stats.PairedDifference]:
    """``a - b`` per training seed of ``a`` (``b``: runs on the same seeds, or one set of predictions shared by every
    seed, the untrained embedding); bootstrap seeded by ``seed``."""
    a = _runs(a, "a")
    if isinstance(b, Mapping) and b and all(isinstance(r, StageRun) for r in b.values()):
        if set(b) != set(a):
            raise ValueError(f"a and b need the same training seeds, got {sorted(a)} and {sorted(b)}")
        other = {s: r.predictions for s, r in b.items()}
    elif isinstance(b, StageRun):
        other = {s: b.predictions for s in a}
    else:
        other = {s: b for s in a}
    return {
        f"seed {s}": stats.paired_predictions_difference(run.predictions, other[s], n_resamples=n_resamples, seed=seed)
        for s, run in a.items()
    }


def left(what: str, runs: Runs) -> claims.Precondition:
    """ "<what> is not its starting point" on every training seed (kept step > 0, some weight changed)."""
    runs = _runs(runs, what)
    changes = {f"seed {s}": r.result.weight_change for s, r in runs.items()}
    return claims.left_start(
        what,
        {f"seed {s}": r.kept_step for s, r in runs.items()},
        None if any(c is None for c in changes.values()) else changes,
    )


def stayed_at_start(runs: Mapping[str, StageRun]) -> list[str]:
    """One sentence per run that dev selection left at its start (kept step 0, or no weight changed): that run *is*
    the model it started from."""
    return [
        f"{label}: dev selection kept step {r.kept_step} of {r.result.steps} (largest weight change "
        f"{r.result.weight_change or 0.0:.1e}): this run is its starting point"
        for label, r in runs.items()
        if r.kept_step <= 0 or r.result.weight_change == 0.0
    ]


def _per_task(intervals: Mapping[str, stats.PairedDifference]) -> dict[str, float]:
    """Each task's point difference, averaged over the training seeds."""
    tasks = next(iter(intervals.values())).tasks
    return {t: sum(i.tasks[t] for i in intervals.values()) / len(intervals) for t in tasks}


def _direction(paper_difference: float | None, default: int = +1) -> int:
    if paper_difference is None or paper_difference == 0:
        return default
    return int(math.copysign(1, paper_difference))


def stage_claims(
    untrained: TaskPredictions,
    stage1: Runs,
    stage2: Runs,
    row: str,
    template_label: str,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
) -> list[dict]:
    """Stage 1 vs untrained and stage 2 vs stage 1 (the headline), one interval per training seed; the paper's
    difference from Table 4's ``row`` (e.g. "Mistral-7b") and ``template_label`` ("PromptSTH")."""
    stage1, stage2 = _runs(stage1, "stage1"), _runs(stage2, "stage2")
    setting = f"{row} {template_label}"
    paper = REPORTED.value("Table 4", f"{setting} stage 2") - REPORTED.value("Table 4", f"{setting} stage 1")
    first = seed_intervals(stage1, untrained, n_resamples=n_resamples, seed=seed)
    second = seed_intervals(stage2, stage1, n_resamples=n_resamples, seed=seed)
    return [
        claims.claim(
            "stage 1 (InfoNCE, Eq. 8) improves the untrained prompt embedding",
            first,
            direction=+1,
            preconditions=[left("stage 1", stage1)],
            per_task=_per_task(first),
        ),
        claims.claim(
            f"stage 2 (1 - Pearson, Eq. 9) improves on stage 1 (Table 4, {setting})",
            second,
            direction=_direction(paper),
            preconditions=[claims.baseline_moved(first, "stage 1"), left("stage 2", stage2)],
            paper_difference=paper,
            per_task=_per_task(second),
            headline=True,
        ),
    ]


def control_claim(
    untrained: TaskPredictions,
    stage1: Runs,
    stage2: Runs,
    control: Runs,
    positives: Mapping[int, int],
    *,
    positive_score: float,
    n_pairs: int | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict:
    """Pearson stage 2 minus the control (stage 2's pairs under Eq. 8's form, same start, batches and steps), per
    training seed; ``positives``: per seed, the control's pairs scored >= ``positive_score`` (of ``n_pairs``)."""
    stage1, stage2, control = _runs(stage1, "stage1"), _runs(stage2, "stage2"), _runs(control, "control")
    intervals = seed_intervals(stage2, control, n_resamples=n_resamples, seed=seed)
    fewest = min(int(positives[s]) for s in control)
    return claims.claim(
        "the Pearson loss, not the new data: stage 2 (Eq. 9) beats the same pairs under stage 1's objective "
        f"(InfoNCE, Eq. 8 form, positives scored >= {positive_score:g})",
        intervals,
        direction=+1,
        preconditions=[
            claims.baseline_moved(seed_intervals(stage1, untrained, n_resamples=n_resamples, seed=seed), "stage 1"),
            left("stage 2", stage2),
            left("the InfoNCE control", control),
            claims.phenomenon_occurs(
                f"pairs scored >= {positive_score:g} (the control's positives, fewest over seeds)",
                fewest,
                out_of=n_pairs,
            ),
        ],
        per_task=_per_task(intervals),
    )


def dedup_claims(
    stage1: Runs,
    stage2_kept: Runs,
    stage2_removed: Runs,
    shared_in_kept: Mapping[int, int],
    untrained: TaskPredictions,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
) -> list[dict]:
    """Beyond the paper: the stage-2 arm that trained on pairs shared with the test sets against the one drawn
    without them (same size, same STS-B / SICK-R mix), and what is left of the stage-2 gain without them."""
    stage1 = _runs(stage1, "stage1")
    kept, removed = _runs(stage2_kept, "stage2_kept"), _runs(stage2_removed, "stage2_removed")
    difference = seed_intervals(kept, removed, n_resamples=n_resamples, seed=seed)
    survives = seed_intervals(removed, stage1, n_resamples=n_resamples, seed=seed)
    fewest = min(int(shared_in_kept[s]) for s in kept)
    return [
        claims.claim(
            "hypothesis: training pairs shared with the test sets raise the stage-2 score (kept minus removed, same "
            "STS-B / SICK-R mix)",
            difference,
            direction=+1,
            preconditions=[
                left("stage 2 with the shared pairs", kept),
                left("stage 2 without them", removed),
                claims.phenomenon_occurs("shared pairs in the kept arm (fewest over seeds)", fewest),
            ],
            per_task=_per_task(difference),
        ),
        claims.claim(
            "the stage-2 gain survives removing the shared pairs (de-duplicated stage 2 minus stage 1)",
            survives,
            direction=+1,
            preconditions=[
                claims.baseline_moved(seed_intervals(stage1, untrained, n_resamples=n_resamples, seed=seed), "stage 1"),
                left("stage 2 without the shared pairs", removed),
            ],
            per_task=_per_task(survives),
        ),
    ]


def robustness_claim(
    text: str,
    a: Runs,
    b: Runs,
    *,
    margin: float = stats.DEFAULT_MARGIN,
    paper_difference: float | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict:
    """ "``a`` and ``b`` hardly differ" (Tables 4-5): ``equivalent`` when every seed's interval lies within
    +-``margin``; both runs must have left their start."""
    a, b = _runs(a, "a"), _runs(b, "b")
    intervals = seed_intervals(a, b, n_resamples=n_resamples, seed=seed)
    return claims.claim(
        text,
        intervals,
        margin=margin,
        preconditions=[left("the varied setting's stage 2", a), left("the reference stage 2", b)],
        paper_difference=paper_difference,
        per_task=_per_task(intervals),
    )


def paper_template_difference(row: str, template_label: str, reference_label: str) -> float:
    """Table 4: the paper's stage-2 average of ``template_label`` minus ``reference_label`` for ``row``."""
    value = REPORTED.value
    return value("Table 4", f"{row} {template_label} stage 2") - value("Table 4", f"{row} {reference_label} stage 2")


def paper_batch_difference(row: str, batch: int, reference: int) -> float | None:
    """Table 5: the paper's average at stage-2 batch ``batch`` minus at ``reference`` for ``row`` (None when the
    table has no such batch size, e.g. the official 240 of Mistral-7b)."""
    found = [REPORTED.lookup("Table 5", f"{row} batch {b}") for b in (batch, reference)]
    if not all(found):
        return None
    return found[0][0].value - found[1][0].value


def ceiling_crossings(scores: dict[str, float], ceilings: dict[str, float]) -> dict[str, dict[str, bool]]:
    """Per task: does our Spearman x100 exceed each ceiling (87.5 of Eq. 7, 100 * sqrt(3)/2 tie-corrected)?"""
    return {task: {name: value > limit for name, limit in ceilings.items()} for task, value in scores.items()}
