"""The guard over the committed runs (papermill_runs/<profile>/: cpu always, class and smoke when committed): every
notebook of the profile's plan has a good run with the parameters that plan gives it, no verdict on a claim that
could not be tested, every claim with its preconditions and training seeds, summary.md saying exactly what the run
files say, and no output noise."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

import markdown_tables as md
import pytest
import yaml
from pending_reruns import expect_failure_if_pending

from stsnb.evaluation import claims, verdict_rules
from stsnb.runs import context as runs
from stsnb.runs import plans
from stsnb.runs.notebook_noise import output_noise
from stsnb.runs.summary import (
    CHECKS_COLUMN,
    MISSING,
    average_rows,
    checks_text,
    claim_rows,
    is_average,
    read_env,
    read_metrics,
    read_status,
    run_commit,
    run_seconds,
)
from stsnb.runs.summary_claims import claim_text, detectable_text, seeds_and_pairs_shown

REQUIRED = ("cpu",)  # the main job's runs: the guard fails without them
OPTIONAL = ("class", "smoke")  # checked once their folder is there
PROFILES = [*REQUIRED, *(profile for profile in OPTIONAL if (plans.DEFAULT_OUT / profile).is_dir())]
READ = ("cpu", "class")  # the profiles a reader opens: their executed notebooks are committed (smoke's stay local)
COMPARABLE = {"yes", "direction only", "no"}


@dataclass(frozen=True)
class Committed:
    """One profile's committed runs: its folder, its plan and the notebooks with a good run."""

    profile: str
    dir: Path
    plan: plans.Plan
    folders: dict[str, Path]  # notebook -> its run folder, runs with STATUS ok only

    @property
    def claiming(self) -> list[str]:
        return [name for name, folder in self.folders.items() if "claims" in read_metrics(folder)]


@functools.cache
def committed(profile: str) -> Committed:
    plan = plans.load_plan(plans.plan_path(profile))
    base = plans.DEFAULT_OUT / profile
    folders = {name: base / name for name in plan.notebooks if read_status(base / name) == "ok"}
    return Committed(profile, base, plan, folders)


def _cases(names) -> list:
    """(profile, notebook) pairs, shown as ``profile-notebook`` in the test ids."""
    return [
        pytest.param(profile, name, id=f"{profile}-{name}")
        for profile in PROFILES
        for name in names(committed(profile))
    ]


GOOD_RUNS = _cases(lambda profile_runs: list(profile_runs.folders))
CLAIMING = _cases(lambda profile_runs: profile_runs.claiming)
PLANNED = _cases(lambda profile_runs: sorted(profile_runs.plan.notebooks) if profile_runs.profile in READ else [])


@pytest.mark.parametrize("profile", PROFILES)
def test_every_notebook_of_the_plan_has_a_committed_run(profile):
    profile_runs = committed(profile)
    missing = [name for name in profile_runs.plan.notebooks if name not in profile_runs.folders]
    assert not missing, f"{profile}: no good committed run of {missing} under {profile_runs.dir}"
    assert profile_runs.claiming, f"{profile}: no committed run recorded claims"


# ---- params.yaml: the parameters the plan gives the notebook ------------------------------------------------------


def parameters_cell(name: str) -> dict:
    """The values of a notebook's parameters cell (plain literals), as the kernel holds them before any plan."""
    cells = json.loads((plans.NOTEBOOKS_DIR / f"{name}.ipynb").read_text())["cells"]
    source = "".join(next(c["source"] for c in cells if "parameters" in c["metadata"].get("tags", [])))
    namespace: dict = {}
    exec(source, {}, namespace)  # noqa: S102 - the committed parameters cell: literal assignments only
    return namespace


def expected_params(cell: dict, plan_values: dict) -> dict:
    """What ``runs.start`` records for a run of a plan: the cell's values with the plan's over them (papermill
    injects them, ``profiles.use`` applies the same values again before the run starts; a cpu entry names none), as
    params.yaml stores them (tuples as lists)."""
    return yaml.safe_load(yaml.safe_dump(runs.collect_params({**cell, **plan_values}), sort_keys=True))


def params_differences(where: str, recorded: dict, expected: dict) -> list[str]:
    """Each parameter whose recorded value is not the expected one, or that only one side has."""

    def shown(values: dict, key: str) -> str:
        return repr(values[key]) if key in values else "nothing"

    return [
        f"{where}: {key} recorded {shown(recorded, key)}, its plan gives {shown(expected, key)}"
        for key in sorted(set(recorded) | set(expected))
        if key not in recorded or key not in expected or recorded[key] != expected[key]
    ]


@pytest.mark.parametrize(("profile", "name"), GOOD_RUNS)
def test_a_committed_runs_params_are_those_its_plan_gives_the_notebook(profile, name, request):
    """The parameters cell's own values with the plan's values over them."""
    expect_failure_if_pending(request, profile, name)
    profile_runs = committed(profile)
    recorded = yaml.safe_load((profile_runs.folders[name] / "params.yaml").read_text())
    expected = expected_params(parameters_cell(name), profile_runs.plan.notebooks[name])
    problems = params_differences(f"{profile}/{name}", recorded, expected)
    assert not problems, "\n".join(problems)


def test_the_guard_catches_params_a_plan_does_not_give():
    cell = {"profile": "cpu", "seeds": (0, 1, 2), "pairs": 560, "lr": 1e-4}
    plan_values = {"profile": "class", "seeds": [0], "pairs": 40}
    expected = expected_params(cell, plan_values)
    assert expected == {"profile": "class", "seeds": [0], "pairs": 40, "lr": 1e-4}
    assert expected_params(cell, {}) == {"profile": "cpu", "seeds": [0, 1, 2], "pairs": 560, "lr": 1e-4}
    assert params_differences("nb", dict(expected), expected) == []
    assert params_differences("nb", {**expected, "pairs": 560}, expected)  # the cell's value, not the plan's
    assert params_differences("nb", expected_params(cell, {}), expected)  # a cpu run committed as class
    extra = params_differences("nb", {**expected, "leaked": 1}, expected)
    assert extra == ["nb: leaked recorded 1, its plan gives nothing"]
    assert params_differences("nb", {k: v for k, v in expected.items() if k != "lr"}, expected)


# ---- claims -------------------------------------------------------------------------------------------------------


def precondition_violations(name: str, rows: list[dict]) -> list[str]:
    """Claim rows with a verdict although a stored precondition failed, or "not tested" without a reason."""
    problems = []
    for row in rows:
        failed = claims.failed_preconditions(row)
        if (failed or row.get("not_tested_because")) and row["verdict"] != verdict_rules.NOT_TESTED:
            names = [p.get("name") for p in failed]
            problems.append(f"{name}: {row['claim']!r} is {row['verdict']!r} although {names} failed: not tested")
        if row["verdict"] == verdict_rules.NOT_TESTED and not (failed and row.get("not_tested_because")):
            problems.append(f"{name}: {row['claim']!r} is not tested without a failed precondition and its reason")
        if row["verdict"] not in verdict_rules.VERDICTS:
            problems.append(f"{name}: {row['claim']!r}: unknown verdict {row['verdict']!r}")
    return problems


@pytest.mark.parametrize(("profile", "name"), GOOD_RUNS)
def test_no_verdict_on_a_claim_whose_precondition_failed(profile, name):
    rows = claim_rows(committed(profile).folders[name])
    problems = precondition_violations(f"{profile}/{name}", rows)
    assert not problems, "\n".join(problems)


def test_the_guard_catches_a_verdict_on_a_failed_precondition():
    moved = claims.precondition(
        "the baseline moved the encoder", False, "baseline minus untrained: +0.07 [-0.68, +0.78]"
    )
    row = claims.claim(
        "a beats b", {"seed 0": (-1.1, -1.7, -0.6)}, preconditions=[moved], paper_quote='Table 1: "a beats b"'
    )
    assert precondition_violations("nb", [row]) == []
    assert precondition_violations("nb", [{**row, "verdict": verdict_rules.CONTRADICTED}])
    assert precondition_violations("nb", [{**row, "verdict": verdict_rules.EQUIVALENT}])
    held = claims.claim(
        "a beats b",
        {"seed 0": (1.1, 0.6, 1.7)},
        preconditions=[claims.precondition("p", True, "e")],
        paper_quote='Table 1: "a beats b"',
    )
    assert precondition_violations("nb", [held]) == []
    assert precondition_violations("nb", [{**held, "verdict": verdict_rules.NOT_TESTED}])  # not tested needs a reason


@pytest.mark.parametrize(("profile", "name"), CLAIMING)
def test_every_claim_states_its_preconditions_and_training_seeds(profile, name):
    folder, where = committed(profile).folders[name], f"{profile}/{name}"
    metrics = read_metrics(folder)
    assert "takeaway" in metrics, f"{where}: the committed run predates preconditions (no 'takeaway'); rerun it"
    assert isinstance(metrics["takeaway"], str) and metrics["takeaway"].strip(), f"{where}: empty takeaway"
    assert metrics.get("comparable") in COMPARABLE, f"{where}: comparable {metrics.get('comparable')!r}"
    rows = claim_rows(folder)
    assert rows, f"{where}: metrics.json has 'claims' but no claim row"
    for row in rows:
        assert isinstance(row.get("preconditions"), list), f"{where}: {row['claim']!r} has no preconditions list"
        seeds = row.get("seeds")
        assert isinstance(seeds, int) and seeds >= 1, f"{where}: {row['claim']!r} has seeds {seeds!r}"
        # the test kind (older runs stored it as "kind"); a newer row has kind "paper" / "check" and its quote
        assert claims.tested_as(row) in claims.TESTS, f"{where}: {row['claim']!r}: test"
        if row.get("kind") in claims.KINDS:
            assert isinstance(row.get("paper_quote"), str) and row["paper_quote"], f"{where}: {row['claim']!r}: quote"
        if claims.is_equivalence(row):
            assert isinstance(row.get("margin"), int | float) and row["margin"] > 0, f"{where}: {row['claim']!r}"


@pytest.mark.parametrize(("profile", "name"), CLAIMING)
def test_no_claim_is_gated_on_an_arm_it_does_not_compare(profile, name):
    """A claim is gated on its own arms (stsnb.evaluation.claims): no precondition names an arm the claim's statement
    leaves out (tests/test_claims.py shows the guard catching the old Table 1 rows gated on cross entropy)."""
    rows = claim_rows(committed(profile).folders[name])
    stray = {row["claim"]: claims.arms_not_compared(row) for row in rows if claims.arms_not_compared(row)}
    assert not stray, f"{profile}/{name}: claims gated on arms they do not compare: {stray}"


# ---- summary.md: what the run files say ---------------------------------------------------------------------------


@functools.cache
def summary(profile: str) -> dict[str, str]:
    path = committed(profile).dir / "summary.md"
    assert path.is_file(), f"{path} is missing: `stsnb summary --profile {profile}` writes it from the runs"
    return md.sections(path.read_text())


def _printed(cell: str, value, where: str) -> None:
    if value is None:
        assert cell == MISSING, f"{where}: {cell!r} printed where the run recorded nothing"
    else:
        assert md.same_at_printed_precision(cell, value), f"{where}: summary.md {cell!r}, the run {value!r}"


@pytest.mark.parametrize("profile", PROFILES)
def test_summary_overview_is_what_the_runs_recorded(profile):
    profile_runs = committed(profile)
    rows = md.table(summary(profile)["Overview"])
    order = [md.link(row["notebook"])[0] for row in rows]
    assert order == list(profile_runs.plan.notebooks), f"{profile}: one row per notebook, plan order"
    total = 0.0
    for row in rows:
        name, target = md.link(row["notebook"])
        folder, where = profile_runs.folders[name], f"{profile}/{name}"
        if profile in READ:  # the executed notebooks a reader opens are committed and linked
            assert target == f"{name}/{name}.ipynb" and (profile_runs.dir / target).is_file(), f"{where}: link {target}"
        else:  # smoke: its notebooks stay local (.gitignore), so summary.md links none, whatever the writer's disk held
            assert target is None, f"{where}: links {target}, which a clone lacks"
        assert row["status"].startswith("ok"), f"{where}: {row['status']}"
        seconds = run_seconds(folder, name)
        _printed(row["runtime (s)"], seconds, f"{where} runtime")
        total += float(row["runtime (s)"])
        assert row["commit"] == run_commit(folder), f"{where}: commit {row['commit']}"
        assert read_env(folder)["git_sha"].startswith(row["commit"].removesuffix("-dirty")), where
        metrics = read_metrics(folder)
        counts = claims.verdict_counts(claim_rows(folder), claims.PAPER) if "claims" in metrics else None
        rows = claim_rows(folder)
        one_seed = claims.verdict_counts([r for r in rows if claims.provisional(r)], claims.PAPER) if counts else {}
        for verdict in verdict_rules.VERDICTS:
            expected = MISSING if counts is None else str(counts[verdict])
            if one_seed.get(verdict):
                expected += f" ({one_seed[verdict]} on one seed)"
            assert row[verdict] == expected, f"{where}: {verdict} {row[verdict]} (the run: {expected})"
        checks = claims.verdict_counts(claim_rows(folder), claims.CHECK) if "claims" in metrics else None
        assert row[CHECKS_COLUMN] == checks_text(checks), f"{where}: checks of our setting"
        takeaway = (metrics.get("takeaway") or MISSING).replace("\n", " ").strip()
        assert row["takeaway"] == takeaway, f"{where}: takeaway"
        assert row["comparable with the paper"] == (metrics.get("comparable") or MISSING), where
    together = re.search(r"together (\d+) s", summary(profile)[""])
    assert together, f"{profile}: the header states the runs' total runtime"
    difference = abs(int(together.group(1)) - total)
    assert difference <= len(rows) / 2 + 0.5, f"{profile}: total = the sum of the rows' runtimes"


@pytest.mark.parametrize("profile", PROFILES)
def test_summary_claims_are_those_of_the_runs(profile):
    profile_runs = committed(profile)
    section = summary(profile).get("Claims", "")
    rows = md.tables(section)
    intervals = [0, 0, 0]  # claim intervals, precondition intervals, timing ranges (claims.interval_counts)
    for name, folder in profile_runs.folders.items():
        printed = [row for row in rows if row["notebook"] == name]
        paper, checks = claims.split_by_kind(claim_rows(folder))
        recorded = [*paper, *checks]  # the claims of the papers' table first, then the checks'
        counted = claims.interval_counts(recorded)
        intervals = [a + b for a, b in zip(intervals, counted, strict=True)]
        claimed = [claim_text(r) for r in recorded]  # the headline after "headline: "
        assert [row["claim"] for row in printed] == claimed, f"{profile}/{name}: claims differ"
        for row, claim in zip(printed, recorded, strict=True):
            where = f"{profile}/{name}: {claim['claim']!r}"
            keys, ours = ("difference", "low", "high"), row["ours: difference [95% interval]"]
            if ours == MISSING:
                assert not all(isinstance(claim.get(k), int | float) for k in keys), where
            else:
                for cell, key in zip(md.interval(ours), keys, strict=True):
                    _printed(cell, claim[key], f"{where} {key}")
            _printed(row["seeds"], claim.get("seeds"), f"{where} seeds")
            both = seeds_and_pairs_shown(claim)  # the run's interval under its t floor
            if both is not None:
                for cell, key in zip(md.interval(row["seeds and pairs [95% interval]"]), keys, strict=True):
                    _printed(cell, both[key], f"{where} seeds and pairs {key}")
                recorded_both = claim["seeds_and_pairs"]  # floored in the run, or widened by the summary
                floored = recorded_both.get("floored") or (both["low"], both["high"]) != (
                    recorded_both["low"],
                    recorded_both["high"],
                )
                noted = row["seeds and pairs [95% interval]"].endswith(" (t floor)")
                assert noted == bool(floored), f"{where}: the t floor's note"
            else:
                assert row["seeds and pairs [95% interval]"] == MISSING, where
            assert row["detectable (80% power)"] == detectable_text(claim), where
            _printed(row["paper's difference"], claim.get("paper_difference"), f"{where} paper's difference")
            assert row["verdict"].split(" (")[0].split(";")[0] == claims.verdict_words(claim), where  # then its margin
            if claim["verdict"] == verdict_rules.NOT_TESTED and claim.get("preconditions"):
                assert row["precondition"].startswith("does not hold: "), where
    if rows:
        chance = verdict_rules.multiplicity(
            intervals[0], preconditions=intervals[1], timing_ranges_excluded=intervals[2]
        )
        assert f"**Multiplicity.** {chance.describe()}" in section, f"{profile}: multiplicity"


@pytest.mark.parametrize("profile", PROFILES)
def test_summary_shows_the_averages_only_each_as_recorded(profile):
    averages = summary(profile)["Averages"]
    rows = md.table(averages)
    assert all(is_average(row) for row in rows), f"{profile}: summary.md shows averages only (per task: csv)"
    for name, folder in committed(profile).folders.items():
        printed = [row for row in rows if row["notebook"] == name]
        recorded = average_rows(folder)
        shown = f"{profile}/{name}: {len(printed)} average rows shown, results.csv has {len(recorded)}"
        assert len(printed) == len(recorded), shown
        comparable = read_metrics(folder).get("comparable") or MISSING
        for row, result in zip(printed, recorded, strict=True):
            where = f"{profile}/{name}: {result['setting']} {result['task']}"
            assert row["task"] == result["task"] and row["setting"].endswith(result["setting"]), where
            for column, key in (("ours", "ours"), ("paper", "paper_value"), ("delta", "delta")):
                value = float(result[key]) if result.get(key) not in (None, "") else None
                _printed(row[column], value, f"{where} {column}")
            assert row["comparable with the paper"] == comparable, where
        if (folder / "results.csv").is_file():
            assert f"({name}/results.csv)" in averages, f"{profile}/{name}: no link to its per-task rows"


# ---- the executed notebooks ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("profile", "name"), PLANNED)
def test_committed_runs_show_no_output_noise(profile, name):
    """Every committed run reads clean: no stray Out[] values, machine paths, library noise on stderr or widgets."""
    notebook = json.loads((committed(profile).dir / name / f"{name}.ipynb").read_text())
    noise = output_noise(notebook)
    assert not noise, f"{profile}/{name}: {noise}"
