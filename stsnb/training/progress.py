"""Progress bars that a batch run keeps quiet: ``tqdm.auto`` with ``TQDM_DISABLE=1`` honoured in Jupyter too.

``stsnb run`` sets ``TQDM_DISABLE=1`` for its kernels. The terminal bar reads the variable, but tqdm's notebook bar
passes ``disable=False`` itself and so ignores it: its widget is saved in the executed notebook, and a static view
(GitHub, the book) shows a loop stuck at 0%. ``progress`` passes the variable's value explicitly.

A batch run has no bar, so each fit prints its pace once, a few minutes in (:class:`Pace`, called by
``stsnb.training.train.fit``): the measured seconds per optimizer step and when the fit would end, against the
notebook's plan timeout that ``stsnb run`` gives its kernel (``step 120/14,720: 0.21 s/step, done in about 51 min,
3.1 h into the notebook of its 41.0 h timeout``), so a paper run that cannot finish in time says so in its first hour.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any


def quiet() -> bool:
    """True in a batch run (``TQDM_DISABLE=1``)."""
    return os.environ.get("TQDM_DISABLE") == "1"


def progress(iterable: Iterable | None = None, **kwargs: Any):
    """``tqdm.auto.tqdm(iterable, **kwargs)``, disabled in a batch run unless ``disable`` is given."""
    from tqdm import auto

    kwargs.setdefault("disable", quiet())
    return auto.tqdm(iterable, **kwargs)


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


def hours(seconds: float) -> str:
    """``51 min`` under an hour, else ``3.1 h``."""
    return f"{seconds / 60:.0f} min" if seconds < 3600 else f"{seconds / 3600:.1f} h"


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
    time ``after`` seconds of training have passed in this call (steps a resumed fit skipped do not count), then
    None. ``clock``: ``time.monotonic`` unless a test passes its own."""

    def __init__(self, total: int, step: int, after: float = PACE_AFTER_SECONDS, clock=None) -> None:
        import time

        self.clock = clock or time.monotonic
        self.total, self.first_step, self.after = total, step, after
        self.started = self.clock()
        self.reported = False

    def update(self, step: int) -> str | None:
        if self.reported or step <= self.first_step:
            return None
        seconds = self.clock() - self.started
        if seconds < self.after:
            return None
        self.reported = True
        elapsed, timeout = notebook_clock()
        return pace_line(step, self.total, seconds / (step - self.first_step), elapsed, timeout)
