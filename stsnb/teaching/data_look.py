"""A look at the data for the STS notebooks: a few real test pairs with their gold scores and a model's cosines,
and, after training, the pairs the model ranks furthest from the gold.

The predictions a notebook holds (``stsnb.evaluation.evaluate.TaskPredictions``: task -> (gold, cosine) arrays) carry no
text. :func:`look` draws the same pairs again with the draw ``evaluate.task_predictions`` uses
(``evaluate.drawn_pairs``: ``eval_max_pairs`` per task with ``eval_seed``), checks that their gold scores are the
predictions' gold scores, and puts text, gold and cosine side by side with each one's rank. STS-B test (the
``"STSBenchmark"`` task) is the look of every notebook: one-sentence captions, scored 0-5 by several annotators.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import rankdata, spearmanr

from .. import data as stsdata
from ..evaluation import evaluate

LOOK_TASK = "STSBenchmark"
WIDTH = 80  # characters of a sentence shown in a table


@dataclass(frozen=True)
class ScoredPair:
    """One scored test pair: its text, gold score, a model's cosine, and the ranks of both among the ``of`` pairs
    scored (mid-ranks as Spearman's correlation uses them, 1 = the least similar)."""

    pair: stsdata.STSPair
    index: int  # position among the pairs scored (the order of the predictions)
    gold: float
    cosine: float
    gold_rank: float
    cosine_rank: float
    of: int

    @property
    def rank_gap(self) -> float:
        """``cosine_rank - gold_rank``: above 0 the model puts the pair higher among the pairs than the annotators do
        (it overrates the pair's similarity relative to the others), below 0 lower."""
        return self.cosine_rank - self.gold_rank


def look_task(predictions: evaluate.TaskPredictions) -> str:
    """STS-B test when it was scored, else the first task scored."""
    if not predictions:
        raise ValueError("no task was scored")
    return LOOK_TASK if LOOK_TASK in predictions else next(iter(predictions))


def look(
    predictions: evaluate.TaskPredictions,
    max_pairs: int | None = None,
    seed: int = 0,
    task: str | None = None,
    data_dir=None,
) -> list[ScoredPair]:
    """Every scored pair of ``task`` (default :func:`look_task`) with its text, in the order scored. ``max_pairs``
    and ``seed`` must be those the predictions were drawn with; a ValueError says so if the gold scores disagree."""
    task = task or look_task(predictions)
    gold, cosine = (np.asarray(a, dtype=float) for a in predictions[task])
    pairs = evaluate.drawn_pairs(task, max_pairs, seed, data_dir)
    texts_gold = np.array([p.score for p in pairs], dtype=float)
    if len(pairs) != len(gold) or not np.allclose(texts_gold, gold):
        raise ValueError(
            f"{task}: the {len(pairs)} pairs drawn with max_pairs={max_pairs}, seed={seed} do not carry the "
            f"{len(gold)} gold scores of these predictions: pass the max_pairs and seed they were scored with"
        )
    return scored(pairs, gold, cosine)


def scored(pairs: Sequence[stsdata.STSPair], gold: Sequence[float], cosine: Sequence[float]) -> list[ScoredPair]:
    """Each pair with its gold score and cosine (in the same order) and the ranks of both among these pairs."""
    gold, cosine = np.asarray(gold, dtype=float), np.asarray(cosine, dtype=float)
    if not len(pairs) == len(gold) == len(cosine):
        raise ValueError(f"{len(pairs)} pairs, {len(gold)} gold scores, {len(cosine)} cosines")
    gold_ranks, cosine_ranks = rankdata(gold), rankdata(cosine)
    return [
        ScoredPair(p, i, float(g), float(c), float(gr), float(cr), len(pairs))
        for i, (p, g, c, gr, cr) in enumerate(zip(pairs, gold, cosine, gold_ranks, cosine_ranks, strict=True))
    ]


def sample_pairs(items: Sequence[ScoredPair], n: int = 5, seed: int = 0) -> list[ScoredPair]:
    """``n`` pairs spread over the gold range, lowest gold first: the pairs sorted by gold are cut into ``n`` groups
    of (nearly) equal size (quintiles for ``n = 5``) and one pair is drawn from each with ``seed``."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    ordered = sorted(items, key=lambda item: item.gold)
    rng = random.Random(seed)
    return [ordered[int(rng.choice(group))] for group in np.array_split(np.arange(len(ordered)), n) if len(group)]


def most_wrong(items: Sequence[ScoredPair], n: int = 5) -> list[ScoredPair]:
    """The ``n`` pairs whose cosine rank is furthest from their gold rank (``|rank_gap|``), furthest first.

    Spearman's correlation is Pearson's correlation of the *ranks*: only the order of the cosines counts, not their
    level (cosines all between 0.8 and 1.0 can rank perfectly). Without ties it is ``1 - 6 sum(d_i^2) / (n (n^2 - 1))``
    with ``d_i`` the rank gap of pair ``i``, so the pairs with the largest ``|d_i|`` are those that cost the model most
    Spearman, not those with the largest ``|cos - gold|``; a rank gap of 0 is a pair in its right place whatever its
    cosine. Ties (equal gold scores, common in STS) get mid-ranks, as Spearman gives them."""
    return sorted(items, key=lambda item: -abs(item.rank_gap))[:n]


def shorten(text: str, width: int = WIDTH) -> str:
    """``text`` cut at a word boundary to at most ``width`` characters, with an ellipsis when cut."""
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    cut = text[: width - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut) + "…"


def _cell(text: str, width: int = WIDTH) -> str:
    """A table cell of Markdown: shortened, with what Markdown or MathJax would read as syntax escaped."""
    text = shorten(text, width).replace("|", "/").replace("<", "&lt;")
    for char in "\\`*_$[]":
        text = text.replace(char, "\\" + char)
    return text


def _rank(value: float) -> str:
    return f"{value:g}"


def _gold(items: Sequence[ScoredPair]) -> str:
    """The gold column's header with the dataset's scale (STS 0-5, SICK 1-5)."""
    return "gold (1-5)" if items and items[0].pair.dataset == "SICK" else "gold (0-5)"


def _name(pair: stsdata.STSPair) -> str:
    return {"STSBenchmark": "STS-B test", "SICK": "SICK-R test"}.get(pair.dataset, pair.dataset)


def table(items: Sequence[ScoredPair], cosine: str = "cos", width: int = WIDTH) -> str:
    """A Markdown table: sentence 1, sentence 2, gold, the model's cosine (column named ``cosine``)."""
    lines = [f"| sentence 1 | sentence 2 | {_gold(items)} | {cosine} |", "|---|---|---:|---:|"]
    lines += [
        f"| {_cell(i.pair.sent1, width)} | {_cell(i.pair.sent2, width)} | {i.gold:.2f} | {i.cosine:.3f} |"
        for i in items
    ]
    return "\n".join(lines)


def rank_table(
    items: Sequence[ScoredPair],
    cosine: str = "cos",
    before: Sequence[ScoredPair] | None = None,
    before_name: str = "before",
    width: int = WIDTH,
) -> str:
    """A Markdown table of ``items`` (e.g. :func:`most_wrong`'s) with each pair's gold and cosine and their ranks
    among the pairs scored (1 = least similar); ``before``, the same pairs' look under another model (e.g. the
    untrained one, :func:`look` of its predictions on the same draw), adds that model's cosine rank, in a column
    "cos (``before_name``) rank"."""
    of = items[0].of if items else 0
    extra = f" | cos ({before_name}) rank |" if before is not None else " |"
    lines = [
        f"| sentence 1 | sentence 2 | {_gold(items)} | {cosine} | gold rank | {cosine} rank{extra}",
        "|---|---|---:|---:|---:|---:|" + ("---:|" if before is not None else ""),
    ]
    earlier = {b.index: b for b in before or ()}
    for i in items:
        row = (
            f"| {_cell(i.pair.sent1, width)} | {_cell(i.pair.sent2, width)} | {i.gold:.2f} | {i.cosine:.3f} | "
            f"{_rank(i.gold_rank)} | {_rank(i.cosine_rank)} |"
        )
        if before is not None:
            then = earlier.get(i.index)
            if then is None or then.pair != i.pair:
                raise ValueError(f"pair {i.index} of `before` is not the same pair: look at both on the same draw")
            row += f" {_rank(then.cosine_rank)} |"
        lines.append(row)
    return "\n".join(lines) + f"\n\nRanks among the {of} pairs scored, 1 = the least similar."


def spread(items: Sequence[ScoredPair], name: str = "cos") -> str:
    """One sentence: where the cosines lie (range and middle half), against the gold range, and Spearman x100."""
    if len(items) < 2:
        raise ValueError(f"spread needs at least 2 pairs, got {len(items)}")
    cos = np.array([i.cosine for i in items])
    gold = np.array([i.gold for i in items])
    q1, q3 = np.percentile(cos, [25, 75])
    rho = 100 * float(spearmanr(cos, gold).statistic)
    return (
        f"{name}: cosines of the {len(items)} {_name(items[0].pair)} pairs from {cos.min():.2f} to {cos.max():.2f} "
        f"(middle half {q1:.2f}-{q3:.2f}) for gold scores from {gold.min():g} to {gold.max():g}; Spearman x100 "
        f"{rho:.1f}"
    )
