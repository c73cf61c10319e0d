"""docs/verdicts.md gives every verdict the rules can print with a real example: each row names a committed run and a
claim of it, and its verdict and result are what that run recorded (a rerun that changes them fails here until the
page is updated)."""

from __future__ import annotations

from pathlib import Path

import markdown_tables as md

from stsnb.evaluation import verdict_rules
from stsnb.runs import committed
from stsnb.runs.plans import DEFAULT_OUT

PAGE = Path(__file__).resolve().parents[1] / "docs" / "verdicts.md"
NONE_YET = "none of the committed cpu and class runs"


def examples() -> list[dict]:
    section = PAGE.read_text(encoding="utf-8").split("## Every verdict, with an example from the runs")[1]
    return md.table(section.split("\n## ")[0])


def test_every_verdict_has_a_row_and_each_example_is_what_its_run_recorded():
    rows = examples()
    assert [row["verdict"] for row in rows] == list(verdict_rules.VERDICTS)
    for row in rows:
        if row["result"].startswith(NONE_YET):
            continue
        profile, notebook = (part.strip("` ") for part in row["run"].split("/"))
        found = committed.find_claim(DEFAULT_OUT / profile / notebook, row["claim"])
        assert found is not None, f"{row['run']}: no claim {row['claim']!r}"
        assert found["verdict"] == row["verdict"], row["claim"]
        assert committed.result_text(found) == row["result"], row["claim"]
