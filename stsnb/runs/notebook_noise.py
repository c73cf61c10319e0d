"""What a reader should not see in an executed notebook (Jupyter, GitHub, the book): the output-noise check.

``output_noise(notebook)`` lists, per cell, an ``Out[]`` value holding a path (a ``run.record(...)`` or
``plots.save(...)`` left as a cell's last expression), an absolute machine path (``/tmp/...``, ``/home/...``: run
folders are shown relative to the repository, ``Run.location``), text on stderr (library warnings; a batch run's
progress bars are off, so stderr holds only noise) and progress widgets, which a static view shows stuck at 0%.
The smoke-run test applies it to every executed notebook of the smoke plan, the committed-runs test to the cpu runs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

MACHINE_PATH = re.compile(r"(?<![\w.])/(tmp|work|root|home|Users|var|opt)/")
WIDGET = "application/vnd.jupyter.widget-view+json"


def _text(output: Mapping[str, Any]) -> str:
    text = output.get("text", "")
    plain = output.get("data", {}).get("text/plain", "")
    return ("".join(text) if isinstance(text, list) else text) + ("".join(plain) if isinstance(plain, list) else plain)


def output_noise(notebook: Mapping[str, Any]) -> list[str]:
    """One line per problem, naming the cell (0-based index among all cells) and quoting the start of the text."""
    problems = []
    for index, cell in enumerate(notebook.get("cells", [])):
        for output in cell.get("outputs", []):
            text = _text(output)
            first = text.strip().splitlines()[0][:100] if text.strip() else ""
            if output.get("output_type") == "execute_result" and "Path(" in text:
                problems.append(f"cell {index}: Out[] shows a path: {first}")
            match = MACHINE_PATH.search(text)
            if match:
                start = max(0, match.start() - 30)
                problems.append(f"cell {index}: a machine path: ...{text[start : match.end() + 40]!r}")
            if output.get("output_type") == "stream" and output.get("name") == "stderr" and text.strip():
                problems.append(f"cell {index}: text on stderr: {first}")
            if WIDGET in output.get("data", {}):
                problems.append(f"cell {index}: a progress widget (a static view shows it at 0%)")
    return problems
