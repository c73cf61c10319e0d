"""Notebook 40's helpers (stsnb.papers.ccl.protocol): the protocol table printed from the parameters cell's values,
and the measured runtimes read from committed runs."""

from __future__ import annotations

import json

import nbformat
import pytest
import yaml

from stsnb import runner
from stsnb.papers import ccl

NOTEBOOK = runner.NOTEBOOKS_DIR / "40_ccl_csts.ipynb"


@pytest.fixture(scope="module")
def cpu_params() -> dict:
    """The parameters cell's own values (the cpu profile), executed as the notebook would."""
    cell = next(c for c in nbformat.read(NOTEBOOK, as_version=4).cells if "parameters" in c.metadata.get("tags", []))
    namespace: dict = {}
    exec(cell.source, namespace)
    return {k: v for k, v in namespace.items() if not k.startswith("__")}


def _with_plan(params: dict, profile: str) -> dict:
    plan = runner.load_plan(runner.plan_path(profile))
    return {**params, **plan.notebooks["40_ccl_csts"]}


def test_the_cpu_protocol_names_every_difference_from_the_paper(cpu_params):
    rows = {r.detail: r for r in ccl.protocol_rows(cpu_params)}
    differ = {d for d, r in rows.items() if r.differs}
    assert {"backbone", "pooling", "data", "evaluation rows", "training data", "epochs", "batch"} <= differ
    assert {"checkpoint selection", "selection frequency", "learning rates", "training seeds"} <= differ
    assert rows["pooling"].ours == "minilm-l6: mean" and "first token" in rows["pooling"].paper
    assert rows["epochs"].paper.startswith("5 (Table 6, SimCSE-base)") and rows["epochs"].ours == "1"
    assert rows["batch"].ours == "16 rows (8 quadruples) x 1 accumulated"
    assert rows["training seeds"].ours.startswith("0, 1, 2 for Table 3's bi-encoder")
    text = ccl.protocol_markdown(cpu_params)
    assert text.count("| detail | paper | this run | why |") == 2 and "`cpu`" in text
    assert all(r.why for r in rows.values())


def test_the_paper_profile_follows_the_paper_where_it_can(cpu_params):
    rows = {r.detail: r for r in ccl.protocol_rows(_with_plan(cpu_params, "paper"))}
    same = {d for d, r in rows.items() if not r.differs}
    assert {"backbone", "pooling", "training data", "epochs", "batch", "learning rates", "Table 4 ablations"} <= same
    assert rows["data"].differs and rows["evaluation rows"].differs  # no plan can undo these


def test_the_temperature_reading_row_follows_the_parameter(cpu_params):
    def reading(params):
        return next(r for r in ccl.reading_rows(params) if "Eq. 10" in r.detail)

    assert not reading(cpu_params).differs and "divisor" in reading(cpu_params).ours
    multiplier = reading({**cpu_params, "temperature_reading": "multiplier"})
    assert multiplier.differs and "multiplier" in multiplier.ours


def test_measured_runtimes_come_from_committed_runs_only(tmp_path):
    folder = tmp_path / "cpu" / "40_ccl_csts"
    folder.mkdir(parents=True)
    (folder / "metrics.json").write_text(json.dumps({"seconds": 1053.0}))
    (folder / "env.json").write_text(
        json.dumps({"cpu_count": 2, "git_sha": "6753319741eefd98550fc4b349d259ca0b12037f"})
    )
    found = ccl.measured_runtimes("40_ccl_csts", tmp_path)
    assert found == {"smoke": None, "class": None, "cpu": (1053.0, 2, "6753319")}
    text = ccl.runtimes_text("40_ccl_csts", tmp_path)
    assert "cpu     1053 s (17.6 min) on 2 CPU cores, run at commit 6753319" in text
    assert "smoke  no committed run" in text


def test_the_committed_cpu_run_is_read_as_the_summary_reads_it():
    folder = runner.DEFAULT_OUT / "cpu" / "40_ccl_csts"
    if not folder.is_dir():
        pytest.skip("no committed cpu run of notebook 40")
    seconds, cores, _ = ccl.measured_runtimes("40_ccl_csts")["cpu"]
    assert seconds == runner.run_seconds(folder, "40_ccl_csts") and cores == 2
    assert yaml.safe_load((folder / "params.yaml").read_text())["profile"] == "cpu"
