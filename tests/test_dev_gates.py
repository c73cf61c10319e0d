"""Dev gates: whether an arm trained is decided per seed on dev data; a seed whose arm did not train is left out of a
claim ("k of n seeds"); fewer than two seeds left make it not tested. Synthetic intervals: pure bookkeeping."""

from __future__ import annotations

import pytest

from stsnb.evaluation import claims, dev_gates, main_claims

Q = 'Section 4.1: "a beats b"'
SEEDS = {"seed 0": (0.2, -0.5, 0.9), "seed 1": (2.0, 1.0, 3.0), "seed 2": (1.5, 0.4, 2.6)}


def gate(arm: str, steps: dict, gains: dict) -> dev_gates.DevGate:
    return dev_gates.trained_on_dev(arm, steps, gains, total_steps=180)


ALL = {"seed 0": 180, "seed 1": 180, "seed 2": 120}
GAINS = {"seed 0": 1.0, "seed 1": 2.0, "seed 2": 0.5}


def test_a_seed_whose_arm_kept_step_0_on_dev_is_left_out_and_the_claim_reports_k_of_n():
    b = gate("cross entropy", {**ALL, "seed 0": 0}, GAINS)
    row = claims.claim("a beats b", SEEDS, paper_quote=Q, dev_gates=[gate("a", ALL, GAINS), b])
    assert row["verdict"] == "supported" and row["seeds"] == 2 and row["seeds_run"] == 3
    assert claims.seeds_text(row) == "2 of 3 seeds"
    assert "cross entropy: selected step 0 of 180" in row["seeds_left_out"]["seed 0"]
    assert [e["seed_run"] for e in row["per_seed"]] == ["seed 1", "seed 2"]


def test_a_dev_score_no_better_than_the_untrained_encoders_is_not_training():
    lost = gate("a", ALL, {**GAINS, "seed 1": -0.3, "seed 2": 0.0})
    row = claims.claim("a beats b", SEEDS, paper_quote=Q, dev_gates=[lost])
    assert row["verdict"] == "not tested" and "'a trained on dev' does not hold" in row["not_tested_because"]
    assert "dev -0.30 over untrained (did not train)" in row["not_tested_because"]


def test_one_seed_claims_are_not_tested_only_when_their_seed_is_left_out():
    one = {"seed 0": (2.0, 1.0, 3.0)}
    trained = dev_gates.trained_on_dev("a", {"seed 0": 5}, {"seed 0": 0.1})
    assert claims.claim("a beats b", one, paper_quote=Q, dev_gates=[trained])["verdict"] == "supported"
    still = dev_gates.trained_on_dev("a", {"seed 0": 5}, {"seed 0": 0.1}, weight_changes={"seed 0": 0.0})
    assert claims.claim("a beats b", one, paper_quote=Q, dev_gates=[still])["verdict"] == "not tested"


def test_dev_gates_need_seed_labels_that_match_the_intervals():
    with pytest.raises(ValueError, match="keyed by seed label"):
        claims.claim("a beats b", list(SEEDS.values()), paper_quote=Q, dev_gates=[gate("a", ALL, GAINS)])
    with pytest.raises(ValueError, match=r"no entry for \['seed 2'\]"):
        two = {"seed 0": 1.0, "seed 1": 1.0}
        claims.claim("a beats b", SEEDS, paper_quote=Q, dev_gates=[gate("a", two, two)])
    with pytest.raises(ValueError, match="must name the same seeds"):
        gate("a", ALL, {"seed 0": 1.0})
    with pytest.raises(ValueError, match="no dev score"):
        dev_gates.dev_gain(None, 0.5)
    assert dev_gates.dev_gain(0.62, 0.6, scale=100) == pytest.approx(2.0)


def test_a_sized_claim_reads_no_meaningful_effect_and_an_unreachable_margin_says_so():
    sigma = claims.claim(
        "sigma beats none",
        {"seed 0": (-0.03, -0.06, -0.01)},
        paper_quote=Q,
        smallest_effect=0.45,
        smallest_effect_reason="half the paper's +0.90",
    )
    assert sigma["verdict"] == "no meaningful effect" and sigma["smallest_effect"] == 0.45
    assert claims.verdict_text(sigma, mark_provisional=True) == "no meaningful effect (1 seed, provisional)"
    with pytest.raises(ValueError, match="smallest_effect_reason"):
        claims.claim("x", [(1.0, 0.5, 1.5)], paper_quote=Q, smallest_effect=0.5)
    tau = claims.claim("tau hardly matters", [(-0.75, -1.31, -0.18)], paper_quote=Q, margin=0.5, margin_reason="why")
    assert tau["reachability"].startswith("equivalence not reachable at this size")


def test_a_notebook_states_its_main_claim_before_the_run_and_its_verdict_after_it():
    intro = main_claims.main_claim_intro("10_pcc_tuning")
    (main,) = main_claims.main_claims_of("10_pcc_tuning")
    assert intro.startswith(f"The paper's main claim: {main.statement}.") and 'Abstract: "' in intro
    with pytest.raises(ValueError, match="no main claim is registered for '00_contrastive_ceiling'"):
        main_claims.main_claim_intro("00_contrastive_ceiling")
    row = claims.claim(f"{main.wording[0]} x", {"seed 0": (2.0, 1.0, 3.0)}, paper_quote=Q, main_claim=True)
    row["claim"] = " ".join(main.wording)
    assert main_claims.main_claim_text(main, [row]).startswith(f"{main.statement}: supported (1 seed, provisional)")
    assert main_claims.main_claim_text(main, [dict(row, main_claim=False)]).endswith("not run in this profile")


def test_arms_that_trained_on_different_seeds_leave_too_few_seeds_in_common():
    a = gate("a", {**ALL, "seed 0": 0}, GAINS)  # a trained on seeds 1 and 2
    b = gate("b", {**ALL, "seed 1": 0}, GAINS)  # b on seeds 0 and 2
    row = claims.claim("a beats b", SEEDS, paper_quote=Q, dev_gates=[a, b])
    assert row["verdict"] == "not tested" and "on the same seeds (at least 2)" in row["not_tested_because"]
    assert row["not_tested_because"].count("does not hold") == 1


def test_a_timing_range_is_never_provisional():
    row = claims.claim("a step is faster in segments", {"seed 0": (1.0, 0.5, 1.5)}, paper_quote=Q, unit="seconds")
    assert row["verdict"] == "supported" and not claims.provisional(row)
    assert claims.verdict_text(row, mark_provisional=True) == "supported (1 seed)"
