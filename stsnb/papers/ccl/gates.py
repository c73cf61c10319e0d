"""What a claim of notebook 40 stands on besides its intervals: per training seed, whether each arm trained, read on
train-split rows held out of training (dev: the gate rows, apart from the selection rows), never from the validation
rows a claim is scored on (``stsnb.evaluation.dev_gates``); each direction claim's smallest effect of interest with its
reason; and for Table 5, whether sigma's mechanism acts at all in our setting (its share of the gradient, Eq. 11-14).

**Untrained on dev.** Every run of the notebook starts from the raw encoder, and ``fit`` scores the gate rows before
its first step and on the weights it keeps: the step-0 score is the untrained encoder's on the same rows (for the
tri-encoder, with the condition transform drawn from the run's seed), so a run's dev gain is its kept model's score
minus its own start's, on rows selection never scored.

**Smallest effects** (:func:`smallest_effect`): half the paper's own difference on the row a claim is compared with
(Table 3 on SimCSE-base: half of +2.0, which is also the "more than one point" Section 4.3 calls an improvement);
where the paper prints no difference, half of that one point.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...evaluation import claims
from ...evaluation.dev_gates import DevGate, from_fits, seed_evidence
from . import quotes
from .probes import GradientShare
from .training import RunOutcome

Runs = RunOutcome | Mapping[int, RunOutcome]

# Section 4.3 calls "more than one point" an improvement (SimCSE-base, DiffCSE-base): the fallback's source
ONE_POINT = 1.0

# Table 5: below this share of the gradient at h, sigma's mechanism does not act in our setting (the claim is then
# not tested); set on 2026-11-28 after the probe had measured 0.86% on the bi-encoder, with its reason
SIGMA_GRADIENT_FLOOR = 0.01
SIGMA_ACTS = "sigma's weights reach at least"  # how the precondition's name begins
SIGMA_FLOOR_REASON = (
    "a floor set after the probe had measured 0.86% (not chosen blind): weights that reach under 1% of the gradient "
    "change each update by under 1% (to first order), so the two runs train almost alike and their difference cannot "
    "speak to the paper's claim that sigma matters"
)


def by_seed(runs: Runs, name: str) -> dict[int, RunOutcome]:
    """``{seed: run}`` of one run or a non-empty mapping of them (``name`` in the error)."""
    if isinstance(runs, RunOutcome):
        return {runs.seed: runs}
    out = dict(runs)
    if not out or not all(isinstance(r, RunOutcome) for r in out.values()):
        raise ValueError(f"{name} must be a RunOutcome or a non-empty {{seed: RunOutcome}} mapping")
    return out


def dev_gate(arm: str, runs: Runs) -> DevGate:
    """Whether ``arm`` trained, per training seed ("seed s", as the claims' intervals are keyed): selection kept a
    step past 0, a weight changed, and on the gate rows (held out of training, never selected on) the kept model beats
    the fit's own step 0 beyond noise (``stsnb.evaluation.dev_gates.from_fits``: a cluster bootstrap over sentence
    pairs)."""
    fits = {}
    for seed, run in sorted(by_seed(runs, arm).items()):
        if run.result is None:
            raise ValueError(f"{arm}, seed {seed}: an untrained run has no dev gate (nothing was selected)")
        fits[f"seed {seed}"] = run.result
    return from_fits(arm, fits)


def arm_gates(a: Runs, a_label: str, b: Runs, b_label: str) -> list[DevGate]:
    """The dev gates of a comparison's two arms (a claim is gated on its own arms only)."""
    return [dev_gate(a_label, a), dev_gate(b_label, b)]


def smallest_effect(paper_difference: float | None, where: str) -> tuple[float, str]:
    """A direction claim's smallest effect of interest and its reason: half the paper's own difference on the
    compared row (``where`` names it, e.g. "Table 4, SimCSE-base bi-encoder"); half of the one point Section 4.3 calls
    an improvement where the paper prints no difference (or none)."""
    if paper_difference is None or abs(paper_difference) < 1e-9:
        reason = (
            f"{where} prints no difference here: half of the one point Section 4.3 calls an improvement ("
            f"{quotes.ONE_POINT})"
        )
        return ONE_POINT / 2, reason
    half = round(abs(float(paper_difference)) / 2, 4)  # the paper prints one decimal: no float noise
    return half, f"half the paper's difference {float(paper_difference):+.3g} ({where})"


def sigma_reach(share: GradientShare) -> float:
    """The share of the gradient at h that sigma's weights can reach (Eq. 11-14): the same-pair negative's share of
    BCL's push on the negatives times BCL's part of the gradient, r / (1 + r) with r = ``bcl_ratio`` (norms, so a
    rough upper bound)."""
    return share.same_pair_share * share.bcl_ratio / (1 + share.bcl_ratio)


def sigma_acts(share: GradientShare, floor: float = SIGMA_GRADIENT_FLOOR) -> claims.Precondition:
    """Precondition of a Table 5 claim: sigma's weights reach at least ``floor`` of the gradient at h, measured by the
    probe before training (:func:`sigma_reach`); below it the mechanism barely acts here and the claim is not
    tested, with the measured share."""
    reach = sigma_reach(share)
    evidence = (
        f"measured {reach:.2%} (same-pair share {share.same_pair_share:.1%} x BCL's part "
        f"{share.bcl_ratio / (1 + share.bcl_ratio):.1%}, probed before training at tau={share.temperature:g}, "
        f"{share.reading}); floor {floor:.0%}: {SIGMA_FLOOR_REASON}"
    )
    return claims.Precondition(f"{SIGMA_ACTS} {floor:.0%} of the gradient", reach >= floor, evidence)


def why_not_tested(row: Mapping) -> str:
    """The short reason of a *not tested* row for a takeaway: the names of its failed preconditions (the dev gates'
    per-seed evidence stays in the full ``not_tested_because``), with the measured share where sigma barely acts;
    "" when the row was tested."""
    failed = [p for p in row.get("preconditions") or () if not p["holds"]]
    parts = []
    for p in failed:
        measured = f" ({p['evidence'].split(' (')[0]})" if p["name"].startswith(SIGMA_ACTS) else ""
        parts.append(f"{p['name']}{measured} does not hold")
    return "; ".join(parts)


def gates_text(row: Mapping) -> str:
    """One line per arm of a claim row's dev gates ("QuMSE on dev: seed 0: selected step 70 of 70, held-out dev +12.30
    over its start (noise bound +2.10 on 150 pairs selection never saw), ..."), and which seeds were left out; "" for
    a row without dev gates."""
    lines = [f"{gate['arm']} on dev: {seed_evidence(gate)}" for gate in row.get("dev_gates") or ()]
    if row.get("seeds_left_out"):
        lines.append("left out: " + "; ".join(f"{k} ({v})" for k, v in row["seeds_left_out"].items()))
    return "\n".join(lines)


def differences_text(row: Mapping, seeds: Sequence[str] | None = None) -> str:
    """ "seed 0 -0.74, seed 1 -2.11": each kept seed's difference of a claim row (``per_seed``)."""
    per_seed = [e for e in row["per_seed"] if seeds is None or e["seed_run"] in seeds]
    return ", ".join(f"{e['seed_run']} {e['difference']:+.2f}" for e in per_seed)
