"""Each paper's main claim, fixed from its abstract and never chosen by a result (:class:`MainClaim`; the constants
live in ``stsnb/papers/<paper>/claims.py`` and register under the entry-point group ``stsnb.main_claims``). Every
profile's summary and every notebook lead with its verdict, whatever it is: the notebook's first cell after its
opening states it (:func:`main_claim_intro`) and its takeaway opens with its verdict (:func:`main_claim_text`), worded
the same way.

**When they were fixed.** What git shows: the constants were fixed in the package on 2026-11-28 (commit 0886fdc),
after the first cpu runs of the same comparisons (from 2026-11-23), so not before any run; every run since is at the
fixed claim (:data:`FIXED`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .claims import deciding_interval, is_main_claim, seeds_text, verdict_text

# what git shows of when the main claims were fixed (the summary, the notebooks and docs/verdicts.md say it)
FIXED = (
    "Fixed in the package on 2026-11-28, after the first cpu runs of the same comparisons (from 2026-11-23); every "
    "run since is at the fixed claim"
)


@dataclass(frozen=True)
class MainClaim:
    """A paper's main claim, fixed from its abstract and never chosen by a result (:data:`FIXED` says when): the
    abstract's sentence (``abstract``, a :func:`quote`), the table it is tested on, its arms (``a`` against ``b``) and
    the paper's direction. Every profile's summary leads with its verdict, whatever it is; no parameter or profile picks
    it. ``wording``: fragments that every claim row a notebook writes for it contains (how the row is found)."""

    notebook: str
    abstract: str
    table: str
    a: str
    b: str
    wording: tuple[str, ...]
    direction: int = +1
    relation: str = "beats"  # how the statement reads: "a beats b", "a is faster than b"

    @property
    def statement(self) -> str:
        return f"{self.table}: {self.a} {self.relation} {self.b}"

    def row_in(self, rows: Iterable[Mapping]) -> Mapping | None:
        """The run's row for this claim: the first row marked ``main_claim`` whose ``claim`` contains every fragment of
        ``wording`` (a notebook with two main claims marks two rows)."""
        return next(
            (r for r in rows if is_main_claim(r) and all(w in str(r.get("claim", "")) for w in self.wording)), None
        )


def main_claim_text(main: MainClaim, rows: Iterable[Mapping] | None) -> str:
    """ "Table 4: stage 2 beats stage 1: supported (3 seeds), +4.98 [+1.86, +8.43]": the statement, then
    ``main_claim_result``."""
    return f"{main.statement}: {main_claim_result(main, rows)}"


def main_claim_result(main: MainClaim, rows: Iterable[Mapping] | None) -> str:
    """ "supported (3 seeds), +4.98 [+2.60, +7.42] (seeds and pairs)": the verdict and the interval it was decided on
    (``claims.deciding_interval``); "not run in this profile" when the run has no row for it; "no
    claims recorded" when the run recorded none; "no main-claim row (the run predates main claims)" for a run whose
    rows carry no ``main_claim`` field."""
    if rows is None:
        return "no claims recorded"
    rows = list(rows)
    row = main.row_in(rows)
    if row is None and rows and not any("main_claim" in r for r in rows):
        return "no main-claim row (the run predates main claims)"
    if row is None:
        return "not run in this profile"
    interval = ""
    if all(isinstance(row.get(k), int | float) for k in ("difference", "low", "high")):
        difference, low, high = deciding_interval(row)
        which = " (seeds and pairs)" if isinstance(row.get("seeds_and_pairs"), Mapping) else ""
        interval = f", {difference:+.2f} [{low:+.2f}, {high:+.2f}]{which}"
    if "verdict" not in row:
        return f"no verdict ({seeds_text(row)}){interval}"
    return f"{verdict_text(row, mark_provisional=True)}{interval}"


def main_claims_of(notebook: str) -> tuple[MainClaim, ...]:
    """The main claims registered for ``notebook`` (entry-point group ``stsnb.main_claims``; () for none)."""
    from importlib.metadata import entry_points

    for entry in entry_points(group="stsnb.main_claims"):
        if entry.name == notebook:
            return tuple(entry.load())
    return ()


def main_claim_intro(notebook: str) -> str:
    """What a notebook's first cell after its opening prints: each main claim of its paper, the abstract's sentence,
    and that its verdict is reported whatever it is."""
    mains = main_claims_of(notebook)
    if not mains:
        raise ValueError(f"no main claim is registered for {notebook!r} (entry points stsnb.main_claims)")
    lines = []
    for main in mains:
        lines += [f"The paper's main claim: {main.statement}.", f"    the paper, {main.abstract}"]
    lines.append(f"{FIXED}; its verdict opens the takeaway at the end, whatever it is.")
    return "\n".join(lines)
