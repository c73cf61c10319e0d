"""The contrastive Spearman ceiling (Pcc-tuning Section 2.3, Appendix C): symbolic identities, brute force, DP."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import sympy as sp
from scipy.stats import spearmanr

from stsnb.papers.pcc_tuning import ceiling
from stsnb.papers.pcc_tuning.ceiling import k, m, n, q

PAPER_EQ7 = (7 * n**2 - 4) / (8 * (n**2 - 1))


def _is_zero(expr: sp.Expr) -> bool:
    return sp.simplify(expr) == 0


@pytest.mark.parametrize("steps", [ceiling.appendix_c_steps, ceiling.section_2_3_steps])
def test_every_step_is_proved_except_the_printed_upper_limits(steps):
    checks = ceiling.check_steps(steps())
    failing = [c.label for c in checks if not c.holds]
    assert failing == [c.label for c in checks if "(as printed)" in c.label]
    assert failing, "the printed first sums run to k; sympy must find them unequal to Eq. 4"
    for check in checks:
        assert check.holds == (check.difference_to_previous == 0)
        if not check.holds:  # nonzero for 0 < k < n, e.g. k = 1, n = 4
            assert check.difference_to_definition.subs({k: 1, n: 4}) != 0
    assert checks[-1].holds and _is_zero(steps()[-1].expr - ceiling.sum_d_squared_closed_form())


def test_eq5_closed_form_equals_eq4():
    assert _is_zero(ceiling.sum_d_squared().doit() - ceiling.sum_d_squared_closed_form())


def test_eq6_eq7_even_n():
    best = ceiling.eq2_optimum("even")
    assert best.k_star == (n / 2,)
    assert _is_zero(best.f_min - (-5 * n**2 / 4 - 2 * n - 1))
    paper_eq6 = n * (n + 1) * (2 * n + 1) / 6 - n / 4 * (5 * n**2 / 4 + 2 * n + 1)
    assert _is_zero(best.min_sum_d_squared - paper_eq6)
    assert _is_zero(best.max_rho - PAPER_EQ7)
    assert _is_zero(best.max_rho - (1 - (n**2 - 4) / (8 * (n**2 - 1))))
    assert best.limit == sp.Rational(7, 8)


def test_eq6_eq7_odd_n_is_exactly_seven_eighths():
    best = ceiling.eq2_optimum("odd")
    rho = ceiling.eq2_binary_rho()
    assert [sp.simplify(rho.subs(k, ks)) for ks in best.k_star] == [sp.Rational(7, 8)] * 2
    assert best.max_rho == sp.Rational(7, 8) and best.limit == sp.Rational(7, 8)


@pytest.fixture(scope="module")
def closed_forms():
    """Eq. 2 and tie-corrected rho(k, n), and their maxima for even and odd n, as numeric functions."""
    tie = ceiling.tie_corrected_optimum()
    return {
        "eq2": sp.lambdify((k, n), ceiling.eq2_binary_rho()),
        "tie": sp.lambdify((k, n), ceiling.tie_corrected_binary_rho()),
        "eq2_max": {p: sp.lambdify(n, ceiling.eq2_optimum(p).max_rho) for p in ("even", "odd")},
        "tie_max": {"even": sp.lambdify(n, tie.max_rho_even), "odd": sp.lambdify(n, tie.max_rho_odd)},
    }


@pytest.mark.parametrize("size", range(2, 31))
def test_closed_forms_equal_brute_force(size, closed_forms):
    brute = ceiling.brute_force_binary(size)
    np.testing.assert_allclose(brute.eq2, closed_forms["eq2"](brute.k, size), atol=1e-12)
    np.testing.assert_allclose(brute.scipy, closed_forms["tie"](brute.k, size), atol=1e-12)
    parity = "even" if size % 2 == 0 else "odd"
    assert brute.eq2.max() == pytest.approx(closed_forms["eq2_max"][parity](size), abs=1e-12)
    assert brute.k[brute.eq2.argmax()] == size // 2
    assert brute.scipy.max() == pytest.approx(closed_forms["tie_max"][parity](size), abs=1e-12)


def test_tie_corrected_ceiling_and_its_relation_to_eq2():
    optimum = ceiling.tie_corrected_optimum()
    assert optimum.q_star == sp.Rational(1, 2)
    assert optimum.limit == sp.sqrt(3) / 2
    assert optimum.max_rho_odd == sp.sqrt(3) / 2
    assert _is_zero(optimum.rho_of_q**2 - 3 * q * (1 - q) * n**2 / (n**2 - 1))
    assert ceiling.eq2_as_mean_identity() == 0
    assert float(optimum.limit) < 7 / 8


def test_level_limits():
    tie, eq2 = ceiling.level_limits()
    assert _is_zero(tie - sp.sqrt(1 - 1 / m**2))
    assert _is_zero(eq2 - (1 - 1 / (2 * m**2)))
    assert tie.subs(m, 2) == sp.sqrt(3) / 2 and eq2.subs(m, 2) == sp.Rational(7, 8)


def _brute_force_levels(gold: np.ndarray, levels: int) -> float:
    values = np.unique(gold)
    return max(
        spearmanr(np.searchsorted(np.array(cuts), gold, side="right"), gold)[0]
        for cuts in itertools.combinations(values[1:], levels - 1)
    )


@pytest.mark.parametrize("size", [4, 7, 9])
@pytest.mark.parametrize("levels", [2, 3, 4])
def test_untied_level_ceiling_equals_brute_force(size, levels):
    gold = np.random.default_rng(size).permutation(size).astype(float)
    exact = ceiling.untied_level_ceiling(size, levels)
    assert exact == pytest.approx(_brute_force_levels(gold, levels), abs=1e-12)
    assert exact == pytest.approx(ceiling.level_ceiling(gold, levels).spearman, abs=1e-12)


def test_untied_level_ceiling_tends_to_the_limit():
    tie, _ = ceiling.level_limits()
    for levels in range(2, 11):
        assert ceiling.untied_level_ceiling(100_000, levels) == pytest.approx(float(tie.subs(m, levels)), abs=1e-5)


@pytest.mark.parametrize("seed", range(6))
def test_level_ceiling_dp_equals_brute_force_on_tied_labels(seed):
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 8, size=int(rng.integers(12, 40))).astype(float) / 2
    for levels in range(2, 6):
        result = ceiling.level_ceiling(gold, levels)
        assert result.spearman == pytest.approx(_brute_force_levels(gold, levels), abs=1e-10)
        assert result.spearman == pytest.approx(spearmanr(result.prediction, gold)[0], abs=1e-10)
        assert len(result.cuts) == levels - 1


@pytest.mark.parametrize("seed", range(3))
def test_threshold_is_the_best_of_all_binary_predictions(seed):
    rng = np.random.default_rng(100 + seed)
    gold = rng.integers(0, 4, size=9).astype(float)
    every = max(
        spearmanr(p, gold)[0] for p in itertools.product((0.0, 1.0), repeat=len(gold)) if 0 < sum(p) < len(gold)
    )
    best = ceiling.best_binary_classifier(gold)
    assert best.spearman == pytest.approx(every, abs=1e-12)
    assert best.spearman == pytest.approx(ceiling.level_ceiling(gold, 2).spearman, abs=1e-12)


def test_ceiling_grows_with_levels_and_reaches_one():
    gold = np.random.default_rng(7).integers(0, 26, size=300).astype(float) / 5
    values = [ceiling.level_ceiling(gold, levels).spearman for levels in range(2, 11)]
    assert all(b >= a - 1e-12 for a, b in zip(values, values[1:], strict=False))
    assert values[-1] > values[0]
    assert ceiling.level_ceiling(gold, len(np.unique(gold))).spearman == pytest.approx(1.0)


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="two distinct"):
        ceiling.best_binary_classifier([1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="at least 2"):
        ceiling.level_ceiling([0.0, 1.0], 1)
    with pytest.raises(ValueError, match="parity"):
        ceiling.eq2_optimum("neither")


def test_binary_ceiling_on_real_stsb_test(data_dir):
    from stsnb.data import load_stsb

    gold = np.array([p.score for p in load_stsb("test", data_dir=data_dir)])
    assert len(gold) == 1379
    best = ceiling.best_binary_classifier(gold)
    assert 0 < best.spearman < 1
    assert best.spearman == pytest.approx(spearmanr(best.prediction, gold)[0], abs=1e-12)
    assert set(np.unique(best.prediction)) == {0.0, 1.0}
    assert best.spearman == pytest.approx(ceiling.level_ceiling(gold, 2).spearman, abs=1e-10)
