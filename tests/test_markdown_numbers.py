"""No figure of a run is typed into a notebook's markdown: a number a committed run printed (a difference, a ratio, a
time, a count of pairs) must come from the code cell that prints it, since the next run prints another. A number
the markdown shares with the package's paper modules (the papers' own numbers, ``reported.py``, ``quotes.py``) is the
paper's and may stand in the text. No runtime is typed into markdown at all ("about 110 s", "4 minutes", "305 s"):
the first cell prints each profile's (``runtimes.text``), the cell under the exercises each exercise's
(``answers.runtimes_text``), both read from the committed runs; a budget ("within 5 minutes") is no runtime."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
PROFILES = ("cpu", "class")
PAPER_PACKAGES = {"00": "pcc_tuning", "10": "pcc_tuning", "20": "sts_regression", "30": "hicl", "40": "ccl"}
# a decimal number ("+4.98", "0.84", "2.44x"), or a count a profile sets ("150 pairs", "180 steps")
DECIMAL = re.compile(r"(?<![\w.])[+-]?\d+\.\d+(?![\w.])")


REFERENCE = re.compile(r"\b(?:Eq|Eqs|Section|Sections|Table|Figure|Appendix)\.?\s*[A-Z]?\d+(?:\.\d+)*")


def _numbers(text: str) -> set[str]:
    text = REFERENCE.sub(" ", text)  # "Eq. 10.4", "Section 4.5.1": where the paper prints something, not a figure
    found = {m.lstrip("+-") for m in DECIMAL.findall(text)}
    counts = re.findall(r"(?<![\w.,])(\d{2,})\s+(pairs|steps|sentences|rows)", text)
    return found | {f"{n} {unit}" for n, unit in counts}


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text())["cells"]


def _printed(path: Path) -> str:
    parts = []
    for cell in _cells(path):
        for out in cell.get("outputs", []):
            parts.append("".join(out.get("text", "")))
            data = out.get("data", {})
            for kind in ("text/plain", "text/markdown"):
                parts.append("".join(data.get(kind, "")))
    return "\n".join(parts)


def _settings_and_paper_numbers(notebook: Path) -> set[str]:
    """Decimal numbers written in code: the notebook's code cells (its settings), the losses' defaults and the paper's
    package (the papers' numbers). A count of pairs or steps stays a figure of the run wherever it is written: a
    profile changes it."""
    sources = ["".join(c["source"]) for c in _cells(notebook) if c["cell_type"] == "code"]
    sources += [p.read_text() for p in (ROOT / "stsnb" / "training").glob("*.py")]
    package = PAPER_PACKAGES.get(notebook.name[:2])
    if package is not None:
        sources += [p.read_text() for p in (ROOT / "stsnb" / "papers" / package).glob("*.py")]
    return {n for n in _numbers("\n".join(sources)) if " " not in n}


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_figure_of_a_committed_run_is_typed_into_markdown(notebook: Path):
    markdown = [("".join(c["source"]), i) for i, c in enumerate(_cells(notebook)) if c["cell_type"] == "markdown"]
    allowed = _settings_and_paper_numbers(notebook)
    typed = []
    for profile in PROFILES:
        executed = ROOT / "papermill_runs" / profile / notebook.stem / notebook.name
        if not executed.is_file():
            continue
        printed = _numbers(_printed(executed))
        for text, index in markdown:
            for number in sorted((_numbers(text) & printed) - allowed):
                typed.append(f"cell {index}: {number!r} (printed by the {profile} run)")
    assert not typed, f"{notebook.name}: markdown states figures of a run; print them from a code cell: {typed}"


# a duration: "305 s", "about 4 minutes", "4.7 and 4 min", "1.5 h"; not "0.21 s/step" (a rate), not "2 cores"
DURATION = re.compile(
    r"(?<![\w.$])\d[\d,]*(?:\.\d+)?(?:\s*(?:and|or|to|-)\s*\d[\d,]*(?:\.\d+)?)?\s*"
    r"(?:s|secs?|seconds?|min|mins|minutes?|h|hours?)\b(?!/)"
)
BUDGET = re.compile(r"(?:at most|within|under|up to|no more than|limit of|timeout of)\s*$")  # a limit, not a time


def typed_runtimes(text: str) -> list[str]:
    """The durations ``text`` states, budgets aside (``within 5 minutes``, ``at most 30 minutes``)."""
    text = REFERENCE.sub(" ", text)
    return [m.group(0) for m in DURATION.finditer(text) if not BUDGET.search(text[max(0, m.start() - 20) : m.start()])]


def test_the_runtime_check_sees_durations_and_lets_budgets_and_rates_pass():
    assert typed_runtimes("about 110 s per run, about 4 minutes in all, 305 s before") == [
        "110 s",
        "4 minutes",
        "305 s",
    ]
    assert typed_runtimes("*Runtime:* 4.7 and 4\n   min measured, 1.5 h") == ["4.7 and 4\n   min", "1.5 h"]
    assert typed_runtimes("within 5 minutes on 2 cores, at most 30 minutes; 0.21 s/step; Table 5; 3 seeds") == []


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_runtime_is_typed_into_markdown(notebook: Path):
    typed = [
        f"cell {i}: {duration!r}"
        for i, cell in enumerate(_cells(notebook))
        if cell["cell_type"] == "markdown"
        for duration in typed_runtimes("".join(cell["source"]))
    ]
    assert not typed, f"{notebook.name}: runtimes typed into markdown; print them from the committed runs: {typed}"
