"""``stsnb.runs.committed``: a claim's result in the committed cpu runs (read-only), as a class notebook prints it
beside its own; and summary.md's mark on the row of the paper's main claim."""

from __future__ import annotations

import json
import re
from pathlib import Path

import markdown_tables as md
import yaml
from synthetic_seeds import stored_claim

from stsnb.evaluation import claims, verdict_rules
from stsnb.evaluation.main_claims import MainClaim
from stsnb.runs import committed, summary
from stsnb.runs.plans import DEFAULT_OUT, load_plan

Q = claims.quote("Section 4.2", "Stage 2 improves on stage 1.")
RESULT = re.compile(
    r"^cpu: [+-]\d+\.\d\d \[[+-]\d+\.\d\d, [+-]\d+\.\d\d\]( \(seeds and pairs\))?(, margin ±\S+)?, "
    rf"({'|'.join(verdict_rules.VERDICTS)})( on the paper's side| against the paper)?(, below ±\S+)? "
    r"\((\d+ of )?\d+ seeds?\)$"
)


def committed_claims() -> list[tuple[str, dict]]:
    """(notebook, row) of every claim row in the committed cpu runs."""
    folders = sorted(p for p in (DEFAULT_OUT / "cpu").iterdir() if (p / "metrics.json").is_file())
    return [(folder.name, row) for folder in folders for row in summary.claim_rows(folder)]


def test_every_claim_of_the_committed_cpu_runs_reads_as_its_row_says():
    rows = committed_claims()
    assert len({name for name, _ in rows}) >= 4, "the training notebooks' committed cpu runs hold claims"
    assert any(row.get("seeds") == 3 for _, row in rows), "some claim stands on 3 training seeds"
    for name, row in rows:
        text = committed.cpu_result(name, row["claim"])
        assert RESULT.match(text), text
        difference, low, high = claims.deciding_interval(row)
        assert text.startswith(f"cpu: {difference:+.2f} [{low:+.2f}, {high:+.2f}]"), text
        assert text.endswith(f", {claims.verdict_words(row)} ({claims.seeds_text(row)})"), text
        assert ("margin ±" in text) == claims.is_equivalence(row)


def test_a_claim_the_committed_runs_lack_says_so():
    name, row = committed_claims()[0]
    assert committed.cpu_result(name, row["claim"] + " (reworded)") == "cpu: no committed run of this claim"
    assert committed.cpu_result("99_no_such_notebook", row["claim"]) == "cpu: no committed run of this claim"


def write_cpu_run(root: Path, notebook: str, rows: list[dict]) -> None:
    folder = root / "cpu" / notebook
    folder.mkdir(parents=True)
    (folder / "STATUS").write_text("ok\n")
    (folder / "metrics.json").write_text(json.dumps({"claims": rows}))


def synthetic_rows() -> list[dict]:
    seeds = {"seed 0": (6.79, 4.10, 9.49), "seed 1": (5.21, 2.95, 7.40), "seed 2": (4.0, 1.88, 6.0)}
    return [
        stored_claim("stage 2 beats  stage 1", seeds, (5.33, 1.5, 9.1), paper_quote=Q, main_claim=True),
        claims.claim(
            "the template hardly matters",
            {"seed 0": (0.2, -0.3, 0.6)},
            paper_quote=Q,
            margin=1.0,
            margin_reason="the paper's spread",
        ),
    ]


def test_cpu_result_on_synthetic_rows_matches_the_text_up_to_white_space(tmp_path):
    write_cpu_run(tmp_path, "10_x", synthetic_rows())
    result = committed.cpu_result("10_x", "stage 2 beats stage 1", runs_dir=tmp_path)
    assert result == "cpu: +5.33 [+1.50, +9.10] (seeds and pairs), supported (3 seeds)"
    robust = committed.cpu_result("10_x", "the template hardly matters", runs_dir=tmp_path)
    assert robust == "cpu: +0.20 [-0.30, +0.60], margin ±1, equivalent (1 seed)"
    assert committed.cpu_result("10_x", "Stage 2 beats stage 1", runs_dir=tmp_path).endswith("of this claim")


def test_cpu_result_of_a_row_is_this_runs_own_in_a_cpu_run_and_the_committed_one_otherwise(tmp_path):
    write_cpu_run(tmp_path, "10_x", synthetic_rows())
    fresh = claims.claim("stage 2 beats stage 1", {"seed 0": (1.0, 0.5, 1.5)}, paper_quote=Q, main_claim=True)
    committed_text = committed.cpu_result_of("10_x", fresh, "class", runs_dir=tmp_path)
    assert committed_text == "cpu: +5.33 [+1.50, +9.10] (seeds and pairs), supported (3 seeds)"  # the committed row
    own = committed.cpu_result_of("10_x", fresh, "cpu", runs_dir=tmp_path)
    assert own == "cpu: +1.00 [+0.50, +1.50], supported (1 seed), this run"  # not the run it replaces
    assert committed.cpu_row_of("10_x", fresh, "class", runs_dir=tmp_path)["seeds"] == 3  # the row, not its text
    assert committed.cpu_row_of("10_x", fresh, "cpu", runs_dir=tmp_path) is fresh
    other = claims.claim("another claim", {"seed 0": (1.0, 0.5, 1.5)}, paper_quote=Q)
    assert committed.cpu_row_of("10_x", other, "class", runs_dir=tmp_path) is None
    against = claims.claim("stage 2 beats stage 1", {"seed 0": (-2.0, -3.0, -1.0)}, paper_quote=Q, main_claim=True)
    surprise = committed.cpu_result_of("10_x", against, "class", runs_dir=tmp_path)
    assert surprise.endswith(
        "point opposite ways (-2.00 on 1 seed against +5.33 on 3 seeds): that this profile's "
        "smaller training and test sets turn it is a hypothesis neither run tests"
    )
    unsided = claims.claim("stage 2 beats stage 1", {"seed 0": (-0.1, -2.0, 1.0)}, paper_quote=Q)
    assert committed.opposite_ways(unsided, {**unsided, "difference": 0.5, "verdict": "unresolved"}) is None


def test_summary_marks_the_main_claim_and_reads_old_rows_as_not_main_claims(tmp_path):
    (tmp_path / "plans").mkdir()
    plan_file = tmp_path / "plans" / "cpu.yaml"
    plan_file.write_text(yaml.safe_dump({"description": "synthetic", "notebooks": {"10_x": {}, "20_old": {}}}))
    write_cpu_run(tmp_path / "runs", "10_x", synthetic_rows())
    old = {"claim": "an old claim", "verdict": "unresolved", "difference": 0.1, "low": -1.0, "high": 1.2}
    write_cpu_run(tmp_path / "runs", "20_old", [old])
    profile_dir = tmp_path / "runs" / "cpu"
    plan = load_plan(plan_file)
    outcomes = [summary.recorded_outcome(name, profile_dir) for name in plan.notebooks]
    text = summary.summary_markdown(plan, outcomes, profile_dir)
    claims_text = md.sections(text)["Claims"]
    assert "`main claim:` marks the row that tests the paper's main claim" in claims_text
    shown = [row["claim"] for row in md.tables(claims_text)]
    assert shown == ["main claim: stage 2 beats  stage 1", "the template hardly matters", "an old claim"]


def test_a_class_summary_shows_the_cpu_runs_verdict_beside_each_main_claim(tmp_path):
    main = MainClaim("10_x", Q, "Table 4", "stage 2", "stage 1", wording=("stage 2 beats",))
    write_cpu_run(tmp_path, "10_x", synthetic_rows())
    one_seed = [claims.claim("stage 2 beats stage 1", {"seed 0": (1.0, 0.5, 1.5)}, paper_quote=Q, main_claim=True)]
    cell = summary.main_claim_cell(main, one_seed, tmp_path / "class")
    assert cell == (
        "Table 4: stage 2 beats stage 1: supported (1 seed, provisional), +1.00 [+0.50, +1.50] "
        "(cpu: supported (3 seeds), +5.33 [+1.50, +9.10] (seeds and pairs))"
    )
    assert summary.main_claim_cell(main, one_seed, tmp_path / "cpu") == cell.split(" (cpu:")[0]  # a cpu run: itself
    assert summary.main_claim_cell(main, one_seed, tmp_path / "other" / "class").endswith("(cpu: no committed run)")
