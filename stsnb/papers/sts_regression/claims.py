"""STS-Regression's claims checked on our runs: paired differences of STS predictions with bootstrap intervals,
each built by ``stsnb.evaluation.claims.claim`` with the paper's sentence it tests (``quotes``) and the preconditions it
needs to be tested at all.

Every claim is a difference ``a - b`` of seven-task (or ``eval_tasks``) average Spearman x100 on the same test
pairs, one interval per training seed; its direction is the paper's words ("a beats b": +1), and the paper's own
difference (``REPORTED``) is shown beside it.

Preconditions: each claim is gated on its own arms (``stsnb.evaluation.claims.own_arms_trained``); a failed one makes
the verdict ``not tested``, with the reason.

- Table 1 (Section 4.1): both losses of the claim left their start (dev selection kept a step > 0 and the weights
  changed, ``stsnb.evaluation.claims.left_start``); a claim with cross entropy as an arm (the headline) also needs cross
  entropy, the paper's baseline, to have moved the encoder above the untrained one. Cross entropy gates no claim
  it is not an arm of ("Translated ReLU beats L1" is tested on Translated ReLU and L1 alone).
- Table 1's headline on the STS analogue (``tasks``): regression on the gold score against cross entropy on its 6
  rounded classes is confounded with label resolution, so it is a **check** of the analogue (:data:`CONFOUNDED`,
  ``confounded_with`` names the confound), never a claim of the paper; the paper's headline is tested on the same
  labels for both objectives, Smooth K2 trained on cross entropy's class ids (:data:`ISOLATED`, arm
  :data:`ROUNDED_K2`), gated on those two arms. On NLI both learn the same three labels and the headline is
  :data:`HEADLINE` itself.
- "Fine-tuning improves the raw encoder" is a check of our setting (``kind="check"``), not a claim of the paper.
- Table 3 (Section 4.2): +Ours left its start. A +Contrast run that kept its step-0 checkpoint is what Section 4.2
  reports ("may even lead to model collapse"), so its staying put is recorded as the finding; but it then *is* the
  encoder it started from, and "+Ours beats +Contrast" would repeat "+Ours improves the encoder": one comparison
  counted twice, so that claim is not tested (``same_comparison_as``).
- Table 5 (Section 4.4, "minor fluctuations ... robustness"): a robustness claim, judged by equivalence within a
  margin (``stsnb.evaluation.stats.equivalence_verdict``: each side at 2.5% with 95% intervals) whose reason is the
  paper's own numbers (:func:`table5_margin_reason`); not tested when the margin contains the smallest gain Section 4.1
  reads as real. Its reference setting changed the encoder and both settings left their start (otherwise two
  copies of one model are trivially "equivalent").
- Table 6 (Section 4.5): the full head input's run left its start; the other head's run staying put is the finding
  (Table 6 puts it 20 points below the full head), recorded with the paper's numbers, never a reason to skip it.

The one choice made among runs, "the best loss" of the did-training-help check, is made on STS-B dev scores only
(:func:`best_by_dev`); test pairs only ever give the intervals.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ...evaluation import claims, stats
from ...evaluation.evaluate import TaskPredictions
from ...evaluation.main_claims import MainClaim
from ...training.config import TrainResult
from . import quotes
from .reported import REPORTED
from .tasks import NLI_TASK, STS_ROUNDED_TASK, Table1Task

SeedPredictions = Mapping[int, TaskPredictions]  # training seed -> task -> (gold, cosine)
BASELINE = "cross_entropy"  # Table 1's baseline: Sentence-BERT's 3-way classification objective


@dataclass(frozen=True)
class PairClaim:
    """ "``a`` beats ``b``" in one of the paper's tables (settings named as in ``REPORTED``, or ``paper_a`` where our
    arm ``a`` stands for another of the paper's rows), the paper's sentence it tests (``quote``), the direction its
    words give (+1: a beats b) and its kind (a claim of the paper, or a check of our setting)."""

    text: str
    a: str
    b: str
    quote: str
    direction: int = +1
    kind: claims.Kind = claims.PAPER
    paper_a: str = ""

    @property
    def reported_a(self) -> str:
        """The paper's row our arm ``a`` is compared with."""
        return self.paper_a or self.a


# Section 4.1's reading of Table 1 (losses by the names of ``recipes.LOSSES``); the first is the paper's headline
TABLE1_CLAIMS: tuple[PairClaim, ...] = (
    PairClaim("regression (Smooth K2) beats classification (cross entropy)", "smooth_k2", BASELINE, quotes.HEADLINE),
    PairClaim("the zero-gradient buffer helps: Translated ReLU beats L1", "translated_relu", "l1", quotes.BUFFER_L1),
    PairClaim("the zero-gradient buffer helps: Smooth K2 beats MSE", "smooth_k2", "mse", quotes.BUFFER_MSE),
    PairClaim(
        "the adaptive gradient helps: Smooth K2 beats Translated ReLU", "smooth_k2", "translated_relu", quotes.ADAPTIVE
    ),
    PairClaim("the adaptive gradient helps: MSE beats L1", "mse", "l1", quotes.ADAPTIVE),
)
HEADLINE = TABLE1_CLAIMS[0]
HEADLINE_LOSSES: tuple[str, ...] = (HEADLINE.b, HEADLINE.a)  # the losses the headline's extra seeds train
# The STS analogue (tasks.STS_TASK): the headline on the same labels for both objectives, and what its continuous
# comparison is instead (module docstring).
ROUNDED_K2 = "smooth_k2_rounded"  # the arm: Smooth K2 trained on cross entropy's class ids (tasks.STS_ROUNDED_TASK)
ISOLATED = PairClaim(
    "regression (Smooth K2) beats classification (cross entropy) on the same rounded labels",
    ROUNDED_K2,
    BASELINE,
    quotes.HEADLINE,
    paper_a=HEADLINE.a,
)
CONFOUNDED = PairClaim(
    "Smooth K2 on the gold score beats cross entropy on its rounded classes (confounded with label resolution)",
    HEADLINE.a,
    BASELINE,
    quotes.NLI_LABELS,
    kind=claims.CHECK,
)
CONFOUND = (
    "label resolution: regression learns the continuous 0-5 score, cross entropy the 6 classes it rounds to, so a "
    "difference can come from the finer labels as well as from the order-aware objective (on NLI both learn the "
    "same three labels)"
)
SAME_LABELS = (
    "the same labels: Smooth K2 learns the class id cross entropy learns from each pair (the score rounded, as a "
    "number 0-5), so the two arms differ only in the objective, order-aware regression against order-blind "
    "classification"
)
# Table 6: the head's input; the paper's best is (u, v, |u - v|)
FULL_HEAD = "(u,v,|u-v|)"
TABLE6_CLAIMS: tuple[PairClaim, ...] = (
    PairClaim("the head input (u,v,|u-v|) beats (u,v)", FULL_HEAD, "(u,v)", quotes.TABLE6),
    PairClaim("the head input (u,v,|u-v|) beats |u-v|", FULL_HEAD, "|u-v|", quotes.TABLE6),
)


@dataclass(frozen=True)
class Trained:
    """One training run as its claims see it: the STS predictions of the kept weights and what dev selection kept
    (``best_step`` 0: the untrained start; ``weight_change``: the largest change of any trained weight between the
    start and the kept weights, ``TrainResult.weight_change``)."""

    predictions: TaskPredictions
    best_step: int
    weight_change: float | None = None
    dev_score: float | None = None  # the STS-B dev Spearman of the kept checkpoint (the selection score)

    @classmethod
    def of(cls, predictions: TaskPredictions, result: TrainResult) -> Trained:
        """From a ``fit`` result; without dev selection (``best_step`` None) the last step is what is kept."""
        step = result.steps if result.best_step is None else result.best_step
        return cls(predictions, int(step), result.weight_change, result.best_score)


def stayed_at_start(runs: Mapping[object, Trained]) -> list[str]:
    """One sentence for each run that dev selection left at its start (kept step 0, or no weight changed): that run
    *is* the model it started from, and any claim on it is not tested (``left``)."""
    return [
        f"{' '.join(map(str, key)) if isinstance(key, tuple) else key}: dev selection kept step {r.best_step} "
        f"(largest weight change {r.weight_change or 0.0:.1e}): this run is its untrained starting point"
        for key, r in runs.items()
        if r.best_step <= 0 or r.weight_change == 0.0
    ]


def kept_start_note(runs: Iterable[Trained]) -> str:
    """A flag for a row of ours set beside the paper's trained number: "" when every run left its start, else
    "UNTRAINED: ..." saying how many kept step 0 (the starting encoder, not a trained model)."""
    runs = list(runs)
    stayed = sum(r.best_step <= 0 or r.weight_change == 0.0 for r in runs)
    if not stayed:
        return ""
    of = f"{stayed} of {len(runs)} runs" if len(runs) > 1 else "the run"
    return f"UNTRAINED: {of} kept step 0 (the starting encoder, beside the paper's trained model)"


def with_flag(note: str, runs: Iterable[Trained]) -> str:
    """``note`` with :func:`kept_start_note` appended when a run kept its start."""
    flag = kept_start_note(runs)
    return f"{note}; {flag}" if flag and note else flag or note


def paper_difference(table: str, row: str, a: str, b: str) -> float:
    """The paper's ``a - b`` of the average column of ``table`` for the backbone ``row`` (e.g. "BERT-base")."""
    sep_a = " " if a else ""
    sep_b = " " if b else ""
    return REPORTED.value(table, f"{row}{sep_a}{a}") - REPORTED.value(table, f"{row}{sep_b}{b}")


def best_by_dev(runs: Mapping[tuple[str, int], Trained], seeds: Sequence[int]) -> str:
    """The setting whose selected checkpoints have the highest mean STS-B dev score over ``seeds`` (among the
    settings of ``runs = {(setting, seed): Trained}`` that ran on every one of them).

    The only choice among runs made before testing, and made on dev data: picking the best of several *test* scores
    and then testing it on the same pairs would inflate its interval."""
    settings = [name for name in dict.fromkeys(n for n, _ in runs) if all((name, s) in runs for s in seeds)]
    if not seeds or not settings:
        raise ValueError(f"no setting ran on every seed of {list(seeds)}: nothing to choose from")
    scores = {name: [runs[(name, s)].dev_score for s in seeds] for name in settings}
    unscored = [name for name, values in scores.items() if any(v is None for v in values)]
    if unscored:
        raise ValueError(f"{unscored} have no dev score (trained without dev selection): cannot choose on dev")
    return max(settings, key=lambda name: float(np.mean(scores[name])))


def seed_intervals(
    a: SeedPredictions, b: SeedPredictions, n_resamples: int = 2000
) -> dict[str, stats.PairedDifference]:
    """``a - b`` per training seed (paired bootstrap over the test pairs, seeded by the run's seed)."""
    if set(a) != set(b) or not a:
        raise ValueError(f"a and b need the same training seeds, got {sorted(a)} and {sorted(b)}")
    return {
        f"seed {s}": stats.paired_predictions_difference(a[s], b[s], n_resamples=n_resamples, seed=s) for s in sorted(a)
    }


def left(what: str, runs: Mapping[int, Trained]) -> claims.Precondition:
    """ "<what> is not its starting point" on every training seed of ``runs``."""
    changes = [r.weight_change for r in runs.values()]
    return claims.left_start(
        what,
        {f"seed {s}": r.best_step for s, r in sorted(runs.items())},
        None if any(c is None for c in changes) else {f"seed {s}": r.weight_change for s, r in sorted(runs.items())},
    )


def moved(what: str, after: Mapping[int, Trained], before: TaskPredictions, n_resamples: int) -> claims.Precondition:
    """ "<what> moved the encoder": above the untrained encoder on the same test pairs, every seed."""
    after_predictions = {s: r.predictions for s, r in after.items()}
    return claims.baseline_moved(seed_intervals(after_predictions, {s: before for s in after}, n_resamples), what)


def changed(what: str, after: Mapping[int, Trained], before: TaskPredictions, n_resamples: int) -> claims.Precondition:
    """ "<what> changed the encoder": its interval against the starting encoder excludes 0 on either side, every
    seed (a robustness claim needs a setting that did something; a worse encoder is still a change)."""
    after_predictions = {s: r.predictions for s, r in after.items()}
    intervals = seed_intervals(after_predictions, {s: before for s in after}, n_resamples)
    holds = all(low > 0 or high < 0 for _, low, high in intervals.values())
    evidence = f"{what} minus its start: " + "; ".join(
        f"{label}: {d:+.2f} [{lo:+.2f}, {hi:+.2f}]" for label, (d, lo, hi) in intervals.items()
    )
    return claims.precondition(f"{what} changed the encoder", holds, evidence)


def missing(what: str, seeds: Sequence[int]) -> claims.Precondition:
    """A precondition that fails because the run it needs was not made."""
    return claims.precondition(f"{what} was run", False, f"no run on seed(s) {list(seeds)}")


def _opening(table: str, backbone: str = "") -> str:
    """A claim's opening, "Table 1, " or, with a ``backbone``, "Table 1, roberta-base: ": the notebook names the
    backbone when it runs several (the ``paper`` profile's BERT and RoBERTa), so that no two claims read alike."""
    return f"{table}, {backbone}: " if backbone else f"{table}, "


def backbone_fields(backbone: str) -> dict:
    """The row's ``backbone`` entry when one is named (figures label their rows with it), else nothing."""
    return {"backbone": backbone} if backbone else {}


def pair_claim(
    text: str,
    a: SeedPredictions,
    b: SeedPredictions,
    paper_diff: float | None,
    *,
    table: str,
    names: tuple[str, str] = ("a", "b"),
    paper_quote: str,
    kind: claims.Kind = claims.PAPER,
    preconditions: Sequence[claims.Precondition] = (),
    n_resamples: int = 2000,
    direction: int = +1,
    margin: float | None = None,
    margin_reason: str | None = None,
    paper_effect: float | None = None,
    **extra,
) -> dict:
    """One claim row (``stsnb.evaluation.claims.claim``): ``a - b`` per training seed, the paper's sentence and
    difference, the direction the paper's words give, ``margin`` (with its reason and the paper's own effect) for a
    robustness claim, ``kind`` ("check" for a check of our setting), and the preconditions."""
    return claims.claim(
        text,
        seed_intervals(a, b, n_resamples),
        paper_quote=paper_quote,
        kind=kind,
        direction=direction,
        margin=margin,
        margin_reason=margin_reason,
        paper_effect=paper_effect,
        preconditions=preconditions,
        paper_difference=paper_diff,
        table=table,
        a=names[0],
        b=names[1],
        **extra,
    )


def seeds_of(runs: Mapping[tuple[str, int], object], *settings: str) -> list[int]:
    """The training seeds on which every one of ``settings`` ran."""
    per_setting = [{s for name, s in runs if name == setting} for setting in settings]
    return sorted(set.intersection(*per_setting)) if per_setting else []


def runs_of(runs: Mapping[tuple[str, int], Trained], setting: str, seeds: Sequence[int]) -> dict[int, Trained]:
    return {s: runs[(setting, s)] for s in seeds}


def predictions_by_seed(runs: Mapping[int, Trained]) -> dict[int, TaskPredictions]:
    return {s: r.predictions for s, r in runs.items()}


def nli_moved(
    runs: Mapping[tuple[str, int], Trained], before: TaskPredictions, seeds: Sequence[int], n_resamples: int
) -> claims.Precondition:
    """ "The cross-entropy baseline moved the encoder" on ``seeds`` (Table 1's baseline, NLI fine-tuning)."""
    what = "the cross-entropy baseline"
    if not all((BASELINE, s) in runs for s in seeds):
        return missing(what, seeds)
    return moved(what, runs_of(runs, BASELINE, seeds), before, n_resamples)


def table1_claim_list(task: Table1Task = NLI_TASK) -> tuple[PairClaim, ...]:
    """Table 1's comparisons on ``task``: :data:`ISOLATED` (the headline on the same labels, where its arm ran),
    then :data:`TABLE1_CLAIMS`, whose headline becomes the check :data:`CONFOUNDED` where regression learns a finer
    score than cross entropy's classes (``task.same_labels`` false: the STS analogue)."""
    first = HEADLINE if task.same_labels else CONFOUNDED
    return (ISOLATED, first, *TABLE1_CLAIMS[1:])


def table1_claims(
    runs: Mapping[tuple[str, int], Trained],
    before: TaskPredictions,
    row: str,
    *,
    n_resamples: int = 2000,
    backbone: str = "",
    task: Table1Task = NLI_TASK,
    headline: bool = True,
) -> list[dict]:
    """Section 4.1's claims on our Table 1 runs ``{(arm, seed): Trained}`` (arms: the losses, and
    :data:`ROUNDED_K2`), the paper's differences from its ``row`` ("BERT-base" or "RoBERTa-base"). Each claim
    stands on the seeds where both its arms ran (the headline on more seeds than the rest when the notebook runs
    them); a claim whose arms never ran together is left out, not guessed. Preconditions on its own arms only
    (:func:`table1_gates`). The headline (``headline``: True) is :data:`ISOLATED` where it ran, else
    :data:`HEADLINE` where ``task`` gives both objectives the same labels; on a ``task`` where it does not, the
    continuous comparison is the check :data:`CONFOUNDED` (``confounded_with``: :data:`CONFOUND`).
    ``before``: the untrained encoder's predictions on the same pairs. ``backbone``, when given, is named in each
    claim's text and stored in its row (``_opening``). ``headline=False`` marks no row (a backbone after the first:
    a notebook has one headline, ``stsnb.evaluation.claims.headline_of``)."""
    rows = pair_claim_rows(
        runs,
        "Table 1",
        table1_claim_list(task),
        row,
        lambda c, seeds, a, b: table1_gates(c, runs, before, seeds, a, b, n_resamples),
        n_resamples,
        backbone,
    )
    isolated = any(r["a"] == ISOLATED.a for r in rows)
    for r in rows:
        r["headline"] = headline and (
            r["a"] == ISOLATED.a or (not isolated and (r["a"], r["b"]) == (HEADLINE.a, HEADLINE.b))
        )
        if r["a"] == ISOLATED.a:
            r.update(labels=SAME_LABELS, mechanism_quote=quotes.MECHANISM)
        elif r["kind"] == claims.CHECK:
            r.update(headline=False, confounded_with=CONFOUND)
    return rows


def table1_gates(
    c: PairClaim,
    runs: Mapping[tuple[str, int], Trained],
    before: TaskPredictions,
    seeds: Sequence[int],
    a: Mapping[int, Trained],
    b: Mapping[int, Trained],
    n_resamples: int,
) -> list[claims.Precondition]:
    """A Table 1 claim's gates on its own arms (``stsnb.evaluation.claims.own_arms_trained``): both losses left their
    start; where cross entropy, the baseline, is an arm, it also moved the encoder (every seed). Cross entropy's
    movement gates only the claims it is an arm of."""
    gates: dict[str, list[claims.Precondition]] = {c.a: [left(c.a, a)], c.b: [left(c.b, b)]}
    if BASELINE in gates:
        gates[BASELINE].insert(0, nli_moved(runs, before, seeds, n_resamples))
    return claims.own_arms_trained(gates, [c.a, c.b])


def pair_claim_rows(
    runs, table: str, listed, row: str, preconditions_of, n_resamples: int, backbone: str = ""
) -> list[dict]:
    """The claims of ``listed`` on the seeds where both settings of each ran (a claim whose settings never ran
    together is left out, not guessed); ``preconditions_of(claim, seeds, a_runs, b_runs)`` gives its
    preconditions; ``backbone`` (when given) is named in each text (``_opening``)."""
    out = []
    for c in listed:
        seeds = seeds_of(runs, c.a, c.b)
        if not seeds:
            continue
        a, b = runs_of(runs, c.a, seeds), runs_of(runs, c.b, seeds)
        out.append(
            pair_claim(
                _opening(table, backbone) + c.text,
                predictions_by_seed(a),
                predictions_by_seed(b),
                paper_difference(table, row, c.reported_a, c.b),
                table=table,
                names=(c.a, c.b),
                paper_quote=c.quote,
                kind=c.kind,
                direction=c.direction,
                preconditions=preconditions_of(c, seeds, a, b),
                n_resamples=n_resamples,
                **backbone_fields(backbone),
            )
        )
    return out


def improvement_claim(
    text: str, what: str, after: Mapping[int, Trained], before: TaskPredictions, *, table: str, n_resamples: int = 2000
) -> dict:
    """ "Training improves the encoder": a **check of our setting** (``kind="check"``), not a claim of the paper,
    which trains from raw BERT/RoBERTa and reports no untrained score (no paper difference): ``after - before`` per
    seed, expected positive; its ``paper_quote`` is Section 4.1's sentence on the setting. Precondition: ``what``
    left its start (a run that kept step 0 is the untrained encoder: its difference is 0 by construction)."""
    return pair_claim(
        text,
        predictions_by_seed(after),
        {s: before for s in after},
        None,
        table=table,
        names=("after", "before"),
        paper_quote=quotes.SETTING,
        kind=claims.CHECK,
        preconditions=[left(what, after)],
        n_resamples=n_resamples,
        direction=+1,
    )


ROUNDED_K2_CHECK = "Smooth K2 (Eq. 2) on cross entropy's rounded labels improves the raw encoder"


def rounded_k2_runs(runs: Mapping[tuple[str, int], Trained], task: Table1Task) -> dict[int, Trained]:
    """Smooth K2's runs on the rounded labels cross entropy learns, ``{seed: Trained}`` of ``runs = {(arm, seed):
    Trained}``: the headline's own arm (:data:`ROUNDED_K2`), or Table 1's Smooth K2 where ``task`` itself is the
    rounded one (``"sts_rounded"``: the class profile trains that arm alone)."""
    name = "smooth_k2" if task.name == STS_ROUNDED_TASK.name else ROUNDED_K2
    return {s: r for (n, s), r in runs.items() if n == name}


def raw_encoder_checks(
    runs: Mapping[tuple[str, int], Trained],
    before: TaskPredictions,
    task: Table1Task,
    seeds: Sequence[int],
    *,
    backbone: str,
    n_resamples: int = 2000,
) -> list[dict]:
    """Table 1's checks of our setting ("training improved the raw encoder", :func:`improvement_claim`): the loss
    best on STS-B dev over ``seeds`` (:func:`best_by_dev`), and Smooth K2 on the rounded labels over every seed it
    ran (:func:`rounded_k2_runs`; the cpu profile's three headline seeds), the same text in every profile so a class
    run finds the cpu run's row. The first is left out where it would repeat the second's runs."""
    opening, rows = f"Table 1, {backbone}:", []
    rounded = rounded_k2_runs(runs, task)
    losses = {k: r for k, r in runs.items() if k[0] != ROUNDED_K2}
    best = best_by_dev(losses, seeds) if seeds and losses else None
    if best is not None and not (best == "smooth_k2" and task.name == STS_ROUNDED_TASK.name):
        after = {s: r for (n, s), r in losses.items() if n == best}
        text = f"{opening} {task.name.upper()} fine-tuning with the loss best on dev ({best}) improves the raw encoder"
        rows.append(improvement_claim(text, best, after, before, table="Table 1", n_resamples=n_resamples))
    if rounded:
        text = f"{opening} {ROUNDED_K2_CHECK}"
        rows.append(improvement_claim(text, ROUNDED_K2, rounded, before, table="Table 1", n_resamples=n_resamples))
    return rows


def lead_with_check(rows: Sequence[dict]) -> dict | None:
    """Where a run has no headline of the paper (the class profile trains no cross entropy), mark Smooth K2 on the
    rounded labels improving the raw encoder (:data:`ROUNDED_K2_CHECK`, a check) as the run's headline: the effect
    the cpu profile shows on its three seeds. Returns the headline row, None when neither is there."""
    marked = claims.headline_of(rows)
    if marked is not None:
        return marked
    check = next((r for r in rows if str(r["claim"]).endswith(ROUNDED_K2_CHECK)), None)
    if check is not None:
        check["headline"] = True
    return check


def same_predictions(a: TaskPredictions, b: TaskPredictions) -> bool:
    """True when two models gave bit-identical predictions on the same pairs (one model, twice)."""
    return set(a) == set(b) and all(
        np.array_equal(np.asarray(a[t][0]), np.asarray(b[t][0]))
        and np.array_equal(np.asarray(a[t][1]), np.asarray(b[t][1]))
        for t in a
    )


def table3_claims(
    before: TaskPredictions,
    contrast: Mapping[int, Trained],
    ours: Mapping[int, Trained],
    row: str,
    *,
    n_resamples: int = 2000,
    backbone: str = "",
) -> list[dict]:
    """Table 3 on a contrastive encoder: "+Ours improves it" and "+Ours beats +Contrast" (Section 4.2; the paper's
    differences from its ``row``, "Jina v2" or "Nomic Embed v1").

    Both need +Ours (stage 2) to have left its start. +Contrast keeping its start is what Section 4.2 reports
    (contrastive learning "may even lead to model collapse"), so it is recorded as the finding
    (``stsnb.evaluation.claims.staying_put``); but such a +Contrast is the encoder it started from, and "+Ours beats
    +Contrast" would count the first comparison a second time (``same_comparison_as`` names it, and that claim is not
    tested). ``backbone``, when given, is named in both texts and stored in the rows (``_opening``)."""
    first = _opening("Table 3", backbone) + "+Ours (two stages) improves the contrastive encoder"
    ours_left = left("+Ours (stage 2)", ours)
    duplicate = all(same_predictions(r.predictions, before) for r in contrast.values())
    distinct = claims.precondition(
        "+Contrast differs from the encoder it started from",
        not duplicate,
        "its test predictions equal the starting encoder's on every seed: the same comparison as the claim above"
        if duplicate
        else "its test predictions differ from the starting encoder's",
    )
    gates = claims.own_arms_trained(
        {"+Ours": ours_left, "+Contrast": left("+Contrast", contrast)},
        staying_put_is_the_finding={"+Contrast": f"the paper, {quotes.TABLE3_CONTRAST}"},
    )
    return [
        pair_claim(
            first,
            predictions_by_seed(ours),
            {s: before for s in ours},
            paper_difference("Table 3", row, "+Ours", ""),
            table="Table 3",
            names=("+Ours", "before"),
            paper_quote=quotes.TABLE3_OURS,
            preconditions=[ours_left],
            n_resamples=n_resamples,
            **backbone_fields(backbone),
        ),
        pair_claim(
            _opening("Table 3", backbone) + "+Ours beats +Contrast",
            predictions_by_seed(ours),
            predictions_by_seed(contrast),
            paper_difference("Table 3", row, "+Ours", "+Contrast"),
            table="Table 3",
            names=("+Ours", "+Contrast"),
            paper_quote=quotes.TABLE3_CONTRAST,
            preconditions=[*gates, distinct],
            n_resamples=n_resamples,
            same_comparison_as=first if duplicate else None,
            **backbone_fields(backbone),
        ),
    ]


# ---- reading the claims: the takeaway, comparability, the conclusions -----------------------------------------


# The paper's main claim, from its abstract (decided before any run; every profile's summary leads with it)
MAIN_CLAIMS = (
    MainClaim(
        "20_sts_regression",
        quotes.MAIN_CLAIM,
        "Table 1",
        "regression (Smooth K2)",
        "classification (cross entropy) on the same rounded labels",
        ("regression (Smooth K2) beats classification (cross entropy) on the same rounded labels",),
    ),
)
