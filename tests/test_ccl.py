"""CCL (stsnb.papers.ccl): quadruples, each loss term against its equation, the encoders, the Appendix A count, the
C-STS loader on real rows, and the paper's numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from stsnb import data
from stsnb.data import CSTSRecord
from stsnb.evaluation import claims as stsnb_claims
from stsnb.evaluation import evaluate as stsnb_evaluate
from stsnb.evaluation import stats
from stsnb.models import loading as models
from stsnb.papers import ccl
from stsnb.training import conditional_losses

Q = ccl.quotes.TABLE3  # the sentence a synthetic claim quotes

# ---------------------------------------------------------------------------------------------------------------
# quadruples (Section 3.1; the c-sts TripletBatchSampler rule)


def _row(s1: str, s2: str, condition: str, label: float, line: int) -> CSTSRecord:
    return CSTSRecord(s1, s2, condition, label, f"hand.csv:{line}")


HAND = [
    _row("a", "b", "colour", 2.0, 2),  # pair (a, b): low first in the file
    _row("a", "b", "size", 5.0, 3),
    _row("c", "d", "shape", 3.0, 4),  # (c, d): a tie, file order decides
    _row("c", "d", "count", 3.0, 5),
    _row("e", "f", "mood", 4.0, 6),  # (e, f): its partner is missing (a -1 row in the real data)
    _row("g", "h", "x", 1.0, 7),  # (g, h): three rows
    _row("g", "h", "y", 2.0, 8),
    _row("g", "h", "z", 3.0, 9),
    _row("i", "j", "same", 4.0, 10),  # (i, j): the same condition twice
    _row("i", "j", "same", 2.0, 11),
    _row("b", "a", "size", 1.0, 12),  # (b, a) is another pair than (a, b): one row, unpaired
]


def test_pairing_a_hand_made_slice():
    pairing = ccl.pair_conditions(HAND)
    by_pair = {(q.sent1, q.sent2): q for q in pairing.quadruples}
    assert list(by_pair) == [("a", "b"), ("c", "d"), ("i", "j")]  # file order of each pair's first row
    ab = by_pair[("a", "b")]
    assert (ab.condition_high, ab.label_high, ab.condition_low, ab.label_low) == ("size", 5.0, "colour", 2.0)
    assert (ab.source_high, ab.source_low) == ("hand.csv:3", "hand.csv:2")
    cd = by_pair[("c", "d")]
    assert (cd.condition_high, cd.condition_low) == ("shape", "count") and cd.is_tie
    assert sorted(r.source for r in pairing.unpaired) == sorted(
        ["hand.csv:6", "hand.csv:7", "hand.csv:8", "hand.csv:9", "hand.csv:12"]
    )
    assert pairing.ties == 1 and pairing.same_condition == 1
    assert pairing.rows_paired + len(pairing.unpaired) == len(HAND)  # nothing lost silently
    assert "5 rows without a partner" in pairing.summary()


def test_pairing_can_drop_ties_and_repeated_conditions_and_counts_them():
    pairing = ccl.pair_conditions(HAND, keep_ties=False, keep_same_condition=False)
    assert [(q.sent1, q.sent2) for q in pairing.quadruples] == [("a", "b")]
    assert pairing.dropped == {"equal labels": 1, "the same condition twice": 1}
    assert pairing.ties == 0 and pairing.same_condition == 0


def test_quadruple_rows_labels_and_split():
    quad = ccl.pair_conditions(HAND).quadruples[0]
    high, low = quad.rows()
    assert (high.condition, high.label, low.condition, low.label) == ("size", 5.0, "colour", 2.0)
    assert [ccl.scale_label(v) for v in (1, 2, 3, 4, 5)] == [0.0, 0.25, 0.5, 0.75, 1.0]
    with pytest.raises(ValueError, match="label"):
        ccl.scale_label(0.0)
    with pytest.raises(ValueError, match="label_high"):
        ccl.Quadruple("a", "b", "x", "y", 2.0, 3.0)
    quads = [ccl.Quadruple(str(i), "s", "x", "y", 3.0, 2.0) for i in range(10)]
    train, held = ccl.split_quadruples(quads, 3, seed=0)
    assert len(train) == 7 and len(held) == 3 and not {q.sent1 for q in train} & {q.sent1 for q in held}
    assert ccl.split_quadruples(quads, 3, seed=0) == (train, held)
    assert len(ccl.rows_of(held)) == 6


# ---------------------------------------------------------------------------------------------------------------
# the loader on the real re-annotated files, and on a malformed file


def test_pairing_the_real_reannotated_splits(data_dir):
    train = data.load_csts("train", data_dir)
    validation = data.load_csts("validation", data_dir)
    assert train[0].sent1.startswith("Donuts made into the shape of a six")
    assert (train[0].condition, train[0].label, train[0].source) == (
        "type of object",
        3.0,
        "csts_train_reannotated.csv:2",
    )
    pairing = ccl.pair_conditions(train)
    assert len(pairing.quadruples) == 5671 and not pairing.unpaired  # every train pair has two rows
    assert all(q.label_high >= q.label_low for q in pairing.quadruples)
    val = ccl.pair_conditions(validation)
    # 2834 rows = 1417 pairs; 214 rows labelled -1 leave 198 pairs with one row and 8 with none
    assert len(val.quadruples) == 1211 and len(val.unpaired) == 198
    assert val.loader_skipped == {"label -1 (no usable label)": 214}
    assert val.rows_paired + len(val.unpaired) == len(validation) == 2834 - 214


def test_table1_examples_are_validation_pairs(data_dir):
    validation = data.load_csts("validation", data_dir)
    for example in ccl.TABLE1:
        rows = ccl.rows_of_pair(validation, example.sent1, example.sent2)
        assert len(rows) == 2, example.sent1  # refined conditions and new labels, the same sentence pair


def _write(path, text: str):
    path.write_text(text, encoding="utf-8")
    return path


def test_loader_reads_a_csts_csv_by_path_and_names_file_and_line_of_bad_rows(tmp_path):
    header = "sentence1,sentence2,condition,label\n"
    good = _write(tmp_path / "csts_train.csv", header + 'a,b,c,4\n"x, y",z,"two\nlines",1.0\nq,r,s,-1\n')
    rows = data.load_csts(path=good)
    assert [(r.sent1, r.condition, r.label, r.source) for r in rows] == [
        ("a", "c", 4.0, "csts_train.csv:2"),
        ("x, y", "two\nlines", 1.0, "csts_train.csv:3"),
    ]
    assert rows.skipped == {"label -1 (no usable label)": 1}
    reordered = _write(tmp_path / "reordered.csv", "label,condition,sentence2,sentence1,extra\n5,c,b,a,ignored\n")
    assert data.load_csts(path=reordered)[0] == CSTSRecord("a", "b", "c", 5.0)
    cases = {
        "fields.csv": (header + "a,b,c,4\na,b,4\n", r"fields\.csv:3: expected 4 comma-separated fields"),
        "label.csv": (header + "a,b,c,4\na,b,c,9\n", r"label\.csv:3: score 9\.0 outside the range \[1\.0, 5\.0\]"),
        "text.csv": (header + 'a,b,"multi\nline",4\na,b,c,five\n', r"text\.csv:4: expected a score"),
        "empty.csv": (header + "a,b, ,4\n", r"empty\.csv:2: empty condition"),
        "header.csv": ("s1,s2,condition,label\na,b,c,4\n", r"header\.csv:1: expected a header"),
    }
    for name, (text, message) in cases.items():
        with pytest.raises(data.DataError, match=message):
            data.load_csts(path=_write(tmp_path / name, text))
    with pytest.raises(data.DataError, match=r"nowhere\.csv: file not found"):
        data.load_csts(path=tmp_path / "nowhere.csv")


# ---------------------------------------------------------------------------------------------------------------
# each loss term against its equation, written out independently


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


COS_POS = torch.tensor([0.9, 0.2, 0.55, -0.1], dtype=torch.float64)
COS_NEG = torch.tensor([0.1, 0.4, 0.5, -0.3], dtype=torch.float64)
L_POS = torch.tensor([1.0, 0.75, 0.5, 0.25], dtype=torch.float64)
L_NEG = torch.tensor([0.25, 0.75, 0.0, 0.0], dtype=torch.float64)


def test_fdl_rdl_acl_against_eq_5_to_8():
    fdl, rdl, acl = [], [], []
    for cp, cn, lp, ln in zip(COS_POS.tolist(), COS_NEG.tolist(), L_POS.tolist(), L_NEG.tolist(), strict=True):
        fdl.append(max(lp - ln + cn - cp, 0.0))  # Eq. 5
        rdl.append(max(ln - lp - cn + cp, 0.0))  # Eq. 6
        acl.append(abs(lp - ln + cn - cp))  # Eq. 8
    args = (COS_POS, COS_NEG, L_POS, L_NEG)
    assert ccl.fdl(*args, reduction="none").tolist() == pytest.approx(fdl)
    assert ccl.rdl(*args, reduction="none").tolist() == pytest.approx(rdl)
    assert ccl.acl(*args, reduction="none").tolist() == pytest.approx(acl)  # Eq. 7 = FDL + RDL = Eq. 8
    assert ccl.acl(*args).item() == pytest.approx(np.mean(acl))
    assert ccl.fdl(*args, reduction="sum").item() == pytest.approx(sum(fdl))
    # FDL is Quad (Eq. 4) with the label gap as its margin
    gap = 0.5
    same_gap = (COS_POS, COS_NEG, torch.full((4,), 0.75, dtype=torch.float64), torch.full((4,), 0.25).double())
    assert ccl.fdl(*same_gap).item() == pytest.approx(conditional_losses.quad_loss(COS_POS, COS_NEG, margin=gap).item())
    with pytest.raises(ValueError, match="label_pos must be >= label_neg"):
        ccl.fdl(COS_POS, COS_NEG, L_NEG, L_POS)


def test_c_mse_readings():
    projected = torch.tensor([0.2, 0.9, 0.4])
    labels = torch.tensor([0.25, 1.0, 0.5])
    expected = np.mean([(p - y) ** 2 for p, y in zip(projected.tolist(), labels.tolist(), strict=True)])
    assert ccl.c_mse("projected", projected_cos=projected, labels=labels).item() == pytest.approx(expected)
    gap = [
        ((cp - cn) - (lp - ln)) ** 2
        for cp, cn, lp, ln in zip(*(t.tolist() for t in (COS_POS, COS_NEG, L_POS, L_NEG)), strict=True)
    ]
    got = ccl.c_mse("gap", cos_pos=COS_POS, cos_neg=COS_NEG, label_pos=L_POS, label_neg=L_NEG)
    assert got.item() == pytest.approx(np.mean(gap))
    with pytest.raises(ValueError, match="target"):
        ccl.c_mse("other", projected_cos=projected, labels=labels)


class RecordingModel(nn.Module):
    """Deterministic stand-in for a ConditionalEncoder: h depends on (sentence, condition) and on the call number
    (the second call on the same inputs is BCL's other dropout view); g is a fixed linear map plus tanh. Every
    call's outputs are kept so that the test can recompute the losses from them by hand."""

    def __init__(self, dim: int = 5):
        super().__init__()
        self.dim = dim
        generator = torch.Generator().manual_seed(0)
        self.g = torch.randn(dim, dim, generator=generator, dtype=torch.float64)
        self.calls: list[tuple[list[str], list[str], torch.Tensor, torch.Tensor]] = []

    def _vector(self, text: str) -> torch.Tensor:
        seed = sum(ord(ch) * (i + 1) for i, ch in enumerate(text))
        return torch.randn(self.dim, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)

    def forward(self, sentences, conditions, project=False):
        view = 0.3 * len(self.calls)
        h = torch.stack(
            [
                self._vector(s) + 0.5 * self._vector(c) + view * self._vector(s + "#")
                for s, c in zip(sentences, conditions, strict=True)
            ]
        )
        z = torch.tanh(h @ self.g)
        self.calls.append((list(sentences), list(conditions), h, z))
        return (h, z) if project else h


QUADS = [
    ccl.Quadruple("s1 a", "s2 a", "cond high a", "cond low a", 5.0, 3.0),
    ccl.Quadruple("s1 b", "s2 b", "cond high b", "cond low b", 4.0, 4.0),
    ccl.Quadruple("s1 c", "s2 c", "cond high c", "cond low c", 2.0, 1.0),
]


def test_batch_terms_and_eq_3_against_the_equations_written_out():
    sigma, tau = 0.6, 0.5
    objective = ccl.ccl(sigma=sigma, temperature=tau)
    model = RecordingModel()
    terms = ccl.batch_terms(model, QUADS, objective)
    assert sorted(terms) == sorted(["w_acl", "bcl", "mse", "c_mse"])
    (inputs, conditions, h, z), (view_inputs, view_conditions, _, z_view) = model.calls
    b = len(QUADS)
    # the layout: B higher-condition rows, then their B lower-condition partners; s1 of all rows, then s2
    assert inputs == [q.sent1 for q in QUADS] * 2 + [q.sent2 for q in QUADS] * 2
    assert conditions[: 2 * b] == [q.condition_high for q in QUADS] + [q.condition_low for q in QUADS]
    assert view_inputs == inputs[: 2 * b] and view_conditions == conditions[: 2 * b]
    h, z, z_view = h.numpy(), z.numpy(), z_view.numpy()
    labels = [(q.label_high - 1) / 4 for q in QUADS] + [(q.label_low - 1) / 4 for q in QUADS]
    n = 2 * b
    cos = [_cos(h[i], h[n + i]) for i in range(n)]
    # MSE over every row
    mse = np.mean([(cos[i] - labels[i]) ** 2 for i in range(n)])
    assert terms["mse"].item() == pytest.approx(mse)
    # W-ACL, Eq. 9
    w_acl = [(labels[i] - labels[b + i]) * abs(labels[i] - labels[b + i] + cos[b + i] - cos[i]) for i in range(b)]
    assert terms["w_acl"].item() == pytest.approx(np.mean(w_acl))
    # BCL, Eq. 10-12 with the weights of Eq. 11 (anchor s1_i, positive its other view, negatives s2_j)
    bcl = []
    for i in range(n):
        positive = math.exp(_cos(z[i], z_view[i]) / tau)
        negatives = 0.0
        for j in range(n):
            if i != j:  # Eq. 11: a general negative
                alpha = 1.0
            elif labels[i] >= sigma:  # the same pair under the same condition: a false negative
                alpha = 0.0
            else:  # a hard negative, down-weighted
                alpha = 1.0 - labels[i]
            negatives += alpha * math.exp(_cos(z[i], z[n + j]) / tau)
        bcl.append(-math.log(positive / (positive + negatives)))
    assert terms["bcl"].item() == pytest.approx(np.mean(bcl))
    # C-MSE (our default reading): MSE of the cosine of g(h1), g(h2)
    projected = [_cos(z[i], z[n + i]) for i in range(n)]
    c_mse = np.mean([(projected[i] - labels[i]) ** 2 for i in range(n)])
    assert terms["c_mse"].item() == pytest.approx(c_mse)
    # Eq. 3 with lambda_1..4 = 1, and with other lambdas
    assert ccl.total(terms, objective).item() == pytest.approx(np.mean(w_acl) + np.mean(bcl) + mse + c_mse)
    weighted = ccl.ccl(sigma, tau, lambdas=(2.0, 0.5, 1.0, 0.0))
    assert ccl.total(terms, weighted).item() == pytest.approx(
        2 * terms["w_acl"].item() + 0.5 * terms["bcl"].item() + terms["mse"].item()
    )


def test_the_multiplier_reading_of_tau_multiplies_bcls_cosines_by_tau():
    """Eq. 10 as printed divides by tau; with Table 2's tau = 3-10 that squeezes the logits, so the other reading
    (``temperature_reading = "multiplier"``: cos * tau) is a parameter. Written out for one batch."""
    sigma, tau = 0.6, 5.0
    objective = ccl.ccl(sigma=sigma, temperature=tau).with_settings(temperature_reading="multiplier")
    assert objective.bcl_temperature == pytest.approx(1 / tau)
    model = RecordingModel()
    terms = ccl.batch_terms(model, QUADS, objective)
    (_, _, _, z), (_, _, _, z_view) = model.calls
    z, z_view, n = z.numpy(), z_view.numpy(), 2 * len(QUADS)
    labels = [(q.label_high - 1) / 4 for q in QUADS] + [(q.label_low - 1) / 4 for q in QUADS]
    bcl = []
    for i in range(n):
        positive = math.exp(_cos(z[i], z_view[i]) * tau)
        negatives = sum(
            (1.0 if i != j else (0.0 if labels[i] >= sigma else 1.0 - labels[i])) * math.exp(_cos(z[i], z[n + j]) * tau)
            for j in range(n)
        )
        bcl.append(-math.log(positive / (positive + negatives)))
    assert terms["bcl"].item() == pytest.approx(np.mean(bcl))
    with pytest.raises(ValueError, match="temperature_reading"):
        objective.with_settings(temperature_reading="exponent")


def test_qumse_is_quad_with_lambda_1_plus_mse():
    model = RecordingModel()
    terms = ccl.batch_terms(model, QUADS, ccl.qumse())
    assert sorted(terms) == ["mse", "quad"] and len(model.calls) == 1  # no projection, no second view
    _, _, h, _ = model.calls[0]
    h = h.numpy()
    b, n = len(QUADS), 2 * len(QUADS)
    cos = [_cos(h[i], h[n + i]) for i in range(n)]
    quad = [max(1.0 + cos[b + i] - cos[i], 0.0) for i in range(b)]  # Eq. 1, lambda = 1
    assert terms["quad"].item() == pytest.approx(np.mean(quad))
    assert ccl.total(terms, ccl.qumse()).item() == pytest.approx(terms["quad"].item() + terms["mse"].item())


def test_objectives_ablation_and_settings():
    full = ccl.ccl(sigma=0.75, temperature=3.0)
    assert full.active() == ["mse", "w_acl", "bcl", "c_mse"] and full.needs_projection()
    without = full.without("bcl")
    assert without.name == "CCL w/o BCL" and without.weights["bcl"] == 0 and without.needs_projection()
    assert not full.without("bcl").without("c_mse").needs_projection()
    assert full.with_settings(sigma=0.0).sigma == 0.0
    gap = ccl.ccl(0.5, 1.0, c_mse_target="gap")
    assert not gap.without("bcl").needs_projection()
    terms = ccl.batch_terms(RecordingModel(), QUADS, gap.without("bcl"))
    assert sorted(terms) == ["c_mse", "mse", "w_acl"]
    with pytest.raises(ValueError, match="no term"):
        ccl.qumse().without("bcl")
    with pytest.raises(ValueError, match="sigma"):
        ccl.ccl(sigma=2.0, temperature=1.0)
    with pytest.raises(ValueError, match="no term with a non-zero weight"):
        ccl.ccl(0.5, 1.0, lambdas=(0, 0, 0, 0))


# ---------------------------------------------------------------------------------------------------------------
# encoders


class TableEncoder(nn.Module):
    """A SentenceEncoder stand-in: a fixed vector per text (what TriEncoder needs: __call__, dim, device)."""

    def __init__(self, dim: int = 4):
        super().__init__()
        self.dim = dim
        self.weight = nn.Parameter(torch.zeros(1))  # a parameter, so that .device works
        self.max_length = 32
        self.tokenizer = None

    @property
    def device(self):
        return self.weight.device

    def vector(self, text: str) -> torch.Tensor:
        return torch.randn(self.dim, generator=torch.Generator().manual_seed(sum(map(ord, text))))

    def forward(self, texts):
        return torch.stack([self.vector(t) for t in texts])


def test_tri_encoder_fuses_sentence_and_condition_by_hadamard_product():
    encoder = TableEncoder()
    tri = ccl.TriEncoder(encoder, projection="identity")
    sentences, conditions = ["s one", "s two", "s three"], ["colour", "size", "colour"]
    h = tri(sentences, conditions)
    for k in range(3):
        expected = [
            a * b
            for a, b in zip(encoder.vector(sentences[k]).tolist(), encoder.vector(conditions[k]).tolist(), strict=True)
        ]
        assert h[k].tolist() == pytest.approx(expected)
    with_transform = ccl.TriEncoder(encoder, projection="identity", condition_transform=True).eval()
    linear = with_transform.condition_transform[1]
    transformed = linear(encoder.vector("size"))
    got = with_transform(["s two"], ["size"])[0]
    assert got.tolist() == pytest.approx((encoder.vector("s two") * transformed).tolist())
    assert ccl.hadamard(torch.tensor([1.0, 2.0]), torch.tensor([3.0, -1.0])).tolist() == [3.0, -2.0]
    with pytest.raises(ValueError, match="same shape"):
        ccl.hadamard(torch.ones(2), torch.ones(3))


def test_projection_kinds_and_new_parameters():
    assert isinstance(ccl.make_projection("identity", 4), nn.Identity)
    assert isinstance(ccl.make_projection("mlp", 4)[1], nn.Tanh)
    with pytest.raises(ValueError, match="projection"):
        ccl.make_projection("deep", 4)
    tri = ccl.TriEncoder(TableEncoder(), projection="linear", condition_transform=True)
    assert sorted(tri.new_parameters()) == [
        "condition_transform.1.bias",
        "condition_transform.1.weight",
        "projection.bias",
        "projection.weight",
    ]
    groups = ccl.param_groups(tri, lr=1e-5, weight_decay=0.1, head_lr=1e-3)
    by_lr = {(g["lr"], g["weight_decay"]): len(g["params"]) for g in groups}
    assert by_lr == {(1e-5, 0.1): 1, (1e-3, 0.1): 2, (1e-3, 0.0): 2}


@pytest.mark.slow
def test_bi_and_tri_encoders_on_the_real_minilm(monkeypatch):
    bi = ccl.build_encoder("minilm-l6", "bi", pooling="cls", device="cpu")
    features = bi.tokenize_pairs(["A man rides a horse."], ["type of animal"])
    tokens = bi.encoder.tokenizer.convert_ids_to_tokens(features["input_ids"][0])
    assert tokens[0] == "[CLS]" and tokens.count("[SEP]") == 2 and tokens[-3:] == ["of", "animal", "[SEP]"]
    assert features["token_type_ids"][0].tolist()[-4:] == [1, 1, 1, 1]  # the condition is segment B
    sentences, conditions = ["A man rides a horse.", "A dog.", "Two women sit on a bench in a park."], ["animal"] * 3
    monkeypatch.setattr(models, "CPU_TRAINING_CHUNK_TOKENS", 24)  # cuts these three inputs into chunks
    with torch.no_grad():
        hidden = bi.encoder.backbone(**features).last_hidden_state[:, 0]
        assert torch.allclose(bi(["A man rides a horse."], ["type of animal"]), hidden, atol=1e-6)
        whole = bi.encoder.backbone(**bi.tokenize_pairs(sentences, conditions)).last_hidden_state[:, 0]
        assert torch.allclose(bi(sentences, conditions), whole, atol=1e-5)  # token types padded with each chunk
    tri = ccl.build_encoder("minilm-l6", "tri", pooling="cls", device="cpu").eval()
    with torch.no_grad():
        expected = tri.encoder(["A man rides a horse."]) * tri.encoder(["type of animal"])
        assert torch.allclose(tri(["A man rides a horse."], ["type of animal"]), expected, atol=1e-5)
    records = [CSTSRecord("A man rides a horse.", "A woman rides a bike.", c, 3.0) for c in ("animal", "person")]
    cos = bi.similarities(records)
    assert cos.shape == (2,) and np.all(np.abs(cos) <= 1 + 1e-6) and cos[0] != cos[1]
    with pytest.raises(ValueError, match="first-token pooling"):
        ccl.build_encoder("smollm2-135m-l6", "bi", pooling="cls", device="cpu")


def test_gradient_checkpointing_reaches_the_backbone_and_leaves_the_gradients_unchanged():
    """The ``gradient_checkpointing`` parameter of notebook 40 (memory that fits on a GPU server) reaches the
    backbone of both architectures and changes memory, not the gradient of a CCL loss on the real MiniLM."""
    rows = [CSTSRecord("A man rides a horse.", "A woman rides a bike.", c, label) for c, label in (("animal", 1.0),)]
    grads = {}
    for checkpointing in (False, True):
        settings = ccl.ModelSettings("minilm-l6", "tri", "mean", 32, gradient_checkpointing=checkpointing)
        model = settings.build(seed=0, device="cpu").train()  # checkpointing acts in training mode only
        assert models.activation_checkpointing(model.encoder.backbone) is checkpointing
        torch.manual_seed(1)  # the same dropout masks (non-reentrant checkpointing replays the RNG state)
        score = model([r.sent1 for r in rows], [r.condition for r in rows]).pow(2).sum()
        score.backward()
        grads[checkpointing] = model.encoder.backbone.encoder.layer[0].attention.self.query.weight.grad.clone()
    assert grads[False].abs().sum() > 0
    torch.testing.assert_close(grads[True], grads[False], rtol=1e-5, atol=1e-7)


@pytest.mark.slow
def test_tri_encoder_scores_distinct_sentences_and_conditions_once_with_the_same_numbers(data_dir):
    rows = list(data.load_csts("validation", data_dir))[:64]
    tri = ccl.build_encoder("minilm-l6", "tri", pooling="cls", condition_transform=True, device="cpu", seed=3)
    tri.train()
    fast = tri.similarities(rows)  # scored in eval mode (no dropout), then the training mode is restored
    assert tri.training
    conditions = [r.condition for r in rows]
    tri.eval()
    with torch.no_grad():  # every (sentence, condition) input through the training-time path
        h1 = tri.represent_batch([r.sent1 for r in rows], conditions)
        h2 = tri.represent_batch([r.sent2 for r in rows], conditions)
    slow = torch.nn.functional.cosine_similarity(h1, h2, dim=-1).numpy()
    assert np.allclose(fast, slow, atol=1e-5)


@pytest.mark.slow
def test_a_short_training_run_on_real_rows(data_dir):
    from stsnb.training.config import TrainConfig

    pairing = ccl.pair_conditions(data.load_csts("train", data_dir))
    rows = data.load_csts("validation", data_dir)[:40]
    settings = ccl.ModelSettings("minilm-l6", "bi", max_length=48)
    config = TrainConfig(epochs=1, batch_size=4, lr=3e-5, max_steps=2, progress=False, eval_at_start=True)
    outcome = ccl.train_and_evaluate(
        settings, ccl.ccl(0.75, 3.0), pairing.quadruples[:8], rows[:12], rows, config, head_lr=1e-3
    )
    assert outcome.result.steps == 2 and outcome.evaluation.n == 40
    assert math.isfinite(outcome.evaluation.spearman) and math.isfinite(outcome.evaluation.pearson)
    result = outcome.result  # selection may keep step 0 here; then the weights are the start's, exactly
    assert (result.best_step == 0) == (result.weight_change == 0.0)
    gate = ccl.dev_gate("CCL", outcome)  # step 0 of the fit is the untrained encoder on the same selection rows
    start = ccl.evaluate_rows(settings.build(seed=0), rows[:12]).spearman
    assert result.dev_start["score"] == pytest.approx(start, abs=1e-6) and result.dev_start["groups"]
    (seed,) = gate.seeds
    assert seed.dev_gain == pytest.approx(result.best_score - start, abs=1e-6)
    assert (gate.trained_seeds == ["seed 0"]) == (seed.left_start and seed.dev_gain > seed.noise_bound)
    untrained = ccl.zero_shot(settings, rows)
    assert untrained.result is None and untrained.evaluation.sources == outcome.evaluation.sources
    row = ccl.spearman_claim("CCL > untrained", outcome, untrained, paper_quote=Q, n_resamples=200)
    assert row["verdict"] in ("supported", "contradicted", "unresolved") and row["low"] <= row["high"]
    assert row["seeds"] == 1 and row["per_seed"][0]["n"] == len({ccl.pair_id(r) for r in rows})  # sentence pairs
    with pytest.raises(ValueError, match="an untrained run has no dev gate"):
        ccl.dev_gate("untrained", untrained)
    assert "untrained" in untrained.describe() and "largest weight change" in outcome.describe()
    assert (result.relative_change == 0.0) == (result.best_step == 0) and "% (relative L2)" in outcome.describe()
    assert outcome.metrics()["relative_change"] == result.relative_change


# ---------------------------------------------------------------------------------------------------------------
# Appendix A


def test_overestimation_count_on_a_tiny_example():
    cos_pos = [0.95, 0.8, 0.6, 1.0]
    cos_neg = [0.3, 0.1, 0.2, 0.0]
    label_pos = [0.5, 0.75, 0.75, 0.5]
    label_neg = [0.5, 0.5, 0.25, 0.5]
    # quadruple 0: positive over by 0.45, negative under by 0.2 -> Eq. 16 only
    # quadruple 1: positive over by 0.05, negative under by 0.4 -> Eq. 17 only (mirror reading)
    # quadruple 2: positive under -> neither;  quadruple 3: over by 0.5 and under by 0.5 -> both
    count = ccl.count_overestimated(cos_pos, cos_neg, label_pos, label_neg)
    assert (count.eq16, count.eq17, count.either, count.total) == (2, 2, 3, 4)
    literal = ccl.count_overestimated(cos_pos, cos_neg, label_pos, label_neg, reading="literal")
    assert (literal.eq16, literal.eq17, literal.either) == (2, 0, 2)
    rng = np.random.default_rng(0)  # the printed Eq. 17 can never hold when l_pos >= l_neg
    lp = rng.uniform(0, 1, 500)
    ln = lp * rng.uniform(0, 1, 500)
    _, eq17 = ccl.overestimated(rng.uniform(-1, 1, 500), rng.uniform(-1, 1, 500), lp, ln, reading="literal")
    assert not eq17.any()
    with pytest.raises(ValueError, match="label_pos must be >= label_neg"):
        ccl.count_overestimated([0.1], [0.1], [0.2], [0.5])


def test_quadruple_scores_and_paired_count_difference():
    quads = ccl.pair_conditions(HAND[:4]).quadruples
    predictions = {"hand.csv:2": 0.1, "hand.csv:3": 0.9, "hand.csv:4": 0.5, "hand.csv:5": 0.4}
    cos_pos, cos_neg, label_pos, label_neg = ccl.quadruple_scores(quads, predictions)
    assert cos_pos.tolist() == [0.9, 0.5] and cos_neg.tolist() == [0.1, 0.4]
    assert label_pos.tolist() == [1.0, 0.5] and label_neg.tolist() == [0.25, 0.5]
    with pytest.raises(KeyError, match="no prediction"):
        ccl.quadruple_scores(quads, {"hand.csv:2": 0.1})
    a = np.array([1] * 30 + [0] * 70, dtype=bool)
    b = np.zeros(100, dtype=bool)
    difference, low, high = ccl.paired_count_difference(a, b, n_resamples=500)
    assert difference == 30 and 15 < low < 30 < high < 45
    assert ccl.count_claim("fewer", b, a, -1)["verdict"] == "supported"


# ---------------------------------------------------------------------------------------------------------------
# the paper's numbers


def test_reported_numbers_match_the_papers_differences():
    value = ccl.REPORTED.value
    # Table 3's printed gains (+15.7, +18.9, +1.9, +2.0, +0.6; tri +3.4, +10.0, +4.5, +3.1, +0.3)
    gains = {"bi": (15.7, 18.9, 1.9, 2.0, 0.6), "tri": (3.4, 10.0, 4.5, 3.1, 0.3)}
    for arch, expected in gains.items():
        for model, gain in zip(ccl.MODELS, expected, strict=True):
            got = value("Table 3", ccl.setting(arch, "CCL", model), "spearman") - value(
                "Table 3", ccl.setting(arch, "QuMSE", model), "spearman"
            )
            assert got == pytest.approx(gain, abs=0.051), (arch, model)
    # Table 7's printed gains, tri SimCSE-large included (+0.5 over 35.6)
    pearson = {"bi": (20.8, 24.0, 1.3, 1.4), "tri": (5.8, 10.1, 5.8, 4.0, 0.5)}
    for arch, expected in pearson.items():
        for model, gain in zip(ccl.MODELS, expected, strict=False):
            got = value("Table 7", ccl.setting(arch, "CCL", model), "pearson") - value(
                "Table 7", ccl.setting(arch, "QuMSE", model), "pearson"
            )
            assert got == pytest.approx(gain, abs=0.051), (arch, model)
    # Table 4's full rows are Table 5's rows at the Table 2 sigma
    for arch in ("bi", "tri"):
        for model in ("RoBERTa-base", "SimCSE-base"):
            sigma = ccl.hyperparameters(arch, model).sigma
            assert value("Table 4", ccl.setting(arch, "CCL", model), "spearman") == value(
                "Table 5", ccl.setting(arch, "CCL", model, f"sigma={sigma:g}"), "spearman"
            )
    assert value("Appendix A", ccl.setting("bi", "QuMSE", "SimCSE-base"), "overestimated") == 134
    assert ccl.hyperparameters("bi", "SimCSE-base") == ccl.Hyperparameters(3e-5, 3.0, 0.75, 5, 16, 4, 0.1)
    assert len(ccl.TABLE1) == 6


# ---------------------------------------------------------------------------------------------------------------
# claims: sentence pairs as the bootstrap unit, training seeds, preconditions, equivalence


def _outcome(name, rows, predictions, *, seed=0, best_step=10, weight_change=1e-3, arch="bi", moved="trained"):
    """A scored run on real rows with given predictions (the statistics under test need nothing else); its fit's dev
    records score the selection rows (here the same real rows, grouped by sentence pair) at step 0 and at the kept
    step, where its error shrank ("trained"), grew ("lost") or the kept checkpoint is the start ("stayed")."""
    from stsnb.training.config import TrainResult

    gold = ccl.gold_labels(rows)
    spearman, pearson = stsnb_evaluate.correlations(predictions, gold)
    sources, groups = [r.source for r in rows], [ccl.pair_id(r) for r in rows]
    evaluation = ccl.Evaluation(spearman, pearson, np.asarray(predictions, float), gold, sources, groups)
    result = None
    if best_step is not None:
        error = np.random.default_rng(7).normal(0, 0.5, len(rows))
        start = ccl.Evaluation(0.0, 0.0, gold + error, gold, sources, groups)
        factor = {"trained": 0.5, "lost": 1.6, "stayed": 1.0}["stayed" if best_step == 0 else moved]
        kept = ccl.Evaluation(0.0, 0.0, gold + factor * error, gold, sources, groups)
        start, kept = (
            stsnb_evaluate.DevScore(stsnb_evaluate.correlations(e.predictions, gold)[0], gold, e.predictions, groups)
            for e in (start, kept)
        )
        history = [
            {"step": 0, "epoch": 0, "dev": start.score},
            {"step": 20, "epoch": 0, "loss": 0.5, "dev": kept.score},
        ]
        result = TrainResult(
            20, kept.score, best_step, 1.0, history, weight_change=weight_change,
            dev_start=start.record(), dev_kept=kept.record(),
        )  # fmt: skip
    settings = ccl.ModelSettings("minilm-l6", arch, condition_transform=arch == "tri")
    return ccl.RunOutcome(name, settings, None, evaluation, result, 1.0, seed=seed)


@pytest.fixture(scope="module")
def validation_rows(data_dir):
    """The first 600 labelled rows of the real re-annotated validation split (each pair under two conditions)."""
    return list(data.load_csts("validation", data_dir))[:600]


def test_pair_id_groups_the_two_conditions_of_a_real_sentence_pair(validation_rows):
    ids = [ccl.pair_id(r) for r in validation_rows]
    by_id: dict[str, set] = {}
    for record, label in zip(validation_rows, ids, strict=True):
        by_id.setdefault(label, set()).add(record.condition)
    assert len(by_id) < len(validation_rows) and max(len(c) for c in by_id.values()) == 2
    assert ccl.pair_id(CSTSRecord("a", "b", "x", 1.0)) == ccl.pair_id(CSTSRecord("b", "a", "y", 2.0))
    quads = ccl.pair_conditions(validation_rows).quadruples
    assert ccl.quadruple_groups(quads) == [ccl.pair_id(q.rows()[1]) for q in quads]


def test_claims_resample_sentence_pairs_which_widens_the_interval_when_errors_come_per_pair(validation_rows):
    rows = validation_rows
    rng = np.random.default_rng(0)
    gold = ccl.gold_labels(rows)
    groups = [ccl.pair_id(r) for r in rows]
    a = gold.copy()  # system a orders the two conditions of 40% of the sentence pairs the wrong way round: its
    for i, j in _pairs_of(groups):  # errors come per pair, on both rows at once
        if rng.random() < 0.4:
            a[i], a[j] = gold[j], gold[i]
    a += rng.normal(0, 0.1, len(rows))
    b = gold + rng.normal(0, 0.45, len(rows))  # system b errs row by row
    run_a, run_b = _outcome("a", rows, a), _outcome("b", rows, b)
    row = ccl.spearman_claim("a > b", run_a, run_b, paper_quote=Q, n_resamples=1000)
    grouped = ccl.spearman_interval(run_a, run_b, n_resamples=1000)
    assert (row["low"], row["high"]) == (grouped.low, grouped.high)  # the claim uses the grouped interval
    assert grouped == stats.paired_grouped_difference(gold, a, b, groups, n_resamples=1000)
    assert grouped.n == len(set(groups)) < len(rows)
    by_rows = ccl.row_interval(run_a, run_b, n_resamples=1000)
    assert by_rows.n == len(rows)
    assert grouped.high - grouped.low > 1.15 * (by_rows.high - by_rows.low)  # rows are not independent draws
    assert row["main_claim"] is False and "headline" not in row  # only the paper's main claim is marked
    text = "Table 3, m bi-encoder: CCL > QuMSE"
    marked = ccl.spearman_claim(text, run_a, run_b, paper_quote=Q, main_claim=True, n_resamples=50)
    (main,) = ccl.MAIN_CLAIMS
    assert marked["main_claim"] is True and main.row_in([row, marked]) is marked
    assert main.row_in([{**marked, "main_claim": False}]) is None  # the row is found by its mark and its wording


def _pairs_of(groups) -> list[tuple[int, int]]:
    where: dict[str, list[int]] = {}
    for i, label in enumerate(groups):
        where.setdefault(label, []).append(i)
    return [tuple(rows) for rows in where.values() if len(rows) == 2]


def test_training_seeds_each_get_an_interval_and_an_untrained_bi_encoder_serves_every_seed(validation_rows):
    rows = validation_rows
    rng = np.random.default_rng(1)
    gold = ccl.gold_labels(rows)
    untrained = _outcome("untrained", rows, rng.normal(0, 1, len(rows)), best_step=None)
    runs = {s: _outcome(f"QuMSE {s}", rows, gold + rng.normal(0, 0.3, len(rows)), seed=s) for s in (0, 1, 2)}
    row = ccl.spearman_claim("QuMSE > untrained", runs, untrained, paper_quote=Q, n_resamples=300)
    assert row["seeds"] == 3 and [e["seed_run"] for e in row["per_seed"]] == ["seed 0", "seed 1", "seed 2"]
    assert row["verdict"] == "supported" and "3 seeds" in stsnb_claims.verdict_text(row)
    tri_untrained = _outcome("tri untrained", rows, rng.normal(0, 1, len(rows)), best_step=None, arch="tri")
    with pytest.raises(ValueError, match="no run for training seed 1"):
        ccl.seed_intervals(runs, tri_untrained)  # its condition transform is drawn from the seed


def test_dev_gates_read_each_fits_selection_scores_against_its_own_step_0(validation_rows):
    rows = validation_rows
    rng = np.random.default_rng(2)
    gold = ccl.gold_labels(rows)
    good = {s: _outcome(f"CCL {s}", rows, gold + rng.normal(0, 0.3, len(rows)), seed=s) for s in (0, 1, 2)}
    gate = ccl.dev_gate("CCL", good)
    assert gate.trained_seeds == ["seed 0", "seed 1", "seed 2"] and gate.name == "CCL trained on dev"
    assert "seed 0: selected step 10 of 20, dev +" in gate.evidence() and "(best-of-1 noise bound +" in gate.evidence()
    (first,) = ccl.dev_gate("CCL", good[0]).seeds  # the noise bound of a cluster bootstrap over sentence pairs
    record = good[0].result.dev_kept
    paired = stats.paired_grouped_difference(
        record["gold"], record["predictions"], good[0].result.dev_start["predictions"], record["groups"]
    )
    assert first.noise_bound == pytest.approx(1.959964 * paired.standard_error, rel=1e-4)
    stuck = _outcome("QuMSE", rows, gold, best_step=0, weight_change=0.0)  # selection kept step 0: the start
    worse = _outcome("QuMSE", rows, gold, moved="lost")  # kept a later step that scores below the start on dev
    assert ccl.dev_gate("QuMSE", stuck).trained_seeds == [] and ccl.dev_gate("QuMSE", worse).trained_seeds == []
    untrained = _outcome("untrained", rows, gold, best_step=None)
    with pytest.raises(ValueError, match="an untrained run has no dev gate"):
        ccl.dev_gate("untrained", untrained)
    no_records = _outcome("x", rows, gold)
    no_records.result.dev_start = None
    with pytest.raises(ValueError, match="no per-pair dev records"):
        ccl.dev_gate("x", no_records)


def test_a_seed_on_which_an_arm_did_not_train_on_dev_is_left_out_of_the_claim(validation_rows):
    rows = validation_rows
    rng = np.random.default_rng(2)
    gold = ccl.gold_labels(rows)
    start = rng.normal(0, 1, len(rows))
    better = {s: _outcome("CCL", rows, gold + rng.normal(0, 0.3, len(rows)), seed=s) for s in (0, 1, 2)}
    qumse = {s: _outcome("QuMSE", rows, start + rng.normal(0, 0.05, len(rows)), seed=s) for s in (0, 1, 2)}
    qumse[1] = _outcome("QuMSE", rows, start, seed=1, best_step=0, weight_change=0.0)  # seed 1 kept its start
    kw = {"paper_quote": Q, "smallest_effect": (1.0, "half the paper's +2"), "n_resamples": 300}
    row = ccl.spearman_claim("CCL > QuMSE", better, qumse, dev_gates=ccl.arm_gates(better, "CCL", qumse, "QuMSE"), **kw)
    assert row["verdict"] == "supported" and stsnb_claims.verdict_text(row) == "supported (2 of 3 seeds)"
    assert list(row["seeds_left_out"]) == ["seed 1"] and "QuMSE: selected step 0" in row["seeds_left_out"]["seed 1"]
    assert [e["seed_run"] for e in row["per_seed"]] == ["seed 0", "seed 2"]
    assert "QuMSE on dev: seed 0: selected step 10 of 20, dev +" in ccl.gates_text(row)
    assert "(did not train: it is its starting point)" in ccl.gates_text(row)
    assert "left out: seed 1" in ccl.gates_text(row) and row["baseline"] == "QuMSE"  # CCL > QuMSE: QuMSE's least gain
    one = ccl.spearman_claim(
        "CCL > QuMSE", better[1], qumse[1], dev_gates=ccl.arm_gates(better[1], "CCL", qumse[1], "QuMSE"), **kw
    )
    assert one["verdict"] == "not tested"  # a one-seed claim whose seed is left out
    assert "'QuMSE trained on dev' does not hold" in one["not_tested_because"]


def test_smallest_effects_are_half_the_papers_difference_with_their_reason():
    assert ccl.smallest_effect(46.8 - 44.8, "Table 3, SimCSE-base bi") == (
        pytest.approx(1.0),
        "half the paper's difference +2 (Table 3, SimCSE-base bi)",
    )
    effect, reason = ccl.smallest_effect(46 - 134, "Appendix A")
    assert effect == 44 and "-88" in reason
    effect, reason = ccl.smallest_effect(None, "Table 4")
    assert effect == 0.5 and "more than one point" in reason and ccl.quotes.ONE_POINT in reason
    assert ccl.smallest_effect(0.0, "Table 4")[0] == 0.5


def test_the_ablation_note_states_the_finding_from_the_per_seed_differences():
    row = {
        "claim": "Table 4, m bi-encoder: CCL > CCL w/o BCL",
        "per_seed": [
            {"seed_run": "seed 0", "difference": -0.74},
            {"seed_run": "seed 1", "difference": -2.11},
            {"seed_run": "seed 2", "difference": 0.38},
        ],
        "verdict": "unresolved",
        "seeds": 3,
        "paper_difference": 0.6,
    }
    note = ccl.ablation_note("bcl", row)
    assert note.startswith("CCL minus CCL w/o BCL, per seed: seed 0 -0.74, seed 1 -2.11, seed 2 +0.38")
    assert "without BCL the score was higher on 2 of 3 seeds (unresolved (3 seeds); the paper's" in note
    assert "W-ACL is the only term" not in note
    w_acl = ccl.ablation_note("w_acl", {**row, "per_seed": row["per_seed"][:1], "verdict": "supported", "seeds": 1})
    assert "higher on 1 of 1 seed (supported (1 seed, provisional)" in w_acl
    assert w_acl.endswith(ccl.WHAT_W_ACL_DOES) and "compares a pair's two conditions" in w_acl


def test_sigma_is_a_direction_claim_and_tau_robustness_needs_a_margin_below_the_papers_effect(
    data_dir, validation_rows
):
    rows = validation_rows
    rng = np.random.default_rng(3)
    gold = ccl.gold_labels(rows)
    base_predictions = gold + rng.normal(0, 0.4, len(rows))
    base = _outcome("CCL", rows, base_predictions)
    near = _outcome("CCL sigma=0", rows, base_predictions + rng.normal(0, 0.005, len(rows)))
    far = _outcome("CCL sigma=0", rows, gold + rng.normal(0, 1.5, len(rows)))
    train = ccl.pair_conditions(data.load_csts("train", data_dir)).quadruples[:200]
    changes = ccl.sigma_changes_weights(train, 0.75, 0.0)
    assert changes.holds  # labels below 0.75 get weight 1 - l at sigma 0.75, 0 at sigma 0
    assert "the share of the gradient those weights reach was not probed" in changes.evidence
    assert not ccl.sigma_changes_weights(train, 0.75, 0.75).holds
    assert not ccl.sigma_changes_weights(train, 1.0, 0.99).holds or any(
        ccl.scale_label(q.label_high) == 0.99 for q in train
    )  # C-STS labels are multiples of 0.25: nothing lies in [0.99, 1)
    share = ccl.GradientShare("divisor", 3.0, 1 / 3, 0.25, 0.07, 2)  # BCL 0.25x the label terms, 7% same-pair
    probed = ccl.sigma_changes_weights(train, 0.75, 0.0, share)
    assert "at most about 1.4% of the gradient at h" in probed.evidence  # 7% x 0.25 / 1.25
    assert ccl.sigma_reach(share) == pytest.approx(0.014) and ccl.sigma_acts(share).holds
    # Section 4.5.1: "the optimal effect cannot be achieved" with sigma = 0 -> Table 2's sigma beats it (direction)
    kw = {"table2_sigma": 0.75, "sigma": 0.0, "paper_difference": 0.9, "quadruples": train}
    same = ccl.sigma_claim("Table 5, m bi-encoder: CCL sigma=0.75 > sigma=0", base, near, share=share, **kw)
    assert same["test"] == "direction" and same["paper_direction"] == 1 and same["verdict"] != "equivalent"
    assert same["paper_quote"] == ccl.quotes.SIGMA_ZERO and "cannot be achieved" in same["paper_quote"]
    assert same["verdict"] == "no meaningful effect"  # a tiny difference, wholly inside half the paper's +0.90
    assert (
        same["smallest_effect"] == pytest.approx(0.45)
        and "half the paper's difference +0.9" in (same["smallest_effect_reason"])
    )
    worse = ccl.sigma_claim("Table 5, m bi-encoder: CCL sigma=0.75 > sigma=0", far, base, **kw)
    assert worse["verdict"] == "contradicted"  # sigma = 0 clearly ahead, beyond the smallest effect
    other = ccl.sigma_claim("x", base, near, **{**kw, "sigma": 1.0})
    assert other["paper_quote"] == ccl.quotes.SIGMA_OTHER
    # sigma's mechanism barely acts (the cpu run's probe: 7% of BCL's push x 12% BCL's part, under 1%): not tested
    faint = ccl.GradientShare("divisor", 3.0, 1 / 3, 0.135, 0.0705, 2)
    idle_sigma = ccl.sigma_claim("Table 5, m bi-encoder: CCL sigma=0.75 > sigma=0", far, base, share=faint, **kw)
    assert idle_sigma["verdict"] == "not tested" and not ccl.sigma_acts(faint).holds
    assert "measured 0.84%" in idle_sigma["not_tested_because"] and "floor 1%" in idle_sigma["not_tested_because"]
    assert (
        ccl.why_not_tested(idle_sigma)
        == "sigma's weights reach at least 1% of the gradient (measured 0.84%) does not hold"
    )
    assert ccl.why_not_tested(same) == ""
    # Figure 2: robust to tau, with a margin below the smallest effect Sections 4.4-4.5 read as real (0.60)
    reason, effect = ccl.robustness_margin("bi", "SimCSE-base", 0.5)
    assert effect == pytest.approx(46.9 - 46.3) and "(Table 4, w/o BCL): +-0.5 stays below it" in reason
    tau = {"arch": "bi", "row": "SimCSE-base", "dev_gates": ccl.arm_gates(base, "CCL", near, "CCL tau=10")}
    kept = ccl.tau_claim("robust to tau", base, near, margin=0.5, **tau)
    assert kept["test"] == "equivalence" and kept["verdict"] == "equivalent" and kept["margin_reason"] == reason
    assert kept["reachability"].startswith("equivalence reachable")
    assert abs(kept["low"]) < 0.5 and abs(kept["high"]) < 0.5
    moved = ccl.tau_claim("robust to tau", base, far, margin=0.5, **tau)
    assert moved["verdict"] == "contradicted" and moved["low"] > 0.5
    wide = ccl.tau_claim("robust to tau", base, near, margin=1.0, **tau)  # the paper's 0.60 inside +-1
    assert wide["verdict"] == "not tested" and "+0.60 lies inside the margin +-1" in wide["not_tested_because"]
    tri = ccl.tau_claim("robust to tau", base, near, margin=0.5, **{**tau, "arch": "tri"})
    assert tri["test"] == "no direction" and tri["verdict"] == "unresolved"  # the paper claims no tri robustness
    noisy = _outcome("CCL tau=10", rows, base_predictions + rng.normal(0, 0.3, len(rows)))
    unreachable = ccl.tau_claim("robust to tau", base, noisy, margin=0.5, **tau)
    assert unreachable["reachability"].startswith("equivalence not reachable at this size")  # one seed: too wide
    assert unreachable["verdict"] != "equivalent"
    stuck = _outcome("CCL tau=10", rows, base_predictions, best_step=0, weight_change=0.0)
    gates = ccl.arm_gates(base, "CCL", stuck, "CCL tau=10")
    assert ccl.tau_claim("robust", base, stuck, margin=0.5, **{**tau, "dev_gates": gates})["verdict"] == "not tested"


def test_appendix_a_is_not_tested_when_over_estimation_never_occurs(validation_rows):
    quads = ccl.pair_conditions(validation_rows).quadruples
    groups = ccl.quadruple_groups(quads)
    none = np.zeros(len(quads), dtype=bool)
    row = ccl.count_claim("CCL over-estimates less", none, none, -1, groups=groups)
    assert row["paper_quote"] == ccl.quotes.APPENDIX_A and row["kind"] == "paper"
    assert row["verdict"] == "not tested" and row["difference"] == 0
    assert f"0 of {len(quads)} cases (needs >= 4)" in row["not_tested_because"]
    three = none.copy()
    three[:3] = True
    assert ccl.count_claim("fewer", none, three, -1, groups=groups)["verdict"] == "not tested"  # cannot resolve
    many = none.copy()
    many[::10] = True
    tested = ccl.count_claim("fewer", {0: none, 1: none}, {0: many, 1: many}, -1, groups=groups)
    assert tested["verdict"] == "supported" and tested["seeds"] == 2
    uneven = ccl.count_claim("fewer", {0: none, 1: none}, {0: three, 1: none}, -1, groups=groups)
    assert "0 of" in uneven["not_tested_because"] and "per seed 3, 0" in uneven["not_tested_because"]


def test_fewest_resolvable_count_is_where_the_count_interval_first_excludes_zero():
    n = ccl.fewest_resolvable_count()
    assert n == 4
    empty = np.zeros(1211, dtype=bool)
    for flagged, excludes in ((n, True), (n - 1, False)):
        flags = empty.copy()
        flags[:flagged] = True
        for seed in range(3):
            _, low, _ = ccl.paired_count_difference(flags, empty, n_resamples=2000, seed=seed)
            assert (low > 0) == excludes, (flagged, seed)
    with pytest.raises(ValueError, match="level"):
        ccl.fewest_resolvable_count(1.0)


def test_run_flags_and_wide_gaps():
    rng = np.random.default_rng(4)
    quads = [ccl.Quadruple(f"s{i}", "t", "x", "y", 5.0 - i % 3, 1.0 + i % 2) for i in range(300)]
    predictions = {}
    for i, q in enumerate(quads):
        q = ccl.Quadruple(q.sent1, q.sent2, "x", "y", q.label_high, q.label_low, f"f:{2 * i}", f"f:{2 * i + 1}")
        quads[i] = q
        predictions[q.source_high], predictions[q.source_low] = rng.uniform(-1, 1, 2)
    count, flags = ccl.run_flags(quads, predictions)
    assert count == ccl.count_overestimated(*ccl.quadruple_scores(quads, predictions))
    assert flags.sum() == count.either > 0
    wide, largest = ccl.wide_gaps(quads, predictions)
    assert wide >= count.either and largest <= 2  # both equations need cos_pos - cos_neg > 0.25
    cos_pos, cos_neg, _, _ = ccl.quadruple_scores(quads, predictions)
    assert not flags[(cos_pos - cos_neg) <= 0.25].any()


def test_the_notebooks_equivalence_margin_stays_below_the_papers_smallest_effect():
    """A robustness margin that contains an effect the paper reads as real could not tell it from none."""
    import papermill

    from stsnb.runs import plans

    parameters = papermill.inspect_notebook(str(plans.NOTEBOOKS_DIR / "40_ccl_csts.ipynb"))
    margin = float(parameters["equivalence_margin"]["default"])
    _, effect = ccl.robustness_margin("bi", "SimCSE-base", margin)
    assert 0 < margin < abs(effect)


def test_table4_trains_on_the_seeds_ccl_trained_on():
    assert ccl.ablation_seeds_of([0, 1, 2], 3) == [0, 1, 2]
    assert ccl.ablation_seeds_of([0, 1, 2], 1) == [0]
    assert ccl.ablation_seeds_of([5], 3) == [5]  # CCL on one seed: each ablation beside it, on that seed
    with pytest.raises(ValueError, match="ablation_seeds must be at least 1"):
        ccl.ablation_seeds_of([0], 0)


def test_the_main_claim_is_table3_on_the_bi_encoder_whatever_the_run_shows():
    from stsnb.evaluation import main_claims

    (main,) = main_claims.main_claims_of("40_ccl_csts")
    assert main is ccl.MAIN_CLAIMS[0] and main.statement == "Table 3: CCL beats the prior method (QuMSE), bi-encoder"
    rows = [
        {"claim": "Table 3, m tri-encoder: CCL > QuMSE", "main_claim": False},
        {"claim": "Table 4, m bi-encoder: CCL > CCL w/o W-ACL", "main_claim": False, "verdict": "supported"},
        {"claim": "Table 3, m bi-encoder: CCL > QuMSE", "main_claim": True, "verdict": "unresolved", "seeds": 3},
    ]
    assert main.row_in(rows) is rows[2]  # never the W-ACL ablation, however clear its verdict
    assert main_claims.main_claim_text(main, rows).endswith("bi-encoder: unresolved (3 seeds)")
    ccl.check_ablation_seeds(1)
    with pytest.raises(ValueError, match="ablation_seeds must be at least 1"):
        ccl.check_ablation_seeds(0)
