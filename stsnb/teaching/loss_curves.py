"""Loss values and autograd gradients along one knob, and their plots (notebook 01_loss_functions).

Each ``*_fn`` builds a scalar function of one scalar knob (a residual, a cosine, a logit) that calls the real
``stsnb.training.losses`` function on tensors arranged so the knob is exactly that quantity; ``evaluate`` runs it over a
grid and differentiates it with autograd, point by point. Analytic derivatives stay in the notebook, beside the
equation they come from, so the check is independent of this module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from ..training import conditional_losses, losses
from . import plots

ScalarFn = Callable[[Tensor], Tensor]
DTYPE = torch.float64


@dataclass(frozen=True)
class Curve:
    """A loss along one knob: grid ``x``, loss ``value`` and autograd ``grad`` (d loss / d x) at each point."""

    label: str
    x: np.ndarray
    value: np.ndarray
    grad: np.ndarray


def evaluate(fn: ScalarFn, xs: Sequence[float] | np.ndarray, label: str = "") -> Curve:
    """``fn`` at every grid point (float64) and its derivative by autograd.

    Runs on one intra-op thread: the tensors are tiny, and on a busy 2-core machine thread hand-offs made each
    point ~20x slower.
    """
    values, grads = [], []
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for x in np.asarray(xs, dtype=float):
            knob = torch.tensor(x, dtype=DTYPE, requires_grad=True)
            loss = fn(knob)
            (grad,) = torch.autograd.grad(loss, knob)
            values.append(loss.item())
            grads.append(grad.item())
    finally:
        torch.set_num_threads(threads)
    return Curve(label, np.asarray(xs, dtype=float), np.array(values), np.array(grads))


def max_abs_diff(a: np.ndarray, b: np.ndarray) -> float:
    """Largest absolute difference (the gradient checks of the notebook)."""
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))))


def unit_vectors_with_cosines(cosines: Tensor, dim: int, first_axis: int = 1) -> Tensor:
    """Rows ``v_k = c_k e_0 + sqrt(1 - c_k^2) e_{first_axis + k}``: ``cos(e_0, v_k) = c_k`` exactly, differentiably.

    Rows use distinct orthogonal directions, so their cosines with each other are ``c_k c_l``; needs ``|c_k| < 1``.
    """
    basis = torch.eye(dim, dtype=cosines.dtype)
    sines = torch.sqrt(1 - cosines**2)
    return cosines[:, None] * basis[0] + sines[:, None] * basis[first_axis : first_axis + len(cosines)]


def _e0(dim: int) -> Tensor:
    e0 = torch.zeros(1, dim, dtype=DTYPE)
    e0[0, 0] = 1.0
    return e0


def _constants(values: Sequence[float]) -> Tensor:
    return torch.tensor(list(values), dtype=DTYPE)


# ---- scenarios: one knob each -------------------------------------------------------------------------------


def regression_fn(loss: Callable[..., Tensor], target: float = 0.0, **hyper: float) -> ScalarFn:
    """``residual -> loss(pred = target + residual, target, **hyper)`` for the score losses (L1, MSE, TReLU, SK2)."""
    gold = torch.tensor([target], dtype=DTYPE)
    return lambda residual: loss((gold + residual).reshape(1), gold, **hyper)


def clamped_regression_fn(
    loss: Callable[..., Tensor], target: float, low: float | None, high: float | None, **hyper: float
) -> ScalarFn:
    """``prediction -> loss(clamp_to_label_range(prediction, low, high), target)`` (STS-Regression Section 3.3)."""
    gold = torch.tensor([target], dtype=DTYPE)
    return lambda pred: loss(losses.clamp_to_label_range(pred.reshape(1), low, high), gold, **hyper)


def cross_entropy_fn(other_logits: Sequence[float] = (0.0, 0.0), label: int = 0) -> ScalarFn:
    """``z -> softmax_cross_entropy([z at position label, other_logits elsewhere], label)``."""
    others = _constants(other_logits)

    def fn(z: Tensor) -> Tensor:
        row = torch.cat([others[:label], z.reshape(1), others[label:]])
        return losses.softmax_cross_entropy(row[None, :], torch.tensor([label]))

    return fn


def info_nce_fn(negative_cosines: Sequence[float], temperature: float) -> ScalarFn:
    """``s -> info_nce`` of anchor 0 whose positive has cosine ``s`` and whose in-batch negatives (the other rows'
    positives) have the given cosines with it (hard negatives of Eq. 8 would only add columns of the same kind)."""
    negatives = _constants(negative_cosines)
    n = len(negatives) + 1
    dim = n + 3
    other_anchors = torch.eye(dim, dtype=DTYPE)[-(n - 1) :] if n > 1 else torch.zeros(0, dim, dtype=DTYPE)

    def fn(s: Tensor) -> Tensor:
        positives = unit_vectors_with_cosines(torch.cat([s.reshape(1), negatives]), dim)
        anchors = torch.cat([_e0(dim), other_anchors])  # only row 0's loss is read
        return losses.info_nce(anchors, positives, temperature=temperature, reduction="none")[0]

    return fn


def pearson_fn(x_rest: Sequence[float], y: Sequence[float], official_code_bias: bool = False) -> ScalarFn:
    """``x_0 -> pearson_loss([x_0, *x_rest], y)``: how one pair's cosine moves the batch's ``1 - r``."""
    rest, gold = _constants(x_rest), _constants(y)
    return lambda x0: losses.pearson_loss(torch.cat([x0.reshape(1), rest]), gold, official_code_bias=official_code_bias)


def quad_fn(cos_neg: float, margin: float) -> ScalarFn:
    """``cos_pos -> quad_loss(cos_pos, cos_neg, margin)``."""
    neg = torch.tensor([cos_neg], dtype=DTYPE)
    return lambda cos_pos: conditional_losses.quad_loss(cos_pos.reshape(1), neg, margin)


def w_acl_fn(cos_neg: float, label_pos: float, label_neg: float) -> ScalarFn:
    """``cos_pos -> w_acl(cos_pos, cos_neg, label_pos, label_neg)``."""
    neg, lp, ln = (torch.tensor([v], dtype=DTYPE) for v in (cos_neg, label_pos, label_neg))
    return lambda cos_pos: conditional_losses.w_acl(cos_pos.reshape(1), neg, lp, ln)


def bcl_fn(
    knob: str,
    label: float,
    sigma: float,
    temperature: float,
    positive_cosine: float = 0.8,
    same_pair_cosine: float = 0.5,
    other_cosines: Sequence[float] = (0.1, 0.1, 0.1),
) -> ScalarFn:
    """BCL (CCL Eq. 12) of anchor 0 as a function of ``knob``: ``"positive"`` (its dropout-view cosine) or
    ``"same_pair"`` (its cosine with ``s2`` of the same row, the i = j candidate of Eq. 11, with gold ``label``).
    The other rows' ``s2`` have ``other_cosines`` with the anchor and labels 0 (their own weights do not matter
    for row 0)."""
    if knob not in ("positive", "same_pair"):
        raise ValueError(f"knob must be 'positive' or 'same_pair', got {knob!r}")
    others = _constants(other_cosines)
    n = len(others) + 1
    dim = 2 * n + 3
    labels = torch.tensor([label] + [0.0] * (n - 1), dtype=DTYPE)
    filler = torch.eye(dim, dtype=DTYPE)[-(n - 1) :] if n > 1 else torch.zeros(0, dim, dtype=DTYPE)

    def fn(x: Tensor) -> Tensor:
        pos = x if knob == "positive" else torch.tensor(positive_cosine, dtype=DTYPE)
        same = x if knob == "same_pair" else torch.tensor(same_pair_cosine, dtype=DTYPE)
        negatives = unit_vectors_with_cosines(torch.cat([same.reshape(1), others]), dim)
        positive = unit_vectors_with_cosines(pos.reshape(1), dim, first_axis=n + 1)
        anchors = torch.cat([_e0(dim), filler])
        positives = torch.cat([positive, filler])
        return conditional_losses.bcl(anchors, positives, negatives, labels, sigma, temperature, reduction="none")[0]

    return fn


# ---- HiCL: what each segment contrasts with, and summation vs averaging --------------------------------------


def hicl_participation(sequence_ids: Sequence[int], negative_weighting: str = "summation", seed: int = 0):
    """Matrix ``M[a, b]``: +1 if segment ``b``'s positive view is segment ``a``'s positive, -1 if it is one of
    ``a``'s negatives, 0 if ``a``'s loss ignores it — read off the gradients of the real ``hicl_local_loss``."""
    ids = torch.tensor(list(sequence_ids))
    generator = torch.Generator().manual_seed(seed)
    segments = torch.randn(len(ids), 8, dtype=DTYPE, generator=generator)
    positives = torch.randn(len(ids), 8, dtype=DTYPE, generator=generator, requires_grad=True)
    per_segment = losses.hicl_local_loss(segments, positives, ids, 0.05, negative_weighting, reduction="none")
    matrix = np.zeros((len(ids), len(ids)))
    for a in range(len(ids)):
        (grad,) = torch.autograd.grad(per_segment[a], positives, retain_graph=True)
        touched = grad.norm(dim=1).numpy() > 0
        matrix[a, touched] = -1.0
        matrix[a, a] = 1.0
    return matrix


def hicl_negative_count_curve(
    segments_per_sequence: Sequence[int],
    negative_sequences: int,
    positive_cosine: float,
    negative_cosine: float,
    temperature: float,
    negative_weighting: str,
) -> np.ndarray:
    """Local loss of one single-segment anchor sequence against ``negative_sequences`` other sequences of ``v``
    segments each (every negative at ``negative_cosine``), for each ``v``: summation grows with ``v``,
    averaging (HiCL Appendix A.8) does not."""
    values = []
    for v in segments_per_sequence:
        m = 1 + negative_sequences * v
        dim = m + 2
        ids = torch.tensor([0] + [1 + k // v for k in range(m - 1)])
        cosines = torch.tensor([positive_cosine] + [negative_cosine] * (m - 1), dtype=DTYPE)
        positives = unit_vectors_with_cosines(cosines, dim)
        anchors = torch.cat([_e0(dim), torch.eye(dim, dtype=DTYPE)[-(m - 1) :]])
        loss = losses.hicl_local_loss(anchors, positives, ids, temperature, negative_weighting, reduction="none")
        values.append(loss[0].item())
    return np.array(values)


# ---- plotting -----------------------------------------------------------------------------------------------


def plot_curves(
    ax_value,
    ax_grad,
    curves: Sequence[Curve],
    knob: str,
    analytic: Mapping[str, np.ndarray] | None = None,
    title: str = "",
    pull_bounds: Mapping[str, float] | None = None,
    legend: str = "inside",
) -> None:
    """Values on ``ax_value``, autograd gradients on ``ax_grad`` (solid), analytic derivatives dashed on top.

    ``pull_bounds`` (for a loss whose gradient along ``knob`` is negative everywhere, such as InfoNCE's and BCL's on
    the positive cosine): ``ax_grad`` shows the pull ``-d loss / d knob`` on a log axis instead (``plot_pull``), with
    each curve's bound (its label -> value, e.g. 1/tau) dotted in the curve's colour. ``legend``: ``"inside"`` (a
    legend in each panel) or ``"outside"`` (one legend beside ``ax_grad``, the curves having one colour in both
    panels; always so with ``pull_bounds``)."""
    if legend not in ("inside", "outside"):
        raise ValueError(f"legend must be 'inside' or 'outside', got {legend!r}")
    for curve in curves:
        ax_value.plot(curve.x, curve.value, label=curve.label)
    ax_value.set(xlabel=knob, ylabel="loss", title=title)
    if pull_bounds is not None:
        plot_pull(ax_grad, curves, knob, pull_bounds, analytic, title)
        return
    for curve, line in zip(curves, ax_value.get_lines(), strict=True):
        ax_grad.plot(curve.x, curve.grad, color=line.get_color(), label=curve.label)
        if analytic and curve.label in analytic:
            ax_grad.plot(curve.x, analytic[curve.label], "k--", linewidth=0.8)
    if analytic:
        ax_grad.plot([], [], "k--", linewidth=0.8, label="analytic")
    ax_grad.set(xlabel=knob, ylabel=f"d loss / d {knob}", title=title)
    if not any(curve.label for curve in curves):
        return
    if legend == "outside":
        plots.legend_outside(ax_grad)
        return
    for ax in (ax_value, ax_grad):
        ax.legend()  # at the stsnb style's 9 pt


PULL_FLOOR = 1e-6  # the pull panel's lowest value: below it the gradient has vanished for any training purpose


def plot_pull(
    ax,
    curves: Sequence[Curve],
    knob: str,
    bounds: Mapping[str, float],
    analytic: Mapping[str, np.ndarray] | None = None,
    title: str = "",
    bound_label: str = r"$1/\tau$: the plateau ($p \to 0$)",
) -> None:
    """The pull ``-d loss / d knob`` of each curve on a log axis, the analytic derivative
    dashed on top, and each curve's ``bounds[label]`` as a dotted line in its colour, named ``bound_label`` in the
    legend (beside the panel). For InfoNCE-like losses (Pcc-tuning Eq. 8, CCL Eq. 12-13) the pull is
    ``(1 - p)/tau`` with ``p`` the positive's softmax share: flat at ``1/tau`` while the negatives outweigh the
    positive (``p`` near 0), then falling exponentially, a straight line on this axis, once the positive wins.
    The axis starts at a third of the smallest positive pull, and no lower than ``PULL_FLOOR``."""
    pulls = [-curve.grad for curve in curves]
    if any(np.any(pull < 0) for pull in pulls):
        raise ValueError("plot_pull needs a gradient that is negative (or zero) everywhere along the knob")
    for curve, pull in zip(curves, pulls, strict=True):
        (line,) = ax.plot(curve.x, pull, label=curve.label)
        if analytic and curve.label in analytic:
            ax.plot(curve.x, -np.asarray(analytic[curve.label]), "k--", linewidth=0.8)
        if curve.label in bounds:
            ax.axhline(bounds[curve.label], color=line.get_color(), linestyle=":", linewidth=1.2)
    if analytic:
        ax.plot([], [], "k--", linewidth=0.8, label="analytic")
    if bounds:
        ax.plot([], [], color="grey", linestyle=":", linewidth=1.2, label=bound_label)
    ax.set_yscale("log")
    top = max([float(np.max(p)) for p in pulls] + [float(v) for v in bounds.values()])
    bottom = min((float(np.min(p[p > 0])) for p in pulls if np.any(p > 0)), default=PULL_FLOOR) / 3
    ax.set_ylim(max(PULL_FLOOR, bottom), 3 * top)
    ax.set(xlabel=knob, ylabel=f"pull $-$d loss / d {knob}", title=title)
    plots.legend_outside(ax)


def _bcl_exponentials(
    positive: np.ndarray | float,
    same: np.ndarray | float,
    label: float,
    sigma: float,
    tau: float,
    other_cosines: Sequence[float],
) -> tuple:
    """The terms of Eq. 12's denominator for anchor 0: the positive's exponential, the same-pair negative's with
    its Eq. 11 weight (``1 - l`` below ``sigma``, else 0) and the sum over every negative."""
    alpha_same = 0.0 if label >= sigma else 1.0 - label
    e_same = alpha_same * np.exp(np.asarray(same) / tau)
    return np.exp(np.asarray(positive) / tau), e_same, e_same + sum(np.exp(c / tau) for c in other_cosines)


def bcl_gradient_curves(
    knob: str,
    grid: np.ndarray,
    values: Sequence[float],
    sigma: float,
    temperature: float,
    *,
    label: float = 0.2,
    positive_cosine: float = 0.8,
    same_pair_cosine: float = 0.5,
    other_cosines: Sequence[float] = (0.1, 0.1, 0.1),
) -> tuple[list[Curve], dict[str, np.ndarray]]:
    """BCL (CCL Eq. 12) of anchor 0 along ``knob`` with autograd, beside the paper's analytic gradient.

    ``knob="same_pair"``: one curve per gold label in ``values`` (at ``temperature``), against Eq. 14
    (d l / d cos_ii = alpha e^{cos_ii / tau} / (tau D)); ``knob="positive"``: one curve per temperature in
    ``values`` (at ``label``), against Eq. 13 (d l / d cos+_ii = -sum_j alpha e^{cos_ij / tau} / (tau D))."""
    curves, analytic = [], {}
    for value in values:
        if knob == "same_pair":
            tau, gold = temperature, value
            fn = bcl_fn(knob, gold, sigma, tau, positive_cosine, other_cosines=other_cosines)
            dropped = r" ($\geq \sigma$: $\alpha_{ii}$ = 0)" if gold >= sigma else ""  # Eq. 11
            curve = evaluate(fn, grid, f"$l$ = {gold:g}{dropped}")
            e_pos, e_same, e_neg = _bcl_exponentials(positive_cosine, curve.x, gold, sigma, tau, other_cosines)
            analytic[curve.label] = e_same / (e_pos + e_neg) / tau  # Eq. 14
        elif knob == "positive":
            tau, gold = value, label
            fn = bcl_fn(knob, gold, sigma, tau, same_pair_cosine=same_pair_cosine, other_cosines=other_cosines)
            curve = evaluate(fn, grid, f"$\\tau$ = {tau:g}")
            e_pos, _, e_neg = _bcl_exponentials(curve.x, same_pair_cosine, gold, sigma, tau, other_cosines)
            analytic[curve.label] = -e_neg / (e_pos + e_neg) / tau  # Eq. 13
        else:
            raise ValueError(f"knob must be 'positive' or 'same_pair', got {knob!r}")
        curves.append(curve)
    return curves, analytic


def bcl_eq15_ratio(
    sigma: float,
    temperature: float,
    *,
    label: float = 0.2,
    positive_cosine: float = 0.8,
    same_pair_cosine: float = 0.5,
    other_cosines: Sequence[float] = (0.1, 0.1, 0.1),
) -> tuple[float, float]:
    """CCL Eq. 15 by autograd: ``(sum_j |d l / d cos_ij| / |d l / d cos+_ii|, l)`` for anchor 0 of a batch whose
    cosines are set exactly (``unit_vectors_with_cosines``); Eq. 15 says the ratio is 1 whatever the weights."""
    c_pos = torch.tensor(positive_cosine, dtype=DTYPE, requires_grad=True)
    c_same = torch.tensor(same_pair_cosine, dtype=DTYPE, requires_grad=True)
    c_others = torch.tensor(tuple(other_cosines), dtype=DTYPE, requires_grad=True)
    n = len(other_cosines) + 1
    dim = 4 * n
    negatives = unit_vectors_with_cosines(torch.cat([c_same.reshape(1), c_others]), dim)
    positive = unit_vectors_with_cosines(c_pos.reshape(1), dim, first_axis=2 * n)
    fill = torch.eye(dim, dtype=DTYPE)[-(n - 1) :]
    labels = torch.tensor([label] + [0.0] * (n - 1), dtype=DTYPE)
    value = conditional_losses.bcl(
        torch.cat([_e0(dim), fill]), torch.cat([positive, fill]), negatives, labels, sigma, temperature, "none"
    )[0]
    g_pos, g_same, g_others = torch.autograd.grad(value, (c_pos, c_same, c_others))
    return ((g_same.abs() + g_others.abs().sum()) / g_pos.abs()).item(), value.item()
