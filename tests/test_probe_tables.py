"""The committed probe tables (benchmarks/results) read back as the notebooks print them."""

from __future__ import annotations

import json

import pytest

from stsnb.runs import probe_tables

ROW = {
    "setting": "sts smooth_k2, lr 5e-05, 960 pairs, batch 16, length 64",
    "dev_before": 68.04,
    "dev_after": 75.5,
    "difference": 7.46,
    "low": 6.1,
    "high": 8.9,
    "verdict": "supported",
    "loss_first": 2.5,
    "loss_last": 0.81,
    "steps": 60,
    "seconds": 95.4,
}


def test_a_row_prints_its_interval_verdict_losses_and_time():
    assert probe_tables.row_line({**ROW, "seed": 2}) == (
        "sts smooth_k2, lr 5e-05, 960 pairs, batch 16, length 64 seed 2: dev 68.04 -> 75.50, +7.46 [+6.10, +8.90] "
        "supported; loss 2.500 -> 0.810; 60 steps, 95 s"
    )


def test_load_reads_the_rows_and_names_the_file_of_a_bad_one(tmp_path):
    (tmp_path / "bench_x.json").write_text(json.dumps([ROW]))
    assert probe_tables.load("bench_x", tmp_path) == [ROW]
    assert probe_tables.table([ROW, ROW]).count("\n") == 1
    (tmp_path / "bench_y.json").write_text(json.dumps([ROW, {"setting": "lr 1"}]))
    with pytest.raises(ValueError, match=r"bench_y.json: row 1 lacks \['dev_before'"):
        probe_tables.load("bench_y", tmp_path)
    with pytest.raises(FileNotFoundError, match="bench_z.json"):
        probe_tables.load("bench_z", tmp_path)


def test_add_prints_each_row_and_rewrites_the_file_with_all_rows_so_far(tmp_path, capsys):
    rows: list[dict] = []
    path = tmp_path / "grid.json"
    probe_tables.add(rows, ROW, path)
    probe_tables.add(rows, {**ROW, "seed": 1}, path)
    assert json.loads(path.read_text()) == rows == [ROW, {**ROW, "seed": 1}]
    assert capsys.readouterr().out.splitlines() == [probe_tables.row_line(r) for r in rows]
