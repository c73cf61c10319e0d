"""Read summary.md back: its ``## `` sections and their pipe tables, for tests that compare it with the run files."""

from __future__ import annotations

import re

_PIPE = re.compile(r"(?<!\\)\|")
_LINK = re.compile(r"^\[([^\]]+)\]\(([^)]+)\)$")


def cells(line: str) -> list[str]:
    """The cells of one table line, unescaped (``\\|`` is a pipe inside a cell)."""
    return [cell.strip().replace("\\|", "|") for cell in _PIPE.split(line.strip())[1:-1]]


def sections(text: str) -> dict[str, str]:
    """``## <title>`` -> its text; the text before the first such heading is under ``""``."""
    out: dict[str, list[str]] = {"": []}
    current = ""
    for line in text.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            out[current] = []
        else:
            out[current].append(line)
    return {title: "\n".join(lines) for title, lines in out.items()}


def table(text: str) -> list[dict[str, str]]:
    """The first pipe table of ``text`` as rows keyed by its header (duplicate headers are not expected)."""
    lines = [line for line in text.splitlines() if line.startswith("|")]
    if len(lines) < 2:
        return []
    header = cells(lines[0])
    assert len(set(header)) == len(header), f"duplicate columns in {header}"
    rows = []
    for line in lines[2:]:
        values = cells(line)
        assert len(values) == len(header), f"{len(values)} cells under {len(header)} columns: {line}"
        rows.append(dict(zip(header, values, strict=True)))
    return rows


def tables(text: str) -> list[dict[str, str]]:
    """The rows of every pipe table of ``text`` in order (e.g. the Claims section's claims of the papers, then its
    checks of our setting), each table read as :func:`table` reads the first."""
    blocks, current = [], []
    for line in text.splitlines():
        if line.startswith("|"):
            current.append(line)
        elif current:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    return [row for block in blocks for row in table("\n".join(block))]


def link(cell: str) -> tuple[str, str | None]:
    """(text, target) of a ``[text](target)`` cell; (cell, None) for plain text."""
    match = _LINK.match(cell)
    return (match.group(1), match.group(2)) if match else (cell, None)


def decimals(printed: str) -> int:
    return len(printed.split(".")[1]) if "." in printed else 0


def same_at_printed_precision(printed: str, value: float) -> bool:
    """Whether ``value`` rounds to the number ``printed`` shows (half a unit of its last digit)."""
    return abs(float(printed) - float(value)) <= 0.5 * 10 ** -decimals(printed) + 1e-9


def interval(printed: str) -> tuple[str, str, str]:
    """The three numbers of ``+1.23 [-0.45, +2.34]``, as printed (a note after it, such as " (t floor)" or a timing
    range's " s (range of timed steps, not a test)", aside)."""
    match = re.fullmatch(r"([+-]?\d+(?:\.\d+)?) \[([+-]?\d+(?:\.\d+)?), ([+-]?\d+(?:\.\d+)?)\](?: .+)?", printed)
    assert match, f"not an interval: {printed!r}"
    return match.group(1), match.group(2), match.group(3)
