"""Pcc-tuning's claims on our runs, each built by ``stsnb.evaluation.claims.claim`` with the paper's sentence it tests
(``quotes``), its kind ("paper" or "check"), the dev gates of its own arms and, on the paper's direction claims, the
smallest effect of interest with its reason.

Every claim is a difference ``a - b`` of the average Spearman x100 over the scored tasks, on the same test pairs, with
a paired bootstrap interval per training seed (``stsnb.evaluation.stats``); on several kept seeds the verdict is decided
on the seeds-and-pairs interval of their mean. Runs come as ``{training seed: pipeline.StageRun}``.

**Dev gates** (``stsnb.evaluation.dev_gates``, :func:`dev_gate`): an arm trained on a seed when dev selection kept a
step past 0, a weight changed, and on STS-B dev pairs selection never scored (``gate_pairs``) the kept model beats the
fit's own start (stage 1: the untrained prompt embedding; stage 2, the control and the de-duplicated arm: stage 1's
adapter) beyond noise, a paired 95% interval above 0. A seed on which one of a claim's arms did not train is left out of
that claim ("2 of 3 seeds"); no gate reads the test pairs. The main claim, stage 2 improves on stage 1, also needs stage
1 to have moved dev by at least the claim's smallest effect.

- A check of our setting: stage 1 (contrastive, Eq. 8) improves the untrained prompt embedding (the paper reports no
  untrained score). Gate: stage 1 trained on dev.
- The paper's main claim (``MAIN_CLAIMS``, Table 4): stage 2 (Pearson, Eq. 9) improves on stage 1, quoted from
  Section 4.2; the paper difference and its direction from Table 4, the smallest effect half of it
  (:func:`smallest_effect`). Gates: stage 1 and stage 2 trained on dev, stage 1 by at least the smallest effect.
- The control, testing Section 4.2's attribution of stage 1's plateau to "the coarse granularity of contrastive
  learning": Pearson stage 2 beats stage 2's pairs under stage 1's objective, from the same stage-1 adapter, in the
  same batches and steps (``training.scored_pairs_info_nce``), so the objective is what differs; the main claim alone
  cannot tell the Pearson loss from the new in-domain data. Gates: stage 2 and the control trained on dev, and the
  control's pairs hold positives. :func:`attribution` and :func:`control_recovers` word what it says.
- A check of our setting: the stage-2 gain survives removing the pairs shared with the test sets (the de-duplicated
  arm, same STS-B / SICK-R mix, minus stage 1). The hypothesis "the shared pairs raise the score" is not a claim
  here: scored on 60 pairs per task, the kept arm's shared pairs are 1-3 of the pairs scored, so kept minus removed
  could not detect leakage; it would need the shared test pairs themselves scored (not run).
- Tables 4-5, "the template / the stage-2 batch size hardly matters": robustness claims of the paper, judged by
  equivalence within a stated margin (``stsnb.evaluation.stats.equivalence_verdict``), with whether "equivalent" is
  reachable at the run's size; both runs must have trained on dev (two copies of one model are trivially
  equivalent).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from ...evaluation import claims, dev_gates, power, stats, verdict_rules
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


def dev_gate(arm: str, runs: Runs) -> dev_gates.DevGate:
    """ "<arm> trained on dev", per training seed ("seed 0", as the claims' intervals are keyed): selection kept a step
    past 0, some adapter weight changed, and the kept weights beat the fit's own start (stage 1: the untrained prompt
    embedding; stage 2 and the control: stage 1's adapter) on STS-B dev pairs selection never scored, a paired 95%
    interval above 0 (where selection scored every dev pair: by more than the best of its selection evaluations would
    by chance; ``dev_gates.from_fits``)."""
    return dev_gates.from_fits(arm, {f"seed {s}": r.result for s, r in _runs(runs, arm).items()})


def paired(a: Runs, b: Runs | TaskPredictions) -> dict[str, dict]:
    """What each seed's interval of ``a - b`` is computed from, ``{"seed s": {task: (gold, pred_a, pred_b)}}``, for a
    claim's seeds-and-pairs interval (``b`` as for :func:`seed_intervals`)."""
    a = _runs(a, "a")
    if isinstance(b, Mapping) and b and all(isinstance(r, StageRun) for r in b.values()):
        other = {s: b[s].predictions for s in a}
    elif isinstance(b, StageRun):
        other = {s: b.predictions for s in a}
    else:
        other = {s: b for s in a}
    return {f"seed {s}": stats.paired_triples(run.predictions, other[s]) for s, run in a.items()}


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


def stage2_gain(row: str, template_label: str) -> tuple[float, float]:
    """Table 4: the paper's (stage 1, stage 2) averages for ``row`` and ``template_label`` (85.66, 90.61 for
    Mistral-7b PromptSTH)."""
    setting = f"{row} {template_label}"
    return tuple(REPORTED.value("Table 4", f"{setting} stage {n}") for n in (1, 2))  # type: ignore[return-value]


def smallest_effect(row: str, template_label: str, *, control: bool = False) -> tuple[float, str]:
    """The smallest effect of interest of a paper direction claim and its reason: half the paper's stage-2 gain
    (Table 4), the gain Section 4.2 calls "improvements of about 5 percentage points"; for the control
    (``control``), the share of that gain the paper puts down to the loss rather than the pairs."""
    first, second = stage2_gain(row, template_label)
    gain = second - first
    where = f"Table 4, {row} {template_label}: {first:.2f} -> {second:.2f}, {gain:+.2f}"
    if control:
        why = (
            f"half the paper's stage-2 gain ({where}), which Section 4.2 puts down to the coarse granularity of "
            "contrastive learning: a Pearson advantage over the same pairs under InfoNCE below half of it would leave "
            "most of that gain to the pairs, not the loss"
        )
    else:
        why = (
            f'half the paper\'s stage-2 gain ({where}; Section 4.2: "improvements of about 5 percentage points"): a '
            "gain below half of it is not the gain the paper reports"
        )
    return gain / 2, why


def stage_claims(
    untrained: TaskPredictions,
    stage1: Runs,
    stage2: Runs,
    row: str,
    template_label: str,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
    main_claim: bool = True,
) -> list[dict]:
    """Stage 1 vs untrained (a check) and stage 2 vs stage 1 (the paper's main claim, marked ``main_claim`` when
    ``main_claim``), one interval per training seed, each gated on its own arms' dev gates; the paper's difference
    from Table 4's ``row`` (e.g. "Mistral-7b") and ``template_label`` ("PromptSTH")."""
    stage1, stage2 = _runs(stage1, "stage1"), _runs(stage2, "stage2")
    setting = f"{row} {template_label}"
    first_level, second_level = stage2_gain(row, template_label)
    paper = second_level - first_level
    first = seed_intervals(stage1, untrained, n_resamples=n_resamples, seed=seed)
    second = seed_intervals(stage2, stage1, n_resamples=n_resamples, seed=seed)
    gates = [dev_gate("stage 1", stage1), dev_gate("stage 2", stage2)]
    effect, why = smallest_effect(row, template_label)
    return [
        claims.claim(
            "stage 1 (InfoNCE, Eq. 8) improves the untrained prompt embedding",
            first,
            paper_quote=quotes.STAGE1,
            kind=claims.CHECK,
            direction=+1,
            dev_gates=gates[:1],
            paired=paired(stage1, untrained),
            n_resamples=n_resamples,
            per_task=_per_task(first),
        ),
        claims.claim(
            f"stage 2 (1 - Pearson, Eq. 9) improves on stage 1 (Table 4, {setting})",
            second,
            paper_quote=quotes.STAGE2_GAIN,
            direction=_direction(paper),
            dev_gates=gates,
            smallest_effect=effect,
            smallest_effect_reason=why,
            baseline="stage 1",
            paired=paired(stage2, stage1),
            n_resamples=n_resamples,
            paper_difference=paper,
            per_task=_per_task(second),
            main_claim=main_claim,
        ),
    ]


def control_claim(
    stage2: Runs,
    control: Runs,
    positives: Mapping[int, int],
    *,
    row: str,
    template_label: str,
    positive_score: float,
    n_pairs: int | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict:
    """Pearson stage 2 minus the control (stage 2's pairs under Eq. 8's form, same start, batches and steps), per
    training seed, gated on its own two arms' dev gates (the control is asked no least gain: that InfoNCE plateaus from
    stage 1 is what Section 4.2 predicts); ``positives``: per seed, the control's pairs scored >= ``positive_score`` (of
    ``n_pairs``). Its smallest effect: :func:`smallest_effect` for ``row`` and ``template_label``."""
    stage2, control = _runs(stage2, "stage2"), _runs(control, "control")
    intervals = seed_intervals(stage2, control, n_resamples=n_resamples, seed=seed)
    fewest = min(int(positives[s]) for s in control)
    gates = [dev_gate("stage 2", stage2), dev_gate("the InfoNCE control", control)]
    effect, why = smallest_effect(row, template_label, control=True)
    return claims.claim(
        "the Pearson loss, not the new data: stage 2 (Eq. 9) beats the same pairs under stage 1's objective "
        f"(InfoNCE, Eq. 8 form, positives scored >= {positive_score:g})",
        intervals,
        paper_quote=quotes.GRANULARITY,
        direction=+1,
        dev_gates=gates,
        smallest_effect=effect,
        smallest_effect_reason=why,
        paired=paired(stage2, control),  # no least gain asked of the control: its plateau is what Section 4.2 predicts
        n_resamples=n_resamples,
        preconditions=[
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


def dedup_claim(stage1: Runs, stage2_removed: Runs, *, n_resamples: int = 2000, seed: int = 0) -> dict:
    """A check of our setting: the stage-2 arm drawn without the pairs shared with the test sets (same size, same
    STS-B / SICK-R mix) minus stage 1: what is left of the stage-2 gain without them. Gated on both arms' dev gates."""
    stage1, removed = _runs(stage1, "stage1"), _runs(stage2_removed, "stage2_removed")
    survives = seed_intervals(removed, stage1, n_resamples=n_resamples, seed=seed)
    return claims.claim(
        "the stage-2 gain survives removing the shared pairs (de-duplicated stage 2 minus stage 1)",
        survives,
        paper_quote=quotes.TEST_DATA,
        kind=claims.CHECK,
        direction=+1,
        dev_gates=[dev_gate("stage 1", stage1), dev_gate("de-duplicated stage 2", removed)],
        paired=paired(removed, stage1),
        n_resamples=n_resamples,
        per_task=_per_task(survives),
    )


def attribution(main: Mapping, control: Mapping | None) -> str:
    """What our control attributes the main claim's gain to, from the two rows: the Pearson loss when the control is
    supported; otherwise that the gain is *not* attributed to the Pearson loss by our control (the Pearson loss and
    the new in-domain pairs stay confounded), with the control's difference, verdict and the smallest difference its
    seeds could detect (``power.detectable_of_seeds``, as summary.md)."""
    gain = f"the stage-2 gain ({main['difference']:+.2f})"
    if control is None:
        return f"{gain} is not attributed to the Pearson loss: the control (the same pairs under InfoNCE) did not run"
    said = f"stage 2 minus the InfoNCE control on the same pairs {control['difference']:+.2f} [{control['low']:+.2f}, "
    said += f"{control['high']:+.2f}], {claims.verdict_text(control, mark_provisional=True)}"
    if control["verdict"] == verdict_rules.SUPPORTED:
        return f"our control attributes {gain} to the Pearson loss ({said})"
    if control["verdict"] == verdict_rules.NOT_TESTED:
        return f"{gain} is not attributed to the Pearson loss: the control was not tested ({said})"
    per_seed = [(e["difference"], e["low"], e["high"]) for e in control.get("per_seed") or []]
    detectable = power.detectable_of_seeds(per_seed or [(control["difference"], control["low"], control["high"])])
    return (
        f"{gain} is not attributed to the Pearson loss by our control ({said}; its intervals would detect about "
        f"+-{detectable:.2f} at 80% power): the loss and the new in-domain pairs remain confounded"
    )


def _not_tested(row: Mapping) -> bool:
    return row.get("verdict") == verdict_rules.NOT_TESTED


def control_recovers(main: Mapping, control: Mapping | None) -> str:
    """How much of the stage-2 gain the control's point estimate recovers: (stage 2 minus stage 1) minus (stage 2
    minus the control), i.e. the control minus stage 1, on the training seeds both rows kept (their ``per_seed``
    entries), e.g. "the InfoNCE control on the same pairs recovers about +4.52 of the +4.98 ..."."""
    if control is None:
        return "the InfoNCE control did not run, so how much of the gain the same pairs give under InfoNCE is unknown"
    untested = [name for name, r in (("the main claim", main), ("the control", control)) if _not_tested(r)]
    if untested:
        return f"how much of the gain the InfoNCE control recovers is not read: {' and '.join(untested)} not tested"
    gains = {e["seed_run"]: e["difference"] for e in main.get("per_seed") or []}
    over = {e["seed_run"]: e["difference"] for e in control.get("per_seed") or []}
    both = [s for s in gains if s in over]
    if not both:
        return "the main claim and the control kept no training seed in common: no share of the gain to compare"
    gain = sum(gains[s] for s in both) / len(both)
    left = sum(over[s] for s in both) / len(both)
    seeds = f"{len(both)} seed{'s' if len(both) != 1 else ''}"
    return (
        f"the InfoNCE control on the same pairs recovers about {gain - left:+.2f} of the {gain:+.2f} that stage 2 "
        f"gains over stage 1 (point estimates, mean of {seeds}: stage 2 minus the control {left:+.2f})"
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
    when every seed's interval lies within +-``margin`` (``margin_reason``: why that margin; the row's
    ``reachability`` says whether "equivalent" can be reached at this size); both runs, named by ``arms`` (stored as
    the row's ``a`` and ``b``, as ``text`` names them), must have trained on dev (:func:`dev_gate`)."""
    a, b = _runs(a, "a"), _runs(b, "b")
    intervals = seed_intervals(a, b, n_resamples=n_resamples, seed=seed)
    return claims.claim(
        text,
        intervals,
        paper_quote=paper_quote,
        margin=margin,
        margin_reason=margin_reason,
        dev_gates=[dev_gate(arms[0], a), dev_gate(arms[1], b)],
        paired=paired(a, b),
        n_resamples=n_resamples,
        paper_difference=paper_difference,
        per_task=_per_task(intervals),
        a=arms[0],
        b=arms[1],
    )


def row_details(row: Mapping) -> list[str]:
    """What a notebook prints under a claim (after ``stsnb.evaluation.claims.describe``): each arm's dev gate with its
    per-seed evidence, the seeds left out and why, the smallest effect of interest and why (a direction claim), and
    whether "equivalent" is reachable at this size (an equivalence claim); the gates and seeds only of a claim that was
    tested (``describe`` prints why one was not)."""
    lines = []
    if row.get("verdict") != verdict_rules.NOT_TESTED:  # a claim not tested names its failed gates already
        lines += [
            f"{p['name']}: {p['evidence']}"
            for p in row.get("preconditions") or []
            if str(p.get("name", "")).endswith(dev_gates.TRAINED_ON_DEV)
        ]
        lines += [f"left out of this claim: {seed} ({why})" for seed, why in (row.get("seeds_left_out") or {}).items()]
    if row.get("smallest_effect") is not None:
        lines.append(f"smallest effect of interest +-{row['smallest_effect']:.2f}: {row['smallest_effect_reason']}")
    if row.get("reachability"):
        lines.append(str(row["reachability"]))
    return lines


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
    """Why a run with one template and one batch size has no Table 4-5 claim, and whether a sweep at its size could
    settle one: the widest seed interval of its claims (``rows``) against the equivalence ``margin``
    (``verdict_rules.equivalence_reachable``)."""
    widths = [(e["high"] - e["low"]) / 2 for r in rows for e in (r.get("per_seed") or [r])]
    head = "one template and one batch size in this profile: no Table 4-5 claim"
    if not widths:
        return f"{head}; add values to `templates` / `stage2_batch_sizes` to sweep"
    reach = verdict_rules.equivalence_reachable(margin, max(widths))
    return f"{head}. Were a sweep run at this size: {reach.sentence}; add values to `templates` / `stage2_batch_sizes`"


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


# The paper's main claim, from its abstract (fixed on 2026-11-28, after the first cpu runs: main_claims.FIXED; every
# profile's summary leads with it)
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
