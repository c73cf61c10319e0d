"""The guard over the committed cpu runs (papermill_runs/cpu/): no verdict on a claim that could not be tested,
every claim with its preconditions and training seeds, and summary.md saying exactly what the run files say."""

from __future__ import annotations

import json
import re

import markdown_tables as md
import pytest

from stsnb import claims, runner, stats
from stsnb.notebook_noise import output_noise

CPU = runner.DEFAULT_OUT / "cpu"
PLAN = runner.load_plan(runner.plan_path("cpu"))
FOLDERS = {name: CPU / name for name in PLAN.notebooks if runner.read_status(CPU / name) == "ok"}
CLAIMING = [name for name, folder in FOLDERS.items() if "claims" in runner.read_metrics(folder)]
COMPARABLE = {"yes", "direction only", "no"}


def test_every_notebook_of_the_plan_has_a_committed_run():
    missing = [name for name in PLAN.notebooks if name not in FOLDERS]
    assert not missing, f"no good committed cpu run of {missing} under {CPU}"
    assert CLAIMING, "no committed run recorded claims"


def precondition_violations(name: str, rows: list[dict]) -> list[str]:
    """Claim rows with a verdict although a stored precondition failed, or "not tested" without a reason."""
    problems = []
    for row in rows:
        failed = claims.failed_preconditions(row)
        if (failed or row.get("not_tested_because")) and row["verdict"] != stats.NOT_TESTED:
            names = [p.get("name") for p in failed]
            problems.append(f"{name}: {row['claim']!r} is {row['verdict']!r} although {names} failed: not tested")
        if row["verdict"] == stats.NOT_TESTED and not (failed and row.get("not_tested_because")):
            problems.append(f"{name}: {row['claim']!r} is not tested without a failed precondition and its reason")
        if row["verdict"] not in stats.VERDICTS:
            problems.append(f"{name}: {row['claim']!r}: unknown verdict {row['verdict']!r}")
    return problems


@pytest.mark.parametrize("name", list(FOLDERS))
def test_no_verdict_on_a_claim_whose_precondition_failed(name):
    problems = precondition_violations(name, runner.claim_rows(FOLDERS[name]))
    assert not problems, "\n".join(problems)


def test_the_guard_catches_a_verdict_on_a_failed_precondition():
    moved = claims.precondition(
        "the baseline moved the encoder", False, "baseline minus untrained: +0.07 [-0.68, +0.78]"
    )
    row = claims.claim("a beats b", {"seed 0": (-1.1, -1.7, -0.6)}, preconditions=[moved])
    assert precondition_violations("nb", [row]) == []
    assert precondition_violations("nb", [{**row, "verdict": stats.CONTRADICTED}])
    assert precondition_violations("nb", [{**row, "verdict": stats.EQUIVALENT}])
    held = claims.claim("a beats b", {"seed 0": (1.1, 0.6, 1.7)}, preconditions=[claims.precondition("p", True, "e")])
    assert precondition_violations("nb", [held]) == []
    assert precondition_violations("nb", [{**held, "verdict": stats.NOT_TESTED}])  # not tested needs a reason


@pytest.mark.parametrize("name", CLAIMING)
def test_every_claim_states_its_preconditions_and_training_seeds(name):
    metrics = runner.read_metrics(FOLDERS[name])
    assert "takeaway" in metrics, f"{name}: the committed run predates preconditions (no 'takeaway'); rerun it"
    assert isinstance(metrics["takeaway"], str) and metrics["takeaway"].strip(), f"{name}: empty takeaway"
    assert metrics.get("comparable") in COMPARABLE, f"{name}: comparable {metrics.get('comparable')!r}"
    rows = runner.claim_rows(FOLDERS[name])
    assert rows, f"{name}: metrics.json has 'claims' but no claim row"
    for row in rows:
        assert isinstance(row.get("preconditions"), list), f"{name}: {row['claim']!r} has no preconditions list"
        seeds = row.get("seeds")
        assert isinstance(seeds, int) and seeds >= 1, f"{name}: {row['claim']!r} has seeds {seeds!r}"
        assert row.get("kind") in {"direction", "equivalence", "no direction"}, f"{name}: {row['claim']!r}: kind"
        if row["kind"] == "equivalence":
            assert isinstance(row.get("margin"), int | float) and row["margin"] > 0, f"{name}: {row['claim']!r}"


@pytest.fixture(scope="module")
def summary() -> dict[str, str]:
    path = CPU / "summary.md"
    assert path.is_file(), f"{path} is missing: `stsnb summary --profile cpu` writes it from the runs"
    return md.sections(path.read_text())


def _printed(cell: str, value, where: str) -> None:
    if value is None:
        assert cell == runner.MISSING, f"{where}: {cell!r} printed where the run recorded nothing"
    else:
        assert md.same_at_printed_precision(cell, value), f"{where}: summary.md {cell!r}, the run {value!r}"


def test_summary_overview_is_what_the_runs_recorded(summary):
    rows = md.table(summary["Overview"])
    assert [md.link(row["notebook"])[0] for row in rows] == list(PLAN.notebooks), "one row per notebook, plan order"
    total = 0.0
    for row in rows:
        name, target = md.link(row["notebook"])
        folder = FOLDERS[name]
        assert target == f"{name}/{name}.ipynb" and (CPU / target).is_file(), f"{name}: link {target}"
        assert row["status"].startswith("ok"), f"{name}: {row['status']}"
        seconds = runner.run_seconds(folder, name)
        _printed(row["runtime (s)"], seconds, f"{name} runtime")
        total += float(row["runtime (s)"])
        assert row["commit"] == runner.run_commit(folder), f"{name}: commit {row['commit']}"
        assert runner.read_env(folder)["git_sha"].startswith(row["commit"].removesuffix("-dirty"))
        metrics = runner.read_metrics(folder)
        counts = claims.verdict_counts(runner.claim_rows(folder)) if "claims" in metrics else None
        for verdict in stats.VERDICTS:
            expected = runner.MISSING if counts is None else str(counts[verdict])
            assert row[verdict] == expected, f"{name}: {verdict} {row[verdict]} (the run: {expected})"
        assert row["takeaway"] == (metrics.get("takeaway") or runner.MISSING).replace("\n", " ").strip()
        assert row["comparable with the paper"] == (metrics.get("comparable") or runner.MISSING)
    together = re.search(r"together (\d+) s", summary[""])
    assert together, "the header states the runs' total runtime"
    assert abs(int(together.group(1)) - total) <= len(rows) / 2 + 0.5, "total = the sum of the rows' runtimes"


def test_summary_claims_are_those_of_the_runs(summary):
    rows = md.table(summary.get("Claims", ""))
    for name in FOLDERS:
        printed = [row for row in rows if row["notebook"] == name]
        recorded = runner.claim_rows(FOLDERS[name])
        assert [row["claim"] for row in printed] == [str(r["claim"]) for r in recorded], f"{name}: claims differ"
        for row, claim in zip(printed, recorded, strict=True):
            where = f"{name}: {claim['claim']!r}"
            keys, ours = ("difference", "low", "high"), row["ours: difference [95% interval]"]
            if ours == runner.MISSING:
                assert not all(isinstance(claim.get(k), int | float) for k in keys), where
            else:
                for cell, key in zip(md.interval(ours), keys, strict=True):
                    _printed(cell, claim[key], f"{where} {key}")
            _printed(row["seeds"], claim.get("seeds"), f"{where} seeds")
            _printed(row["paper's difference"], claim.get("paper_difference"), f"{where} paper's difference")
            assert row["verdict"].split(" (margin")[0] == claim["verdict"], where
            if claim["verdict"] == stats.NOT_TESTED and claim.get("preconditions"):
                assert row["precondition"].startswith("does not hold: "), where


def test_summary_shows_the_averages_only_each_as_recorded(summary):
    rows = md.table(summary["Averages"])
    assert all(runner.is_average(row) for row in rows), "summary.md shows averages only (per task: results.csv)"
    for name, folder in FOLDERS.items():
        printed = [row for row in rows if row["notebook"] == name]
        recorded = runner.average_rows(folder)
        assert len(printed) == len(recorded), f"{name}: {len(printed)} average rows shown, results.csv has {recorded}"
        comparable = runner.read_metrics(folder).get("comparable") or runner.MISSING
        for row, result in zip(printed, recorded, strict=True):
            where = f"{name}: {result['setting']} {result['task']}"
            assert row["task"] == result["task"] and row["setting"].endswith(result["setting"]), where
            for column, key in (("ours", "ours"), ("paper", "paper_value"), ("delta", "delta")):
                value = float(result[key]) if result.get(key) not in (None, "") else None
                _printed(row[column], value, f"{where} {column}")
            assert row["comparable with the paper"] == comparable, where
        if (folder / "results.csv").is_file():
            assert f"({name}/results.csv)" in summary["Averages"], f"{name}: no link to its per-task rows"


@pytest.mark.parametrize("name", sorted(PLAN.notebooks))
def test_committed_runs_show_no_output_noise(name):
    """Every committed run reads clean: no stray Out[] values, machine paths, library noise on stderr or widgets."""
    notebook = json.loads((CPU / name / f"{name}.ipynb").read_text())
    assert not output_noise(notebook), output_noise(notebook)
