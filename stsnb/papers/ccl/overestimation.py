"""The over-estimation count of CCL Appendix A (Eq. 16-17) and Table 1's view of it.

A quadruple is *significantly over-estimated* when its positive condition's similarity is pushed too high *and*
its negative condition's too low (labels and cosines on the same [0, 1] scale)::

    Eq. 16:  cos_pos - l_pos > margin   and   l_neg - cos_neg > 0
    Eq. 17:  l_neg - cos_neg > margin   and   cos_pos - l_pos > 0      (our reading; see below)

with ``margin = 0.25`` (one label step of C-STS's 1..5 scale). The paper prints Eq. 17 as
``l_neg - cos(h_1^pos, h_2^pos) > 0.25`` and ``cos(h_1^pos, h_2^pos) - l_pos > 0``. Taken literally that needs
``l_neg > cos_pos + 0.25 > l_pos + 0.25``, impossible when ``l_pos >= l_neg`` (Section 3.1), so the literal Eq. 17
never fires and the count is Eq. 16 alone. We read it as the mirror image of Eq. 16 (negative under-estimated by
more than the margin, positive over-estimated at all): ``reading="mirror"`` (default); ``reading="literal"`` keeps
the printed form.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np

from .quadruples import Quadruple, scale_label

Reading = Literal["mirror", "literal"]
READINGS: tuple[Reading, ...] = ("mirror", "literal")


@dataclass(frozen=True)
class OverestimationCount:
    """How many quadruples satisfy Eq. 16, Eq. 17 and either (the Appendix A count), out of ``total``."""

    eq16: int
    eq17: int
    either: int
    total: int
    margin: float
    reading: str

    def to_dict(self) -> dict:
        return asdict(self)


def _arrays(*values) -> list[np.ndarray]:
    arrays = [np.asarray(v, dtype=np.float64) for v in values]
    if any(a.ndim != 1 for a in arrays) or len({len(a) for a in arrays}) != 1:
        shapes = [a.shape for a in arrays]
        raise ValueError(f"cos_pos, cos_neg, label_pos, label_neg must be 1-D of one length, got {shapes}")
    return arrays


def overestimated(
    cos_pos, cos_neg, label_pos, label_neg, margin: float = 0.25, reading: Reading = "mirror"
) -> tuple[np.ndarray, np.ndarray]:
    """Boolean masks (Eq. 16, Eq. 17) per quadruple; labels already scaled to [0, 1]."""
    if reading not in READINGS:
        raise ValueError(f"reading must be one of {READINGS}, got {reading!r}")
    cos_pos, cos_neg, label_pos, label_neg = _arrays(cos_pos, cos_neg, label_pos, label_neg)
    if np.any(label_pos < label_neg):
        raise ValueError("label_pos must be >= label_neg for every quadruple (CCL Section 3.1)")
    eq16 = (cos_pos - label_pos > margin) & (label_neg - cos_neg > 0)
    if reading == "mirror":
        eq17 = (label_neg - cos_neg > margin) & (cos_pos - label_pos > 0)
    else:
        eq17 = (label_neg - cos_pos > margin) & (cos_pos - label_pos > 0)
    return eq16, eq17


def count_overestimated(
    cos_pos, cos_neg, label_pos, label_neg, margin: float = 0.25, reading: Reading = "mirror"
) -> OverestimationCount:
    """Appendix A: the number of quadruples that satisfy Eq. 16 or Eq. 17."""
    eq16, eq17 = overestimated(cos_pos, cos_neg, label_pos, label_neg, margin, reading)
    return OverestimationCount(int(eq16.sum()), int(eq17.sum()), int((eq16 | eq17).sum()), len(eq16), margin, reading)


def quadruple_scores(
    quadruples: Sequence[Quadruple], predictions: Mapping[str, float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(cos_pos, cos_neg, label_pos, label_neg) of quadruples, from per-row predictions keyed by the rows' source
    (``file:line``); labels scaled to [0, 1]."""
    missing = [q.source_high for q in quadruples if q.source_high not in predictions]
    missing += [q.source_low for q in quadruples if q.source_low not in predictions]
    if missing:
        raise KeyError(f"{len(missing)} quadruple rows have no prediction, e.g. {missing[:3]}")
    cos_pos = np.array([predictions[q.source_high] for q in quadruples], dtype=np.float64)
    cos_neg = np.array([predictions[q.source_low] for q in quadruples], dtype=np.float64)
    label_pos = np.array([scale_label(q.label_high) for q in quadruples])
    label_neg = np.array([scale_label(q.label_low) for q in quadruples])
    return cos_pos, cos_neg, label_pos, label_neg


def run_flags(
    quadruples: Sequence[Quadruple], predictions: Mapping[str, float], margin: float = 0.25, reading: Reading = "mirror"
) -> tuple[OverestimationCount, np.ndarray]:
    """One run's Appendix A count and its flag per quadruple (Eq. 16 or Eq. 17), from per-row predictions."""
    scores = quadruple_scores(quadruples, predictions)
    eq16, eq17 = overestimated(*scores, margin, reading)
    count = OverestimationCount(int(eq16.sum()), int(eq17.sum()), int((eq16 | eq17).sum()), len(eq16), margin, reading)
    return count, eq16 | eq17


def wide_gaps(
    quadruples: Sequence[Quadruple], predictions: Mapping[str, float], margin: float = 0.25
) -> tuple[int, float]:
    """How many quadruples have ``cos_pos - cos_neg > margin``, and the largest gap. Eq. 16 and Eq. 17 (mirror) both
    need such a gap, because ``l_pos >= l_neg``: e.g. Eq. 16 gives ``cos_pos > l_pos + margin >= l_neg + margin >
    cos_neg + margin``. A run whose two conditions of a pair score within ``margin`` cannot over-estimate."""
    cos_pos, cos_neg, _, _ = quadruple_scores(quadruples, predictions)
    gap = cos_pos - cos_neg
    return int((gap > margin).sum()), float(gap.max())


@dataclass(frozen=True)
class ErrorSides:
    """Which way a run's cosines miss the labels over the quadruples (both on [0, 1]): Appendix A's over-estimation
    is the positive above its label with the negative below (cosines spread wider than the labels); the opposite
    corner, the positive below with the negative above, is cosines squeezed between the labels."""

    total: int
    positive_under: int  # cos_pos < l_pos
    negative_over: int  # cos_neg > l_neg
    both: int  # both at once: the opposite corner of Appendix A's plane
    wide_gaps: int  # cos_pos - cos_neg > margin, which Eq. 16 and Eq. 17 (mirror) both need
    margin: float


def error_sides(cos_pos, cos_neg, label_pos, label_neg, margin: float = 0.25) -> ErrorSides:
    """:class:`ErrorSides` of one run, from :func:`quadruple_scores`."""
    cos_pos, cos_neg, label_pos, label_neg = _arrays(cos_pos, cos_neg, label_pos, label_neg)
    under, over = cos_pos < label_pos, cos_neg > label_neg
    wide = int((cos_pos - cos_neg > margin).sum())
    return ErrorSides(len(cos_pos), int(under.sum()), int(over.sum()), int((under & over).sum()), wide, margin)


def sides_note(sides: Mapping[str, ErrorSides]) -> str:
    """Markdown under Appendix A's plane: the direct reason a run flags few or no quadruples, measured per run
    (``sides``: run name -> :class:`ErrorSides`)."""
    if not sides:
        raise ValueError("no run to describe")
    runs = "; ".join(
        f"{name}: the positive under-estimated in {s.positive_under / s.total:.0%} of the {s.total} quadruples, the "
        f"negative over-estimated in {s.negative_over / s.total:.0%}, both at once in {s.both / s.total:.0%}, and a "
        f"cosine gap above {s.margin:g} in {s.wide_gaps}"
        for name, s in sides.items()
    )
    return (
        "**Which way our cosines miss the labels, measured.** Over-estimation (Eq. 16-17) needs the positive's cosine "
        "above its label and the negative's below it: cosines spread wider than the labels, the upper right of the "
        f"plane, and a cosine gap above the margin. Ours miss mostly the other way: {runs}. So the direct reason "
        "few or no quadruples are flagged is that these cosines are squeezed between the labels and barely separate "
        "a pair's two conditions (Section 4's table of cosine gaps), not which labels the data has; whether the "
        "original C-STS labels would show the paper's counts cannot be tested here (they are not public)."
    )
