"""Notebook 10's helpers (stsnb.papers.pcc_tuning.notebook, figures): the inputs read from the parameters, the runs
planned with the protocol, the results per template and seed, and the stages_and_ceiling figure (legend off the data,
text at 9 pt or more, no overlapping text)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from synthetic_seeds import fit_result

from stsnb.evaluation import evaluate
from stsnb.papers.pcc_tuning import claims as pcc_claims
from stsnb.papers.pcc_tuning import figures, notebook, pipeline, protocol
from stsnb.teaching import plots


def _profile(profile: str) -> dict:
    """The notebook's parameters as ``profile``'s plan sets them (tests/test_pcc_protocol.py reads them so)."""
    import test_pcc_protocol

    return test_pcc_protocol._profile(profile)


@pytest.fixture(scope="module")
def smoke_inputs(data_dir):
    return notebook.load_inputs(_profile("smoke"))


def test_the_inputs_apply_the_protocol_to_every_sentence_the_model_reads(smoke_inputs):
    inputs = smoke_inputs
    assert inputs.scoring.preprocess is protocol.eval_text_fix and inputs.preprocess is protocol.eval_text_fix
    assert all(p.sent1 == protocol.eval_text_fix(p.sent1) for p in inputs.dev)  # dev pairs already fixed
    arms = inputs.arms()
    plans = inputs.plans(arms)
    stage2 = plans[0].variants["batch 8"].pairs
    assert all(
        p.sent1 == protocol.eval_text_fix(p.sent1) and p.sent1 == p.sent1.lower()
        for p in stage2
        if p.dataset == "STSBenchmark"
    )
    assert plans[0].variants[pipeline.DEDUP].pairs == arms[0].removed
    assert pipeline.KEPT not in plans[0].variants  # the kept arm is stage 2's own draw, in the same text form
    train, dev, test = inputs.transfer_splits()
    assert all(e.text == protocol.eval_text_fix(e.text) for e in train + dev + test)
    job = inputs.job(plans[0], (train, dev, test))
    assert job.keywords["score_unquantized"] is True and job.keywords["transfer_splits"] is not None
    assert job.args[4].warmup_ratio == 0.1 and job.args[4].batch_size == 4  # stage 1 from the smoke plan
    pickle.dumps(job)  # distributed.run pickles the job for its worker processes
    lines = inputs.lines()
    assert "the official text fixes" in lines[3] and "'evaluation' form" in lines[3]


def _predictions(seed: int, noise: float) -> evaluate.TaskPredictions:
    rng, gold_rng = np.random.default_rng(seed), np.random.default_rng(99)  # the same test pairs for every model
    out = {}
    for task in evaluate.STS_TASKS:
        gold = gold_rng.uniform(0, 5, 40)
        out[task] = (gold, gold + rng.normal(0, noise, 40))
    return out


def _stage(seed: int, noise: float, kept: int = 4) -> pipeline.StageRun:
    """A stage that trained on dev (its dev records: ``synthetic_seeds.fit_result``), keeping step ``kept`` of 4."""
    return pipeline.StageRun(fit_result("trained", step=kept, steps=4, dev=50.0), _predictions(seed, noise))


def _template_run(template: str, seed: int, labels) -> pipeline.TemplateRun:
    stage2 = {label: _stage(seed + 10 + i, 1.0) for i, label in enumerate(labels)}
    return pipeline.TemplateRun(template, _predictions(seed, 6.0), _stage(seed, 2.0), stage2, {}, {}, seed)


def test_results_read_each_templates_own_main_run():
    proto = protocol.Protocol(recipe_row="Mistral-7b", stage2_batch_sizes=(240, 192))
    runs = {
        ("sth", 3): _template_run("sth", 3, ["batch 240", "batch 192"]),
        ("sth", 4): _template_run("sth", 4, ["batch 240"]),
        ("eol", 3): _template_run("eol", 3, ["batch 216"]),
    }
    res = notebook.Results(runs, ["sth", "eol"], proto)
    assert (res.t0, res.s0, res.first) == ("sth", 3, runs[("sth", 3)])
    assert res.main_label("eol") == "batch 216" and res.stage2_runs()["eol"][3] is runs[("eol", 3)].stage2["batch 216"]
    assert sorted(res.stage1_runs()["sth"]) == [3, 4] and set(res.untrained()) == {"sth", "eol"}
    assert "eol seed 3 stage 2, batch 216" in res.all_runs()
    rows = notebook.beside_the_paper(res, "Mistral-7b", "tiny", "smoke: tiny")
    assert {r["note"] for r in rows if "PromptEOL" in r["setting"]} == {"smoke: tiny, mean of 1 training seed(s)"}
    claims = notebook.stage_claims(res, "Mistral-7b", n_resamples=50, seed=0)
    assert [c["claim"].split(":")[0] for c in claims] == ["PromptSTH"] * 2 + ["PromptEOL"] * 2
    # the paper's main claim is the first template's stage 2 over stage 1, and only that row is marked
    assert [c["main_claim"] for c in claims] == [False, True, False, False]
    assert pcc_claims.MAIN_CLAIMS[0].row_in(claims) is claims[1]
    assert all("headline" not in c for c in claims)


def test_the_takeaway_opens_with_the_main_claim_and_sets_our_levels_beside_the_papers():
    proto = protocol.Protocol(stage2_batch_sizes=(32,))
    runs = {(("sth", s)): _template_run("sth", s, ["batch 32", pipeline.CONTROL]) for s in (0, 1)}
    runs[("sth", 1)].stage2["batch 32"] = _stage(21, 1.0, kept=2)
    res = notebook.Results(runs, ["sth"], proto)
    rows = notebook.stage_claims(res, "Mistral-7b", n_resamples=50, seed=0)
    control = {s: runs[("sth", s)].stage2[pipeline.CONTROL] for s in (0, 1)}
    rows.append(
        pcc_claims.control_claim(
            res.stage2_runs()["sth"],
            control,
            {0: 10, 1: 12},
            row="Mistral-7b",
            template_label="PromptSTH",
            positive_score=4.0,
            n_resamples=50,
        )
    )
    text = notebook.takeaway(rows, res, "Mistral-7b", "tiny", "cpu: +4.98 [+1.86, +8.43], supported (3 seeds)")
    main = rows[1]
    both = main["seeds_and_pairs"]  # two seeds: decided on the interval of their mean
    assert text.startswith(
        "The paper's main claim: Table 4: stage 2 (1 - Pearson, Eq. 9) beats stage 1 (InfoNCE, Eq. 8): "
        f"{main['verdict']} (2 seeds), {both['difference']:+.2f} [{both['low']:+.2f}, {both['high']:+.2f}] (seeds "
        "and pairs)."
    )
    stage1, stage2 = (
        pipeline.mean_scores(list(r["sth"].values()))["avg"] for r in (res.stage1_runs(), res.stage2_runs())
    )
    assert f"PromptSTH {stage1:.2f} -> {stage2:.2f} (mean of 2 training seed(s)" in text
    assert "the paper's Mistral-7b PromptSTH, Table 4: 85.66 -> 90.61" in text
    assert "stage 2 in 4 optimizer steps per seed (dev selection kept step 2-4)" in text
    recovered = main["difference"] - rows[2]["difference"]
    assert (
        f"The InfoNCE control on the same pairs recovers about {recovered:+.2f} of the {main['difference']:+.2f}"
        in text
    )
    assert "cpu: +4.98 [+1.86, +8.43], supported (3 seeds)" in text and "beside the paper's +4.95" in text


def test_stages_and_ceiling_keeps_its_legend_off_the_data_at_9_pt():
    first = _template_run("sth", 0, ["batch 32"])
    fig = figures.stages_and_ceiling(first, "batch 32", "Mistral-7b", "smollm2-135m", "all, 60 pairs", notebook.LIMITS)
    assert plots.figure_problems(fig) == []  # no overlapping text, nothing under 9 pt, the legend off the bars
    (ax,) = fig.axes
    renderer = fig.canvas.get_renderer()
    legend = ax.get_legend()
    assert legend.get_window_extent(renderer).y1 <= ax.get_window_extent(renderer).y0  # below the axes
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels[:3] == ["ours, untrained (seed 0)", "ours, stage 1 (seed 0)", "ours, stage 2 (seed 0)"]
    colours = {tuple(bars.patches[0].get_facecolor()) for bars in ax.containers}
    assert len(colours) == 3  # the untrained swatch has a colour of its own
    assert any(r"\sqrt{3}" in t for t in labels)  # mathtext, not ASCII


def test_the_first_batch_is_the_first_seeds_own_stage_2_pairs(smoke_inputs):
    plans = smoke_inputs.plans(smoke_inputs.arms())
    assert smoke_inputs.first_batch(6) == list(plans[0].variants["batch 8"].pairs)[:6]
    with pytest.raises(ValueError, match="at least 3 pairs"):
        smoke_inputs.first_batch(2)


def test_one_step_of_eq9_by_hand_as_notebook_10_shows_it(tmp_path, smoke_inputs):
    """Notebook 10's cell on a tiny random Llama with LoRA (mechanics): Eq. 9 on a real batch, backward, one AdamW
    step; only the adapter moves, the loss on the same batch and dropout mask goes down."""
    import torch
    from conftest import save_tiny_causal_lm
    from transformers import LlamaConfig

    from stsnb.models import loading as models
    from stsnb.papers import pcc_tuning
    from stsnb.training import training_step

    folder = save_tiny_causal_lm(tmp_path / "tiny-llama", LlamaConfig)
    demo = pcc_tuning.load_prompt_encoder(str(folder), "sth", lora=models.LoraSettings(r=4))
    base = {n: p.detach().clone() for n, p in demo.named_parameters() if not p.requires_grad}
    batch = smoke_inputs.first_batch(8)
    eq9 = pcc_tuning.stage2_loss(64)
    optimizer = torch.optim.AdamW(training_step.trainable(demo), lr=1e-4)
    demo.train()
    with training_step.same_dropout(0):
        loss = eq9(demo, batch)
    loss.backward()
    optimizer.step()
    with training_step.same_dropout(0), torch.no_grad():
        after = eq9(demo, batch)
    assert 0.0 <= after.item() < loss.item() <= 2.0  # 1 - r lies in [0, 2]
    assert all(torch.equal(p, base[n]) for n, p in demo.named_parameters() if n in base)  # the base is frozen
    assert "before the step" in training_step.describe("Eq. 9", loss, after, f"{len(batch)} pairs")


def test_histories_are_the_first_runs_fits_by_stage():
    first, second = _template_run("sth", 3, ["batch 32", pipeline.CONTROL]), _template_run("sth", 4, [])
    runs = {("sth", 3): first, ("sth", 4): second}
    runs[("sth", 3)].stage1.result.history[:] = [{"step": 0, "epoch": 0, "dev": 40.0}, {"step": 2, "loss": 1.5}]
    got = notebook.histories(runs)
    assert list(got) == ["stage 1 (Eq. 8)", "stage 2, batch 32", f"stage 2, {pipeline.CONTROL}"]
    assert got["stage 1 (Eq. 8)"] == [{"step": 0, "epoch": 0, "dev": 40.0}, {"step": 2, "loss": 1.5}]
    with pytest.raises(ValueError, match="no run"):
        notebook.histories({})


def test_the_data_behind_the_levels_is_read_from_the_run(smoke_inputs):
    runs = {("sth", 0): _template_run("sth", 0, ["batch 8", "batch 16"])}
    res = notebook.Results(runs, ["sth"], smoke_inputs.protocol)
    text = notebook.data_behind(smoke_inputs, res)
    assert text.startswith("8 NLI triplets (4 steps of stage 1) and 16 STS-B + SICK-R pairs (4 steps of stage 2)")
    assert "the same 16 pairs per task" in text and "275,602" in text


def test_score_intervals_bracket_each_tasks_spearman_and_the_average():
    predictions = _predictions(0, 2.0)
    got = figures.score_intervals(predictions, n_resamples=400, seed=1)
    scores = evaluate.spearman_scores(predictions)
    assert set(got) == set(scores)
    assert all(low < scores[t] < high for t, (low, high) in got.items())
    one_task = figures.score_intervals({"STS12": predictions["STS12"]}, n_resamples=400, seed=1)
    assert one_task["avg"] == one_task["STS12"]  # the average of one task is that task
    # the stratified average is narrower than any one task: its replicates average seven independent draws
    assert got["avg"][1] - got["avg"][0] < min(high - low for t, (low, high) in got.items() if t != "avg")


def test_notebook_10_opens_short_states_its_main_claim_after_the_setup_and_keeps_protocol_notes_for_the_appendix():
    """At most 150 words of markdown before the parameters cell; the first code cell after the setup draws the pipeline
    figure and prints the main claim; the takeaway is the package's (opening with the main claim); no headline left;
    the protocol notes in an appendix at the end."""
    from pathlib import Path

    import nbformat

    path = Path(__file__).resolve().parent.parent / "notebooks" / "10_pcc_tuning.ipynb"
    cells = nbformat.read(path, as_version=4).cells
    assert any('metrics["takeaway"] = notebook.takeaway(' in c.source for c in cells)
    assert not [i for i, c in enumerate(cells) if "headline" in c.source.lower()]
    assert cells[-1].cell_type == "markdown" and cells[-1].source.startswith("## Appendix")


def test_every_stage_2_run_trains_with_its_training_seed_and_its_own_pair_count(smoke_inputs):
    """``pipeline.plan`` asks ``config_of(template, global batch, seed, number of pairs)``; the protocol's
    ``stage2_config`` takes ``(template, global batch, number of pairs, seed)``: the notebook passes them in that order,
    so stage 2's batch order follows the training seed (not the number of pairs) and a recipe's warmup counts the
    run's own steps."""
    from dataclasses import replace

    params = {**smoke_inputs.params, "training_seeds": [3, 5], "control_study": True, "dedup_study": False}
    inputs = replace(smoke_inputs, params=params)
    plans = inputs.plans({})
    assert [p.seed for p in plans] == [3, 5]
    for plan in plans:
        for variant in plan.variants.values():
            assert variant.config.seed == plan.seed, (plan.seed, variant.config.seed, len(variant.pairs))
    recipe = replace(
        inputs, params={**params, "stage2_pairs": 2000}, protocol=protocol.Protocol(recipe_row="Mistral-7b")
    )
    name, variant = next(iter(recipe.plans({})[0].variants.items()))
    steps = protocol.optimizer_steps(len(variant.pairs), int(name.split()[-1]), 1, variant.config.epochs, True)
    assert variant.config.seed == 3 and variant.config.warmup_ratio == protocol.warmup_ratio(100, steps)
