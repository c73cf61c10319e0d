"""``probe.baseline_note``: the markdown notebook 20 writes on whether its main claim's baseline trained on dev, from
the claim row's dev gate and the committed probe rows (synthetic rows: pure text logic), and the committed probe
tables it reads."""

from __future__ import annotations

from stsnb.papers.sts_regression.probe import BASELINE_PROBES, ProbeSetting, baseline_note, no_main_claim_note
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


def _main_row(trained: bool) -> dict:
    """The main claim's row as it stores cross entropy's dev gate: seed 0 kept step 0 unless ``trained``."""
    seed0 = {"seed": "seed 0", "selected_step": 180 if trained else 0, "dev_gain": 0.81 if trained else 0.0}
    seed1 = {"seed": "seed 1", "selected_step": 150, "dev_gain": 4.69}
    for entry in (seed0, seed1):
        entry.update(noise_bound=0.6, evaluations=8)
    entries = [
        {**e, "total_steps": 180, "weight_change": 0.03, "trained": e["selected_step"] > 0} for e in (seed0, seed1)
    ]
    return {
        "verdict": "supported" if trained else "not tested",
        "seeds": 2 if trained else 1,
        "dev_gates": [{"arm": "smooth_k2_rounded", "seeds": []}, {"arm": "cross_entropy", "seeds": entries}],
    }


ROWS = [
    _row(CPU, 2.93, 118.0),
    _row(ProbeSetting("sts", "cross_entropy", 2e-4, 5098), 3.03, 258.0),
    _row(ProbeSetting("sts", "smooth_k2", 2e-4, 2880), 3.64, 110.0),  # another loss: not listed
    _row(ProbeSetting("nli", "cross_entropy", 5e-4, 960, 16, 256), -1.5, 112.0, "unresolved"),  # another task
]


def test_a_baseline_that_trained_on_dev_says_so_from_its_dev_gate():
    note = baseline_note(_main_row(True), ROWS, CPU, table1_seconds=1304)
    assert "trained on dev" in note and "no seed is left out: supported" in note and "probe" not in note
    assert "seed 0: selected step 180 of 180, dev +0.81 over its start (best-of-8 noise bound +0.60)" in note


def test_a_baseline_that_did_not_train_names_the_seeds_left_out_lists_its_probes_and_scales_the_largest():
    note = baseline_note(_main_row(False), ROWS, CPU, table1_seconds=1304)
    assert "did not train on dev on every seed" in note and "seed 0: selected step 0 of 180, dev +0.00" in note
    assert "seed 0 is left out of the main claim, which keeps 1 of 2 seed(s): not tested." in note
    listed = [line for line in note.splitlines() if line.startswith("- ")]
    assert len(listed) == 2 and all("sts cross_entropy" in line for line in listed)
    ratio = 258.0 / 118.0
    assert f"{ratio:.1f}x" in note and f"about {ratio * 1304:.0f} s, past the 30-minute budget" in note


def test_a_largest_setting_that_fits_is_said_to_fit():
    note = baseline_note(_main_row(False), ROWS, CPU, table1_seconds=600)
    assert f"about {258.0 / 118.0 * 600:.0f} s, within the 30-minute budget" in note


def test_without_a_probe_of_the_run_setting_nothing_is_scaled_and_without_a_gate_nothing_is_said():
    other = ProbeSetting("sts", "cross_entropy", 1e-3, 2880)
    note = baseline_note(_main_row(False), ROWS, other, table1_seconds=1304)
    assert "budget" not in note and "left out of the main claim" in note
    assert "no dev gate of cross_entropy" in baseline_note({"verdict": "x"}, ROWS, CPU, table1_seconds=1)
    assert "does not test the paper's main claim" in no_main_claim_note(["smooth_k2"])


def test_the_committed_probe_tables_load_and_hold_the_cpu_setting_and_all_pairs():
    rows = [row for name in BASELINE_PROBES for row in probe_tables.load(name)]
    settings = {row["setting"] for row in rows}
    assert CPU.label() in settings
    assert ProbeSetting("sts", "cross_entropy", 2e-4, 5098).label() in settings
