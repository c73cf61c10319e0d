"""Ours beside the paper's: a paper's reported numbers, looked up by table and setting, and the comparison rows.

Generic machinery only. The numbers themselves live with their paper (``stsnb.papers.<paper>.reported``), each
copied from the paper text in ../shared/papers/ and labelled as the paper's; nothing here is a result of ours.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

SEVEN = ("STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness", "avg")


@dataclass(frozen=True)
class PaperNumber:
    paper: str  # file stem in shared/papers: pcc-tuning, sts-regression, hicl, ccl-csts
    table: str  # "Table 1", "Eq. 7", ...
    setting: str  # the row: backbone + method (+ hyperparameters)
    task: str  # STS12 ... SICKRelatedness, avg, or a named quantity
    value: float
    note: str = ""


def seven(paper: str, table: str, setting: str, values: tuple[float, ...], note: str = "") -> list[PaperNumber]:
    """A row of the usual seven STS tasks plus their average, in ``SEVEN`` order."""
    if len(values) != len(SEVEN):
        raise ValueError(f"{paper} {table} {setting}: expected {len(SEVEN)} values, got {len(values)}")
    return [PaperNumber(paper, table, setting, task, v, note) for task, v in zip(SEVEN, values, strict=True)]


def average(paper: str, table: str, setting: str, value: float, note: str = "") -> list[PaperNumber]:
    """A row that reports only the seven-task average."""
    return [PaperNumber(paper, table, setting, "avg", value, note)]


class ReportedNumbers:
    """One paper's reported numbers: ``lookup``, ``value`` and ``compare`` by table, setting and task."""

    def __init__(self, paper: str, numbers: Iterable[PaperNumber]):
        self.paper = paper
        self.numbers: tuple[PaperNumber, ...] = tuple(numbers)
        strangers = {n.paper for n in self.numbers} - {paper}
        if strangers:
            raise ValueError(f"ReportedNumbers({paper!r}) was given numbers of {sorted(strangers)}")
        seen: set[tuple[str, str, str]] = set()
        for n in self.numbers:
            key = (n.table, n.setting, n.task)
            if key in seen:
                raise ValueError(f"{paper}: {key} is reported twice")
            seen.add(key)

    def __len__(self) -> int:
        return len(self.numbers)

    def lookup(
        self, table: str | None = None, setting: str | None = None, task: str | None = None
    ) -> list[PaperNumber]:
        return [
            n
            for n in self.numbers
            if (table is None or n.table == table)
            and (setting is None or n.setting == setting)
            and (task is None or n.task == task)
        ]

    def value(self, table: str, setting: str, task: str = "avg") -> float:
        found = self.lookup(table, setting, task)
        if len(found) != 1:
            known = sorted({n.setting for n in self.lookup(table)})
            raise KeyError(
                f"{self.paper} {table}: no number for setting {setting!r}, task {task!r}; settings in that table: "
                f"{known}"
            )
        return found[0].value

    def compare(
        self, ours: Mapping[str, float], table: str, setting: str, *, our_setting: str = "", note: str = ""
    ) -> list[dict]:
        """Rows ``ours | paper | delta`` for every task of ``ours`` that the paper reports for that setting."""
        rows = []
        for task, our_value in ours.items():
            found = self.lookup(table, setting, task)
            if not found:
                continue
            theirs = found[0].value
            rows.append(
                {
                    "paper": self.paper,
                    "table": table,
                    "setting": setting if not our_setting else f"{our_setting} vs {setting}",
                    "task": task,
                    "ours": float(our_value),
                    "paper_value": theirs,
                    "delta": float(our_value) - theirs,
                    "note": note,
                }
            )
        if not rows:
            raise KeyError(f"{self.paper} {table} {setting!r}: none of the tasks {list(ours)} is reported there")
        return rows


def comparison_table(rows: list[dict]) -> str:
    """Comparison rows as a text table for printing: table | our setting | paper row | task | ours | paper | delta.

    Columns are as wide as their longest entry: setting names are never cut. A row made with ``our_setting`` shows
    our setting and the paper's row apart; otherwise both columns name the paper's row.
    """
    lines = []
    for r in rows:
        mine, _, theirs = r["setting"].partition(" vs ")
        lines.append(
            (r["table"], mine, theirs or mine, r["task"], r["ours"], r["paper_value"], r["delta"], r.get("note", ""))
        )
    header = ("table", "ours", "paper row", "task", "ours", "paper", "delta", "note")
    widths = [max([len(header[i])] + [len(str(line[i])) for line in lines]) for i in range(4)]
    text = [
        "  ".join(h.ljust(w) for h, w in zip(header[:4], widths, strict=True))
        + f"{'ours':>9}{'paper':>9}{'delta':>8}  note"
    ]
    text.append("-" * len(text[0]))
    for table, mine, theirs, task, ours, paper, delta, note in lines:
        names = "  ".join(str(v).ljust(w) for v, w in zip((table, mine, theirs, task), widths, strict=True))
        text.append(f"{names}{ours:>9.2f}{paper:>9.2f}{delta:>+8.2f}  {note}".rstrip())
    return "\n".join(text)
