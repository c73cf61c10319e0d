"""A fit's progress: its bar (``stsnb.models.progress``, re-exported here) and, once, its pace against the notebook's
timeout.

Each fit (``stsnb.training.train.fit``) has a :class:`~stsnb.models.progress.Bar` over its optimizer steps: a
``tqdm.auto`` bar in JupyterLab, plain lines in a batch run (``stsnb run`` shows the latest one per notebook), with
the latest loss and dev score beside it. From the same bar's measurement, each fit prints its pace once into the
notebook, a few minutes in (:class:`Pace`): the seconds per optimizer step and when the fit would end, against the
notebook's plan timeout that ``stsnb run`` gives its kernel (``step 120/14,720: 0.21 s/step, done in about 51 min,
3.1 h into the notebook of its 41.0 h timeout``), so a paper run on GPUs that cannot finish in time says so in its
first hour, in its torchrun workers as in the kernel.
"""

from __future__ import annotations

import os

from ..models.progress import Bar, bar, hours, progress, quiet

__all__ = ["Bar", "Pace", "bar", "hours", "notebook_clock", "pace_line", "progress", "quiet"]


# Set by ``stsnb run`` for a notebook's kernel (``stsnb.runs.execution.kernel_environment``) and inherited by its
# torchrun workers: when the notebook started (Unix time) and its plan timeout in seconds (absent: no limit).
NOTEBOOK_STARTED_ENV = "STSNB_NOTEBOOK_STARTED"
NOTEBOOK_TIMEOUT_ENV = "STSNB_NOTEBOOK_TIMEOUT"
PACE_AFTER_SECONDS = 180.0  # a fit's pace is printed once it has trained this long: past start-up, still early


def notebook_clock() -> tuple[float | None, float | None]:
    """``(seconds since the notebook started, its timeout in seconds)`` from the variables ``stsnb run`` sets; None
    for what is not set (an interactive kernel) or not a number."""
    import time

    def number(name: str) -> float | None:
        try:
            return float(os.environ[name])
        except (KeyError, ValueError):
            return None

    started = number(NOTEBOOK_STARTED_ENV)
    return (None if started is None else time.time() - started), number(NOTEBOOK_TIMEOUT_ENV)


def pace_line(step: int, total: int, seconds_per_step: float, elapsed: float | None, timeout: float | None) -> str:
    """``step 120/14,720: 0.21 s/step, done in about 51 min, 3.1 h into the notebook of its 41 h timeout``: a fit's
    measured pace, what is left of it, and (inside ``stsnb run``) when it would end against the notebook's timeout;
    a projection past the timeout says so."""
    left = (total - step) * seconds_per_step
    line = f"step {step:,}/{total:,}: {seconds_per_step:.2f} s/step, done in about {hours(left)}"
    if elapsed is None:
        return line
    end = elapsed + left
    if timeout is None:
        return f"{line}, {hours(end)} into the notebook (no timeout)"
    if end > timeout:
        return f"{line}, {hours(end)} into the notebook: PAST its {hours(timeout)} timeout"
    return f"{line}, {hours(end)} into the notebook of its {hours(timeout)} timeout"


class Pace:
    """A fit's pace, reported once: :meth:`update` after each optimizer step returns :func:`pace_line` the first
    time its bar (:class:`~stsnb.models.progress.Bar`: the steps and seconds of this call, not those a resumed fit
    skipped) has run ``after`` seconds, then None."""

    def __init__(self, steps: Bar, after: float = PACE_AFTER_SECONDS) -> None:
        self.steps, self.after = steps, after
        self.reported = False

    def update(self, step: int) -> str | None:
        if self.reported:
            return None
        rate = self.steps.rate()
        if rate is None or self.steps.elapsed() < self.after:
            return None
        self.reported = True
        elapsed, timeout = notebook_clock()
        return pace_line(step, self.steps.total, 1 / rate, elapsed, timeout)
