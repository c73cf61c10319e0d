"""Seeds-and-pairs (hierarchical) bootstrap and its t floor, the smallest detectable effect (by formula and by
simulation, stsnb.evaluation.power) and the multiplicity count (stsnb.evaluation.stats, verdict_rules), on synthetic
data."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm, spearmanr
from scipy.stats import t as student_t

from stsnb.evaluation import power, seed_bootstrap, stats, verdict_rules


def _task(n: int, rng: np.random.Generator, noise_a: float, noise_b: float):
    gold = np.round(rng.uniform(0, 5, n), 1)
    return gold, gold + rng.normal(0, noise_a, n), gold + rng.normal(0, noise_b, n)


def _seeds(gold: np.ndarray, noise: dict[int, tuple[float, float]], seed: int = 0) -> dict:
    """One task scored by two systems per training seed, on the same gold pairs."""
    rng = np.random.default_rng(seed)
    return {
        s: {"t": (gold, gold + rng.normal(0, a, len(gold)), gold + rng.normal(0, b, len(gold)))}
        for s, (a, b) in noise.items()
    }


def _spearman100(pred, gold) -> float:
    return 100 * spearmanr(pred, gold)[0]


def test_one_seed_is_the_paired_bootstrap_of_that_seed():
    rng = np.random.default_rng(0)
    gold, a, b = _task(200, rng, 1.0, 1.6)
    one = seed_bootstrap.seeds_and_pairs_difference({0: {"t": (gold, a, b)}}, n_resamples=1500, seed=3)
    paired = stats.paired_spearman_difference(gold, a, b, n_resamples=1500, seed=3)
    assert one.difference == pytest.approx(paired.difference, abs=1e-12)
    assert one.seeds == 1 and one.n == 200 and one.pairs == "shared"
    # a different stream of draws, the same distribution: the ends agree within bootstrap noise
    assert one.low == pytest.approx(paired.low, abs=1.5) and one.high == pytest.approx(paired.high, abs=1.5)


def test_point_estimate_is_the_mean_of_the_seeds_average_differences():
    rng = np.random.default_rng(1)
    gold1, gold2 = np.round(rng.uniform(0, 5, 80), 1), np.round(rng.uniform(0, 5, 50), 1)
    runs = {}
    for s in range(3):
        runs[s] = {
            "x": (gold1, gold1 + rng.normal(0, 1, 80), gold1 + rng.normal(0, 2, 80)),
            "y": (gold2, gold2 + rng.normal(0, 1, 50), gold2 + rng.normal(0, 2, 50)),
        }
    result = seed_bootstrap.seeds_and_pairs_difference(runs, n_resamples=300)
    expected = np.mean(
        [
            np.mean([_spearman100(r[t][1], r[t][0]) - _spearman100(r[t][2], r[t][0]) for t in ("x", "y")])
            for r in runs.values()
        ]
    )
    assert result.difference == pytest.approx(expected, abs=1e-10)
    assert set(result.tasks) == {"x", "y"} and result.seeds == 3 and result.n == 130
    assert result.low < result.difference < result.high


def test_identical_predictions_on_every_seed_give_exactly_zero():
    rng = np.random.default_rng(2)
    gold, a, _ = _task(60, rng, 1.0, 1.0)
    result = seed_bootstrap.seeds_and_pairs_difference({s: {"t": (gold, a, np.exp(a))} for s in range(3)})
    assert tuple(result) == (0.0, 0.0, 0.0) and result.standard_error == 0.0


def test_exact_small_case_every_replicate_is_one_of_the_seed_means():
    """Each seed's pred_a is gold itself and pred_b is gold reversed on one seed, gold on the others: a replicate's
    value is the mean over the drawn seeds of (100 - Spearman(b)), whatever pairs were drawn, so with 2 seeds whose
    differences are 0 and 200 every replicate is 0, 100 or 200 and the interval runs from 0 to 200."""
    gold = np.arange(10.0)
    runs = {0: {"t": (gold, gold, gold.copy())}, 1: {"t": (gold, gold, -gold)}}
    result = seed_bootstrap.seeds_and_pairs_difference(runs, n_resamples=400, seed=0)
    assert result.difference == pytest.approx(100.0)
    assert (result.low, result.high) == (pytest.approx(0.0), pytest.approx(200.0))
    per_seed = stats.paired_spearman_difference(gold, gold, -gold, n_resamples=200)
    assert (per_seed.low, per_seed.high) == (pytest.approx(200.0), pytest.approx(200.0)), "no pair noise at all"


def test_seeds_that_disagree_widen_the_interval_beyond_the_pairs_only_one():
    """Three seeds on the same pairs: two where a beats b, one where b beats a. The pairs-only interval of each seed
    is narrow and excludes 0; the seeds-and-pairs interval spreads over the seeds' disagreement."""
    rng = np.random.default_rng(4)
    gold = np.round(rng.uniform(0, 5, 300), 1)
    runs = _seeds(gold, {0: (0.5, 1.5), 1: (0.5, 1.5), 2: (1.5, 0.5)}, seed=4)
    per_seed = [stats.paired_average_difference(r, n_resamples=500) for r in runs.values()]
    both = seed_bootstrap.seeds_and_pairs_difference(runs, n_resamples=1000)
    widest = max(p.high - p.low for p in per_seed)
    assert both.high - both.low > 2 * widest
    assert both.low < 0 < both.high
    assert verdict_rules.verdict(per_seed) == verdict_rules.UNRESOLVED  # the per-seed rule agrees: seeds disagree


def test_seeds_that_agree_keep_the_pairs_width_when_pairs_are_shared():
    """Seeds that hardly differ: with shared pairs the interval is about one seed's pairs-only interval; resampling
    the pairs per seed instead averages their noise away and is narrower (why our notebooks share them)."""
    rng = np.random.default_rng(5)
    gold = np.round(rng.uniform(0, 5, 250), 1)
    a, b = gold + rng.normal(0, 1.0, 250), gold + rng.normal(0, 1.5, 250)
    jitter = {s: (a + rng.normal(0, 0.01, 250), b + rng.normal(0, 0.01, 250)) for s in range(3)}
    runs = {s: {"t": (gold, pa, pb)} for s, (pa, pb) in jitter.items()}
    one = stats.paired_spearman_difference(gold, a, b, n_resamples=1000)
    shared = seed_bootstrap.seeds_and_pairs_difference(runs, n_resamples=1000)
    nested = seed_bootstrap.seeds_and_pairs_difference(runs, n_resamples=1000, pairs="per seed")
    width = one.high - one.low
    assert shared.high - shared.low == pytest.approx(width, rel=0.2)
    assert nested.high - nested.low < 0.8 * width
    assert nested.pairs == "per seed"


def test_coverage_of_the_mean_over_seeds_on_a_known_population():
    """Seed effects drawn around a known mean difference (each seed's systems: gold plus noise whose size varies by
    seed), each trial's interval from 3 seeds; coverage of the population mean difference is near 95% (loose: 3
    seeds make a percentile interval short; we only require it is not far off, nor wildly over-covering)."""
    rng = np.random.default_rng(6)
    n, trials, covered = 120, 150, 0
    # the population difference: the mean over seed noise levels of E[Spearman(a) - Spearman(b)], approximated by a
    # large sample of gold and noise draws
    big_gold = rng.uniform(0, 5, 20000)

    def effect(noise_a: float) -> float:
        return _spearman100(big_gold + rng.normal(0, noise_a, 20000), big_gold) - _spearman100(
            big_gold + rng.normal(0, 1.2, 20000), big_gold
        )

    levels = np.linspace(0.8, 1.6, 9)
    truth = float(np.mean([effect(x) for x in levels]))
    for trial in range(trials):
        gold = rng.uniform(0, 5, n)
        runs = {}
        for s in range(3):
            noise_a = rng.choice(levels)
            runs[s] = {"t": (gold, gold + rng.normal(0, noise_a, n), gold + rng.normal(0, 1.2, n))}
        result = seed_bootstrap.seeds_and_pairs_difference(runs, n_resamples=400, seed=trial)
        covered += result.low <= truth <= result.high
    assert 0.7 <= covered / trials <= 1.0


def test_predictions_form_pairs_the_systems_on_the_same_gold():
    rng = np.random.default_rng(7)
    gold = np.round(rng.uniform(0, 5, 90), 1)
    a = {s: {"t": (gold, gold + rng.normal(0, 1, 90))} for s in range(2)}
    b = {s: {"t": (gold, gold + rng.normal(0, 2, 90))} for s in range(2)}
    from_predictions = seed_bootstrap.seeds_and_pairs_predictions_difference(a, b, n_resamples=200)
    direct = seed_bootstrap.seeds_and_pairs_difference(
        {s: {"t": (gold, a[s]["t"][1], b[s]["t"][1])} for s in range(2)}, n_resamples=200
    )
    assert tuple(from_predictions) == tuple(direct)
    untrained = {"t": (gold, gold + rng.normal(0, 3, 90))}  # one set of predictions shared by every seed
    assert seed_bootstrap.seeds_and_pairs_predictions_difference(a, untrained, n_resamples=200).seeds == 2
    with pytest.raises(ValueError, match="different pairs"):
        seed_bootstrap.seeds_and_pairs_predictions_difference(
            a, {s: {"t": (gold + 1, v["t"][1])} for s, v in b.items()}
        )


def test_shared_pairs_need_the_same_gold_on_every_seed_and_inputs_are_checked():
    rng = np.random.default_rng(8)
    g1, a, b = _task(40, rng, 1, 2)
    g2 = g1 + 0.1
    with pytest.raises(ValueError, match="same pairs"):
        seed_bootstrap.seeds_and_pairs_difference({0: {"t": (g1, a, b)}, 1: {"t": (g2, a, b)}})
    assert (
        seed_bootstrap.seeds_and_pairs_difference({0: {"t": (g1, a, b)}, 1: {"t": (g2, a, b)}}, pairs="per seed").seeds
        == 2
    )
    with pytest.raises(ValueError, match="same tasks"):
        seed_bootstrap.seeds_and_pairs_difference({0: {"t": (g1, a, b)}, 1: {"u": (g1, a, b)}})
    with pytest.raises(ValueError, match="pairs must be"):
        seed_bootstrap.seeds_and_pairs_difference({0: {"t": (g1, a, b)}}, pairs="nested")
    with pytest.raises(ValueError, match="non-empty"):
        seed_bootstrap.seeds_and_pairs_difference({})


# ---- the t floor ---------------------------------------------------------------------------------------------


def test_seed_mean_t_interval_of_hicls_seed_differences_by_hand():
    """Issue 41: HiCL's seed differences 0.44, 0.00, 0.00. Mean 0.44 / 3 = 0.1467; sd (ddof=1) sqrt((0.2933^2 +
    2 x 0.1467^2) / 2) = 0.2540; t(0.975, 2) = 4.3027; half-width 4.3027 x 0.2540 / sqrt(3) = 0.631."""
    t = seed_bootstrap.seed_mean_t_interval([0.44, 0.0, 0.0])
    assert student_t.ppf(0.975, 2) == pytest.approx(4.3027, abs=1e-4)
    assert t.mean == pytest.approx(0.1467, abs=1e-4) and t.std == pytest.approx(0.2540, abs=1e-4)
    assert t.half_width == pytest.approx(0.631, abs=1e-3) and t.df == 2
    assert (t.low, t.high) == (pytest.approx(0.1467 - 0.631, abs=1e-3), pytest.approx(0.1467 + 0.631, abs=1e-3))
    assert seed_bootstrap.seed_mean_t_interval([0.44]) is None, "one seed: no degrees of freedom"
    assert seed_bootstrap.seed_mean_t_interval([0.3, 0.3]).half_width == 0.0
    at_90 = seed_bootstrap.seed_mean_t_interval([1.0, 3.0], confidence_level=0.9)  # sd sqrt(2), t(0.95, 1) = 6.3138
    assert at_90.half_width == pytest.approx(6.3138 * np.sqrt(2) / np.sqrt(2), abs=1e-3)
    with pytest.raises(ValueError, match="non-empty"):
        seed_bootstrap.seed_mean_t_interval([])
    with pytest.raises(ValueError, match="non-finite"):
        seed_bootstrap.seed_mean_t_interval([0.1, float("nan")])


def _exact_runs(reversed_seeds: set[int], n_seeds: int) -> dict:
    """Each seed's pred_a is gold itself; pred_b is gold reversed on ``reversed_seeds``, gold on the others: a seed's
    difference is 200 or 0 whatever pairs are drawn (test_exact_small_case_every_replicate_is_one_of_the_seed_means)."""
    gold = np.arange(10.0)
    return {s: {"t": (gold, gold, -gold if s in reversed_seeds else gold.copy())} for s in range(n_seeds)}


def test_t_floor_widens_a_bootstrap_of_three_seeds_to_the_t_interval():
    """Seed differences 0, 0, 200 (no pair noise): the bootstrap's replicates are means of 3 drawn seeds, so its
    interval is [0, 200] at most; the t interval is 66.67 +- 4.3027 x 115.47 / sqrt(3) = 66.67 +- 286.85."""
    runs = _exact_runs({2}, 3)
    plain = seed_bootstrap.seeds_and_pairs_difference(runs, n_resamples=400, seed=0)
    floored = seed_bootstrap.seeds_and_pairs_difference(runs, n_resamples=400, seed=0, t_floor=True)
    half = student_t.ppf(0.975, 2) * np.std([0.0, 0.0, 200.0], ddof=1) / np.sqrt(3)
    assert half == pytest.approx(286.85, abs=0.01)
    assert plain.low >= 0.0 and plain.high <= 200.0
    assert floored.difference == pytest.approx(200 / 3)
    assert (floored.low, floored.high) == (pytest.approx(200 / 3 - half), pytest.approx(200 / 3 + half))
    assert (floored.bootstrap_low, floored.bootstrap_high) == (plain.low, plain.high)
    assert floored.t_half_width == pytest.approx(half) and floored.floored
    assert floored.seeds == 3 and floored.standard_error == plain.standard_error
    two = seed_bootstrap.seeds_and_pairs_difference(_exact_runs({1}, 2), n_resamples=200, t_floor=True)
    assert (two.low, two.high) == (pytest.approx(100 - 12.7062 * 100, abs=0.01), pytest.approx(100 + 1270.62, abs=0.01))


def test_t_floor_leaves_a_wider_bootstrap_interval_and_one_seed_alone():
    """Seeds that agree (tiny jitter) on noisy pairs: the t interval of their means is far narrower than the
    bootstrap's, so the floor moves neither end; with one seed there is no t interval and nothing moves."""
    rng = np.random.default_rng(5)
    gold = np.round(rng.uniform(0, 5, 250), 1)
    a, b = gold + rng.normal(0, 1.0, 250), gold + rng.normal(0, 1.5, 250)
    runs = {s: {"t": (gold, a + rng.normal(0, 0.01, 250), b + rng.normal(0, 0.01, 250))} for s in range(3)}
    plain = seed_bootstrap.seeds_and_pairs_difference(runs, n_resamples=500)
    floored = seed_bootstrap.seeds_and_pairs_difference(runs, n_resamples=500, t_floor=True)
    assert tuple(floored) == tuple(plain) and not floored.floored
    assert floored.t_half_width < (plain.high - plain.low) / 10
    one = seed_bootstrap.seeds_and_pairs_difference({0: runs[0]}, n_resamples=300, t_floor=True)
    assert one.t_half_width is None and not one.floored
    assert tuple(one) == tuple(seed_bootstrap.seeds_and_pairs_difference({0: runs[0]}, n_resamples=300))


def test_t_floor_is_off_by_default_and_the_default_result_is_unchanged():
    runs = _exact_runs({2}, 3)
    plain = seed_bootstrap.seeds_and_pairs_difference(runs, n_resamples=200)
    assert type(plain) is seed_bootstrap.SeedsAndPairsDifference
    assert set(plain.to_dict()) == {
        "difference", "low", "high", "n", "confidence_level", "n_resamples", "method", "seed", "standard_error",
        "tasks", "seeds", "pairs",
    }  # fmt: skip
    floored = seed_bootstrap.seeds_and_pairs_difference(runs, n_resamples=200, t_floor=True)
    assert {"bootstrap_low", "bootstrap_high", "t_half_width", "floored"} <= set(floored.to_dict())
    same = seed_bootstrap.seeds_and_pairs_difference(
        {s: {"t": (r["t"][0],) * 3} for s, r in runs.items()}, t_floor=True
    )
    assert tuple(same) == (0.0, 0.0, 0.0) and same.t_half_width == 0.0
    a = {s: {"t": (r["t"][0], r["t"][1])} for s, r in runs.items()}
    b = {s: {"t": (r["t"][0], r["t"][2])} for s, r in runs.items()}
    via_predictions = seed_bootstrap.seeds_and_pairs_predictions_difference(a, b, n_resamples=200, t_floor=True)
    assert tuple(via_predictions) == tuple(floored)


# ---- the smallest detectable effect ----------------------------------------------------------------------------


def test_detectable_effect_is_the_half_width_times_z_plus_z_power_over_z():
    factor = (norm.ppf(0.975) + norm.ppf(0.8)) / norm.ppf(0.975)
    assert factor == pytest.approx(1.4294, abs=1e-4)
    assert verdict_rules.detectable_effect(-1.0, 3.0) == pytest.approx(2.0 * factor)
    assert verdict_rules.detectable_effect(0.0, 0.0) == 0.0
    at_90 = verdict_rules.detectable_effect(-1.0, 1.0, confidence_level=0.9, power=0.5)
    assert at_90 == pytest.approx(1.0), "at 50% power the detectable effect is the half-width itself"
    with pytest.raises(ValueError):
        verdict_rules.detectable_effect(1.0, 0.0)
    with pytest.raises(ValueError):
        verdict_rules.detectable_effect(0.0, 1.0, power=1.0)


def test_an_effect_of_the_detectable_size_is_detected_about_80_percent_of_the_time():
    """Normal estimates with a known standard error: an interval estimate +- 1.96 SE excludes 0 with probability
    0.8 when the true effect is detectable_effect of that interval."""
    rng = np.random.default_rng(9)
    se = 0.7
    delta = verdict_rules.detectable_effect(-1.96 * se, 1.96 * se)
    estimates = rng.normal(delta, se, 20000)
    assert np.mean(estimates - 1.96 * se > 0) == pytest.approx(0.8, abs=0.01)


# ---- power by simulation ---------------------------------------------------------------------------------------


def test_no_training_variance_on_one_seed_is_the_normal_formula():
    z_sum = norm.ppf(0.975) + norm.ppf(0.8)  # 1.95996 + 0.84162
    assert z_sum == pytest.approx(2.8016, abs=1e-4)
    for pair_se in (0.5, 1.0, 2.0):
        found = power.simulated_detectable_effect(0.0, pair_se, 1)
        assert found == pytest.approx(z_sum * pair_se, abs=0.02 * pair_se)  # simulation error about 0.005 x pair_se
        assert found == pytest.approx(verdict_rules.detectable_effect(-1.96 * pair_se, 1.96 * pair_se), rel=0.01)
    # Phi(delta / se - z): at delta = 2 se, Phi(2 - 1.96) = 0.516
    assert power.simulated_power(2.0, 0.0, 1.0, 1) == pytest.approx(norm.cdf(2.0 - norm.ppf(0.975)), abs=0.01)


def test_no_training_variance_makes_any_number_of_seeds_one_seed():
    """seed_sd = 0: every seed's estimate is the same number, so n seeds are one seed, draw for draw."""
    one = power.simulated_detectable_effect(0.0, 0.8, 1, n_sim=5000)
    for rule in power.RULES:
        assert power.simulated_detectable_effect(0.0, 0.8, 3, rule=rule, n_sim=5000) == one
        assert power.simulated_detectable_effect(0.0, 0.8, 5, rule=rule, n_sim=5000) == one


def test_training_variance_and_the_every_seed_rule_need_a_larger_effect():
    base = power.simulated_detectable_effect(0.0, 1.0, 3)
    every = power.simulated_detectable_effect(0.5, 1.0, 3)
    mean = power.simulated_detectable_effect(0.5, 1.0, 3, rule="seed mean")
    assert every > base + 0.3 and mean > base
    assert power.simulated_detectable_effect(1.0, 1.0, 3) > every  # more variance, larger
    # the reviewer's point: the interval-only size has well under 80% power once seeds vary and all must agree
    stated = verdict_rules.detectable_effect(-1.96, 1.96)
    assert power.simulated_power(stated, 0.5, 1.0, 3) < 0.7


def test_closed_forms_without_pair_noise_and_on_one_seed():
    """pair_se = 0: every seed's interval is its estimate, all n of delta + s_i must be above 0, probability
    Phi(delta / sd)^n, so delta = sd x Phi^-1(0.8^(1/n)) (3 seeds: 1.4634 sd). One seed with both noises: the estimate
    is N(delta, sd^2 + se^2) and must exceed z se: delta = z se + z_0.8 sqrt(sd^2 + se^2)."""
    assert norm.ppf(0.8 ** (1 / 3)) == pytest.approx(1.4634, abs=1e-4)
    assert power.simulated_detectable_effect(1.0, 0.0, 3) == pytest.approx(1.4634, abs=0.02)
    assert power.simulated_detectable_effect(2.0, 0.0, 1) == pytest.approx(2.0 * norm.ppf(0.8), abs=0.03)
    expected = norm.ppf(0.975) * 0.5 + norm.ppf(0.8) * np.sqrt(1.0 + 0.25)
    assert expected == pytest.approx(1.9209, abs=1e-4)
    for rule in power.RULES:  # with one seed both rules are the same
        assert power.simulated_detectable_effect(1.0, 0.5, 1, rule=rule) == pytest.approx(expected, abs=0.02)


def test_the_answer_is_the_smallest_effect_reaching_the_power_of_the_same_simulation():
    for rule in power.RULES:
        delta = power.simulated_detectable_effect(0.7, 1.2, 3, rule=rule, n_sim=4000, seed=3)
        assert power.simulated_power(delta + 1e-9, 0.7, 1.2, 3, rule=rule, n_sim=4000, seed=3) >= 0.8
        assert power.simulated_power(delta, 0.7, 1.2, 3, rule=rule, n_sim=4000, seed=3) < 0.8
    at_half = power.simulated_detectable_effect(0.0, 1.0, 1, power=0.5)
    assert at_half == pytest.approx(norm.ppf(0.975), abs=0.02), "50% power: the estimate must reach z se"
    assert power.simulated_detectable_effect(0.3, 1.0, 3) == power.simulated_detectable_effect(0.3, 1.0, 3)


def test_power_simulation_checks_its_inputs():
    for kwargs, match in [
        (dict(seed_sd=-1.0, pair_se=1.0, n_seeds=3), "seed_sd"),
        (dict(seed_sd=0.0, pair_se=float("nan"), n_seeds=3), "pair_se"),
        (dict(seed_sd=0.0, pair_se=1.0, n_seeds=0), "n_seeds"),
        (dict(seed_sd=0.0, pair_se=1.0, n_seeds=3, rule="any seed"), "rule"),
        (dict(seed_sd=0.0, pair_se=1.0, n_seeds=3, power=1.0), "power"),
        (dict(seed_sd=0.0, pair_se=1.0, n_seeds=3, n_sim=10), "n_sim"),
    ]:
        with pytest.raises(ValueError, match=match):
            power.simulated_detectable_effect(**kwargs)


# ---- multiplicity ------------------------------------------------------------------------------------------------


def test_multiplicity_counts_intervals_and_expected_chance_exclusions():
    m = verdict_rules.multiplicity(38)
    assert (m.intervals, m.expected_false) == (38, pytest.approx(1.9))
    assert (
        m.describe()
        == "38 intervals computed; about 1.9 (5% of them) would exclude 0 by chance if no difference were real"
    )
    assert verdict_rules.multiplicity(1).describe().startswith("1 interval computed")
    assert verdict_rules.multiplicity(10, 0.9).expected_false == pytest.approx(1.0)
    with pytest.raises(ValueError):
        verdict_rules.multiplicity(-1)


def test_multiplicity_counts_precondition_intervals_apart_and_leaves_timing_ranges_out():
    m = verdict_rules.multiplicity(38, preconditions=12, timing_ranges_excluded=1)
    assert (m.intervals, m.preconditions, m.total, m.timing_ranges_excluded) == (38, 12, 50, 1)
    assert m.expected_false == pytest.approx(2.5)
    assert m.describe() == (
        "38 claim intervals and 12 precondition intervals computed (50 in all); about 2.5 (5% of them) would exclude "
        "0 by chance if no difference were real; 1 timing range not counted (measured seconds, not a test)"
    )
    none = verdict_rules.multiplicity(1, preconditions=0)
    assert none.describe().startswith("1 claim interval and 0 precondition intervals computed (1 in all)")
    assert verdict_rules.multiplicity(20, 0.9, preconditions=10).expected_false == pytest.approx(3.0)
    old = verdict_rules.multiplicity(38, timing_ranges_excluded=2)
    assert old.describe().endswith("; 2 timing ranges not counted (measured seconds, not a test)")
    assert verdict_rules.multiplicity(38).total == 38 and verdict_rules.multiplicity(38).preconditions is None
    with pytest.raises(ValueError, match="preconditions"):
        verdict_rules.multiplicity(3, preconditions=-1)
    with pytest.raises(ValueError, match="timing_ranges_excluded"):
        verdict_rules.multiplicity(3, timing_ranges_excluded=1.5)


def test_chance_exclusions_match_the_expectation_under_no_difference():
    """Two systems of equal quality (the same noise level): about 5% of the 95% intervals exclude 0."""
    rng = np.random.default_rng(10)
    excluded, n = 0, 200
    for trial in range(n):
        gold, a, b = _task(80, rng, 1.0, 1.0)
        excluded += stats.paired_spearman_difference(gold, a, b, n_resamples=300, seed=trial).excludes_zero
    assert excluded <= 3 * verdict_rules.multiplicity(n).expected_false


def test_the_detectable_effect_of_a_claims_seeds_is_the_closed_form_on_one_and_the_simulation_on_several():
    from stsnb.evaluation import power, verdict_rules

    assert power.detectable_of_seeds([(0.5, -0.5, 1.5)]) == pytest.approx(verdict_rules.detectable_effect(-0.5, 1.5))
    seeds = [(0.5, -1.5, 2.5), (1.5, -0.5, 3.5), (-0.5, -2.5, 1.5)]  # half-width 2.0, seed sd 1.0
    pair_se = 2.0 / 1.959964
    assert power.detectable_of_seeds(seeds, n_sim=4000) == pytest.approx(
        power.simulated_detectable_effect(1.0, pair_se, 3, rule="seed mean", n_sim=4000)
    )
    assert power.detectable_of_seeds(seeds, n_sim=4000) > verdict_rules.detectable_effect(-1.5, 2.5)
