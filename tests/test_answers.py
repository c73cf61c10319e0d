"""``stsnb.teaching.answers``: the answer sheet written from the notebooks' exercises, the answers' templates and the
committed runs (no notebook is executed here: exercise runs are faked as folders, and ``run_exercise``'s runner is
replaced)."""

from __future__ import annotations

import json
import shutil

import nbformat
import pytest
import yaml
from synthetic_seeds import stored_claim

from stsnb import cli
from stsnb.evaluation import claims, verdict_rules
from stsnb.evaluation.main_claims import MainClaim
from stsnb.runs import plans
from stsnb.teaching import answers

QUOTE = claims.quote("Section 4.2", "Stage 2 improves on stage 1.")
MAIN = MainClaim(
    "10_x",
    claims.quote("Abstract", "Stage 2 improves on stage 1."),
    "Table 4",
    "stage 2",
    "stage 1",
    ("stage 2 beats stage 1",),
)
SPEED = MainClaim(
    "10_x",
    claims.quote("Abstract", "Stage 2 is fast."),
    "Section 3.3",
    "stage 2",
    "stage 1",
    ("stage 2 is faster",),
    relation="is faster than",
)


def write_notebook(folder, name: str, exercises: list[str]) -> None:
    cells = [
        nbformat.v4.new_markdown_cell(f"# {name[:2]} · A notebook\n\nIntro."),
        nbformat.v4.new_code_cell("seed = 0\nlr = 0.1\nprofile = 'class'", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_markdown_cell("## Summary\n\nExercises (each with a runtime):\n" + "\n".join(exercises)),
    ]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), folder / f"{name}.ipynb")


def write_run(folder, notebook: str, metrics: dict, seconds: float | None = None, params: dict | None = None) -> None:
    folder.mkdir(parents=True)
    (folder / "STATUS").write_text("ok\n")
    (folder / "metrics.json").write_text(json.dumps(metrics))
    (folder / "env.json").write_text(json.dumps({"git_sha": "a" * 40, "cpu_count": 2}))
    (folder / "params.yaml").write_text(yaml.safe_dump(params or {}))
    papermill = {"duration": seconds} if seconds is not None else {}
    (folder / f"{notebook}.ipynb").write_text(json.dumps({"cells": [], "metadata": {"papermill": papermill}}))


TEMPLATE = """{{ main_claim() }}

## 1
overrides: {lr: 0.5}
**Learning rate.** The class run scored {{ cls.metric("scores", "avg", fmt=".2f") }}; with the exercise's rate
{{ ex.metric("scores", "avg", fmt=".2f") }}, {{ ex.claim("stage 2 beats stage 1") }}.

## 2
overrides: none
**By hand.** Nothing to run; the cpu run had {{ cpu.param("seeds") }} seeds.
"""


@pytest.fixture
def world(tmp_path, monkeypatch):
    """A notebook with two exercises, its answers file, a class run and a cpu run with the row of the paper's main
    claim (``MAIN``, registered for 10_x here), exercise 1's run."""
    monkeypatch.setattr(answers, "main_claims_of", lambda notebook: (MAIN,) if notebook == "10_x" else ())
    notebooks, templates, out = tmp_path / "notebooks", tmp_path / "templates", tmp_path / "runs"
    for folder in (notebooks, templates):
        folder.mkdir()
    write_notebook(
        notebooks,
        "10_x",
        [
            "1. Set `lr = 0.5`. *Runtime:* about",
            "   3 min on 2 cores. *Hint:* look.",
            "2. Prove it. *Runtime:* no run.",
        ],
    )
    (templates / "10_x.md").write_text(TEMPLATE)
    lead = claims.claim("stage 2 beats stage 1", {"seed 0": (1.5, 0.5, 2.5)}, paper_quote=QUOTE, main_claim=True)
    write_run(out / "class" / "10_x", "10_x", {"claims": [lead], "scores": {"avg": 61.234}}, 150.0)
    three = {"seed 0": (4.0, 1.88, 6.0), "seed 1": (5.0, 2.0, 8.41), "seed 2": (5.94, 3.0, 7.0)}
    cpu_lead = stored_claim("stage 2 beats stage 1", three, (4.98, 1.88, 8.41), paper_quote=QUOTE, main_claim=True)
    write_run(out / "cpu" / "10_x", "10_x", {"claims": [cpu_lead]}, 1200.0, {"seeds": [0, 1, 2]})
    changed = claims.claim("stage 2 beats stage 1", {"seed 0": (0.2, -0.8, 1.2)}, paper_quote=QUOTE)
    folder = answers.exercise_dir("10_x", 1, out) / "10_x"
    write_run(folder, "10_x", {"claims": [changed], "scores": {"avg": 59.0}}, 412.0)
    return {"notebooks_dir": notebooks, "templates": templates, "out": out}


def test_exercises_are_read_as_the_notebook_numbers_them(world):
    items = answers.exercises(world["notebooks_dir"] / "10_x.ipynb")
    assert items == [
        "1. Set `lr = 0.5`. *Runtime:* about 3 min on 2 cores. *Hint:* look.",
        "2. Prove it. *Runtime:* no run.",
    ]
    assert answers.title(world["notebooks_dir"] / "10_x.ipynb") == "10 · A notebook"


def test_an_answers_file_splits_into_the_intro_and_one_answer_per_exercise():
    source = answers.parse_source(TEMPLATE)
    assert source.intro == "{{ main_claim() }}"
    assert source.answers[1].overrides == {"lr": 0.5} and source.answers[2].overrides is None
    assert source.answers[2].text.startswith("**By hand.**")
    with pytest.raises(ValueError, match="answer 1: its first line must be 'overrides"):
        answers.parse_source("## 1\n**No overrides line.**\n")
    with pytest.raises(ValueError, match="answer 3 appears twice"):
        answers.parse_source("## 3\noverrides: none\na\n## 3\noverrides: none\nb\n")


def test_the_sheet_reads_every_number_from_the_runs_and_the_exercise_runs_duration(world):
    missing: list[str] = []
    text = answers.notebook_section("10_x", missing=missing, **world)
    assert text.startswith(
        "## 10 · A notebook\n\nThe paper's main claim, Table 4: stage 2 beats stage 1. Class run: supported (1 seed,"
        " provisional), +1.50 [+0.50, +2.50]; cpu run: supported (3 seeds), +4.98 [+1.88, +8.41] (seeds and pairs).\n"
    )
    assert "### Exercise 1\n\n> Set `lr = 0.5`. *Runtime:* about 3 min on 2 cores. *Hint:* look." in text
    assert (
        "*Measured:* 412 s (about 7 min) on 2 CPU cores, the whole notebook with `lr = 0.5` (run at commit aaaaaaa)."
        in (text)
    )
    assert (
        "The class run scored 61.23; with the exercise's rate\n59.00, +0.20 [-0.80, +1.20], unresolved (1 seed)."
        in text
    )
    assert "*No run:* answered without training" in text and "the cpu run had [0, 1, 2] seeds" in text
    assert missing == []


def test_what_no_run_recorded_is_marked_not_measured_with_the_command_that_measures_it(world):
    (world["templates"] / "10_x.md").write_text(TEMPLATE.replace('"scores", "avg"', '"scores", "dev"', 1))
    for path in (answers.exercise_dir("10_x", 1, world["out"]) / "10_x").iterdir():
        path.unlink()
    missing: list[str] = []
    text = answers.notebook_section("10_x", missing=missing, **world)
    assert "*not measured* (the committed class run of 10_x has no `scores > dev`:" in text
    assert "*Measured:* *not measured* yet (`stsnb answers --run 10_x:1` runs the notebook with `lr = 0.5`)." in text
    assert "10_x: exercise 1's run is not there (`stsnb answers --run 10_x:1`)" in missing


def test_a_second_run_is_read_as_ex_b_and_its_runtime_is_shown(world):
    assert (
        answers.RunView("r", answers.exercise_dir("10_x", 1, world["out"]) / "10_x", "10_x", "h").width(
            "stage 2 beats stage 1"
        )
        == "2.00"
    )  # [-0.80, +1.20]
    second = TEMPLATE.replace("overrides: {lr: 0.5}\n", "overrides: {lr: 0.5}\nsecond run: {lr: 0.25}\n").replace(
        '{{ ex.claim("stage 2 beats stage 1") }}.', 'second {{ ex_b.metric("scores", "avg", fmt=".1f") }}.'
    )
    (world["templates"] / "10_x.md").write_text(second)
    assert answers.load_source("10_x", world["templates"]).answers[1].second == {"lr": 0.25}
    missing: list[str] = []
    text = answers.notebook_section("10_x", missing=missing, **world)
    assert "*Second run, measured:* *not measured* yet (`stsnb answers --run 10_x:1b` runs the notebook with" in text
    assert "second *not measured* (exercise 1's second run has no `scores > avg`" in text
    folder = answers.exercise_dir("10_x", "1b", world["out"]) / "10_x"
    write_run(folder, "10_x", {"scores": {"avg": 57.25}}, 200.0)
    missing = []
    text = answers.notebook_section("10_x", missing=missing, **world)
    assert "*Second run, measured:* 200 s (about 3 min) on 2 CPU cores, the whole notebook with `lr = 0.25`" in text
    assert "second 57.2." in text and missing == []
    with pytest.raises(ValueError, match="answer 1: a second run needs a first"):
        answers.parse_source("## 1\noverrides: none\nsecond run: {lr: 1}\ntext\n")
    with pytest.raises(ValueError, match="answer 1, second run: expected a mapping"):
        answers.parse_source("## 1\noverrides: {lr: 1}\nsecond run: 3\ntext\n")


def probe_run(tmp_path) -> answers.RunView:
    """A run whose metrics hold lists of rows (a probe per pooling, ablations) and claim rows, one with the
    ``baseline_minus_untrained`` row of HiCL's Table 1 claims."""
    probe = [
        {"reading": "divisor", "temperature": 0.05, "bcl_ratio": 1.18},
        {"reading": "divisor", "temperature": 3.0, "bcl_ratio": 0.135, "same_pair_share": 0.0705},
        {"reading": "multiplier", "temperature": 1.0, "bcl_ratio": 0.71},
        {"reading": "multiplier", "temperature": 3.0, "bcl_ratio": 1.454},
    ]
    ablations = [
        {"ablation": "alpha=0.0", "avg": 35.5, "minus_reference": 1.0, "low": 0.0, "high": 2.0},
        {"ablation": "alpha=1.0", "avg": 32.0, "minus_reference": -1.5, "low": -2.5, "high": -0.5},
        {"ablation": "alpha=1.0", "avg": 99.0},
    ]
    moved = verdict_rules.claim_row("SimCSE improves the backbone", {"seed 0": (0.52, 0.10, 0.90)}, +1)
    beats = claims.claim("+HiCL beats SimCSE", {"seed 0": (0.2, -0.8, 1.2)}, paper_quote=QUOTE)
    metrics = {
        "bcl_probe": {"mean": probe},
        "ablations": ablations,
        "claims": [
            {**beats, "baseline_minus_untrained": moved},
            claims.claim("plain", [(1, 0.5, 2)], paper_quote=QUOTE),
        ],
    }
    write_run(tmp_path / "run", "10_x", metrics)
    return answers.RunView("the run", tmp_path / "run", "10_x", "`make it`")


def test_a_metric_path_picks_a_row_of_a_list_by_its_fields(tmp_path):
    run = probe_run(tmp_path)
    assert run.metric("ablations", "ablation=alpha=1.0", "avg", fmt=".2f") == "32.00"  # the first row that matches
    assert run.metric("bcl_probe", "mean", "reading=multiplier&temperature=3.0", "bcl_ratio", fmt=".2f") == "1.45"
    assert run.metric("bcl_probe", "mean", "reading=divisor&temperature=3", "same_pair_share", fmt=".1%") == "7.0%"
    assert run.metric("bcl_probe", "mean", "temperature=0.05", "bcl_ratio") == "1.18"
    row = "{minus_reference:+.2f} [{low:+.2f}, {high:+.2f}] (average {avg:.2f})"
    assert run.metric("ablations", "ablation=alpha=0.0", fmt=row) == "+1.00 [+0.00, +2.00] (average 35.50)"
    assert run.missing == []


def test_a_row_no_run_recorded_is_not_measured_naming_the_selector(tmp_path):
    run = probe_run(tmp_path)
    text = run.metric("bcl_probe", "mean", "reading=multiplier&temperature=10", "bcl_ratio", fmt=".2f")
    assert text == (
        "*not measured* (the run has no `bcl_probe > mean > reading=multiplier&temperature=10 > bcl_ratio`: `make it`)"
    )
    assert run.metric("ablations", "alpha=0.5").startswith("*not measured* (the run has no `ablations > alpha=0.5`")
    assert run.metric("ablations", "ablation", "avg").startswith("*not measured*")  # no "=": not a selector
    assert run.metric("bcl_probe", "mean", "reading=divisor&temperature=0.05", fmt="{same_pair_share:.1%}") == (
        "*not measured* (the run has no `bcl_probe > mean > reading=divisor&temperature=0.05 > same_pair_share`: "
        "`make it`)"
    )
    assert run.missing == [
        "10_x: the run has no `bcl_probe > mean > reading=multiplier&temperature=10 > bcl_ratio` (`make it`)",
        "10_x: the run has no `ablations > alpha=0.5` (`make it`)",
        "10_x: the run has no `ablations > ablation > avg` (`make it`)",
        "10_x: the run has no `bcl_probe > mean > reading=divisor&temperature=0.05 > same_pair_share` (`make it`)",
    ]


def test_select_compares_numbers_as_they_read():
    rows = [{"t": 3.0, "on": True}, {"t": 1e-3, "on": False}, {"t": "3"}]
    assert answers.select(rows, "t=3") is rows[0] and answers.select(rows, "t=3.0") is rows[0]
    assert answers.select(rows, "t=0.001") is rows[1] and answers.select(rows, "on=False") is rows[1]
    assert answers.select(rows, "t=3&on=1") is None  # a bool reads as True/False, not as a number
    assert answers.select(rows, "t") is None and answers.select([1, "t=3"], "t=3") is None


def test_moved_reads_the_baseline_minus_untrained_row_of_a_claim(tmp_path):
    run = probe_run(tmp_path)
    assert run.moved("+HiCL beats SimCSE") == "+0.52 [+0.10, +0.90], supported (1 seed)"
    assert run.moved("plain") == (
        "*not measured* (the run has no `baseline_minus_untrained` in claim 'plain': `make it`)"
    )
    assert run.moved("absent").startswith("*not measured* (the run has no `baseline_minus_untrained` in claim 'absent'")
    assert len(run.missing) == 2


def test_answers_that_do_not_match_the_notebooks_exercises_are_refused(world):
    (world["templates"] / "10_x.md").write_text(TEMPLATE + "\n## 3\noverrides: none\nA third.\n")
    with pytest.raises(ValueError, match=r"numbers its exercises \[1, 2\], 10_x.md answers \[1, 2, 3\]"):
        answers.notebook_section("10_x", **world)
    (world["templates"] / "10_x.md").write_text(TEMPLATE.replace("{{ main_claim() }}", "{{ headline() }}"))
    with pytest.raises(ValueError, match="10_x.md, introduction: 'headline' is undefined"):
        answers.notebook_section("10_x", **world)


def test_a_run_older_than_the_main_claims_says_so_instead_of_failing(world):
    """The committed runs are redone after the main claims: until then their rows carry no ``main_claim`` mark (an
    older ``headline`` one at most), and the sheet says the run predates main claims, for each run on its own."""
    folder = world["out"] / "cpu" / "10_x"
    metrics = json.loads((folder / "metrics.json").read_text())
    for row in metrics["claims"]:
        row.pop("main_claim")
        row["headline"] = True
    (folder / "metrics.json").write_text(json.dumps(metrics))
    missing: list[str] = []
    text = answers.notebook_section("10_x", missing=missing, **world)
    assert (
        "Class run: supported (1 seed, provisional), +1.50 [+0.50, +2.50]; cpu run: no main-claim row in this run"
        " (run predates main claims).\n" in text
    )
    assert missing == [
        "10_x: the committed cpu run of 10_x predates main claims (`stsnb run --profile cpu --only 10_x`)"
    ]


def test_a_run_with_main_claim_marks_but_none_for_this_claim_says_it_did_not_run_it(world):
    folder = world["out"] / "class" / "10_x"
    other = claims.claim("stage 1 beats nothing", {"seed 0": (1.0, 0.5, 1.5)}, paper_quote=QUOTE)
    (folder / "metrics.json").write_text(json.dumps({"claims": [other], "scores": {"avg": 61.234}}))
    text = answers.notebook_section("10_x", **world)
    assert "Class run: not run in this profile; cpu run: supported (3 seeds)" in text
    shutil.rmtree(folder)
    missing: list[str] = []
    text = answers.notebook_section("10_x", missing=missing, **world)
    assert "Class run: *not measured* (the committed class run of 10_x has no result for the main claim" in text
    assert any("has no result for the main claim 'Table 4: stage 2 beats stage 1'" in line for line in missing)


def test_two_main_claims_give_a_sentence_each_and_a_run_names_one_by_a_fragment(world, monkeypatch):
    monkeypatch.setattr(answers, "main_claims_of", lambda notebook: (MAIN, SPEED))
    folder = world["out"] / "cpu" / "10_x"
    metrics = json.loads((folder / "metrics.json").read_text())
    fast = claims.claim("stage 2 is faster", {"seed 0": (2.0, 1.0, 3.0)}, paper_quote=QUOTE, main_claim=True)
    (folder / "metrics.json").write_text(json.dumps({**metrics, "claims": [*metrics["claims"], fast]}))
    text = answers.notebook_section("10_x", **world)
    first = "cpu run: supported (3 seeds), +4.98 [+1.88, +8.41] (seeds and pairs).\n\n"
    assert first + "The paper's main claim, Section 3.3: stage 2 is" in text
    assert "Section 3.3: stage 2 is faster than stage 1. Class run: not run in this profile; cpu run: supported" in text
    cpu = answers.RunView("the cpu run", folder, "10_x", "h")
    assert cpu.main_claim("Section 3.3") == (
        "Section 3.3: stage 2 is faster than stage 1: supported (1 seed, provisional), +2.00 [+1.00, +3.00]"
    )
    with pytest.raises(ValueError, match="no main claim is registered with 'Table 9'"):
        cpu.main_claim("Table 9")


def test_every_main_claim_of_the_papers_is_on_the_sheet():
    """Each paper's main claims (``stsnb.main_claims``) open its section of the sheet, whatever the runs say."""
    text = answers.sheet()
    for path in sorted(plans.NOTEBOOKS_DIR.glob("*.ipynb")):
        for main in answers.main_claims_of(path.stem):
            assert f"The paper's main claim, {main.statement}. Class run: " in text, main.statement


def test_an_exercise_runs_the_class_values_with_its_overrides(world, tmp_path, monkeypatch):
    from stsnb.runs import execution

    plans_dir = tmp_path / "plans"
    plans_dir.mkdir()
    (plans_dir / "class.yaml").write_text(
        "description: d\ntimeout: 600\nnotebooks: {10_x: {profile: class, seed: 1}}\n"
    )
    calls = []
    monkeypatch.setattr(execution, "check_kernel", lambda: None)
    monkeypatch.setattr(execution, "run_notebook", lambda *args: calls.append(args) or "outcome")
    kwargs = dict(out=world["out"], notebooks_dir=world["notebooks_dir"], plans_dir=plans_dir)
    assert answers.run_exercise("10_x", 1, templates=world["templates"], **kwargs) == "outcome"
    name, parameters, _, folder, timeout = calls[0]
    assert (name, parameters, timeout) == ("10_x", {"profile": "class", "seed": 1, "lr": 0.5}, 600.0)
    assert folder == answers.exercise_dir("10_x", 1, world["out"])
    assert json.loads((folder / "exercise.json").read_text())["overrides"] == {"lr": 0.5}
    with pytest.raises(plans.PlanError, match="answered without a run"):
        answers.run_exercise("10_x", 2, templates=world["templates"], **kwargs)
    (plans_dir / "class.yaml").write_text("description: d\ntimeout: 300\nnotebooks: {10_x: {}}\n")  # 00, 01
    answers.run_exercise("10_x", 1, templates=world["templates"], **kwargs)
    assert calls[-1][1] == {"lr": 0.5} and calls[-1][4] == 300.0, "no profile where the plan names none"
    (plans_dir / "class.yaml").write_text(
        "description: d\ntimeout: 600\nnotebooks: {10_x: {profile: class, seed: 1}}\n"
    )
    (world["templates"] / "10_x.md").write_text(TEMPLATE.replace("{lr: 0.5}", "{seed: 2}"))
    with pytest.raises(plans.PlanError, match=r"the class plan sets \['seed'\].*put the plan's values back"):
        answers.run_exercise("10_x", 1, templates=world["templates"], **kwargs)
    (world["templates"] / "10_x.md").write_text(TEMPLATE.replace("{lr: 0.5}", "{lr: 0.5, epochs: 3}"))
    with pytest.raises(plans.PlanError, match=r"\['epochs'\] are not parameters of the notebook"):
        answers.run_exercise("10_x", 1, templates=world["templates"], **kwargs)
    with pytest.raises(plans.PlanError, match="exercise 1's second run: its answer names none"):
        answers.run_exercise("10_x", "1b", templates=world["templates"], **kwargs)
    (world["templates"] / "10_x.md").write_text(TEMPLATE.replace("{lr: 0.5}\n", "{lr: 0.5}\nsecond run: {lr: 0.1}\n"))
    answers.run_exercise("10_x", "1b", templates=world["templates"], **kwargs)
    assert calls[-1][1] == {"profile": "class", "seed": 1, "lr": 0.1}
    assert calls[-1][3] == answers.exercise_dir("10_x", "1b", world["out"])
    assert json.loads((calls[-1][3] / "exercise.json").read_text())["second_run"] is True
    with pytest.raises(plans.PlanError, match="expected an exercise's number"):
        answers.run_exercise("10_x", "1c", templates=world["templates"], **kwargs)


def test_every_notebook_has_an_answer_per_exercise_and_every_run_parameter_exists():
    for path in sorted(plans.NOTEBOOKS_DIR.glob("*.ipynb")):
        source = answers.load_source(path.stem)
        assert sorted(source.answers) == list(range(1, len(answers.exercises(path)) + 1)), path.stem
        declared = set(plans.assigned_parameters(path))
        for answer in source.answers.values():
            unknown = set(answer.overrides or {}) - declared
            assert not unknown, f"{path.stem}, exercise {answer.number}: {unknown} are not parameters"
            assert ("ex_b." in answer.text) == (answer.second is not None), f"{path.stem} {answer.number}: ex_b"
            for second in (False, True):  # no override the profile's plan puts back, nothing undeclared
                if answer.run_overrides(second) is not None:
                    given = answers.exercise_parameters(path.stem, answer, second=second)
                    assert set(given) <= declared, f"{path.stem}, exercise {answer.number}: {set(given) - declared}"


def test_no_answer_sheet_is_committed():
    """The sheet is written into the instructor's book (``stsnb book --instructor``) from the committed runs: a
    student's clone holds no page of answers."""
    assert not (plans.NOTEBOOKS_DIR.parent / "docs" / "exercises_answers.md").exists()


def test_stsnb_answers_parses_exercises_and_lists_what_is_not_measured(capsys):
    args = cli.build_parser().parse_args(["answers", "--run", "10_pcc_tuning:2,3b", "--check"])
    assert args.run == [("10_pcc_tuning", ["2", "3b"])] and args.check
    for wrong in ("10_pcc_tuning", "10_pcc_tuning:2,x"):
        with pytest.raises(SystemExit):
            cli.build_parser().parse_args(["answers", "--run", wrong])
    missing = answers.not_measured()
    assert cli.main(["answers"]) == 0
    assert f"has {len(missing)} values not measured yet" in capsys.readouterr().out
    assert cli.main(["answers", "--check"]) == (1 if missing else 0)


def test_each_exercises_runtime_is_printed_from_its_run_with_the_settings_changed_since(world, tmp_path):
    """What the cell under a notebook's exercises prints: the measured runtime of each exercise's run, which of its
    settings differ from what the exercise runs today, "not measured yet" without a run, "no run" where none is
    needed."""
    plans_dir = tmp_path / "plans"
    plans_dir.mkdir()
    (plans_dir / "class.yaml").write_text("description: d\nnotebooks: {10_x: {profile: class}}\n")
    kwargs = dict(out=world["out"], notebooks_dir=world["notebooks_dir"], templates=world["templates"])
    lines = answers.runtimes_text("10_x", plans_dir=plans_dir, **kwargs).splitlines()
    assert lines[0].startswith("Each exercise's runtime as measured: ") and len(lines) == 3
    ran = "  exercise 1: 412 s (about 7 min) on 2 CPU cores, at commit aaaaaaa"
    assert lines[1] == f"{ran}; with earlier settings of seed, lr, profile"  # the faked run recorded none
    assert lines[2] == "  exercise 2: no run (answered without training)"
    folder = answers.exercise_dir("10_x", 1, world["out"]) / "10_x"
    (folder / "params.yaml").write_text(yaml.safe_dump({"seed": 0, "lr": 0.5, "profile": "class"}))
    assert answers.runtimes_text("10_x", plans_dir=plans_dir, **kwargs).splitlines()[1] == ran
    (folder / "params.yaml").write_text(yaml.safe_dump({"seed": 0, "lr": 0.1, "profile": "class"}))
    assert answers.runtimes_text("10_x", plans_dir=plans_dir, **kwargs).splitlines()[1].endswith("settings of lr")
    shutil.rmtree(folder)
    assert (
        answers.runtimes_text("10_x", plans_dir=plans_dir, **kwargs).splitlines()[1] == "  exercise 1: not measured yet"
    )


@pytest.mark.parametrize("path", sorted(plans.NOTEBOOKS_DIR.glob("*.ipynb")), ids=lambda p: p.stem)
def test_every_notebook_prints_its_exercises_runtimes_under_the_list(path):
    cells = nbformat.read(path, as_version=4).cells
    listing = max(i for i, c in enumerate(cells) if c.cell_type == "markdown" and "*Runtime:*" in c.source)
    assert f'print(runtimes_text("{path.stem}"))' in cells[listing + 1].source
