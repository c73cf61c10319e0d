"""The line ``stsnb run`` shows for the notebook it is running: which cell, how long, and the latest progress line its
fits and evaluations wrote (``stsnb.models.progress``: plain lines appended to ``$STSNB_PROGRESS_LOG``, one file per
notebook).

On a terminal it is one line, rewritten in place about once a second and replaced by the notebook's result when it
ends (``[stsnb run] 3/6 20_sts_regression: 95 s, cell 19/54, train 40/120 steps, 2.10 steps/s, 38 s left``). In a
log (CI, ``stsnb run --parallel``'s relay, a file) it is a plain line at most every ``PLAIN_EVERY`` seconds, and only
when the notebook wrote a new progress line.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from pathlib import Path
from typing import TextIO

PLAIN_EVERY = 60.0  # seconds between lines in a log


class LiveLine:
    """``prefix`` (``[stsnb run] 3/6 20_sts_regression: ``) and what the notebook is doing, shown on ``stream`` from
    :meth:`start` to :meth:`stop` by a background thread; :meth:`cell` says which cell runs. ``progress_log``: the
    file whose last line is shown. On a terminal :meth:`stop` clears the line, so the next one replaces it."""

    def __init__(
        self,
        prefix: str,
        progress_log: Path,
        stream: TextIO | None = None,
        interval: float = 1.0,
        plain_every: float = PLAIN_EVERY,
    ) -> None:
        self.prefix, self.progress_log = prefix, Path(progress_log)
        self.stream = stream if stream is not None else sys.stderr
        self.interval, self.plain_every = interval, plain_every
        self.terminal = bool(getattr(self.stream, "isatty", lambda: False)())
        self.started = time.monotonic()
        self.where = ""  # "cell 19/54"
        self.latest = ""  # the last progress line the notebook wrote
        self.offset = 0
        self._lock = threading.Lock()  # ``cell`` (papermill's thread) and the reads (this line's) move ``offset``
        self.printed_at = -float("inf")
        self.printed = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="stsnb-live-line", daemon=True)

    def cell(self, index: int, count: int) -> None:
        """The notebook's cell ``index`` (0-based) of ``count`` has started: the progress shown so far was an
        earlier cell's, so it goes, and the log is read on from its present end."""
        with self._lock:
            self.where, self.latest = f"cell {index + 1}/{count}", ""
            self.offset = self.progress_log.stat().st_size if self.progress_log.is_file() else 0

    def read(self) -> str:
        """The last complete line appended to the progress log since the previous read ("" when none)."""
        with self._lock:
            try:
                with self.progress_log.open("rb") as log:
                    log.seek(self.offset)
                    chunk = log.read()
            except OSError:
                return ""
            end = chunk.rfind(b"\n")
            if end < 0:
                return ""
            self.offset += end + 1
        lines = chunk[:end].decode("utf-8", "replace").splitlines()
        return lines[-1].strip() if lines else ""

    def text(self) -> str:
        """The line as shown now: the prefix, the seconds so far, the cell and the latest progress line."""
        parts = [f"{time.monotonic() - self.started:.0f} s", self.where, self.latest]
        return self.prefix + ", ".join(part for part in parts if part)

    def show(self) -> None:
        """Read the log and show the line: in place on a terminal, as a new line in a log when there is news."""
        fresh = self.read()
        with self._lock:
            self.latest = fresh or self.latest
        if self.terminal:
            width = shutil.get_terminal_size((120, 24)).columns
            self._write(f"\r\x1b[K{self.text()[: max(20, width - 1)]}")
        elif fresh and fresh != self.printed and time.monotonic() - self.printed_at >= self.plain_every:
            self.printed, self.printed_at = fresh, time.monotonic()
            self._write(f"{self.text()}\n")

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            pass

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.show()

    def start(self) -> LiveLine:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop showing; on a terminal the line is cleared for the one that reports the notebook's result."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        if self.terminal:
            self._write("\r\x1b[K")
