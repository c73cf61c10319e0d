"""STS-Regression's claims, Table 5/6 plan and scoring: directions from the paper's numbers, paired intervals on
the same test pairs, the three verdicts; real MiniLM predictions on real STS-B pairs where results matter."""

from __future__ import annotations

import numpy as np
import pytest

from stsnb import data, evaluate, stats
from stsnb.papers import sts_regression as reg
from stsnb.papers.sts_regression import claims


@pytest.fixture(scope="module")
def stsb_gold(data_dir):
    pairs = data.sample(list(data.load_stsb("test")), 150, 0)
    return np.array([p.score for p in pairs])


def _predictions(gold: np.ndarray, noise: float, seed: int) -> evaluate.TaskPredictions:
    rng = np.random.default_rng(seed)
    return {"STSBenchmark": (gold, gold + rng.normal(0, noise, len(gold)))}


def test_paper_difference_is_read_from_the_reported_table():
    assert claims.paper_difference("Table 1", "BERT-base", "smooth_k2", "cross_entropy") == pytest.approx(76.03 - 73.01)
    assert claims.paper_difference("Table 3", "Jina v2", "+Ours", "+Contrast") == pytest.approx(83.55 - 81.83)
    assert claims.paper_difference("Table 3", "Jina v2", "+Ours", "") == pytest.approx(83.55 - 82.00)


def test_table1_claims_give_each_verdict_from_paired_intervals(stsb_gold):
    good, bad = _predictions(stsb_gold, 0.3, 1), _predictions(stsb_gold, 3.0, 2)
    runs = {("smooth_k2", 0): good, ("cross_entropy", 0): bad, ("mse", 0): bad, ("l1", 0): good}
    rows = {r["a"] + ">" + r["b"]: r for r in claims.table1_claims(runs, "BERT-base", n_resamples=300)}
    # translated_relu was not run: the two claims that need it are left out, not guessed
    assert set(rows) == {"smooth_k2>cross_entropy", "smooth_k2>mse", "mse>l1"}
    assert rows["smooth_k2>cross_entropy"]["verdict"] == "supported"  # the paper's direction, interval above 0
    assert rows["mse>l1"]["verdict"] == "contradicted"  # the paper has mse > l1; ours is clearly below
    assert rows["smooth_k2>cross_entropy"]["paper_direction"] == 1
    row = rows["smooth_k2>cross_entropy"]
    expected = stats.paired_predictions_difference(good, bad, n_resamples=300, seed=0)
    assert (row["difference"], row["low"], row["high"]) == pytest.approx(tuple(expected))


def test_identical_runs_are_unresolved_with_a_zero_interval(stsb_gold):
    same = _predictions(stsb_gold, 1.0, 3)
    row = claims.table1_claims({("smooth_k2", 0): same, ("mse", 0): same}, "BERT-base", n_resamples=100)[0]
    assert (row["difference"], row["low"], row["high"]) == (0.0, 0.0, 0.0)
    assert row["verdict"] == "unresolved"


def test_a_verdict_needs_every_seed(stsb_gold):
    good = {0: _predictions(stsb_gold, 0.3, 1), 1: _predictions(stsb_gold, 3.0, 4)}
    bad = {0: _predictions(stsb_gold, 3.0, 2), 1: _predictions(stsb_gold, 0.3, 5)}
    row = claims.pair_claim("seeds disagree", good, bad, 1.0, table="Table 1", n_resamples=200)
    assert row["seeds"] == 2 and row["verdict"] == "unresolved"
    assert row["difference_std"] is not None and row["difference_std"] > 0


def test_improvement_claim_has_a_direction_but_no_paper_number(stsb_gold):
    row = claims.improvement_claim(
        "trained beats untrained",
        {0: _predictions(stsb_gold, 0.3, 1)},
        _predictions(stsb_gold, 3.0, 2),
        table="Table 1",
        n_resamples=200,
    )
    assert row["verdict"] == "supported" and row["paper_difference"] is None and row["paper_direction"] == 1
    assert "no paper number" in claims.describe(row)


def test_table5_rows_without_a_paper_number_stay_unresolved(stsb_gold):
    ref, other = _predictions(stsb_gold, 3.0, 2), _predictions(stsb_gold, 0.3, 1)
    runs = {("smooth_k2 k=2 x0=0.25", 0): ref, ("smooth_k2 k=3 x0=0.25", 0): ref, ("smooth_k2 k=9 x0=0.1", 0): other}
    rows = {r["a"]: r for r in claims.table5_claims(runs, "smooth_k2 k=2 x0=0.25", "BERT-base", n_resamples=200)}
    assert rows["smooth_k2 k=3 x0=0.25"]["paper_difference"] == pytest.approx(75.75 - 76.03)
    assert rows["smooth_k2 k=9 x0=0.1"]["paper_difference"] is None
    assert rows["smooth_k2 k=9 x0=0.1"]["verdict"] == "unresolved"  # clearly different, but no claimed direction


def test_different_test_pairs_cannot_be_compared(stsb_gold):
    a = _predictions(stsb_gold, 1.0, 1)
    b = {"STSBenchmark": (stsb_gold[::-1].copy(), stsb_gold)}
    with pytest.raises(ValueError, match="different pairs"):
        claims.pair_claim("x", {0: a}, {0: b}, 1.0, table="Table 1", n_resamples=50)


def test_sweep_plan_reuses_table1_and_adds_table6_heads():
    plan = reg.nli_sweep_plan("BERT-base", reg.LOSSES, [["smooth_k2", 3.0, 0.25], ["smooth_k2", 2.0, 0.25]], ["|u-v|"])
    labels = [v.label() for v in plan]
    assert labels == [
        "translated_relu k=2.5 x0=0.25",
        "smooth_k2 k=2 x0=0.25",
        "smooth_k2 k=3 x0=0.25",
        "smooth_k2 k=2 x0=0.25 head |u-v|",
    ]  # the sweep's repeat of Table 2's setting and the full head input appear once
    answered = [reg.answered_by_table1(v, "BERT-base", reg.LOSSES) for v in plan]
    assert answered == [True, True, False, False]
    assert plan[1].tables("BERT-base") == ("Table 5", "Table 6") and plan[3].tables("BERT-base") == ("Table 6",)
    with pytest.raises(ValueError, match="head inputs"):
        reg.nli_sweep_plan("BERT-base", reg.LOSSES, [], ["u*v"])
    with pytest.raises(ValueError, match=r"\[loss, k, x0\]"):
        reg.nli_sweep_plan("BERT-base", reg.LOSSES, [["smooth_k2", 3.0]], [])


def test_stage2_sweep_starts_from_the_official_setting():
    plan = reg.stage2_sweep_plan("Jina v2", [["smooth_k2", 3.5, 0.2], ["smooth_k2", 4.0, 0.2]])
    assert [s.label() for s in plan] == ["smooth_k2 k=3.5 x0=0.2", "smooth_k2 k=4 x0=0.2"]
    with pytest.raises(KeyError, match="no stage settings"):
        reg.stage2_sweep_plan("BERT-base", [])


def test_an_average_of_fewer_tasks_is_not_compared_with_the_papers_average():
    seven, one = reg.Evaluation("all", 50), reg.Evaluation("stsb", 50)
    assert seven.comparable({"avg": 1.0}) == {"avg": 1.0}
    assert one.comparable({"STSBenchmark": 1.0, "avg": 1.0}) == {"STSBenchmark": 1.0, "avg of stsb": 1.0}
    rows = reg.compare({"avg": 70.0}, one, "Table 5", "BERT-base smooth_k2 k=2 x0=0.25", our_setting="x", note="n")
    assert rows == []  # Table 5 reports only the seven-task average
    rows = reg.compare({"avg": 70.0}, seven, "Table 5", "BERT-base smooth_k2 k=2 x0=0.25", our_setting="x", note="n")
    assert rows[0]["delta"] == pytest.approx(70.0 - 76.03) and "50 pairs per task" in rows[0]["note"]


@pytest.mark.slow
def test_sampled_predictions_score_like_sts_scores_and_pair_up_across_models(minilm):
    first = evaluate.task_predictions(minilm, "stsb,sickr", 40, seed=3, cache=None)
    again = evaluate.task_predictions(minilm, "stsb,sickr", 40, seed=3, cache=None)
    scores = evaluate.spearman_scores(first)
    assert scores == pytest.approx(evaluate.sts_scores(minilm, "stsb,sickr", 40, 3))
    assert all(np.array_equal(first[t][0], again[t][0]) for t in first)  # same draw: the gold scores line up
    assert tuple(stats.paired_predictions_difference(first, again, n_resamples=50)) == (0.0, 0.0, 0.0)
