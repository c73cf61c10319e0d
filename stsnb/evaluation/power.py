"""The power of a claim judged on several training seeds, by simulation.

``verdict_rules.detectable_effect`` reads the smallest detectable effect off one interval's half-width: it ignores
the training variance between seeds and the every-seed rule (a direction verdict needs every seed's interval on one
side). Simulated with the observed seed spreads, the "detectable (80% power)" sizes it gave have far less power
(a review of our runs: +-2.20 for CCL Table 3 about 47%, +-2.85 for the Pcc control about 58%).

- :func:`simulated_power` -- the probability that a claim with true difference ``delta`` is supported;
- :func:`simulated_detectable_effect` -- the smallest true difference supported with probability ``power``.

**The model.** Seed i's estimate is ``delta + s_i + p``: ``s_i ~ N(0, seed_sd^2)`` is the training variance (a fresh
draw per seed), ``p ~ N(0, pair_se^2)`` the noise of the test pairs, one draw shared by every seed (all seeds are
scored on the same test pairs, so a hard draw of pairs moves them together). Seed i's interval is its estimate
``+- z x pair_se``, ``z = z_{(1+level)/2}`` (a paired bootstrap interval covers the pair noise only). The rules:

- ``"every seed"`` (``verdict_rules.verdict``): supported when every seed's interval lies above 0, i.e.
  ``min_i(delta + s_i + p) > z x pair_se``;
- ``"seed mean"`` (``seed_bootstrap.seeds_and_pairs_difference(..., t_floor=True)``): the mean over seeds
  ``m = delta + mean(s) + p`` with half-width ``max(z x sqrt(pair_se^2 + (n-1)/n x sd_s^2 / n),
  t_{(1+level)/2, n-1} x sd_s / sqrt(n))`` (``sd_s`` the sample sd of the seeds' estimates, ddof=1): a bootstrap of
  n seeds spreads the mean by the plug-in variance ``(n-1)/n x sd_s^2 / n`` on top of the shared pairs' noise, and
  the t floor keeps it at least the t interval of the seed means; supported when ``m`` exceeds the half-width. With
  one seed it is the every-seed rule.

``pair_se`` is one seed's interval half-width over z (``half-width / 1.96`` at 95%), ``seed_sd`` the sd of the seeds'
differences (``claim_row``'s ``difference_std``). A true difference in the paper's direction is taken as positive.

**The answer.** Every simulated trial draws its noise once (common random numbers, a fixed ``seed``); under both
rules the trial supports the claim exactly when ``delta`` exceeds a threshold that does not depend on ``delta``
(``z x pair_se - min_i s_i - p``, resp. ``half-width - mean(s) - p``, since the half-width involves only the
spread of the noise). The simulated power is then a step function of ``delta`` that rises by ``1 / n_sim`` at each
trial's threshold, and the smallest ``delta`` with power >= ``power`` (what a bisection over this deterministic
simulation converges to) is the ``ceil(power x n_sim)``-th smallest threshold, computed exactly.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from scipy.stats import norm
from scipy.stats import t as student_t

from .stats import check_confidence_level, check_seed

Rule = Literal["every seed", "seed mean"]
RULES: tuple[str, ...] = ("every seed", "seed mean")
DEFAULT_SIMULATIONS = 100_000


def _check_inputs(seed_sd, pair_se, n_seeds, rule, confidence_level, n_sim) -> tuple[float, float, int, float, int]:
    seed_sd, pair_se = float(seed_sd), float(pair_se)
    for name, value in (("seed_sd", seed_sd), ("pair_se", pair_se)):
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{name} must be a non-negative number of Spearman x100 points, got {value!r}")
    if isinstance(n_seeds, bool) or int(n_seeds) != n_seeds or n_seeds < 1:
        raise ValueError(f"n_seeds must be a positive integer, got {n_seeds!r}")
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    if isinstance(n_sim, bool) or int(n_sim) != n_sim or n_sim < 100:
        raise ValueError(f"n_sim must be an integer of at least 100, got {n_sim!r}")
    return seed_sd, pair_se, int(n_seeds), check_confidence_level(confidence_level), int(n_sim)


def thresholds(
    seed_sd: float,
    pair_se: float,
    n_seeds: int,
    *,
    rule: Rule = "every seed",
    confidence_level: float = 0.95,
    n_sim: int = DEFAULT_SIMULATIONS,
    seed: int | None = 0,
) -> np.ndarray:
    """Per simulated trial, the true difference above which that trial supports the claim (the module docstring's
    model), sorted. The shared pair noise is drawn before the seeds' noise, so with ``seed_sd = 0`` the trials are
    the same for any number of seeds."""
    seed_sd, pair_se, n_seeds, level, n_sim = _check_inputs(seed_sd, pair_se, n_seeds, rule, confidence_level, n_sim)
    rng = np.random.default_rng(check_seed(seed))
    shared = rng.standard_normal(n_sim) * pair_se
    per_seed = rng.standard_normal((n_sim, n_seeds)) * seed_sd
    z = float(norm.ppf((1 + level) / 2))
    if rule == "every seed" or n_seeds == 1:
        out = z * pair_se - per_seed.min(axis=1) - shared
    else:
        spread = per_seed.std(axis=1, ddof=1)
        bootstrap = z * np.sqrt(pair_se**2 + (n_seeds - 1) / n_seeds * spread**2 / n_seeds)
        t_half = float(student_t.ppf((1 + level) / 2, n_seeds - 1)) * spread / math.sqrt(n_seeds)
        out = np.maximum(bootstrap, t_half) - per_seed.mean(axis=1) - shared
    return np.sort(out)


def simulated_power(
    delta: float,
    seed_sd: float,
    pair_se: float,
    n_seeds: int,
    *,
    rule: Rule = "every seed",
    confidence_level: float = 0.95,
    n_sim: int = DEFAULT_SIMULATIONS,
    seed: int | None = 0,
) -> float:
    """The share of simulated trials in which a true difference ``delta`` (the paper's direction positive) is
    supported under ``rule`` (the module docstring's model). With ``seed_sd = 0`` and one seed this is the normal
    formula ``Phi(delta / pair_se - z)`` up to simulation error."""
    delta = float(delta)
    if not math.isfinite(delta):
        raise ValueError(f"delta must be a finite number, got {delta!r}")
    cut = thresholds(seed_sd, pair_se, n_seeds, rule=rule, confidence_level=confidence_level, n_sim=n_sim, seed=seed)
    return float(np.searchsorted(cut, delta, side="left")) / len(cut)  # trials whose threshold lies below delta


def simulated_detectable_effect(
    seed_sd: float,
    pair_se: float,
    n_seeds: int,
    *,
    rule: Rule = "every seed",
    power: float = 0.8,
    confidence_level: float = 0.95,
    n_sim: int = DEFAULT_SIMULATIONS,
    seed: int | None = 0,
) -> float:
    """The smallest true difference that ``rule`` supports with probability ``power`` on ``n_seeds`` seeds whose
    estimates spread by ``seed_sd`` around it and share test-pair noise of standard error ``pair_se`` (the module
    docstring's model and why the answer is an order statistic of the simulation: the infimum of the differences
    whose :func:`simulated_power` is at least ``power``).

    Checks in closed form: with ``seed_sd = 0`` every seed's estimate is the same, so any number of seeds gives one
    seed's answer, ``(z + z_power) x pair_se`` (2.8016 x pair_se at 95% and 80%) up to simulation error; with
    ``pair_se = 0`` the every-seed rule needs all n of ``delta + s_i`` above 0, probability ``Phi(delta / seed_sd)^n``,
    so the answer is ``seed_sd x Phi^-1(power^(1/n))``. Training variance only adds: any ``seed_sd > 0`` gives a
    larger answer than ``seed_sd = 0``."""
    if not 0.0 < float(power) < 1.0:
        raise ValueError(f"power must lie strictly between 0 and 1, got {power!r}")
    cut = thresholds(seed_sd, pair_se, n_seeds, rule=rule, confidence_level=confidence_level, n_sim=n_sim, seed=seed)
    k = math.ceil(float(power) * len(cut) - 1e-9)  # the k-th smallest threshold: k trials support any larger delta
    return float(cut[k - 1])


def detectable_of_seeds(per_seed: list[tuple[float, float, float]], *, n_sim: int = 20_000) -> float:
    """The detectable effect (80% power) of a claim from its seeds' ``(difference, low, high)``: one seed, the closed
    form ``verdict_rules.detectable_effect`` of its interval (no training variance to add); several, the simulation
    under the rule that decides a multi-seed claim, the seed mean's t-floored seeds-and-pairs interval
    (``rule="seed mean"``), with the seeds' observed spread (``seed_sd``, ddof 1) and the test-pair noise of the
    widest seed's 95% interval (``pair_se`` = half-width / z). summary.md and the notebooks print the same number."""
    from .verdict_rules import detectable_effect

    if not per_seed:
        raise ValueError("detectable_of_seeds needs at least one seed's (difference, low, high)")
    if len(per_seed) == 1:
        return detectable_effect(per_seed[0][1], per_seed[0][2])
    pair_se = max(high - low for _, low, high in per_seed) / 2 / float(norm.ppf(0.975))
    seed_sd = float(np.std([d for d, _, _ in per_seed], ddof=1))
    return simulated_detectable_effect(seed_sd, pair_se, len(per_seed), rule="seed mean", n_sim=n_sim)
