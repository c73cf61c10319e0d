"""summary.md of a profile, from its run folders only: reading what each run recorded, the overview and claims
tables (which ``stsnb book`` shows too), and writing ``<out>/<profile>/summary.md``.

Each run folder holds what the notebook wrote through ``stsnb.runs``: STATUS, env.json, metrics.json, results.csv
and the executed notebook (``<nb>/`` for a good result, ``<nb>.failed/`` for a failed attempt; see
``stsnb.runs.execution``). ``<out>/<profile>/summary.md`` shows: an overview with one row per notebook of the plan
(status, runtime, the commit its run came from, the paper's claims by verdict and the checks of our setting apart,
the notebook's takeaway and whether its levels are comparable with the paper's; ``overview_rows``, which ``stsnb
book`` shows first too), how many intervals the runs computed and how many of them would exclude 0 by chance alone,
the claims of the papers and the checks of our setting in two tables (seeds, the seeds-and-pairs interval where a
claim has one, the smallest effect an unresolved claim's interval could detect beside the paper's difference,
preconditions), and the average rows of each results.csv. ``stsnb run`` rewrites it after every notebook;
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

from ..evaluation import verdict_rules
from ..evaluation.claims import (
    CHECK,
    PAPER,
    interval_counts,
    kind_of,
    provisional,
    timing_rows,
    verdict_counts,
    verdict_text,
)
from ..evaluation.main_claims import MainClaim, main_claim_result, main_claim_text, main_claims_of
from .context import git_sha, write_text_atomic
from .locks import folder_lock
from .plans import DEFAULT_OUT, PLANS_DIR, Plan, PlanError, load_plan, plan_path
from .summary_claims import (
    CLAIM_COLUMNS,
    MAIN_CLAIM_MARK,
    MISSING,
    claim_cells,
)
from .summary_claims import interval_count as interval_count  # notebooks 10 and 30 count their intervals with it

CPU = "cpu"  # the profile whose multi-seed runs every other profile's main claims are shown beside

# profiles whose executed notebooks stay local (.gitignore): summary.md links none of them, so that the committed
# summary never points at a file a clone lacks, whatever the machine that wrote it had
NOTEBOOKS_STAY_LOCAL = frozenset({"smoke"})


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
    ``claim``, ``verdict`` and its paired interval (``stsnb.evaluation.claims.claim``; older runs:
    ``verdict_rules.claim_row``)."""
    claims = read_metrics(folder).get("claims") or []
    rows = list(claims.values()) if isinstance(claims, dict) else list(claims)
    return [r for r in rows if isinstance(r, dict) and "claim" in r and "verdict" in r]


def shown_folder(outcome: Outcome, profile_dir: Path) -> Path | None:
    """The folder whose results represent a notebook: its good result, else what its failed run recorded."""
    if outcome.good is not None:
        return outcome.good
    failed = Path(profile_dir) / f"{outcome.notebook}.failed"
    return failed if failed.is_dir() else None


RUNTIME_FILE = "runtime.json"  # papermill's duration, kept beside a run whose executed notebook is not committed


def write_runtime(folder: Path, notebook: str) -> None:
    """``runtime.json`` in ``folder``: papermill's duration from the executed notebook, so the run's time stays
    readable where the notebook is not committed (exercise and smoke runs keep only what the sheets read)."""
    seconds = recorded_seconds(folder / f"{notebook}.ipynb")
    if seconds is not None:
        (folder / RUNTIME_FILE).write_text(json.dumps({"seconds": seconds, "source": "papermill duration"}) + "\n")


def run_seconds(folder: Path, notebook: str) -> float | None:
    """How long the run in ``folder`` took: papermill's duration in its executed notebook, else as ``runtime.json``
    kept it, else metrics ``seconds``."""
    seconds = recorded_seconds(folder / f"{notebook}.ipynb")
    if seconds is None and (folder / RUNTIME_FILE).is_file():
        seconds = float(json.loads((folder / RUNTIME_FILE).read_text())["seconds"])
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


CHECKS_COLUMN = "checks of our setting"
TIMINGS_COLUMN = "timings (not tests)"
MAIN_CLAIM_COLUMN = "the paper's main claim: verdict"
OVERVIEW_COLUMNS = (
    "notebook",
    MAIN_CLAIM_COLUMN,
    "status",
    "runtime (s)",
    "commit",
    *verdict_rules.VERDICTS,
    CHECKS_COLUMN,
    TIMINGS_COLUMN,
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
    verdicts: dict[str, int] | None  # the paper's claims by verdict; None when the run recorded no claims
    takeaway: str | None
    comparable: str | None
    checks: dict[str, int] | None = None  # the checks of our setting by verdict; None when no claims recorded
    main_claim: str | None = (
        None  # the paper's main claim and its verdict (``main_claims.main_claim_text``); None: none
    )
    one_seed: dict[str, int] | None = None  # of ``verdicts``, the decisive ones that stand on one seed (provisional)
    timings: str | None = None  # the timing rows (measured seconds, no test), counted apart: "1 supported (1 seed)"

    def cells(self) -> list[str]:
        """The texts of ``OVERVIEW_COLUMNS`` after ``notebook`` (renderers add the link and escape); a decisive
        count says how many of its verdicts stand on one seed: "2 (1 on one seed)"."""
        one_seed = self.one_seed or {}

        def count(verdict: str) -> str:
            n, provisional_n = self.verdicts.get(verdict, 0), one_seed.get(verdict, 0)  # type: ignore[union-attr]
            return f"{n} ({provisional_n} on one seed)" if provisional_n else str(n)

        verdicts = (
            [count(v) for v in verdict_rules.VERDICTS]
            if self.verdicts is not None
            else [MISSING] * len(verdict_rules.VERDICTS)
        )
        return [
            self.main_claim or MISSING,
            self.status,
            f"{self.seconds:.0f}" if self.seconds is not None else MISSING,
            self.commit or MISSING,
            *verdicts,
            checks_text(self.checks),
            self.timings or ("none" if self.verdicts is not None else MISSING),
            self.takeaway or MISSING,
            self.comparable or MISSING,
        ]


def checks_text(counts: Mapping[str, int] | None) -> str:
    """ "2 supported, 1 not tested" (the checks of our setting by verdict), "none", or missing without claims."""
    if counts is None:
        return MISSING
    return ", ".join(f"{n} {v}" for v, n in counts.items() if n) or "none"


def _text(value: Any) -> str | None:
    return (str(value).strip() or None) if value is not None else None


def overview_row(outcome: Outcome, profile_dir: Path) -> OverviewRow:
    """The overview of one notebook, every value read from its run's files (metrics.json, env.json, the executed
    notebook): status, runtime, commit, claims by verdict, the notebook's one-line ``takeaway`` and whether its
    levels are ``comparable`` with the paper's."""
    folder = shown_folder(outcome, profile_dir)
    status = status_text(outcome)
    mains = main_claims_of(outcome.notebook)
    if folder is None:
        main = "; ".join(f"{m.statement}: not run" for m in mains) or None
        return OverviewRow(outcome.notebook, status, None, outcome.seconds, None, None, None, None, main_claim=main)
    metrics = read_metrics(folder)
    notes = section_notes(folder)
    if outcome.good is None and (metrics or comparison_rows(folder)):
        done = metrics.get("sections_done") or []
        notes.insert(0, f"partial results from the failed run (sections done: {', '.join(done) or 'none'})")
    if notes:
        status += "; " + "; ".join(notes)
    seconds = run_seconds(folder, outcome.notebook)
    recorded = "claims" in metrics
    rows = claim_rows(folder)
    return OverviewRow(
        outcome.notebook,
        status,
        folder,
        seconds if seconds is not None else outcome.seconds,
        run_commit(folder),
        verdict_counts(rows, PAPER) if recorded else None,
        _text(metrics.get("takeaway")),
        _text(metrics.get("comparable")),
        verdict_counts(rows, CHECK) if recorded else None,
        "; ".join(main_claim_cell(m, rows if recorded else None, profile_dir) for m in mains) or None,
        verdict_counts([r for r in rows if provisional(r)], PAPER) if recorded else None,
        "; ".join(verdict_text(r, mark_provisional=True) for r in timing_rows(rows)) or None,
    )


def main_claim_cell(main: MainClaim, rows: Sequence[Mapping] | None, profile_dir: Path) -> str:
    """The overview's main-claim cell: the claim with this run's verdict and, in a profile other than cpu, the
    committed cpu run's verdict on it beside (its multi-seed result, "(cpu: supported (3 seeds), +4.98 [...])")."""
    text = main_claim_text(main, rows)
    if profile_dir.name == CPU:
        return text
    cpu_folder = profile_dir.parent / CPU / main.notebook
    cpu_rows = claim_rows(cpu_folder) if (cpu_folder / "metrics.json").is_file() else None
    return f"{text} (cpu: {main_claim_result(main, cpu_rows) if cpu_rows is not None else 'no committed run'})"


def overview_rows(outcomes: Sequence[Outcome], profile_dir: Path) -> list[OverviewRow]:
    """One ``OverviewRow`` per notebook, in plan order: the one row builder of summary.md and ``stsnb book``."""
    return [overview_row(outcome, Path(profile_dir)) for outcome in outcomes]


def total_seconds(rows: Sequence[OverviewRow]) -> tuple[float, int]:
    """(sum of the runtimes the runs recorded, how many runs recorded one)."""
    known = [row.seconds for row in rows if row.seconds is not None]
    return sum(known), len(known)


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
        "The paper's main claim: the claim its abstract makes, fixed in the package on 2026-11-28 after the first cpu "
        "runs of the same comparisons (2026-11-23), every run since at the fixed claim (a row for each paper, whatever "
        "its verdict; HiCL's abstract makes two), with our difference [95% interval: the seeds-and-pairs interval a "
        "claim on several seeds is decided on]; in a profile other than cpu, the committed cpu run's multi-seed "
        "verdict on it in brackets. "
        "Commit: the git commit the notebook's run came from; the paper's claims by verdict, then the checks of our "
        "own setting, which are never counted as reproduced claims (see Claims below); the takeaway is the "
        "notebook's own sentence, written from its results; comparable: whether our levels can be set beside the "
        "paper's (yes / direction only / no).",
        "",
    ]
    linked = plan.profile not in NOTEBOOKS_STAY_LOCAL
    rows = [
        [_link(row.notebook, row.folder if linked else None, f"{row.notebook}.ipynb"), *row.cells()] for row in overview
    ]
    lines += _table(OVERVIEW_COLUMNS, rows, right=("runtime (s)", *verdict_rules.VERDICTS))
    lines += claims_markdown(overview)
    lines += averages_markdown(overview)
    return "\n".join(lines) + "\n"


def multiplicity_line(overview: Sequence[OverviewRow]) -> str | None:
    """ "N claim intervals and M precondition intervals computed (per notebook: ...); about 0.05 x (N + M) would
    exclude 0 by chance ...": every claim's per-seed and seeds-and-pairs intervals and the intervals its
    preconditions print (``claims.interval_counts``), timing ranges left out and said so; None without claims."""
    counts = {row.notebook: interval_counts(claim_rows(row.folder)) for row in overview if row.folder}
    counts = {name: n for name, n in counts.items() if n.claims or n.preconditions}
    if not counts:
        return None
    chance = verdict_rules.multiplicity(
        sum(n.claims for n in counts.values()),
        preconditions=sum(n.preconditions for n in counts.values()),
        timing_ranges_excluded=sum(n.timing_ranges for n in counts.values()),
    )
    per = ", ".join(f"{name} {n.claims} + {n.preconditions}" for name, n in counts.items())
    return (
        f"**Multiplicity.** {chance.describe()} (per notebook, claims + preconditions: {per}). A single interval "
        "excluding 0 is weak evidence among so many; a verdict needs every seed's interval on one side. The intervals "
        "cover the noise of the test pairs (and, in the seeds-and-pairs column, of the training seeds); none covers "
        "the choice of hyperparameters or of the checkpoint dev selection kept."
    )


def claims_markdown(overview: Sequence[OverviewRow]) -> list[str]:
    """The claims of every notebook shown, the claims of the papers apart from the checks of our setting (``kind``;
    rows of older runs without it count as the paper's): our difference with its 95% paired interval, the training
    seeds, the seeds-and-pairs interval, the paper's difference, the smallest effect an unresolved claim could have
    detected, the verdict and its precondition; and how many intervals that makes."""
    shown = [(row.notebook, claim) for row in overview if row.folder for claim in claim_rows(row.folder)]
    if not shown:
        return []
    lines = [
        "",
        "## Claims",
        "",
        "Each claim as a paired difference on the same test pairs (ours, 95% bootstrap interval; with several "
        "training seeds the envelope of their intervals). A claim on several kept training seeds is decided on its "
        "seeds-and-pairs interval: a hierarchical bootstrap interval of the mean over seeds (seeds resampled, then "
        "the test pairs), never narrower than the t interval of the seeds' differences (n - 1 degrees of freedom; "
        '"t floor" where that widened it), with each seed\'s own verdict beside it; a claim on one seed on its one '
        "interval. A direction claim is supported when that interval excludes 0 on the paper's side and is not "
        "wholly inside the claim's smallest effect of interest; a small effect (on the paper's side or against it) "
        "when it excludes 0 but lies inside that effect; contradicted when it excludes 0 on the other side and the "
        "estimate lies beyond the smallest effect; no meaningful effect when it contains 0 and lies inside the "
        "smallest effect; otherwise unresolved. A robustness claim is equivalent when the interval lies inside its "
        "margin. A claim whose precondition does not hold is not tested. Whether an arm trained is decided per seed "
        "on dev data, never on the test pairs: its kept checkpoint must beat its start on dev pairs that checkpoint "
        "selection never scored, a paired 95% interval above 0 (where selection scored every dev pair, by more than "
        "the best of its k selection evaluations would by chance), and a claim's baseline must have moved dev by at "
        "least the "
        'claim\'s smallest effect; a seed on which an arm did not train is left out ("2 of 3" seeds), and fewer than '
        "two seeds left make the claim not tested. A decisive verdict on one seed is marked provisional and counted "
        "apart in the overview. Detectable: for an unresolved claim of the paper, the smallest true difference the "
        "rule above would support with 80% power, simulated with the claim's observed seed-to-seed spread and "
        "test-pair noise, beside the paper's difference. A timing row's interval is the range of its timed steps, "
        "not a test: timing rows are counted apart from the claims' verdicts. Each notebook prints the paper's "
        "sentence a claim tests (`paper_quote` in "
        f"metrics.json). `{MAIN_CLAIM_MARK.strip()}` marks the row that tests the paper's main claim, fixed in the "
        "package from its abstract (`main_claim` in metrics.json).",
    ]
    multiplicity = multiplicity_line(overview)
    if multiplicity:
        lines += ["", multiplicity]
    right = ("seeds", "paper's difference", "detectable (80% power)")
    for kind, title in ((PAPER, "Claims of the papers"), (CHECK, "Checks of our setting")):
        rows = [[name, *claim_cells(claim)] for name, claim in shown if kind_of(claim) == kind]
        if rows:
            lines += ["", f"### {title}", ""]
            if kind == CHECK:
                lines += [
                    "Checks of our own setting (for example that a stage trained at all): not sentences of a paper, "
                    "never counted as reproduced claims.",
                    "",
                ]
            lines += _table(CLAIM_COLUMNS, rows, right=right)
    return lines


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
    (``stsnb.runs.locks``) and through a renamed temporary file. Runs no notebook."""
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
