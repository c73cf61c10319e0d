"""The claims table of summary.md and of ``stsnb book``: one row's cells from what its run recorded (``claims`` in
metrics.json), with the seeds-and-pairs interval under its t floor, the detectable effect of an unresolved claim
simulated under the every-seed rule, and a timing row's range labelled as such."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..evaluation import power, seed_bootstrap, verdict_rules
from ..evaluation.claims import (
    PAPER,
    failed_preconditions,
    is_equivalence,
    is_main_claim,
    is_timing_range,
    kind_of,
    provisional,
    seed_sides_text,
    seeds_text,
    verdict_words,
)

MISSING = "—"  # a value the run did not record: shown as missing, never invented


CLAIM_COLUMNS = (
    "notebook",
    "claim",
    "ours: difference [95% interval]",
    "seeds",
    "seeds and pairs [95% interval]",
    "paper's difference",
    "detectable (80% power)",
    "verdict",
    "precondition",
)


def signed(value: Any) -> str:
    return f"{value:+.2f}" if isinstance(value, int | float) and not isinstance(value, bool) else MISSING


def precondition_text(row: Mapping[str, Any]) -> str:
    """What a claim needed: the preconditions that do not hold with their evidence (its verdict is then ``not
    tested``), else the names of those that hold; rows from runs made before preconditions existed say so."""
    stored = row.get("preconditions")
    if stored is None:
        because = row.get("not_tested_because")
        return str(because) if because else f"{MISSING} (the run predates preconditions)"
    if not stored:
        return "none stated"
    broken = failed_preconditions(row)
    if broken:
        return "does not hold: " + "; ".join(f"{p.get('name')} ({p.get('evidence')})" for p in broken)
    return "holds: " + "; ".join(str(p.get("name")) for p in stored)


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def interval_text(values: Mapping[str, Any] | None) -> str:
    """ "+1.23 [+0.40, +2.05]" of a mapping with difference, low and high, else missing."""
    numbers = [(values or {}).get(k) for k in ("difference", "low", "high")]
    if not all(is_number(v) for v in numbers):
        return MISSING
    return f"{signed(numbers[0])} [{signed(numbers[1])}, {signed(numbers[2])}]"


def seed_intervals(row: Mapping[str, Any]) -> list[tuple[float, float]]:
    """(low, high) of each training seed's interval of a claim row (``per_seed``); the envelope when the row has no
    per-seed entries (older runs); empty without an interval."""
    entries = [e for e in row.get("per_seed") or [] if isinstance(e, Mapping)]
    pairs = [(e.get("low"), e.get("high")) for e in entries] or [(row.get("low"), row.get("high"))]
    return [(float(lo), float(hi)) for lo, hi in pairs if is_number(lo) and is_number(hi) and lo <= hi]


def interval_count(row: Mapping[str, Any]) -> int:
    """How many intervals a claim row stands on: one per training seed, plus its seeds-and-pairs interval."""
    return len(seed_intervals(row)) + (1 if isinstance(row.get("seeds_and_pairs"), Mapping) else 0)


def seed_differences(row: Mapping[str, Any]) -> list[float]:
    """Each training seed's difference of a claim row (``per_seed``), empty for rows without them."""
    entries = [e for e in row.get("per_seed") or [] if isinstance(e, Mapping)]
    return [float(e["difference"]) for e in entries if is_number(e.get("difference"))]


def seeds_and_pairs_shown(row: Mapping[str, Any]) -> dict[str, float] | None:
    """The seeds-and-pairs interval as summary.md shows it: the run's hierarchical bootstrap interval, each end moved
    out where needed to the t interval of the seeds' differences around its point estimate
    (``seed_bootstrap.t_floored``'s rule: with 3 seeds a bootstrap of the seeds understates their spread, where t with
    2 degrees of freedom applies); ``floored`` says whether the floor widened it, here or already in the run (a run
    that recorded the floored interval, ``floored`` true, moves no further here). None when the row has none."""
    both = row.get("seeds_and_pairs")
    if not isinstance(both, Mapping) or not all(is_number(both.get(k)) for k in ("difference", "low", "high")):
        return None
    shown = {"difference": float(both["difference"]), "low": float(both["low"]), "high": float(both["high"])}
    differences = seed_differences(row)
    if len(differences) > 1:
        low, high, _ = seed_bootstrap.floored_bounds(shown["difference"], shown["low"], shown["high"], differences)
        moved = (low, high) != (shown["low"], shown["high"])
        shown.update(low=low, high=high, floored=float(moved or bool(both.get("floored"))))
    return shown


def detectable_text(row: Mapping[str, Any]) -> str:
    """The smallest difference an unresolved direction claim of the paper would be supported at with 80% power under the
    rule that decides it (``power.detectable_of_seeds``), simulated with its observed seed-to-seed spread and test-pair
    noise (``power.simulated_detectable_effect``: each seed's estimate = true + training noise + the test-pair noise all
    seeds share; the pair noise's standard error from its widest seed interval), "±1.43"; missing for other rows."""
    widths = seed_intervals(row)
    if kind_of(row) != PAPER or row.get("verdict") != verdict_rules.UNRESOLVED or is_equivalence(row) or not widths:
        return MISSING
    entries = [e for e in row.get("per_seed") or [] if isinstance(e, Mapping)]
    per_seed = [(float(e["difference"]), float(e["low"]), float(e["high"])) for e in entries if is_number(e.get("low"))]
    if not per_seed:  # an older run: its envelope as one seed
        per_seed = [(float(row.get("difference") or 0.0), *widths[0])]
    effect = power.detectable_of_seeds(per_seed)
    return f"±{effect:.2f}"


MAIN_CLAIM_MARK = "main claim: "  # before the claim text of the row that tests the paper's main claim


def claim_text(row: Mapping[str, Any]) -> str:
    """The claim column: the row's ``claim``, after ``MAIN_CLAIM_MARK`` when it tests the paper's main claim
    (``claims.is_main_claim``; rows of older runs are not marked)."""
    return (MAIN_CLAIM_MARK if is_main_claim(row) else "") + str(row["claim"])


def verdict_cell(row: Mapping[str, Any]) -> str:
    """The verdict column: the verdict (a small effect with its side, ``claims.verdict_words``), "(margin ±m)" on a
    robustness claim with whether "equivalent" was reachable, the smallest effect of interest a sized verdict used,
    "(1 seed, provisional)" on a decisive verdict that stands on one seed, and on a claim decided on its
    seeds-and-pairs interval each seed's own verdict (``claims.seed_sides_text``)."""
    verdict = verdict_words(row)
    if is_equivalence(row) and is_number(row.get("margin")):
        verdict += f" (margin ±{row['margin']:g})"
        if "not reachable" in str(row.get("reachability") or ""):
            verdict += "; equivalence not reachable at this size"
    elif is_number(row.get("smallest_effect")) and row.get("verdict") != verdict_rules.SMALL_EFFECT:
        verdict += f" (smallest effect ±{row['smallest_effect']:.2f})"
    if provisional(row):
        verdict += " (1 seed, provisional)"
    sides = seed_sides_text(row) if row.get("verdict") != verdict_rules.NOT_TESTED else None
    return f"{verdict}; {sides}" if sides else verdict


def seeds_cell(row: Mapping[str, Any]) -> str:
    """ "3", or "2 of 3" when dev gates left a seed out (``claims.seeds_text``)."""
    text = seeds_text(row)
    return text.split(" seed")[0]


def claim_cells(row: Mapping[str, Any]) -> list[str]:
    """The texts of ``CLAIM_COLUMNS`` after ``notebook`` for one claim row (old rows with three verdicts and no
    preconditions render too)."""
    seeds = row.get("seeds")
    both = seeds_and_pairs_shown(row)
    ours = interval_text(row)
    if is_timing_range(row) and ours != MISSING:
        ours = f"{ours} s (range of timed steps, not a test)"
    return [
        claim_text(row),
        ours,
        seeds_cell(row) if isinstance(seeds, int) and not isinstance(seeds, bool) else MISSING,
        interval_text(both) + (" (t floor)" if both and both.get("floored") else ""),
        signed(row.get("paper_difference")),
        detectable_text(row),
        verdict_cell(row),
        precondition_text(row),
    ]
