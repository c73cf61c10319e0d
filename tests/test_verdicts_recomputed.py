"""Every verdict of every committed cpu and class run, recomputed from its metrics.json under the rules docs/verdicts.md
writes down, by code of this file's own (not the package's claim builder): the training gate per seed, the seeds a
claim keeps, the interval it is decided on (the seeds-and-pairs interval, never narrower than the t interval of the
seeds' differences, on several seeds), the sized, plain and equivalence rules, and "not tested" on any failed
precondition. A mismatch is a run whose verdict the documented rules do not give."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from pending_reruns import PENDING_RULES, expect_failure_if_pending
from scipy.stats import t as student_t

ROOT = Path(__file__).resolve().parent.parent / "papermill_runs"
RUNS = [
    (profile, folder.name)
    for profile in ("cpu", "class")
    for folder in sorted((ROOT / profile).iterdir())
    if (folder / "metrics.json").is_file() and "claims" in json.loads((folder / "metrics.json").read_text())
]


def trained(seed: dict) -> bool:
    """docs/verdicts.md, the training gate: a step past 0, a weight changed, a dev gain above its noise bound (on
    held-out dev pairs, or best-of-k where none were left), and at least the least gain a claim asks of its baseline."""
    change = seed.get("weight_change")
    return (
        seed["selected_step"] > 0
        and (change is None or change > 0)
        and seed.get("noise_bound") is not None
        and seed["dev_gain"] > seed["noise_bound"]
        and (seed.get("minimum_gain") is None or seed["dev_gain"] >= seed["minimum_gain"])
    )


def side(low: float, high: float) -> int:
    return 1 if low > 0 else -1 if high < 0 else 0


def sized(difference: float, low: float, high: float, direction: int, effect: float) -> tuple[str, str | None]:
    inside = -effect < low and high < effect
    where = side(low, high)
    if where == direction:
        return ("small effect", "on the paper's side") if inside else ("supported", None)
    if where == -direction:
        if inside:
            return "small effect", "against the paper"
        return ("contradicted" if -direction * difference > effect else "unresolved"), None
    return ("no meaningful effect" if inside else "unresolved"), None


def recomputed(row: dict) -> tuple[str, str | None, list[str]]:
    """(verdict, side of a small effect, the seeds kept) under the documented rules, from the row's stored numbers."""
    per_seed = row["per_seed"]
    kept = [e["seed_run"] for e in per_seed]
    failed = [p for p in row.get("preconditions") or [] if not p["holds"]]
    gates = row.get("dev_gates")
    if gates:
        run = [e for e in gates[0]["seeds"]]
        labels = [s["seed"] for s in run]
        left = {s["seed"] for g in gates for s in g["seeds"] if not trained(s)}
        needed = min(2, len(labels))
        gate_holds = all(sum(trained(s) for s in g["seeds"]) >= needed for g in gates)
        common = [label for label in labels if label not in left]
        failed = [
            p for p in failed if not p["name"].endswith(" trained on dev") and "on the same seeds" not in p["name"]
        ]
        if not gate_holds or len(common) < needed:
            return "not tested", None, kept
        kept = common
    if failed:
        return "not tested", None, kept
    if len(kept) > 1:
        both = row["seeds_and_pairs"]
        differences = [e["difference"] for e in per_seed]
        n = len(differences)
        mean = sum(differences) / n
        sd = math.sqrt(sum((d - mean) ** 2 for d in differences) / (n - 1))
        half = float(student_t.ppf(0.975, n - 1)) * sd / math.sqrt(n)
        assert both["low"] <= both["difference"] - half + 1e-9 and both["high"] >= both["difference"] + half - 1e-9
        difference, low, high = both["difference"], both["low"], both["high"]
    else:
        (entry,) = per_seed
        difference, low, high = entry["difference"], entry["low"], entry["high"]
    if row.get("test") == "equivalence":
        margin = row["margin"]
        if -margin < low and high < margin:
            return "equivalent", None, kept
        if low > margin or high < -margin:
            return "contradicted", None, kept
        return "unresolved", None, kept
    if row.get("test") == "no direction":
        return "unresolved", None, kept
    direction = row["paper_direction"]
    if row.get("smallest_effect") is not None:
        verdict, where = sized(difference, low, high, direction, row["smallest_effect"])
        return verdict, where, kept
    found = side(low, high)
    return ("supported" if found == direction else "contradicted" if found == -direction else "unresolved"), None, kept


@pytest.mark.parametrize(("profile", "notebook"), RUNS)
def test_every_committed_verdict_follows_the_documented_rules(profile, notebook, request):
    expect_failure_if_pending(request, profile, notebook, PENDING_RULES)
    rows = json.loads((ROOT / profile / notebook / "metrics.json").read_text())["claims"]
    mismatches = []
    for row in rows:
        verdict, where, kept = recomputed(row)
        stored_kept = [e["seed_run"] for e in row["per_seed"]]
        if (verdict, where) != (row["verdict"], row.get("effect_side")) or (
            verdict != "not tested" and kept != stored_kept
        ):
            mismatches.append(
                f"{row['claim']!r}: stored {row['verdict']} {stored_kept}, the rules give {verdict} {kept}"
            )
        for gate in row.get("dev_gates") or []:
            for seed in gate["seeds"]:
                if seed["trained"] != trained(seed):
                    mismatches.append(
                        f"{row['claim']!r}: {gate['arm']} {seed['seed']} stored trained={seed['trained']}"
                    )
    assert not mismatches, f"{profile}/{notebook}:\n" + "\n".join(mismatches)


def test_the_recomputation_catches_a_verdict_the_rules_do_not_give():
    row = {
        "per_seed": [{"seed_run": "seed 0", "difference": 0.45, "low": 0.12, "high": 0.78}],
        "preconditions": [],
        "test": "direction",
        "paper_direction": 1,
        "smallest_effect": 1.525,
        "verdict": "no meaningful effect",
    }
    assert recomputed(row)[:2] == ("small effect", "on the paper's side")
    gate = {"seed": "seed 0", "selected_step": 10, "weight_change": 2e-3, "dev_gain": 0.07, "noise_bound": 0.31}
    assert not trained(gate) and trained({**gate, "dev_gain": 0.5})
    assert not trained({**gate, "dev_gain": 0.5, "minimum_gain": 0.77})
