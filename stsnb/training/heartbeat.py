"""A fit's heartbeat: where the fit in progress stands, in a small file that ``stsnb status`` reads from a login node
while a batch job runs (it reads only files, never the job's processes).

``stsnb run`` names the file for each notebook's kernel in ``$STSNB_FIT_HEARTBEAT`` (``fit-progress.json`` in the
notebook's run folder), which its torchrun workers inherit; the main process of every ``stsnb.training.train.fit``
rewrites it (atomically) when the fit starts, at each dev evaluation, at most every :data:`EVERY_SECONDS` between
them, and when the fit ends: which fit of the notebook this is, its checkpoint key, the optimizer step of the total,
the measured seconds per step (evaluations included) and the best dev score so far. Without the variable (a notebook
opened in JupyterLab) nothing is written.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

HEARTBEAT_ENV = "STSNB_FIT_HEARTBEAT"
HEARTBEAT_FILE = "fit-progress.json"
EVERY_SECONDS = 30.0


def read(path: Path) -> dict[str, Any]:
    """A heartbeat file's fields ({} when missing or unreadable)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class Heartbeat:
    """One fit's heartbeat (inert without ``$STSNB_FIT_HEARTBEAT``). ``clock``: ``time.time`` unless a test passes
    its own."""

    def __init__(self, total: int, step: int, key: str | None, clock=time.time) -> None:
        self.clock = clock
        target = os.environ.get(HEARTBEAT_ENV, "").strip()
        self.path = Path(target) if target else None
        earlier = read(self.path) if self.path is not None else {}
        self.fields: dict[str, Any] = {
            "fit": int(earlier.get("fit", 0)) + 1,  # the fits of this notebook so far, this one included
            "key": key,
            "step": step,
            "first_step": step,  # where this call started (a resumed fit's checkpoint)
            "total": total,
            "started": clock(),
            "seconds_per_step": None,
            "best_dev": None,
            "state": "training",
        }
        self.written = float("-inf")
        self.update(step, force=True)

    def update(self, step: int, best_dev: float | None = None, force: bool = False, done: bool = False) -> None:
        """The fit stands at ``step``: rewritten when ``force`` or ``done``, or :data:`EVERY_SECONDS` after the last."""
        if self.path is None:
            return
        now = self.clock()
        if not (force or done or now - self.written >= EVERY_SECONDS):
            return
        fields = self.fields
        taken = step - fields["first_step"]
        fields.update(step=step, updated=now, state="done" if done else "training")
        if taken > 0:
            fields["seconds_per_step"] = (now - fields["started"]) / taken
        if best_dev is not None:
            fields["best_dev"] = best_dev
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            temporary.write_text(json.dumps(fields) + "\n")
            temporary.replace(self.path)
        except OSError:  # a status file must never stop a fit (its folder moved, a full disk)
            return
        self.written = now
