"""STS-Regression's claims checked on our runs: paired differences of STS predictions with bootstrap intervals,
each built by ``stsnb.evaluation.claims.claim`` with the paper's sentence it tests (``quotes``), the dev gates of its
own arms and, for a claim of the paper with a direction, its smallest effect of interest.

Every claim is a difference ``a - b`` of seven-task (or ``eval_tasks``) average Spearman x100 on the same test
pairs, one interval per training seed; its direction is the paper's words ("a beats b": +1), and the paper's own
difference (``REPORTED``) is shown beside it.

**Dev gates, per seed, on the claim's own arms** (``stsnb.evaluation.dev_gates``, :func:`dev_gate`): an arm trained on a
seed when STS-B dev selection kept a step past 0, a weight changed, and its kept weights beat the fit's own start on dev
pairs selection never scored (``gate_pairs``; a paired 95% interval above 0; where selection scored every dev pair, by
more than the best of its selection evaluations would give by chance); a claim's baseline (``b`` of a claim of the
paper: cross entropy for the main claim) must also have moved dev by the claim's smallest effect. A seed on which one of
a claim's two arms did not train is left out ("k of n seeds"); with fewer than two seeds left (or a one-seed claim's
seed left out) the claim is **not tested**. The test pairs a claim is scored on never gate it. Cross entropy gates only
the claims it is an arm of. A claim on several kept seeds is decided on the seeds-and-pairs interval of their mean.

- Table 1 (Section 4.1): both losses of each claim. The paper's main claim (:data:`MAIN_CLAIMS`, from the abstract:
  regression beats classification) is Table 1's Smooth K2 against cross entropy on the same labels: on NLI
  (:data:`MAIN_PAIR`), or on the STS analogue with Smooth K2 trained on cross entropy's class ids (:data:`ISOLATED`,
  arm :data:`ROUNDED_K2`; on the ``sts_rounded`` task every regression loss learns them, :data:`ROUNDED_MAIN`). The
  analogue's Smooth K2 on the gold score against cross entropy is confounded with label resolution: a **check**
  (:data:`CONFOUNDED`), never the paper's claim.
- "Fine-tuning improves the raw encoder" is a check of our setting (``kind="check"``), gated on its arm's dev gate.
- Table 3 (Section 4.2): "+Ours improves the encoder" on +Ours (stage 2); "+Ours beats +Contrast" on both. A +Contrast
  that kept its step-0 checkpoint *is* the encoder it started from: that claim is then not tested, and the run says so
  from what was measured (``same_comparison_as`` names the claim it would repeat).
- Tables 5 and 6: ``sweep_claims``.

**Smallest effect of interest** (:func:`smallest_effect`): half the smaller of the paper's two differences for the
same comparison (two backbones in Tables 1 and 6, two encoders in Table 3), both of which the paper reads as real; a
direction claim whose every interval lies inside it reads "no meaningful effect", and "contradicted" needs the
estimate beyond it (``stsnb.evaluation.verdict_rules.sized_verdict``).

The one choice made among runs, "the best loss" of the did-training-help check, is made on STS-B dev scores only
(:func:`best_by_dev`); test pairs only ever give the intervals.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ...evaluation import claims, dev_gates, stats
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
    words give (+1: a beats b), its kind (a claim of the paper, or a check of our setting) and whether it tests the
    paper's main claim (``main``)."""

    text: str
    a: str
    b: str
    quote: str
    direction: int = +1
    kind: claims.Kind = claims.PAPER
    paper_a: str = ""
    main: bool = False

    @property
    def reported_a(self) -> str:
        """The paper's row our arm ``a`` is compared with."""
        return self.paper_a or self.a


# Section 4.1's reading of Table 1 (losses by the names of ``recipes.LOSSES``); the first is the paper's main claim
TABLE1_CLAIMS: tuple[PairClaim, ...] = (
    PairClaim(
        "regression (Smooth K2) beats classification (cross entropy)",
        "smooth_k2",
        BASELINE,
        quotes.TABLE1_K2,
        main=True,
    ),
    PairClaim("the zero-gradient buffer helps: Translated ReLU beats L1", "translated_relu", "l1", quotes.BUFFER_L1),
    PairClaim("the zero-gradient buffer helps: Smooth K2 beats MSE", "smooth_k2", "mse", quotes.BUFFER_MSE),
    PairClaim(
        "the adaptive gradient helps: Smooth K2 beats Translated ReLU", "smooth_k2", "translated_relu", quotes.ADAPTIVE
    ),
    PairClaim("the adaptive gradient helps: MSE beats L1", "mse", "l1", quotes.ADAPTIVE),
)
MAIN_PAIR = TABLE1_CLAIMS[0]  # the main claim where both objectives learn the same labels as they are (NLI)
MAIN_CLAIM_LOSSES: tuple[str, ...] = (MAIN_PAIR.b, MAIN_PAIR.a)  # the losses the main claim's extra seeds train
# The STS analogue (tasks.STS_TASK): the main claim on the same labels for both objectives, and what its continuous
# comparison is instead (module docstring).
ROUNDED_K2 = "smooth_k2_rounded"  # the arm: Smooth K2 trained on cross entropy's class ids (tasks.STS_ROUNDED_TASK)
SAME_ROUNDED = MAIN_PAIR.text + " on the same rounded labels"
ISOLATED = PairClaim(SAME_ROUNDED, ROUNDED_K2, BASELINE, quotes.TABLE1_K2, paper_a=MAIN_PAIR.a, main=True)
# the same comparison on the sts_rounded task, where Table 1's Smooth K2 itself learns the rounded labels
ROUNDED_MAIN = PairClaim(SAME_ROUNDED, MAIN_PAIR.a, BASELINE, quotes.TABLE1_K2, main=True)
CONFOUNDED = PairClaim(
    "Smooth K2 on the gold score beats cross entropy on its rounded classes (confounded with label resolution)",
    MAIN_PAIR.a,
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
# the paper's two rows of each table a smallest effect is read from (:func:`smallest_effect`)
PAPER_ROWS: dict[str, tuple[str, str]] = {
    "Table 1": ("BERT-base", "RoBERTa-base"),
    "Table 3": ("Jina v2", "Nomic Embed v1"),
    "Table 6": ("BERT-base", "RoBERTa-base"),
}


@dataclass(frozen=True)
class Trained:
    """One training run as its claims see it: the STS predictions of the kept weights and what dev selection kept
    (``best_step`` 0: the untrained start; ``weight_change``: the largest change of any trained weight between the
    start and the kept weights, ``TrainResult.weight_change``; ``dev_score``: the kept checkpoint's STS-B dev
    Spearman x100, the selection score; ``total_steps``: the optimizer steps the run took; ``result``: the fit's
    whole record, whose dev records the dev gate reads)."""

    predictions: TaskPredictions
    best_step: int
    weight_change: float | None = None
    dev_score: float | None = None
    total_steps: int | None = None
    result: TrainResult | None = None

    @classmethod
    def of(cls, predictions: TaskPredictions, result: TrainResult) -> Trained:
        """From a ``fit`` result; without dev selection (``best_step`` None) the last step is what is kept."""
        step = result.steps if result.best_step is None else result.best_step
        return cls(predictions, int(step), result.weight_change, result.best_score, int(result.steps), result)


def dev_gate(arm: str, runs: Mapping[int, Trained]) -> dev_gates.DevGate:
    """Whether ``arm`` trained on each training seed of ``runs`` (``{seed: Trained}``), on STS-B dev only: the step dev
    selection kept, the largest weight change, and its held-out dev score over the fit's own step 0 against one
    paired comparison's noise (or, with no held-out pairs, what the best of its selection evaluations would give by
    chance; ``stsnb.evaluation.dev_gates.from_fits``; labels "seed N")."""
    missing = [s for s, r in runs.items() if r.result is None]
    if missing:
        raise ValueError(f"{arm}: seeds {missing} carry no fit record (Trained.of a fit result): no dev gate")
    return dev_gates.from_fits(arm, {f"seed {s}": r.result for s, r in sorted(runs.items())})


def smallest_effect(table: str, a: str, b: str) -> tuple[float, str]:
    """A direction claim's smallest effect of interest and its reason: half the smaller of the paper's two ``a - b``
    differences in ``table`` (its rows :data:`PAPER_ROWS`: BERT and RoBERTa, or Jina and Nomic), both of which the
    paper reads as real. Raises where the paper's smaller difference is not on the side its words claim."""
    differences = {row: paper_difference(table, row, a, b) for row in PAPER_ROWS[table]}
    smallest = min(differences.values())
    if smallest <= 0:
        raise ValueError(f"{table}: the paper's {a} - {b} is {differences}: no effect of the paper's side to halve")
    listed = ", ".join(f"{row} {value:+.2f}" for row, value in differences.items())
    return smallest / 2, f"half the smaller of the paper's two {table} differences ({listed}), both read as real"


def stayed_at_start(runs: Mapping[object, Trained]) -> list[str]:
    """One sentence for each run that dev selection left at its start (kept step 0, or no weight changed): that run
    *is* the model it started from (its dev gate fails, :func:`dev_gate`)."""
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


def paired(a: SeedPredictions, b: SeedPredictions) -> dict[str, dict]:
    """``{"seed s": {task: (gold, a, b)}}``: what each seed's interval is computed from (a claim's seeds-and-pairs
    data)."""
    return {f"seed {s}": stats.paired_triples(a[s], b[s]) for s in sorted(a)}


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
    gates: Sequence[dev_gates.DevGate] = (),
    effect: tuple[float, str] | None = None,
    n_resamples: int = 2000,
    direction: int = +1,
    margin: float | None = None,
    margin_reason: str | None = None,
    paper_effect: float | None = None,
    preconditions: Sequence[claims.Precondition] = (),
    main_claim: bool = False,
    baseline: str | None = None,
    **extra,
) -> dict:
    """One claim row (``stsnb.evaluation.claims.claim``): ``a - b`` per training seed, the paper's sentence and
    difference, the direction the paper's words give, the dev gates of its arms (``gates``, :func:`dev_gate`), the
    smallest effect of interest with its reason (``effect``, :func:`smallest_effect`), ``margin`` (with its reason and
    the paper's own effect) for a robustness claim, ``kind`` ("check" for a check of our setting), whether it tests
    the paper's main claim (``main_claim``) and the gated arm the paper says it improves on (``baseline``: it must
    move dev by the smallest effect)."""
    size, why = effect if effect is not None else (None, None)
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
        dev_gates=gates,
        smallest_effect=size,
        smallest_effect_reason=why,
        baseline=baseline,
        paired=paired(a, b),
        n_resamples=n_resamples,
        paper_difference=paper_diff,
        main_claim=main_claim,
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


def table1_claim_list(task: Table1Task = NLI_TASK) -> tuple[PairClaim, ...]:
    """Table 1's comparisons on ``task``, the main claim first: :data:`MAIN_PAIR` where regression learns the labels
    cross entropy learns as they are (NLI); on the STS analogue :data:`ISOLATED` (Smooth K2 on the rounded labels, where
    that arm ran) and the check :data:`CONFOUNDED` (Smooth K2 on the score); on the rounded task :data:`ROUNDED_MAIN`.
    Then the other claims of :data:`TABLE1_CLAIMS`."""
    first: tuple[PairClaim, ...] = {"classes": (MAIN_PAIR,), "score": (ISOLATED, CONFOUNDED)}.get(
        task.targets, (ROUNDED_MAIN,)
    )
    return (*first, *TABLE1_CLAIMS[1:])


def table1_claims(
    runs: Mapping[tuple[str, int], Trained],
    before: TaskPredictions,
    row: str,
    *,
    n_resamples: int = 2000,
    backbone: str = "",
    task: Table1Task = NLI_TASK,
    main_claim: bool = True,
) -> list[dict]:
    """Section 4.1's claims on our Table 1 runs ``{(arm, seed): Trained}`` (arms: the losses, and
    :data:`ROUNDED_K2`), the paper's differences from its ``row`` ("BERT-base" or "RoBERTa-base"). Each claim stands on
    the seeds where both its arms ran (the main claim on more seeds than the rest when the notebook runs them) and is
    gated on the dev gates of its two arms (the baseline's asking the smallest effect); a claim
    whose arms never ran together is left out, not guessed. The main claim's row (:func:`table1_claim_list`) is marked
    ``main_claim`` when ``main_claim`` is True (False for a backbone after the first: one main-claim row per notebook).
    ``before`` is kept for the signature the notebook calls (the untrained encoder's test predictions gate nothing).
    ``backbone``, when given, is named in each claim's text and stored in its row (``_opening``)."""
    del before  # the test pairs never gate a claim
    rows = pair_claim_rows(runs, "Table 1", table1_claim_list(task), row, n_resamples, backbone)
    for r in rows:
        r["main_claim"] = main_claim and r["main_claim"]
        if r["a"] == ROUNDED_K2 or r["claim"].endswith(SAME_ROUNDED):
            r.update(labels=SAME_LABELS, mechanism_quote=quotes.MECHANISM)
        elif r["kind"] == claims.CHECK:
            r.update(confounded_with=CONFOUND)
    return rows


def pair_claim_rows(
    runs: Mapping[tuple[str, int], Trained],
    table: str,
    listed: Iterable[PairClaim],
    row: str,
    n_resamples: int,
    backbone: str,
    gate_name=str,
) -> list[dict]:
    """The claims of ``listed`` on the seeds where both settings of each ran (a claim whose settings never ran
    together is left out, not guessed), each gated on its two arms' dev gates (:func:`dev_gate`, the arm named
    ``gate_name(setting)``), a claim of the paper sized by :func:`smallest_effect`, its ``b`` the baseline that must
    move dev by that effect; ``backbone`` (when given) is named in each text (``_opening``)."""
    out = []
    for c in listed:
        seeds = seeds_of(runs, c.a, c.b)
        if not seeds:
            continue
        a, b = runs_of(runs, c.a, seeds), runs_of(runs, c.b, seeds)
        sized = c.kind == claims.PAPER and c.direction != 0
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
                gates=[dev_gate(gate_name(c.a), a), dev_gate(gate_name(c.b), b)],
                effect=smallest_effect(table, c.reported_a, c.b) if sized else None,
                n_resamples=n_resamples,
                main_claim=c.main,
                baseline=gate_name(c.b) if sized else None,
                **backbone_fields(backbone),
            )
        )
    return out


def improvement_claim(
    text: str,
    what: str,
    after: Mapping[int, Trained],
    before: TaskPredictions,
    *,
    table: str,
    n_resamples: int = 2000,
) -> dict:
    """ "Training improves the encoder": a **check of our setting** (``kind="check"``), not a claim of the paper,
    which trains from raw BERT/RoBERTa and reports no untrained score (no paper difference): ``after - before`` per
    seed on the test pairs, expected positive; its ``paper_quote`` is Section 4.1's sentence on the setting. Gated on
    the dev gate of ``what`` (a run that kept step 0 is the untrained encoder: its difference is 0 by construction)."""
    return pair_claim(
        text,
        predictions_by_seed(after),
        {s: before for s in after},
        None,
        table=table,
        names=("after", "before"),
        paper_quote=quotes.SETTING,
        kind=claims.CHECK,
        gates=[dev_gate(what, after)],
        n_resamples=n_resamples,
        direction=+1,
    )


ROUNDED_K2_CHECK = "Smooth K2 (Eq. 2) on cross entropy's rounded labels improves the raw encoder"


def rounded_k2_runs(runs: Mapping[tuple[str, int], Trained], task: Table1Task) -> dict[int, Trained]:
    """Smooth K2's runs on the rounded labels cross entropy learns, ``{seed: Trained}`` of ``runs = {(arm, seed):
    Trained}``: the main claim's own arm (:data:`ROUNDED_K2`), or Table 1's Smooth K2 where ``task`` itself is the
    rounded one (``"sts_rounded"``: the class profile)."""
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
    ran (:func:`rounded_k2_runs`; the cpu profile's three main-claim seeds), the same text in every profile so a class
    run finds the cpu run's row. The first is left out where it would repeat the second's runs."""
    opening, rows = f"Table 1, {backbone}:", []
    rounded = rounded_k2_runs(runs, task)
    losses = {k: r for k, r in runs.items() if k[0] != ROUNDED_K2}
    best = best_by_dev(losses, seeds) if seeds and losses else None
    dev = {"table": "Table 1", "n_resamples": n_resamples}
    if best is not None and not (best == "smooth_k2" and task.name == STS_ROUNDED_TASK.name):
        after = {s: r for (n, s), r in losses.items() if n == best}
        text = f"{opening} {task.name.upper()} fine-tuning with the loss best on dev ({best}) improves the raw encoder"
        rows.append(improvement_claim(text, best, after, before, **dev))
    if rounded:
        rows.append(improvement_claim(f"{opening} {ROUNDED_K2_CHECK}", ROUNDED_K2, rounded, before, **dev))
    return rows


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
    differences from its ``row``, "Jina v2" or "Nomic Embed v1"), each gated on its own arms' dev gates (+Contrast, the
    baseline of the second, asked the smallest effect) and sized by :func:`smallest_effect`.

    A +Contrast run that kept its step-0 checkpoint did not train on dev: "+Ours beats +Contrast" is then not tested
    (it would repeat the first comparison on the same pairs; ``same_comparison_as`` names it where +Contrast's test
    predictions are the starting encoder's). ``backbone``, when given, is named in both texts (``_opening``)."""
    first = _opening("Table 3", backbone) + "+Ours (two stages) improves the contrastive encoder"
    ours_gate = dev_gate("+Ours (stage 2)", ours)
    duplicate = all(same_predictions(r.predictions, before) for r in contrast.values())
    common = {"table": "Table 3", "n_resamples": n_resamples, **backbone_fields(backbone)}
    return [
        pair_claim(
            first,
            predictions_by_seed(ours),
            {s: before for s in ours},
            paper_difference("Table 3", row, "+Ours", ""),
            names=("+Ours", "before"),
            paper_quote=quotes.TABLE3_OURS,
            gates=[ours_gate],
            effect=smallest_effect("Table 3", "+Ours", ""),
            **common,
        ),
        pair_claim(
            _opening("Table 3", backbone) + "+Ours beats +Contrast",
            predictions_by_seed(ours),
            predictions_by_seed(contrast),
            paper_difference("Table 3", row, "+Ours", "+Contrast"),
            names=("+Ours", "+Contrast"),
            paper_quote=quotes.TABLE3_CONTRAST,
            gates=[ours_gate, dev_gate("+Contrast", contrast)],
            effect=smallest_effect("Table 3", "+Ours", "+Contrast"),
            baseline="+Contrast",
            same_comparison_as=first if duplicate else None,
            **common,
        ),
    ]


# The paper's main claim, from its abstract (fixed on 2026-11-28, after the first cpu runs: main_claims.FIXED; every
# profile's summary leads with it). Its row is
# Table 1's Smooth K2 against cross entropy on the same labels (table1_claim_list): MAIN_PAIR on NLI, "... on the same
# rounded labels" on the STS analogue; the wording fragment is in both.
MAIN_CLAIMS = (
    MainClaim(
        "20_sts_regression",
        quotes.MAIN_CLAIM,
        "Table 1",
        "regression (Smooth K2)",
        "classification (cross entropy) on the same labels",
        (MAIN_PAIR.text,),
    ),
)
