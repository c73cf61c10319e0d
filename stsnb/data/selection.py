"""Dev pairs for checkpoint selection and, apart from them, the held-out pairs the dev gate scores
(``stsnb.evaluation.dev_gates``): picking the best of k checkpoints on the selection pairs inflates their gain; on
pairs selection never sees it cannot."""

from __future__ import annotations

from collections.abc import Sequence

from .loading import sample


class GatedSelection(list):
    """Dev items for checkpoint selection (the list itself) that carry ``gate``: other dev items selection never sees,
    on which the dev gate asks whether the kept checkpoint beats its start. Passes wherever a list of dev items does."""

    def __init__(self, selection: Sequence = (), gate: Sequence = ()):
        super().__init__(selection)
        self.gate = list(gate)


def selection_and_gate(items: Sequence, n: int | None, gate_n: int | None, seed: int) -> GatedSelection:
    """``n`` items for selection, drawn as :func:`sample` draws them (the same ``seed``, the same items), and
    ``gate_n`` of the others for the dev gate (all others with None; none are left when selection takes every item,
    and the gate then falls back to its best-of-k bound on the selection items)."""
    selection = sample(items, n, seed)
    if gate_n is not None and gate_n < 0:
        raise ValueError(f"gate_pairs must be None or at least 0, got {gate_n}")
    chosen = {id(item) for item in selection}
    rest = [item for item in items if id(item) not in chosen]
    return GatedSelection(selection, sample(rest, gate_n, seed + 1))
