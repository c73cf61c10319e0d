"""HiCL's protocol switches (notebook 30): activation checkpointing in every training run, on the real MiniLM."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from stsnb.models import loading as models
from stsnb.papers import hicl

SENTENCES = [
    "a man plays a guitar on a small stage in front of a quiet crowd of people",
    "a dog runs across the green field",
    "the committee met on tuesday and agreed to postpone the vote until the next session of the council",
    "two women are sitting on a bench",
]


def _minilm(**settings) -> models.SentenceEncoder:
    return hicl.BackboneSettings("minilm-l6", "mean", None, False, 64, **settings).load()


def test_gradient_checkpointing_reaches_the_backbone_and_leaves_the_gradients_unchanged():
    """``gradient_checkpointing`` (notebook 30's parameter) goes through ``BackboneSettings.load``, which every
    training run of the notebook (``run_training``) uses, and changes memory, not the gradient of a +HiCL loss."""
    grads = {}
    for checkpointing in (False, True):
        encoder = _minilm(gradient_checkpointing=checkpointing)
        assert models.activation_checkpointing(encoder.backbone) is checkpointing
        model = hicl.ContrastiveModel(
            encoder, "simcse", hicl.HiclSettings(True, 8), hicl.ObjectiveSettings(alpha=0.15)
        ).train()
        examples, _ = hicl.make_examples(encoder.tokenizer, SENTENCES, 64, "simcse")
        torch.manual_seed(1)  # the same dropout masks (non-reentrant checkpointing replays the RNG state)
        model(examples).backward()
        grads[checkpointing] = encoder.backbone.encoder.layer[0].attention.self.query.weight.grad.clone()
    assert grads[False].abs().sum() > 0
    torch.testing.assert_close(grads[True], grads[False], rtol=1e-5, atol=1e-7)


# ---- truncation: the paper's (baselines cut at SimCSE's 32 tokens, +HiCL slices the whole sentence) or alike ----


class WordTokenizer:
    """One id per space-separated word; [CLS] = 101 and [SEP] = 102 around an input when asked (BERT's frame)."""

    def __call__(self, texts, add_special_tokens=True):
        def ids(text):
            words = [1000 + len(w) for w in text.split()]
            return [101, *words, 102] if add_special_tokens else words

        if isinstance(texts, str):
            return {"input_ids": ids(texts)}
        return {"input_ids": [ids(t) for t in texts]}

    def decode(self, ids):
        return " ".join("w" * (i - 1000) for i in ids)


def _protocol(**kw) -> hicl.TrainingProtocol:
    from stsnb.training.config import TrainConfig

    backbone = hicl.BackboneSettings("minilm-l6", "mean", None, False, 64)
    return hicl.TrainingProtocol(backbone, TrainConfig(lr=1e-4, seed=7), {"simcse": 0.15, "esimcse": 0.01}, **kw)


def test_paper_truncation_cuts_the_baseline_at_32_input_tokens_and_lets_hicl_read_max_length():
    paper = _protocol(max_length=128)
    assert paper.truncation == "paper" and paper.baseline_max_length == hicl.SIMCSE_MAX_LENGTH == 32
    assert paper.truncated_at(hicl_on=False) == (32, True)  # SimCSE's max_seq_length counts [CLS] and [SEP]
    assert paper.truncated_at(hicl_on=True) == (128, False)
    alike = _protocol(max_length=128, truncation="alike")
    assert alike.truncated_at(False) == alike.truncated_at(True) == (128, False)
    with pytest.raises(ValueError, match="truncation must be one of"):
        _protocol(truncation="simcse")


def test_train_hands_each_arm_its_cut_and_the_runs_seed(monkeypatch):
    calls = []
    monkeypatch.setattr(hicl.protocol, "run_training", lambda *a, **kw: calls.append((a, kw)))
    protocol = _protocol(max_length=96)
    protocol.train("simcse", 3, ["a b"], [], hicl=False)
    protocol.train("simcse", 3, ["a b"], [], hicl=True, alpha=0.5)
    (base_args, base_kw), (hicl_args, hicl_kw) = calls
    assert base_args[8] == 32 and base_kw["count_special_tokens"] and not base_args[3].enabled
    assert hicl_args[8] == 96 and not hicl_kw["count_special_tokens"] and hicl_args[3].enabled
    assert hicl_args[4].alpha == 0.5 and base_args[4].alpha == 0.15
    assert base_args[5].seed == 3 and base_args[5].lr == 1e-4
    with pytest.raises(ValueError, match="unknown override"):
        protocol.train("simcse", 3, ["a b"], [], alpah=0.5)


def test_truncation_summary_counts_what_only_hicl_reads_by_hand():
    sentences = [" ".join(["w"] * n) for n in (10, 30, 31, 40, 200)]
    got = hicl.truncation_summary(WordTokenizer(), sentences, 32, 128, special_tokens=2)
    # 30 sentence tokens kept: 31 -> 1 cut, 40 -> 10 cut, 200 -> min(200, 128) - 30 = 98 cut
    assert got == {
        "sentences": 5,
        "longer": 3,
        "baseline_sentence_tokens": 30,
        "tokens": 10 + 30 + 31 + 40 + 128,
        "tokens_only_hicl_sees": 1 + 10 + 98,
    }
    assert hicl.special_token_count(WordTokenizer()) == 2 and hicl.special_token_count(WordTokenizer(), False) == 0
    text = hicl.protocol.truncation_sentence("paper", got, 32, 128)
    assert "3 of 5 sentences were cut, 45.6% of the tokens only +HiCL saw" in text
    assert "objective alone" in hicl.protocol.truncation_sentence("alike", got, 32, 128)


def test_training_sample_is_the_plain_draw_unless_enriched():
    from stsnb import data

    sentences = [f"s{i}" for i in range(100)]
    counts = [40 if i % 4 == 0 else 10 for i in range(100)]  # 25 long ones
    assert hicl.training_sample(sentences, 20, 5, counts, 30) == data.sample(sentences, 20, 5)
    enriched = hicl.training_sample(sentences, 20, 5, counts, 30, long_share=0.5)
    assert len(set(enriched)) == 20 and sum(counts[int(s[1:])] > 30 for s in enriched) == 10
    assert enriched == hicl.training_sample(sentences, 20, 5, counts, 30, long_share=0.5)  # seeded
    with pytest.raises(ValueError, match="need 30 long"):
        hicl.training_sample(sentences, 40, 5, counts, 30, long_share=0.75)


def test_full_segments_are_the_slices_of_each_sentence():
    tok = WordTokenizer()
    sentences = [" ".join(["w" * k for k in range(1, 8)]), "ww w"]
    got = hicl.full_segment_sentences(tok, sentences, 6, 4)  # 7 words cut to 6, then 4 + 2
    assert got == ["w ww www wwww", "wwwww wwwwww", "ww w"]


def test_the_training_time_ratio_is_set_beside_table12_only_like_for_like():
    from stsnb.papers.hicl import efficiency

    ratio = efficiency.training_speedup({0: 1.8, 1: 1.7, 2: 1.9}, {0: 1.0, 1: 1.0, 2: 1.0})
    same = efficiency.training_sentence(ratio, 1.26, "BERT-base")
    expected = "on the same sentences: 1.80x (median of 3 seeds: seed 0 1.80x, seed 1 1.70x, seed 2 1.90x); the paper's"
    assert expected + " Table 12 (BERT-base): 1.26x" in same
    cut = efficiency.training_sentence(ratio, 1.26, "BERT-base", baseline_cut=32)
    assert "SimCSE cut at 32 tokens" in cut and "not Table 12's quantity" in cut


@pytest.mark.long  # two real training runs (7 s): off the default tier
@pytest.mark.slow
def test_a_real_baseline_reads_32_input_tokens_and_hicl_the_whole_sentence(data_dir):
    """On the real MiniLM tokenizer ([CLS] + [SEP]): the baseline's longest example has 30 sentence tokens."""
    from stsnb import data

    long = [s for s in data.load_wiki(400) if len(s.split()) > 45][:4]
    dev = data.sample(list(data.load_stsb("dev")), 16, 0)
    from stsnb.training.config import TrainConfig

    config = TrainConfig(batch_size=2, lr=1e-5, max_steps=1, eval_every=1, drop_last=True, progress=False)
    protocol = dataclasses.replace(_protocol(max_length=64, eval_tasks="stsb", eval_max_pairs=16), config=config)
    baseline = protocol.train("simcse", 0, long, dev, hicl=False)
    plus = protocol.train("simcse", 0, long, dev, hicl=True)
    assert baseline.longest_example == 30 and plus.longest_example == 64


# ---- Table 13's learning rate per method; SimCSE's MLP head in training only -----------------------------------


def test_method_lrs_reach_each_methods_runs_and_others_keep_lr(monkeypatch):
    calls = []
    monkeypatch.setattr(hicl.protocol, "run_training", lambda *a, **kw: calls.append((a, kw)))
    protocol = _protocol(method_lrs={"simcse": 5e-5, "esimcse": 3e-5}, simcse_mlp_head=True)
    for method in ("simcse", "esimcse", "sncse"):
        for on in (False, True):
            protocol.train(method, 0, ["a b"], [], hicl=on, **({"alpha": 0.01} if method == "sncse" else {}))
    lrs = [(a[2], a[3].enabled, a[5].lr, kw["mlp_head"]) for a, kw in calls]
    assert lrs == [
        ("simcse", False, 5e-5, True),  # both arms of a pair: the method's Table 13 rate, and SimCSE's head
        ("simcse", True, 5e-5, True),
        ("esimcse", False, 3e-5, False),
        ("esimcse", True, 3e-5, False),
        ("sncse", False, 1e-4, False),  # not in method_lrs: config.lr
        ("sncse", True, 1e-4, False),
    ]
    with pytest.raises(ValueError, match="method_lrs for unknown"):
        _protocol(method_lrs={"simcse": 5e-5, "sbert": 1e-5})
    with pytest.raises(ValueError, match="positive"):
        _protocol(method_lrs={"simcse": 0.0})


def test_the_methods_learning_rate_reaches_the_optimizer(monkeypatch):
    seen = []

    class RecordingAdamW(torch.optim.AdamW):
        def __init__(self, params, lr, **kw):
            seen.append(lr)
            super().__init__(params, lr=lr, **kw)

    monkeypatch.setattr(torch.optim, "AdamW", RecordingAdamW)
    protocol = _protocol(method_lrs={"simcse": 5e-5, "esimcse": 3e-5})
    config = dataclasses.replace(protocol.train_config("esimcse", 0), batch_size=2, max_steps=1, progress=False)
    encoder = _minilm()
    examples, _ = hicl.make_examples(encoder.tokenizer, SENTENCES, 64, "esimcse")
    settings = protocol.settings("esimcse", hicl=True)
    hicl.train_method(encoder, examples, "esimcse", *settings, config)
    assert seen == [3e-5]


def test_simcse_mlp_head_is_trained_and_absent_at_evaluation():
    encoder = _minilm()
    settings = hicl.HiclSettings(True, 8), hicl.ObjectiveSettings(alpha=0.15)
    examples, _ = hicl.make_examples(encoder.tokenizer, SENTENCES, 64, "simcse")
    with_head = hicl.ContrastiveModel(encoder, "simcse", *settings, seed=3, mlp_head=True).train()
    without = hicl.ContrastiveModel(encoder, "simcse", *settings, seed=3).train()
    head = with_head.head
    assert isinstance(head, hicl.training.MLPHead) and without.head is None
    # in training: the loss goes through the head (another loss on the same dropout masks) and trains it
    torch.manual_seed(0)
    loss_head = with_head(examples)
    torch.manual_seed(0)
    assert not torch.isclose(loss_head, without(examples))
    loss_head.backward()
    assert head.dense.weight.grad.abs().sum() > 0
    # at evaluation: the sentence encoder the evaluations read has no head parameter and gives the plain pooling
    head_ids = {id(p) for p in head.parameters()}
    assert not head_ids & {id(p) for p in with_head.encoder.parameters()}
    assert head_ids <= {id(p) for p in with_head.parameters()}  # fit's optimizer sees it
    with_head.eval()
    rows = with_head.segments([e.ids for e in examples], with_head.anchor_template).input_ids
    with torch.no_grad():
        pooled = hicl.encode_segments(encoder, rows)
        evaluated = with_head.encoder.encode(SENTENCES[1:2])
        plain = hicl.encode_segments(encoder, [with_head.frame[0] + examples[1].ids + with_head.frame[1]])
    torch.testing.assert_close(evaluated, plain, rtol=1e-4, atol=1e-5)
    assert not torch.allclose(head(pooled), pooled)
    # the same seed gives both arms of a pair the same starting head
    twin = hicl.ContrastiveModel(encoder, "simcse", hicl.HiclSettings(False), settings[1], seed=3, mlp_head=True)
    torch.testing.assert_close(twin.head.dense.weight, head.dense.weight)
    with pytest.raises(ValueError, match="SimCSE's"):
        hicl.ContrastiveModel(encoder, "esimcse", *settings, mlp_head=True)


def test_the_head_follows_the_backbone_to_its_device():
    """On the ``meta`` device (a stand-in for a GPU: a CPU tensor meeting a meta one raises) a SimCSE+HiCL step with
    the head runs and its loss and gradients stay there."""
    from types import SimpleNamespace

    from torch import nn

    class Backbone(nn.Module):
        def __init__(self):
            super().__init__()
            self.config = SimpleNamespace(hidden_size=8)
            self.embed = nn.Embedding(2000, 8)

        def forward(self, input_ids, attention_mask=None, **_):
            return SimpleNamespace(last_hidden_state=self.embed(input_ids))

    tokenizer = WordTokenizer()
    tokenizer.pad_token, tokenizer.pad_token_id = "[PAD]", 0
    encoder = models.SentenceEncoder(Backbone(), tokenizer, "mean", None, max_length=32).to("meta")
    settings = hicl.HiclSettings(True, 3, special_tokens=False), hicl.ObjectiveSettings(alpha=0.15)
    model = hicl.ContrastiveModel(encoder, "simcse", *settings, mlp_head=True).train()
    assert model.head.dense.weight.device.type == "meta"
    examples, _ = hicl.make_examples(tokenizer, SENTENCES, 64, "simcse")
    loss = model(examples)
    assert loss.device.type == "meta"
    loss.backward()


# ---- the protocol table and ESimCSE's queue ----------------------------------------------------------------------


def _notebook_params(plan: str | None = None) -> dict:
    from pathlib import Path

    import nbformat
    import yaml

    root = Path(__file__).resolve().parents[1]
    notebook = nbformat.read(root / "notebooks" / "30_hicl.ipynb", as_version=4)
    (cell,) = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
    params: dict = {}
    exec(cell.source, params)  # the parameters cell holds assignments only
    params = {k: v for k, v in params.items() if not k.startswith("__")}
    if plan is not None:
        params.update(
            yaml.safe_load((root / "papermill_runs" / "plans" / f"{plan}.yaml").read_text())["notebooks"]["30_hicl"]
        )
    return params


def test_the_protocol_table_lists_the_cpu_departures_and_little_for_the_paper_plan():
    from stsnb.papers.hicl import differences

    cpu = differences.protocol_differences(_notebook_params("cpu"), causal=True, train_count=1280, longer_than_max=1)
    by_detail = {r["detail"]: r for r in cpu}
    assert {"backbone", "pooling (SimCSE, ESimCSE)", "SimCSE's MLP head", "learning rate", "batch"} <= set(by_detail)
    assert by_detail["learning rate"]["this run"] == "1e-4 for every method"
    assert by_detail["learning rate"]["paper"] == "SimCSE 5e-5, ESimCSE 3e-5, SNCSE 1e-5 (Table 13)"
    assert by_detail["truncation"]["this run"] == "baselines 32 tokens, +HiCL up to 128"
    assert by_detail["checkpoint selection"]["this run"] == "300 STS-B dev pairs every 10 of 40 steps, step 0 included"
    assert all(r["why"] for r in cpu)
    assert by_detail["training data"]["this run"] == "1,280 of the 11,914-sentence wiki1m sample"
    paper_params = _notebook_params("paper")
    assert paper_params["corpus_source"] == "paper"
    wiki1m = dict(train_count=1_000_000, corpus_count=1_000_000)
    paper = differences.protocol_differences(paper_params, causal=False, longer_than_max=0, gpu=True, **wiki1m)
    assert [r["detail"] for r in paper] == [  # the whole wiki1m (data folder's paper/): no training-data departure
        "checkpoint selection",
        "training seeds",
        "precision and hardware",
    ]
    alike = {**_notebook_params(), "truncation": "alike", "temperature": 0.1}
    rows = {
        r["detail"]: r for r in differences.protocol_differences(alike, causal=True, train_count=8, longer_than_max=0)
    }
    assert rows["truncation"]["this run"] == "both arms 128" and rows["temperature"]["this run"] == "0.1"
    local = {**paper_params, "corpus_source": "/data/wiki1m_for_simcse.txt"}
    assert "training data" not in {r["detail"] for r in differences.protocol_differences(local, causal=False,
        longer_than_max=0, **wiki1m)}  # fmt: skip
    for source, count, shown in [
        ("hub", 1_000_000, "5,000 of wiki1m from the Hub (1,000,000 sentences)"),
        ("paper", 1_000_000, "5,000 of wiki1m from the data folder (paper/) (1,000,000 sentences)"),
        ("/data/other.txt", 9_000, "5,000 of other.txt (9,000 sentences)"),
        ("sample", 11_914, "5,000 of the 11,914-sentence wiki1m sample"),
    ]:
        params = {**paper_params, "corpus_source": source}
        rows = differences.protocol_differences(params, causal=False, train_count=5000, longer_than_max=0,
            corpus_count=count)  # fmt: skip
        (row,) = [r for r in rows if r["detail"] == "training data"]
        assert row["this run"] == shown and row["why"], source
    table = differences.differences_table(cpu).splitlines()
    assert table[0] == "| detail | the paper | this run | why |" and len(table) == len(cpu) + 2


def test_queue_fill_reading_by_hand():
    fill = [(0, 3.3), (32, 3.9), (64, 4.5), (80, 4.3), (80, 4.5)]
    explained = hicl.training.queue_fill_reading(fill, 3.26, 3.86)
    assert explained.startswith("fixed untrained weights: 3.300 with an empty queue, 4.400 with a full one (mean of 2")
    assert "The rise is the queue filling" in explained
    assert "open hypothesis" in hicl.training.queue_fill_reading(fill, 3.26, 4.9)


def test_queue_fill_losses_hold_the_weights_and_fill_the_queue():
    encoder = _minilm()
    examples, _ = hicl.make_examples(encoder.tokenizer, SENTENCES * 2, 64, "esimcse")
    before = encoder.backbone.encoder.layer[0].attention.self.query.weight.clone()
    fill = hicl.training.queue_fill_losses(
        encoder, examples, 2, hicl.ObjectiveSettings(alpha=0.01), hicl.MethodSettings(queue_size=4)
    )
    assert [queued for queued, _ in fill] == [0, 2, 4, 4]  # full after 2 steps of 2, then two more (8 examples)
    assert all(loss >= 0 for _, loss in fill) and fill[-1][1] > fill[0][1]  # more negatives, a larger loss
    torch.testing.assert_close(encoder.backbone.encoder.layer[0].attention.self.query.weight, before)
    assert not encoder.training  # the mode it came in with


def test_the_memory_plan_sees_each_arms_forward_under_either_truncation():
    """``stsnb run --check``'s rows for notebook 30: the baselines' views cut at 32 tokens under the paper's
    truncation (at ``max_length`` under "alike"), +HiCL's segments of at most L tokens, SNCSE's three views."""
    from stsnb.gpu import plan_check

    params = _notebook_params("paper")
    rows = {r.label: r for r in plan_check.memory_rows("30_hicl", params)}
    baseline, segments = rows["baselines, 3 views"], rows["+HiCL segments, 3 views"]
    prompt = baseline.length - 32  # SNCSE's prompt around each view
    assert baseline.per_gpu_sequences == 3 * 256 and 0 < prompt < 16
    assert segments.length == 32 + 2 + prompt and segments.per_gpu_sequences > 3 * 256
    alike = {r.label: r for r in plan_check.memory_rows("30_hicl", {**params, "truncation": "alike"})}
    assert alike["baselines, 3 views"].length > baseline.length
    assert all(r.with_checkpointing_gib < 24 and r.auto for r in [*rows.values(), *alike.values()])
    # the paper plan's "auto": off where the rows fit without it (24 GiB), on where they do not (16 GiB)
    assert not any(r.checkpointing for r in plan_check.resolve_auto(list(rows.values()), 24))
    assert all(r.checkpointing for r in plan_check.resolve_auto(list(rows.values()), 16))


# ---- one training step by hand (notebook 30's visible step) -------------------------------------------------------


def test_one_hicl_step_with_the_same_dropout_masks_is_what_changes_the_loss():
    """Notebook 30's visible step: SimCSE+HiCL's loss (Eq. 1-2) on one batch with dropout on is the same number on
    two calls inside ``training_step.same_dropout`` with one seed (another seed gives another), and after one AdamW
    step it is lower; ``terms_text`` prints the terms ``last_parts`` holds."""
    from stsnb.training import param_groups, training_step

    encoder = _minilm()  # its own copy: the step changes its weights
    model = hicl.ContrastiveModel(encoder, "simcse", hicl.HiclSettings(True, 8), hicl.ObjectiveSettings(alpha=0.15))
    model.train()  # dropout on: the positive is a second dropout pass
    batch, _ = hicl.make_examples(encoder.tokenizer, SENTENCES, 64, "simcse")
    with training_step.same_dropout(3), torch.no_grad():
        first = model.loss(batch)
    assert set(model.last_parts) == {"global", "local"}  # both terms of alpha L_l + (1 - alpha) L_g
    terms = hicl.terms_text(model.last_parts, 0.15)
    assert terms == f"L_g {model.last_parts['global']:.4f}, L_l {model.last_parts['local']:.4f}, alpha 0.15"
    with training_step.same_dropout(4), torch.no_grad():
        assert model.loss(batch).item() != pytest.approx(first.item(), rel=1e-6)
    with training_step.same_dropout(3):
        loss = model.loss(batch)
    assert loss.requires_grad and loss.item() == pytest.approx(first.item(), rel=1e-6)
    optimizer = torch.optim.AdamW(param_groups.default_param_groups(model, 0.0), lr=1e-4)
    loss.backward()
    optimizer.step()
    with training_step.same_dropout(3), torch.no_grad():
        assert model.loss(batch).item() < first.item()
    assert hicl.terms_text({"global": 3.1}, 0.15) == "L_g 3.1000"  # a baseline's loss has no local term


def test_notebook_30_opens_short_states_its_main_claims_after_the_setup_and_ends_with_its_appendix():
    """At most 150 words of markdown before the parameters cell; the first code cell after the setup draws the pipeline
    figure and prints both main claims; the takeaway opens with them (the package's); no headline left; the
    departures table is computed, the protocol notes are an appendix after the last code cell."""
    from pathlib import Path

    import nbformat

    path = Path(__file__).resolve().parents[1] / "notebooks" / "30_hicl.ipynb"
    cells = nbformat.read(path, as_version=4).cells
    sources = [c.source for c in cells]
    takeaway = 'metrics["takeaway"] = hicl.results.takeaway('
    assert any("hicl.main_claims_opening(" in s and takeaway in s for s in sources)
    assert any("hicl.table12.efficiency_claim(" in s for s in sources)  # the efficiency main claim's row
    assert not [i for i, c in enumerate(cells) if "headline" in c.source.lower()]
    assert cells[-1].cell_type == "markdown" and cells[-1].source.startswith("## Appendix")


def test_the_class_plan_runs_both_main_claims_at_the_training_datas_lengths():
    """The class profile keeps the effectiveness main claim (the SimCSE pair) and the efficiency one (Table 12's
    timing on training batches), and its fixed lengths are lengths the training sentences have (up to max_length)."""
    params = _notebook_params("class")
    assert "simcse" in params["methods"] and params["main_claim_seeds"]
    assert params["efficiency_train_batches"] >= 1 and params["efficiency_repeats"] >= 2  # a range needs two passes
    assert max(params["efficiency_lengths"]) <= params["max_length"]
    batches = params["train_sentences"] // params["batch_size"]
    assert params["efficiency_train_batches"] <= batches
