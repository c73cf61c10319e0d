"""Pcc-tuning's claims on our runs: paired differences of STS predictions on the same test pairs, bootstrap
intervals and the verdict rule of ``stsnb.stats`` (supported / contradicted / unresolved).

- Stage 1 (contrastive, Eq. 8) improves the untrained prompt embedding: claimed positive; the paper reports no
  untrained score, so there is no paper difference.
- Stage 2 (Pearson, Eq. 9) improves on stage 1: Table 4's stage-2 minus stage-1 average for the paper row.
- Beyond the paper: does the stage-2 gain survive removing the training pairs shared with the test sets? Our
  hypothesis (not the paper's claim) is that the shared pairs raise the score, so "kept minus removed" is claimed
  positive; the gain after de-duplication (minus stage 1) is claimed positive too.
"""

from __future__ import annotations

import math

from ... import stats
from ...evaluate import TaskPredictions
from .reported import REPORTED


def difference_claim(
    claim: str,
    a: TaskPredictions,
    b: TaskPredictions,
    *,
    paper_difference: float | None,
    direction: int = +1,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict:
    """``a - b`` (average Spearman x100 over the tasks of ``a``) with its paired interval and the verdict for the
    claimed ``direction`` (the sign of ``paper_difference`` when there is one; 0: no direction is claimed, e.g. the
    paper's "the template matters little", and the verdict stays ``unresolved``)."""
    interval = stats.paired_predictions_difference(a, b, n_resamples=n_resamples, seed=seed)
    if paper_difference is not None and paper_difference != 0:
        direction = int(math.copysign(1, paper_difference))
    row = stats.claim_row(claim, {f"seed {seed}": interval}, direction or +1)
    if not direction:
        row.update(verdict=stats.UNRESOLVED, paper_direction=0)
    row["paper_difference"] = paper_difference
    row["per_task"] = dict(interval.tasks)
    return row


def stage_claims(
    untrained: TaskPredictions,
    stage1: TaskPredictions,
    stage2: TaskPredictions,
    row: str,
    template_label: str,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
) -> list[dict]:
    """Stage 1 vs untrained and stage 2 vs stage 1; the paper's difference from Table 4's ``row`` (e.g.
    "Mistral-7b") and ``template_label`` ("PromptSTH")."""
    setting = f"{row} {template_label}"
    paper = REPORTED.value("Table 4", f"{setting} stage 2") - REPORTED.value("Table 4", f"{setting} stage 1")
    return [
        difference_claim(
            "stage 1 (InfoNCE, Eq. 8) improves the untrained prompt embedding",
            stage1,
            untrained,
            paper_difference=None,
            n_resamples=n_resamples,
            seed=seed,
        ),
        difference_claim(
            f"stage 2 (1 - Pearson, Eq. 9) improves on stage 1 (Table 4, {setting})",
            stage2,
            stage1,
            paper_difference=paper,
            n_resamples=n_resamples,
            seed=seed,
        ),
    ]


def dedup_claims(
    stage1: TaskPredictions,
    stage2_kept: TaskPredictions,
    stage2_removed: TaskPredictions,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
) -> list[dict]:
    """Beyond the paper: the stage-2 run that trained on pairs shared with the test sets against the one that did
    not, and what is left of the stage-2 gain without them."""
    return [
        difference_claim(
            "hypothesis: training pairs shared with the test sets raise the stage-2 score",
            stage2_kept,
            stage2_removed,
            paper_difference=None,
            n_resamples=n_resamples,
            seed=seed,
        ),
        difference_claim(
            "the stage-2 gain survives removing the shared pairs (de-duplicated stage 2 minus stage 1)",
            stage2_removed,
            stage1,
            paper_difference=None,
            n_resamples=n_resamples,
            seed=seed,
        ),
    ]


def ceiling_crossings(scores: dict[str, float], ceilings: dict[str, float]) -> dict[str, dict[str, bool]]:
    """Per task: does our Spearman x100 exceed each ceiling (87.5 of Eq. 7, 100 * sqrt(3)/2 tie-corrected)?"""
    return {task: {name: value > limit for name, limit in ceilings.items()} for task, value in scores.items()}
