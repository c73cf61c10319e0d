"""stsnb.training.losses against plain transcriptions of the papers' equations (numpy / loops, float64), plus edge
cases.

Every reference below is written from the equation, not by calling the function under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from stsnb.training import conditional_losses as CL
from stsnb.training import losses as L

RTOL, ATOL = 1e-6, 1e-9


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


def t(values) -> torch.Tensor:
    return torch.tensor(np.asarray(values), dtype=torch.float64)


def cos_np(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def reduce_np(values: np.ndarray, reduction: str):
    return {"mean": values.mean(), "sum": values.sum(), "none": values}[reduction]


# ---- STS-Regression Eq. 1 and Eq. 2 -------------------------------------------------------------------------


def translated_relu_np(pred, target, k, x0):
    out = []
    for p, y in zip(pred, target, strict=True):
        x = abs(p - y)
        out.append(0.0 if x < x0 else k * (x - x0))  # Eq. 1 case split
    return np.array(out)


def smooth_k2_np(pred, target, k, x0):
    out = []
    for p, y in zip(pred, target, strict=True):
        x = abs(p - y)
        out.append(0.0 if x < x0 else k * (x**2 - 2 * x0 * x + x0**2))  # Eq. 2, the expanded form
    return np.array(out)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("k, x0", [(2.0, 0.25), (2.5, 0.25), (1.0, 0.0), (3.0, 0.5)])
def test_regression_losses_match_equations(rng, reduction, k, x0):
    pred = rng.uniform(-0.5, 2.5, size=64)
    target = rng.integers(0, 3, size=64).astype(float)  # NLI labels 0/1/2
    got_t = L.translated_relu(t(pred), torch.tensor(target.astype(int)), k, x0, reduction=reduction)
    got_s = L.smooth_k2(t(pred), t(target), k, x0, reduction=reduction)
    np.testing.assert_allclose(got_t.numpy(), reduce_np(translated_relu_np(pred, target, k, x0), reduction), RTOL)
    np.testing.assert_allclose(got_s.numpy(), reduce_np(smooth_k2_np(pred, target, k, x0), reduction), RTOL)


def test_l1_and_mse_are_the_zero_buffer_unit_slope_cases(rng):
    pred, target = t(rng.normal(size=32)), t(rng.normal(size=32))
    diff = pred.numpy() - target.numpy()
    np.testing.assert_allclose(L.l1_loss(pred, target, "none").numpy(), np.abs(diff), RTOL)
    np.testing.assert_allclose(L.mse_loss(pred, target, "none").numpy(), diff**2, RTOL)
    torch.testing.assert_close(L.translated_relu(pred, target, 1.0, 0.0), L.l1_loss(pred, target))
    torch.testing.assert_close(L.smooth_k2(pred, target, 1.0, 0.0), L.mse_loss(pred, target))


def test_value_exactly_at_x0_is_zero_and_gradients_there():
    # 1.25 - 1.0 = 0.25 exactly in binary floating point, for both signs of the residual
    pred = torch.tensor([1.25, 0.75], dtype=torch.float32, requires_grad=True)
    target = torch.tensor([1.0, 1.0])
    trelu = L.translated_relu(pred, target, k=2.0, x0=0.25, reduction="none")
    assert trelu.tolist() == [0.0, 0.0]
    (grad,) = torch.autograd.grad(trelu.sum(), pred)
    assert grad.tolist() == [2.0, -2.0]  # the x0 <= x branch of Eq. 1: slope ±k (documented)
    sk2 = L.smooth_k2(pred, target, k=2.0, x0=0.25, reduction="none")
    assert sk2.tolist() == [0.0, 0.0]
    (grad,) = torch.autograd.grad(sk2.sum(), pred)
    assert grad.tolist() == [0.0, 0.0]  # Eq. 2's derivative 2k(x - x0) vanishes at x0


def test_smooth_k2_gradient_is_the_papers_derivative(rng):
    k, x0 = 3.0, 0.25
    pred = t(rng.uniform(-1, 3, size=200)).requires_grad_()
    target = t(rng.integers(0, 3, size=200))
    (grad,) = torch.autograd.grad(L.smooth_k2(pred, target, k, x0, reduction="sum"), pred)
    residual = pred.detach().numpy() - target.numpy()
    x = np.abs(residual)
    dfdx = np.where(x >= x0, 2 * k * (x - x0), 0.0)  # Eq. 2: df/dx = 2k(x - x0) for x >= x0, else 0
    np.testing.assert_allclose(grad.numpy(), dfdx * np.sign(residual), rtol=1e-12, atol=1e-12)  # dx/dpred = sign


def test_translated_relu_gradient_is_plus_minus_k_beyond_x0_and_zero_inside(rng):
    k, x0 = 2.5, 0.25
    pred = t(rng.uniform(-1, 3, size=200)).requires_grad_()
    target = t(rng.integers(0, 3, size=200))
    (grad,) = torch.autograd.grad(L.translated_relu(pred, target, k, x0, reduction="sum"), pred)
    residual = pred.detach().numpy() - target.numpy()
    outside = np.abs(residual) > x0
    assert outside.any() and (~outside).any()
    np.testing.assert_array_equal(grad.numpy()[outside], k * np.sign(residual[outside]))
    np.testing.assert_array_equal(grad.numpy()[~outside], 0.0)


def test_reduction_none_keeps_the_input_shape():
    pred, target = torch.rand(4, 3), torch.rand(4, 3)
    for fn in (L.l1_loss, L.mse_loss):
        assert fn(pred, target, "none").shape == (4, 3)
    for fn in (L.translated_relu, L.smooth_k2):
        assert fn(pred, target, 2.0, 0.25, "none").shape == (4, 3)
        assert fn(pred, target, 2.0, 0.25).shape == ()


def test_regression_rejects_bad_shapes_and_hyperparameters():
    with pytest.raises(ValueError, match="pred and target must have the same shape"):
        L.smooth_k2(torch.rand(8, 1), torch.rand(8), 2.0, 0.25)  # would broadcast to (8, 8)
    with pytest.raises(ValueError, match="k must be"):
        L.translated_relu(torch.rand(3), torch.rand(3), k=0.0, x0=0.25)
    with pytest.raises(ValueError, match="k must be"):
        L.smooth_k2(torch.rand(3), torch.rand(3), k=float("nan"), x0=0.25)
    with pytest.raises(ValueError, match="x0 must be"):
        L.smooth_k2(torch.rand(3), torch.rand(3), k=2.0, x0=-0.1)
    with pytest.raises(ValueError, match="reduction must be one of"):
        L.mse_loss(torch.rand(3), torch.rand(3), reduction="avg")
    with pytest.raises(ValueError, match="empty"):
        L.l1_loss(torch.rand(0), torch.rand(0))
    with pytest.raises(ValueError, match="floating-point"):
        L.l1_loss(torch.tensor([1, 2]), torch.tensor([1, 2]))


def test_clamp_to_label_range_matches_the_official_lower_clamp():
    pred = torch.tensor([-0.7, 0.0, 0.4, 2.6], requires_grad=True)
    code = pred * (pred >= 0)  # train-*.py: prediction * (prediction >= 0)
    ours = L.clamp_to_label_range(pred, low=0.0)
    assert torch.equal(ours, code)
    g_code = torch.autograd.grad(code.sum(), pred)[0]
    g_ours = torch.autograd.grad(ours.sum(), pred)[0]
    assert torch.equal(g_code, g_ours)
    both = L.clamp_to_label_range(pred, low=0.0, high=2.0)
    assert both.tolist() == pytest.approx([0.0, 0.0, 0.4, 2.0])
    assert L.smooth_k2(both, torch.tensor([0.0, 0.0, 0.0, 2.0]), 2.0, 0.25, "none")[-1] == 0  # Section 3.3 example
    assert L.clamp_to_label_range(pred) is pred  # no bounds: unchanged
    with pytest.raises(ValueError, match="low must not exceed high"):
        L.clamp_to_label_range(pred, low=2.0, high=0.0)


# ---- Sentence-BERT softmax cross-entropy -------------------------------------------------------------------


def test_softmax_cross_entropy_matches_log_softmax_and_its_gradient(rng):
    logits = t(rng.normal(size=(16, 3))).requires_grad_()
    labels = rng.integers(0, 3, size=16)
    got = L.softmax_cross_entropy(logits, torch.tensor(labels), reduction="none")
    z = logits.detach().numpy()
    expected = [-(z[i, labels[i]] - math.log(sum(math.exp(v) for v in z[i]))) for i in range(16)]
    np.testing.assert_allclose(got.detach().numpy(), expected, RTOL)
    (grad,) = torch.autograd.grad(got.sum(), logits)
    p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    np.testing.assert_allclose(grad.numpy(), p - np.eye(3)[labels], rtol=1e-10, atol=1e-12)  # softmax - one-hot


def test_softmax_cross_entropy_rejects_bad_labels():
    logits = torch.randn(4, 3)
    with pytest.raises(ValueError, match="labels must lie in"):
        L.softmax_cross_entropy(logits, torch.tensor([0, 1, 2, 3]))
    with pytest.raises(ValueError, match="integer class ids"):
        L.softmax_cross_entropy(logits, torch.tensor([0.0, 1.0, 2.0, 1.0]))
    with pytest.raises(ValueError, match="one entry per row"):
        L.softmax_cross_entropy(logits, torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="2-D"):
        L.softmax_cross_entropy(torch.randn(3), torch.tensor([0, 1, 2]))


# ---- Pcc-tuning Eq. 1, Eq. 8, Eq. 9 ------------------------------------------------------------------------


def info_nce_np(anchor, positive, hard, tau):
    n = len(anchor)
    out = []
    for i in range(n):
        numerator = math.exp(cos_np(anchor[i], positive[i]) / tau)
        denominator = 0.0
        for j in range(n):  # Eq. 8: sum_j (e^{cos(x_i, x_j^+)/tau} + e^{cos(x_i, x_j^-)/tau})
            denominator += math.exp(cos_np(anchor[i], positive[j]) / tau)
            if hard is not None:
                denominator += math.exp(cos_np(anchor[i], hard[j]) / tau)
        out.append(-math.log(numerator / denominator))
    return np.array(out)


@pytest.mark.parametrize("with_hard", [False, True])
@pytest.mark.parametrize("tau", [0.05, 0.5, 1.0])
def test_info_nce_matches_eq1_and_eq8(rng, with_hard, tau):
    a, p, h = (rng.normal(size=(6, 5)) for _ in range(3))
    hard = h if with_hard else None
    got = L.info_nce(t(a), t(p), t(h) if with_hard else None, temperature=tau, reduction="none")
    expected = info_nce_np(a, p, hard, tau)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-9)
    assert L.info_nce(t(a), t(p), t(h) if with_hard else None, tau).item() == pytest.approx(expected.mean(), 1e-9)


def test_info_nce_is_scale_invariant_and_validates(rng):
    a, p = t(rng.normal(size=(4, 3))), t(rng.normal(size=(4, 3)))
    torch.testing.assert_close(L.info_nce(a, p), L.info_nce(3 * a, 0.1 * p))  # cosine inside
    with pytest.raises(ValueError, match="at least one negative"):
        L.info_nce(a[:1], p[:1])
    one = L.info_nce(a[:1], p[:1], hard_negative=a[1:2], temperature=0.1)  # N = 1 with a hard negative is fine
    s, c = cos_np(a[0].numpy(), p[0].numpy()), cos_np(a[0].numpy(), a[1].numpy())
    assert one.item() == pytest.approx(math.log1p(math.exp((c - s) / 0.1)), 1e-9)
    with pytest.raises(ValueError, match="temperature must be"):
        L.info_nce(a, p, temperature=0.0)
    with pytest.raises(ValueError, match="anchor and positive must have the same shape"):
        L.info_nce(a, p[:3])
    with pytest.raises(ValueError, match="anchor and hard_negative"):
        L.info_nce(a, p, hard_negative=p[:, :2])
    with pytest.raises(ValueError, match="2-D"):
        L.info_nce(a[0], p[0])


def pearson_np(x, y):
    n = len(x)
    mx, my = sum(x) / n, sum(y) / n
    cov = sum((xi - mx) * (yi - my) for xi, yi in zip(x, y, strict=True)) / n
    sx = math.sqrt(sum((xi - mx) ** 2 for xi in x) / n)
    sy = math.sqrt(sum((yi - my) ** 2 for yi in y) / n)
    return cov / (sx * sy)  # Eq. 9


def test_pearson_loss_matches_eq9_and_the_official_variant(rng):
    x, y = rng.uniform(-1, 1, size=50), rng.uniform(0, 5, size=50)
    assert L.pearson_loss(t(x), t(y)).item() == pytest.approx(1 - pearson_np(x, y), rel=1e-12)
    # ZBWpro/Pcc-tuning tune.py: mean((x - x̄)(y - ȳ)) / (sqrt(var_unbiased x) sqrt(var_unbiased y))
    code_r = np.mean((x - x.mean()) * (y - y.mean())) / (np.sqrt(np.var(x, ddof=1)) * np.sqrt(np.var(y, ddof=1)))
    got = L.pearson_loss(t(x), t(y), official_code_bias=True)
    assert got.item() == pytest.approx(1 - code_r, rel=1e-12)


def test_pearson_loss_is_affine_invariant_and_bounded(rng):
    x, y = t(rng.normal(size=20)), t(rng.normal(size=20))
    torch.testing.assert_close(L.pearson_loss(x, y), L.pearson_loss(4.0 * x - 2.0, 0.5 * y + 1.0))
    assert L.pearson_loss(x, 2 * x + 1).item() == pytest.approx(0.0, abs=1e-12)
    assert L.pearson_loss(x, -x).item() == pytest.approx(2.0, abs=1e-12)
    pair = L.pearson_loss(t([0.1, 0.9]), t([1.0, 4.0]))  # N = 2: r = ±1 always
    assert pair.item() == pytest.approx(0.0, abs=1e-12)


def test_pearson_loss_gradient_matches_the_closed_form(rng):
    x, y = rng.normal(size=12), rng.normal(size=12)
    xt = t(x).requires_grad_()
    (grad,) = torch.autograd.grad(L.pearson_loss(xt, t(y)), xt)
    a, b = x - x.mean(), y - y.mean()
    r = (a @ b) / (np.linalg.norm(a) * np.linalg.norm(b))
    dr = b / (np.linalg.norm(a) * np.linalg.norm(b)) - r * a / (a @ a)  # d r / d x_i (centring terms sum to 0)
    np.testing.assert_allclose(grad.numpy(), -dr, rtol=1e-9, atol=1e-12)


def test_pearson_loss_on_a_constant_batch_raises_naming_it():
    """Policy: r is 0/0 when the gold scores (or the cosines) are all equal; raise, never return NaN or 0."""
    x, constant = [0.1, 0.5, 0.7, 0.9], [3.0, 3.0, 3.0, 3.0]  # e.g. four pairs from one STS-B score bucket
    with pytest.raises(ZeroDivisionError):
        pearson_np(x, constant)  # Eq. 9 itself is undefined here
    cosines = t(x).requires_grad_()
    with pytest.raises(
        L.ConstantBatchError, match=r"y \(gold scores\) has zero variance: all 4 values .* equal 3"
    ) as raised:
        L.pearson_loss(cosines, t(constant))
    assert isinstance(raised.value, ValueError)  # a training loop can catch it and add its step
    assert (raised.value.argument, raised.value.n, raised.value.value) == ("y", 4, 3.0)
    assert cosines.grad is None  # no loss, no gradient
    with pytest.raises(L.ConstantBatchError, match=r"x \(predicted similarities\) has zero variance") as raised:
        L.pearson_loss(torch.full((3,), 0.25), torch.tensor([1.0, 2.0, 3.0]))  # a collapsed encoder
    assert (raised.value.argument, raised.value.n, raised.value.value) == ("x", 3, 0.25)
    almost = [3.0, 3.0, 3.0, 3.5]  # one differing score is enough: r is defined and is Eq. 9's
    assert L.pearson_loss(cosines, t(almost)).item() == pytest.approx(1 - pearson_np(x, almost), rel=1e-12)


def test_pearson_loss_edge_cases():
    x = torch.tensor([0.2, 0.4, 0.6])
    with pytest.raises(ValueError, match="at least 2"):
        L.pearson_loss(torch.tensor([0.3]), torch.tensor([2.0]))
    with pytest.raises(ValueError, match="batch statistic"):
        L.pearson_loss(x, x, reduction="none")
    with pytest.raises(ValueError, match="batch statistic"):
        L.pearson_loss(x, x, reduction="sum")
    with pytest.raises(ValueError, match="x and y must have the same shape"):
        L.pearson_loss(x, torch.rand(4))
    with pytest.raises(ValueError, match="1-D"):
        L.pearson_loss(x[:, None], x[:, None])


# ---- CCL: Quad (Eq. 1/4), W-ACL (Eq. 5-9), BCL (Eq. 10-15) ---------------------------------------------------


def test_quad_loss_matches_the_c_sts_distance_form(rng):
    cp, cn = rng.uniform(-1, 1, 40), rng.uniform(-1, 1, 40)
    for margin in (1.0, 0.3, 0.0):
        dist_pos, dist_neg = 1 - cp, 1 - cn  # c-sts QuadrupletLoss: distance = 1 - cosine
        expected = np.array([max(margin + dp - dn, 0.0) for dp, dn in zip(dist_pos, dist_neg, strict=True)])
        np.testing.assert_allclose(CL.quad_loss(t(cp), t(cn), margin, "none").numpy(), expected, atol=1e-12)
        assert CL.quad_loss(t(cp), t(cn), margin).item() == pytest.approx(expected.mean(), abs=1e-12)
    with pytest.raises(ValueError, match="margin must be"):
        CL.quad_loss(t(cp), t(cn), margin=-1.0)
    with pytest.raises(ValueError, match="cos_pos and cos_neg"):
        CL.quad_loss(t(cp), t(cn[:3]))


def test_w_acl_is_the_weighted_sum_of_fdl_and_rdl(rng):
    cp, cn = rng.uniform(-1, 1, 40), rng.uniform(-1, 1, 40)
    lp = rng.choice([0.25, 0.5, 0.75, 1.0], 40)
    ln = np.minimum(lp, rng.choice([0.0, 0.25, 0.5, 0.75], 40))
    expected = []
    for i in range(40):
        fdl = max(lp[i] - ln[i] + cn[i] - cp[i], 0.0)  # Eq. 5
        rdl = max(ln[i] - lp[i] - cn[i] + cp[i], 0.0)  # Eq. 6
        expected.append((lp[i] - ln[i]) * (fdl + rdl))  # Eq. 7 weighted as in Eq. 9
    got = CL.w_acl(t(cp), t(cn), t(lp), t(ln), reduction="none")
    np.testing.assert_allclose(got.numpy(), expected, atol=1e-12)
    assert CL.w_acl(t(cp), t(cn), t(lp), t(ln)).item() == pytest.approx(np.mean(expected), abs=1e-12)


def test_w_acl_validates_label_order_and_shapes():
    c = torch.tensor([0.5, 0.2])
    with pytest.raises(ValueError, match="label_pos must be >= label_neg"):
        CL.w_acl(c, c, torch.tensor([0.25, 0.5]), torch.tensor([0.5, 0.25]))
    with pytest.raises(ValueError, match="cos_pos and label_neg"):
        CL.w_acl(c, c, torch.tensor([0.5, 0.5]), torch.tensor([0.25]))


def alpha_np(labels, sigma):
    n = len(labels)
    alpha = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i != j:
                alpha[i, j] = 1.0
            elif labels[i] >= sigma:
                alpha[i, j] = 0.0
            else:
                alpha[i, j] = 1.0 - labels[i]  # Eq. 11
    return alpha


def test_bcl_weights_follow_eq11(rng):
    labels = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], 9)
    for sigma in (0.0, 0.25, 0.5, 0.75, 1.0):
        np.testing.assert_allclose(CL.bcl_weights(t(labels), sigma).numpy(), alpha_np(labels, sigma))
    assert torch.diagonal(CL.bcl_weights(t(labels), 0.0)).abs().sum() == 0  # sigma = 0: every i = j excluded
    with pytest.raises(ValueError, match="sigma must be"):
        CL.bcl_weights(t(labels), 1.5)
    with pytest.raises(ValueError, match=r"scaled to \[0, 1\]"):
        CL.bcl_weights(t([1.0, 3.0, 5.0]), 0.5)


@pytest.mark.parametrize("sigma, tau", [(0.5, 0.05), (0.75, 3.0), (0.0, 1.0), (1.0, 10.0)])
def test_bcl_matches_eq12_averaged(rng, sigma, tau):
    a, p, neg = (rng.normal(size=(7, 6)) for _ in range(3))
    labels = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], 7)
    alpha = alpha_np(labels, sigma)
    expected = []
    for i in range(7):
        positive = math.exp(cos_np(a[i], p[i]) / tau)
        negatives = sum(alpha[i, j] * math.exp(cos_np(a[i], neg[j]) / tau) for j in range(7))
        expected.append(-math.log(positive / (positive + negatives)))  # Eq. 12
    got = CL.bcl(t(a), t(p), t(neg), t(labels), sigma, tau, reduction="none")
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-9)
    assert CL.bcl(t(a), t(p), t(neg), t(labels), sigma, tau).item() == pytest.approx(np.mean(expected), rel=1e-9)


def unit_vectors_with_cosines(cosines: torch.Tensor, dim: int) -> torch.Tensor:
    """Rows v_k = c_k e_0 + sqrt(1 - c_k^2) e_{k+1}: cos(e_0, v_k) = c_k exactly (needs dim > len(cosines))."""
    rows = []
    for k, c in enumerate(cosines):
        row = [torch.zeros((), dtype=cosines.dtype)] * dim
        row[0], row[k + 1] = c, torch.sqrt(1 - c**2)
        rows.append(torch.stack(row))
    return torch.stack(rows)


def test_bcl_gradients_follow_eq13_to_eq15(rng):
    n, tau, sigma = 5, 0.5, 0.5
    labels = np.array([0.25, 0.75, 0.0, 1.0, 0.5])
    c_pos = t([0.6]).requires_grad_()
    c_neg = t(rng.uniform(-0.9, 0.9, n)).requires_grad_()
    dim = n + 3
    e0 = torch.zeros(1, dim, dtype=torch.float64)
    e0[0, 0] = 1.0
    positive = unit_vectors_with_cosines(c_pos, dim)[:, [0, *range(2, dim), 1]]  # its own orthogonal direction
    negatives = unit_vectors_with_cosines(c_neg, dim)
    anchors = torch.cat([e0, t(rng.normal(size=(n - 1, dim)))])  # only row 0's loss is differentiated
    positives = torch.cat([positive, t(rng.normal(size=(n - 1, dim)))])
    loss0 = CL.bcl(anchors, positives, negatives, t(labels), sigma, tau, reduction="none")[0]
    g_pos, g_neg = torch.autograd.grad(loss0, (c_pos, c_neg))
    alpha = alpha_np(labels, sigma)[0]
    e_pos, e_neg = math.exp(0.6 / tau), alpha * np.exp(c_neg.detach().numpy() / tau)
    denominator = e_pos + e_neg.sum()
    assert g_pos.item() == pytest.approx(-(1 / tau) * e_neg.sum() / denominator, rel=1e-9)  # Eq. 13
    np.testing.assert_allclose(g_neg.numpy(), (1 / tau) * e_neg / denominator, rtol=1e-9, atol=1e-15)  # Eq. 14
    assert g_neg.abs().sum().item() / g_pos.abs().item() == pytest.approx(1.0, rel=1e-9)  # Eq. 15
    assert g_neg[0].item() != 0.0  # l_0 = 0.25 < sigma: a weighted hard negative


def test_bcl_false_negative_gets_no_gradient():
    a = torch.randn(3, 4, dtype=torch.float64)
    p = torch.randn(3, 4, dtype=torch.float64)
    neg = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    loss0 = CL.bcl(a, p, neg, t([0.9, 0.1, 0.2]), sigma=0.5, temperature=1.0, reduction="none")[0]
    (grad,) = torch.autograd.grad(loss0, neg)
    assert torch.all(grad[0] == 0) and grad[1].abs().sum() > 0  # l_0 = 0.9 >= sigma: excluded (Eq. 11)


def test_bcl_validates_inputs():
    x = torch.randn(3, 4)
    with pytest.raises(ValueError, match="labels must have shape"):
        CL.bcl(x, x, x, torch.rand(2), 0.5, 1.0)
    with pytest.raises(ValueError, match="temperature must be"):
        CL.bcl(x, x, x, torch.rand(3), 0.5, -1.0)
    with pytest.raises(ValueError, match="anchor and negatives"):
        CL.bcl(x, x, x[:2], torch.rand(3), 0.5, 1.0)


# ---- HiCL Eq. 1, Eq. 2 and the overall objective -----------------------------------------------------------


def hicl_local_np(seg, seg_pos, ids, tau, averaging):
    counts = {k: int(np.sum(ids == k)) for k in set(ids.tolist())}
    out = []
    for a in range(len(seg)):
        positive = math.exp(cos_np(seg[a], seg_pos[a]) / tau)
        negatives = 0.0
        for b in range(len(seg)):
            if ids[b] == ids[a]:
                continue  # same sequence: neither positive nor negative
            w = 1.0 / counts[ids[b]] if averaging else 1.0  # Appendix A.8 "averaging" vs Eq. 2 "summation"
            negatives += w * math.exp(cos_np(seg[a], seg_pos[b]) / tau)
        out.append(-math.log(positive / (positive + negatives)))  # Eq. 2
    return np.array(out)


@pytest.mark.parametrize("averaging", [False, True])
def test_hicl_local_loss_matches_eq2(rng, averaging):
    ids = np.array([0, 0, 0, 1, 2, 2, 3])
    seg, seg_pos = rng.normal(size=(7, 5)), rng.normal(size=(7, 5))
    weighting = "averaging" if averaging else "summation"
    got = L.hicl_local_loss(t(seg), t(seg_pos), torch.tensor(ids), 0.1, weighting, reduction="none")
    assert got.shape == (7,)
    np.testing.assert_allclose(got.numpy(), hicl_local_np(seg, seg_pos, ids, 0.1, averaging), rtol=1e-9)


def test_hicl_local_loss_with_one_segment_per_sequence_is_info_nce(rng):
    seg, seg_pos = t(rng.normal(size=(5, 4))), t(rng.normal(size=(5, 4)))
    ours = L.hicl_local_loss(seg, seg_pos, torch.arange(5), temperature=0.05)
    torch.testing.assert_close(ours, L.info_nce(seg, seg_pos, temperature=0.05))


def test_hicl_loss_combines_local_and_global_eq1(rng):
    ids = np.array([0, 0, 1, 2, 2, 2])
    seg, seg_pos = rng.normal(size=(6, 4)), rng.normal(size=(6, 4))
    seq, seq_pos = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    global_expected = []
    for i in range(3):  # Eq. 1: e^{pos} + sum_{j != i} e^{sim(h_i, h_j)} with h_j from the positive view
        pos = math.exp(cos_np(seq[i], seq_pos[i]) / 0.05)
        negs = sum(math.exp(cos_np(seq[i], seq_pos[j]) / 0.05) for j in range(3) if j != i)
        global_expected.append(-math.log(pos / (pos + negs)))
    local_expected = hicl_local_np(seg, seg_pos, ids, 0.05, averaging=False).mean()
    for alpha in (0.0, 0.05, 1.0):
        got = L.hicl_loss(t(seg), t(seg_pos), torch.tensor(ids), t(seq), t(seq_pos), alpha, 0.05)
        expected = alpha * local_expected + (1 - alpha) * np.mean(global_expected)
        assert got.item() == pytest.approx(expected, rel=1e-9)


def test_hicl_validates_inputs():
    seg = torch.randn(4, 3)
    seq = torch.randn(2, 3)
    with pytest.raises(ValueError, match="at least 2 sequences"):
        L.hicl_local_loss(seg, seg, torch.zeros(4, dtype=torch.long))
    with pytest.raises(ValueError, match="sequence_ids must have shape"):
        L.hicl_local_loss(seg, seg, torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="integer tensor"):
        L.hicl_local_loss(seg, seg, torch.tensor([0.0, 0.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match="negative_weighting"):
        L.hicl_local_loss(seg, seg, torch.tensor([0, 0, 1, 1]), negative_weighting="mean")
    with pytest.raises(ValueError, match="alpha must be"):
        L.hicl_loss(seg, seg, torch.tensor([0, 0, 1, 1]), seq, seq, alpha=1.5)
    with pytest.raises(ValueError, match="every id must be < 2"):
        L.hicl_loss(seg, seg, torch.tensor([0, 0, 1, 2]), seq, seq, alpha=0.1)
    with pytest.raises(ValueError, match="reduction must be 'mean'"):
        L.hicl_loss(seg, seg, torch.tensor([0, 0, 1, 1]), seq, seq, alpha=0.1, reduction="none")


def test_every_per_example_loss_returns_one_value_per_row():
    n = 5
    emb = torch.randn(n, 4)
    cos = torch.rand(n)
    assert L.info_nce(emb, emb, reduction="none").shape == (n,)
    assert CL.quad_loss(cos, cos, reduction="none").shape == (n,)
    assert CL.w_acl(cos, cos, torch.ones(n), torch.zeros(n), reduction="none").shape == (n,)
    assert CL.bcl(emb, emb, emb, torch.rand(n), 0.5, 1.0, reduction="none").shape == (n,)
    assert L.softmax_cross_entropy(torch.randn(n, 3), torch.zeros(n, dtype=torch.long), "none").shape == (n,)


# ---- stsnb.teaching.loss_curves (the notebook's grid evaluation)
# ---------------------------------------------------------


def test_loss_curves_evaluate_values_and_gradients():
    from stsnb.teaching import loss_curves as lc

    xs = np.linspace(-1, 1, 21)
    curve = lc.evaluate(lc.regression_fn(L.smooth_k2, k=2.0, x0=0.25), xs)
    np.testing.assert_allclose(curve.value, np.where(np.abs(xs) >= 0.25, 2 * (np.abs(xs) - 0.25) ** 2, 0), atol=1e-12)
    np.testing.assert_allclose(curve.grad, np.where(np.abs(xs) >= 0.25, 4 * (np.abs(xs) - 0.25), 0) * np.sign(xs))
    cosines = t([0.3, -0.5, 0.9])
    vectors = lc.unit_vectors_with_cosines(cosines, dim=5)
    e0 = np.eye(5)[0]
    assert [cos_np(e0, v) for v in vectors.numpy()] == pytest.approx(cosines.tolist(), abs=1e-12)
    s, c, tau = 0.6, 0.3, 0.1  # anchor 0 with 3 in-batch negatives at cosine c
    value = lc.info_nce_fn([c] * 3, tau)(torch.tensor(s, dtype=torch.float64)).item()
    assert value == pytest.approx(-math.log(math.exp(s / tau) / (math.exp(s / tau) + 3 * math.exp(c / tau))))


def test_loss_curves_hicl_helpers():
    from stsnb.teaching import loss_curves as lc

    matrix = lc.hicl_participation([0, 0, 1])
    np.testing.assert_array_equal(matrix, [[1, 0, -1], [0, 1, -1], [-1, -1, 1]])
    kwargs = dict(negative_sequences=2, positive_cosine=0.4, negative_cosine=0.3, temperature=0.05)
    averaging = lc.hicl_negative_count_curve([1, 2, 3], negative_weighting="averaging", **kwargs)
    summation = lc.hicl_negative_count_curve([1, 2, 3], negative_weighting="summation", **kwargs)
    np.testing.assert_allclose(averaging, averaging[0])
    assert summation[0] == pytest.approx(averaging[0]) and np.all(np.diff(summation) > 0)


def test_bcl_gradient_curves_agree_with_eq13_and_eq14():
    from stsnb.teaching import loss_curves as lc

    grid = np.linspace(-0.9, 0.9, 13)
    for knob, values in (("same_pair", (0.2, 0.4, 0.6)), ("positive", (0.05, 1.0, 3.0))):
        curves, analytic = lc.bcl_gradient_curves(knob, grid, values, sigma=0.5, temperature=3.0)
        assert [c.label for c in curves] == list(analytic)
        for curve in curves:
            np.testing.assert_allclose(curve.grad, analytic[curve.label], atol=1e-9)
    same, _ = lc.bcl_gradient_curves("same_pair", grid, (0.6,), sigma=0.5, temperature=3.0)
    assert np.all(same[0].grad == 0)  # l = 0.6 >= sigma: alpha_ii = 0 (Eq. 11), the same pair is not pushed
    with pytest.raises(ValueError, match="knob"):
        lc.bcl_gradient_curves("negative", grid, (0.2,), sigma=0.5, temperature=3.0)


def test_bcl_eq15_ratio_is_one_for_any_weights():
    from stsnb.teaching import loss_curves as lc

    for sigma, tau, label in ((0.5, 3.0, 0.2), (1.0, 0.05, 0.9), (0.0, 10.0, 0.0)):
        ratio, value = lc.bcl_eq15_ratio(sigma, tau, label=label, other_cosines=(0.3, -0.2))
        assert ratio == pytest.approx(1.0, abs=1e-9) and value > 0  # tau = 0.05: e^(1/tau) sums lose digits


def test_plot_curves_pull_panel_is_a_log_axis_with_each_plateau_dotted():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from stsnb.teaching import loss_curves as lc
    from stsnb.teaching import plots

    grid = np.linspace(-0.99, 0.99, 81)
    taus = (0.05, 1.0)
    curves = [lc.evaluate(lc.info_nce_fn([0.3] * 7, tau), grid, f"tau {tau:g}") for tau in taus]
    bounds = {c.label: 1 / tau for c, tau in zip(curves, taus, strict=True)}
    fig, (ax_v, ax_g) = plots.figure(ncols=2, width=11)
    lc.plot_curves(ax_v, ax_g, curves, "positive cosine", pull_bounds=bounds)
    assert ax_g.get_yscale() == "log" and ax_v.get_legend() is None and ax_g.get_legend() is not None
    pulls = [line for line in ax_g.get_lines() if line.get_label() in bounds]
    np.testing.assert_allclose(pulls[0].get_ydata(), -curves[0].grad)
    assert pulls[0].get_ydata()[0] == pytest.approx(1 / 0.05, rel=1e-6)  # the plateau: p near 0, pull 1/tau
    dotted = [line for line in ax_g.get_lines() if line.get_linestyle() == ":" and len(line.get_ydata())]
    assert sorted(line.get_ydata()[0] for line in dotted) == pytest.approx([1.0, 20.0])
    assert any("plateau" in text.get_text() for text in ax_g.get_legend().get_texts())
    assert ax_g.get_ylim()[0] >= lc.PULL_FLOOR
    assert plots.figure_problems(fig) == []
    with pytest.raises(ValueError, match="negative"):
        lc.plot_pull(ax_g, [lc.Curve("up", grid, grid, grid)], "x", {})
    plt.close("all")


def test_bcl_same_pair_curve_names_the_dropped_label():
    from stsnb.teaching import loss_curves as lc

    curves, _ = lc.bcl_gradient_curves("same_pair", np.linspace(-0.5, 0.5, 5), (0.2, 0.6), sigma=0.5, temperature=3.0)
    assert curves[0].label == "$l$ = 0.2" and "alpha_{ii}$ = 0" in curves[1].label
