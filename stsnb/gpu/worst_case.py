"""Which estimates of ``stsnb run --check`` took the worst case: a length or count that falls back to its cap (every
text at the cap) because the texts it is measured on are not in the data folder. The check collects them per notebook
(:func:`collecting`) and marks that notebook's rows; the measuring functions (``plan_check.measured_length``,
``measured_or_cap``, the papers' own fallbacks) say so with :func:`note`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

_collected: list[list[str]] = []


def note(what: str) -> None:
    """An estimate fell back to its worst case (kept only while the check collects)."""
    if _collected:
        _collected[-1].append(what)


@contextlib.contextmanager
def collecting() -> Iterator[list[str]]:
    """The worst cases noted inside the block."""
    found: list[str] = []
    _collected.append(found)
    try:
        yield found
    finally:
        _collected.pop()
