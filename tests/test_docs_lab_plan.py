"""docs/lab_plan.md, the 90-minute lab: its blocks add up to 90 minutes with at least 10 of slack, a worksheet per
training notebook, its glossary names every verdict and term the notebooks print, its suggested exercises are in the
notebooks' exercise lists, and it types no runtime (those are read from the committed runs' summaries, which it
links)."""

from __future__ import annotations

import re
from pathlib import Path

import markdown_tables as md

from stsnb.evaluation import verdict_rules
from stsnb.runs import plans
from stsnb.teaching import answers

REPO = Path(__file__).resolve().parent.parent
PAGE = REPO / "docs" / "lab_plan.md"
TERMS = (
    "Verdict",
    "Precondition",
    "Dev gate",
    "Paired bootstrap",
    "Seeds-and-pairs interval",
    "Smallest effect of interest",
    "Main claim",
    "Check of our setting",
    "Provisional",
)
NOTEBOOKS = ("00_contrastive_ceiling", "01_loss_functions", "10_pcc_tuning", "20_sts_regression", "30_hicl")


def sections() -> dict[str, str]:
    return md.sections(PAGE.read_text(encoding="utf-8"))


def test_the_blocks_add_up_to_ninety_minutes_with_slack_and_cover_the_lab():
    rows = md.table(sections()["The plan"].split("Suggested exercises")[0])
    blocks = [r for r in rows if not r["block"].startswith("**")]
    assert sum(int(r["minutes"]) for r in blocks) == 90
    assert [r for r in rows if r["block"] == "**total**"][0]["minutes"] == "**90**"
    names = " ".join(r["block"] for r in blocks)
    for part in ("00_contrastive_ceiling", "01_loss_functions", "training notebook", "exercise", "Debrief"):
        assert part in names, part
    assert sum(int(r["minutes"]) for r in blocks if "Slack" in r["block"]) >= 10
    training = next(r for r in blocks if "training notebook" in r["block"])["what the students do"]
    assert "[worksheet](#worksheets)" in training and "progress bar" in training
    assert "printed in the first cell" not in PAGE.read_text(encoding="utf-8")  # it is printed after the setup
    assert "Duplicate" in sections()["The plan"], "how to keep block 3's outputs before block 4"


def test_every_training_notebook_has_a_worksheet_with_its_four_parts():
    text = PAGE.read_text(encoding="utf-8")
    for name in ("10_pcc_tuning", "20_sts_regression", "30_hicl", "40_ccl_csts"):
        sheet = text.split(f"### Worksheet: {name}\n")[1].split("\n### ")[0].split("\n## ")[0]
        for part in (
            "**Read while it runs.**",
            "**Record three numbers**",
            "**Question on a figure.**",
            "**Compare.**",
        ):
            assert part in sheet, f"{name}: {part}"
        assert "class book" in sheet and "cpu book" in sheet, f"{name}: compare with both committed runs"


def test_the_plan_says_what_a_curious_student_finds_of_the_answers():
    answers_part = sections()["Answers"]
    assert "stsnb book --instructor" in answers_part and "templates/answers" in answers_part
    assert "papermill_runs/exercises" in answers_part


def test_every_notebook_has_learning_objectives():
    objectives = sections()["Learning objectives"]
    for name in (*NOTEBOOKS, "40_ccl_csts"):
        assert f"- **`{name}`**" in objectives, name


def test_the_glossary_defines_every_verdict_and_term():
    glossary = sections()["Glossary"]
    defined = re.findall(r"^- \*\*([^*]+)\*\*:", glossary, flags=re.M)
    assert set(verdict_rules.VERDICTS) <= set(defined), set(verdict_rules.VERDICTS) - set(defined)
    assert set(TERMS) <= set(defined), set(TERMS) - set(defined)


def test_the_suggested_exercises_are_in_the_notebooks_exercise_lists():
    rows = md.table(sections()["The plan"].split("Suggested exercises")[1])
    assert len(rows) == 4
    for row in rows:
        notebook = row["notebook"].strip("`")
        change = re.search(r"`([^`]+)`", row["exercise (its change)"]).group(1)
        items = answers.exercises(plans.NOTEBOOKS_DIR / f"{notebook}.ipynb")
        assert any(f"`{change}`" in item for item in items), f"{notebook}: no exercise changes `{change}`"


def test_the_plan_types_no_runtime_and_links_the_class_summary():
    text = PAGE.read_text(encoding="utf-8")
    durations = re.findall(r"\b\d[\d,.]*\s*(?:s|sec|seconds?|min|minutes?)\b", text)
    # the lab's length and the class plan's own goal, never a run's time
    assert set(durations) <= {"90 minutes", "5 minutes"}, durations
    assert "under 5 minutes" in (plans.PLANS_DIR / "class.yaml").read_text()
    assert "](../papermill_runs/class/summary.md)" in text


def test_students_md_types_no_run_figure():
    """docs/students.md points at the committed summaries for runtimes and results instead of typing them: no
    interval, no seconds or minutes of a run, in the sections about the notebooks' runs, each linking a summary."""
    parts = md.sections((REPO / "docs" / "students.md").read_text(encoding="utf-8"))
    for title in ("How long each notebook takes", "What to look at in each notebook", "Teach a class", "The profiles"):
        text = parts[title]
        assert not re.findall(r"[-+]\d+\.\d+ \[[-+]", text), f"{title}: an interval typed"
        durations = re.findall(r"\b\d[\d,.]*\s*(?:s|sec|seconds?|min|minutes?)\b", text)
        assert set(durations) <= {"5 minutes", "90 minutes"}, f"{title}: {durations}"
        assert "](../papermill_runs/" in text, f"{title}: no link to a committed summary"
    assert "](../papermill_runs/class/summary.md)" in parts["How long each notebook takes"]
    assert "](lab_plan.md)" in parts["Teach a class"]
