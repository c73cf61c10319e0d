"""C-STS rows paired into (high, low) quadruples (CCL Section 3.1) and the label scale of the c-sts framework.

Every sentence pair (s1, s2) of C-STS appears under two conditions. CCL Section 3.1 writes a training sample as
``d_pos = <s1, s2, c_pos, l_pos>`` and ``d_neg = <s1, s2, c_neg, l_neg>`` with ``l_pos >= l_neg``; Quad (Eq. 1/4),
FDL/RDL/ACL/W-ACL (Eq. 5-9) all compare the same pair under its two conditions. The c-sts framework
(princeton-nlp/c-sts ``TripletBatchSampler``) builds these pairs by exact (sentence1, sentence2)
match, keeps pairs with exactly two rows, orders the two by label (higher first; equal labels keep file order) and
drops the rest. :func:`pair_conditions` does the same and counts everything it does not pair.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ...data import CSTSRecord

LABEL_RANGE = (1.0, 5.0)  # C-STS labels (Deshpande et al. 2023)


def scale_label(label: float) -> float:
    """C-STS 1..5 -> [0, 1] by ``(l - 1) / 4``, the c-sts framework's min-max scaling (``run_sts.py``) that puts
    labels on the cosine's scale (CCL Table 1 prints labels such as 0.75 and 0.5)."""
    low, high = LABEL_RANGE
    if not low <= float(label) <= high:
        raise ValueError(f"a C-STS label must lie in [{low:g}, {high:g}], got {label!r}")
    return (float(label) - low) / (high - low)


@dataclass(frozen=True)
class Quadruple:
    """One sentence pair under its higher- and lower-similarity condition (``label_high >= label_low``, 1..5)."""

    sent1: str
    sent2: str
    condition_high: str
    condition_low: str
    label_high: float
    label_low: float
    source_high: str = field(default="", compare=False)
    source_low: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if self.label_high < self.label_low:
            raise ValueError(
                f"label_high ({self.label_high}) must be >= label_low ({self.label_low}) (CCL Section 3.1: "
                f"l_pos >= l_neg); rows {self.source_high}, {self.source_low}"
            )

    @property
    def is_tie(self) -> bool:
        return self.label_high == self.label_low

    def rows(self) -> tuple[CSTSRecord, CSTSRecord]:
        """The two C-STS rows, higher condition first."""
        return (
            CSTSRecord(self.sent1, self.sent2, self.condition_high, self.label_high, self.source_high),
            CSTSRecord(self.sent1, self.sent2, self.condition_low, self.label_low, self.source_low),
        )


@dataclass
class Pairing:
    """What :func:`pair_conditions` made of a list of rows: quadruples, and every row it did not pair, with why."""

    quadruples: list[Quadruple]
    unpaired: list[CSTSRecord]  # rows of sentence pairs that do not have exactly two rows
    dropped: dict[str, int]  # reason -> number of quadruples left out on request (ties, same condition)
    ties: int  # kept quadruples whose two labels are equal (Quad still orders them; W-ACL gives them weight 0)
    same_condition: int  # kept quadruples whose two condition strings are identical
    loader_skipped: dict[str, int] = field(default_factory=dict)  # what the loader dropped (labels -1)

    @property
    def rows_paired(self) -> int:
        return 2 * len(self.quadruples)

    def summary(self) -> str:
        parts = [f"{len(self.quadruples)} quadruples ({self.rows_paired} rows)"]
        parts.append(f"{len(self.unpaired)} rows without a partner (their pair does not have exactly two rows)")
        parts += [f"{n} quadruples dropped: {reason}" for reason, n in self.dropped.items() if n]
        parts.append(f"{self.ties} kept with equal labels, {self.same_condition} kept with the same condition twice")
        parts += [f"{n} rows dropped by the loader: {reason}" for reason, n in self.loader_skipped.items() if n]
        return "; ".join(parts)


def pair_conditions(
    records: Iterable[CSTSRecord], *, keep_ties: bool = True, keep_same_condition: bool = True
) -> Pairing:
    """Pair each sentence pair's two rows into a :class:`Quadruple` (higher label first), as c-sts does.

    Pairs are matched on the exact (sentence1, sentence2) strings; a pair with one row (its partner was labelled -1
    and dropped by the loader) or with more than two rows is not paired, and its rows are returned in
    ``unpaired``. ``keep_ties`` (c-sts keeps them, first row in file order as "high") and
    ``keep_same_condition`` (a few re-annotated pairs carry the same condition string twice) decide whether those
    quadruples stay; the ones left out are counted in ``dropped``. Quadruples come in file order of their first row.
    """
    skipped = dict(getattr(records, "skipped", {}) or {})  # a Loaded list says what its loader dropped
    records = list(records)
    groups: dict[tuple[str, str], list[CSTSRecord]] = {}
    for record in records:
        groups.setdefault((record.sent1, record.sent2), []).append(record)
    quadruples, unpaired = [], []
    dropped = {"equal labels": 0, "the same condition twice": 0}
    ties = same_condition = 0
    for rows in groups.values():
        if len(rows) != 2:
            unpaired += rows
            continue
        high, low = sorted(rows, key=lambda r: -r.label)  # stable: equal labels keep file order
        quad = Quadruple(
            high.sent1, high.sent2, high.condition, low.condition, high.label, low.label, high.source, low.source
        )
        if quad.condition_high == quad.condition_low:
            if not keep_same_condition:
                dropped["the same condition twice"] += 1
                continue
            same_condition += 1
        if quad.is_tie:
            if not keep_ties:
                dropped["equal labels"] += 1
                continue
            ties += 1
        quadruples.append(quad)
    return Pairing(quadruples, unpaired, dropped, ties, same_condition, skipped)


def split_quadruples(
    quadruples: Sequence[Quadruple], n_heldout: int, seed: int
) -> tuple[list[Quadruple], list[Quadruple]]:
    """(train, held out): ``n_heldout`` sentence pairs (both conditions together) drawn with ``seed`` for checkpoint
    selection, the rest for training. No sentence pair is in both."""
    if not 0 <= n_heldout < len(quadruples):
        raise ValueError(f"n_heldout must be in [0, {len(quadruples)}) (the number of quadruples), got {n_heldout}")
    order = list(range(len(quadruples)))
    random.Random(seed).shuffle(order)
    held = set(order[:n_heldout])
    train = [q for i, q in enumerate(quadruples) if i not in held]
    return train, [quadruples[i] for i in sorted(held)]


def rows_of(quadruples: Iterable[Quadruple]) -> list[CSTSRecord]:
    """The rows of quadruples, each quadruple's higher row then its lower row."""
    return [row for quad in quadruples for row in quad.rows()]


def _normalise(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def rows_of_pair(records: Iterable[CSTSRecord], sent1: str, sent2: str) -> list[CSTSRecord]:
    """The rows of one sentence pair, matched on letters and digits only (the paper prints "cell-phone" where the
    data has "cellphone"), in file order."""
    key = (_normalise(sent1), _normalise(sent2))
    return [r for r in records if (_normalise(r.sent1), _normalise(r.sent2)) == key]
