"""Progress bars for every loop a student waits on: one per fit (``stsnb.training.train.fit``) and per evaluation
(``SentenceEncoder.encode``, and an evaluation's sentences over all its tasks), with the steps, the rate, the time
left and the latest figures (loss, dev score).

- **In JupyterLab** (or a terminal): a ``tqdm.auto`` bar (a widget in JupyterLab), shown once its loop has run
  ``DELAY`` seconds, so a quick loop shows nothing.
- **In a batch run** (``stsnb run`` sets ``TQDM_DISABLE=1`` for its kernels), and wherever stderr is no terminal (a
  training process started by torchrun, a log file): no bar, since a saved notebook would show a widget stuck at 0%
  and a log would fill with carriage returns, but plain lines (:meth:`Bar.line`, ``train 40/120 steps, 2.10
  steps/s, 38 s left, dev 66.50``), and one at the end. They go to the file ``$STSNB_PROGRESS_LOG`` names (``stsnb
  run`` names one per notebook and shows its latest line in the terminal: a line after ``LOG_DELAY`` seconds, then
  every ``LOG_EVERY``) or else to the process's own stderr (after ``LINE_DELAY``, then every ``LINE_EVERY``), never
  into the notebook.
- **Nested**: a bar opened while another is open (:func:`bar`) joins it when both count the same unit (the encoding
  inside an evaluation advances the evaluation's bar) and stays silent otherwise (a fit's dev evaluations open no
  bars of their own).

tqdm's notebook bar ignores ``TQDM_DISABLE`` (it passes ``disable=False`` itself), so :func:`progress` and
:class:`Bar` read the variable themselves.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

DELAY = 2.0  # seconds before a Jupyter or terminal bar appears
LINE_DELAY = 10.0  # seconds before the first plain line on stderr: a loop shorter than that writes none
LINE_EVERY = 30.0  # seconds between plain lines on stderr
LOG_DELAY = 2.0  # the same in the progress log, which nobody reads line by line: ``stsnb run`` shows the latest
LOG_EVERY = 2.0
PROGRESS_LOG_ENV = "STSNB_PROGRESS_LOG"  # the file plain lines are appended to (``stsnb run``: one per notebook)


def quiet() -> bool:
    """True in a batch run (``TQDM_DISABLE=1``)."""
    return os.environ.get("TQDM_DISABLE") == "1"


def progress(iterable: Iterable | None = None, **kwargs: Any):
    """``tqdm.auto.tqdm(iterable, **kwargs)``, disabled in a batch run unless ``disable`` is given."""
    from tqdm import auto

    kwargs.setdefault("disable", quiet())
    return auto.tqdm(iterable, **kwargs)


def in_jupyter() -> bool:
    """Whether this process is a Jupyter kernel (where ``tqdm.auto`` draws a widget)."""
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    ipython = shell.get_ipython()
    return ipython is not None and getattr(ipython, "kernel", None) is not None


def plain_lines() -> bool:
    """Whether bars become plain lines here: in a batch run, and wherever stderr is neither Jupyter nor a terminal."""
    if quiet():
        return True
    if in_jupyter():
        return False
    stream = sys.stderr
    return not (stream is not None and hasattr(stream, "isatty") and stream.isatty())


def hours(seconds: float) -> str:
    """``38 s`` under 90 seconds, ``51 min`` under an hour, else ``3.1 h``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 3600 else f"{seconds / 3600:.1f} h"


def plural(unit: str) -> str:
    """``steps``, ``processes``."""
    return f"{unit}es" if unit.endswith(("s", "x", "ch", "sh")) else f"{unit}s"


def rate_text(per_second: float, unit: str) -> str:
    """``2.10 steps/s``, or ``4.80 s/step`` below one per second."""
    if per_second >= 1:
        return f"{per_second:.2f} {plural(unit)}/s"
    return f"{1 / per_second:.2f} s/{unit}"


def write_line(line: str) -> None:
    """Append ``line`` to ``$STSNB_PROGRESS_LOG`` (one write, so processes sharing the file do not interleave), else
    write it to this process's own stderr (``sys.__stderr__``: never a notebook's output)."""
    path = os.environ.get(PROGRESS_LOG_ENV)
    if path:
        with contextlib.suppress(OSError):
            with open(path, "a", encoding="utf-8") as log:
                log.write(line + "\n")
            return
    stream = sys.__stderr__
    if stream is not None:
        with contextlib.suppress(OSError, ValueError):
            stream.write(line + "\n")
            stream.flush()


class Bar:
    """A bar over ``total`` units (``unit``: "step", "sentence"), from ``initial``: a ``tqdm.auto`` bar, plain lines
    (:func:`plain_lines`), or nothing (``enabled=False``). :meth:`update` moves it, :meth:`show` sets the latest
    figures shown beside it (``loss="0.1234"``, ``dev="66.50"``), :meth:`close` ends it. Its rate and time left
    (:meth:`rate`, :meth:`left`) count only the units of this bar's own run, not those it resumed from. ``leave``:
    whether a Jupyter bar stays once closed. ``clock`` and ``write`` (where plain lines go) are for tests."""

    def __init__(
        self,
        total: int,
        desc: str,
        unit: str = "step",
        *,
        initial: int = 0,
        enabled: bool = True,
        leave: bool = True,
        clock: Callable[[], float] = time.monotonic,
        write: Callable[[str], None] = write_line,
    ) -> None:
        self.total, self.desc, self.unit, self.enabled = total, desc, unit, enabled
        self.n = self.first = initial
        self.clock, self.write = clock, write
        self.started = clock()
        self.fields: dict[str, str] = {}
        self.lines = enabled and plain_lines()
        logged = write is write_line and bool(os.environ.get(PROGRESS_LOG_ENV))  # to the log: read one at a time
        self.delay, self.every = (LOG_DELAY, LOG_EVERY) if logged else (LINE_DELAY, LINE_EVERY)
        self.next_line = self.started + self.delay
        self.written = 0
        self.closed = False
        self.tqdm = None
        if enabled and not self.lines:
            from tqdm import auto

            self.tqdm = auto.tqdm(
                total=total, initial=initial, desc=desc, unit=unit, delay=DELAY, leave=leave, disable=False
            )

    def elapsed(self) -> float:
        return self.clock() - self.started

    def rate(self) -> float | None:
        """Units per second since this bar started (None before the first unit)."""
        done, seconds = self.n - self.first, self.elapsed()
        return done / seconds if done > 0 and seconds > 0 else None

    def left(self) -> float | None:
        """Seconds to the total at the rate so far (None before the first unit)."""
        rate = self.rate()
        return None if rate is None else max(0, self.total - self.n) / rate

    def line(self) -> str:
        """``train 40/120 steps, 2.10 steps/s, 38 s left, loss 0.1234, dev 66.50``; at the end ``... done in 57 s``."""
        parts = [f"{self.desc} {self.n:,}/{self.total:,} {plural(self.unit)}"]
        rate = self.rate()
        if rate is not None:
            parts.append(rate_text(rate, self.unit))
            parts.append(f"done in {hours(self.elapsed())}" if self.closed else f"{hours(self.left() or 0)} left")
        parts += [f"{name} {value}" for name, value in self.fields.items()]
        return ", ".join(parts)

    def update(self, n: int = 1) -> None:
        if not self.enabled:
            return
        self.n += n
        if self.tqdm is not None:
            self.tqdm.update(n)
        elif self.lines and self.clock() >= self.next_line:
            self._write()

    def show(self, **fields: str) -> None:
        """Figures shown beside the bar until replaced: ``show(loss="0.1234")``, ``show(dev="66.50")``."""
        if not self.enabled:
            return
        self.fields.update(fields)
        if self.tqdm is not None:
            self.tqdm.set_postfix(self.fields, refresh=False)

    def _write(self) -> None:
        self.write(self.line())
        self.written += 1
        self.next_line = self.clock() + self.every

    def close(self) -> None:
        """End the bar: a Jupyter bar stops (and stays, with ``leave``); plain lines end with one saying how long it
        took, where the loop ran long enough to write any or to be worth one."""
        if self.closed:
            return
        self.closed = True
        if self.tqdm is not None:
            self.tqdm.close()
        elif self.lines and (self.written or self.elapsed() >= self.delay):
            self.write(self.line())


_OPEN: contextvars.ContextVar[Bar | None] = contextvars.ContextVar("stsnb_open_bar", default=None)


@contextlib.contextmanager
def bar(total: int, desc: str, unit: str = "step", **kwargs: Any) -> Iterator[Bar]:
    """A :class:`Bar` for the ``with`` block, closed at its end. Inside another bar's block no second bar appears:
    the outer one is returned when it counts the same ``unit`` (the inner loop's updates move it), else a silent
    one."""
    outer = _OPEN.get()
    if outer is not None:
        yield outer if outer.unit == unit else Bar(total, desc, unit, enabled=False)
        return
    opened = Bar(total, desc, unit, **kwargs)
    token = _OPEN.set(opened)
    try:
        yield opened
    finally:
        _OPEN.reset(token)
        opened.close()
