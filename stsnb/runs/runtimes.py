"""How long a notebook takes, measured: the runtime of its last successful run of each profile, which every
notebook prints at its top (``print(runtimes.text("20_sts_regression"))``).

The runtimes are read from the run folders ``papermill_runs/<profile>/<notebook>/`` as summary.md reads them
(``summary.run_seconds``: papermill's duration in the executed notebook, else metrics.json ``seconds``), with the cores
(env.json ``cpu_count``) and the commit the run came from; nothing is typed into a notebook, so a new run updates
the text. Only a run that ended ``ok`` is kept there (``stsnb.runs.execution``); the smoke, class and cpu runs are
committed with the repository, and a reader's own run of a profile replaces its committed one in their checkout.

While ``stsnb run`` executes a notebook (``STSNB_RUN_DIR`` names its scratch folder ``<profile>/.partial-<notebook>``),
the kept run of that profile is the *previous* one, which this run replaces: its line prints no duration, only where
this run's own is (summary.md and the cell that finishes the run, ``run.finish``), so the executed notebook never
shows an older run's time for its own profile (notebook 40's cpu run once printed 1,053 s for a run of 720 s; the
class runs printed their predecessors' times, 305 s for a run of 267 s). The other profiles' lines name the commit
their run came from.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from . import summary
from .context import RUN_DIR_ENV
from .plans import DEFAULT_OUT

PROFILES = ("smoke", "class", "cpu")  # the profiles a student runs (paper and rehearsal need GPUs)
THIS_RUN = "this run: its time is in summary.md and in the cell that finishes the run"  # the running profile's line


class Measured(NamedTuple):
    """One kept run: its duration, the CPU cores of its machine (0: not recorded) and its commit ("": not recorded)."""

    seconds: float
    cores: int
    commit: str


def measured(notebook: str, root: Path = DEFAULT_OUT, profiles: Sequence[str] = PROFILES) -> dict[str, Measured | None]:
    """``{profile: Measured or None}`` from the kept run of each profile (``<root>/<profile>/<notebook>/``); None
    where there is none, or where it recorded no duration."""
    out: dict[str, Measured | None] = {}
    for profile in profiles:
        folder = Path(root) / profile / notebook
        seconds = summary.run_seconds(folder, notebook) if folder.is_dir() else None
        if seconds is None:
            out[profile] = None
            continue
        cores = summary.read_env(folder).get("cpu_count")
        out[profile] = Measured(seconds, cores if isinstance(cores, int) else 0, summary.run_commit(folder) or "")
    return out


def duration(seconds: float) -> str:
    """``724 s (about 12 min)``; under a minute just ``12 s``."""
    text = f"{seconds:,.0f} s"
    return text if seconds < 60 else f"{text} (about {seconds / 60:.0f} min)"


def running_profile(notebook: str) -> str | None:
    """The profile ``stsnb run`` is executing ``notebook`` for right now (its scratch folder, ``STSNB_RUN_DIR``, is
    ``<out>/<profile>/.partial-<notebook>``), None outside such a run."""
    folder = os.environ.get(RUN_DIR_ENV)
    if not folder:
        return None
    path = Path(folder)
    return path.parent.name if path.name == f".partial-{notebook}" else None


def text(notebook: str, root: Path = DEFAULT_OUT, profiles: Sequence[str] = PROFILES) -> str:
    """A heading line and one line per profile: the measured runtime of its last successful run and its commit, or
    that there is no run yet. The cores go into the heading when every run had the same number, else on each line;
    no machine path is printed."""
    found = measured(notebook, root, profiles)
    cores = {m.cores for m in found.values() if m is not None}
    shared = cores.pop() if len(cores) == 1 else None
    on = f", on {shared} CPU cores" if shared else ""
    running = running_profile(notebook)
    lines = [f"measured runtime of this notebook (its last successful run of each profile{on}):"]
    for profile, m in found.items():
        now = profile == running
        if now:
            lines.append(f"  {profile:<6} {THIS_RUN}")
            continue
        if m is None:
            lines.append(f"  {profile:<6} no run of this profile yet")
            continue
        where = "" if shared else (f", on {m.cores} CPU cores" if m.cores else ", cores not recorded")
        commit = f", run at commit {m.commit}" if m.commit else ""
        lines.append(f"  {profile:<6} {duration(m.seconds)}{where}{commit}")
    return "\n".join(lines)
