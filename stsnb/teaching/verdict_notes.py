"""How a student reads a run's verdicts: what each verdict the rules can print means (:func:`reading_guide`), and,
for every claim that was not tested or whose verdict differs from the committed cpu run's, a short paragraph written
from the run's own numbers (:func:`claim_note`): which arm did not train and by how much, what the cpu run found, and
why one seed at class size can point another way than three.

The rules themselves are ``stsnb.evaluation.verdict_rules`` and ``stsnb.evaluation.dev_gates``; docs/verdicts.md
gives each verdict with an example from the committed runs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..evaluation import verdict_rules
from ..evaluation.claims import deciding_interval, seeds_text, verdict_text
from ..evaluation.dev_gates import stored_seed
from ..runs.committed import cpu_row_of, result_text
from ..runs.plans import DEFAULT_OUT

GUIDE: dict[str, str] = {
    verdict_rules.SUPPORTED: (
        "the interval the verdict is decided on (one seed's; on several seeds the seeds-and-pairs interval of their "
        "mean) lies on the paper's side of 0 and not wholly inside the claim's smallest effect of interest: the run "
        "agrees with the paper's direction at a size that matters"
    ),
    verdict_rules.CONTRADICTED: (
        "that interval lies on the other side of 0 and the estimate is beyond the smallest effect: the run goes "
        "against the paper by more than a tiny amount, in our setting (a smaller model, less data), not the paper's"
    ),
    verdict_rules.SMALL_EFFECT: (
        "the interval excludes 0 but lies wholly inside the smallest effect of interest: a direction (its side is "
        "printed: on the paper's side, or against it) too small to be the effect the paper reports"
    ),
    verdict_rules.NO_MEANINGFUL_EFFECT: (
        "the interval contains 0 and lies wholly inside the smallest effect: whatever the true difference is, it is "
        "smaller than what the paper reports as real"
    ),
    verdict_rules.UNRESOLVED: (
        "the interval contains 0 and reaches past the smallest effect (or the seeds disagree): this run cannot tell; "
        "it is not evidence against the paper, and the detectable effect says how large a difference it could see"
    ),
    verdict_rules.EQUIVALENT: (
        "a robustness claim ('the setting hardly matters') whose interval lies inside its stated margin"
    ),
    verdict_rules.NOT_TESTED: (
        "a precondition failed, most often an arm that did not train: its kept checkpoint did not beat its start "
        "beyond noise on dev pairs that checkpoint selection never scored, or a baseline moved dev by less "
        "than the claim's smallest effect. The claim then says nothing about the paper either way; its difference "
        "is still printed"
    ),
}


def reading_guide(rows: Iterable[Mapping[str, Any]]) -> str:
    """Markdown: every verdict the rules can print with what it means, the ones this run printed first and counted,
    and the two marks a verdict may carry (one seed: provisional; several: each seed's verdict beside)."""
    rows = list(rows)
    counts = {v: sum(r.get("verdict") == v for r in rows) for v in verdict_rules.VERDICTS}
    printed = [v for v in verdict_rules.VERDICTS if counts[v]]
    lines = [
        "**Reading the verdicts** (every verdict the rules can print; this run's first, with how many claims got it)."
    ]
    for verdict in printed + [v for v in verdict_rules.VERDICTS if not counts[v]]:
        label = f"**{verdict}** ({counts[verdict]} in this run)" if counts[verdict] else f"*{verdict}* (none here)"
        lines.append(f"- {label}: {GUIDE[verdict]}.")
    lines.append(
        "- A decisive verdict on **one seed** is marked *provisional*: its interval covers the noise of the test pairs "
        "and none of the spread between training seeds. On **several seeds** the verdict is decided on the interval "
        "of their mean, each seed's own verdict printed beside it."
    )
    return "\n".join(lines)


def untrained_arms(row: Mapping[str, Any]) -> list[str]:
    """For a claim's arms that did not count as trained on some seed: "SimCSE, seed 0: ... held-out dev +0.04 over its
    start (noise bound +1.10 on 300 pairs selection never saw) ... (did not train: within noise on held-out dev)", one
    line per arm and seed."""
    out = []
    for gate in row.get("dev_gates") or ():
        for entry in gate.get("seeds") or ():
            seed = stored_seed(entry)
            if not seed.trained:
                out.append(f"{gate['arm']}, {seed.describe()}")
    return out


def seed_spread(row: Mapping[str, Any]) -> str | None:
    """ "its seeds' differences ran from -0.74 to +2.32": the spread of a multi-seed row's per-seed differences."""
    differences = [e["difference"] for e in row.get("per_seed") or () if isinstance(e.get("difference"), int | float)]
    if len(differences) < 2:
        return None
    return f"its {len(differences)} seeds' differences ran from {min(differences):+.2f} to {max(differences):+.2f}"


def claim_note(row: Mapping[str, Any], cpu_row: Mapping[str, Any] | None, profile: str) -> str | None:
    """A paragraph for a claim that was not tested, or whose verdict differs from the committed cpu run's on the same
    claim (in a profile other than cpu), from the numbers both runs recorded; None where there is nothing to explain."""
    verdict, parts = row.get("verdict"), []
    if verdict == verdict_rules.NOT_TESTED:
        arms = untrained_arms(row)
        because = "; ".join(arms) if arms else str(row.get("not_tested_because") or "a precondition failed")
        parts.append(f"*Not tested* here: {because}.")
    differs = profile != "cpu" and cpu_row is not None and cpu_row.get("verdict") != verdict
    if differs:
        difference, low, high = deciding_interval(row)
        parts.append(
            f"This run ({seeds_text(row)}): {difference:+.2f} [{low:+.2f}, {high:+.2f}], {verdict_text(row)}; the "
            f"committed cpu run: {result_text(cpu_row)}."
        )
        spread = seed_spread(cpu_row)
        if spread:
            parts.append(
                f"In the cpu run {spread}: one training seed is one draw from that spread, scored on fewer test pairs "
                "at class size, so it can land on the other side of the cpu run's mean; the cpu verdict, decided on "
                "the mean over its seeds, is the one to read."
            )
    elif profile != "cpu" and cpu_row is None and verdict == verdict_rules.NOT_TESTED:
        parts.append("The committed cpu run has no row for this claim.")
    if not parts:
        return None
    return f"- **{row['claim']}.** " + " ".join(parts)


def notes(rows: Sequence[Mapping[str, Any]], notebook: str, profile: str, *, runs_dir: Path = DEFAULT_OUT) -> str:
    """Markdown: :func:`claim_note` for every claim of ``rows`` that needs one (the committed cpu run read from
    ``runs_dir``), or a line saying that none does."""
    found = [
        note
        for row in rows
        if (note := claim_note(row, cpu_row_of(notebook, row, profile, runs_dir=runs_dir), profile)) is not None
    ]
    if not found:
        return "**Verdicts to explain:** none: every claim was tested, and agrees with the committed cpu run's verdict."
    return "\n".join(["**Verdicts to explain** (written from this run's numbers and the committed cpu run's):", *found])
