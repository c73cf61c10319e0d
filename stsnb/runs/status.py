"""``stsnb status``: where a plan's run stands, read from its output folder alone, so that it works from a login node
while a batch job runs elsewhere (it starts nothing and asks no process).

For each notebook of the plan: its state (running, stopped, failed, ok, not run), from the folders the runner keeps
(``stsnb.runs.execution``: ``.partial-<nb>`` while it runs, ``<nb>/`` once ok, ``<nb>.failed/`` otherwise); how long
it has run against its timeout (``runner.json``, ``stsnb.runs.resume``); the fit in progress, its step, its measured
pace and its projected end against the timeout (``fit-progress.json``, ``stsnb.training.heartbeat``; the projection is
``stsnb.training.progress.pace_line``'s, the line a fit prints a few minutes in: the fits after the current one are
not in it); and for a finished notebook whether ``stsnb run --resume`` would skip it.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..training import heartbeat
from ..training.progress import hours, pace_line
from .resume import read_record, short, skip_reason, source_state
from .summary import read_status, run_seconds

STALE_SECONDS = 900  # a heartbeat older than this, in a fit that has one, is named as such


@dataclass(frozen=True)
class NotebookStatus:
    notebook: str
    state: str  # running | stopped | failed | ok | not run
    detail: str  # one line: times, the fit in progress, why it failed, what --resume does

    def line(self, width: int) -> str:
        return f"{self.notebook:<{width}}  {self.state:<8}  {self.detail}".rstrip()


def duration(seconds: float) -> str:
    """``42 s`` under a minute, else ``hours`` (``51 min``, ``3.1 h``)."""
    return f"{seconds:.0f} s" if seconds < 60 else hours(seconds)


def _runner_alive(profile_dir: Path, name: str) -> bool | None:
    """Whether the runner that holds ``.lock-<nb>`` is alive: None when that cannot be told from here (no lock file,
    or a runner on another host)."""
    from ..training.file_lock import holder, holder_alive

    path = profile_dir / f".lock-{name}"
    return holder_alive(holder(path)) if path.is_file() else None


def fit_text(beat: dict, elapsed: float | None, timeout: float | None, now: float) -> str:
    """The fit a heartbeat describes: ``fit 3 (key): step ...: pace, projected end`` (``pace_line``), and its age."""
    if not beat:
        return "no fit yet"
    head = f"fit {beat.get('fit', '?')}"
    step, total, pace = int(beat.get("step", 0)), int(beat.get("total", 0)), beat.get("seconds_per_step")
    if beat.get("state") == "done":
        text = f"{head} done at step {step:,}/{total:,}"
    elif pace:
        text = f"{head}: {pace_line(step, total, float(pace), elapsed, timeout)}"
    else:
        text = f"{head}: step {step:,}/{total:,} (no pace yet)"
    if beat.get("best_dev") is not None:
        text += f"; best dev {float(beat['best_dev']):.4g}"
    age = now - float(beat.get("updated", now))
    return text + (f"; last heartbeat {hours(age)} ago" if age > STALE_SECONDS else "")


def notebook_status(profile_dir: Path, name: str, values: dict | None, source: str, now: float) -> NotebookStatus:
    """One notebook's status from its folders."""
    partial, good, failed = profile_dir / f".partial-{name}", profile_dir / name, profile_dir / f"{name}.failed"
    if partial.is_dir():
        record = read_record(partial)
        started, timeout = record.get("started"), record.get("timeout")
        elapsed = now - float(started) if started else None
        limit = f"of its {hours(float(timeout))} timeout" if timeout else "(no timeout)"
        ran = f"{duration(elapsed)} {limit}" if elapsed is not None else "start unknown"
        beat = heartbeat.read(partial / heartbeat.HEARTBEAT_FILE)
        alive = _runner_alive(profile_dir, name)
        state = "stopped" if alive is False else "running"
        gone = "; its runner is gone (stsnb run --resume goes on from its checkpoints)" if alive is False else ""
        return NotebookStatus(name, state, f"{ran}; {fit_text(beat, elapsed, timeout, now)}{gone}")
    ok = read_status(good) == "ok"
    failed_status = read_status(failed)
    if failed_status and (not ok or failed.stat().st_mtime > good.stat().st_mtime):
        reason = failed_status.removeprefix("failed:").strip()
        beat = heartbeat.read(failed / heartbeat.HEARTBEAT_FILE)
        where = f"; stopped at {fit_text(beat, None, None, now)}" if beat else ""
        kept = "; an earlier good result is kept" if ok else ""
        return NotebookStatus(name, "failed", f"{reason}{where}{kept}")
    if ok:
        seconds = run_seconds(good, name)
        record = read_record(good)
        took = duration(seconds) if seconds is not None else "time unknown"
        at = f" at {short(str(record['source']))}" if record.get("source") else ""
        skips = ""
        if values is not None:
            skip, why = skip_reason(profile_dir, name, values, source)
            skips = "; --resume skips it" if skip else f"; --resume runs it again ({why})"
        return NotebookStatus(name, "ok", f"{took}{at}{skips}")
    return NotebookStatus(name, "not run", "")


def plan_status(profile_dir: Path, notebooks: dict[str, dict] | Sequence[str], now: float | None = None) -> str:
    """The status of every notebook of a plan (``notebooks``: name -> plan values, or names alone) in
    ``profile_dir``, as the lines ``stsnb status`` prints."""
    now = time.time() if now is None else now
    profile_dir = Path(profile_dir)
    source = source_state()
    values = notebooks if isinstance(notebooks, dict) else dict.fromkeys(notebooks)
    rows = [notebook_status(profile_dir, name, values[name], source, now) for name in values]
    width = max([len(row.notebook) for row in rows] + [8])
    stamp = dt.datetime.fromtimestamp(now).astimezone().strftime("%Y-%m-%d %H:%M %Z")
    counts = {state: sum(row.state == state for row in rows) for state in ("running", "ok", "failed", "stopped")}
    head = ", ".join(f"{n} {state}" for state, n in counts.items() if n) or "nothing run yet"
    return "\n".join(
        [f"stsnb status: {profile_dir} at {stamp} ({head}; this checkout {short(source)})"]
        + [row.line(width) for row in rows]
    )
