"""``probe.baseline_note``: the markdown notebook 20 writes on its headline's baseline precondition, from the claim row
and the committed probe rows (synthetic rows: pure text logic), and the committed probe tables it reads."""

from __future__ import annotations

from stsnb.papers.sts_regression.probe import BASELINE_PROBES, ProbeSetting, baseline_note
from stsnb.runs import probe_tables

CPU = ProbeSetting("sts", "cross_entropy", 2e-4, 2880)


def _row(setting: ProbeSetting, difference: float, seconds: float, verdict: str = "supported") -> dict:
    return {
        "setting": setting.label(),
        "dev_before": 68.0,
        "dev_after": 68.0 + difference,
        "difference": difference,
        "low": difference - 1,
        "high": difference + 1,
        "verdict": verdict,
        "loss_first": 1.7,
        "loss_last": 1.3,
        "steps": setting.pairs // setting.batch_size,
        "seconds": seconds,
    }


def _headline(holds: bool) -> dict:
    evidence = "seed 0: +0.42 [-0.36, +1.22]; seed 1: +2.02 [+1.39, +2.66]"
    return {
        "verdict": "supported" if holds else "not tested",
        "seeds": 2,
        "preconditions": [
            {"name": "the cross-entropy baseline moved the encoder", "holds": holds, "evidence": evidence},
            {"name": "smooth_k2 is not its starting point", "holds": True, "evidence": "step 165"},
        ],
    }


ROWS = [
    _row(CPU, 2.93, 118.0),
    _row(ProbeSetting("sts", "cross_entropy", 2e-4, 5098), 3.03, 258.0),
    _row(ProbeSetting("sts", "smooth_k2", 2e-4, 2880), 3.64, 110.0),  # another loss: not listed
    _row(ProbeSetting("nli", "cross_entropy", 5e-4, 960, 16, 256), -1.5, 112.0, "unresolved"),  # another task
]


def test_a_baseline_that_trained_says_the_headline_is_tested():
    note = baseline_note(_headline(True), ROWS, CPU, table1_seconds=1304)
    assert "trained" in note and "tested: supported" in note and "probe" not in note


def test_a_failed_baseline_quotes_its_evidence_lists_its_probes_and_scales_the_largest_to_the_budget():
    note = baseline_note(_headline(False), ROWS, CPU, table1_seconds=1304)
    assert "**not tested**" in note and "seed 0: +0.42 [-0.36, +1.22]" in note
    listed = [line for line in note.splitlines() if line.startswith("- ")]
    assert len(listed) == 2 and all("sts cross_entropy" in line for line in listed)
    ratio = 258.0 / 118.0
    assert f"{ratio:.1f}x" in note and f"about {ratio * 1304:.0f} s, past the 30-minute budget" in note
    assert "not explained" in note  # the probe moved dev in the cpu setting, the run did not move the test tasks


def test_a_largest_setting_that_fits_is_said_to_fit():
    note = baseline_note(_headline(False), ROWS, CPU, table1_seconds=600)
    assert f"about {258.0 / 118.0 * 600:.0f} s, within the 30-minute budget" in note


def test_without_a_probe_of_the_run_setting_nothing_is_scaled():
    other = ProbeSetting("sts", "cross_entropy", 1e-3, 2880)
    note = baseline_note(_headline(False), ROWS, other, table1_seconds=1304)
    assert "budget" not in note and "**not tested**" in note


def test_the_committed_probe_tables_load_and_hold_the_cpu_setting_and_all_pairs():
    rows = [row for name in BASELINE_PROBES for row in probe_tables.load(name)]
    settings = {row["setting"] for row in rows}
    assert CPU.label() in settings
    assert ProbeSetting("sts", "cross_entropy", 2e-4, 5098).label() in settings
