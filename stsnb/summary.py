"""summary.md of a profile, from its run folders only: reading what each run recorded, the overview and claims
tables (which ``stsnb book`` shows too), and writing ``<out>/<profile>/summary.md``.

Each run folder holds what the notebook wrote through ``stsnb.runs``: STATUS, env.json, metrics.json, results.csv
and the executed notebook (``<nb>/`` for a good result, ``<nb>.failed/`` for a failed attempt; see
``stsnb.execution``). ``<out>/<profile>/summary.md`` shows: an overview with one row per notebook of the plan
(status, runtime, the commit its run came from, claims by verdict, the notebook's takeaway and whether its levels
are comparable with the paper's; ``overview_rows``, which ``stsnb book`` shows first too), the claims with their
seeds and preconditions, and the average rows of each results.csv. ``stsnb run`` rewrites it after every notebook;
``stsnb summary`` (``write_summary``) rewrites it alone.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import stats
from .claims import failed_preconditions, verdict_counts
from .locks import folder_lock
from .plans import DEFAULT_OUT, PLANS_DIR, Plan, PlanError, load_plan, plan_path
from .runs import git_sha, write_text_atomic


@dataclass
class Outcome:
    """What summary.md says about one notebook of the plan."""

    notebook: str
    status: str  # "ok", "failed" or "not run"
    reason: str = ""  # why it failed
    seconds: float | None = None
    earlier: bool = False  # the status comes from an earlier invocation (not run this time, e.g. --only)
    good: Path | None = None  # folder of the good result shown (the notebook's folder), if any


def read_status(folder: Path) -> str:
    path = folder / "STATUS"
    return path.read_text().strip() if path.is_file() else ""


def recorded_outcome(name: str, profile_dir: Path) -> Outcome:
    """What an earlier invocation left for a notebook that was not run this time."""
    good, failed = profile_dir / name, profile_dir / f"{name}.failed"
    good = good if read_status(good) == "ok" else None
    failed_status = read_status(failed)
    if failed_status:
        reason = failed_status.removeprefix("failed:").strip()
        return Outcome(name, "failed", reason, recorded_seconds(failed / f"{name}.ipynb"), earlier=True, good=good)
    if good is not None:
        return Outcome(name, "ok", seconds=recorded_seconds(good / f"{name}.ipynb"), earlier=True, good=good)
    return Outcome(name, "not run")


def recorded_seconds(executed_notebook: Path) -> float | None:
    """The duration papermill recorded in an executed notebook's metadata."""
    try:
        return float(json.loads(executed_notebook.read_text())["metadata"]["papermill"]["duration"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def read_metrics(folder: Path) -> dict[str, Any]:
    path = folder / "metrics.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def read_env(folder: Path) -> dict[str, Any]:
    path = folder / "env.json"
    try:
        return json.loads(path.read_text()) if path.is_file() else {}
    except ValueError:
        return {}


def section_notes(folder: Path) -> list[str]:
    """``<section>: out of memory`` for each section the notebook recorded as not done (``Run.attempt``); the error
    itself is in metrics.json (``<section>/error``)."""
    metrics = read_metrics(folder)
    return [
        f"{key.removesuffix('/status')}: {str(value).replace('_', ' ')}"
        for key, value in sorted(metrics.items())
        if key.endswith("/status") and value != "done"
    ]


def comparison_rows(folder: Path) -> list[dict[str, str]]:
    """results.csv rows (written by ``Run.finish``): ours | paper | delta per setting and task."""
    path = folder / "results.csv"
    if not path.is_file():
        return []
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def is_average(row: Mapping[str, str]) -> bool:
    """A results.csv row whose task is an average over tasks (``avg``, ``avg of stsb``, ...)."""
    return str(row.get("task", "")).strip().lower().startswith("avg")


def average_rows(folder: Path) -> list[dict[str, str]]:
    """The average rows of results.csv (summary.md shows only these; per-task rows stay in results.csv)."""
    return [row for row in comparison_rows(folder) if is_average(row)]


def claim_rows(folder: Path) -> list[dict[str, Any]]:
    """The claims a notebook checked (metrics.json ``claims``: a list of rows, or a mapping of them), each with
    ``claim``, ``verdict`` and its paired interval (``stsnb.claims.claim``; older runs: ``stats.claim_row``)."""
    claims = read_metrics(folder).get("claims") or []
    rows = list(claims.values()) if isinstance(claims, dict) else list(claims)
    return [r for r in rows if isinstance(r, dict) and "claim" in r and "verdict" in r]


def shown_folder(outcome: Outcome, profile_dir: Path) -> Path | None:
    """The folder whose results represent a notebook: its good result, else what its failed run recorded."""
    if outcome.good is not None:
        return outcome.good
    failed = Path(profile_dir) / f"{outcome.notebook}.failed"
    return failed if failed.is_dir() else None


def run_seconds(folder: Path, notebook: str) -> float | None:
    """How long the run in ``folder`` took: papermill's duration in its executed notebook, else metrics ``seconds``."""
    seconds = recorded_seconds(folder / f"{notebook}.ipynb")
    if seconds is None:
        value = read_metrics(folder).get("seconds")
        seconds = float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    return seconds


def short_sha(sha: str) -> str:
    """``abcdef1`` (or ``abcdef1-dirty``) of a full git sha; other text (e.g. ``unknown``) unchanged."""
    dirty = sha.endswith("-dirty")
    base = sha.removesuffix("-dirty")
    if re.fullmatch(r"[0-9a-f]{40}", base):
        return base[:7] + ("-dirty" if dirty else "")
    return sha


def run_commit(folder: Path) -> str | None:
    """The commit the run in ``folder`` came from (env.json ``git_sha``, short), None if it did not record one."""
    sha = read_env(folder).get("git_sha")
    return short_sha(str(sha)) if sha else None


MISSING = "—"  # a value the run did not record: shown as missing, never invented
OVERVIEW_COLUMNS = (
    "notebook",
    "status",
    "runtime (s)",
    "commit",
    *stats.VERDICTS,
    "takeaway",
    "comparable with the paper",
)


@dataclass(frozen=True)
class OverviewRow:
    """One notebook at a glance (summary.md's first table and the book's first table; ``overview_rows``)."""

    notebook: str
    status: str
    folder: Path | None  # the folder whose values are shown (its good result, else its failed run's), if any
    seconds: float | None
    commit: str | None
    verdicts: dict[str, int] | None  # claims by verdict; None when the run recorded no claims
    takeaway: str | None
    comparable: str | None

    def cells(self) -> list[str]:
        """The texts of ``OVERVIEW_COLUMNS`` after ``notebook`` (renderers add the link and escape)."""
        verdicts = (
            [str(self.verdicts.get(v, 0)) for v in stats.VERDICTS]
            if self.verdicts is not None
            else [MISSING] * len(stats.VERDICTS)
        )
        return [
            self.status,
            f"{self.seconds:.0f}" if self.seconds is not None else MISSING,
            self.commit or MISSING,
            *verdicts,
            self.takeaway or MISSING,
            self.comparable or MISSING,
        ]


def _text(value: Any) -> str | None:
    return (str(value).strip() or None) if value is not None else None


def overview_row(outcome: Outcome, profile_dir: Path) -> OverviewRow:
    """The overview of one notebook, every value read from its run's files (metrics.json, env.json, the executed
    notebook): status, runtime, commit, claims by verdict, the notebook's one-line ``takeaway`` and whether its
    levels are ``comparable`` with the paper's."""
    folder = shown_folder(outcome, profile_dir)
    status = status_text(outcome)
    if folder is None:
        return OverviewRow(outcome.notebook, status, None, outcome.seconds, None, None, None, None)
    metrics = read_metrics(folder)
    notes = section_notes(folder)
    if outcome.good is None and (metrics or comparison_rows(folder)):
        done = metrics.get("sections_done") or []
        notes.insert(0, f"partial results from the failed run (sections done: {', '.join(done) or 'none'})")
    if notes:
        status += "; " + "; ".join(notes)
    seconds = run_seconds(folder, outcome.notebook)
    verdicts = verdict_counts(claim_rows(folder)) if "claims" in metrics else None
    return OverviewRow(
        outcome.notebook,
        status,
        folder,
        seconds if seconds is not None else outcome.seconds,
        run_commit(folder),
        verdicts,
        _text(metrics.get("takeaway")),
        _text(metrics.get("comparable")),
    )


def overview_rows(outcomes: Sequence[Outcome], profile_dir: Path) -> list[OverviewRow]:
    """One ``OverviewRow`` per notebook, in plan order: the one row builder of summary.md and ``stsnb book``."""
    return [overview_row(outcome, Path(profile_dir)) for outcome in outcomes]


def total_seconds(rows: Sequence[OverviewRow]) -> tuple[float, int]:
    """(sum of the runtimes the runs recorded, how many runs recorded one)."""
    known = [row.seconds for row in rows if row.seconds is not None]
    return sum(known), len(known)


CLAIM_COLUMNS = (
    "notebook",
    "claim",
    "ours: difference [95% interval]",
    "seeds",
    "paper's difference",
    "verdict",
    "precondition",
)


def _signed(value: Any) -> str:
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


def claim_cells(row: Mapping[str, Any]) -> list[str]:
    """The texts of ``CLAIM_COLUMNS`` after ``notebook`` for one claim row (old rows with three verdicts and no
    preconditions render too)."""
    numbers = [row.get(k) for k in ("difference", "low", "high")]
    interval = (
        f"{_signed(numbers[0])} [{_signed(numbers[1])}, {_signed(numbers[2])}]"
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in numbers)
        else MISSING
    )
    seeds = row.get("seeds")
    verdict = str(row["verdict"])
    if row.get("kind") == "equivalence" and isinstance(row.get("margin"), int | float):
        verdict += f" (margin ±{row['margin']:g})"
    return [
        str(row["claim"]),
        interval,
        str(seeds) if isinstance(seeds, int) and not isinstance(seeds, bool) else MISSING,
        _signed(row.get("paper_difference")),
        verdict,
        precondition_text(row),
    ]


AVERAGE_COLUMNS = ("notebook", "setting", "task", "ours", "paper", "delta", "comparable with the paper", "note")


def _number(text: str | None) -> str:
    try:
        return f"{float(text):.2f}"  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return text or MISSING


def average_cells(row: Mapping[str, str], comparable: str | None, partial: bool = False) -> list[str]:
    """The texts of ``AVERAGE_COLUMNS`` after ``notebook`` for one results.csv average row."""
    setting = " ".join(filter(None, (row.get("paper"), row.get("table"))))
    setting = f"{setting}: {row.get('setting', '')}" if setting else row.get("setting", "")
    if partial:
        setting = f"(failed run) {setting}"
    return [
        setting,
        row.get("task", ""),
        _number(row.get("ours")),
        _number(row.get("paper_value")),
        _number(row.get("delta")),
        comparable or MISSING,
        row.get("note", ""),
    ]


def status_text(outcome: Outcome) -> str:
    """The status column of a notebook (and the line ``stsnb run`` logs when one fails)."""
    if outcome.status == "ok":
        return "ok (earlier run)" if outcome.earlier else "ok"
    if outcome.status == "failed":
        text = f"failed{' (earlier run)' if outcome.earlier else ''}: {outcome.reason}"
        return text + ("; previous good result kept (shown)" if outcome.good is not None else "")
    return outcome.status


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(columns: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[str] = ()) -> list[str]:
    align = ["---:" if column in right else "---" for column in columns]
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join(align) + "|"]
    return lines + ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]


def _link(name: str, folder: Path | None, file: str) -> str:
    return f"[{name}]({folder.name}/{file})" if folder is not None and (folder / file).is_file() else name


def summary_markdown(plan: Plan, outcomes: Sequence[Outcome], profile_dir: Path) -> str:
    """summary.md: the overview (one row per notebook), the claims with their preconditions, then the averages.

    Every value comes from the runs' files (``overview_rows``); per-task rows stay in each results.csv. A notebook
    whose run failed with no good result before it shows what that run recorded, marked as partial.
    """
    overview = overview_rows(outcomes, profile_dir)
    total, counted = total_seconds(overview)
    lines = [f"# stsnb run --profile {plan.profile}", ""]
    if plan.description:
        lines += [plan.description, ""]
    lines += [
        f"Summary written {dt.datetime.now().astimezone():%Y-%m-%d %H:%M %Z} at git {git_sha()} from plan "
        f"`{plan.path.name}`. Each notebook's run may come from an earlier commit: its own is in the overview. "
        f"Runtimes are those the runs recorded; together {total:.0f} s ({total / 60:.0f} min) over {counted} "
        f"of {len(overview)} notebooks.",
        "",
        "## Overview",
        "",
        "Commit: the git commit the notebook's run came from; claims by verdict (see Claims below); the takeaway "
        "is the notebook's own sentence, written from its results; comparable: whether our levels can be set "
        "beside the paper's (yes / direction only / no).",
        "",
    ]
    rows = [[_link(row.notebook, row.folder, f"{row.notebook}.ipynb"), *row.cells()] for row in overview]
    lines += _table(OVERVIEW_COLUMNS, rows, right=("runtime (s)", *stats.VERDICTS))
    lines += claims_markdown(overview)
    lines += averages_markdown(overview)
    return "\n".join(lines) + "\n"


def claims_markdown(overview: Sequence[OverviewRow]) -> list[str]:
    """The claims of every notebook shown: our difference with its 95% paired interval, the training seeds, the
    paper's difference where there is one, the verdict and its precondition."""
    rows = [[row.notebook, *claim_cells(claim)] for row in overview if row.folder for claim in claim_rows(row.folder)]
    if not rows:
        return []
    return [
        "",
        "## Claims",
        "",
        "Each claim as a paired difference on the same test pairs (ours, 95% bootstrap interval; with several "
        "training seeds the envelope of their intervals). A direction claim is supported when every seed's interval "
        "excludes 0 on the paper's side, contradicted when every one excludes 0 on the other side, otherwise "
        "unresolved; a robustness claim is equivalent when every seed's interval lies inside its margin; a claim "
        "whose precondition does not hold is not tested.",
        "",
        *_table(CLAIM_COLUMNS, rows, right=("seeds", "paper's difference")),
    ]


def averages_markdown(overview: Sequence[OverviewRow]) -> list[str]:
    """The average rows of every notebook's results.csv beside the paper's, with the notebook's comparability."""
    rows, without, links = [], [], []
    for row in overview:
        if row.folder is None or not (row.folder / "results.csv").is_file():
            continue
        links.append(f"[{row.notebook}]({row.folder.name}/results.csv)")
        averages = average_rows(row.folder)
        if not averages:
            without.append(row.notebook)
        partial = row.folder.name.endswith(".failed")
        rows += [[row.notebook, *average_cells(a, row.comparable, partial)] for a in averages]
    if not links:
        return []
    lines = [
        "",
        "## Averages",
        "",
        "Scores are x100; delta = ours - paper (the paper's number as it reports it). Per-task rows are in each "
        f"notebook's results.csv: {', '.join(links)}.",
    ]
    if without:
        lines.append(f"No average row (its rows are in its results.csv): {', '.join(without)}.")
    return lines + ["", *_table(AVERAGE_COLUMNS, rows, right=("ours", "paper", "delta"))]


def write_summary(
    profile: str = "cpu",
    out: Path = DEFAULT_OUT,
    plans_dir: Path = PLANS_DIR,
    outcomes: Mapping[str, Outcome] | None = None,
) -> Path:
    """Rewrite ``<out>/<profile>/summary.md`` from the run folders (``outcomes``: those of this invocation; every
    other notebook of the plan is read from what an earlier or concurrent run left), under the folder's short lock
    (``stsnb.locks``) and through a renamed temporary file. Runs no notebook."""
    plan = load_plan(plan_path(profile, plans_dir))
    profile_dir = Path(out).resolve() / plan.profile
    if not profile_dir.is_dir():
        raise PlanError(f"no runs at {profile_dir}: run `stsnb run --profile {profile}` first")
    outcomes = outcomes or {}
    summary = profile_dir / "summary.md"
    with folder_lock(profile_dir):  # runs of other notebooks of the profile promote and write it too
        every = [outcomes.get(name) or recorded_outcome(name, profile_dir) for name in plan.notebooks]
        write_text_atomic(summary, summary_markdown(plan, every, profile_dir))
    return summary
