"""The paper's claims checked on our runs: paired intervals over sentence pairs, training seeds, preconditions and
the verdicts of ``stsnb.evaluation.claims``, in one place (a change of the statistics touches only this module).

**The independent unit is the sentence pair.** C-STS scores every sentence pair under two conditions (Section 3.1),
so its two rows share both sentences and are not two independent draws. Every Spearman interval here is a paired
cluster bootstrap that draws sentence pairs with both their rows (``stats.paired_grouped_difference``, groups =
``Evaluation.groups``); a row bootstrap would count each pair twice and give intervals that are too narrow. The
Appendix A count is one flag per quadruple, i.e. per sentence pair; its bootstrap draws quadruples grouped the same
way (:func:`paired_count_difference`).

**Training seeds.** A claim takes one run per training seed on each side (``{seed: RunOutcome}``, or one run); the
verdict needs every seed's interval on the same side (``stsnb.evaluation.claims.claim``).

**Dev gates and preconditions.** A claim is gated on its own arms, per training seed, on dev data
(``gates.dev_gate``: selection kept a step past 0, its selection score beats the untrained encoder's on the same
held-out rows, a weight changed); a seed on which an arm did not train is left out ("2 of 3 seeds"), and the claim is
not tested with fewer than two seeds left (or its only seed left out). No gate reads the validation rows a claim is
scored on. Preconditions on the phenomenon itself: for Appendix A enough over-estimated quadruples to count
(:func:`fewest_resolvable_count`); for Table 5 rows whose Eq. 11 weight differs between the two sigmas
(:func:`sigma_changes_weights`) and a share of the gradient those weights reach above a floor (``gates.sigma_acts``).

**Smallest effects.** Every direction claim carries its smallest effect of interest with its reason
(``gates.smallest_effect``): "contradicted" needs the estimate beyond it, intervals wholly inside it read "no
meaningful effect" (``stsnb.evaluation.verdict_rules.sized_verdict``).

**Direction and kind from the paper's words** (``quotes``). Section 4.5.1 says the optimum "cannot be achieved"
with sigma = 0: a direction claim (Table 2's sigma beats the other, :func:`sigma_claim`), never a robustness one.
Section 4.5.2 calls the bi-encoder robust to tau: an equivalence claim whose margin must stay below the smallest
effect Sections 4.4-4.5 read as real on the same row (:func:`robustness_margin`), and no claim of robustness for the
tri-encoder, whose RoBERTa "fluctuates significantly" (:func:`tau_claim`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import torch

from ...evaluation import claims, stats
from ...evaluation.dev_gates import DevGate
from ...evaluation.main_claims import MainClaim
from ...training.conditional_losses import bcl_weights
from . import gates, quotes
from .probes import GradientShare
from .quadruples import Quadruple, scale_label
from .reported import REPORTED, SIGMAS, setting
from .training import RunOutcome, pair_id

Runs = gates.Runs


def _partner(runs: dict[int, RunOutcome], seed: int, name: str) -> RunOutcome:
    """The run of ``runs`` to pair with training seed ``seed``: its own, or the only one when the model it stands for
    does not depend on the seed (an untrained bi-encoder)."""
    if seed in runs:
        return runs[seed]
    if len(runs) == 1:
        (only,) = runs.values()
        if only.result is None and not only.settings.untrained_depends_on_seed:
            return only
    raise ValueError(f"{name} has no run for training seed {seed} (seeds {sorted(runs)})")


def _check_same_rows(a: RunOutcome, b: RunOutcome) -> None:
    if a.evaluation.sources != b.evaluation.sources:
        raise ValueError(f"{a.name} and {b.name} were scored on different rows: a paired comparison needs the same")


def spearman_interval(a: RunOutcome, b: RunOutcome, *, n_resamples: int = 2000, seed: int = 0):
    """``a - b`` in Spearman x100 on the same rows, with a paired bootstrap over sentence pairs (both conditions of a
    pair drawn together); ``n`` of the result counts sentence pairs."""
    _check_same_rows(a, b)
    ev = a.evaluation
    groups = ev.groups or None
    if groups is None:
        raise ValueError(f"{a.name} has no sentence-pair groups: score it with ccl.evaluate_rows")
    return stats.paired_grouped_difference(
        ev.gold, ev.predictions, b.evaluation.predictions, groups, n_resamples=n_resamples, seed=seed
    )


def row_interval(a: RunOutcome, b: RunOutcome, *, n_resamples: int = 2000, seed: int = 0):
    """The same difference with a bootstrap over rows, as if a pair's two conditions were independent draws: printed
    beside :func:`spearman_interval` to show what the unit changes, never used for a verdict."""
    _check_same_rows(a, b)
    ev = a.evaluation
    return stats.paired_spearman_difference(
        ev.gold, ev.predictions, b.evaluation.predictions, n_resamples=n_resamples, seed=seed
    )


def per_seed_text(row: Mapping) -> str:
    """Each training seed's difference and interval of a claim row, e.g. "seed 0: +1.36 [-0.61, +3.38]; ..."."""
    return "; ".join(
        f"{e['seed_run']}: {e['difference']:+.2f} [{e['low']:+.2f}, {e['high']:+.2f}]" for e in row["per_seed"]
    )


def seed_intervals(a: Runs, b: Runs, *, n_resamples: int = 2000, seed: int = 0) -> dict[str, stats.PairedDifference]:
    """One interval per training seed of ``a``: ``{"seed s": a[s] - b[s]}`` (``b`` may be one untrained run whose
    similarities do not depend on the seed)."""
    a_runs, b_runs = gates.by_seed(a, "a"), gates.by_seed(b, "b")
    return {
        f"seed {s}": spearman_interval(run, _partner(b_runs, s, "b"), n_resamples=n_resamples, seed=seed)
        for s, run in sorted(a_runs.items())
    }


def sigma_changes_weights(
    quadruples: Sequence[Quadruple], sigma_a: float, sigma_b: float, share: GradientShare | None = None
) -> claims.Precondition:
    """Precondition for a Table 5 claim: some training rows get another same-pair weight (Eq. 11,
    ``conditional_losses.bcl_weights``) under ``sigma_a`` than under ``sigma_b``; otherwise the two runs train alike.
    With ``share`` (the probe of ``gradient_shares`` at the run's tau, before training) the evidence also says how much
    of the gradient those weights can reach: the same-pair negative's share of BCL's push on the negatives, times
    BCL's part of the gradient at h, r / (1 + r) with r = ``bcl_ratio`` (norms, so a rough upper bound)."""
    labels = [scale_label(label) for q in quadruples for label in (q.label_high, q.label_low)]
    levels = sorted(set(labels))
    weights = {
        s: dict(zip(levels, bcl_weights(torch.tensor(levels, dtype=torch.float64), s).diagonal().tolist(), strict=True))
        for s in (sigma_a, sigma_b)
    }
    differing = sum(weights[sigma_a][x] != weights[sigma_b][x] for x in labels)
    what = f"training rows whose same-pair weight (Eq. 11) differs between sigma={sigma_a:g} and sigma={sigma_b:g}"
    occurs = claims.phenomenon_occurs(what, differing, out_of=len(labels))
    if share is None:
        reach = "the share of the gradient those weights reach was not probed"
    else:
        reach = f"they reach at most about {gates.sigma_reach(share):.1%} of the gradient at h ({share.reading})"
    return claims.Precondition(occurs.name, occurs.holds, f"{occurs.evidence}; {reach}")


def robustness_margin(arch: str, row: str, margin: float) -> tuple[str, float]:
    """Why a robustness margin on the paper's ``row`` and ``arch``, and the effect it must stay below: the smallest
    difference Sections 4.4-4.5 read as real there (Table 4: removing W-ACL or BCL "can decrease" the score;
    Table 5: sigma = 0 "cannot" reach the optimum). Returns (the reason, that effect: the ``paper_effect``)."""
    full = REPORTED.value("Table 4", setting(arch, "CCL", row), "spearman")
    effects = {
        f"Table 4, w/o {name}": full - REPORTED.value("Table 4", setting(arch, "CCL", row, f"w/o {name}"), "spearman")
        for name in ("W-ACL", "BCL")
    }
    sigmas = {s: REPORTED.value("Table 5", setting(arch, "CCL", row, f"sigma={s:g}"), "spearman") for s in SIGMAS}
    effects["Table 5, best sigma vs sigma=0"] = max(sigmas.values()) - sigmas[0.0]
    where, effect = min(effects.items(), key=lambda item: abs(item[1]))
    reason = (
        f"Figure 2 prints no numbers; the smallest effect Sections 4.4-4.5 read as real on the {arch}-encoder {row} "
        f"is {effect:+.2f} ({where}): +-{margin:g} " + ("stays below it" if margin < abs(effect) else "does not")
    )
    return reason, effect


def spearman_claim(
    text: str,
    a: Runs,
    b: Runs,
    *,
    paper_quote: str,
    kind: claims.Kind = claims.PAPER,
    direction: int = +1,
    margin: float | None = None,
    margin_reason: str | None = None,
    paper_effect: float | None = None,
    preconditions: Sequence[claims.Precondition] = (),
    dev_gates: Sequence[DevGate] = (),
    smallest_effect: tuple[float, str] | None = None,
    paper_difference: float | None = None,
    main_claim: bool = False,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict:
    """``a - b`` in Spearman x100 per training seed, each with its interval over sentence pairs, as a
    ``stsnb.evaluation.claims.claim`` row quoting the paper (``paper_quote``): ``direction`` +1 when the paper's words
    have a > b; ``margin`` (with ``margin_reason`` and the paper's own effect ``paper_effect``) makes it a robustness
    claim (verdict ``equivalent`` when every seed's interval lies inside +-margin); ``dev_gates`` (``gates.arm_gates``)
    leave out the seeds on which an arm did not train on dev; ``smallest_effect`` is (effect, reason)
    (``gates.smallest_effect``); ``main_claim`` marks the row of the paper's main claim (:data:`MAIN_CLAIMS`: Table 3's
    CCL > QuMSE on the bi-encoder). The row also carries both arms' mean Spearman, the Pearson difference (point
    value) and an ``interval`` text."""
    a_runs, b_runs = gates.by_seed(a, "a"), gates.by_seed(b, "b")
    intervals = seed_intervals(a_runs, b_runs, n_resamples=n_resamples, seed=seed)
    pairs = [(run, _partner(b_runs, s, "b")) for s, run in sorted(a_runs.items())]
    paired = {
        f"seed {s}": {
            "C-STS": (x.evaluation.gold, x.evaluation.predictions, y.evaluation.predictions, x.evaluation.groups)
        }
        for s, (x, y) in zip(sorted(a_runs), pairs, strict=True)
    }
    row = claims.claim(
        text,
        intervals,
        paper_quote=paper_quote,
        kind=kind,
        direction=direction,
        margin=margin,
        margin_reason=margin_reason,
        paper_effect=paper_effect,
        preconditions=preconditions,
        dev_gates=dev_gates,
        smallest_effect=smallest_effect[0] if smallest_effect else None,
        smallest_effect_reason=smallest_effect[1] if smallest_effect else None,
        baseline=_baseline(kind, direction, smallest_effect, dev_gates),
        paired=paired,
        n_resamples=n_resamples,
        paper_difference=paper_difference,
        main_claim=main_claim,
        a=next(iter(a_runs.values())).name,
        b=next(iter(b_runs.values())).name,
        spearman_a=float(np.mean([x.evaluation.spearman for x, _ in pairs])),
        spearman_b=float(np.mean([y.evaluation.spearman for _, y in pairs])),
        pearson_difference=float(np.mean([x.evaluation.pearson - y.evaluation.pearson for x, y in pairs])),
        unit=f"sentence pairs ({next(iter(intervals.values())).n}, both conditions of each drawn together)",
    )
    difference, low, high = claims.deciding_interval(row)  # what the verdict was decided on (seeds and pairs)
    row["interval"] = f"{difference:+.2f} [{low:+.2f}, {high:+.2f}]"
    return row


def _baseline(kind: str, direction: int, smallest_effect, dev_gates: Sequence[DevGate]) -> str | None:
    """The arm a paper's direction claim says is improved on, whose dev gain must reach the smallest effect: the
    second arm's gate ("CCL > QuMSE": QuMSE, as ``gates.arm_gates(a, .., b, ..)`` orders them), the first when the
    paper's direction is a < b; None for a check, a claim without a size, or gates that are not one per arm."""
    if kind != claims.PAPER or direction == 0 or not smallest_effect or len(dev_gates) != 2:
        return None
    return dev_gates[1 if direction > 0 else 0].arm


def fewest_resolvable_count(level: float = 0.95) -> int:
    """The fewest flagged items at which a count difference can exclude 0: when one arm flags ``n`` of many items
    and the other none, a bootstrap draws no flagged item with probability about ``exp(-n)``, so the interval's
    lower end is above 0 only when ``exp(-n) < (1 - level) / 2``; 4 at the 95% level."""
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    return math.floor(math.log(2 / (1 - level))) + 1


def quadruple_groups(quadruples: Sequence[Quadruple]) -> list[str]:
    """The sentence pair of each quadruple (:func:`stsnb.papers.ccl.pair_id`): the bootstrap unit of Appendix A."""
    return [pair_id(q.rows()[0]) for q in quadruples]


def paired_count_difference(
    flags_a: Sequence[bool],
    flags_b: Sequence[bool],
    groups: Sequence | None = None,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float, float]:
    """``sum(flags_a) - sum(flags_b)`` with a paired percentile bootstrap that draws ``groups`` (default: every item
    its own group; Appendix A: :func:`quadruple_groups`) with all their items."""
    a, b = np.asarray(flags_a, dtype=np.float64), np.asarray(flags_b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or len(a) == 0:
        raise ValueError(f"flags_a and flags_b must be 1-D of one non-zero length, got {a.shape} and {b.shape}")
    labels = list(range(len(a))) if groups is None else list(groups)
    if len(labels) != len(a):
        raise ValueError(f"groups has {len(labels)} labels for {len(a)} flags: one group per item")
    index: dict = {}
    group_of = np.array([index.setdefault(label, len(index)) for label in labels], dtype=np.intp)
    per_group = np.bincount(group_of, weights=a - b, minlength=len(index))
    rng = np.random.default_rng(seed)
    replicates = per_group[rng.integers(0, len(index), size=(n_resamples, len(index)))].sum(axis=1)
    low, high = np.quantile(replicates, [(1 - level) / 2, (1 + level) / 2])
    return float(per_group.sum()), float(low), float(high)


def count_claim(
    text: str,
    flags_a: Mapping[int, Sequence[bool]] | Sequence[bool],
    flags_b: Mapping[int, Sequence[bool]] | Sequence[bool],
    direction: int,
    *,
    paper_quote: str = quotes.APPENDIX_A,
    groups: Sequence | None = None,
    preconditions: Sequence[claims.Precondition] = (),
    what: str = "over-estimated quadruples (Eq. 16-17, either arm)",
    minimum: int | None = None,
    dev_gates: Sequence[DevGate] = (),
    smallest_effect: tuple[float, str] | None = None,
    paper_difference: float | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict:
    """Appendix A: the difference of over-estimated counts (a - b) per training seed, its paired interval over
    sentence pairs, and the verdict. Adds the precondition "<what> occurs": in every seed at least ``minimum``
    (default :func:`fewest_resolvable_count`) quadruples are flagged under a or b, else the claim is not tested.
    ``dev_gates`` and ``smallest_effect`` (in quadruples) as for :func:`spearman_claim`."""
    a_by_seed = dict(flags_a) if isinstance(flags_a, Mapping) else {0: flags_a}
    b_by_seed = dict(flags_b) if isinstance(flags_b, Mapping) else {0: flags_b}
    if sorted(a_by_seed) != sorted(b_by_seed):
        raise ValueError(f"flags_a and flags_b need the same seeds, got {sorted(a_by_seed)} and {sorted(b_by_seed)}")
    intervals, counts, union = {}, {}, []
    for s in sorted(a_by_seed):
        a, b = np.asarray(a_by_seed[s], dtype=bool), np.asarray(b_by_seed[s], dtype=bool)
        intervals[f"seed {s}"] = paired_count_difference(a, b, groups, n_resamples=n_resamples, seed=seed)
        counts[f"seed {s}"] = {"a": int(a.sum()), "b": int(b.sum()), "either": int((a | b).sum()), "of": len(a)}
        union.append(int((a | b).sum()))
    minimum = fewest_resolvable_count() if minimum is None else minimum
    occurs = claims.phenomenon_occurs(what, min(union), minimum, out_of=len(a))
    if len(union) > 1:  # the fewest decides; the reader sees every seed's count
        per_seed = ", ".join(f"{n}" for n in union)
        occurs = claims.Precondition(
            occurs.name, occurs.holds, f"{occurs.evidence} in the fewest seed; per seed {per_seed}"
        )
    row = claims.claim(
        text,
        intervals,
        paper_quote=paper_quote,
        direction=direction,
        paired_sums={f"seed {s}": (a_by_seed[s], b_by_seed[s], groups) for s in sorted(a_by_seed)},
        n_resamples=n_resamples,
        preconditions=[*preconditions, occurs],
        dev_gates=dev_gates,
        smallest_effect=smallest_effect[0] if smallest_effect else None,
        smallest_effect_reason=smallest_effect[1] if smallest_effect else None,
        paper_difference=paper_difference,
        counts=counts,
        unit="sentence pairs (one quadruple each)",
    )
    row["interval"] = f"{row['difference']:+.1f} [{row['low']:+.0f}, {row['high']:+.0f}]"
    return row


def sigma_claim(
    text: str,
    base: Runs,
    other: Runs,
    *,
    table2_sigma: float,
    sigma: float,
    paper_difference: float | None,
    quadruples: Sequence[Quadruple],
    dev_gates: Sequence[DevGate] = (),
    smallest_effect: tuple[float, str] | None = None,
    share: GradientShare | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict:
    """Table 5 (Section 4.5.1) as the paper says it: a **direction** claim, Table 2's sigma (``base``) beats
    ``sigma`` (``other``); against sigma = 0 it quotes "the optimal effect cannot be achieved" without it, against
    any other sigma "the model benefits from an appropriate sigma". Gated on both arms on dev (``dev_gates``), on the
    rows whose Eq. 11 weight the two sigmas change (:func:`sigma_changes_weights`) and, where the probe ran
    (``share``), on sigma's weights reaching at least ``gates.SIGMA_GRADIENT_FLOOR`` of the gradient
    (``gates.sigma_acts``): below it sigma barely acts here and the claim is not tested, with the measured share.
    Otherwise the verdict is sized by ``smallest_effect`` (default: half the paper's difference)."""
    pre = [sigma_changes_weights(quadruples, table2_sigma, sigma, share)]
    if share is not None:
        pre.append(gates.sigma_acts(share))
    return spearman_claim(
        text,
        base,
        other,
        paper_quote=quotes.SIGMA_ZERO if sigma == 0 else quotes.SIGMA_OTHER,
        direction=+1,
        preconditions=pre,
        dev_gates=dev_gates,
        smallest_effect=smallest_effect or gates.smallest_effect(paper_difference, "Table 5"),
        paper_difference=paper_difference,
        n_resamples=n_resamples,
        seed=seed,
    )


def tau_claim(
    text: str,
    base: Runs,
    other: Runs,
    *,
    arch: str,
    row: str,
    margin: float,
    dev_gates: Sequence[DevGate] = (),
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict:
    """Figure 2 (Section 4.5.2): the bi-encoder "has a certain robustness" to tau, a robustness claim judged by
    equivalence within +-``margin`` with its reason (:func:`robustness_margin`; not tested when the margin contains
    the paper's smallest real effect on ``row``). The paper claims no robustness for the tri-encoder (its RoBERTa
    "fluctuates significantly"), so there the row has no direction (``unresolved``, never "equivalent"). The row's
    ``reachability`` says whether "equivalent" can be reached with one seed's interval as wide as it is."""
    if arch != "bi":
        return spearman_claim(
            text,
            base,
            other,
            paper_quote=quotes.TAU,
            direction=0,
            dev_gates=dev_gates,
            n_resamples=n_resamples,
            seed=seed,
        )
    reason, effect = robustness_margin(arch, row, margin)
    return spearman_claim(
        text,
        base,
        other,
        paper_quote=quotes.TAU,
        margin=margin,
        margin_reason=reason,
        paper_effect=effect,
        dev_gates=dev_gates,
        n_resamples=n_resamples,
        seed=seed,
    )


def ablation_seeds_of(ccl_seeds: Sequence[int], wanted: int) -> list[int]:
    """The training seeds of Table 4's ablations: the first ``wanted`` of the seeds full CCL trained on
    (``ccl_seeds``), since each ablation is compared with CCL on its own seed; fewer when CCL trained on fewer (the
    notebook prints how many it got)."""
    if wanted < 1:
        raise ValueError(f"ablation_seeds must be at least 1, got {wanted}")
    return list(ccl_seeds)[:wanted]


def check_ablation_seeds(ablation_seeds: int) -> None:
    """Refuse, before any training, an ``ablation_seeds`` below 1 (a typo found after an hour of runs costs the
    hour)."""
    ablation_seeds_of([], ablation_seeds)


def sign_pattern_chance(k: int, n: int) -> float:
    """The two-sided chance that at least ``max(k, n - k)`` of ``n`` seeds fall on one side of 0 when the true
    difference is 0 and each seed falls either way with probability 1/2 (3 of 3: 0.25)."""
    most = max(k, n - k)
    tail = sum(math.comb(n, i) for i in range(most, n + 1)) / 2**n
    return min(1.0, 2 * tail)


WHAT_W_ACL_DOES = (
    "W-ACL is the only term of Eq. 3 that compares a pair's two conditions with each other (their cosine gap against "
    "their label gap, Eq. 9); MSE and C-MSE score each row on its own and BCL contrasts rows without their labels' "
    "gap, so without W-ACL the loss orders a pair's two conditions only through each row's own MSE targets"
)


def ablation_note(term: str, row: Mapping) -> str:
    """What a Table 4 row measured, written from its per-seed differences (CCL minus CCL without ``term``): on how
    many kept seeds the ablation scored higher, each seed's difference, the paper's difference; for W-ACL also what
    the ablation removes (:data:`WHAT_W_ACL_DOES`)."""
    kept = list(row["per_seed"])
    higher = sum(e["difference"] < 0 for e in kept)
    label = {"w_acl": "W-ACL", "bcl": "BCL", "mse": "MSE", "c_mse": "C-MSE"}.get(term, term)
    paper = row.get("paper_difference")
    paper_text = f"; the paper's CCL minus w/o {label}: {paper:+.2f}" if isinstance(paper, int | float) else ""
    seeds = f"{len(kept)} seed{'s' if len(kept) != 1 else ''}"
    verdict = claims.verdict_text(row, mark_provisional=True)
    text = (
        f"CCL minus CCL w/o {label}, per seed: {gates.differences_text(row)}: without {label} the score was higher on "
        f"{higher} of {seeds} ({verdict}{paper_text})"
    )
    if len(kept) > 1:
        text += (
            f"; {higher} of {len(kept)} is a sign pattern, not a test: with no difference at all, so many seeds on "
            f"one side or the other come up with probability {sign_pattern_chance(higher, len(kept)):.2f}"
        )
    if term == "w_acl":
        text += f". {WHAT_W_ACL_DOES}"
    return text


# The paper's main claim, from its abstract (fixed on 2026-11-28, after the first cpu runs: main_claims.FIXED; every
# profile's summary leads with it)
MAIN_CLAIMS = (
    MainClaim(
        "40_ccl_csts",
        quotes.MAIN_CLAIM,
        "Table 3",
        "CCL",
        "the prior method (QuMSE), bi-encoder",
        ("Table 3, ", "bi-encoder: CCL > QuMSE"),
    ),
)
