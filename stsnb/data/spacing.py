"""Lines of a data folder that are the reference's text spaced otherwise: the report of ``stsnb data verify``.

Public copies of the same data differ in how a tokenizer spaced it: two copies of SentEval's tree split possessives as
"'s" and "' s" (gold scores identical), and MTEB's STS12 writes one report number both as "A5-0323/2000" and
"A5-0323 / 2000". Such a line has the reference copy's letters, digits and punctuation in the same order; only its
spacing differs. ``stsnb data verify`` accepts it and reports it here (``--strict``: a failure), because a model
reads the other tokens and Spearman levels can move in the second decimal. The fetch writes the report into the
folder's SOURCES.md and ``spacing.json``, which every run copies into its ``env.json``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .loading import resolve_data_dir
from .records import DataError

REPORT_FILE = "spacing.json"  # in a fetched data folder: the spacing variants its verify found (none: empty)
SHOWN = 3  # lines shown side by side per table
WHY = "levels can move in the second decimal, since a model reads other tokens"


@dataclass
class SpacingVariants:
    """One table's lines whose text equals the reference's but for its spacing.

    ``lines_per_file``: how many lines per file; ``shown``: the first :data:`SHOWN`, each as
    ``[location, this copy's text, the same pair in the folder's other copy or ""]``."""

    table: str
    lines_per_file: dict[str, int] = field(default_factory=dict)
    shown: list[list[str]] = field(default_factory=list)

    @property
    def lines(self) -> int:
        return sum(self.lines_per_file.values())

    def add(self, location: str, text: str, other: str) -> None:
        file = location.rsplit(":", 1)[0] if ":" in location else location
        self.lines_per_file[file] = self.lines_per_file.get(file, 0) + 1
        if len(self.shown) < SHOWN:
            self.shown.append([location, text, other])

    def text(self) -> str:
        files = ", ".join(f"{name} {count}" for name, count in self.lines_per_file.items())
        head = f"{self.table}: {self.lines} lines spaced otherwise than the reference copy ({files})"
        rows = [
            f"      {where}: `{text}`" + (f"  (other copy: `{other}`)" if other else "")
            for where, text, other in self.shown
        ]
        return "\n".join([head, *rows])


def report_text(variants: list[SpacingVariants]) -> str:
    """The plain-text report (empty when nothing was spaced otherwise)."""
    if not variants:
        return ""
    total = sum(v.lines for v in variants)
    head = (
        f"{total} lines in {len(variants)} tables have the reference copy's letters, digits and punctuation but other "
        f"spacing (another tokenizer's version); accepted ({WHY}; --strict refuses them):"
    )
    return "\n".join([head, *(f"  - {v.text()}" for v in variants)])


def report_markdown(variants: list[SpacingVariants]) -> str:
    """The SOURCES.md section of the report."""
    lines = ["", "## Spacing variants", ""]
    if not variants:
        return "\n".join([*lines, "None: every line's text equals the reference copy's, spacing included.", ""])
    lines += [
        f"These lines have the reference copy's letters, digits and punctuation but other spacing; {WHY}.",
        "",
        "| table | lines per file | first lines (this copy; the same pair in the other copy) |",
        "|---|---|---|",
    ]
    for v in variants:
        files = "<br>".join(f"`{name}` {count}" for name, count in v.lines_per_file.items())
        shown = "<br>".join(
            f"{where}: `{text}`" + (f" ({other})" if other else "") for where, text, other in v.shown
        ).replace("|", "\\|")
        lines.append(f"| `{v.table}` | {files} | {shown} |")
    return "\n".join([*lines, ""])


def write_report(folder: Path, variants: list[SpacingVariants]) -> None:
    (folder / REPORT_FILE).write_text(json.dumps([asdict(v) for v in variants], indent=1) + "\n", encoding="utf-8")


def env_record() -> dict[str, Any] | None:
    """env.json ``data_spacing``: lines per table of the data folder spaced otherwise than the reference (``{}``:
    none); None when the source is the Hub or the folder has no report (not built by ``stsnb data fetch``;
    ``stsnb data verify`` prints it)."""
    try:
        path = resolve_data_dir() / REPORT_FILE
    except DataError:
        return None
    if not path.is_file():
        return None
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
        return {entry["table"]: sum(entry["lines_per_file"].values()) for entry in entries}
    except (ValueError, KeyError, TypeError):
        return {"unreadable": str(REPORT_FILE)}
