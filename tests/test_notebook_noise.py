"""The output-noise check on hand-made executed cells (one of each kind of noise, and clean output)."""

from __future__ import annotations

from stsnb.runs.notebook_noise import output_noise


def _cell(*outputs: dict) -> dict:
    return {"cell_type": "code", "outputs": list(outputs)}


def test_each_kind_of_noise_is_named_with_its_cell():
    notebook = {
        "cells": [
            _cell({"output_type": "execute_result", "data": {"text/plain": "PosixPath('runs/x/metrics.json')"}}),
            _cell({"output_type": "stream", "name": "stdout", "text": "run folder: /work/main/papermill_runs/cpu"}),
            _cell({"output_type": "stream", "name": "stderr", "text": ["Failed to load CPU gemm_4bit_forward\n"]}),
            _cell({"output_type": "display_data", "data": {"application/vnd.jupyter.widget-view+json": {}}}),
        ]
    }
    problems = output_noise(notebook)
    assert [p.split(":")[0] for p in problems] == ["cell 0", "cell 1", "cell 2", "cell 3"], problems
    assert "Out[] shows a path" in problems[0] and "machine path" in problems[1]
    assert "stderr: Failed to load CPU gemm_4bit_forward" in problems[2] and "0%" in problems[3]


def test_clean_outputs_and_relative_locations_pass():
    notebook = {
        "cells": [
            {"cell_type": "markdown", "source": "see /tmp in the text of a markdown cell"},
            _cell({"output_type": "stream", "name": "stdout", "text": "results go to papermill_runs/cpu/40_ccl_csts"}),
            _cell({"output_type": "execute_result", "data": {"text/plain": "0.75"}}),
            _cell({"output_type": "display_data", "data": {"image/png": "iVBOR..."}}),
            _cell({"output_type": "stream", "name": "stdout", "text": "ratio 2.5 a/tmp/b is not a path start"}),
        ]
    }
    assert output_noise(notebook) == []
