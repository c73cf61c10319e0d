"""Reading a stored claim row (``claims.claim``'s output, as metrics.json keeps it): its kind and test, its seeds and
verdict as a reader reads them (:func:`verdict_text`, :func:`deciding_interval`, :func:`seed_sides_text`,
:func:`describe`), counts by verdict, the arms its gates name (:func:`arms_not_compared`), and how many intervals a
run's rows stand on (:func:`interval_counts`). ``stsnb.evaluation.claims`` builds the rows and re-exports these."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Literal, NamedTuple

from . import seed_bootstrap, verdict_rules
from .dev_gates import TRAINED_ON_DEV

Kind = Literal["paper", "check"]
PAPER: Kind = "paper"  # a claim of the paper
CHECK: Kind = "check"  # a check of our own setting
KINDS: tuple[Kind, ...] = (PAPER, CHECK)
TESTS: tuple[str, ...] = ("direction", "equivalence", "no direction")

# the endings of the one-arm gates' names (left_start, baseline_moved, staying_put), read back by gated_arm
LEFT_START = " is not its starting point"
MOVED = " moved the encoder"
STAYED_PUT = " staying put is the finding"


def kind_of(row: Mapping) -> Kind:
    """ "paper" or "check"; a row of an older run (no kind, or the test stored as kind) counts as "paper"."""
    return CHECK if row.get("kind") == CHECK else PAPER


def tested_as(row: Mapping) -> str:
    """ "direction", "equivalence" or "no direction" (``test``; older runs stored it as ``kind``)."""
    test = row.get("test") or row.get("kind")
    if test in TESTS:
        return str(test)
    return "equivalence" if row.get("margin") is not None else "direction"


def is_main_claim(row: Mapping) -> bool:
    """Whether the row tests its paper's main claim (``main_claim: true``, :class:`MainClaim`); rows of runs older than
    the main claims have no such field and are not (their ``headline`` was a notebook's choice, not the paper's)."""
    return row.get("main_claim") is True


def is_equivalence(row: Mapping) -> bool:
    """Whether the row is a robustness claim judged by equivalence within ``margin``."""
    return tested_as(row) == "equivalence"


def split_by_kind(rows: Iterable[Mapping]) -> tuple[list[Mapping], list[Mapping]]:
    """(claims of the paper, checks of our setting), each in its given order."""
    rows = list(rows)
    return [r for r in rows if kind_of(r) == PAPER], [r for r in rows if kind_of(r) == CHECK]


def seeds_text(row: Mapping) -> str:
    """Reads "1 seed", "3 seeds", or "2 of 3 seeds" when dev gates left a seed out (training seeds behind the
    verdict)."""
    n = int(row.get("seeds") or 0)
    run = int(row.get("seeds_run") or n)
    if run > n:
        return f"{n} of {run} seeds"
    return f"{n} seed{'s' if n != 1 else ''}"


def provisional(row: Mapping) -> bool:
    """Whether the row's verdict is decisive (supported, contradicted, equivalent, no meaningful effect) but stands on
    one training seed: it is marked "(1 seed, provisional)", since one seed's interval covers the test pairs'
    noise and none of the training variance."""
    return row.get("verdict") in verdict_rules.DECISIVE and int(row.get("seeds") or 0) == 1


def verdict_words(row: Mapping) -> str:
    """The verdict as a reader reads it: a small effect with its side and the bound it lies within ("small effect on
    the paper's side, below ±0.77"), any other verdict as stored."""
    verdict = str(row.get("verdict"))
    if verdict == verdict_rules.SMALL_EFFECT and row.get("effect_side"):
        bound = row.get("smallest_effect")
        below = f", below ±{bound:.2f}" if isinstance(bound, int | float) else ""
        return f"{verdict} {row['effect_side']}{below}"
    return verdict


def verdict_text(row: Mapping, *, mark_provisional: bool = False) -> str:
    """The verdict with its seeds, e.g. "supported (3 seeds)" or "not tested (1 seed)"; with ``mark_provisional``
    a decisive verdict on one seed reads "supported (1 seed, provisional)" (:func:`provisional`)."""
    mark = ", provisional" if mark_provisional and provisional(row) else ""
    return f"{verdict_words(row)} ({seeds_text(row)}{mark})"


def deciding_interval(row: Mapping) -> tuple[float, float, float]:
    """(difference, low, high) the verdict was decided on: the seeds-and-pairs interval of a claim on several kept
    seeds, never narrower than the t interval of its seeds' differences (``seed_bootstrap.floored_bounds``: a run that
    recorded it unfloored is floored here), else the row's one interval."""
    both = row.get("seeds_and_pairs")
    if isinstance(both, Mapping) and all(isinstance(both.get(k), int | float) for k in ("difference", "low", "high")):
        difference, low, high = float(both["difference"]), float(both["low"]), float(both["high"])
        seeds = [float(e["difference"]) for e in row.get("per_seed") or [] if isinstance(e, Mapping)]
        if len(seeds) > 1:
            low, high, _ = seed_bootstrap.floored_bounds(difference, low, high, seeds)
        return difference, low, high
    return float(row["difference"]), float(row["low"]), float(row["high"])


def seed_sides_text(row: Mapping) -> str | None:
    """Each kept seed's own verdict beside a verdict decided on the seeds-and-pairs interval, with how many seeds'
    intervals lie on the paper's side, e.g. "each seed: supported, supported, unresolved (2 of 3 seeds' intervals on
    the paper's side)"; None for a row without per-seed verdicts (one seed)."""
    verdicts = row.get("seed_verdicts")
    if not isinstance(verdicts, Mapping) or not verdicts:
        return None
    direction = int(row.get("paper_direction") or 0)
    entries = [e for e in row.get("per_seed") or [] if isinstance(e, Mapping)]
    if direction:
        side = sum(verdict_rules.interval_direction(e["low"], e["high"]) == direction for e in entries)
        counted = f" ({side} of {len(entries)} seeds' intervals on the paper's side)"
    else:
        counted = ""
    return f"each seed: {', '.join(str(v) for v in verdicts.values())}{counted}"


def describe(row: Mapping) -> str:
    """Lines for a notebook: the claim ("check:" before a check of our setting, "main claim:" before the paper's main
    claim), ours with its interval, the
    paper's difference, the margin and its reason, the verdict and seeds, why it was not tested when a precondition
    failed, and on the next line the paper's sentence it tests."""
    ours = f"ours {row['difference']:+.2f} [{row['low']:+.2f}, {row['high']:+.2f}]"
    if row.get("difference_std") is not None:
        ours += f", sd {row['difference_std']:.2f}"
    if isinstance(row.get("seeds_and_pairs"), Mapping):
        difference, low, high = deciding_interval(row)
        ours += f"; seeds and pairs {difference:+.2f} [{low:+.2f}, {high:+.2f}]"
    paper = row.get("paper_difference")
    paper_text = f"; paper {paper:+.2f}" if isinstance(paper, int | float) else ""
    margin = ""
    if is_equivalence(row) and isinstance(row.get("margin"), int | float):
        margin = f", margin +-{row['margin']:g}"
        if row.get("margin_reason"):
            margin += f" ({row['margin_reason']})"
    prefix = "check: " if kind_of(row) == CHECK else "main claim: " if is_main_claim(row) else ""
    line = f"{prefix}{row['claim']}: {ours}{paper_text}{margin} -> {verdict_text(row)}"
    if row.get("not_tested_because"):
        line += f": {row['not_tested_because']}"
    elif sides := seed_sides_text(row):
        line += f"; {sides}"
    if row.get("paper_quote"):
        line += f"\n    {'the setting' if kind_of(row) == CHECK else 'the paper'}: {row['paper_quote']}"
    return line


def verdict_counts(rows: Iterable[Mapping], kind: Kind | None = None) -> dict[str, int]:
    """How many claims got each verdict; ``kind`` "paper" or "check" counts only those rows. Timing rows (measured
    seconds, :func:`is_timing_range`) are no tests and are counted apart (:func:`timing_rows`)."""
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS} or None, got {kind!r}")
    rows = [r for r in rows if (kind is None or kind_of(r) == kind) and not is_timing_range(r)]
    return {v: sum(r.get("verdict") == v for r in rows) for v in verdict_rules.VERDICTS}


def verdict_counts_by_kind(rows: Iterable[Mapping]) -> dict[str, dict[str, int]]:
    """{"paper": verdict counts of the paper's claims, "check": of the checks of our setting}."""
    rows = list(rows)
    return {k: verdict_counts(rows, k) for k in KINDS}


# the names a gate on one arm gets: "<arm>" + one of them
GATE_SUFFIXES = (LEFT_START, MOVED, STAYED_PUT, TRAINED_ON_DEV)


def gated_arm(precondition_name: str) -> str | None:
    """The arm a precondition gates on, read from its name ("CCL is not its starting point" -> "CCL"), or None for
    a precondition about no single arm (a margin, a phenomenon that must occur)."""
    for suffix in GATE_SUFFIXES:
        if precondition_name.endswith(suffix):
            return precondition_name[: -len(suffix)]
    return None


_FILLER = {"the", "a", "an", "of", "on", "baseline", "arm"}  # words an arm's name may add to what the statement says


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower().replace("_", " "))) - _FILLER


def arms_not_compared(row: Mapping) -> list[str]:
    """The arms a claim row is gated on that its statement does not compare: the guard of the rule that a claim is
    gated on its own arms. An arm counts as compared when every word of its name (a parenthesised detail, case,
    ``_``/``-``/``+`` and "the ... baseline" aside) is in the claim's text or its ``a`` / ``b``: "+Ours (stage 2)" in
    "+Ours beats +Contrast", "SimCSE+HiCL" in "+HiCL beats SimCSE", "smooth_k2" in "Smooth K2". A non-empty answer is
    the defect this guards against: "Translated ReLU beats L1" gated on cross entropy moving."""
    stated = _words(" ".join(str(row.get(k) or "") for k in ("claim", "a", "b")))
    out = []
    for p in row.get("preconditions") or []:
        arm = gated_arm(str(p.get("name", "")))
        if arm is not None and not _words(re.sub(r"\s*\([^)]*\)\s*$", "", arm)) <= stated:
            out.append(arm)
    return out


_INTERVAL_TEXT = re.compile(r"[+-]?\d+(?:\.\d+)? \[[+-]?\d+(?:\.\d+)?, [+-]?\d+(?:\.\d+)?\]")


def is_timing_range(row: Mapping) -> bool:
    """Whether a claim row's "interval" is a range of measured seconds (``unit`` "seconds ...", e.g. HiCL's
    Section 3.3 step times): the spread of repeated timings, not an interval that tests a difference."""
    return str(row.get("unit") or "").strip().lower().startswith("second")


def _claim_interval_count(row: Mapping) -> int:
    entries = [e for e in row.get("per_seed") or [] if isinstance(e, Mapping)]
    pairs = [(e.get("low"), e.get("high")) for e in entries] or [(row.get("low"), row.get("high"))]
    seeds = sum(all(isinstance(v, int | float) and not isinstance(v, bool) for v in pair) for pair in pairs)
    return seeds + (1 if isinstance(row.get("seeds_and_pairs"), Mapping) else 0)


class IntervalCounts(NamedTuple):
    """How many intervals one run's claim rows stand on (:func:`interval_counts`)."""

    claims: int
    preconditions: int
    timing_ranges: int


def interval_counts(rows: Iterable[Mapping]) -> IntervalCounts:
    """(claim intervals, precondition intervals, timing ranges) of one run's claim rows, for
    ``verdict_rules.multiplicity(claims, preconditions=..., timing_ranges_excluded=...)``.

    Claim intervals: one per training seed of each row (its envelope when it has no per-seed entries) plus its
    seeds-and-pairs interval, rows that are timing ranges (:func:`is_timing_range`) left out and counted as such.
    Precondition intervals: the intervals printed in the evidence of the stored preconditions (e.g.
    :func:`baseline_moved`'s "seed 0: +0.37 [+0.16, +0.56]; ..."), each distinct precondition (name and evidence)
    once however many claims it gates."""
    rows = list(rows)
    timing = [r for r in rows if is_timing_range(r)]
    claim_count = sum(_claim_interval_count(r) for r in rows if not is_timing_range(r))
    seen = {
        (str(p.get("name")), str(p.get("evidence")))
        for r in rows
        for p in r.get("preconditions") or []
        if isinstance(p, Mapping)
    }
    return IntervalCounts(claim_count, sum(len(_INTERVAL_TEXT.findall(e)) for _, e in seen), len(timing))


def timing_rows(rows: Iterable[Mapping]) -> list[Mapping]:
    """The rows that are timings (ranges of measured seconds, not tests), counted apart from the claims' verdicts."""
    return [r for r in rows if is_timing_range(r)]


def failed_preconditions(row: Mapping) -> list[dict]:
    """The stored preconditions of a claim row that do not hold."""
    return [p for p in row.get("preconditions") or [] if not p.get("holds")]
