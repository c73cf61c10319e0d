"""What the committed runs found, for a notebook to print beside its own result: a class run's verdict with the cpu
profile's multi-seed result on the same claim.

The committed runs are the run folders in the repository, ``papermill_runs/<profile>/<notebook>/`` (``stsnb run``
writes them; ``stsnb.runs.summary`` reads them). A claim is read from the folder's metrics.json with
``stsnb.runs.summary.claim_rows``, the reader summary.md uses, so a row reads here as it does there.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..evaluation import verdict_rules
from ..evaluation.claims import deciding_interval, is_equivalence, seeds_text, verdict_text
from .plans import DEFAULT_OUT
from .summary import claim_rows

NO_RUN = "no committed run of this claim"


def _same(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


def find_claim(folder: Path, claim: str) -> Mapping[str, Any] | None:
    """The claim row of the run in ``folder`` whose ``claim`` text is ``claim`` (exactly, runs of white space
    aside), None when the run has no such row or no metrics.json."""
    return next((row for row in claim_rows(Path(folder)) if _same(str(row["claim"]), claim)), None)


def result_text(row: Mapping[str, Any]) -> str:
    """ "+4.98 [+2.60, +7.42] (seeds and pairs), supported (3 seeds)": the difference with the 95% interval its
    verdict was decided on (``claims.deciding_interval``), the verdict and its seeds; an equivalence claim's margin
    before its verdict ("+0.20 [-0.30, +0.60], margin ±1, equivalent (1 seed)")."""
    difference, low, high = deciding_interval(row)
    text = f"{difference:+.2f} [{low:+.2f}, {high:+.2f}]"
    if isinstance(row.get("seeds_and_pairs"), Mapping):
        text += " (seeds and pairs)"
    if is_equivalence(row) and isinstance(row.get("margin"), int | float):
        text += f", margin ±{row['margin']:g}"
    return f"{text}, {verdict_text(row)}"


def cpu_result(notebook: str, claim: str, *, runs_dir: Path = DEFAULT_OUT) -> str:
    """The committed cpu run's result on ``claim``, e.g. "cpu: +4.98 [+1.88, +8.41], supported (3 seeds)", or
    "cpu: no committed run of this claim".

    ``notebook`` names the run folder (``"10_pcc_tuning"``), read from ``<runs_dir>/cpu/<notebook>/metrics.json``.
    ``claim`` is the row's ``claim`` text as the notebook's claims code writes it (``stsnb.evaluation.claims.claim``'s
    first argument; the class and cpu profiles build it with the same code, so pass the class row's ``row["claim"]``),
    matched exactly up to runs of white space: a claim reworded since the cpu run was committed has no committed
    run until that run is redone, and says so rather than showing another claim's result.
    """
    return _cpu_text(find_claim(Path(runs_dir) / "cpu" / notebook, claim))


def _cpu_text(cpu_row: Mapping[str, Any] | None) -> str:
    """The text "cpu: <result>" of a committed cpu row, or "cpu: no committed run of this claim" for None."""
    return f"cpu: {result_text(cpu_row) if cpu_row is not None else NO_RUN}"


def cpu_row_of(
    notebook: str, row: Mapping[str, Any], profile: str, *, runs_dir: Path = DEFAULT_OUT
) -> Mapping[str, Any] | None:
    """The cpu profile's row of ``row``'s claim: in a cpu run the row itself, in any other profile the committed cpu
    run's (``find_claim``; None when it has none)."""
    if profile == "cpu":
        return row
    return find_claim(Path(runs_dir) / "cpu" / notebook, str(row["claim"]))


def cpu_result_of(notebook: str, row: Mapping[str, Any], profile: str, *, runs_dir: Path = DEFAULT_OUT) -> str:
    """The cpu profile's result on ``row``'s claim, for a sentence that needs it in every profile: in a cpu run the
    row's own ("cpu: +4.98 [+1.88, +8.41], supported (3 seeds), this run"; the committed one is the run being
    replaced), in any other profile the committed cpu run's (``cpu_result``)."""
    if profile == "cpu":
        return f"cpu: {result_text(row)}, this run"
    cpu_row = cpu_row_of(notebook, row, profile, runs_dir=runs_dir)  # read once: text and surprise
    surprise = opposite_ways(row, cpu_row)
    return _cpu_text(cpu_row) + (f"; {surprise}" if surprise else "")


SIDED = frozenset({verdict_rules.SUPPORTED, verdict_rules.CONTRADICTED})  # verdicts that take a side


def opposite_ways(row: Mapping[str, Any], cpu_row: Mapping[str, Any] | None) -> str | None:
    """The sentence a surprising pair of results gets: this run's difference and the cpu run's on the same claim have
    opposite signs and at least one verdict is decisive. None otherwise (or without a cpu row). Why the two differ is
    not tested by either run, so the sentence names the plan's cuts as a hypothesis only."""
    if cpu_row is None or not all(isinstance(r.get("difference"), int | float) for r in (row, cpu_row)):
        return None
    if row["difference"] * cpu_row["difference"] >= 0 or not {row.get("verdict"), cpu_row.get("verdict")} & SIDED:
        return None
    return (
        f"this run and the cpu run point opposite ways ({row['difference']:+.2f} on {seeds_text(row)} against "
        f"{cpu_row['difference']:+.2f} on {seeds_text(cpu_row)}): that this profile's smaller training and test sets "
        "turn it is a hypothesis neither run tests"
    )
