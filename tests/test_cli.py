"""The ``stsnb`` command line: ``eval --json`` prints one JSON object and reuses cached embeddings; bad args exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stsnb import cli

STSNB = Path(sys.executable).with_name("stsnb")  # the console script of pyproject's [project.scripts]


def stsnb(*args: str, cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "STSNB_CACHE": str(cache)}
    return subprocess.run([str(STSNB), *args], capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.long  # two evaluations of the real model in fresh processes (15 s): off the default tier
@pytest.mark.slow
def test_eval_json_prints_one_object_and_second_call_encodes_nothing(tmp_path, data_dir):
    args = ("eval", "--model", "minilm-l6", "--tasks", "sts16", "--data-dir", str(data_dir), "--json")
    first = stsnb(*args, cache=tmp_path)
    assert first.returncode == 0, first.stderr
    headline = json.loads(first.stdout)  # the whole of stdout is one JSON object
    assert first.stdout.count("\n") == 1
    assert set(headline) == {"STS16", "avg"}
    assert 70 < headline["STS16"] < 90  # all-MiniLM-L6-v2 is a strong STS encoder, not a random one
    assert headline["avg"] == headline["STS16"]
    assert " 0 sentences encoded" not in first.stderr

    second = stsnb(*args, cache=tmp_path)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout) == headline
    assert " 0 sentences encoded" in second.stderr  # every embedding came from the on-disk cache


@pytest.mark.parametrize(
    "argv",
    [
        ["eval"],  # --model is required
        ["eval", "--model", "minilm-l6", "--tasks", "sts99"],
        ["eval", "--model", "minilm-l6", "--pooling", "max"],
        ["eval", "--model", "minilm-l6", "--text", "tokenized"],
        ["eval", "--model", "minilm-l6", "--template", "eol", "--pooling", "mean"],
        ["eval", "--model", "minilm-l6", "--data-dir", "/nonexistent/stsnb-data"],
        ["eval", "--model", "./no/such/model/folder"],
        ["run", "--only", "no_such_notebook"],
        ["run", "--profile", "no_such_profile"],
        ["run", "--offline"],  # --offline goes with --check
        ["models", "fetch"],  # --paper names what to fetch
        ["frobnicate"],
    ],
)
def test_bad_arguments_exit_2_with_a_message(argv, capsys):
    with pytest.raises(SystemExit) as exited:
        cli.main(argv)
    assert exited.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_run_check_prints_the_memory_table_and_fails_on_too_few_gpus(capsys):
    from stsnb.cli import main

    assert main(["run", "--check", "--profile", "class"]) == 0  # real models (the smoke plan's 10 is a tiny one)
    out = capsys.readouterr().out
    assert "stsnb run --check --profile class: ok" in out and "| 10_pcc_tuning | stage 1 (Eq. 8), sth |" in out
    # num_processes "auto" takes the one GPU, and notebook 10's estimate then runs past its plan timeout (a plan
    # with num_processes: 4 fails on the GPU count instead)
    assert main(["run", "--check", "--profile", "paper", "--gpus", "1"]) == 1
    out = capsys.readouterr().out
    assert "10_pcc_tuning: estimated" in out or "10_pcc_tuning: num_processes: 4 processes need 4 GPUs" in out
    # the overhead's 2x and 3x rows and a layout for the one GPU (every notebook placed, or none)
    assert "| notebook | optimizer steps | hours at 0.05 s/step (assumed) |" in out
    assert "A --parallel layout on 1 GPU (stsnb.gpu.layout)" in out and "No layout places each notebook" in out
    # --only checks those notebooks alone (a one-GPU Slurm job of notebook 30)
    assert main(["run", "--check", "--profile", "paper", "--gpus", "1", "--only", "30_hicl"]) == 0
    out = capsys.readouterr().out
    assert "30_hicl" in out and "| 10_pcc_tuning |" not in out and '--parallel "0:30_hicl"' in out
