"""A claim checked on our runs: what must hold for it to be tested, the training seeds it stands on, its verdict.

A paired interval answers "is a better than b on these test pairs"; whether that answer says anything about the
paper depends on the run behind it. A "+HiCL beats SimCSE" difference on a backbone SimCSE never moved, or "Smooth
K2 beats cross entropy" where neither loss moved the encoder, compares two copies of the untrained model. So every
claim carries its **preconditions**, and when one fails its verdict is **not tested**, with the reason, never
supported or contradicted (its interval is still shown). The five verdicts (``stsnb.stats``):

- ``supported`` / ``contradicted`` / ``unresolved`` -- a direction claim ("a beats b"): every training seed's
  interval excludes 0 on the paper's side / on the other side / anything else;
- ``equivalent`` -- a robustness claim ("the template hardly matters"): every seed's interval lies inside
  +-margin (``stats.equivalence_verdict``); a direction test can never support such a claim;
- ``not tested`` -- a precondition failed.

Generic preconditions (one function each, used by every paper notebook):

- :func:`baseline_moved` -- the baseline improved on the untrained encoder (its own paired interval excludes 0
  upward, every seed);
- :func:`left_start` -- the model is not its starting point (checkpoint selection kept a step > 0 and the
  weights changed);
- :func:`phenomenon_occurs` -- what the claim is about happens at all (e.g. over-estimated quadruples to count);
- :func:`precondition` -- any other named condition with its evidence.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

from . import stats


@dataclass(frozen=True)
class Precondition:
    """A named condition a claim needs, whether it holds, and the measured evidence (printed and stored)."""

    name: str
    holds: bool
    evidence: str

    def to_dict(self) -> dict:
        return asdict(self)

    def describe(self) -> str:
        return f"{self.name}: {'holds' if self.holds else 'FAILS'} ({self.evidence})"


def precondition(name: str, holds: bool, evidence: str) -> Precondition:
    """Any named condition; ``evidence`` says what was measured."""
    if not name:
        raise ValueError("a precondition needs a name saying what must hold")
    return Precondition(str(name), bool(holds), str(evidence))


def _per_seed(intervals) -> list[tuple[object, float, float, float]]:
    """(seed label, difference, low, high) of each interval (a PairedDifference, tuple, list or mapping)."""
    row = stats.claim_row("-", intervals, +1)
    return [(e["seed_run"], e["difference"], e["low"], e["high"]) for e in row["per_seed"]]


def _interval_text(label, difference: float, low: float, high: float) -> str:
    prefix = f"{label}: " if label is not None else ""
    return f"{prefix}{difference:+.2f} [{low:+.2f}, {high:+.2f}]"


def baseline_moved(intervals, what: str = "the baseline") -> Precondition:
    """Precondition "<what> moved the encoder": its paired interval against the untrained encoder (baseline
    minus untrained, same pairs) excludes 0 upward for every training seed; ``intervals`` as for ``stats.verdict``."""
    seeds = _per_seed(intervals)
    holds = all(low > 0 for _, _, low, _ in seeds)
    evidence = f"{what} minus untrained: " + "; ".join(_interval_text(*s) for s in seeds)
    return Precondition(f"{what} moved the encoder", holds, evidence)


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
    return Precondition(f"{what} is not its starting point", holds, "; ".join(parts))


def phenomenon_occurs(what: str, count: int, minimum: int = 1, *, out_of: int | None = None) -> Precondition:
    """Precondition "<what> occurs": at least ``minimum`` cases to count (Appendix A: over-estimated quadruples)."""
    total = f" of {out_of}" if out_of is not None else ""
    return Precondition(f"{what} occurs", int(count) >= minimum, f"{int(count)}{total} cases (needs >= {minimum})")


def claim(
    text: str,
    intervals,
    *,
    direction: int = +1,
    margin: float | None = None,
    preconditions: Sequence[Precondition] = (),
    paper_difference: float | None = None,
    **extra,
) -> dict:
    """One claim as a JSON-ready row for metrics.json and summary.md.

    ``intervals``: one paired interval per training seed (a {seed label: interval} mapping keeps the labels).
    ``direction``: +1 / -1 for "a beats b" / "a loses to b", 0 when no direction is claimed (then ``unresolved``).
    ``margin``: makes it a robustness claim, judged by ``stats.equivalence_verdict`` (the direction is ignored).
    A failed precondition makes the verdict ``not tested``; ``not_tested_because`` names it and its evidence.
    The row keeps everything ``stats.claim_row`` gives (difference, envelope, per seed) plus ``kind``, ``seeds``,
    ``preconditions``, ``paper_difference`` and ``extra``.
    """
    if isinstance(direction, bool) or direction not in (1, -1, 0):
        raise ValueError(f"direction must be +1, -1 or 0, got {direction!r}")
    row = stats.claim_row(text, intervals, direction or +1)
    if margin is not None:
        row.update(kind="equivalence", margin=float(margin), paper_direction=0)
        row["verdict"] = stats.equivalence_verdict(intervals, margin)
    elif direction == 0:
        row.update(kind="no direction", paper_direction=0, verdict=stats.UNRESOLVED)
    else:
        row["kind"] = "direction"
    failed = [p for p in preconditions if not p.holds]
    if failed:
        row["verdict"] = stats.NOT_TESTED
        row["not_tested_because"] = "; ".join(f"{p.name!r} does not hold ({p.evidence})" for p in failed)
    row["preconditions"] = [p.to_dict() for p in preconditions]
    row["paper_difference"] = paper_difference
    row.update(extra)
    return row


def seeds_text(row: Mapping) -> str:
    """Reads "1 seed" or "3 seeds" (training seeds behind the verdict)."""
    n = int(row.get("seeds") or 0)
    return f"{n} seed{'s' if n != 1 else ''}"


def verdict_text(row: Mapping) -> str:
    """The verdict with its seeds, e.g. "supported (3 seeds)" or "not tested (1 seed)"."""
    return f"{row['verdict']} ({seeds_text(row)})"


def describe(row: Mapping) -> str:
    """One line for a notebook: the claim, ours with its interval, the paper's difference, the verdict and seeds,
    and why it was not tested when a precondition failed."""
    ours = f"ours {row['difference']:+.2f} [{row['low']:+.2f}, {row['high']:+.2f}]"
    if row.get("difference_std") is not None:
        ours += f", sd {row['difference_std']:.2f}"
    paper = row.get("paper_difference")
    paper_text = f"; paper {paper:+.2f}" if isinstance(paper, int | float) else ""
    margin = f", margin +-{row['margin']:g}" if row.get("kind") == "equivalence" else ""
    line = f"{row['claim']}: {ours}{paper_text}{margin} -> {verdict_text(row)}"
    if row.get("not_tested_because"):
        line += f": {row['not_tested_because']}"
    return line


def verdict_counts(rows: Iterable[Mapping]) -> dict[str, int]:
    """How many claims got each of the five verdicts."""
    rows = list(rows)
    return {v: sum(r.get("verdict") == v for r in rows) for v in stats.VERDICTS}


def failed_preconditions(row: Mapping) -> list[dict]:
    """The stored preconditions of a claim row that do not hold."""
    return [p for p in row.get("preconditions") or [] if not p.get("holds")]
