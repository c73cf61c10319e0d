"""stsnb.teaching.data_look: the rank arithmetic on hand-checkable examples, and the text lined up with the scores on
real STS-B test pairs scored by the real packaged MiniLM."""

from __future__ import annotations

import numpy as np
import pytest

from stsnb.data import STSPair
from stsnb.evaluation import evaluate
from stsnb.teaching import data_look


def _pairs(n: int) -> list[STSPair]:
    return [STSPair(f"first {i}", f"second {i}", 0.0, "STSBenchmark", "test") for i in range(n)]


def test_most_wrong_ranks_by_rank_gap_not_by_level():
    # cosine ranks 5, 1, 2, 3, 4 against gold ranks 1..5: pair 0 is 4 places too high, every other one 1 too low
    items = data_look.scored(_pairs(5), [0, 1, 2, 3, 4], [0.9, 0.2, 0.3, 0.4, 0.5])
    assert [i.gold_rank for i in items] == [1, 2, 3, 4, 5]
    assert [i.cosine_rank for i in items] == [5, 1, 2, 3, 4]
    assert [i.rank_gap for i in items] == [4, -1, -1, -1, -1]
    assert data_look.most_wrong(items, 1)[0].index == 0
    # Spearman without ties is 1 - 6 sum d^2 / (n (n^2 - 1)): the gaps are what it loses
    rho = evaluate.correlations([i.cosine for i in items], [i.gold for i in items])[0] / 100
    assert rho == pytest.approx(1 - 6 * sum(i.rank_gap**2 for i in items) / (5 * 24))


def test_most_wrong_ignores_the_cosines_level():
    gold = [0, 1, 2, 3, 4, 5]
    cosine = [0.90, 0.91, 0.92, 0.93, 0.99, 0.94]  # pair 0: far from gold/5 in level, but in its right place
    items = data_look.scored(_pairs(6), gold, cosine)
    worst = data_look.most_wrong(items, 2)
    assert {i.index for i in worst} == {4, 5}
    assert items[0].rank_gap == 0
    assert max(items, key=lambda i: abs(i.cosine - i.gold / 5)).index == 0  # the largest error is not the worst rank
    shifted = data_look.scored(_pairs(6), gold, [0.1 * c - 0.5 for c in cosine])  # a monotone map changes nothing
    assert [i.index for i in data_look.most_wrong(shifted, 6)] == [i.index for i in data_look.most_wrong(items, 6)]


def test_ties_get_mid_ranks():
    items = data_look.scored(_pairs(3), [1.0, 1.0, 3.0], [0.5, 0.5, 0.1])
    assert [i.gold_rank for i in items] == [1.5, 1.5, 3]
    assert [i.cosine_rank for i in items] == [2.5, 2.5, 1]


def test_scored_refuses_unequal_lengths():
    with pytest.raises(ValueError, match="3 pairs, 2 gold"):
        data_look.scored(_pairs(3), [1.0, 2.0], [0.1, 0.2, 0.3])


def test_shorten_and_markdown_cells():
    long = "word " * 40
    short = data_look.shorten(long)
    assert len(short) <= data_look.WIDTH and short.endswith("…") and not short.endswith(" …")
    assert data_look.shorten("a  b\n c") == "a b c"
    pair = STSPair("costs $5 | *a* <b>", "x_y", 2.5, "STSBenchmark", "test")
    table = data_look.table(data_look.scored([pair], [2.5], [0.7]), "cos")
    row = table.splitlines()[2]
    assert row.count("|") == 5  # the | inside the sentence does not open a column
    assert "\\$5" in row and "\\*a\\*" in row and "&lt;b>" in row and "x\\_y" in row


@pytest.fixture(scope="module")
def stsb_predictions(minilm):
    return evaluate.task_predictions(minilm, "stsb", 40, 3, cache=None)


def test_look_lines_up_text_and_scores_on_real_pairs(minilm, stsb_predictions):
    items = data_look.look(stsb_predictions, max_pairs=40, seed=3)
    assert len(items) == 40 and items[0].pair.dataset == "STSBenchmark"
    gold, cosine = stsb_predictions["STSBenchmark"]
    assert [i.gold for i in items] == list(gold)
    chosen = data_look.sample_pairs(items, 5, seed=0)
    again = evaluate.pair_similarities(minilm, [i.pair for i in chosen], cache=None)  # this text, encoded anew
    np.testing.assert_allclose(again, [i.cosine for i in chosen], atol=1e-5)
    with pytest.raises(ValueError, match="max_pairs=40, seed=4"):
        data_look.look(stsb_predictions, max_pairs=40, seed=4)  # another draw: its gold scores differ


def test_sample_pairs_spreads_over_the_gold_range(stsb_predictions):
    items = data_look.look(stsb_predictions, max_pairs=40, seed=3)
    chosen = data_look.sample_pairs(items, 5, seed=0)
    ranks = sorted(i.gold for i in items)
    for k, item in enumerate(chosen):  # one pair from each fifth of the pairs sorted by gold
        assert ranks[8 * k] <= item.gold <= ranks[8 * k + 7]
    assert chosen[0].gold < chosen[-1].gold
    assert data_look.sample_pairs(items, 5, seed=0) == chosen
    assert len(data_look.sample_pairs(items[:3], 5)) == 3


def test_rank_table_and_spread_on_real_pairs(minilm, stsb_predictions):
    items = data_look.look(stsb_predictions, max_pairs=40, seed=3)
    worst = data_look.most_wrong(items, 5)
    assert abs(worst[0].rank_gap) == max(abs(i.rank_gap) for i in items)
    text = data_look.rank_table(worst, "cos (MiniLM)", before=items, before_name="again")
    header, rule, *rows = text.split("\n\n")[0].splitlines()
    assert len(rows) == 5 and "among the 40 pairs" in text
    assert header.count("|") == rule.count("|") == rows[0].count("|") == 8 and "| cos (again) rank |" in header
    assert f"| {worst[0].cosine:.3f} |" in text
    other = data_look.look(evaluate.task_predictions(minilm, "stsb", 40, 4, cache=None), max_pairs=40, seed=4)
    with pytest.raises(ValueError, match="not the same pair"):
        data_look.rank_table(worst, before=other)
    spearman = evaluate.spearman_scores(stsb_predictions)["STSBenchmark"]
    assert data_look.spread(items, "MiniLM").endswith(f"Spearman x100 {spearman:.1f}")
