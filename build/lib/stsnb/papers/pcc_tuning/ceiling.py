"""The Spearman ceiling of a binary (contrastive) classifier: Pcc-tuning Section 2.3 and Appendix C, and beyond.

The paper sorts n pairs by gold similarity and lets an ideal binary classifier call the first k "similar" (1)
and the rest "dissimilar" (0). With the no-ties formula rho = 1 - 6 sum d_i^2 / (n(n^2 - 1)) (Eq. 2) and
mid-ranks for the tied predictions (Eq. 3-4) it derives sum d_i^2 in closed form (Eq. 5, Appendix C Eq. 10-12),
minimises it at k = n/2 (Eq. 6) and finds max rho = (7n^2 - 4) / (8(n^2 - 1)) -> 7/8 (Eq. 7).

Symbolic part (sympy): every printed step as an expression, checked against Eq. 4; the optimum for even and
odd n. Past the paper: Spearman as scipy/SentEval computes it is the Pearson correlation of mid-ranks, which is
sqrt(u) with u = 3k(n - k)/(n^2 - 1), while Eq. 2 gives (1 + u)/2; so the tie-corrected ceiling is sqrt(3)/2,
not 7/8. For m ordered levels the limits are sqrt(1 - 1/m^2) (tie-corrected) and 1 - 1/(2m^2) (Eq. 2).

Numeric part (numpy/scipy): brute force over k with Eq. 2 and with scipy, and the best classifier with m levels
on real, tied gold scores (exact dynamic programme over cut points between distinct gold values).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import sympy as sp
from scipy.stats import rankdata, spearmanr

# n pairs, k predicted positive, i the gold rank (1 = most similar), q = k/n,
# m levels of equal size L (n = mL), g the level index
n, k, i = sp.symbols("n k i", integer=True, positive=True)
q = sp.Symbol("q", positive=True)
m, L, g = sp.symbols("m L g", integer=True, positive=True)

_HALF = sp.Rational(1, 2)


def _sum(term: sp.Expr, low: sp.Expr, high: sp.Expr) -> sp.Sum:
    return sp.Sum(term, (i, low, high))


# ---- Section 2.3 and Appendix C: the no-ties formula (Eq. 2-7) ---------------------------------------------


def spearman_eq2(sum_d_squared: sp.Expr) -> sp.Expr:
    """Eq. 2: rho = 1 - 6 sum d_i^2 / (n(n^2 - 1)) (exact only without ties)."""
    return 1 - 6 * sum_d_squared / (n * (n**2 - 1))


def sum_d_squared() -> sp.Expr:
    """Eq. 3-4: d_i = i - (k+1)/2 for the k positives, i - (k+n+1)/2 for the n-k negatives; their sum of squares."""
    return _sum((i - (k + 1) / 2) ** 2, 1, k) + _sum((i - (k + n + 1) / 2) ** 2, k + 1, n)


def sum_d_squared_closed_form() -> sp.Expr:
    """Eq. 5 (last line, = Eq. 12): n(n+1)(2n+1)/6 + n/4 (k^2 - nk - (n+1)^2)."""
    return n * (n + 1) * (2 * n + 1) / 6 + n / 4 * (k**2 - n * k - (n + 1) ** 2)


@dataclass(frozen=True)
class Step:
    """One line of a printed derivation (``note`` says where our line departs from the printed one)."""

    label: str
    expr: sp.Expr
    note: str = ""


@dataclass(frozen=True)
class StepCheck:
    """A step checked by sympy: both differences are simplified; 0 means the identity is proved."""

    label: str
    difference_to_previous: sp.Expr  # step minus the previous step that holds
    difference_to_definition: sp.Expr  # step minus Eq. 4
    note: str = ""

    @property
    def holds(self) -> bool:
        return self.difference_to_definition == 0


def _a() -> sp.Expr:
    return (k + 1) / 2


def appendix_c_steps() -> list[Step]:
    """Every line of Appendix C (Eq. 10-12), in order. Eq. 10's last line is printed with sum_{i=1}^{k}; it
    only continues into Eq. 11 with sum_{i=1}^{n} (the square moved out of the second sum), so it appears twice:
    as printed, and with the upper limit n."""
    a = _a()
    first = _sum((i - a) ** 2, 1, k)
    whole = _sum((i - a) ** 2, 1, n)
    rest = _sum(n**2 / 4 - n * (i - a), k + 1, n)
    tail = (n - k) * n**2 / 4
    sum_i2 = n * (n + 1) * (2 * n + 1) / 6
    return [
        Step("Eq. 10.1 (= Eq. 4)", sum_d_squared()),
        Step("Eq. 10.2", first + _sum(((i - a) - n / 2) ** 2, k + 1, n)),
        Step("Eq. 10.3", first + _sum((i - a) ** 2 + n**2 / 4 - n * (i - a), k + 1, n)),
        Step("Eq. 10.4 (as printed)", first + rest, "first sum printed up to k"),
        Step("Eq. 10.4 (first sum up to n)", whole + rest, "upper limit k -> n, as Eq. 11.1 continues"),
        Step("Eq. 11.1", whole + tail - n * _sum(i - a, k + 1, n)),
        Step("Eq. 11.2", whole + tail - n * ((n - k) * (n + k + 1) / 2 - (n - k) * (k + 1) / 2)),
        Step("Eq. 11.3", whole + tail - n * (n - k) * ((n + k + 1) / 2 - (k + 1) / 2)),
        Step("Eq. 11.4", whole + n**2 * (n - k) / 4 - n**2 * (n - k) / 2),
        Step("Eq. 11.5", whole - n**2 * (n - k) / 4),
        Step("Eq. 11.6", _sum(i**2 + (k + 1) ** 2 / 4 - (k + 1) * i, 1, n) - n**2 * (n - k) / 4),
        Step(
            "Eq. 11.7",
            _sum(i**2, 1, n) + n * (k + 1) ** 2 / 4 - n * (n + 1) * (k + 1) / 2 - n**2 * (n - k) / 4,
        ),
        Step("Eq. 12.1", sum_i2 + n / 4 * ((k + 1) ** 2 - 2 * (k + 1) * (n + 1) - n * (n - k))),
        Step("Eq. 12.2", sum_i2 + n / 4 * (k**2 + 2 * k + 1 - 2 * (n + 1) - 2 * (n + 1) * k - n**2 + n * k)),
        Step("Eq. 12.3 (= Eq. 5)", sum_d_squared_closed_form()),
    ]


def section_2_3_steps() -> list[Step]:
    """The short chain printed as Eq. 5 in Section 2.3. Its lines 3-4 carry the first sum only up to k; the
    lines with the upper limit n (as in Appendix C) follow each printed one."""
    a = _a()
    first = _sum((i - a) ** 2, 1, k)
    whole = _sum((i - a) ** 2, 1, n)
    tail = (n - k) * n**2 / 4 - n * _sum(i - a, k + 1, n)
    expanded = n * (k + 1) ** 2 / 4 - n * (n + 1) * (k + 1) / 2 - n**2 * (n - k) / 4
    return [
        Step("Eq. 5.1 (= Eq. 4)", sum_d_squared()),
        Step("Eq. 5.2", first + _sum(((i - a) - n / 2) ** 2, k + 1, n)),
        Step("Eq. 5.3 (as printed)", first + tail, "first sum printed up to k"),
        Step("Eq. 5.3 (first sum up to n)", whole + tail, "upper limit k -> n"),
        Step("Eq. 5.4 (as printed)", _sum(i**2, 1, k) + expanded, "sum of i^2 printed up to k"),
        Step("Eq. 5.4 (sum up to n)", _sum(i**2, 1, n) + expanded, "upper limit k -> n"),
        Step("Eq. 5.5", sum_d_squared_closed_form()),
    ]


def simplified(expr: sp.Expr) -> sp.Expr:
    """Evaluate every Sum and simplify; identities reduce to 0."""
    return sp.factor(sp.simplify(sp.expand(sp.sympify(expr).doit())))


def check_steps(steps: Sequence[Step]) -> list[StepCheck]:
    """Prove each step with sympy: its difference to Eq. 4 and to the previous step that holds."""
    definition = sum_d_squared().doit()
    checks: list[StepCheck] = []
    previous = definition
    for step in steps:
        value = step.expr.doit()
        check = StepCheck(step.label, simplified(value - previous), simplified(value - definition), step.note)
        if check.holds:
            previous = value
        checks.append(check)
    return checks


@dataclass(frozen=True)
class Optimum:
    """The best k and the best Spearman of the binary classifier for even or odd n."""

    parity: str
    k_star: tuple[sp.Expr, ...]  # every integer minimiser
    f_min: sp.Expr  # min of f(k) = k^2 - nk - (n+1)^2 (Eq. 6)
    min_sum_d_squared: sp.Expr  # Eq. 6
    max_rho: sp.Expr  # Eq. 7
    limit: sp.Expr  # Eq. 7, n -> oo


def f_of_k() -> sp.Expr:
    """The k-dependent factor of Eq. 5: f(k) = k^2 - nk - (n+1)^2."""
    return k**2 - n * k - (n + 1) ** 2


def eq2_optimum(parity: str = "even") -> Optimum:
    """Eq. 6-7. f is a convex parabola symmetric about k = n/2 (its stationary point, sympy.solve): for even n
    the optimum is k = n/2; for odd n the two integers (n - 1)/2 and (n + 1)/2 nearest to it tie."""
    f = f_of_k()
    (stationary,) = sp.solve(sp.diff(f, k), k)
    if parity == "even":
        k_star: tuple[sp.Expr, ...] = (stationary,)
    elif parity == "odd":
        k_star = (stationary - _HALF, stationary + _HALF)
    else:
        raise ValueError(f"parity must be 'even' or 'odd', got {parity!r}")
    f_min = sp.expand(f.subs(k, k_star[0]))
    min_sum = sp.factor(sum_d_squared_closed_form().subs(k, k_star[0]))
    max_rho = sp.factor(sp.simplify(spearman_eq2(min_sum)))
    return Optimum(parity, k_star, f_min, min_sum, max_rho, sp.limit(max_rho, n, sp.oo))


# ---- past the paper: Spearman with tie correction (Pearson of mid-ranks, as scipy/SentEval) -----------------


def tie_corrected_binary_rho() -> sp.Expr:
    """Pearson correlation of the gold ranks 1..n with the binary prediction's mid-ranks (k+1)/2 and (n+k+1)/2
    (Eq. 3), from its sums: cov / sqrt(var_ranks * var_prediction) = sqrt(3k(n-k)/(n^2-1)) for 0 < k < n."""
    mean = (n + 1) / 2
    high, low = (k + 1) / 2, (n + k + 1) / 2
    cov = (_sum((i - mean) * (high - mean), 1, k) + _sum((i - mean) * (low - mean), k + 1, n)).doit()
    var_prediction = k * (high - mean) ** 2 + (n - k) * (low - mean) ** 2
    var_ranks = _sum((i - mean) ** 2, 1, n).doit()
    return sp.sqrt(sp.factor(sp.simplify(cov**2 / (var_ranks * var_prediction))))


def eq2_binary_rho() -> sp.Expr:
    """Eq. 2 with the closed form Eq. 5, as a function of k and n."""
    return sp.factor(sp.simplify(spearman_eq2(sum_d_squared_closed_form())))


def eq2_as_mean_identity() -> sp.Expr:
    """Eq. 2 minus (1 + rho_tie^2)/2, simplified (0): the paper's value is the arithmetic mean of 1 and u = rho^2
    while the tie-corrected Spearman is their geometric mean sqrt(u), so Eq. 2 >= scipy always."""
    return simplified(eq2_binary_rho() - (1 + tie_corrected_binary_rho() ** 2) / 2)


@dataclass(frozen=True)
class TieCorrectedOptimum:
    rho_of_q: sp.Expr  # rho(q, n) with k = q n
    q_star: sp.Expr
    max_rho_even: sp.Expr
    max_rho_odd: sp.Expr
    limit: sp.Expr


def tie_corrected_optimum() -> TieCorrectedOptimum:
    """Maximise rho(q, n) = sqrt(3 q (1-q)) n / sqrt(n^2 - 1) over q = k/n: q = 1/2 (k = n/2 for even n,
    k = (n +- 1)/2 for odd n) and the limit n -> oo."""
    rho_q = sp.simplify(tie_corrected_binary_rho().subs(k, q * n))
    (q_star,) = sp.solve(sp.diff(rho_q, q), q)
    even = sp.simplify(rho_q.subs(q, q_star))
    odd = sp.simplify(tie_corrected_binary_rho().subs(k, (n - 1) / 2))
    return TieCorrectedOptimum(rho_q, q_star, even, odd, sp.limit(even, n, sp.oo))


# ---- m ordered levels on untied labels ----------------------------------------------------------------------


def equal_groups_between_fraction() -> sp.Expr:
    """u = between-level / total variance of the gold ranks 1..mL cut into m contiguous levels of size L.
    With untied gold, a level's prediction mid-rank is its mean gold rank, so tie-corrected rho = sqrt(u) and
    Eq. 2 gives (1 + u)/2 (sum d_i^2 is the within-level variance)."""
    size = L * m
    mean = (size + 1) / 2
    between = sp.Sum(L * (g * L + (L + 1) / 2 - mean) ** 2, (g, 0, m - 1)).doit()
    total = _sum((i - mean) ** 2, 1, size).doit()
    return sp.factor(sp.simplify(between / total))


def level_limits() -> tuple[sp.Expr, sp.Expr]:
    """(tie-corrected, Eq. 2) ceilings of m equal levels as n -> oo: sqrt(1 - 1/m^2) and 1 - 1/(2m^2)."""
    u = sp.limit(equal_groups_between_fraction(), L, sp.oo)
    return sp.sqrt(u), sp.simplify((1 + u) / 2)


def balanced_sizes(n_items: int, levels: int) -> list[int]:
    """Level sizes as equal as possible (they minimise the within-level variance sum (a^3 - a)/12)."""
    base, extra = divmod(n_items, levels)
    return [base + 1] * extra + [base] * (levels - extra)


def untied_level_fraction(n_items: int, levels: int) -> sp.Rational:
    """Exact u = 1 - (sum a^3 - n)/(n^3 - n) for the best m-level classifier on n untied labels."""
    sizes = balanced_sizes(n_items, levels)
    within = sum(sp.Integer(a) ** 3 - a for a in sizes)
    return 1 - within / (sp.Integer(n_items) ** 3 - n_items)


def untied_level_ceiling(n_items: int, levels: int) -> float:
    """The best tie-corrected Spearman of an m-level classifier on n untied labels: sqrt(u)."""
    return float(sp.sqrt(untied_level_fraction(n_items, levels)))


# ---- numeric brute force --------------------------------------------------------------------------------------


def spearman_no_ties_formula(prediction: np.ndarray, gold: np.ndarray) -> float:
    """Eq. 2 applied to mid-ranks (the paper's rule for ties): 1 - 6 sum d_i^2 / (n(n^2 - 1))."""
    prediction, gold = np.asarray(prediction, dtype=float), np.asarray(gold, dtype=float)
    d = rankdata(prediction) - rankdata(gold)
    size = len(gold)
    return float(1 - 6 * np.sum(d**2) / (size * (size**2 - 1)))


@dataclass(frozen=True)
class BruteForce:
    """Every k = 1..n-1 for n untied pairs: Eq. 2 and scipy's Spearman of the binary prediction."""

    n: int
    k: np.ndarray
    eq2: np.ndarray
    scipy: np.ndarray


def binary_prediction(n_items: int, positives: int) -> np.ndarray:
    """1 for the ``positives`` most similar pairs of a gold order n, n-1, ..., 1 (Section 2.3), 0 for the rest."""
    return (np.arange(n_items) < positives).astype(float)


def brute_force_binary(n_items: int) -> BruteForce:
    """Try every split k of n untied pairs (gold n..1) with Eq. 2 (mid-ranks) and with scipy.stats.spearmanr."""
    gold = np.arange(n_items, 0, -1, dtype=float)
    ks = np.arange(1, n_items)
    eq2 = [spearman_no_ties_formula(binary_prediction(n_items, j), gold) for j in ks]
    scipy_rho = [spearmanr(binary_prediction(n_items, j), gold)[0] for j in ks]
    return BruteForce(n_items, ks, np.array(eq2), np.array(scipy_rho))


# ---- real (tied) labels: the best classifier with m ordered levels --------------------------------------------


@dataclass(frozen=True)
class LevelCeiling:
    """The best tie-corrected Spearman (fraction, as scipy) of a classifier with ``levels`` ordered outputs that
    thresholds the gold score: level j for gold >= cuts[j-1]; ``prediction`` holds the levels 0..levels-1."""

    levels: int
    spearman: float
    cuts: tuple[float, ...]
    prediction: np.ndarray


def _distinct(gold: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    gold = np.asarray(gold, dtype=float)
    values = np.unique(gold)
    if len(values) < 2:
        raise ValueError("the gold scores need at least two distinct values")
    return gold, values


def _threshold_prediction(gold: np.ndarray, cuts: Sequence[float]) -> np.ndarray:
    return np.searchsorted(np.asarray(cuts, dtype=float), gold, side="right").astype(float)


def best_binary_classifier(gold: Sequence[float] | np.ndarray) -> LevelCeiling:
    """Exhaustive search over every cut between distinct gold values, scored with scipy.stats.spearmanr."""
    gold, values = _distinct(gold)
    scored = [(spearmanr(_threshold_prediction(gold, [cut]), gold)[0], cut) for cut in values[1:]]
    best, cut = max(scored)
    return LevelCeiling(2, float(best), (float(cut),), _threshold_prediction(gold, [cut]))


def level_ceiling(gold: Sequence[float] | np.ndarray, levels: int) -> LevelCeiling:
    """The best classifier with ``levels`` ordered outputs, exactly, by dynamic programming over cut points.

    With the gold mid-ranks r and cuts between distinct gold values (a tie group is never split), a level's
    prediction mid-rank equals its mean gold mid-rank, so cov(r, prediction) = var(prediction) = between-level
    variance B and Spearman = sqrt(B / total variance). B = sum over levels of (sum of centred r)^2 / size is a
    sum over contiguous groups, which the DP maximises exactly in O(levels * distinct^2).
    """
    if levels < 2:
        raise ValueError(f"levels must be at least 2, got {levels}")
    gold, values = _distinct(gold)
    ranks = rankdata(gold)
    centred = ranks - ranks.mean()
    block = np.searchsorted(values, gold)
    count = np.concatenate([[0], np.cumsum(np.bincount(block, minlength=len(values)))]).astype(float)
    mass = np.concatenate([[0], np.cumsum(np.bincount(block, weights=centred, minlength=len(values)))])
    used = min(levels, len(values))
    with np.errstate(divide="ignore", invalid="ignore"):  # groups (a, b] with a >= b are forbidden
        weight = (mass[None, :] - mass[:, None]) ** 2 / (count[None, :] - count[:, None])
    weight[np.tril_indices_from(weight)] = -np.inf
    best = weight[0].copy()  # best[b]: one level covering blocks [0, b)
    choices = []
    for _ in range(used - 1):
        candidates = best[:, None] + weight
        choices.append(np.argmax(candidates, axis=0))
        best = candidates.max(axis=0)
    starts, end = [], len(values)
    for choice in reversed(choices):
        end = int(choice[end])
        starts.append(end)
    cuts = tuple(float(values[s]) for s in sorted(starts))
    spearman = float(np.sqrt(best[len(values)] / np.sum(centred**2)))
    return LevelCeiling(levels, min(spearman, 1.0), cuts, _threshold_prediction(gold, cuts))
