"""No figure of a run is typed into a notebook's markdown: a number a committed run printed (a difference, a ratio, a
time, a count of pairs) must come from the code cell that prints it, since the next run prints another. A number
the markdown shares with the package's paper modules (the papers' own numbers, ``reported.py``, ``quotes.py``) is the
paper's and may stand in the text."""

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
