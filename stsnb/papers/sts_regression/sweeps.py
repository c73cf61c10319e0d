"""The runs behind Tables 5 and 6 (Sections 4.4-4.5): which (loss, k, x0, head input) settings to train, and
which of them a Table 1 run already answers.

Table 5 varies ``k`` and ``x0`` around Table 2's setting of each buffered loss; Table 6 trains Smooth K2 (Table 2's
``k``, ``x0``) with the head on ``(u, v)`` and ``|u - v|`` beside ``(u, v, |u - v|)``. A setting equal to a Table 1
run (Table 2's ``k``, ``x0`` and the full head input) is not trained twice.

Under AdamW a constant factor on the loss cancels in the update (Adam divides the first moment by the root of
the second, both scale with the factor; only ``eps`` and gradient clipping see it), so Translated ReLU and Smooth
K2 at the same ``x0`` and another ``k`` should give the same model; ``x0`` changes the loss's shape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ...evaluation import evaluate, verdict_rules
from .claims import Trained, with_flag
from .model import CONCATENATIONS, Concatenation
from .recipes import STAGE_SETTINGS, TABLE2, LossSpec, table2_loss
from .scoring import Evaluation, compare
from .sweep_claims import table5_claims, table6_claims

FULL: Concatenation = "(u,v,|u-v|)"
BUFFERED = ("translated_relu", "smooth_k2")


@dataclass(frozen=True)
class NLIVariant:
    """One Table 5 / 6 NLI run: a loss with its ``k``, ``x0`` and the head's input."""

    loss: LossSpec
    concatenation: Concatenation = FULL

    def label(self) -> str:
        return self.loss.label() if self.concatenation == FULL else f"{self.loss.label()} head {self.concatenation}"

    def tables(self, row: str) -> tuple[str, ...]:
        """The tables this run contributes to."""
        out = ()
        if self.concatenation == FULL and self.loss.name in BUFFERED:
            out += ("Table 5",)
        if self.loss.name == "smooth_k2" and self.loss == table2_loss("smooth_k2", row):
            out += ("Table 6",)
        return out


def _spec(entry: Sequence) -> LossSpec:
    if len(entry) != 3:
        raise ValueError(f"a sweep entry is [loss, k, x0], got {entry!r}")
    name, k, x0 = entry
    return LossSpec(str(name), float(k), float(x0))


def nli_sweep_plan(
    row: str,
    table1_losses: Sequence[str],
    sweep: Sequence[Sequence],
    concatenations: Sequence[str],
) -> list[NLIVariant]:
    """Table 5 (Table 2's setting of each buffered loss in ``table1_losses``, then every ``[loss, k, x0]`` of
    ``sweep``) and Table 6 (Smooth K2 at Table 2's setting with each head input of ``concatenations``), without
    repeats, in that order."""
    unknown = [c for c in concatenations if c not in CONCATENATIONS]
    if unknown:
        raise ValueError(f"head inputs must be among {CONCATENATIONS}, got {unknown}")
    plan = [NLIVariant(table2_loss(name, row)) for name in BUFFERED if name in table1_losses and (row, name) in TABLE2]
    plan += [NLIVariant(_spec(entry)) for entry in sweep]
    if concatenations:
        smooth = table2_loss("smooth_k2", row)
        plan += [NLIVariant(smooth, FULL)] + [NLIVariant(smooth, c) for c in concatenations]
    return list(dict.fromkeys(plan))


def answered_by_table1(variant: NLIVariant, row: str, table1_losses: Sequence[str]) -> bool:
    """True when a Table 1 run trained exactly this setting (Table 2's k, x0, the full head input)."""
    name = variant.loss.name
    return (
        variant.concatenation == FULL
        and name in table1_losses
        and (name not in BUFFERED or variant.loss == table2_loss(name, row))
    )


def stage2_sweep_plan(row: str, sweep: Sequence[Sequence]) -> list[LossSpec]:
    """Table 5 for a contrastive encoder (Section 4.2): stage 2's Smooth K2 at the official setting of ``row``
    ("Jina v2" / "Nomic Embed v1") first, then each ``[loss, k, x0]`` of ``sweep``."""
    if row not in STAGE_SETTINGS:
        raise KeyError(f"no stage settings for {row!r}; rows: {sorted(STAGE_SETTINGS)}")
    plan = [LossSpec("smooth_k2", *STAGE_SETTINGS[row]["stage2"])] + [_spec(entry) for entry in sweep]
    return list(dict.fromkeys(plan))


# ---- Tables 5 and 6 on the runs of a plan: ours beside the paper's, and the claims ------------------------------

SweepRuns = Mapping[tuple[str, int], Trained]  # (variant label, training seed) -> the run, on one backbone


def _table_group(plan: Sequence[NLIVariant], variant: NLIVariant, table: str, row: str) -> list[NLIVariant]:
    """The runs of ``plan`` that share ``variant``'s rows of ``table``: Table 5's of its loss, Table 6's all."""
    return [v for v in plan if table in v.tables(row) and (table == "Table 6" or v.loss.name == variant.loss.name)]


def sweep_comparison(
    plan: Sequence[NLIVariant],
    runs: SweepRuns,
    seed: int,
    evaluation: Evaluation,
    row: str,
    backbone: str,
    note: str,
    table1_losses: Sequence[str] = (),
) -> list[dict]:
    """Each run of ``plan`` on training seed ``seed`` beside the paper's Table 5 row (its loss, k, x0) and Table 6
    row (its head input) for the backbone ``row``, where the paper has one (``compare``); a run that kept its start
    is flagged UNTRAINED in its note (``claims.with_flag``), beside the paper's trained number. A Table 1 run of
    ``table1_losses`` (``answered_by_table1``) is named so in its note, and left out where no other run shares its
    table's rows: alone it would print Table 1's row again under another table's name."""
    out = []
    for variant in plan:
        trained = runs[(variant.label(), seed)]
        scores = evaluate.spearman_scores(trained.predictions)
        from_table1 = answered_by_table1(variant, row, table1_losses)
        flagged = with_flag(f"{note}; the Table 1 run" if from_table1 else note, [trained])
        for table in variant.tables(row):
            if from_table1 and len(_table_group(plan, variant, table, row)) < 2:
                continue
            setting = variant.loss.label() if table == "Table 5" else variant.concatenation
            out += compare(
                scores, evaluation, table, f"{row} {setting}", our_setting=f"{backbone} {variant.label()}", note=flagged
            )
    return out


def scope_line(row: str, table1_losses: Sequence[str], sweep: Sequence[Sequence], concatenations: Sequence[str]) -> str:
    """One line on what Section 5 of notebook 20 trains on a backbone beyond Table 1's runs (``nli_sweep_plan`` less
    ``answered_by_table1``): the settings, or that it trains none and so has no Table 5 or 6 claim."""
    plan = nli_sweep_plan(row, table1_losses, sweep, concatenations)
    extra = [v.label() for v in plan if not answered_by_table1(v, row, table1_losses)]
    if not extra:
        return (
            "This run trains no Table 5 or Table 6 run beyond Table 1's (`sweep` and `ablation_concatenations` add "
            "none): this section has no claim to test, and Table 1's rows are not printed again under these tables."
        )
    return f"Beyond Table 1's runs, this section trains {len(extra)} setting(s) per seed: {'; '.join(extra)}."


def sweep_table5_claims(
    plan: Sequence[NLIVariant],
    runs: SweepRuns,
    seeds: Sequence[int],
    row: str,
    before: evaluate.TaskPredictions,
    *,
    margin: float = verdict_rules.DEFAULT_MARGIN,
    n_resamples: int = 2000,
    backbone: str = "",
) -> list[dict]:
    """Table 5's claims (``table5_claims``) for each buffered loss with more than one (k, x0) in ``plan``: every
    other setting against Table 2's, on ``seeds``; ``before``: the untrained encoder's predictions; ``backbone``, when
    given, named in each claim (the notebook names it when it runs several)."""
    out = []
    for name in BUFFERED:
        same_loss = [v for v in plan if "Table 5" in v.tables(row) and v.loss.name == name]
        if (row, name) in TABLE2 and len(same_loss) > 1:
            runs_of = {(v.loss.label(), s): runs[(v.label(), s)] for v in same_loss for s in seeds}
            reference = table2_loss(name, row).label()
            out += table5_claims(
                runs_of,
                reference,
                row,
                before,
                margin=margin,
                n_resamples=n_resamples,
                backbone=backbone,
            )
    return out


def sweep_table6_claims(
    plan: Sequence[NLIVariant],
    runs: SweepRuns,
    seeds: Sequence[int],
    row: str,
    before: evaluate.TaskPredictions,
    *,
    n_resamples: int = 2000,
    backbone: str = "",
) -> list[dict]:
    """Table 6's claims (``table6_claims``) on the head inputs of ``plan`` trained on ``seeds``, gated on dev;
    ``backbone``, when given, named in each claim."""
    heads = {(v.concatenation, s): runs[(v.label(), s)] for v in plan if "Table 6" in v.tables(row) for s in seeds}
    return table6_claims(heads, before, row, n_resamples=n_resamples, backbone=backbone)
