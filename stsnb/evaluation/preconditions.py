"""A named condition a claim needs to be tested at all, whether it holds, and what was measured
(``stsnb.evaluation.claims``: a failed one makes a claim *not tested*)."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Precondition:
    """A named condition a claim needs, whether it holds, and the measured evidence (printed and stored)."""

    name: str
    holds: bool
    evidence: str

    def to_dict(self) -> dict:
        return asdict(self)

    def describe(self) -> str:
        return f"{self.name}: {'holds' if self.holds else 'FAILS'} ({self.evidence})"


def precondition(name: str, holds: bool, evidence: str) -> Precondition:
    """Any named condition; ``evidence`` says what was measured."""
    if not name:
        raise ValueError("a precondition needs a name saying what must hold")
    return Precondition(str(name), bool(holds), str(evidence))
