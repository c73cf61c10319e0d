"""STS-Regression: head and concatenations, clamp, labels, loss dispatch, real training runs, de-duplication."""

from __future__ import annotations

import math

import pytest
import torch

from stsnb import data
from stsnb.evaluation import evaluate
from stsnb.models import loading as models
from stsnb.papers import sts_regression as reg
from stsnb.papers.sts_regression import memory as table4_memory
from stsnb.training import losses, param_groups, train
from stsnb.training.config import TrainConfig


@pytest.fixture(scope="module")
def snli_pairs():
    return list(data.load_snli("dev"))


@pytest.fixture(scope="module")
def filtered():
    return reg.filtered_sts_train("raw")


# ---- head and concatenations (Section 3.1, Table 6) -----------------------------------------------------------


@pytest.mark.parametrize(("how", "width"), [("(u,v,|u-v|)", 3), ("(u,v)", 2), ("|u-v|", 1)])
def test_concatenations_have_the_documented_layout(how, width):
    u, v = torch.tensor([[1.0, -2.0]]), torch.tensor([[3.0, 1.0]])
    out = reg.concatenate(u, v, how)
    assert out.shape == (1, 2 * width) and reg.concat_width(2, how) == 2 * width
    expected = {"(u,v,|u-v|)": [1.0, -2.0, 3.0, 1.0, 2.0, 3.0], "(u,v)": [1.0, -2.0, 3.0, 1.0], "|u-v|": [2.0, 3.0]}
    assert out[0].tolist() == expected[how]


def test_unknown_concatenation_and_mismatched_shapes_raise():
    with pytest.raises(ValueError, match="concatenation must be one of"):
        reg.concatenate(torch.zeros(1, 2), torch.zeros(1, 2), "u*v")
    with pytest.raises(ValueError, match="same shape"):
        reg.concatenate(torch.zeros(1, 2), torch.zeros(1, 3))


def test_regression_head_has_one_output_and_classifier_k(minilm):
    regression = reg.SiameseModel(minilm)
    classifier = reg.SiameseModel(minilm, outputs=3)
    ablation = reg.SiameseModel(minilm, "|u-v|")
    assert regression.head.weight.shape == (1, 3 * minilm.dim)  # Linear(3d, 1), Section 3.1 item 2
    assert classifier.head.weight.shape == (3, 3 * minilm.dim)
    assert ablation.head.weight.shape == (1, minilm.dim)
    with torch.no_grad():
        first, second = ["A man is playing a guitar .", "A dog runs ."], ["A man plays music .", "A cat sleeps ."]
        assert regression(first, second).shape == (2,)
        assert classifier(first, second).shape == (2, 3)
        # the pair score is the head on (u, v, |u-v|) of the shared encoder's embeddings
        u, v = minilm(first), minilm(second)
        assert torch.allclose(regression(first, second), regression.score(u, v), atol=1e-5)


# ---- Table 1's task: the paper's NLI or the labelled STS analogue ----------------------------------------------


def test_the_sts_analogue_classifies_scores_rounded_to_six_classes_and_nli_keeps_its_three(filtered):
    sts, nli = reg.table1_task("sts"), reg.table1_task("nli")
    assert (sts.classes, sts.label_range, nli.classes, nli.label_range) == (6, (0.0, 5.0), 3, (0.0, 2.0))
    targets = torch.tensor([p.target for p in filtered.pairs[:200]])
    ids = sts.class_ids(targets)
    assert ids.min() >= 0 and ids.max() <= 5 and torch.all((ids - targets).abs() <= 0.5)  # the nearest label
    assert nli.class_ids(torch.tensor([0.0, 1.0, 2.0])).tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="table1_task must be one of"):
        reg.table1_task("snli")


def test_cross_entropy_on_sts_scores_is_the_softmax_loss_of_the_nearest_class():
    """Cross entropy -log softmax(z)_y (Section 3.1's classifier) with y the score rounded: 3.8 is class 4, 1.2 is 1."""
    logits = torch.tensor([[0.1, 0.3, -0.2, 0.5, 1.5, 0.0], [2.0, 0.4, 0.1, 0.0, -1.0, 0.2]])
    expected = -(torch.log_softmax(logits, dim=-1)[[0, 1], [4, 1]]).mean()
    assert torch.allclose(reg.LossSpec("cross_entropy")(logits, torch.tensor([3.8, 1.2])), expected)


def test_the_sts_task_gives_cross_entropy_a_six_way_head_and_reads_accuracy_on_its_classes(minilm, filtered):
    model = reg.seeded_model(minilm, reg.LossSpec("cross_entropy"), seed=0, classes=reg.STS_TASK.classes)
    assert model.head.weight.shape == (6, 3 * minilm.dim)
    heldout = filtered.pairs[:4]
    gold = reg.STS_TASK.class_ids(torch.tensor([p.target for p in heldout]))
    exact = torch.tensor([p.target for p in heldout])
    assert reg.heldout_accuracy(exact, heldout, reg.STS_TASK) == pytest.approx(100.0)  # regression, rounded
    wrong = torch.nn.functional.one_hot((gold + 1) % 6, 6).float()  # every argmax one class off
    assert reg.heldout_accuracy(wrong, heldout, reg.STS_TASK) == pytest.approx(0.0)


# ---- clamp (Section 3.3) and labels (Section 4.1) -------------------------------------------------------------


def test_clamped_fraction_counts_the_predictions_the_clamp_moves():
    pred = torch.tensor([-0.7, -0.1, 0.4, 1.6, 2.8])
    assert reg.clamped_fraction(pred, reg.NLI_RANGE, "both") == pytest.approx(3 / 5)
    assert reg.clamped_fraction(pred, reg.NLI_RANGE, "lower") == pytest.approx(2 / 5)
    assert reg.clamped_fraction(pred, reg.NLI_RANGE, "none") == 0.0


def test_clamp_modes_values_and_zero_gradient_outside_the_range():
    pred = torch.tensor([-0.7, 0.4, 1.6, 2.8], requires_grad=True)
    both = reg.clamp_prediction(pred, reg.NLI_RANGE, "both")
    assert both.tolist() == pytest.approx([0.0, 0.4, 1.6, 2.0])
    both.sum().backward()
    assert pred.grad.tolist() == [0.0, 1.0, 1.0, 0.0]
    pred.grad = None
    lower = reg.clamp_prediction(pred, reg.NLI_RANGE, "lower")  # the official scripts: only at 0
    assert lower.tolist() == pytest.approx([0.0, 0.4, 1.6, 2.8])
    lower.sum().backward()
    assert pred.grad.tolist() == [0.0, 1.0, 1.0, 1.0]
    assert torch.equal(reg.clamp_prediction(pred, reg.NLI_RANGE, "none"), pred)
    with pytest.raises(ValueError, match="clamp must be one of"):
        reg.clamp_prediction(pred, reg.NLI_RANGE, "upper")


def test_clamped_overshoot_of_the_top_label_costs_nothing():
    # the paper's example: label 3 on a 0..3 scale, prediction 3.57 -> no loss after the clamp
    pred = torch.tensor([3.57], requires_grad=True)
    loss = losses.smooth_k2(reg.clamp_prediction(pred, (0.0, 3.0), "both"), torch.tensor([3.0]), k=2, x0=0.25)
    loss.backward()
    assert loss.item() == 0.0 and pred.grad.item() == 0.0
    unclamped = losses.smooth_k2(pred, torch.tensor([3.0]), k=2, x0=0.25)
    assert unclamped.item() == pytest.approx(2 * (0.57 - 0.25) ** 2)


def test_nli_labels_map_to_0_1_2_by_similarity(snli_pairs):
    pairs = reg.nli_training_pairs(snli_pairs[:300])
    by_label = {}
    for source, pair in zip(snli_pairs[:300], pairs, strict=True):
        by_label.setdefault(source.label, set()).add(pair.target)
        assert (pair.sent1, pair.sent2) == (source.premise, source.hypothesis)
    assert by_label == {"contradiction": {0.0}, "neutral": {1.0}, "entailment": {2.0}}
    sbert = reg.nli_training_pairs(snli_pairs[:300], reg.SENTENCE_BERT_LABELS)
    assert {p.target for s, p in zip(snli_pairs, sbert, strict=False) if s.label == "neutral"} == {2.0}


def test_sick_scores_are_rescaled_to_0_5(filtered):
    sick = [p for p in filtered.report.kept if p.dataset == "SICK"]
    rescaled = reg.sts_training_pairs(sick[:50])
    assert [p.target for p in rescaled] == pytest.approx([5 * (p.score - 1) / 4 for p in sick[:50]])
    assert all(0.0 <= p.target <= 5.0 for p in filtered.pairs)


def test_regression_predictions_round_to_the_nearest_label():
    assert reg.classify(torch.tensor([-0.4, 0.49, 0.51, 1.333, 2.875, 3.2])).tolist() == [0, 0, 1, 1, 2, 2]
    assert reg.classify(torch.tensor([[0.1, 2.0, 0.3], [5.0, 0.0, 0.0]])).tolist() == [1, 0]


# ---- losses (Eq. 1-2, Tables 1-2) -----------------------------------------------------------------------------


def test_loss_dispatch_calls_the_loss_functions():
    generator = torch.Generator().manual_seed(0)
    pred, target = 3 * torch.rand(8, generator=generator), torch.randint(0, 3, (8,), generator=generator).float()
    logits = torch.randn(8, 3, generator=generator)
    assert reg.LossSpec("l1")(pred, target) == losses.l1_loss(pred, target)
    assert reg.LossSpec("mse")(pred, target) == losses.mse_loss(pred, target)
    assert reg.LossSpec("translated_relu", 2.5, 0.25)(pred, target) == losses.translated_relu(pred, target, 2.5, 0.25)
    assert reg.LossSpec("smooth_k2", 2.0, 0.25)(pred, target) == losses.smooth_k2(pred, target, 2.0, 0.25)
    assert reg.LossSpec("cross_entropy")(logits, target) == losses.softmax_cross_entropy(logits, target.long())
    with pytest.raises(ValueError, match="loss must be one of"):
        reg.LossSpec("huber")


def test_table2_hyperparameters():
    assert reg.table2_loss("smooth_k2", "BERT-base") == reg.LossSpec("smooth_k2", 2.0, 0.25)
    assert reg.table2_loss("translated_relu", "BERT-base") == reg.LossSpec("translated_relu", 2.5, 0.25)
    assert reg.table2_loss("smooth_k2", "RoBERTa-base") == reg.LossSpec("smooth_k2", 3.0, 0.25)
    assert reg.table2_loss("translated_relu", "RoBERTa-base") == reg.LossSpec("translated_relu", 1.0, 0.25)
    assert reg.table2_loss("mse", "RoBERTa-base") == reg.LossSpec("mse")
    assert reg.head_outputs_for(reg.LossSpec("cross_entropy")) == 3 and reg.head_outputs_for(reg.LossSpec("l1")) == 1


def test_layerwise_lr_decay_from_the_top_layer(minilm):
    model = reg.SiameseModel(minilm)
    groups = param_groups.layerwise_param_groups(model, lr=1.0, decay=0.5, weight_decay=0.01)
    lr_of = {id(p): (g["lr"], g["weight_decay"]) for g in groups for p in g["params"]}
    named = dict(model.named_parameters())
    top = minilm.backbone.config.num_hidden_layers - 1
    assert lr_of[id(named[f"encoder.backbone.encoder.layer.{top}.attention.self.query.weight"])] == (1.0, 0.01)
    assert lr_of[id(named["encoder.backbone.encoder.layer.0.attention.self.query.weight"])] == (0.5**top, 0.01)
    assert lr_of[id(named["encoder.backbone.encoder.layer.0.attention.self.query.bias"])] == (0.5**top, 0.0)
    assert lr_of[id(named["head.weight"])] == (1.0, 0.01)  # outside the layers: base LR, as the official code
    assert len(lr_of) == sum(1 for p in model.parameters() if p.requires_grad)
    with_head = param_groups.layerwise_param_groups(model, lr=1.0, decay=0.5, weight_decay=0.01, head_lr=7.0)
    head_lr = {id(p): g["lr"] for g in with_head for p in g["params"]}
    assert head_lr[id(named["head.weight"])] == head_lr[id(named["head.bias"])] == 7.0
    assert head_lr[id(named["encoder.backbone.encoder.layer.0.attention.self.query.weight"])] == 0.5**top


# ---- one training step by hand (notebook 20's visible step) ----------------------------------------------------


def test_inside_buffer_counts_the_predictions_within_x0_of_their_label():
    prediction, target = torch.tensor([0.1, 1.0, 2.3, 4.8]), torch.tensor([0.0, 0.0, 2.0, 5.0])
    assert reg.inside_buffer(prediction, target, 0.25) == pytest.approx(0.5)  # |0.1| and |0.2| are within 0.25
    assert reg.inside_buffer(prediction, target, 0.0) == 0.0  # L1 / MSE: no buffer
    loss = losses.smooth_k2(prediction, target, 2.0, 0.25, reduction="none")
    assert loss[0] == loss[3] == 0 and (loss[1:3] > 0).all()  # inside the buffer Eq. 2 is zero
    assert math.isnan(reg.inside_buffer(torch.zeros(0), torch.zeros(0), 0.25))
    with pytest.raises(ValueError, match="shapes differ"):
        reg.inside_buffer(torch.zeros(2), torch.zeros(3), 0.25)


def test_one_smooth_k2_step_on_real_pairs_lowers_the_loss_of_that_batch(filtered):
    """Notebook 20's visible step: Eq. 2 on a real batch with dropout on (``training_step.same_dropout``: the same
    masks before and after), backward, one AdamW step with Table 1's groups, and the same batch's loss after it is
    lower; the head gets ``head_lr``, the encoder's top layer ``lr``."""
    from stsnb.training import training_step

    encoder = reg.load_backbone("minilm-l6", max_length=64)  # its own copy: the step changes its weights
    model = reg.seeded_model(encoder, seed=0).train()  # dropout on (MiniLM has 0.1), as in training
    k2, batch = reg.table2_loss("smooth_k2"), filtered.pairs[:16]
    optimizer = reg.step_optimizer(model, 2e-4, head_lr=1e-3)
    lr_of = {id(p): g["lr"] for g in optimizer.param_groups for p in g["params"]}
    assert lr_of[id(model.head.weight)] == 1e-3
    named = dict(model.named_parameters())
    top = encoder.backbone.config.num_hidden_layers - 1
    assert lr_of[id(named[f"encoder.backbone.encoder.layer.{top}.output.dense.weight"])] == 2e-4
    clamped, _ = reg.scored_batch(model, batch, reg.STS_RANGE, "both")
    assert clamped.min() >= 0 and clamped.max() <= 5  # Section 3.3's clamp, as in training
    with training_step.same_dropout(0), torch.no_grad():
        unchanged = k2(*reg.scored_batch(model, batch, reg.STS_RANGE))
    with training_step.same_dropout(0):
        predicted, gold = reg.scored_batch(model, batch, reg.STS_RANGE)  # no clamp: every pair passes a gradient
    assert gold.tolist() == pytest.approx([p.target for p in batch])
    loss = k2(predicted, gold)
    assert loss.item() == pytest.approx(unchanged.item(), rel=1e-6)  # the same masks: no step, no change
    loss.backward()
    optimizer.step()
    with training_step.same_dropout(0), torch.no_grad():
        after = k2(*reg.scored_batch(model, batch, reg.STS_RANGE)).item()
    assert after < loss.item()


# ---- training on real data ------------------------------------------------------------------------------------


def spearman_of_cosines_by_hand(encoder, pairs) -> float:
    """Spearman x100 (scipy) of the pairs' cosines, the encoder in eval mode: what picks the best checkpoint."""
    from scipy.stats import spearmanr

    was_training = encoder.training
    encoder.eval()
    with torch.no_grad():
        u, v = encoder([p.sent1 for p in pairs]), encoder([p.sent2 for p in pairs])
    encoder.train(was_training)
    cosines = torch.nn.functional.cosine_similarity(u, v, dim=1).double().numpy()
    return 100 * float(spearmanr(cosines, [p.score for p in pairs])[0])


def test_short_real_training_run_changes_weights_and_scores_dev(snli_pairs):
    encoder = reg.load_backbone("minilm-l6", max_length=64)
    torch.manual_seed(0)
    model = reg.SiameseModel(encoder)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    pairs = data.sample(reg.nli_training_pairs(snli_pairs), 48, seed=0)
    dev = list(data.load_stsb("dev"))[:60]
    config = TrainConfig(batch_size=16, lr=5e-5, eval_every=2, progress=False, warmup_ratio=0.0)
    result = reg.train_siamese(model, pairs, reg.table2_loss("smooth_k2"), config, dev_pairs=dev)
    assert result.steps == 3
    dev_scores = [row["dev"] for row in result.history if "dev" in row]
    assert len(dev_scores) >= 2 and result.best_score == max(dev_scores)
    # fit() restored the best weights: the dev Spearman recomputed now is the best one recorded
    assert evaluate.dev_spearman(model.encoder, dev) == pytest.approx(result.best_score, abs=1e-6)
    assert spearman_of_cosines_by_hand(model.encoder, dev) == pytest.approx(result.best_score, abs=1e-3)  # scipy
    changed = [k for k, v in model.state_dict().items() if not torch.equal(v, before[k])]
    assert "head.weight" in changed and any(k.startswith("encoder.backbone.encoder.layer.5") for k in changed)


def test_frozen_stage_trains_only_the_head(snli_pairs, minilm):
    torch.manual_seed(0)
    model = reg.SiameseModel(minilm)
    encoder_before = {k: v.clone() for k, v in minilm.state_dict().items()}
    head_before = model.head.weight.detach().clone()
    pairs = reg.nli_training_pairs(snli_pairs[:64])
    loss = reg.LossSpec("smooth_k2", 2.0, 0.2)
    config = TrainConfig(batch_size=16, lr=1e-2, progress=False)
    with torch.no_grad():
        start = loss(
            reg.clamp_prediction(reg.predict(model, pairs), reg.NLI_RANGE), torch.tensor([p.target for p in pairs])
        )
    reg.train_head_frozen(model, pairs, loss, TrainConfig(**{**config.__dict__, "epochs": 5}))
    end = loss(reg.clamp_prediction(reg.predict(model, pairs), reg.NLI_RANGE), torch.tensor([p.target for p in pairs]))
    assert not torch.equal(model.head.weight.detach(), head_before)
    assert all(torch.equal(v, encoder_before[k]) for k, v in minilm.state_dict().items())
    assert end < start


def test_contrast_step_is_info_nce_of_the_pairs(minilm):
    batch = [reg.TrainingPair("a man plays a guitar .", "a man is playing music .", 4.6),
             reg.TrainingPair("a dog runs in a field .", "a dog is running .", 4.2)]  # fmt: skip
    with torch.no_grad():
        value = reg.contrast_loss(0.05)(minilm, batch)
        expected = losses.info_nce(minilm([p.sent1 for p in batch]), minilm([p.sent2 for p in batch]), temperature=0.05)
    assert value.item() == pytest.approx(expected.item(), abs=1e-5)


def test_sampled_sts_scores_cover_the_tasks(minilm):
    scores = evaluate.sts_scores(minilm, "stsb,sts16", max_pairs=40, seed=0)
    assert set(scores) == {"STSBenchmark", "STS16", "avg"}
    assert scores["avg"] == pytest.approx((scores["STSBenchmark"] + scores["STS16"]) / 2)
    assert scores["STSBenchmark"] > 50  # all-MiniLM-L6-v2 is a strong STS model even on 40 pairs


def test_gradient_checkpointing_reaches_the_backbone_and_leaves_loss_and_gradients_unchanged():
    """Notebook 20's ``gradient_checkpointing`` (issue 18): ``load_backbone`` hands it to the encoder, whose layers
    then run again in the backward pass, and the Smooth K2 loss and its gradients on real STS-B dev pairs are the
    same (dropout off, so both passes see the same network)."""
    pairs = reg.sts_training_pairs(list(data.load_stsb("dev"))[:4])
    step = reg.pair_loss(reg.LossSpec("smooth_k2", 3.0, 0.2), "both", reg.STS_RANGE)
    results = {}
    for checkpointing in (False, True):
        encoder = reg.load_backbone("minilm-l6", 32, gradient_checkpointing=checkpointing)
        assert models.activation_checkpointing(encoder.backbone) is checkpointing  # is_gradient_checkpointing (4.x)
        model = reg.seeded_model(encoder, seed=0).train()  # checkpointing acts in training mode only
        for module in model.modules():
            if isinstance(module, torch.nn.Dropout):
                module.p = 0.0
        calls = []
        encoder.backbone.encoder.layer[0].attention.register_forward_hook(lambda *_, seen=calls: seen.append(1))
        loss = step(model, pairs)
        loss.backward()
        grad = encoder.backbone.encoder.layer[0].attention.self.query.weight.grad
        results[checkpointing] = (loss.detach(), grad.clone(), model.head.weight.grad.clone(), len(calls))
    (loss_off, grad_off, head_off, calls_off), (loss_on, grad_on, head_on, calls_on) = results[False], results[True]
    assert (calls_off, calls_on) == (1, 2)  # the first attention block ran again in backward
    assert grad_off.abs().sum() > 0 and loss_off > 0
    assert torch.allclose(loss_on, loss_off)
    assert torch.allclose(grad_on, grad_off, rtol=1e-5, atol=1e-7)
    assert torch.allclose(head_on, head_off, rtol=1e-5, atol=1e-7)


def test_stage2_config_carries_the_schedule_factor_into_training():
    """``stage2_schedule_steps_factor`` (the official tune-jina-nomic.py counts 2x the steps): the stage 2 /
    +Contrast config gets it, the rest unchanged, and ``fit``'s learning rate no longer decays to zero."""
    base = TrainConfig(batch_size=1, lr=1.0, warmup_ratio=0.2, eval_every=1, eval_at_start=False, progress=False)
    assert reg.stage2_config(base) == base
    official = reg.stage2_config(base, 2)
    assert official.schedule_steps_factor == 2 and official == TrainConfig(
        **{**base.__dict__, "schedule_steps_factor": 2}
    )
    with pytest.raises(ValueError, match="schedule_steps_factor"):
        reg.stage2_config(base, 0.5)
    last_lr = {}
    for factor, config in ((1, base), (2, official)):
        torch.manual_seed(0)
        layer = torch.nn.Linear(1, 1)
        result = train.fit(
            layer, lambda m, batch: m(torch.tensor([[float(b)] for b in batch])).pow(2).mean(), list(range(10)), config
        )
        last_lr[factor] = result.history[-1]["lr"]
    assert last_lr[1] == pytest.approx(0.0, abs=1e-9)  # 10 steps counted as 10: decayed to zero
    assert last_lr[2] == pytest.approx(10 / 16)  # counted as 20: warmup 4, then 10 of 16 decay steps left


# ---- data (Section 4.2, Appendix A) ---------------------------------------------------------------------------


def test_dedup_removes_test_pairs_and_matches_the_paper_counts_on_raw_text(filtered):
    assert filtered.removed > 0 and filtered.removed_by_dataset()["SICK"] > 0
    table7 = (
        "A man in a blue jumpsuit is courageously performing a wheelie on a motorcycle",
        "The man is doing a wheelie with a motorcycle on ground which is mostly barren",
    )
    removed = {(p.sent1.strip(), p.sent2.strip()) for p in filtered.report.removed}
    kept = {(p.sent1.strip(), p.sent2.strip()) for p in filtered.pairs}
    assert table7 in removed and table7 not in kept  # Appendix A, Table 7 (reversed order in the test set)
    section42 = reg.REPORTED.lookup("Section 4.2")
    expected = {n.task: n.value for n in section42}
    assert len(filtered.pairs) == expected["pairs_after_dedup"]
    assert len(reg.positive_pairs(filtered.pairs, 4.0)) == expected["pairs_score_ge_4"]


def test_nli_source_csv_and_unknown_source(tmp_path):
    path = tmp_path / "nli_012.csv"
    path.write_text("gold_label,sentence1,sentence2\n0,a b,c d\n2,e f,g h\n1,i j,k l\n")
    pairs = data.load_nli(str(path))
    assert [p.label for p in pairs] == ["contradiction", "entailment", "neutral"]
    assert [p.target for p in reg.nli_training_pairs(pairs)] == [0.0, 2.0, 1.0]
    with pytest.raises(RuntimeError, match="neither"):
        data.load_nli(str(tmp_path / "missing.csv"))


# ---- Table 4 memory ---------------------------------------------------------------------------------------------


def kept_for_backward_bytes(run: table4_memory.MemoryRun) -> int:
    """A lower bound on the float32 activations one InfoNCE step keeps for its backward pass.

    Each encoder layer's Linear weights need their inputs for the weight gradients: the layer input
    (``tokens x hidden``, for the Q/K/V projections) and the feed-forward's activated intermediate
    (``tokens x intermediate``, for its output projection). Attention scores, norms and dropout masks come on top.
    """
    from transformers import AutoConfig

    from stsnb.models import loading as models

    config = AutoConfig.from_pretrained(models.resolve(run.model).path)
    tokens = 3 * run.batch_size * run.max_length  # anchor, positive, hard negative, padded to max_length
    return 4 * config.num_hidden_layers * tokens * (config.hidden_size + config.intermediate_size)


@pytest.mark.long  # measures Table 4 in fresh processes (18 s)
@pytest.mark.slow
def test_memory_run_in_a_fresh_process_reports_peak_and_sequences():
    small_run = table4_memory.MemoryRun("infonce", batch_size=2, max_length=16, steps=1)
    large_run = table4_memory.MemoryRun("infonce", batch_size=16, max_length=128, steps=1)
    small, large = table4_memory.measure(small_run), table4_memory.measure(large_run)
    assert small.sequences_per_step == 6 and large.sequences_per_step == 48  # anchor, positive, hard negative
    assert small.peak_bytes >= small.baseline_bytes > 0
    # the larger step adds at least the extra activations its backward pass must keep (266 MiB for MiniLM)
    extra = kept_for_backward_bytes(large_run) - kept_for_backward_bytes(small_run)
    assert large.training_bytes - small.training_bytes >= extra, (small.row(), large.row(), extra / 2**20)
    assert large.row()["peak_mb"] == pytest.approx(large.peak_bytes / 2**20)
