"""stsnb.gpu.plan_check: plan values against the notebooks' parameters, GPUs, model ids and the memory estimate."""

from __future__ import annotations

from pathlib import Path

import pytest

from stsnb.gpu import plan_check
from stsnb.gpu.memory_estimate import TrainingSetup
from stsnb.runs import plans

PLANS = Path(__file__).resolve().parents[1] / "papermill_runs" / "plans"
NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


@pytest.mark.parametrize(
    ("value", "default", "help_text", "problem"),
    [
        (3, "1", "", None),
        (3.5, "1", "", "3.5 is a float, expected int"),
        (True, "1", "", "True is a bool"),
        (2, "0.5", "", None),  # a float parameter takes an int
        ("cls", '"mean"', "", None),
        (["a"], '"mean"', "", "is a list, expected str"),
        (None, "960", "NLI pairs per run (None: all)", None),
        (None, "960", "NLI pairs per run", "null, but the notebook's default is 960"),
        ({"a": 1}, "[]", "", "is a dict, expected list or tuple"),
        ([1, 2], "None", "", None),  # a None default takes anything
    ],
)
def test_type_rule(value, default, help_text, problem):
    found = plan_check.type_problem("p", value, default, help_text)
    assert (found is None) if problem is None else (problem in found)


@pytest.mark.parametrize(
    ("model", "ok"),
    [
        ("minilm-l6", True),
        ("mistralai/Mistral-7B-v0.1", True),
        ("bert-base-uncased", True),
        ("mistralai/Mistral 7B", False),
        ("https://huggingface.co/x/y", False),
    ],
)
def test_model_ids(model, ok):
    assert (plan_check.model_id_problem("backbone", model) is None) == ok


def test_num_processes_must_fit_the_gpus():
    declared = {"num_processes": {"default": "1", "help": ""}}
    problems = plan_check.notebook_problems("10_pcc_tuning", {"num_processes": 4}, declared, gpus=2)
    assert problems == ["10_pcc_tuning: num_processes: 4 processes need 4 GPUs, --gpus gives 2"]
    assert plan_check.notebook_problems("10_pcc_tuning", {"num_processes": 4}, declared, gpus=4) == []


def test_a_plan_value_of_the_wrong_type_is_reported_by_check(tmp_path):
    plan_path = tmp_path / "bad.yaml"
    plan_path.write_text("description: a bad plan\nnotebooks:\n  30_hicl: {batch_size: '32', backbone: 'a b/c'}\n")
    report = plan_check.check(plans.load_plan(plan_path), NOTEBOOKS)
    assert not report.ok
    assert any("30_hicl: batch_size: '32' is a str, expected int" in p for p in report.problems)
    assert any("30_hicl: backbone: 'a b/c' is neither" in p for p in report.problems)


def test_pcc_paper_plan_per_gpu_batch_and_the_fit_decision():
    rows = plan_check.memory_rows(
        "10_pcc_tuning",
        {
            "backbone": "mistralai/Mistral-7B-v0.1",
            "num_processes": 4,
            "stage1_batch_size": 224,
            "stage2_batch_sizes": [240],
            "quantize_4bit": True,
            "gradient_checkpointing": True,
            "profile": "paper",
        },
    )
    stage1, stage2, scoring = rows
    assert stage1.per_gpu_sequences == 3 * 56 and stage2.per_gpu_sequences == 2 * 60
    assert stage1.checkpointing and stage1.used_gib == stage1.with_checkpointing_gib < 24
    assert stage1.without_checkpointing_gib > 24  # the reason the paper plan turns checkpointing on
    assert not scoring.backward and scoring.used == "no backward" and scoring.used_gib > stage1.used_gib
    assert "| scoring on the 16-bit copy (main process) |" in plan_check.memory_table(rows, 24)


@pytest.mark.parametrize("profile", ["smoke", "class", "cpu", "paper", "rehearsal"])
def test_every_committed_plan_passes_the_check(profile):
    gpus, memory = (4, 24) if profile == "paper" else (None, None)
    report = plan_check.check(plans.load_plan(PLANS / f"{profile}.yaml"), NOTEBOOKS, gpus, memory)
    assert report.ok, report.text()


def test_training_setup_is_what_the_hook_returns():
    rows = plan_check.memory_rows(
        "40_ccl_csts", {"backbones": ["minilm-l6"], "architectures": ["tri"], "batch_size": 4}
    )
    assert len(rows) == 1 and rows[0].per_gpu_sequences == 2 * 4 * 3
    assert isinstance(TrainingSetup(1, 1), TrainingSetup)


def test_a_string_the_comment_documents_in_quotes_fits_an_int_parameter():
    help_text = 'training processes: GPUs on a server | "auto": every GPU present'
    assert plan_check.type_problem("num_processes", "auto", "1", help_text) is None
    assert "is a str, expected int" in plan_check.type_problem("num_processes", "all", "1", help_text)
    declared = {"num_processes": {"default": "1", "help": help_text}}
    assert plan_check.notebook_problems("20_sts_regression", {"num_processes": "auto"}, declared, gpus=2) == []


def test_markdown_prints_the_docs_tables_between_comments_naming_the_command(tmp_path, capsys):
    from stsnb.cli import main

    path = tmp_path / "small.yaml"
    path.write_text("description: one notebook\nnotebooks:\n  40_ccl_csts: {profile: cpu}\n")
    report = plan_check.check(plans.load_plan(path), NOTEBOOKS, gpus=2, gpu_memory=24)
    command = "stsnb run --check --profile small --gpus 2 --gpu-memory 24 --markdown"
    assert report.command() == command
    text = report.markdown()
    assert text.startswith(f"<!-- generated by `{command}`: memory -->\n| notebook | training |")
    assert f"<!-- generated by `{command}`: time and disk -->\n| notebook | GPUs used (of 2) |" in text
    assert f"<!-- generated by `{command}`: overhead -->\n| notebook | optimizer steps |" in text
    assert f"<!-- generated by `{command}`: layout -->\nOn one node, placed each notebook only where" in text
    assert text.count("<!-- end of generated table -->") == 4 and "Global batch" not in text
    with pytest.raises(SystemExit):
        main(["run", "--profile", "cpu", "--markdown"])
    assert "--markdown go with --check" in capsys.readouterr().err


def test_the_layout_keeps_the_fastest_split_and_uses_every_gpu_it_holds():
    """``stsnb.gpu.layout.best_layout`` on made-up hours: a 4-process notebook (hours halve per doubling, it uses all
    the GPUs of a group of 1, 2 or 4), two single-process notebooks and one without fits, on 4 and 8 GPUs."""
    from stsnb.gpu.layout import best_layout

    def hours_at(name: str, size: int):
        if name == "00_math":
            return (0.0, 0)
        if name == "10_big":
            return (40.0 / size, size) if size in (1, 2, 4) else None
        return ({"30_one": 8.0, "40_one": 4.0}[name], 1)

    order = ["00_math", "10_big", "30_one", "40_one"]
    timeouts = {"00_math": 3600.0, "10_big": 30 * 3600.0, "30_one": None, "40_one": None}  # 10_big on 1 GPU: too long
    four = best_layout(order, hours_at, 4, timeouts)
    assert [(g.gpus, g.notebooks) for g in four.groups] == [
        ((0, 1), ("10_big",)),
        ((2,), ("00_math", "30_one", "40_one")),
    ]
    assert four.hours == 20.0 and four.sequential_hours == 22.0  # then the fewest GPU-hours held: GPU 3 stays free
    assert four.spec() == "0,1:10_big 2:00_math,30_one,40_one" and "GPU 3 stays free" in four.markdown("paper")
    assert four.sbatch_lines("paper") == [
        "sbatch --gpus-per-node=2 --time=1-07:00:00 scripts/slurm/paper.sbatch --only 10_big",
        "sbatch --gpus-per-node=1 scripts/slurm/paper.sbatch --only 00_math,30_one,40_one",  # no timeout: no limit
    ]
    eight = best_layout(order, hours_at, 8, timeouts)
    assert eight.groups[0].gpus == (0, 1, 2, 3) and eight.hours == 10.0
    assert best_layout(order, lambda name, size: None if name == "10_big" else hours_at(name, size), 4, {}) is None


def test_without_a_data_folder_the_check_says_so_first_and_marks_the_worst_cases(tmp_path, monkeypatch):
    """HiCL's segment rows at every sentence's cap (72.4 h against 21 h, two rounds ago) are marked, not shown as
    measured."""
    import dataclasses

    monkeypatch.setenv("STSNB_DATA_DIR", str(tmp_path / "no-such-folder"))
    whole = plans.load_plan(PLANS / "paper.yaml")
    plan = dataclasses.replace(whole, notebooks={"30_hicl": whole.notebooks["30_hicl"]})
    report = plan_check.check(plan, NOTEBOOKS, gpus=4)
    text = report.text()
    assert text.splitlines()[1].startswith("  NO DATA FOLDER (") and "the estimates of 30_hicl are marked" in text
    assert all(row.worst_case for row in report.memory) and report.costs[0].worst_case
    assert "| 30_hicl (worst case) |" in text and " (worst case) | " in plan_check.memory_table(report.memory, None)
