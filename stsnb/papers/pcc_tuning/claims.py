"""Pcc-tuning's claims on our runs, each built by ``stsnb.evaluation.claims.claim`` with the paper's sentence it tests
(``quotes``), its kind ("paper" or "check") and the gates of its own arms
(``stsnb.evaluation.claims.own_arms_trained``).

Every claim is a difference ``a - b`` of the average Spearman x100 over the scored tasks, on the same test pairs, with
a paired bootstrap interval per training seed (``stsnb.evaluation.stats``); a direction verdict needs every seed's
interval on the same side. Runs come as ``{training seed: pipeline.StageRun}``.

- A check of our setting: stage 1 (contrastive, Eq. 8) improves the untrained prompt embedding (the paper reports no
  untrained score). Gate: stage 1 is not its starting point.
- The headline, a claim of the paper: stage 2 (Pearson, Eq. 9) improves on stage 1 (Section 4.2, Tables 2 and 4; the
  paper difference and its direction from Table 4). Gates, its own arms: stage 1 moved the encoder (its interval
  against the untrained embedding excludes 0 upward on every seed) and stage 2 left its start. With several seeds it
  also gets a seeds-and-pairs interval (``seed_bootstrap.seeds_and_pairs_predictions_difference``).
- The control, testing the paper's attribution of the gain to the Pearson loss (Section 3): Pearson stage 2 beats
  stage 2's pairs under stage 1's objective, from the same stage-1 adapter, in the same batches and steps
  (``training.scored_pairs_info_nce``), so the objective is what differs; the headline alone cannot tell the Pearson
  loss from the new in-domain data. Gates: both runs left their start, and the control's pairs hold positives.
  :func:`attribution` words what the control says about the headline.
- A check of our setting: the stage-2 gain survives removing the pairs shared with the test sets (the de-duplicated
  arm, same STS-B / SICK-R mix, minus stage 1). The hypothesis "the shared pairs raise the score" is not a claim
  here: scored on 60 pairs per task, the kept arm's shared pairs are 1-3 of the pairs scored, so kept minus removed
  could not detect leakage; it would need the shared test pairs themselves scored (not run).
- Tables 4-5, "the template / the stage-2 batch size hardly matters": robustness claims of the paper, judged by
  equivalence within a stated margin (``stsnb.evaluation.stats.equivalence_verdict``); both runs must have left their
  start (two copies of one model are trivially equivalent).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from ...evaluation import claims, seed_bootstrap, stats, verdict_rules
from ...evaluation.evaluate import TaskPredictions
from ...evaluation.main_claims import MainClaim
from . import quotes
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


def seeds_and_pairs(a: Runs, b: Runs | TaskPredictions, *, n_resamples: int = 2000, seed: int = 0) -> dict | None:
    """``a - b``'s mean over the training seeds with its seeds-and-pairs interval (seeds resampled, then the shared
    test pairs of every task; ``seed_bootstrap.seeds_and_pairs_predictions_difference``) as a JSON-ready dict; None with
    one seed (the per-seed interval is then the whole story)."""
    a = _runs(a, "a")
    if len(a) < 2:
        return None
    if isinstance(b, Mapping) and b and all(isinstance(r, StageRun) for r in b.values()):
        other = {s: r.predictions for s, r in b.items()}
    elif isinstance(b, StageRun):
        other = b.predictions
    else:
        other = b
    both = seed_bootstrap.seeds_and_pairs_predictions_difference(
        {s: r.predictions for s, r in a.items()}, other, n_resamples=n_resamples, seed=seed
    )
    return both.to_dict()


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
    gates = {"stage 1": claims.baseline_moved(first, "stage 1"), "stage 2": left("stage 2", stage2)}
    return [
        claims.claim(
            "stage 1 (InfoNCE, Eq. 8) improves the untrained prompt embedding",
            first,
            paper_quote=quotes.STAGE1,
            kind=claims.CHECK,
            direction=+1,
            preconditions=[left("stage 1", stage1)],
            per_task=_per_task(first),
        ),
        claims.claim(
            f"stage 2 (1 - Pearson, Eq. 9) improves on stage 1 (Table 4, {setting})",
            second,
            paper_quote=quotes.HEADLINE,
            direction=_direction(paper),
            preconditions=claims.own_arms_trained(gates),
            paper_difference=paper,
            per_task=_per_task(second),
            headline=True,
            seeds_and_pairs=seeds_and_pairs(stage2, stage1, n_resamples=n_resamples, seed=seed),
        ),
    ]


def control_claim(
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
    training seed, gated on its own two arms; ``positives``: per seed, the control's pairs scored >=
    ``positive_score`` (of ``n_pairs``)."""
    stage2, control = _runs(stage2, "stage2"), _runs(control, "control")
    intervals = seed_intervals(stage2, control, n_resamples=n_resamples, seed=seed)
    fewest = min(int(positives[s]) for s in control)
    gates = {"stage 2": left("stage 2", stage2), "the InfoNCE control": left("the InfoNCE control", control)}
    return claims.claim(
        "the Pearson loss, not the new data: stage 2 (Eq. 9) beats the same pairs under stage 1's objective "
        f"(InfoNCE, Eq. 8 form, positives scored >= {positive_score:g})",
        intervals,
        paper_quote=quotes.PEARSON_LOSS,
        direction=+1,
        preconditions=[
            *claims.own_arms_trained(gates),
            claims.phenomenon_occurs(
                f"pairs scored >= {positive_score:g} (the control's positives, fewest over seeds)",
                fewest,
                out_of=n_pairs,
            ),
        ],
        per_task=_per_task(intervals),
        control=True,
        a="stage 2",
        b="the InfoNCE control",
    )


def dedup_claim(
    stage1: Runs,
    stage2_removed: Runs,
    untrained: TaskPredictions,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict:
    """A check of our setting: the stage-2 arm drawn without the pairs shared with the test sets (same size, same
    STS-B / SICK-R mix) minus stage 1: what is left of the stage-2 gain without them."""
    stage1, removed = _runs(stage1, "stage1"), _runs(stage2_removed, "stage2_removed")
    survives = seed_intervals(removed, stage1, n_resamples=n_resamples, seed=seed)
    moved = claims.baseline_moved(seed_intervals(stage1, untrained, n_resamples=n_resamples, seed=seed), "stage 1")
    gates = {"stage 1": moved, "de-duplicated stage 2": left("de-duplicated stage 2", removed)}
    return claims.claim(
        "the stage-2 gain survives removing the shared pairs (de-duplicated stage 2 minus stage 1)",
        survives,
        paper_quote=quotes.TEST_DATA,
        kind=claims.CHECK,
        direction=+1,
        preconditions=claims.own_arms_trained(gates),
        per_task=_per_task(survives),
    )


def attribution(headline: Mapping, control: Mapping | None) -> str:
    """What our control attributes the headline gain to, from the two rows: the Pearson loss when the control is
    supported; otherwise that the gain is *not* attributed to the Pearson loss by our control (the Pearson loss and
    the new in-domain pairs stay confounded), with the control's difference, verdict and the smallest difference its
    widest seed interval could detect (``verdict_rules.detectable_effect``)."""
    gain = f"the stage-2 gain ({headline['difference']:+.2f})"
    if control is None:
        return f"{gain} is not attributed to the Pearson loss: the control (the same pairs under InfoNCE) did not run"
    said = f"stage 2 minus the InfoNCE control on the same pairs {control['difference']:+.2f} [{control['low']:+.2f}, "
    said += f"{control['high']:+.2f}], {claims.verdict_text(control)}"
    if control["verdict"] == verdict_rules.SUPPORTED:
        return f"our control attributes {gain} to the Pearson loss ({said})"
    widths = [(e["low"], e["high"]) for e in control.get("per_seed") or []] or [(control["low"], control["high"])]
    detectable = max(verdict_rules.detectable_effect(lo, hi) for lo, hi in widths)
    return (
        f"{gain} is not attributed to the Pearson loss by our control ({said}; its intervals would detect about "
        f"+-{detectable:.2f} at 80% power): the loss and the new in-domain pairs remain confounded"
    )


def robustness_claim(
    text: str,
    a: Runs,
    b: Runs,
    *,
    paper_quote: str,
    arms: tuple[str, str],
    margin: float = verdict_rules.DEFAULT_MARGIN,
    margin_reason: str,
    paper_difference: float | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict:
    """ "``a`` and ``b`` hardly differ" (Tables 4-5, ``quotes.TEMPLATES`` / ``quotes.BATCH_SIZES``): ``equivalent``
    when every seed's interval lies within +-``margin`` (``margin_reason``: why that margin); both runs, named by
    ``arms`` (stored as the row's ``a`` and ``b``, as ``text`` names them), must have left their start."""
    a, b = _runs(a, "a"), _runs(b, "b")
    intervals = seed_intervals(a, b, n_resamples=n_resamples, seed=seed)
    gates = {arms[0]: left(arms[0], a), arms[1]: left(arms[1], b)}
    return claims.claim(
        text,
        intervals,
        paper_quote=paper_quote,
        margin=margin,
        margin_reason=margin_reason,
        preconditions=claims.own_arms_trained(gates),
        paper_difference=paper_difference,
        per_task=_per_task(intervals),
        a=arms[0],
        b=arms[1],
    )


def margin_reason(row: str, margin: float) -> str:
    """Why the robustness margin: the paper's own spread across the settings it calls alike (Table 4's templates and
    Table 5's batch sizes for ``row``), beside our ``margin``."""
    templates = [
        n.value for n in REPORTED.lookup("Table 4") if n.setting.startswith(f"{row} ") and "stage 2" in n.setting
    ]
    batches = [n.value for n in REPORTED.lookup("Table 5") if n.setting.startswith(f"{row} batch")]
    spread = [
        f"{name} {max(v) - min(v):.2f}"
        for name, v in (("Table 4's templates", templates), ("Table 5's batch sizes", batches))
        if v
    ]
    paper = f"the paper's spread on {row}: {', '.join(spread)}" if spread else f"no paper spread for {row}"
    return f"+-{margin:g} point(s), a difference a reader would call small; {paper}"


def no_sweep_line(rows: Sequence[Mapping], margin: float) -> str:
    """Why a run with one template and one batch size has no Table 4-5 claim, and why a sweep at its size would not
    settle one: the widest half-width of its claims' intervals (``rows``) beside the equivalence ``margin``."""
    half_width = max(((r["high"] - r["low"]) / 2 for r in rows), default=math.nan)
    return (
        "one template and one batch size in this profile: no Table 4-5 claim. At this size an equivalence verdict is "
        f"out of reach anyway: this run's intervals are up to +-{half_width:.2f} points wide, the margin +-{margin:g}; "
        "add values to `templates` / `stage2_batch_sizes` to sweep"
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


# The paper's main claim, from its abstract (decided before any run; every profile's summary leads with it)
MAIN_CLAIMS = (
    MainClaim(
        "10_pcc_tuning",
        quotes.MAIN_CLAIM,
        "Table 4",
        "stage 2 (1 - Pearson, Eq. 9)",
        "stage 1 (InfoNCE, Eq. 8)",
        ("stage 2 (1 - Pearson, Eq. 9) improves on stage 1",),
    ),
)
