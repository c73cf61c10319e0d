"""CCL's objective (Eq. 3) and the QuMSE baseline, on batches of quadruples; FDL, RDL and ACL (Eq. 5-8) for readers.

A batch of ``B`` quadruples is ``2B`` rows, the ``B`` higher-condition rows first and then their ``B``
lower-condition partners (the c-sts ``TripletBatchSampler`` layout). Labels are scaled to [0, 1]
(:func:`~stsnb.papers.ccl.quadruples.scale_label`). The terms:

| term | equation | what it compares |
|---|---|---|
| ``quad`` | Eq. 1 / 4, ``quad_loss`` | ``cos_pos - cos_neg`` against the margin ``lambda`` (1 in c-sts) |
| ``mse`` | Eq. 3 ``l_MSE`` | ``cos(h1, h2)`` of every row against its label |
| ``w_acl`` | Eq. 9, ``w_acl`` | ``cos_pos - cos_neg`` against ``l_pos - l_neg``, weighted by that gap |
| ``bcl`` | Eq. 10-12, ``bcl`` | ``g(f(s1, c))`` vs its dropout view and every ``g(f(s2^j, c^j))`` |
| ``c_mse`` | Eq. 3 ``l_C-MSE`` | see ``CMseTarget`` (the paper gives no formula) |

The losses are in ``stsnb.training.conditional_losses``.

QuMSE (Deshpande et al. 2023, c-sts ``triplet_mse``) = ``quad + mse``. CCL = ``l1 w_acl + l2 bcl + l3 mse +
l4 c_mse`` with all four lambdas 1 (Section 4.1).

**Our readings where the paper is silent** (each a parameter):

- ``c_mse_target="projected"`` (default): C-MSE is the MSE of ``cos(g(h1), g(h2))`` against the label, i.e. MSE in
  the space BCL contrasts in ("l_MSE and l_C-MSE finely constrain similarity scores in the embedding and
  contrastive learning spaces, respectively", Section 3.2.2). ``"gap"``: the MSE of the cosine gap
  ``cos_pos - cos_neg`` against the label gap ``l_pos - l_neg`` (the quantity W-ACL contrasts).
- ``g``: a model choice (``stsnb.papers.ccl.encoders.make_projection``), ``"mlp"`` by default.
- BCL's anchors are the first sentences of all ``2B`` rows, negatives the second sentences of all ``2B`` rows (the
  same pair under its *other* condition is then a general negative, weight 1, as Eq. 11's ``i != j`` says).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor

from ...training import conditional_losses, losses
from ...training.losses import Reduction
from .quadruples import Quadruple, scale_label

CMseTarget = Literal["projected", "gap"]
C_MSE_TARGETS: tuple[CMseTarget, ...] = ("projected", "gap")
TemperatureReading = Literal["divisor", "multiplier"]
# Eq. 10 divides the cosine by tau, yet Table 2's tau of 3-10 then squeezes BCL's logits into +-1/tau; CCL has no
# released code, so "multiplier" (cos * tau, i.e. Eq. 10 with 1/tau) is the other reading, a parameter to test.
TEMPERATURE_READINGS: tuple[TemperatureReading, ...] = ("divisor", "multiplier")
TERMS = ("quad", "mse", "w_acl", "bcl", "c_mse")
CCL_TERMS = ("w_acl", "bcl", "mse", "c_mse")  # Eq. 3 order
TERM_LABELS = {"quad": "Quad", "mse": "MSE", "w_acl": "W-ACL", "bcl": "BCL", "c_mse": "C-MSE"}


# ---- Eq. 5-8: the parts of W-ACL, for readers --------------------------------------------------------------


def _reduce(values: Tensor, reduction: Reduction) -> Tensor:
    if reduction == "mean":
        return values.mean()
    if reduction == "sum":
        return values.sum()
    if reduction == "none":
        return values
    raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def _gap_terms(cos_pos: Tensor, cos_neg: Tensor, label_pos: Tensor, label_neg: Tensor) -> tuple[Tensor, Tensor]:
    """(label gap l_pos - l_neg, cosine gap cos_pos - cos_neg), shapes checked by ``conditional_losses.w_acl``'s
    rules."""
    conditional_losses.w_acl(cos_pos, cos_neg, label_pos, label_neg)  # only to validate: shapes, dtypes, l_pos >= l_neg
    return label_pos.to(cos_pos.dtype) - label_neg.to(cos_pos.dtype), cos_pos - cos_neg


def fdl(cos_pos: Tensor, cos_neg: Tensor, label_pos: Tensor, label_neg: Tensor, reduction: Reduction = "mean"):
    r"""Forward Directional Loss, Eq. 5: Quad with the label gap as margin.

    .. math:: l_{FDL} = \max(l_{pos} - l_{neg} + \cos(h_1^{neg}, h_2^{neg}) - \cos(h_1^{pos}, h_2^{pos}),\ 0)

    Zero (no gradient) once the cosine gap reaches the label gap: Quad with ``lambda = 1`` keeps pushing until the
    cosine gap is 1, past any label gap below 1 (the over-estimation of Section 1).
    """
    label_gap, cos_gap = _gap_terms(cos_pos, cos_neg, label_pos, label_neg)
    return _reduce(torch.clamp(label_gap - cos_gap, min=0.0), reduction)  # max(l+ - l- + cos- - cos+, 0)


def rdl(cos_pos: Tensor, cos_neg: Tensor, label_pos: Tensor, label_neg: Tensor, reduction: Reduction = "mean"):
    r"""Reverse Direction Loss, Eq. 6: the mirror image of FDL, active when the cosine gap *exceeds* the label gap.

    .. math:: l_{RDL} = \max(l_{neg} - l_{pos} - \cos(h_1^{neg}, h_2^{neg}) + \cos(h_1^{pos}, h_2^{pos}),\ 0)
    """
    label_gap, cos_gap = _gap_terms(cos_pos, cos_neg, label_pos, label_neg)
    return _reduce(torch.clamp(cos_gap - label_gap, min=0.0), reduction)  # max(l- - l+ - cos- + cos+, 0)


def acl(cos_pos: Tensor, cos_neg: Tensor, label_pos: Tensor, label_neg: Tensor, reduction: Reduction = "mean"):
    r"""Adaptive Contrastive Loss, Eq. 7 = FDL + RDL, which Eq. 8 rewrites as one absolute value.

    .. math:: l_{ACL} = |l_{pos} - l_{neg} + \cos(h_1^{neg}, h_2^{neg}) - \cos(h_1^{pos}, h_2^{pos})|

    W-ACL (Eq. 9, ``stsnb.training.conditional_losses.w_acl``) multiplies this by ``l_pos - l_neg``.
    """
    per_pair = fdl(cos_pos, cos_neg, label_pos, label_neg, "none") + rdl(cos_pos, cos_neg, label_pos, label_neg, "none")
    return _reduce(per_pair, reduction)  # Eq. 7 (equal to Eq. 8 term by term)


def c_mse(
    target: CMseTarget,
    *,
    projected_cos: Tensor | None = None,
    labels: Tensor | None = None,
    cos_pos: Tensor | None = None,
    cos_neg: Tensor | None = None,
    label_pos: Tensor | None = None,
    label_neg: Tensor | None = None,
) -> Tensor:
    """C-MSE under one of our two readings (the paper names it only): ``"projected"`` = MSE of
    ``cos(g(h1), g(h2))`` (``projected_cos``) vs ``labels``; ``"gap"`` = MSE of ``cos_pos - cos_neg`` vs
    ``label_pos - label_neg``."""
    if target == "projected":
        if projected_cos is None or labels is None:
            raise ValueError("c_mse('projected') needs projected_cos and labels")
        return losses.mse_loss(projected_cos, labels)
    if target == "gap":
        if cos_pos is None or cos_neg is None or label_pos is None or label_neg is None:
            raise ValueError("c_mse('gap') needs cos_pos, cos_neg, label_pos and label_neg")
        label_gap, cos_gap = _gap_terms(cos_pos, cos_neg, label_pos, label_neg)
        return losses.mse_loss(cos_gap, label_gap)
    raise ValueError(f"c_mse target must be one of {C_MSE_TARGETS}, got {target!r}")


# ---- objectives ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Objective:
    """A weighted sum of the terms in ``TERMS`` (zero-weight terms are not computed) and their settings."""

    name: str
    weights: Mapping[str, float]
    margin: float = 1.0  # Quad's lambda (Eq. 1)
    sigma: float = 0.5  # BCL's threshold (Eq. 11), on the [0, 1] label scale
    temperature: float = 5.0  # BCL's tau (Eq. 10)
    c_mse_target: CMseTarget = "projected"
    temperature_reading: TemperatureReading = "divisor"  # Eq. 10 as printed (cos / tau) | "multiplier" (cos * tau)
    note: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        unknown = set(self.weights) - set(TERMS)
        if unknown:
            raise ValueError(f"unknown loss terms {sorted(unknown)}; known: {TERMS}")
        if not any(w != 0 for w in self.weights.values()):
            raise ValueError(f"objective {self.name!r} has no term with a non-zero weight")
        if any(w < 0 for w in self.weights.values()):
            raise ValueError(f"loss weights must be >= 0, got {dict(self.weights)}")
        if self.c_mse_target not in C_MSE_TARGETS:
            raise ValueError(f"c_mse_target must be one of {C_MSE_TARGETS}, got {self.c_mse_target!r}")
        if self.temperature_reading not in TEMPERATURE_READINGS:
            raise ValueError(
                f"temperature_reading must be one of {TEMPERATURE_READINGS}, got {self.temperature_reading!r}"
            )

    @property
    def bcl_temperature(self) -> float:
        """The divisor BCL's cosines see (Eq. 10): ``temperature``, or ``1 / temperature`` read as a multiplier."""
        return self.temperature if self.temperature_reading == "divisor" else 1.0 / self.temperature

    def active(self) -> list[str]:
        return [t for t in TERMS if self.weights.get(t, 0.0) != 0]

    def needs_projection(self) -> bool:
        projected_c_mse = self.weights.get("c_mse", 0) != 0 and self.c_mse_target == "projected"
        return self.weights.get("bcl", 0) != 0 or projected_c_mse

    def without(self, term: str) -> Objective:
        """Table 4's ablation: the same objective with one term's weight set to 0."""
        if self.weights.get(term, 0) == 0:
            raise ValueError(f"{self.name} has no term {term!r} to remove (active: {self.active()})")
        weights = {**self.weights, term: 0.0}
        return replace(self, name=f"{self.name} w/o {TERM_LABELS[term]}", weights=weights)

    def with_settings(self, **changes) -> Objective:
        """The same terms with other sigma / temperature (or reading) / margin / C-MSE target (Table 5, Figure 2)."""
        return replace(self, **changes)


def qumse(margin: float = 1.0) -> Objective:
    """QuMSE, the baseline of Deshpande et al. (2023): Quad (Eq. 1, ``lambda = margin``) + MSE, weights 1 (c-sts
    ``triplet_mse``)."""
    return Objective("QuMSE", {"quad": 1.0, "mse": 1.0}, margin=margin)


def ccl(
    sigma: float,
    temperature: float,
    lambdas: Sequence[float] = (1.0, 1.0, 1.0, 1.0),
    c_mse_target: CMseTarget = "projected",
) -> Objective:
    """CCL, Eq. 3: ``lambdas`` = (l1 W-ACL, l2 BCL, l3 MSE, l4 C-MSE), all 1 in the paper (Section 4.1)."""
    if len(lambdas) != 4:
        raise ValueError(f"lambdas must be 4 weights (W-ACL, BCL, MSE, C-MSE), got {lambdas}")
    conditional_losses.bcl_weights(torch.zeros(1), sigma)  # validates sigma in [0, 1]
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    return Objective(
        "CCL",
        dict(zip(CCL_TERMS, map(float, lambdas), strict=True)),
        sigma=sigma,
        temperature=temperature,
        c_mse_target=c_mse_target,
    )


def _batch_rows(quadruples: Sequence[Quadruple]) -> tuple[list[str], list[str], list[str], Tensor]:
    """s1, s2, condition and scaled label of the 2B rows: the B higher rows, then the B lower rows."""
    if not quadruples:
        raise ValueError("a batch needs at least one quadruple")
    s1 = [q.sent1 for q in quadruples] * 2
    s2 = [q.sent2 for q in quadruples] * 2
    conditions = [q.condition_high for q in quadruples] + [q.condition_low for q in quadruples]
    labels = [scale_label(q.label_high) for q in quadruples] + [scale_label(q.label_low) for q in quadruples]
    return s1, s2, conditions, torch.tensor(labels)


def batch_terms(model, quadruples: Sequence[Quadruple], objective: Objective) -> dict[str, Tensor]:
    """Every active term of ``objective`` on one batch of quadruples (each a scalar, the batch mean).

    ``model(sentences, conditions, project=True)`` must return ``(h, g(h))`` (``ConditionalEncoder``). The first
    and second sentences go through the model in one call; BCL's positive is a second call on the first
    sentences (a new dropout mask, SimCSE style), made only when BCL is active.
    """
    s1, s2, conditions, labels = _batch_rows(quadruples)
    n = len(s1)
    project = objective.needs_projection()
    out = model(s1 + s2, conditions + conditions, project=project)
    h, z = out if project else (out, None)
    labels = labels.to(h.device, h.dtype)
    cos = F.cosine_similarity(h[:n], h[n:], dim=-1)  # Eq. 2 for every row
    b = len(quadruples)
    cos_pos, cos_neg, label_pos, label_neg = cos[:b], cos[b:], labels[:b], labels[b:]
    weights = objective.weights
    terms: dict[str, Tensor] = {}
    if weights.get("quad", 0):
        terms["quad"] = conditional_losses.quad_loss(cos_pos, cos_neg, margin=objective.margin)  # Eq. 1 / 4
    if weights.get("mse", 0):
        terms["mse"] = losses.mse_loss(cos, labels)  # l_MSE
    if weights.get("w_acl", 0):
        terms["w_acl"] = conditional_losses.w_acl(cos_pos, cos_neg, label_pos, label_neg)  # Eq. 9
    if weights.get("bcl", 0):
        _, z_view = model(s1, conditions, project=True)  # f'(s1, c): another dropout mask
        terms["bcl"] = conditional_losses.bcl(
            z[:n], z_view, z[n:], labels, objective.sigma, objective.bcl_temperature
        )  # Eq. 10-12
    if weights.get("c_mse", 0):
        if objective.c_mse_target == "projected":
            projected = F.cosine_similarity(z[:n], z[n:], dim=-1)
            terms["c_mse"] = c_mse("projected", projected_cos=projected, labels=labels)
        else:
            terms["c_mse"] = c_mse("gap", cos_pos=cos_pos, cos_neg=cos_neg, label_pos=label_pos, label_neg=label_neg)
    return terms


def total(terms: Mapping[str, Tensor], objective: Objective) -> Tensor:
    """``sum_t weight_t * term_t`` (Eq. 3 for CCL)."""
    return sum(objective.weights[name] * value for name, value in terms.items())


def terms_text(terms: Mapping[str, Tensor], objective: Objective) -> str:
    """ "W-ACL 0.0712 + BCL 0.6931 + MSE 0.0901 + C-MSE 0.1034 = 0.9578": each weighted term of one batch (Eq. 3 for
    CCL, a weight other than 1 written before its term) and their sum, the loss ``total`` returns."""
    parts = []
    for name in sorted(terms, key=lambda t: (CCL_TERMS + TERMS).index(t)):  # Eq. 3's order, then QuMSE's terms
        weight = objective.weights[name]
        parts.append(f"{'' if weight == 1 else f'{weight:g} x '}{TERM_LABELS[name]} {float(terms[name].detach()):.4f}")
    return " + ".join(parts) + f" = {float(total(terms, objective).detach()):.4f}"


def loss_function(objective: Objective):
    """``loss_fn(model, quadruples) -> scalar`` for ``stsnb.training.train.fit``."""

    def loss_fn(model, batch: Sequence[Quadruple]) -> Tensor:
        return total(batch_terms(model, batch, objective), objective)

    return loss_fn


def untested_hypotheses(objective: Objective) -> str:
    """The explanations a small cpu run suggests but never tests, for the notebook's takeaway (a hypothesis says so).

    The last one depends on how Eq. 10's tau is read: as a divisor, Table 2's tau of 3-10 keeps BCL's logits within
    ``+-1/tau``, so sigma (which only reweights BCL's same-pair negatives) can hardly move anything.
    """
    bound = 1.0 / objective.bcl_temperature
    text = (
        "differences too small to resolve at this scale may grow with the paper's 5-10 epochs over all 5,671 training "
        "pairs; the original C-STS labels might show the paper's over-estimation counts (Appendix A), which ours "
        "cannot whatever the labels, for here the cosines barely separate a pair's two conditions (Section 5 "
        "measures it); at "
        rf"$\tau$ = {objective.temperature:g} read as a {objective.temperature_reading} (Eq. 10) BCL's logits lie "
        rf"within $\pm${bound:.2f}"
    )
    if bound < 1:
        text += (
            r", so $\sigma$, which only reweights BCL's same-pair negatives, may matter little for that reason rather "
            "than because CCL is robust to it (Section 3's probe measures that negative's share at the start; "
            '`temperature_reading = "multiplier"` tests the effect)'
        )
    return text + "."
