"""Pcc-tuning's protocol switches (stsnb.papers.pcc_tuning.protocol): the official evaluation's text fixes on real
lines of the data, stage 2's training text in the evaluation's form, a 4-bit run scored on the unquantized base with
its adapter, and the official recipe's 100-step warmup as the paper plan uses it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch

from stsnb import data
from stsnb.models import loading as models
from stsnb.papers import pcc_tuning
from stsnb.papers.pcc_tuning import protocol
from stsnb.runs import plans

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "10_pcc_tuning.ipynb"


def _line(pairs, source: str, which: int) -> str:
    pair = next(p for p in pairs if p.source == source)
    return pair.sent1 if which == 1 else pair.sent2


def test_the_evaluation_text_fixes_on_real_lines_of_the_test_sets(data_dir):
    sts12, sts14 = list(data.load_sts_year("STS12")), list(data.load_sts_year("STS14"))
    sts16, sick = list(data.load_sts_year("STS16")), list(data.load_sick("test"))
    fix = protocol.eval_text_fix
    # '"' -> "'" (a final period is already there)
    quoted = _line(sts12, "STS.input.MSRpar.txt:3", 1)
    assert quoted.startswith('" it \'s a huge black eye , "')
    assert fix(quoted) == quoted.replace('"', "'") and fix(quoted).endswith("since 1896 .")
    # a final '?' becomes '.'; quotes inside are replaced too
    assert fix(_line(sts16, "STS.input.question-question.txt:5", 1)) == "how do i make a height adjustable desk ."
    assert fix(_line(sts16, "STS.input.question-question.txt:1014", 1)) == "what was the meaning of ' 21 grams ' ."
    # ends in '"': nothing appended, the quote becomes "'" (so the '?' before it stays)
    assert fix(_line(sts14, "STS.input.deft-forum.txt:34", 1)) == "martin said , ' why are you following me ? '"
    # ends in '!': a period is appended after it (the official rule looks at . ? " ' only)
    assert fix(_line(sts14, "STS.input.deft-forum.txt:7", 1)) == "i am ok with medical use !."
    # SICK has no final period: one is appended
    plain = sick[0].sent1
    assert plain[-1].isalpha() and fix(plain) == plain + "."
    # a trailing space: SentEval hands the batcher its whitespace tokens joined by one space
    spaced = _line(sts14, "STS.input.tweet-news.txt:721", 1)
    assert spaced.endswith(". ' ") and fix(spaced) == spaced.strip()


def _official_batcher_fix(tokens: list[str]) -> str:
    """ZBWpro/Pcc-tuning evaluation.py's batcher, copied: SentEval's tokens, joined, then the three fixes."""
    s = " ".join(tokens)
    if len(s) > 0 and s[-1] not in ".?\"'":
        s += "."
    s = s.replace('"', "'")
    if len(s) > 0 and s[-1] == "?":
        s = s[:-1] + "."
    return s


def test_the_fix_equals_the_official_batcher_on_every_sentence_of_the_seven_test_sets(data_dir):
    sentences = {s for p in data.seven_test_sets() for s in (p.sent1, p.sent2)}
    assert len(sentences) > 15000
    assert all(protocol.eval_text_fix(s) == _official_batcher_fix(s.split()) for s in sentences)
    assert protocol.eval_preprocess(True) is protocol.eval_text_fix and protocol.eval_preprocess(False) is None


def test_stage_2_trains_on_the_evaluations_text_form(data_dir):
    raw = pcc_tuning.corpora.stage2_pairs(dedup=False).pairs
    drawn = data.sample(raw, 64, 0)
    assert protocol.stage2_text_form(drawn, "raw") == drawn
    senteval = protocol.stage2_text_form(drawn, "senteval")
    fixed = protocol.stage2_text_form(drawn, "evaluation", protocol.eval_text_fix)
    assert [p.score for p in senteval] == [p.score for p in drawn] == [p.score for p in fixed]
    assert [(p.dataset, p.source) for p in senteval] == [(p.dataset, p.source) for p in drawn]
    stsb = [(r, s) for r, s in zip(drawn, senteval, strict=True) if r.dataset == "STSBenchmark"]
    assert stsb and all(s.sent1 == s.sent1.lower() for _, s in stsb)  # the lower-cased SentEval copy
    assert any(r.sent1 != s.sent1 for r, s in stsb)
    test_form = {p.sent1 for p in data.load_stsb("test")}  # what the evaluation reads
    assert all(s == s.lower() for s in test_form)
    assert all(p.sent1 == protocol.eval_text_fix(s.sent1) for p, s in zip(fixed, senteval, strict=True))
    # the plan sees the same pairs in the kept arm and in stage 2's draw once both are converted
    assert protocol.stage2_text_form(drawn, "evaluation", protocol.eval_text_fix) == fixed
    with pytest.raises(ValueError, match="stage2_text must be one of"):
        protocol.stage2_text_form(drawn, "lower")


# ---- a 4-bit run scored on the unquantized base -----------------------------------------------------------------


def test_scoring_decision():
    assert protocol.scores_unquantized(quantize_4bit=True, score_unquantized=True)
    assert not protocol.scores_unquantized(quantize_4bit=True, score_unquantized=False)
    assert not protocol.scores_unquantized(quantize_4bit=False, score_unquantized=True)  # plain LoRA: one base


def test_a_4bit_run_is_scored_on_the_unquantized_base_with_its_trained_adapter(tmp_path):
    """Mechanics on a tiny random Mistral (4-bit NF4 runs on the CPU): the copy has no 4-bit layer, carries the
    trained adapter exactly, and embeds close to, but not as, the 4-bit model."""
    import bitsandbytes as bnb
    from conftest import save_tiny_causal_lm
    from transformers import MistralConfig

    from stsnb.training.checkpoints import trainable_state

    folder = save_tiny_causal_lm(tmp_path / "tiny-mistral", MistralConfig)
    lora = models.LoraSettings(r=4)
    encoder = pcc_tuning.load_prompt_encoder(str(folder), "sth", lora=lora, quantize_4bit=True)
    with torch.no_grad():  # a trained adapter: LoRA's B away from 0
        for name, p in encoder.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.05)
    scorer = protocol.Scorer(pcc_tuning.Scoring("stsb", 4), str(folder), "sth", lora, unquantized=True)
    sentences = ["A man plays a guitar.", "Nobody plays music."]
    with scorer.model(encoder) as copy:
        assert copy is not encoder
        assert not any(isinstance(m, bnb.nn.Linear4bit) for m in copy.modules())
        assert any(isinstance(m, bnb.nn.Linear4bit) for m in encoder.modules())
        trained, copied = trainable_state(encoder), copy.state_dict()
        assert trained and all(torch.equal(v, copied[k].to(v.dtype)) for k, v in trained.items())
        with torch.no_grad():
            ours, theirs = copy(sentences), encoder(sentences)
    assert torch.isfinite(ours).all() and not torch.equal(ours, theirs)
    assert torch.nn.functional.cosine_similarity(ours, theirs).min() > 0.9
    same = protocol.Scorer(pcc_tuning.Scoring("stsb", 4), str(folder), "sth", lora, unquantized=False)
    with same.model(encoder) as model:
        assert model is encoder


# ---- the official recipe and its 100 warmup steps ----------------------------------------------------------------


def _notebook_parameters() -> dict:
    import nbformat

    cell = next(c for c in nbformat.read(NOTEBOOK, as_version=4).cells if "parameters" in c.metadata.get("tags", []))
    namespace: dict = {}
    exec(compile(ast.parse(cell.source), str(NOTEBOOK), "exec"), namespace)
    return {k: v for k, v in namespace.items() if not k.startswith("__")}


def _profile(profile: str) -> dict:
    plan = plans.load_plan(plans.plan_path(profile))
    return {**_notebook_parameters(), **plan.notebooks["10_pcc_tuning"]}


def test_the_paper_plans_stage_1_warms_up_for_100_steps():
    params = _profile("paper")
    assert params["use_paper_recipe"] is True
    assert params["num_processes"] == "auto"  # the GPUs present: 4 here, as the official code
    proto = protocol.Protocol.from_parameters(params, gpus=4)
    n = 275_602  # SimCSE's NLI triplets (Section 4.1)
    config = proto.stage1_config("sth", n, 0)
    steps = protocol.optimizer_steps(n, 224, 4, 1, drop_last=False)
    assert (config.batch_size, config.lr, config.epochs) == (56, 5e-4, 1)  # 224 triplets over 4 GPUs
    assert round(config.warmup_ratio * steps) == 100
    assert proto.stage1_batch("eol") == 240 and proto.batch_sizes("eol") == [216, 240, 192, 224, 232, 256]
    assert proto.batch_sizes("sth")[0] == 240 and proto.main_label("sum") == "batch 208"
    stage2 = proto.stage2_config("sth", 240, 10_249, 0)
    stage2_steps = protocol.optimizer_steps(10_249, 240, 4, 8, drop_last=True)
    assert stage2.epochs == 8 and stage2.drop_last and round(stage2.warmup_ratio * stage2_steps) == 100


def test_the_cpu_and_rehearsal_plans_train_with_their_own_parameters():
    for profile in ("cpu", "smoke", "rehearsal"):
        params = _profile(profile)
        proto = protocol.Protocol.from_parameters(params)
        assert proto.recipe_row is None, profile
        config = proto.stage1_config("sth", 64, 0)
        assert config.warmup_ratio == params["warmup_ratio"] and config.lr == params["stage1_lr"]
        assert proto.batch_sizes("sth") == list(params["stage2_batch_sizes"])


def test_the_warmup_fit_counts_is_the_recipes_100_steps(monkeypatch):
    """``fit`` builds its scheduler from the ratio: with the recipe it warms up for exactly 100 optimizer steps."""
    import transformers

    from stsnb.training.train import fit

    seen = {}

    class Stop(Exception):
        pass

    def schedule(optimizer, num_warmup_steps, num_training_steps):
        seen.update(warmup=num_warmup_steps, total=num_training_steps)
        raise Stop

    monkeypatch.setattr(transformers, "get_linear_schedule_with_warmup", schedule)
    proto = protocol.Protocol(num_processes=1, recipe_row="Mistral-7b")
    model = torch.nn.Linear(2, 1)
    for config, n in (
        (proto.stage1_config("sth", 30_000, 0), 30_000),
        (proto.stage2_config("sth", 240, 10_249, 0), 10_249),
    ):
        with pytest.raises(Stop):
            fit(model, lambda m, batch: m.weight.sum(), list(range(n)), config)
        assert seen["warmup"] == 100 and seen["total"] == protocol.optimizer_steps(
            n, config.batch_size, 1, config.epochs, config.drop_last
        )


def test_the_class_plan_runs_the_main_comparison_and_the_control_without_the_transfer_probe(data_dir):
    """The class plan keeps the paper's main comparison and the InfoNCE control on its one seed, paid for by the
    transfer probe (off) and a dev evaluation every 4 steps; the plan of runs trains stage 2 and the control."""
    from stsnb.papers.pcc_tuning import notebook, pipeline

    params = _profile("class")
    assert params["control_study"] is True and params["dedup_study"] is False
    assert params["training_seeds"] == [0] and params["transfer_pairs"] is None and params["eval_every"] == 4
    inputs = notebook.load_inputs(params)
    (plan,) = inputs.plans(inputs.arms())
    assert list(plan.variants) == ["batch 32", pipeline.CONTROL] and inputs.transfer_splits() is None
