"""The claims of Tables 5 and 6 (Sections 4.4-4.5): the loss's hyperparameters, checked as robustness (equivalence
within a margin), and the Siamese head's input, a direction claim; each gated on its own two runs' dev gates
(``claims.dev_gate``: a seed on which a run did not train on STS-B dev is left out, "k of n seeds")."""

from __future__ import annotations

from collections.abc import Mapping

from ...evaluation import verdict_rules
from ...evaluation.evaluate import TaskPredictions
from . import quotes
from .claims import (
    TABLE1_CLAIMS,
    TABLE6_CLAIMS,
    Trained,
    backbone_fields,
    dev_gate,
    pair_claim,
    pair_claim_rows,
    paper_difference,
    predictions_by_seed,
    runs_of,
    seeds_of,
)
from .reported import REPORTED


def table6_claims(
    runs: Mapping[tuple[str, int], Trained],
    before: TaskPredictions,
    row: str,
    *,
    n_resamples: int = 2000,
    backbone: str = "",
) -> list[dict]:
    """Table 6's claims on our runs ``{(head input, seed): Trained}`` (Section 4.5): (u,v,|u-v|) beats each other head
    input, gated on both heads' dev gates, as
    Table 3's +Contrast: a head whose run kept its step-0 checkpoint on dev did not train, and a claim on it is not
    tested. Sized by half the paper's smaller Table 6 difference (``claims.smallest_effect``). ``before`` gates
    nothing (the test pairs never do); ``backbone``, when given, is named in each text (``_opening``)."""
    del before
    named = {"gate_name": lambda head: f"the head on {head}"}
    return pair_claim_rows(runs, "Table 6", TABLE6_CLAIMS, row, n_resamples, backbone, **named)


def table5_claims(
    runs: Mapping[tuple[str, int], Trained],
    reference: str,
    row: str,
    before: TaskPredictions,
    *,
    table: str = "Table 5",
    margin: float = verdict_rules.DEFAULT_MARGIN,
    n_resamples: int = 2000,
    where: str = "",
    backbone: str = "",
) -> list[dict]:
    """Table 5 on our runs ``{(setting label, seed): Trained}``: every other (k, x0) setting minus the
    ``reference`` one (Table 2's, or stage 2's official one), a robustness claim ("the setting hardly matters",
    Section 4.4) judged by equivalence within +-``margin`` points (:func:`table5_margin_reason`: the paper's
    own numbers; not tested when the margin contains the smallest gain Section 4.1 reads as real), with the
    paper's difference beside it where the paper reports both rows. Gated on its own arms: both settings trained on
    STS-B dev (``claims.dev_gate``), so two copies of
    the untrained encoder are never "equivalent"; ``before`` gates nothing. ``where`` ends each claim's text in
    parentheses (e.g. "stage 2, minilm-l6"); ``backbone``, when given, is stored in each row
    and, without ``where``, named there.

    Under AdamW a constant factor on the loss cancels in the update (up to ``eps`` and gradient clipping), so
    settings that differ only in ``k`` are expected to give the same model: their interval is the test of that."""
    del before  # the test pairs never gate a claim
    out, where = [], where or backbone
    reason, effect = table5_margin_reason(margin)
    for label in dict.fromkeys(label for label, _ in runs):
        seeds = seeds_of(runs, label, reference)
        if label == reference or not seeds:
            continue
        mine = REPORTED.lookup(table, f"{row} {label}", "avg")
        theirs = REPORTED.lookup(table, f"{row} {reference}", "avg")
        paper_diff = mine[0].value - theirs[0].value if mine and theirs else None
        a, b = runs_of(runs, label, seeds), runs_of(runs, reference, seeds)
        out.append(
            pair_claim(
                f"{table}, {label} vs {reference}: the setting hardly matters" + (f" ({where})" if where else ""),
                predictions_by_seed(a),
                predictions_by_seed(b),
                paper_diff,
                table=table,
                names=(label, reference),
                paper_quote=quotes.TABLE5,
                gates=[dev_gate(label, a), dev_gate(reference, b)],
                n_resamples=n_resamples,
                margin=margin,
                margin_reason=reason,
                paper_effect=effect,
                **backbone_fields(backbone),
            )
        )
    return out


def table5_margin_reason(margin: float) -> tuple[str, float]:
    """Why a Table 5 margin, from the paper's numbers: the largest spread within one (backbone, loss) group of
    Table 5, which Section 4.4 calls "minor fluctuations", and the smallest paper difference of a Table 1 claim
    (Section 4.1 reads it as a real gain). Returns (the reason, that smallest gain: the ``paper_effect`` a margin
    must stay below)."""
    groups: dict[str, list[float]] = {}
    for number in REPORTED.numbers:
        if number.table == "Table 5":
            groups.setdefault(number.setting.split(" k=")[0], []).append(number.value)
    spread, widest = max((max(v) - min(v), g) for g, v in groups.items())
    gains = [
        (abs(paper_difference("Table 1", row, c.a, c.b)), f"{row} {c.a} vs {c.b}")
        for row in ("BERT-base", "RoBERTa-base")
        for c in TABLE1_CLAIMS
    ]
    gain, smallest = min(gains)
    reason = (
        f"Section 4.4 calls spreads up to {spread:.2f} points minor fluctuations (Table 5, {widest}); Section 4.1 "
        f"reads gains from {gain:.2f} points as real (Table 1, {smallest}): +-{margin:g} "
        + ("lies between them" if spread < margin < gain else "does not lie between them")
    )
    return reason, gain
