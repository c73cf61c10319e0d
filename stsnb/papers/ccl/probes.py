"""A cheap probe of BCL's weight in CCL's gradient (Eq. 3, 10-14), for notebook 40's Table 5 / Figure 2 discussion.

Eq. 13-14 give BCL's gradient on a cosine as ``1/tau`` times a softmax share. How much BCL steers training against
the label terms (W-ACL, MSE, C-MSE), and how much of BCL's push on the negatives the same-pair negative gets (the
only term sigma changes, Eq. 11), therefore depend on tau and on how Eq. 10's tau is read (divisor or multiplier).
:func:`gradient_shares` measures both on real training batches at the model's current weights, one encoder
forward per batch and no backward through the encoder: gradients are taken at the representations ``h`` (and BCL's
dropout view), the encoder's output, where every term acts first.

What it shows holds at the weights it is given (the notebook: the untrained model, i.e. the first steps); how the
shares change during training is not measured.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from ...evaluation.claims import verdict_text
from ...training import conditional_losses, losses
from .encoders import ConditionalEncoder
from .objectives import Objective, TemperatureReading, c_mse
from .quadruples import Quadruple, scale_label

SIMCSE_TEMPERATURE = 0.05  # SimCSE's tau (Gao et al. 2021), the usual InfoNCE temperature
LABEL_TERMS = ("w_acl", "mse", "c_mse")  # the terms of Eq. 3 that see the labels directly


@dataclass(frozen=True)
class GradientShare:
    """BCL under one reading of tau, beside the label terms, on the probed batches (means over batches).

    ``bcl_ratio`` = ``|d BCL / d h|`` over ``|d (W-ACL + MSE + C-MSE) / d h|`` (each weighted as in the objective);
    ``same_pair_share`` = the same-pair negative's share of BCL's softmax mass over the negatives with every
    ``alpha = 1`` (Eq. 14): the most of BCL's push on the negatives that sigma can switch off or down-weight."""

    reading: str
    temperature: float
    logit_bound: float
    bcl_ratio: float
    same_pair_share: float
    batches: int

    @property
    def label(self) -> str:
        return rf"$\tau$ = {self.temperature:g} ({self.reading})"


def _batch(quadruples: Sequence[Quadruple]):
    s1 = [q.sent1 for q in quadruples] * 2
    s2 = [q.sent2 for q in quadruples] * 2
    conditions = [q.condition_high for q in quadruples] + [q.condition_low for q in quadruples]
    labels = torch.tensor(
        [scale_label(q.label_high) for q in quadruples] + [scale_label(q.label_low) for q in quadruples]
    )
    return s1, s2, conditions, labels


def _norm(grads) -> float:
    return float(torch.sqrt(sum((g.double() ** 2).sum() for g in grads if g is not None)))


def gradient_shares(
    model: ConditionalEncoder,
    quadruples: Sequence[Quadruple],
    objective: Objective,
    settings: Sequence[tuple[TemperatureReading, float]],
    batch_size: int = 8,
    batches: int = 4,
    seed: int = 0,
) -> list[GradientShare]:
    """One :class:`GradientShare` per (reading, tau) in ``settings``, on the first ``batches`` batches of
    ``batch_size`` quadruples, at ``model``'s current weights, with dropout on as in training (``seed`` fixes it).

    ``objective`` gives the label terms' weights, sigma and the C-MSE reading; its own tau is not used."""
    chunks = [quadruples[i : i + batch_size] for i in range(0, batches * batch_size, batch_size)]
    chunks = [c for c in chunks if len(c) == batch_size]
    if not chunks:
        raise ValueError(f"need at least {batch_size} quadruples for one batch, got {len(quadruples)}")
    weights = objective.weights
    was_training = model.training
    model.train()
    ratios: dict[int, list[float]] = {i: [] for i in range(len(settings))}
    shares: dict[int, list[float]] = {i: [] for i in range(len(settings))}
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            for chunk in chunks:
                s1, s2, conditions, labels = _batch(chunk)
                n = len(s1)
                with torch.no_grad():
                    h = model(s1 + s2, conditions + conditions).float()
                    h_view = model(s1, conditions).float()  # BCL's positive: another dropout mask
                h, h_view = h.detach().requires_grad_(), h_view.detach().requires_grad_()
                z, z_view = model.projection(h), model.projection(h_view)
                cos = F.cosine_similarity(h[:n], h[n:], dim=-1)
                b = len(chunk)
                label_loss = torch.zeros((), dtype=h.dtype)
                if weights.get("w_acl", 0):
                    label_loss = label_loss + weights["w_acl"] * conditional_losses.w_acl(
                        cos[:b], cos[b:], labels[:b], labels[b:]
                    )
                if weights.get("mse", 0):
                    label_loss = label_loss + weights["mse"] * losses.mse_loss(cos, labels.to(cos.dtype))
                if weights.get("c_mse", 0):
                    if objective.c_mse_target == "projected":
                        projected = F.cosine_similarity(z[:n], z[n:], dim=-1)
                        term = c_mse("projected", projected_cos=projected, labels=labels.to(cos.dtype))
                    else:
                        term = c_mse(
                            "gap", cos_pos=cos[:b], cos_neg=cos[b:], label_pos=labels[:b], label_neg=labels[b:]
                        )
                    label_loss = label_loss + weights["c_mse"] * term
                label_norm = _norm(torch.autograd.grad(label_loss, [h, h_view], retain_graph=True, allow_unused=True))
                negatives = F.normalize(z[:n], dim=-1) @ F.normalize(z[n:], dim=-1).T
                for i, (reading, tau) in enumerate(settings):
                    divisor = tau if reading == "divisor" else 1.0 / tau
                    bcl = weights.get("bcl", 1.0) * conditional_losses.bcl(
                        z[:n], z_view, z[n:], labels, objective.sigma, divisor
                    )
                    bcl_norm = _norm(torch.autograd.grad(bcl, [h, h_view], retain_graph=True))
                    ratios[i].append(bcl_norm / label_norm if label_norm > 0 else float("inf"))
                    softmax = torch.softmax(negatives.detach() / divisor, dim=1)
                    shares[i].append(float(softmax.diagonal().mean()))
    finally:
        model.train(was_training)
    return [
        GradientShare(
            reading,
            float(tau),
            1.0 / (tau if reading == "divisor" else 1.0 / tau),
            float(np.mean(ratios[i])),
            float(np.mean(shares[i])),
            len(chunks),
        )
        for i, (reading, tau) in enumerate(settings)
    ]


def probe_settings(table2_temperature: float, temperatures: Sequence[float]) -> list[tuple[TemperatureReading, float]]:
    """The (reading, tau) pairs notebook 40 probes: Table 2's tau and the run's other taus under both readings, and
    SimCSE's 0.05 as a divisor (the setting an earlier run found costly)."""
    taus = sorted({float(table2_temperature), *map(float, temperatures)})
    divisor: list[tuple[TemperatureReading, float]] = [("divisor", t) for t in sorted({SIMCSE_TEMPERATURE, *taus})]
    return divisor + [("multiplier", t) for t in taus]


def shares_table(shares: Sequence[GradientShare]) -> str:
    header = f"{'reading':<12}{'tau':>7}{'logits within':>15}{'|grad BCL| / |grad labels|':>28}{'same-pair share':>17}"
    lines = [header, "-" * len(header)]
    lines += [
        f"{s.reading:<12}{s.temperature:>7g}{'+-' + format(s.logit_bound, '.3g'):>15}{s.bcl_ratio:>28.2f}"
        f"{s.same_pair_share:>17.1%}"
        for s in shares
    ]
    return "\n".join(lines)


def find(shares: Sequence[GradientShare], reading: str, temperature: float) -> GradientShare:
    for s in shares:
        if s.reading == reading and np.isclose(s.temperature, temperature):
            return s
    raise KeyError(f"no probe for {reading} tau={temperature:g}")


def claim_text(claim: Mapping | None) -> str:
    """``interval -> verdict`` of a claim row, or a note that the run has none."""
    if claim is None:
        return "not run in this profile"
    return f"{claim['interval']}, {verdict_text(claim, mark_provisional=True)}"


def _claims_text(rows: Sequence[Mapping]) -> str:
    return "; ".join(f"{r['claim'].split(': ', 1)[-1]}: {claim_text(r)}" for r in rows) or "none in this run"


def sweep_notes(
    shares: Mapping[str, Sequence[GradientShare]],
    pooling: str,
    table2_temperature: float,
    reading: TemperatureReading,
    rows_per_batch: int,
    sigma_claims: Sequence[Mapping],
    tau_claims: Sequence[Mapping],
) -> str:
    """Markdown for notebook 40's Section 7, every number from the probe (``shares``: pooling -> rows of
    :func:`gradient_shares`, ``pooling`` = the run's) and the run's Table 5 / Figure 2 claims. A hypothesis says so."""
    run = shares[pooling]
    at_table2 = find(run, reading, table2_temperature)
    other = "multiplier" if reading == "divisor" else "divisor"
    other_share = find(run, other, table2_temperature).same_pair_share
    batches = at_table2.batches
    small = at_table2.bcl_ratio < 1 and at_table2.same_pair_share < 0.25
    steer = "a small part of a small part of the gradient" if small else "a sizeable part of BCL's push"
    lines = [
        f"**What $\\sigma$ can move here** (measured on the untrained {pooling}-pooled bi-encoder, {batches} "
        "training batches: the first steps, not the whole run). $\\sigma$ only changes the weight of the same-pair "
        rf"negative (Eq. 11). At Table 2's $\tau$ = {table2_temperature:g} read as a {reading}, that negative holds "
        f"{at_table2.same_pair_share:.1%} of BCL's softmax mass over the negatives (an even share would be "
        f"1/{rows_per_batch} = {1 / rows_per_batch:.1%}), and BCL's gradient on $h$ is {at_table2.bcl_ratio:.2f}x "
        f"that of W-ACL + MSE + C-MSE together. So $\\sigma$ steers {steer}; our Table 5 claims: "
        f"{_claims_text(sigma_claims)}. Read as a {other}, the same-pair negative would hold "
        f"{other_share:.1%} (exercise 9).",
    ]
    sharp = find(run, "divisor", SIMCSE_TEMPERATURE)
    lines.append(
        rf"**$\tau$ = {SIMCSE_TEMPERATURE:g}** (SimCSE's), read as a divisor, makes BCL's logits "
        f"{table2_temperature / SIMCSE_TEMPERATURE:.0f}x sharper than Table 2's $\\tau$ = {table2_temperature:g} "
        f"(within $\\pm${sharp.logit_bound:.3g} instead of $\\pm${1 / table2_temperature:.3g}); the same-pair negative "
        f"then holds {sharp.same_pair_share:.1%} of the negatives' mass."
    )
    divisor_t2 = find(run, "divisor", table2_temperature)
    ratio = f"{sharp.bcl_ratio:.2f}x the label terms' against {divisor_t2.bcl_ratio:.2f}x at Table 2's $\\tau$"
    if "cls" in shares and pooling != "cls":
        cls_sharp = find(shares["cls"], "divisor", SIMCSE_TEMPERATURE)
        cls_t2 = find(shares["cls"], "divisor", table2_temperature)
        lines.append(
            rf"BCL's gradient on $h$ at $\tau$ = {SIMCSE_TEMPERATURE:g}: with first-token pooling (the earlier run's) "
            f"{cls_sharp.bcl_ratio:.2f}x the label terms' against {cls_t2.bcl_ratio:.2f}x at Table 2's $\\tau$; with "
            f"this run's {pooling} pooling {ratio}."
        )
        if cls_sharp.bcl_ratio > 1 > cls_t2.bcl_ratio:
            lines.append(
                "*Hypothesis, which this probe supports but no run here tests:* with first-token pooling BCL, which "
                "sees the labels only through Eq. 11's weights, outweighs the three label terms from the first step "
                r"at $\tau$ = 0.05 and not at Table 2's $\tau$, so it may have overridden the labels and cost the "
                "earlier run its points."
            )
        else:
            lines.append(
                "*The probe does not support the hypothesis* that BCL outweighed the label terms at the start with "
                r"first-token pooling at $\tau$ = 0.05; the earlier run's cost stays unexplained."
            )
        prediction = "a much smaller" if sharp.bcl_ratio < 1 else "a similar"
        lines.append(
            f"With {pooling} pooling the ratio at $\\tau$ = {SIMCSE_TEMPERATURE:g} is {sharp.bcl_ratio:.2f}, which "
            f"predicts {prediction} cost of $\\tau$ = {SIMCSE_TEMPERATURE:g} in this run's setting (exercise 7 "
            "trains it)."
        )
    else:
        lines.append(rf"BCL's gradient on $h$ at $\tau$ = {SIMCSE_TEMPERATURE:g}: {ratio}.")
    lines.append(
        f"Our Figure 2 claims: {_claims_text(tau_claims)}. *Open:* the probe sees the first steps only; by Eq. 14 a "
        r"negative's weight grows as $e^{\cos/\tau}$, so at a small $\tau$ BCL's share may grow once training raises "
        "the cosines of similar pairs, which a probe during training would show."
    )
    return "\n\n".join(lines)
