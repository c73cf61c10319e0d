"""stsnb.claims: preconditions, the five verdicts, seeds; stats' equivalence rule and grouped bootstrap."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import spearmanr

from stsnb import claims, stats

UP, DOWN, ACROSS = (1.0, 0.4, 1.6), (-1.0, -1.6, -0.4), (0.2, -0.5, 0.9)


def test_failed_precondition_makes_a_clear_win_not_tested():
    moved = claims.baseline_moved({"seed 0": (0.1, -0.3, 0.5)}, "NLI fine-tuning")
    row = claims.claim("Smooth K2 beats cross entropy", {"seed 0": UP}, preconditions=[moved])
    assert not moved.holds and "NLI fine-tuning minus untrained: seed 0: +0.10 [-0.30, +0.50]" in moved.evidence
    assert row["verdict"] == "not tested"
    assert row["not_tested_because"].startswith("'NLI fine-tuning moved the encoder' does not hold")
    assert (row["difference"], row["low"], row["high"]) == UP  # the interval is still shown
    assert json.loads(json.dumps(row))["preconditions"][0]["holds"] is False


def test_preconditions_that_hold_leave_the_direction_verdict():
    moved = claims.baseline_moved([(0.8, 0.2, 1.4), (0.5, 0.1, 0.9)], "SimCSE")
    assert moved.holds
    assert claims.claim("a beats b", [UP, UP], preconditions=[moved])["verdict"] == "supported"
    assert claims.claim("a beats b", [DOWN, DOWN], preconditions=[moved])["verdict"] == "contradicted"
    assert claims.claim("a beats b", [UP, DOWN], preconditions=[moved])["verdict"] == "unresolved"
    assert claims.claim("a loses to b", [DOWN], direction=-1)["verdict"] == "supported"
    assert claims.claim("a differs from b", [UP], direction=0)["verdict"] == "unresolved"


def test_baseline_moved_needs_every_seed_above_zero():
    assert not claims.baseline_moved([(0.8, 0.2, 1.4), (0.3, -0.1, 0.7)]).holds
    assert not claims.baseline_moved([(-0.8, -1.4, -0.2)]).holds  # moved, but the wrong way


def test_left_start_fails_on_step_zero_or_no_weight_change():
    assert claims.left_start("+Contrast", {0: 120, 1: 40}, {0: 1e-3, 1: 2e-3}).holds
    kept_start = claims.left_start("+Contrast", {0: 0})
    assert not kept_start.holds and "selected step 0" in kept_start.evidence
    frozen = claims.left_start("the generative backbone", [50], [0.0])
    assert not frozen.holds and "0.0e+00" in frozen.evidence


def test_phenomenon_occurs_counts_cases():
    absent = claims.phenomenon_occurs("over-estimation", 0, out_of=1211)
    assert not absent.holds and absent.evidence == "0 of 1211 cases (needs >= 1)"
    assert claims.phenomenon_occurs("over-estimation", 12).holds
    row = claims.claim("CCL over-estimates less", [UP], preconditions=[absent])
    assert row["verdict"] == "not tested"


@pytest.mark.parametrize(
    ("intervals", "expected"),
    [
        ([(0.1, -0.4, 0.6)], "equivalent"),
        ([(0.1, -0.4, 0.6), (-0.2, -0.9, 0.5)], "equivalent"),
        ([(0.1, -0.4, 0.6), (0.5, -0.2, 1.2)], "unresolved"),  # one seed reaches past the margin
        ([(0.0, -1.5, 1.5)], "unresolved"),  # too wide to tell
        ([(5.0, 3.3, 6.9)], "contradicted"),  # matters by more than the margin
        ([(-5.0, -6.9, -3.3), (-4.0, -5.0, -2.0)], "contradicted"),
        ([(1.0, 1.0, 1.0)], "unresolved"),  # touching the margin is not inside it
    ],
)
def test_equivalence_verdict(intervals, expected):
    assert stats.equivalence_verdict(intervals, margin=1.0) == expected
    assert claims.claim("the template hardly matters", intervals, margin=1.0)["verdict"] == expected


def test_equivalence_margin_is_a_parameter_and_checked():
    assert stats.equivalence_verdict([(0.5, -1.5, 1.9)], margin=2.0) == "equivalent"
    with pytest.raises(ValueError, match="margin must be a positive number"):
        stats.equivalence_verdict([UP], margin=0)
    row = claims.claim("tau hardly matters", [UP], margin=2.0)
    assert row["kind"] == "equivalence" and row["margin"] == 2.0 and row["paper_direction"] == 0


def test_verdict_text_shows_seeds_and_counts_cover_five_verdicts():
    one = claims.claim("a beats b", {"seed 0": UP})
    three = claims.claim("a beats b", {f"seed {s}": UP for s in range(3)}, paper_difference=1.2)
    assert claims.verdict_text(one) == "supported (1 seed)"
    assert claims.verdict_text(three) == "supported (3 seeds)"
    assert "paper +1.20" in claims.describe(three) and "sd 0.00" in claims.describe(three)
    counts = claims.verdict_counts([one, three, claims.claim("x", [UP], margin=1.0)])
    assert set(counts) == {"supported", "contradicted", "unresolved", "equivalent", "not tested"}
    assert counts["supported"] == 2 and counts["unresolved"] == 1


def test_claim_refuses_a_bad_direction():
    with pytest.raises(ValueError, match=r"direction must be \+1, -1 or 0"):
        claims.claim("a beats b", [UP], direction=2)


# ---- grouped (cluster) bootstrap -----------------------------------------------------------------------------


def _pairs(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    gold = rng.normal(size=n)
    return gold, gold + rng.normal(scale=0.8, size=n), gold + rng.normal(scale=1.0, size=n)


def test_grouped_difference_matches_a_brute_force_cluster_bootstrap():
    gold, a, b = _pairs(40)
    groups = np.repeat(np.arange(20), 2)
    result = stats.paired_grouped_difference(gold, a, b, groups, n_resamples=300, seed=3)
    rng = np.random.default_rng(3)
    replicates = []
    for _ in range(300):
        drawn = rng.integers(0, 20, size=20)
        rows = np.concatenate([np.flatnonzero(groups == g) for g in drawn])
        replicates.append(100 * (spearmanr(a[rows], gold[rows])[0] - spearmanr(b[rows], gold[rows])[0]))
    low, high = np.quantile(replicates, [0.025, 0.975])
    assert result.low == pytest.approx(low, abs=1e-9) and result.high == pytest.approx(high, abs=1e-9)
    assert result.difference == pytest.approx(100 * (spearmanr(a, gold)[0] - spearmanr(b, gold)[0]))
    assert result.n == 20


def test_resampling_rows_of_duplicated_pairs_is_too_narrow():
    gold, a, b = _pairs(150, seed=1)
    twice = [np.repeat(x, 2) for x in (gold, a, b)]
    rows = stats.paired_spearman_difference(*twice, n_resamples=1000)
    grouped = stats.paired_grouped_difference(*twice, np.repeat(np.arange(150), 2), n_resamples=1000)
    once = stats.paired_spearman_difference(gold, a, b, n_resamples=1000)
    assert grouped.high - grouped.low > 1.25 * (rows.high - rows.low)
    assert grouped.high - grouped.low == pytest.approx(once.high - once.low, rel=0.15)


def test_grouped_difference_checks_its_groups():
    gold, a, b = _pairs(10)
    with pytest.raises(ValueError, match="groups has 9 labels but gold has 10"):
        stats.paired_grouped_difference(gold, a, b, list(range(9)))
    with pytest.raises(ValueError, match="at least 3 groups"):
        stats.paired_grouped_difference(gold, a, b, [0] * 5 + [1] * 5)
    assert stats.paired_grouped_difference(gold, a, a, range(10)).as_tuple() == (0.0, 0.0, 0.0)
