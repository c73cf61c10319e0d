"""A claim checked on our runs: the paper's sentence it tests, what must hold for it to be tested, the training
seeds it stands on, its verdict.

A paired interval answers "is a better than b on these test pairs"; whether that answer says anything about the
paper depends on the run behind it. A "+HiCL beats SimCSE" difference on a backbone SimCSE never moved, or "Smooth
K2 beats cross entropy" where neither loss moved the encoder, compares two copies of the untrained model. So every
claim carries its **preconditions**, and when one fails its verdict is **not tested**, with the reason, never
supported or contradicted (its interval is still shown). The seven verdicts (``stsnb.evaluation.verdict_rules``):

- ``supported`` / ``contradicted`` / ``unresolved`` -- a direction claim ("a beats b"): the interval it is decided on
  (one seed's, or on several kept seeds the seeds-and-pairs interval of their mean) excludes 0 on the paper's side /
  on the other side with the estimate beyond the claim's smallest effect of interest / anything else
  (``verdict_rules.sized_verdict``);
- ``small effect`` -- that interval excludes 0 but lies inside +-the smallest effect (its side is kept:
  ``effect_side``), and ``no meaningful effect`` -- it contains 0 and lies inside +-the smallest effect;
- ``equivalent`` -- a robustness claim ("the template hardly matters"): the interval lies inside +-margin
  (``verdict_rules.equivalence_verdict``); a direction test can never support such a claim;
- ``not tested`` -- a precondition failed.

A decisive verdict on one seed is provisional (:func:`provisional`); :func:`interval_counts` gives the multiplicity
count (both, with the other readers of a stored row, live in ``claim_rows`` and are re-exported here). Whether an arm
trained is decided per seed on dev data (``stsnb.evaluation.dev_gates``), never on the test pairs a claim is scored on.

**The row schema** (:func:`claim`; JSON-ready, stored under ``claims`` in metrics.json):

- ``claim`` -- our one-line statement; ``paper_quote`` -- the paper's sentence it tests, with where the paper
  prints it (``'Section 4.5.1: "..."'``, :func:`quote`), required on every row;
- ``kind`` -- ``"paper"`` (a claim of the paper) or ``"check"`` (a check of our own setting, e.g. "fine-tuning
  improves the raw encoder": listed apart, never counted as a reproduced claim); a check's ``paper_quote`` is
  the paper's sentence about the setting it checks;
- ``test`` -- ``"direction"``, ``"equivalence"`` or ``"no direction"`` (older runs stored this under ``kind``:
  read it with :func:`tested_as`, the kind with :func:`kind_of`);
- ``margin`` and ``margin_reason`` -- an equivalence claim's margin (Spearman x100 points) and why that margin;
- ``main_claim`` -- ``true`` on the row that tests the paper's main claim (:class:`MainClaim`, fixed in the package
  from the abstract; :func:`is_main_claim`); rows of older runs carry a notebook-chosen ``headline`` instead, which
  is not read;
- ``smallest_effect`` and ``smallest_effect_reason`` -- a direction claim's smallest effect of interest and why
  (``verdict_rules.sized_verdict``); ``reachability`` -- an equivalence claim's sentence on whether "equivalent" is
  reachable with its widest seed's interval;
- ``seeds_run``, ``seeds_left_out`` and ``dev_gates`` -- with dev gates (``stsnb.evaluation.dev_gates``), the seeds
  trained, those left out of the verdict and why, and each arm's per-seed dev evidence;
- the verdict, difference, envelope, seeds and per-seed intervals of ``verdict_rules.claim_row``, ``preconditions``
  (name, holds, evidence), ``not_tested_because``, ``paper_difference`` and any extra fields.

**The rule: a claim is gated on its own arms.** A comparison of arms a and b is tested where a and b themselves
trained: each left its start (:func:`left_start`) or, for a comparison with the untrained model, moved the encoder
(:func:`baseline_moved`). A baseline's movement gates only the claims about that baseline, never a comparison of two
other arms (:func:`own_arms_trained` picks a claim's arms from every arm's precondition, so an unrelated arm cannot
gate it). When the paper itself reports that one arm stays put (Table 6 of STS regression: the (u,v) head never
improves), the claim names it in ``staying_put_is_the_finding`` with the reason, and that arm's gate becomes a
precondition that holds and records both the reason and what was measured.

**Equivalence** (``verdict_rules.equivalence_verdict``): "equivalent" needs every seed's 95% interval inside (-margin,
+margin). That is two one-sided tests (TOST), each rejecting "the difference is at least the margin" on its side at
the 2.5% level, so the equivalence test has size at most 2.5%: stricter than the classical TOST at 5%, which uses a
90% interval. Every equivalence claim states its own margin and the reason for it (``margin_reason``: the paper's
own spread between settings it calls alike, or our seed-to-seed spread). A margin that contains the effect the
paper reports as real for the same setting (``paper_effect``) cannot tell the paper's effect from none, so such a
claim is **not tested** (:func:`margin_excludes_paper_effect`). A paper sentence that says a setting *matters*
("cannot be achieved with sigma = 0") is a direction claim, never a robustness one.

Generic preconditions (one function each, used by every paper notebook):

- :func:`baseline_moved` -- the model improved on the untrained encoder (its own paired interval excludes 0
  upward, every seed);
- :func:`left_start` -- the model is not its starting point (checkpoint selection kept a step > 0 and the
  weights changed);
- :func:`own_arms_trained` -- the rule above: a claim's own arms' gates, with ``staying_put_is_the_finding``;
  :func:`arms_not_compared` checks a stored row against it (the gated arms its statement does not name);
- :func:`margin_excludes_paper_effect` -- an equivalence margin smaller than the paper's own effect;
- :func:`phenomenon_occurs` -- what the claim is about happens at all (e.g. over-estimated quadruples to count);
- :func:`precondition` -- any other named condition with its evidence.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from . import seed_bootstrap, verdict_rules
from .claim_rows import (
    CHECK as CHECK,
)
from .claim_rows import (
    GATE_SUFFIXES as GATE_SUFFIXES,
)
from .claim_rows import (
    KINDS as KINDS,
)
from .claim_rows import (
    LEFT_START as LEFT_START,
)
from .claim_rows import (
    MOVED as MOVED,
)
from .claim_rows import (
    PAPER as PAPER,
)
from .claim_rows import (
    STAYED_PUT as STAYED_PUT,
)
from .claim_rows import (
    TESTS as TESTS,
)
from .claim_rows import (
    IntervalCounts as IntervalCounts,
)
from .claim_rows import (
    Kind as Kind,
)
from .claim_rows import (
    arms_not_compared as arms_not_compared,
)
from .claim_rows import (
    deciding_interval as deciding_interval,
)
from .claim_rows import (
    describe as describe,
)
from .claim_rows import (
    failed_preconditions as failed_preconditions,
)
from .claim_rows import (
    gated_arm as gated_arm,
)
from .claim_rows import (
    interval_counts as interval_counts,
)
from .claim_rows import (
    is_equivalence as is_equivalence,
)
from .claim_rows import (
    is_main_claim as is_main_claim,
)
from .claim_rows import (
    is_timing_range as is_timing_range,
)
from .claim_rows import (
    kind_of as kind_of,
)
from .claim_rows import (
    provisional as provisional,
)
from .claim_rows import (
    seed_sides_text as seed_sides_text,
)
from .claim_rows import (
    seeds_text as seeds_text,
)
from .claim_rows import (
    split_by_kind as split_by_kind,
)
from .claim_rows import (
    tested_as as tested_as,
)
from .claim_rows import (
    timing_rows as timing_rows,
)
from .claim_rows import (
    verdict_counts as verdict_counts,
)
from .claim_rows import (
    verdict_counts_by_kind as verdict_counts_by_kind,
)
from .claim_rows import (
    verdict_text as verdict_text,
)
from .claim_rows import (
    verdict_words as verdict_words,
)
from .dev_gates import DevGate, select_seeds
from .preconditions import Precondition as Precondition
from .preconditions import precondition as precondition

# where a paper prints a sentence: "Section 4.5.1", "Table 1", "Figure 2", "Appendix A", "Eq. 11", "Abstract", ...
_WHERE = re.compile(r"\b(Section|Table|Figure|Appendix|Eq\.|Abstract|Introduction|Conclusion)", re.IGNORECASE)


def quote(where: str, sentence: str) -> str:
    """The paper's sentence with where the paper prints it: ``quote("Section 4.5.1", "...")`` ->
    ``'Section 4.5.1: "..."'`` (the text of ``paper_quote``)."""
    where, sentence = str(where).strip(), " ".join(str(sentence).split())
    if not _WHERE.search(where):
        raise ValueError(f"where {where!r} must name the paper's Section, Table, Figure, Appendix or Eq.")
    if not sentence:
        raise ValueError(f"the sentence quoted from {where} is empty")
    return f'{where}: "{sentence.strip(chr(34))}"'


def _check_quote(paper_quote: str | None, text: str) -> str:
    if not isinstance(paper_quote, str) or not paper_quote.strip():
        raise ValueError(f"claim {text!r} needs paper_quote: the paper's sentence it tests, with its section")
    if not _WHERE.search(paper_quote):
        raise ValueError(f"claim {text!r}: paper_quote {paper_quote!r} must say where the paper prints it")
    return paper_quote.strip()


def _per_seed(intervals) -> list[tuple[object, float, float, float]]:
    """(seed label, difference, low, high) of each interval (a PairedDifference, tuple, list or mapping)."""
    row = verdict_rules.claim_row("-", intervals, +1)
    return [(e["seed_run"], e["difference"], e["low"], e["high"]) for e in row["per_seed"]]


def _interval_text(label, difference: float, low: float, high: float) -> str:
    prefix = f"{label}: " if label is not None else ""
    return f"{prefix}{difference:+.2f} [{low:+.2f}, {high:+.2f}]"


def baseline_moved(intervals, what: str = "the baseline") -> Precondition:
    """Precondition "<what> moved the encoder": its paired interval against the untrained encoder (baseline
    minus untrained, same pairs) excludes 0 upward for every training seed; ``intervals`` as for
    ``verdict_rules.verdict``. Gates only the claims about <what> (:func:`own_arms_trained`)."""
    seeds = _per_seed(intervals)
    holds = all(low > 0 for _, _, low, _ in seeds)
    evidence = f"{what} minus untrained: " + "; ".join(_interval_text(*s) for s in seeds)
    return Precondition(f"{what}{MOVED}", holds, evidence)


def _as_mapping(values, name: str) -> dict:
    if isinstance(values, Mapping):
        out = dict(values)
    elif isinstance(values, Iterable) and not isinstance(values, str | bytes):
        out = dict(enumerate(values))
    else:
        out = {None: values}
    if not out:
        raise ValueError(f"{name} is empty: one value per training seed")
    return out


def left_start(
    what: str,
    selected_steps: int | Mapping | Sequence[int],
    weight_changes: float | Mapping | Sequence[float] | None = None,
) -> Precondition:
    """Precondition "<what> is not its starting point": checkpoint selection kept a step > 0 for every seed and,
    where given, the largest change of any trained weight is above 0 (a run whose optimizer never changed a
    weight, or whose best-on-dev checkpoint is step 0, *is* the untrained model). One value per seed, or a
    {seed: value} mapping."""
    steps = _as_mapping(selected_steps, "selected_steps")
    bad_steps = {k: v for k, v in steps.items() if int(v) <= 0}
    parts = [f"selected step {', '.join(f'{v}' for v in steps.values())}"]
    holds = not bad_steps
    if weight_changes is not None:
        changes = _as_mapping(weight_changes, "weight_changes")
        holds = holds and all(float(v) > 0 for v in changes.values())
        parts.append(f"largest weight change {', '.join(f'{float(v):.1e}' for v in changes.values())}")
    return Precondition(f"{what}{LEFT_START}", holds, "; ".join(parts))


Gate = Precondition | Sequence[Precondition]


def _gates(gate: Gate) -> list[Precondition]:
    return [gate] if isinstance(gate, Precondition) else list(gate)


def staying_put(arm: str, gate: Gate, reason: str) -> Precondition:
    """The gate of an arm whose staying put is the finding the paper reports: a precondition that holds, named
    "<arm> staying put is the finding", whose evidence is ``reason`` and what ``gate`` (one precondition or
    several) measured, i.e. whether the arm in fact stayed put."""
    if not str(reason).strip():
        raise ValueError(f"{arm}: staying put as the finding needs the reason (the paper's sentence that reports it)")
    gates = _gates(gate)
    measured = "it did train" if all(g.holds for g in gates) else "it stayed put"
    detail = "; ".join(f"{g.name}: {g.evidence}" for g in gates)
    return Precondition(f"{arm}{STAYED_PUT}", True, f"{reason}; measured: {measured} ({detail})")


def own_arms_trained(
    gates: Mapping[str, Gate],
    arms: Sequence[str] | None = None,
    *,
    staying_put_is_the_finding: Mapping[str, str] | None = None,
) -> list[Precondition]:
    """The rule that gates a comparison on its own arms: ``gates`` holds every arm's "trained" precondition(s)
    (:func:`left_start`, :func:`baseline_moved`, ...) by arm name, ``arms`` names the claim's own arms (all of
    ``gates`` when None); only their gates are returned, so a baseline that stayed put gates no claim it is not
    an arm of. ``staying_put_is_the_finding`` maps an arm to the reason its staying put is what the paper reports
    (e.g. Table 6: the (u,v) head never improves): its gates become one :func:`staying_put`, which holds."""
    arms = list(gates) if arms is None else list(arms)
    finding = dict(staying_put_is_the_finding or {})
    missing = [a for a in [*arms, *finding] if a not in gates]
    if missing:
        raise ValueError(f"no gate for arm(s) {missing}: gates cover {sorted(gates)}")
    if unknown := [a for a in finding if a not in arms]:
        raise ValueError(f"staying_put_is_the_finding names {unknown}, which are not arms of this claim {arms}")
    out: list[Precondition] = []
    for arm in arms:
        out += [staying_put(arm, gates[arm], finding[arm])] if arm in finding else _gates(gates[arm])
    return out


def margin_excludes_paper_effect(margin: float, paper_effect: float, where: str = "the paper") -> Precondition:
    """Precondition of a robustness claim: the margin is narrower than the effect the paper reports as real for the
    same setting (``paper_effect``, e.g. Section 4.5.1's +0.90 for sigma); with the paper's effect inside +-margin,
    "equivalent" could not tell the paper's claim from no effect, so the claim is not tested."""
    holds = abs(float(paper_effect)) > float(margin)
    side = "outside" if holds else "inside"
    return Precondition(
        "the margin is narrower than the paper's own effect",
        holds,
        f"{where}: {float(paper_effect):+.2f} lies {side} the margin +-{float(margin):g}",
    )


def phenomenon_occurs(what: str, count: int, minimum: int = 1, *, out_of: int | None = None) -> Precondition:
    """Precondition "<what> occurs": at least ``minimum`` cases to count (Appendix A: over-estimated quadruples)."""
    total = f" of {out_of}" if out_of is not None else ""
    return Precondition(f"{what} occurs", int(count) >= minimum, f"{int(count)}{total} cases (needs >= {minimum})")


def claim(
    text: str,
    intervals,
    *,
    paper_quote: str,
    kind: Kind = PAPER,
    direction: int = +1,
    margin: float | None = None,
    margin_reason: str | None = None,
    paper_effect: float | None = None,
    preconditions: Sequence[Precondition] = (),
    dev_gates: Sequence[DevGate] = (),
    smallest_effect: float | None = None,
    smallest_effect_reason: str | None = None,
    baseline: str | None = None,
    paired: Mapping | None = None,
    paired_sums: Mapping | None = None,
    n_resamples: int = 2000,
    paper_difference: float | None = None,
    main_claim: bool = False,
    **extra,
) -> dict:
    """One claim as a JSON-ready row for metrics.json and summary.md (the schema: module docstring).

    ``intervals``: one paired interval per training seed (a {seed label: interval} mapping keeps the labels).
    ``paper_quote``: the paper's sentence with its section (:func:`quote`); ``kind``: "paper" or "check".
    ``direction``: +1 / -1 for "a beats b" / "a loses to b", taken from the paper's words; 0 when no direction
    is claimed (then ``unresolved``).
    ``dev_gates``: each arm's ``dev_gates.trained_on_dev``, keyed by the same seed labels as ``intervals``: a seed
    on which an arm did not train on dev is left out ("k of n seeds"); fewer than two seeds left (or the only seed
    left out) makes the claim not tested. No gate reads the test pairs.
    ``smallest_effect`` (with ``smallest_effect_reason``, required): the smallest difference that matters for a
    direction claim; the verdict is then ``verdict_rules.sized_verdict`` ("contradicted" needs the estimate beyond it,
    intervals wholly inside it read "no meaningful effect").
    ``margin`` (with ``margin_reason``, required): a robustness claim, judged by ``verdict_rules.equivalence_verdict``:
    two one-sided tests, each at 2.5% with the 95% intervals (the direction is ignored); the row says whether
    "equivalent" is reachable with intervals as wide as the widest seed's (``reachability``). ``paper_effect``: the
    effect the paper reports as real for this setting; inside +-margin it makes the claim not tested
    (:func:`margin_excludes_paper_effect`).
    ``baseline``: the arm (as its dev gate names it) the paper says the claim improves on; with a smallest effect its
    gate also asks a dev gain of at least that effect on every seed (``DevGate.at_least``): a baseline that barely
    trained makes the claim "not tested: the baseline barely trained (dev +x)".
    ``paired`` (``{seed label: {task: (gold, pred_a, pred_b[, groups])}}``) or, for a difference of counts,
    ``paired_sums`` (``{seed label: (a, b, groups)}``): what each seed's interval was computed from. With two or
    more kept seeds the row gets the seeds-and-pairs interval of the mean over them, never narrower than the t
    interval of the seed means (``seed_bootstrap``), and **the verdict is decided on that interval**; each seed's
    own verdict stands beside it (``seed_verdicts``; :func:`seed_sides_text`). A claim on several seeds needs one.
    ``n_resamples``: that interval's bootstrap replicates (a notebook passes its own, as for the per-seed intervals).
    A failed precondition makes the verdict ``not tested``; ``not_tested_because`` names it and its evidence.
    ``main_claim``: True on the row that tests the paper's main claim (:class:`MainClaim`, one per claim constant).
    """
    if isinstance(direction, bool) or direction not in (1, -1, 0):
        raise ValueError(f"direction must be +1, -1 or 0, got {direction!r}")
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    paper_quote = _check_quote(paper_quote, text)
    preconditions = list(preconditions)
    dev_gates = _with_baseline(list(dev_gates), baseline, smallest_effect, text)
    kept = intervals
    selection = None
    if dev_gates:
        if not isinstance(intervals, Mapping):
            raise ValueError(f"claim {text!r}: dev gates need the intervals keyed by seed label ({{'seed 0': ...}})")
        selection = select_seeds(list(intervals), dev_gates)
        gates = [g.precondition(selection.needed) for g in dev_gates]
        preconditions += gates
        if all(g.holds for g in gates):  # each arm trained on enough seeds, but perhaps not on the same ones
            preconditions.append(selection.precondition())
        if selection.enough:
            kept = {label: intervals[label] for label in selection.kept}
    row = verdict_rules.claim_row(text, kept, direction or +1)
    both = _seeds_and_pairs(text, kept, paired, paired_sums, n_resamples)
    decided_on = [both] if both is not None else kept
    rule = _rule(text, direction, margin, margin_reason, smallest_effect, smallest_effect_reason)
    row["verdict"] = rule(decided_on)
    if both is not None:
        row["seeds_and_pairs"] = both.to_dict()
        row["seed_verdicts"] = {e["seed_run"]: rule([(e["difference"], e["low"], e["high"])]) for e in row["per_seed"]}
    if margin is not None:
        row.update(test="equivalence", margin=float(margin), margin_reason=margin_reason, paper_direction=0)
        widest = max((e["high"] - e["low"]) / 2 for e in row["per_seed"])
        row["reachability"] = verdict_rules.equivalence_reachable(margin, widest).sentence
        if paper_effect is not None:
            preconditions.append(margin_excludes_paper_effect(margin, paper_effect))
            row["paper_effect"] = float(paper_effect)
    elif direction == 0:
        row.update(test="no direction", paper_direction=0)
    else:
        row["test"] = "direction"
        if smallest_effect is not None:
            row.update(smallest_effect=float(smallest_effect), smallest_effect_reason=smallest_effect_reason)
    if selection is not None:
        row["seeds_run"] = len(intervals)
        row["seeds_left_out"] = selection.left_out
        row["dev_gates"] = [g.to_dict() for g in dev_gates]
    failed = [p for p in preconditions if not p.holds]
    if failed:
        row["verdict"] = verdict_rules.NOT_TESTED
        row["not_tested_because"] = "; ".join(f"{p.name!r} does not hold ({p.evidence})" for p in failed)
    elif row["verdict"] == verdict_rules.SMALL_EFFECT:
        row["effect_side"] = verdict_rules.effect_side(both.difference if both else row["difference"], direction)
    row["preconditions"] = [p.to_dict() for p in preconditions]
    row["paper_difference"] = paper_difference
    row["paper_quote"] = paper_quote
    row["kind"] = kind
    row["main_claim"] = bool(main_claim)
    if baseline is not None:
        row["baseline"] = baseline
    row.update(extra)
    return row


def _with_baseline(gates: list[DevGate], baseline: str | None, smallest_effect: float | None, text: str) -> list:
    """``gates`` with the baseline's asking a dev gain of at least the smallest effect (``DevGate.at_least``)."""
    if baseline is None:
        return gates
    if smallest_effect is None:
        raise ValueError(f"claim {text!r}: a baseline's least dev gain is the claim's smallest_effect: give one")
    if baseline not in [g.arm for g in gates]:
        raise ValueError(f"claim {text!r}: no dev gate for the baseline {baseline!r} (gates: {[g.arm for g in gates]})")
    reason = f"the claim's smallest effect {float(smallest_effect):.2f}"
    return [g.at_least(smallest_effect, reason) if g.arm == baseline else g for g in gates]


def _seeds_and_pairs(text: str, kept, paired: Mapping | None, paired_sums: Mapping | None, n_resamples: int = 2000):
    """The seeds-and-pairs interval (t-floored) over the kept seeds, or None with fewer than two of them."""
    if not isinstance(kept, Mapping):
        if len(verdict_rules.interval_list(kept)) > 1:
            raise ValueError(f"claim {text!r}: several seeds need their intervals keyed by seed label")
        return None
    labels = list(kept)
    if len(labels) < 2:
        return None
    if paired is None and paired_sums is None:
        raise ValueError(
            f"claim {text!r} stands on {len(labels)} seeds: give what their intervals were computed from (paired= or "
            "paired_sums=), so the verdict is decided on the seeds-and-pairs interval of their mean"
        )
    source = paired if paired is not None else paired_sums
    if missing := [label for label in labels if label not in source]:
        raise ValueError(f"claim {text!r}: no paired data for {missing} (it has {sorted(map(str, source))})")
    if paired is not None:
        return seed_bootstrap.seeds_and_pairs_difference(
            {s: paired[s] for s in labels}, n_resamples=n_resamples, t_floor=True
        )
    return seed_bootstrap.seeds_and_pairs_sum_difference({s: paired_sums[s] for s in labels}, n_resamples=n_resamples)


def _rule(text, direction, margin, margin_reason, smallest_effect, smallest_effect_reason):
    """The verdict function of a claim's test (``verdict_rules``), applied to its deciding interval and to each
    seed's."""
    if margin is not None:
        if not isinstance(margin_reason, str) or not margin_reason.strip():
            raise ValueError(f"claim {text!r}: an equivalence margin needs margin_reason (why +-{margin:g})")
        return lambda intervals: verdict_rules.equivalence_verdict(intervals, margin)
    if direction == 0:
        return lambda intervals: verdict_rules.UNRESOLVED
    if smallest_effect is not None:
        if not isinstance(smallest_effect_reason, str) or not smallest_effect_reason.strip():
            raise ValueError(f"claim {text!r}: smallest_effect needs smallest_effect_reason (why {smallest_effect:g})")
        return lambda intervals: verdict_rules.sized_verdict(intervals, direction, smallest_effect)
    return lambda intervals: verdict_rules.verdict(intervals, direction)
