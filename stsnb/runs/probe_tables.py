"""The committed tables of the training probes (``benchmarks/bench_*_moves.py``), read back for the notebooks.

A probe asks whether a setting moves a backbone at all: last weights minus the untrained backbone on the same
STS-B dev pairs, a paired bootstrap interval with its verdict, the loss at the start and the end, the wall time.
A notebook chooses its ``cpu`` setting from such a grid and prints the committed rows rather than quoting numbers by
hand, so what the reader sees is what the probe wrote (``benchmarks/results/<probe>.json``, with the command and
machine in ``<probe>.md``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from .context import REPO_ROOT

RESULTS_DIR = REPO_ROOT / "benchmarks" / "results"
REQUIRED = ("setting", "dev_before", "dev_after", "difference", "low", "high", "verdict", "loss_first", "loss_last")


def row_line(row: Mapping) -> str:
    """One probe row as the benchmarks print it: setting (and seed), dev before -> after, the paired difference
    with its interval and verdict, the loss first -> last, steps and seconds."""
    seed = f" seed {row['seed']}" if "seed" in row else ""
    return (
        f"{row['setting']}{seed}: dev {row['dev_before']:.2f} -> {row['dev_after']:.2f}, "
        f"{row['difference']:+.2f} [{row['low']:+.2f}, {row['high']:+.2f}] {row['verdict']}; "
        f"loss {row['loss_first']:.3f} -> {row['loss_last']:.3f}; {row['steps']} steps, {row['seconds']:.0f} s"
    )


def add(rows: list[dict], row: dict, json_path: str | Path | None = None) -> None:
    """A benchmark's new row: appended to ``rows``, printed, and all rows so far written to ``json_path`` (if any),
    so an interrupted grid keeps what it measured."""
    rows.append(row)
    print(row_line(row), flush=True)
    if json_path:
        Path(json_path).write_text(json.dumps(rows, indent=1))


def load(name: str, results_dir: Path = RESULTS_DIR) -> list[dict]:
    """The rows of ``<results_dir>/<name>.json``; a missing file or a row without the fields a table shows raises
    with the file named."""
    path = results_dir / f"{name}.json"
    if not path.is_file():
        raise FileNotFoundError(f"no committed probe table {path.name} in {results_dir} (run benchmarks/{name}.py)")
    rows = json.loads(path.read_text())
    for index, row in enumerate(rows):
        missing = [key for key in REQUIRED if key not in row]
        if missing:
            raise ValueError(f"{path.name}: row {index} lacks {missing}")
    return rows


def table(rows: Sequence[Mapping]) -> str:
    """The rows as printed lines, one per setting and seed."""
    return "\n".join(row_line(row) for row in rows)
