"""STS-Regression's claims checked on our runs: paired differences of STS predictions with bootstrap intervals
and the one verdict rule of ``stsnb.stats`` (``supported`` / ``contradicted`` / ``unresolved``).

Every claim is a difference ``a - b`` of seven-task (or ``eval_tasks``) average Spearman x100 on the same test
pairs; its direction is read from the paper's own numbers (``REPORTED``), never typed in, so a claim the paper's
table does not make (a difference of 0 there) is reported without a direction and stays ``unresolved``.
With several training seeds, each seed gives one interval and the verdict needs all of them (``stats.verdict``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ... import stats
from ...evaluate import TaskPredictions
from .reported import REPORTED

SeedPredictions = Mapping[int, TaskPredictions]  # training seed -> task -> (gold, cosine)


@dataclass(frozen=True)
class PairClaim:
    """ "``a`` beats ``b``" in one of the paper's tables (settings named as in ``REPORTED``)."""

    text: str
    a: str
    b: str


# Section 4.1's reading of Table 1 (losses by the names of ``recipes.LOSSES``)
TABLE1_CLAIMS: tuple[PairClaim, ...] = (
    PairClaim("regression (Smooth K2) beats 3-way classification (cross entropy)", "smooth_k2", "cross_entropy"),
    PairClaim("the zero-gradient buffer helps: Translated ReLU beats L1", "translated_relu", "l1"),
    PairClaim("the zero-gradient buffer helps: Smooth K2 beats MSE", "smooth_k2", "mse"),
    PairClaim("the adaptive gradient helps: Smooth K2 beats Translated ReLU", "smooth_k2", "translated_relu"),
    PairClaim("the adaptive gradient helps: MSE beats L1", "mse", "l1"),
)
# Table 6: the head's input; the paper's best is (u, v, |u - v|)
TABLE6_CLAIMS: tuple[PairClaim, ...] = (
    PairClaim("the head input (u,v,|u-v|) beats (u,v)", "(u,v,|u-v|)", "(u,v)"),
    PairClaim("the head input (u,v,|u-v|) beats |u-v|", "(u,v,|u-v|)", "|u-v|"),
)


def paper_difference(table: str, row: str, a: str, b: str) -> float:
    """The paper's ``a - b`` of the average column of ``table`` for the backbone ``row`` (e.g. "BERT-base")."""
    sep_a = " " if a else ""
    sep_b = " " if b else ""
    return REPORTED.value(table, f"{row}{sep_a}{a}") - REPORTED.value(table, f"{row}{sep_b}{b}")


def _direction(difference: float) -> int:
    return int(np.sign(difference))


def _row(
    claim: str, intervals: dict, paper_diff: float | None, table: str, a: str, b: str, direction: int | None = None
) -> dict:
    if direction is None:
        direction = 0 if paper_diff is None else _direction(paper_diff)
    if direction == 0:  # no paper number, or the paper's table shows a tie: no direction to support or contradict
        out = stats.claim_row(claim, intervals, +1)
        out["verdict"] = stats.UNRESOLVED
        out["paper_direction"] = 0
    else:
        out = stats.claim_row(claim, intervals, direction)
    out.update(table=table, a=a, b=b, paper_difference=paper_diff)
    return out


def pair_claim(
    claim: str,
    a: SeedPredictions,
    b: SeedPredictions,
    paper_diff: float | None,
    *,
    table: str,
    names: tuple[str, str] = ("a", "b"),
    n_resamples: int = 2000,
    direction: int | None = None,
) -> dict:
    """One claim row: ``a - b`` per training seed (paired bootstrap over the test pairs, seeded by the run's
    seed), the paper's difference and the claimed direction (the sign of the paper's difference unless
    ``direction`` is given), the verdict."""
    if set(a) != set(b) or not a:
        raise ValueError(f"{claim}: a and b need the same training seeds, got {sorted(a)} and {sorted(b)}")
    intervals = {
        f"seed {s}": stats.paired_predictions_difference(a[s], b[s], n_resamples=n_resamples, seed=s) for s in a
    }
    return _row(claim, intervals, paper_diff, table, *names, direction=direction)


def improvement_claim(
    claim: str, after: SeedPredictions, before: TaskPredictions, *, table: str, n_resamples: int = 2000
) -> dict:
    """ "Training improves the encoder": ``after - before`` per seed, claimed positive (the paper trains from raw
    BERT/RoBERTa, whose untrained scores it does not report: no paper difference)."""
    return pair_claim(
        claim,
        after,
        {s: before for s in after},
        None,
        table=table,
        names=("after", "before"),
        n_resamples=n_resamples,
        direction=+1,
    )


def _table_claims(
    runs: Mapping[tuple[str, int], TaskPredictions],
    table: str,
    listed: tuple[PairClaim, ...],
    row: str,
    n_resamples: int,
) -> list[dict]:
    """The claims of ``listed`` on our runs ``{(setting, seed): predictions}``, directions from the paper's ``row``
    of ``table``. A claim whose two settings were not both run for every seed is left out, not guessed."""
    seeds = sorted({s for _, s in runs})
    out = []
    for c in listed:
        if not all((name, s) in runs for name in (c.a, c.b) for s in seeds):
            continue
        out.append(
            pair_claim(
                f"{table}, {c.text}",
                {s: runs[(c.a, s)] for s in seeds},
                {s: runs[(c.b, s)] for s in seeds},
                paper_difference(table, row, c.a, c.b),
                table=table,
                names=(c.a, c.b),
                n_resamples=n_resamples,
            )
        )
    return out


def table1_claims(runs: Mapping[tuple[str, int], TaskPredictions], row: str, *, n_resamples: int = 2000) -> list[dict]:
    """Section 4.1's claims on our Table 1 runs ``{(loss, seed): predictions}``, directions from the paper's
    ``row`` ("BERT-base" or "RoBERTa-base")."""
    return _table_claims(runs, "Table 1", TABLE1_CLAIMS, row, n_resamples)


def table3_claims(
    before: TaskPredictions,
    contrast: SeedPredictions,
    ours: SeedPredictions,
    row: str,
    *,
    n_resamples: int = 2000,
) -> list[dict]:
    """Table 3 on a contrastive encoder: "+Ours improves it" and "+Ours beats +Contrast" (directions from the
    paper's ``row``, "Jina v2" or "Nomic Embed v1")."""
    return [
        pair_claim(
            "Table 3, +Ours (two stages) improves the contrastive encoder",
            ours,
            {s: before for s in ours},
            paper_difference("Table 3", row, "+Ours", ""),
            table="Table 3",
            names=("+Ours", "before"),
            n_resamples=n_resamples,
        ),
        pair_claim(
            "Table 3, +Ours beats +Contrast",
            ours,
            contrast,
            paper_difference("Table 3", row, "+Ours", "+Contrast"),
            table="Table 3",
            names=("+Ours", "+Contrast"),
            n_resamples=n_resamples,
        ),
    ]


def table6_claims(runs: Mapping[tuple[str, int], TaskPredictions], row: str, *, n_resamples: int = 2000) -> list[dict]:
    """Table 6's claims on our runs ``{(head input, seed): predictions}``."""
    return _table_claims(runs, "Table 6", TABLE6_CLAIMS, row, n_resamples)


def table5_claims(
    runs: Mapping[tuple[str, int], TaskPredictions],
    reference: str,
    row: str,
    *,
    table: str = "Table 5",
    n_resamples: int = 2000,
) -> list[dict]:
    """Table 5 on our runs ``{(setting label, seed): predictions}``: every other (k, x0) setting minus the
    ``reference`` one (Table 2's), directions from the paper's ``row`` where it reports both settings (a setting
    the paper did not run gets no direction, and so stays ``unresolved``: its interval is still shown).

    Under AdamW a constant factor on the loss cancels in the update (up to ``eps`` and gradient clipping), so
    settings that differ only in ``k`` are expected to give the same model: their interval is the test of that."""
    seeds = sorted({s for _, s in runs})
    out = []
    for label in dict.fromkeys(label for label, _ in runs):
        if label == reference or not all((label, s) in runs and (reference, s) in runs for s in seeds):
            continue
        mine = REPORTED.lookup(table, f"{row} {label}", "avg")
        theirs = REPORTED.lookup(table, f"{row} {reference}", "avg")
        paper_diff = mine[0].value - theirs[0].value if mine and theirs else None
        out.append(
            pair_claim(
                f"{table}, {label} vs {reference}",
                {s: runs[(label, s)] for s in seeds},
                {s: runs[(reference, s)] for s in seeds},
                paper_diff,
                table=table,
                names=(label, reference),
                n_resamples=n_resamples,
            )
        )
    return out


def verdict_counts(rows: list[dict]) -> dict[str, int]:
    """How many claims got each of the three verdicts."""
    return {v: sum(r["verdict"] == v for r in rows) for v in stats.VERDICTS}


def describe(row: dict) -> str:
    """One line for a notebook: the claim, our difference with its interval (and seed spread), the paper's, the
    verdict."""
    spread = f", sd {row['difference_std']:.2f} over {row['seeds']} seeds" if row["seeds"] > 1 else ""
    if row["paper_difference"] is None:
        paper = {1: "claimed: a > b (no paper number)", -1: "claimed: a < b (no paper number)"}.get(
            row["paper_direction"], "paper: no number"
        )
    elif row["paper_direction"]:
        paper = f"paper {row['paper_difference']:+.2f}"
    else:
        paper = "paper: a tie, no direction"
    return (
        f"{row['claim']}: ours {row['difference']:+.2f} [{row['low']:+.2f}, {row['high']:+.2f}]{spread}; "
        f"{paper} -> {row['verdict']}"
    )
