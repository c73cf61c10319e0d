"""Dev gates: whether an arm trained is decided per seed on dev data, against what picking the best of k noisy
evaluations gives by chance; a baseline must move dev by the claim's smallest effect; a seed whose arm did not train
is left out of a claim ("k of n seeds"); a claim on several seeds is decided on its seeds-and-pairs interval.
Synthetic scores: the gate and the verdicts are statistics and bookkeeping, no model is needed to show them."""

from __future__ import annotations

import numpy as np
import pytest
from synthetic_seeds import paired_seeds

from stsnb.evaluation import claims, dev_gates, main_claims, stats
from stsnb.evaluation.evaluate import DevScore
from stsnb.training.config import TrainResult

Q = 'Section 4.1: "a beats b"'
N_DEV = 300


def _fit(start: np.ndarray, checkpoints: list[np.ndarray], gold: np.ndarray) -> TrainResult:
    """A fit's record as ``fit`` leaves it: step 0 scored ``start``, then ``checkpoints`` every 10 steps; selection
    keeps the best dev Spearman (step 0 included), as ``stsnb.training.train.fit`` does."""
    scores = [DevScore(stats.spearman_x100(p, gold), gold, p) for p in [start, *checkpoints]]
    best = int(np.argmax([s.score for s in scores]))
    history = [{"step": 10 * i, "dev": s.score} for i, s in enumerate(scores)]
    kept = scores[best]
    return TrainResult(
        10 * len(checkpoints), kept.score, 10 * best, 1.0, history, weight_change=1e-3,
        dev_start=scores[0].record(), dev_kept=kept.record(),
    )  # fmt: skip


def _dev(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    gold = rng.uniform(0, 5, N_DEV)
    return gold, gold + rng.normal(0, 2.5, N_DEV)  # an untrained encoder: Spearman about 0.5


def test_an_arm_that_did_not_train_fails_the_gate_though_the_best_of_k_evaluations_gains_on_dev():
    """Four checkpoints that wander around the start without improving it (each errs as much as the start, in a
    slightly different way): the best of them is above the start on most draws, which the old "dev gain > 0" gate
    passed; the gate passes at most about 2.5% of them."""
    rng = np.random.default_rng(0)
    positive, passed, trials = 0, 0, 60
    for _ in range(trials):
        gold, start = _dev(rng)
        error, rho = start - gold, 0.97
        wander = [gold + rho * error + np.sqrt(1 - rho**2) * rng.permutation(error) for _ in range(4)]
        gate = dev_gates.from_fits("SimCSE", {"seed 0": _fit(start, wander, gold)}, n_resamples=300)
        (seed,) = gate.seeds
        positive += seed.dev_gain > 0 and seed.selected_step > 0
        passed += seed.trained
    assert positive >= 0.8 * trials and passed <= 0.05 * trials
    assert seed.evaluations == 4


def test_an_arm_that_trained_passes_the_gate_and_says_by_how_much():
    rng = np.random.default_rng(1)
    gold, start = _dev(rng)
    trained = [gold + (start - gold) * f for f in (0.9, 0.8, 0.75)]  # its noise shrinks: a real gain on every pair
    gate = dev_gates.from_fits("SimCSE", {"seed 0": _fit(start, trained, gold)})
    (seed,) = gate.seeds
    assert seed.trained and seed.selected_step == 30 and seed.dev_gain > seed.noise_bound > 0
    assert seed.evaluations == 3 and f"best-of-3 noise bound +{seed.noise_bound:.2f}" in seed.describe()


def test_on_held_out_pairs_a_wandering_arm_fails_and_a_trained_arm_passes_where_best_of_k_on_few_pairs_could_not():
    """The gate on dev pairs selection never saw (``fit``'s ``gate``): the kept checkpoint is one fixed model there,
    so one paired comparison's bound holds. A noise-only arm passes at most about 2.5% of draws; an arm that trained
    passes on 400 held-out pairs where, on its 40 selection pairs, the best-of-4 bound is beyond its gain."""
    rng = np.random.default_rng(3)

    def held_out(fit: TrainResult, gold, start, kept) -> TrainResult:
        fit.gate_start = DevScore(stats.spearman_x100(start, gold), gold, start).record()
        fit.gate_kept = DevScore(stats.spearman_x100(kept, gold), gold, kept).record()
        return fit

    passed, trials = 0, 40
    for _ in range(trials):
        gold, start = _dev(rng)
        error = start - gold
        wander = [gold + 0.97 * error + np.sqrt(1 - 0.97**2) * rng.permutation(error) for _ in range(5)]
        fit = held_out(_fit(start, wander[:4], gold), gold, start, wander[4])  # the kept model, on other pairs
        passed += dev_gates.from_fits("SimCSE", {"seed 0": fit}, n_resamples=300).seeds[0].trained
    assert passed <= 0.1 * trials

    few_gold = rng.uniform(0, 5, 40)
    few_start = few_gold + rng.normal(0, 2.5, 40)
    few = _fit(few_start, [few_gold + (few_start - few_gold) * f for f in (0.97, 0.95, 0.93, 0.92)], few_gold)
    assert not dev_gates.from_fits("stage 2", {"seed 0": few}).seeds[0].trained  # 40 pairs, best of 4
    gold = rng.uniform(0, 5, 400)
    start = gold + rng.normal(0, 2.5, 400)
    gate = dev_gates.from_fits("stage 2", {"seed 0": held_out(few, gold, start, gold + (start - gold) * 0.92)})
    (seed,) = gate.seeds
    assert seed.trained and seed.held_out_items == 400 and seed.evaluations == 1
    assert f"noise bound +{seed.noise_bound:.2f} on 400 pairs selection never saw" in seed.describe()


def test_a_held_out_gate_too_small_to_bound_its_noise_names_the_parameter_that_fixes_it():
    """C-STS scores a sentence pair under two conditions, one group; with 3 groups some resamples draw one group
    only, whose tied gold (the data keeps ties) leaves Spearman undefined (the rehearsal's 4-pair gate in CI)."""
    gold = np.array([1.0, 1.0, 3.0, 3.0, 5.0, 5.0])
    groups = ["a", "a", "b", "b", "c", "c"]
    start, kept = np.array([3.0, 1.0, 2.0, 6.0, 5.0, 4.0]), np.array([1.0, 2.0, 4.0, 3.0, 5.0, 6.0])
    fit = _fit(start, [kept], gold)
    fit.gate_start = DevScore(0.0, gold, start, groups).record()
    fit.gate_kept = DevScore(0.0, gold, kept, groups).record()
    with pytest.raises(ValueError, match=r"held-out gate of 3 dev pairs .*raise the notebook's gate_pairs"):
        dev_gates.from_fits("CCL", {"seed 0": fit}, n_resamples=200)


def test_the_noise_bound_is_z_at_one_minus_alpha_over_k_times_the_paired_standard_error():
    rng = np.random.default_rng(2)
    gold, start = _dev(rng)
    kept = start + rng.normal(0, 0.5, N_DEV)
    record = {"gold": gold.tolist(), "predictions": kept.tolist(), "groups": None}
    bound = dev_gates.noise_bound({"gold": gold.tolist(), "predictions": start.tolist()}, record, 10)
    se = stats.paired_spearman_difference(gold, kept, start).standard_error
    assert bound.z == pytest.approx(2.807, abs=1e-3) and bound.bound == pytest.approx(bound.z * se)
    assert dev_gates.noise_bound({"gold": gold, "predictions": start}, record, 1).z == pytest.approx(1.960, abs=1e-3)
    with pytest.raises(ValueError, match="same dev items"):
        dev_gates.noise_bound({"gold": gold[:-1].tolist(), "predictions": start[:-1].tolist()}, record, 4)
    with pytest.raises(ValueError, match="no per-pair dev records"):
        dev_gates.from_fits("a", {"seed 0": TrainResult(4, 50.0, 4, 1.0, [])})


def _seed(label: str, step: int = 40, gain: float = 2.0, bound: float = 0.5, change: float = 1e-3):
    return dev_gates.SeedTrained(label, step, gain, 40, change, bound, 4)


def _gate(arm: str, **per_seed) -> dev_gates.DevGate:
    labels = ("seed 0", "seed 1", "seed 2")
    return dev_gates.DevGate(arm, tuple(_seed(s, **per_seed.get(s.replace(" ", ""), {})) for s in labels))


SEEDS = {"seed 0": 3.0, "seed 1": 3.2, "seed 2": 2.8}


def test_a_seed_whose_arm_kept_step_0_on_dev_is_left_out_and_the_claim_reports_k_of_n():
    data, intervals = paired_seeds(SEEDS, np.random.default_rng(3))
    b = _gate("cross entropy", seed0={"step": 0, "gain": 0.0})
    row = claims.claim("a beats b", intervals, paper_quote=Q, dev_gates=[_gate("a"), b], paired=data)
    assert row["seeds"] == 2 and row["seeds_run"] == 3 and claims.seeds_text(row) == "2 of 3 seeds"
    # two seeds left: the t floor has one degree of freedom (t = 12.7), so even +3.0 and +3.7 leave it unresolved
    assert row["verdict"] == "unresolved" and list(row["seed_verdicts"].values()) == ["supported", "supported"]
    assert "cross entropy: selected step 0 of 40" in row["seeds_left_out"]["seed 0"]
    assert [e["seed_run"] for e in row["per_seed"]] == ["seed 1", "seed 2"]
    assert row["seeds_and_pairs"]["seeds"] == 2 and set(row["seed_verdicts"]) == {"seed 1", "seed 2"}


def test_a_dev_gain_within_best_of_k_noise_is_not_training_and_says_so():
    lost = _gate("a", seed1={"gain": 0.3, "bound": 0.45}, seed2={"gain": 0.0, "bound": 0.0})
    data, intervals = paired_seeds(SEEDS, np.random.default_rng(4))
    row = claims.claim("a beats b", intervals, paper_quote=Q, dev_gates=[lost], paired=data)
    assert row["verdict"] == "not tested" and "'a trained on dev' does not hold" in row["not_tested_because"]
    assert "dev +0.30 over its start (best-of-4 noise bound +0.45)" in row["not_tested_because"]
    assert "within best-of-4 noise" in row["not_tested_because"]


def test_a_baseline_that_barely_trained_makes_its_claim_not_tested_with_its_dev_gain():
    """HiCL's case: SimCSE beat its own noise bound on dev, by less than the claim's smallest effect."""
    data, intervals = paired_seeds(SEEDS, np.random.default_rng(5))
    simcse = _gate("SimCSE", **{f"seed{i}": {"gain": g, "bound": 0.05} for i, g in enumerate((0.07, 0.32, 0.10))})
    common = dict(paper_quote=Q, smallest_effect=0.77, smallest_effect_reason="half the paper's +1.54", paired=data)
    row = claims.claim("+HiCL beats SimCSE", intervals, dev_gates=[_gate("SimCSE+HiCL"), simcse], **common)
    assert row["verdict"] == "supported"  # without a baseline named, moving dev at all is enough
    row = claims.claim(
        "+HiCL beats SimCSE", intervals, dev_gates=[_gate("SimCSE+HiCL"), simcse], baseline="SimCSE", **common
    )
    assert row["verdict"] == "not tested" and row["baseline"] == "SimCSE"
    because = row["not_tested_because"]
    assert "dev +0.07 over its start" in because and "barely trained: below the claim's smallest effect 0.77" in because
    with pytest.raises(ValueError, match="no dev gate for the baseline 'QuMSE'"):
        claims.claim("x", intervals, dev_gates=[simcse], baseline="QuMSE", **common)


def test_a_claim_on_several_seeds_is_decided_on_the_seeds_and_pairs_interval_with_each_seeds_verdict_beside():
    """STS-Regression's case: every seed's interval above 0, the seeds spread too much for their mean to be."""
    data, intervals = paired_seeds({"seed 0": 4.0, "seed 1": 0.9, "seed 2": 1.4}, np.random.default_rng(6))
    assert all(i.low > 0 for i in intervals.values())
    row = claims.claim("a beats b", intervals, paper_quote=Q, dev_gates=[_gate("a"), _gate("b")], paired=data)
    both = row["seeds_and_pairs"]
    assert row["verdict"] == "unresolved" and both["low"] < 0 < both["high"] and both["t_half_width"] > 0
    assert list(row["seed_verdicts"].values()) == ["supported"] * 3
    assert claims.seed_sides_text(row).endswith("(3 of 3 seeds' intervals on the paper's side)")
    assert claims.deciding_interval(row) == (both["difference"], both["low"], both["high"])
    with pytest.raises(ValueError, match="stands on 3 seeds: give what their intervals were computed from"):
        claims.claim("a beats b", intervals, paper_quote=Q)


def test_a_direction_inside_the_smallest_effect_is_a_small_effect_with_its_side():
    """Translated ReLU beats L1 by +0.45 [+0.12, +0.78] against +-1.525: on the paper's side, too small to be its
    effect; it no longer reads "no meaningful effect". CCL's sigma, -0.03 [-0.06, -0.01], the other way."""
    size = dict(smallest_effect=1.525, smallest_effect_reason="half the paper's smaller difference")
    relu = claims.claim("Translated ReLU beats L1", {"seed 0": (0.45, 0.12, 0.78)}, paper_quote=Q, **size)
    assert relu["verdict"] == "small effect" and relu["effect_side"] == "on the paper's side"
    assert claims.verdict_text(relu, mark_provisional=True) == (
        "small effect on the paper's side, below ±1.52 (1 seed, provisional)"
    )
    sigma = claims.claim("sigma beats none", {"seed 0": (-0.03, -0.06, -0.01)}, paper_quote=Q, **size)
    assert sigma["verdict"] == "small effect" and sigma["effect_side"] == "against the paper"
    none = claims.claim("x", {"seed 0": (0.1, -0.2, 0.4)}, paper_quote=Q, **size)
    assert none["verdict"] == "no meaningful effect" and "effect_side" not in none
    with pytest.raises(ValueError, match="smallest_effect_reason"):
        claims.claim("x", [(1.0, 0.5, 1.5)], paper_quote=Q, smallest_effect=0.5)
    tau = claims.claim("tau hardly matters", [(-0.75, -1.31, -0.18)], paper_quote=Q, margin=0.5, margin_reason="why")
    assert tau["reachability"].startswith("equivalence not reachable at this size")


def test_a_notebook_states_its_main_claim_before_the_run_and_its_verdict_after_it():
    intro = main_claims.main_claim_intro("10_pcc_tuning")
    (main,) = main_claims.main_claims_of("10_pcc_tuning")
    assert intro.startswith(f"The paper's main claim: {main.statement}.") and 'Abstract: "' in intro
    assert "after the first cpu runs of the same comparisons" in intro
    with pytest.raises(ValueError, match="no main claim is registered for '00_contrastive_ceiling'"):
        main_claims.main_claim_intro("00_contrastive_ceiling")
    row = claims.claim(f"{main.wording[0]} x", {"seed 0": (2.0, 1.0, 3.0)}, paper_quote=Q, main_claim=True)
    row["claim"] = " ".join(main.wording)
    assert main_claims.main_claim_text(main, [row]).startswith(f"{main.statement}: supported (1 seed, provisional)")
    assert main_claims.main_claim_text(main, [dict(row, main_claim=False)]).endswith("not run in this profile")


def test_arms_that_trained_on_different_seeds_leave_too_few_seeds_in_common():
    a = _gate("a", seed0={"step": 0})  # a trained on seeds 1 and 2
    b = _gate("b", seed1={"step": 0})  # b on seeds 0 and 2
    data, intervals = paired_seeds(SEEDS, np.random.default_rng(7))
    row = claims.claim("a beats b", intervals, paper_quote=Q, dev_gates=[a, b], paired=data)
    assert row["verdict"] == "not tested" and "on the same seeds (at least 2)" in row["not_tested_because"]
    assert row["not_tested_because"].count("does not hold") == 1


def test_a_timing_range_on_one_seed_is_provisional_and_counted_apart_from_the_claims():
    row = claims.claim("a step is faster in segments", {"seed 0": (1.0, 0.5, 1.5)}, paper_quote=Q, unit="seconds")
    assert row["verdict"] == "supported" and claims.provisional(row)
    assert claims.verdict_text(row, mark_provisional=True) == "supported (1 seed, provisional)"
    assert claims.verdict_counts([row])["supported"] == 0 and claims.timing_rows([row]) == [row]


def test_dev_gate_evidence_reads_back_from_metrics_json():
    gate = _gate("QuMSE", seed1={"gain": 0.2, "bound": 0.4})
    assert dev_gates.seed_evidence(gate.to_dict()) == gate.evidence()
    assert gate.trained_seeds == ["seed 0", "seed 2"]
