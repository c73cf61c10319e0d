"""Paired bootstrap intervals of Spearman differences, seed spread and the verdict rule (stsnb.evaluation.stats)."""

from __future__ import annotations

import math
import re
import typing
import warnings

import numpy as np
import pytest
from scipy.stats import bootstrap, spearmanr

from stsnb.evaluation import stats, verdict_rules


def _spearman100(pred, gold) -> float:
    return 100 * spearmanr(pred, gold)[0]


def _synthetic(n: int, seed: int, noise_a: float = 1.0, noise_b: float = 2.0):
    """Gold on STS's 0-5 scale with ties (one decimal) and two noisy predictors of it."""
    rng = np.random.default_rng(seed)
    gold = np.round(rng.uniform(0, 5, n), 1)
    return gold, gold + rng.normal(0, noise_a, n), gold + rng.normal(0, noise_b, n)


# ---- identical predictions and the point estimate ------------------------------------------------------------


@pytest.mark.parametrize("method", ["percentile", "BCa", "basic"])
def test_identical_predictions_give_exactly_zero(method):
    gold, a, _ = _synthetic(300, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no degenerate-data warning, no NaN
        result = stats.paired_spearman_difference(gold, a, a.copy(), method=method)
        assert tuple(result) == (0.0, 0.0, 0.0)
        difference, low, high = result  # unpacks as the (difference, low, high)
        assert (difference, low, high) == (0.0, 0.0, 0.0) and result.standard_error == 0.0
        # the same ranks (a monotone transform) give the same Spearman, hence exactly 0 as well
        assert tuple(stats.paired_spearman_difference(gold, a, np.exp(a), method=method)) == (0.0, 0.0, 0.0)
        average = stats.paired_average_difference({"x": (gold, a, a), "y": (gold[:50], a[:50], 3 * a[:50])})
        assert tuple(average) == (0.0, 0.0, 0.0)
    assert verdict_rules.verdict(result) == verdict_rules.UNRESOLVED


def test_point_difference_is_scipy_spearman_difference_x100():
    from stsnb.evaluation.evaluate import correlations

    gold, a, b = _synthetic(500, 1)
    result = stats.paired_spearman_difference(gold, a, b, n_resamples=200)
    expected = _spearman100(a, gold) - _spearman100(b, gold)
    assert result.difference == pytest.approx(expected, abs=1e-12)
    assert result.difference == pytest.approx(correlations(a, gold)[0] - correlations(b, gold)[0], abs=1e-12)
    assert result.low < result.difference < result.high
    assert result.n == 500 and result.n_resamples == 200 and result.method == "percentile" and result.seed == 0


def test_resampled_spearman_equals_scipy_on_every_resample_with_ties():
    rng = np.random.default_rng(2)
    n = 80
    gold = rng.integers(0, 4, n).astype(float)  # four levels: heavy ties in gold
    pred = np.round(gold + rng.normal(0, 1.5, n))  # ties in the predictions too
    bootstrap_rows = rng.integers(0, n, (50, n))  # with repeats: ties between copies of a pair
    jackknife_rows = np.array([np.delete(np.arange(n), i) for i in range(0, n, 7)])  # n - 1 pairs each
    for rows in (bootstrap_rows, jackknife_rows):
        ours = stats.resampled_spearman(gold, pred, rows)
        reference = [_spearman100(pred[i], gold[i]) for i in rows]
        np.testing.assert_allclose(ours, reference, rtol=0, atol=1e-10)
    with pytest.raises(ValueError, match="indices must lie in \\[0, 80\\), got 1..80"):
        stats.resampled_spearman(gold, pred, np.arange(1, 81)[None, :])


def test_single_task_is_scipys_paired_bootstrap_draw_for_draw():
    """Same Generator seed -> the same resamples as scipy.stats.bootstrap(paired=True) with a plain statistic."""
    gold, a, b = _synthetic(150, 3)

    def plain(g, x, y):  # one resample at a time, scipy's own spearmanr
        return _spearman100(x, g) - _spearman100(y, g)

    for method in ("percentile", "BCa"):
        reference = bootstrap(
            (gold, a, b),
            plain,
            paired=True,
            vectorized=False,
            n_resamples=300,
            method=method,
            rng=np.random.default_rng(7),
        )
        ours = stats.paired_spearman_difference(gold, a, b, n_resamples=300, seed=7, method=method)
        assert ours.low == pytest.approx(reference.confidence_interval.low, abs=1e-9)
        assert ours.high == pytest.approx(reference.confidence_interval.high, abs=1e-9)
        assert ours.standard_error == pytest.approx(reference.standard_error, abs=1e-9)


def test_seed_makes_the_interval_reproducible():
    gold, a, b = _synthetic(200, 4)
    first = stats.paired_spearman_difference(gold, a, b, n_resamples=300, seed=11)
    assert stats.paired_spearman_difference(gold, a, b, n_resamples=300, seed=11) == first
    other = stats.paired_spearman_difference(gold, a, b, n_resamples=300, seed=12)
    assert other.difference == first.difference and (other.low, other.high) != (first.low, first.high)


def test_swapping_the_systems_mirrors_the_interval():
    gold, a, b = _synthetic(200, 5)
    forward = stats.paired_spearman_difference(gold, a, b, n_resamples=400)
    backward = stats.paired_spearman_difference(gold, b, a, n_resamples=400)
    assert backward.difference == pytest.approx(-forward.difference, abs=1e-12)
    assert (backward.low, backward.high) == pytest.approx((-forward.high, -forward.low), abs=1e-9)


def test_higher_confidence_widens_the_interval():
    gold, a, b = _synthetic(200, 6)
    narrow = stats.paired_spearman_difference(gold, a, b, confidence_level=0.8, n_resamples=500)
    wide = stats.paired_spearman_difference(gold, a, b, confidence_level=0.99, n_resamples=500)
    assert wide.low < narrow.low < narrow.high < wide.high


# ---- the multi-task average ----------------------------------------------------------------------------------


def _brute_force_average(tasks, n_resamples: int, seed: int, confidence_level: float):
    """Explicit loop: per replicate, resample every task's pairs independently, average the differences.

    Draw order as scipy.stats.bootstrap uses for unpaired samples in one batch: all replicates of task 1, then
    all of task 2, from one Generator.
    """
    rng = np.random.default_rng(seed)
    draws = [rng.integers(0, len(gold), (n_resamples, len(gold))) for gold, _, _ in tasks]
    replicates = []
    for r in range(n_resamples):
        per_task = []
        for (gold, a, b), rows in zip(tasks, draws, strict=True):
            i = rows[r]
            per_task.append(_spearman100(a[i], gold[i]) - _spearman100(b[i], gold[i]))
        replicates.append(np.mean(per_task))
    tail = 100 * (1 - confidence_level) / 2
    return np.percentile(replicates, [tail, 100 - tail]), np.std(replicates, ddof=1)


def test_average_interval_matches_a_brute_force_loop():
    first, second = _synthetic(60, 7, 1.0, 1.8), _synthetic(45, 8, 2.0, 1.0)  # different sizes and signs
    result = stats.paired_average_difference({"first": first, "second": second}, n_resamples=400, seed=5)
    per_task = [_spearman100(a, g) - _spearman100(b, g) for g, a, b in (first, second)]
    assert result.difference == pytest.approx(np.mean(per_task), abs=1e-12)
    assert result.tasks == pytest.approx({"first": per_task[0], "second": per_task[1]}, abs=1e-12)
    (low, high), spread = _brute_force_average([first, second], 400, 5, 0.95)
    assert (result.low, result.high) == pytest.approx((low, high), abs=1e-9)
    assert result.standard_error == pytest.approx(spread, abs=1e-9)
    assert result.n == 105


def test_average_of_one_task_is_the_single_task_difference():
    gold, a, b = _synthetic(120, 9)
    single = stats.paired_spearman_difference(gold, a, b, n_resamples=300, seed=3)
    average = stats.paired_average_difference({"only": (gold, a, b)}, n_resamples=300, seed=3)
    assert tuple(average) == tuple(single)


def test_average_interval_is_narrower_than_either_task_alone():
    """Averaging two independent tasks of equal noise shrinks the spread by about sqrt(2)."""
    first, second = _synthetic(200, 10), _synthetic(200, 11)
    alone = [stats.paired_spearman_difference(*t, n_resamples=800) for t in (first, second)]
    both = stats.paired_average_difference({"first": first, "second": second}, n_resamples=800)
    assert both.standard_error < min(r.standard_error for r in alone)
    expected = math.sqrt(sum(r.standard_error**2 for r in alone)) / 2
    assert both.standard_error == pytest.approx(expected, rel=0.15)


@pytest.mark.slow
def test_percentile_interval_covers_the_true_difference():
    """Coverage sanity: bivariate normal scores, where Spearman's rho is (6/pi) arcsin(r/2) exactly."""
    r_a, r_b, n, trials = 0.8, 0.7, 150, 200
    truth = 100 * 6 / math.pi * (math.asin(r_a / 2) - math.asin(r_b / 2))
    rng = np.random.default_rng(12)
    covered = 0
    for trial in range(trials):
        gold = rng.normal(size=n)
        a = r_a * gold + math.sqrt(1 - r_a**2) * rng.normal(size=n)
        b = r_b * gold + math.sqrt(1 - r_b**2) * rng.normal(size=n)
        result = stats.paired_spearman_difference(gold, a, b, n_resamples=400, seed=trial)
        covered += result.low <= truth <= result.high
    assert 0.89 <= covered / trials <= 0.99, covered / trials


# ---- real predictions on STS-B test --------------------------------------------------------------------------


def _jaccard(first: str, second: str) -> float:
    words = [set(re.findall(r"\w+", s.lower())) for s in (first, second)]
    union = words[0] | words[1]
    return len(words[0] & words[1]) / len(union) if union else 0.0


@pytest.fixture(scope="module")
def stsb_predictions(minilm, data_dir):
    """The first 400 STS-B test pairs: gold, MiniLM cosine similarity, word-overlap Jaccard."""
    from stsnb import data
    from stsnb.evaluation import evaluate

    pairs = list(data.load_stsb("test", data_dir=data_dir))[:400]
    gold = np.array([p.score for p in pairs])
    cosine = evaluate.pair_similarities(minilm, pairs, cache=None)
    jaccard = np.array([_jaccard(p.sent1, p.sent2) for p in pairs])
    return gold, cosine, jaccard


@pytest.mark.slow
def test_real_encoder_beats_word_overlap_and_the_verdict_says_so(stsb_predictions):
    gold, cosine, jaccard = stsb_predictions
    result = stats.paired_spearman_difference(gold, cosine, jaccard)
    print(f"MiniLM - Jaccard on 400 STS-B test pairs: {result.describe()}")
    assert result.difference == pytest.approx(_spearman100(cosine, gold) - _spearman100(jaccard, gold), abs=1e-12)
    assert result.low < result.difference < result.high
    assert result.low > 0 and result.direction == 1 and result.excludes_zero
    assert verdict_rules.verdict(result, paper_direction=+1) == verdict_rules.SUPPORTED
    assert verdict_rules.verdict(result, paper_direction=-1) == verdict_rules.CONTRADICTED
    reverse = stats.paired_spearman_difference(gold, jaccard, cosine)
    assert reverse.high < 0 and verdict_rules.verdict(reverse, paper_direction=-1) == verdict_rules.SUPPORTED


@pytest.mark.slow
def test_real_near_tie_is_unresolved(stsb_predictions):
    gold, cosine, _ = stsb_predictions
    rng = np.random.default_rng(0)
    jittered = cosine + rng.normal(0, 1e-3 * cosine.std(), len(cosine))
    tie = stats.paired_spearman_difference(gold, cosine, jittered)
    # two equally noisy copies of the same predictor: no true difference between them
    noisy = [cosine + np.random.default_rng(s).normal(0, 0.5 * cosine.std(), len(cosine)) for s in (1, 2)]
    equal = stats.paired_spearman_difference(gold, *[n for n in noisy])
    print(f"MiniLM vs jittered: {tie.describe()}; two noisy copies: {equal.describe()}")
    assert abs(tie.difference) < 0.1 and tie.low <= 0 <= tie.high
    assert equal.low <= 0 <= equal.high
    for result in (tie, equal):
        assert verdict_rules.verdict(result, +1) == verdict_rules.verdict(result, -1) == verdict_rules.UNRESOLVED


@pytest.mark.slow
def test_percentile_and_bca_agree_on_real_predictions(stsb_predictions):
    """Why percentile is the default: at test-set sizes BCa's corrections move the ends very little."""
    gold, cosine, jaccard = stsb_predictions
    percentile = stats.paired_spearman_difference(gold, cosine, jaccard)
    bca = stats.paired_spearman_difference(gold, cosine, jaccard, method="BCa")
    print(f"percentile {percentile.describe()}, BCa {bca.describe()}")
    assert bca.difference == percentile.difference
    assert (bca.low, bca.high) == pytest.approx((percentile.low, percentile.high), abs=0.1 * percentile.standard_error)


# ---- seeds, the verdict rule and claim rows ------------------------------------------------------------------


def _interval(low: float, high: float) -> stats.PairedDifference:
    return stats.PairedDifference((low + high) / 2, low, high, 100, 0.95, 2000, "percentile", 0, 1.0)


ABOVE, BELOW, ACROSS = _interval(0.5, 2.0), _interval(-3.0, -0.2), _interval(-0.5, 1.0)
TOUCHING_ABOVE, TOUCHING_BELOW = _interval(0.0, 1.0), _interval(-1.0, 0.0)


@pytest.mark.parametrize(
    ("intervals", "direction", "expected"),
    [
        (ABOVE, +1, "supported"),
        (ABOVE, -1, "contradicted"),
        (BELOW, +1, "contradicted"),
        (BELOW, -1, "supported"),
        (ACROSS, +1, "unresolved"),
        (ACROSS, -1, "unresolved"),
        (TOUCHING_ABOVE, +1, "unresolved"),  # excluding 0 is strict: an end at 0 does not exclude it
        (TOUCHING_BELOW, -1, "unresolved"),
        ([ABOVE, ABOVE, _interval(0.1, 0.3)], +1, "supported"),
        ([ABOVE, ABOVE, _interval(0.1, 0.3)], -1, "contradicted"),
        ([BELOW, _interval(-9.0, -8.0)], +1, "contradicted"),
        ([BELOW, _interval(-9.0, -8.0)], -1, "supported"),
        ([ABOVE, BELOW], +1, "unresolved"),  # seeds disagree
        ([ABOVE, BELOW], -1, "unresolved"),
        ([ABOVE, ACROSS], +1, "unresolved"),  # one seed does not exclude 0
        ([BELOW, ACROSS], -1, "unresolved"),
        ([ACROSS, ACROSS], +1, "unresolved"),
        ({1: ABOVE, 2: ABOVE}, +1, "supported"),  # {seed: interval}
        ((1.2, 0.5, 2.0), +1, "supported"),  # one plain (difference, low, high)
        ([(1.2, 0.5, 2.0), (-1.0, -2.0, -0.5)], +1, "unresolved"),
    ],
)
def test_verdict_rule(intervals, direction, expected):
    assert verdict_rules.verdict(intervals, paper_direction=direction) == expected
    assert expected in verdict_rules.VERDICTS


def test_verdict_words_are_the_seven_of_the_design():
    assert verdict_rules.VERDICTS == (
        "supported",
        "contradicted",
        "unresolved",
        "equivalent",
        "small effect",
        "no meaningful effect",
        "not tested",
    )
    assert set(typing.get_args(verdict_rules.Verdict)) == set(verdict_rules.VERDICTS)


# ---- the sized verdict -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("intervals", "direction", "smallest", "expected"),
    [
        ((-0.03, -0.06, -0.01), +1, 0.9, "small effect"),  # verdict() says contradicted: against, too small
        ((0.03, 0.01, 0.05), +1, 0.9, "small effect"),  # on the paper's side, inside: the direction is kept
        (ACROSS, +1, 1.5, "no meaningful effect"),  # [-0.5, 1.0] contains 0, inside +-1.5
        (ACROSS, +1, 0.9, "unresolved"),
        (_interval(-0.9, 0.9), +1, 0.9, "unresolved"),  # inside is strict, as equivalence_verdict
        (ABOVE, +1, 0.9, "supported"),  # [0.5, 2.0]: on the paper's side, not inside +-0.9
        (ABOVE, +1, 0.3, "supported"),
        (ABOVE, +1, 3.0, "small effect"),
        (BELOW, +1, 0.9, "contradicted"),  # [-3.0, -0.2], mean -1.6 beyond -0.9
        (BELOW, +1, 2.0, "unresolved"),  # below 0, but -1.6 is not beyond -2.0 and -3.0 is not inside
        (BELOW, +1, 1.6, "unresolved"),  # "beyond" is strict
        (ABOVE, -1, 0.9, "contradicted"),  # the paper says a < b; mean +1.25 beyond +0.9
        (BELOW, -1, 0.9, "supported"),
        ([(-1.5, -2.0, -1.0), (-0.5, -0.8, -0.2)], +1, 0.9, "contradicted"),  # mean -1.0 beyond -0.9
        ([(-1.5, -2.0, -1.0), (-0.5, -0.8, -0.2)], +1, 1.2, "unresolved"),  # mean -1.0 not beyond -1.2
        ([(0.1, -0.2, 0.4), (-1.5, -2.0, -1.0)], +1, 0.9, "unresolved"),  # one seed inside, one not
        ([(0.1, -0.2, 0.4), (0.3, 0.1, 0.5)], +1, 0.9, "unresolved"),  # inside, but one excludes 0: they disagree
        ({"seed 0": (0.1, -0.2, 0.4), "seed 1": (0.0, -0.3, 0.3)}, +1, 0.5, "no meaningful effect"),
    ],
)
def test_sized_verdict_rule(intervals, direction, smallest, expected):
    assert verdict_rules.sized_verdict(intervals, direction, smallest) == expected
    assert expected in verdict_rules.VERDICTS


def test_sized_verdict_differs_from_verdict_only_by_size():
    """Wherever no interval set lies inside +-smallest_effect and the estimate is beyond it, the two rules agree."""
    for intervals, direction in [(ABOVE, +1), (BELOW, +1), (ACROSS, -1), ([ABOVE, BELOW], +1), (BELOW, -1)]:
        assert verdict_rules.sized_verdict(intervals, direction, 0.1) == verdict_rules.verdict(intervals, direction)
    with pytest.raises(ValueError, match="smallest_effect must be a positive number"):
        verdict_rules.sized_verdict(ABOVE, +1, 0.0)
    with pytest.raises(ValueError, match="paper_direction"):
        verdict_rules.sized_verdict(ABOVE, 0, 1.0)
    with pytest.raises(ValueError, match="at least one interval"):
        verdict_rules.sized_verdict([], +1, 1.0)


def test_equivalence_is_reachable_only_when_the_interval_is_narrower_than_the_margin():
    """Full width 2h must be under 2 x margin: at h = margin no interval fits strictly inside (-margin, +margin)."""
    ok = verdict_rules.equivalence_reachable(1.0, 0.6)
    assert ok.reachable and ok.sentence.startswith("equivalence reachable") and "within 0.40 of 0" in ok.sentence
    assert verdict_rules.equivalence_verdict((0.0, -0.6, 0.6), margin=1.0) == "equivalent"
    edge = verdict_rules.equivalence_reachable(1.0, 1.0)
    assert not edge.reachable and verdict_rules.equivalence_verdict((0.0, -1.0, 1.0), margin=1.0) == "unresolved"
    wide = verdict_rules.equivalence_reachable(0.5, 0.62)
    assert not wide.reachable and (wide.margin, wide.half_width) == (0.5, 0.62)
    assert wide.sentence.startswith("equivalence not reachable at this size")
    assert "(+-0.62)" in wide.sentence and "+-0.5" in wide.sentence
    assert verdict_rules.equivalence_reachable(1.0, 0.0).reachable
    with pytest.raises(ValueError, match="margin must be a positive number"):
        verdict_rules.equivalence_reachable(0.0, 0.5)
    with pytest.raises(ValueError, match="interval_half_width"):
        verdict_rules.equivalence_reachable(1.0, -0.1)


@pytest.mark.parametrize("direction", [0, 2, -2, True, 0.5])
def test_verdict_refuses_a_direction_other_than_plus_or_minus_one(direction):
    with pytest.raises(ValueError, match="paper_direction must be \\+1 or -1"):
        verdict_rules.verdict(ABOVE, paper_direction=direction)


def test_verdict_refuses_empty_nan_and_inverted_intervals():
    with pytest.raises(ValueError, match="at least one interval"):
        verdict_rules.verdict([])
    with pytest.raises(ValueError, match="interval 1 is not finite"):
        verdict_rules.verdict([ABOVE, (float("nan"), 0.1, 0.2)])
    with pytest.raises(ValueError, match="interval 0 has low 2.0 above high 1.0"):
        verdict_rules.verdict((1.5, 2.0, 1.0))


def test_direction_and_excludes_zero():
    assert (ABOVE.direction, BELOW.direction, ACROSS.direction, TOUCHING_ABOVE.direction) == (1, -1, 0, 0)
    assert ABOVE.excludes_zero and BELOW.excludes_zero and not ACROSS.excludes_zero
    assert ABOVE.describe() == "+1.25 [+0.50, +2.00]"


def test_across_seeds_reports_mean_and_sample_spread():
    values = [1.0, 2.5, 4.0, 0.5]
    spread = stats.across_seeds(values)
    assert spread.mean == pytest.approx(np.mean(values))
    assert spread.std == pytest.approx(np.std(values, ddof=1))
    assert (spread.min, spread.max, spread.n) == (0.5, 4.0, 4)
    single = stats.across_seeds([3.0])
    assert single.std is None and single.mean == 3.0 and single.n == 1  # one seed: the spread is unknown
    with pytest.raises(ValueError, match="non-empty"):
        stats.across_seeds([])
    with pytest.raises(ValueError, match="non-finite"):
        stats.across_seeds([1.0, float("nan")])


def test_claim_row_reports_seeds_envelope_and_verdict():
    runs = {1: _interval(0.5, 2.0), 2: _interval(0.2, 1.0), 3: _interval(1.0, 3.0)}
    row = verdict_rules.claim_row("A beats B", runs, paper_direction=+1)
    differences = [r.difference for r in runs.values()]
    assert row["verdict"] == "supported" and row["seeds"] == 3
    assert row["difference"] == pytest.approx(np.mean(differences))
    assert row["difference_std"] == pytest.approx(np.std(differences, ddof=1))
    assert (row["low"], row["high"]) == (0.2, 3.0)
    assert [entry["seed_run"] for entry in row["per_seed"]] == [1, 2, 3]
    assert row["per_seed"][0]["n_resamples"] == 2000
    mixed = verdict_rules.claim_row("A beats B", [_interval(0.5, 2.0), _interval(-0.1, 1.0)])
    assert mixed["verdict"] == "unresolved" and mixed["low"] == -0.1
    assert verdict_rules.claim_row("A beats B", [BELOW], paper_direction=-1)["verdict"] == "supported"


def test_to_dict_is_json_ready():
    import json

    first, second = _synthetic(40, 13), _synthetic(30, 14)
    result = stats.paired_average_difference({"one": first, "two": second}, n_resamples=100)
    restored = json.loads(json.dumps(result.to_dict()))
    assert restored["difference"] == result.difference and set(restored["tasks"]) == {"one", "two"}
    assert json.loads(json.dumps(verdict_rules.claim_row("c", {0: result})))["per_seed"][0]["seed_run"] == 0


# ---- bad input -----------------------------------------------------------------------------------------------


def test_mismatched_lengths_are_refused():
    gold, a, b = _synthetic(20, 15)
    with pytest.raises(ValueError, match="pred_b has 19 values but gold has 20"):
        stats.paired_spearman_difference(gold, a, b[:-1])
    with pytest.raises(ValueError, match="pred_a \\(task 'sick'\\) has 19 values but gold has 20"):
        stats.paired_average_difference({"sick": (gold, a[:-1], b)})


def test_fewer_than_three_pairs_are_refused():
    with pytest.raises(ValueError, match="at least 3 pairs, got 2"):
        stats.paired_spearman_difference([1.0, 2.0], [1.0, 2.0], [2.0, 1.0])


def test_nan_predictions_are_refused_with_name_and_count():
    gold, a, b = _synthetic(50, 16)
    b[[3, 7, 9]] = np.nan
    with pytest.raises(ValueError, match="pred_b has 3 non-finite values of 50 \\(3 NaN, 0 inf\\), first at index 3"):
        stats.paired_spearman_difference(gold, a, b)
    a[0] = np.inf
    with pytest.raises(ValueError, match="pred_a \\(task 'x'\\) has 1 non-finite values of 50 \\(0 NaN, 1 inf\\)"):
        stats.paired_average_difference({"x": (gold, a, b)})


def test_constant_scores_are_refused():
    gold, a, _ = _synthetic(30, 17)
    with pytest.raises(ValueError, match="pred_b is constant \\(30 equal values\\)"):
        stats.paired_spearman_difference(gold, a, np.ones(30))


@pytest.mark.parametrize("level", [0, 1, 1.5, -0.1, 95])
def test_confidence_level_outside_zero_one_is_refused(level):
    gold, a, b = _synthetic(30, 18)
    with pytest.raises(ValueError, match="confidence_level must lie strictly between 0 and 1"):
        stats.paired_spearman_difference(gold, a, b, confidence_level=level)


def test_other_settings_are_checked():
    gold, a, b = _synthetic(30, 19)
    with pytest.raises(ValueError, match="n_resamples must be a positive integer"):
        stats.paired_spearman_difference(gold, a, b, n_resamples=0)
    with pytest.raises(ValueError, match="method must be one of"):
        stats.paired_spearman_difference(gold, a, b, method="studentized")
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        stats.paired_spearman_difference(gold, a, b, seed=-1)
    with pytest.raises(ValueError, match="non-empty mapping"):
        stats.paired_average_difference({})
    with pytest.raises(ValueError, match="tasks\\['x'\\] must be \\(gold, pred_a, pred_b\\)"):
        stats.paired_average_difference({"x": (gold, a)})
    with pytest.raises(ValueError, match="one-dimensional"):
        stats.paired_spearman_difference(np.ones((3, 3)), a, b)


def test_resamples_of_only_tied_pairs_are_reported():
    """Three pairs: some resamples draw one pair three times, where Spearman is undefined."""
    with pytest.raises(ValueError, match="resamples drew only tied gold or prediction scores"):
        stats.paired_spearman_difference([1.0, 2.0, 3.0], [1.0, 3.0, 2.0], [3.0, 2.0, 1.0], n_resamples=200)


def test_paired_predictions_difference_is_the_average_difference_of_the_same_pairs():
    rng = np.random.default_rng(0)
    gold = {t: rng.normal(size=60) for t in ("A", "B")}
    a = {t: (g, g + rng.normal(0, 0.5, 60)) for t, g in gold.items()}
    b = {t: (g, g + rng.normal(0, 1.5, 60)) for t, g in gold.items()}
    got = stats.paired_predictions_difference(a, b, n_resamples=200, seed=1)
    want = stats.paired_average_difference({t: (gold[t], a[t][1], b[t][1]) for t in gold}, n_resamples=200, seed=1)
    assert tuple(got) == pytest.approx(tuple(want))
    with pytest.raises(ValueError, match="same non-empty set of tasks"):
        stats.paired_predictions_difference(a, {"A": b["A"]})
    with pytest.raises(ValueError, match="B: a and b were scored on different pairs"):
        stats.paired_predictions_difference(a, {"A": b["A"], "B": (gold["B"] + 1, b["B"][1])})
