"""What notebook 20 concludes from its claim rows: the takeaway sentence, which opens with the verdict of the paper's
main claim (``claims.MAIN_CLAIMS``, whatever it is), the findings written from what the run measured, and how far our
levels compare with the paper's."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ...evaluation import claims, dev_gates, verdict_rules
from ...evaluation.main_claims import main_claim_text
from .claims import CONFOUND, MAIN_CLAIMS, MAIN_PAIR, TABLE1_CLAIMS

MAIN = MAIN_CLAIMS[0]  # Table 1: regression (Smooth K2) beats classification (cross entropy) on the same labels
PAPER_MODELS: dict[str, str] = {  # the paper's backbone of each row we compare with
    "BERT-base": "bert-base-uncased",
    "RoBERTa-base": "roberta-base",
    "Jina v2": "jinaai/jina-embeddings-v2-base-en",
    "Nomic Embed v1": "nomic-ai/nomic-embed-text-v1",
}


def comparability(rows_by_backbone: Mapping[str, str], all_seven_tasks: bool, paper_scale: bool) -> str:
    """Whether our levels can be read against the paper's: "yes" when every backbone is the paper's model for the
    row it is compared with and the run is at the paper's scale (``paper_scale``: its training data, every test
    pair); "no" when the average is not over the seven tasks (not the paper's column); otherwise "direction only"
    (another backbone, other data or a sample of pairs: only the signs of differences carry over)."""
    if not all_seven_tasks:
        return "no"
    same_models = all(PAPER_MODELS.get(row) == backbone for backbone, row in rows_by_backbone.items())
    return "yes" if same_models and paper_scale else "direction only"


def _short(row: Mapping) -> str:
    """The difference and the interval the verdict was decided on (a multi-seed claim's seeds-and-pairs interval)."""
    difference, low, high = claims.deciding_interval(row)
    return f"{difference:+.2f} [{low:+.2f}, {high:+.2f}]"


def main_claim_row(rows: Iterable[Mapping]) -> Mapping | None:
    """The row that tests the paper's main claim (marked ``main_claim``, :data:`MAIN`), None where it did not run."""
    return MAIN.row_in(rows)


def _controls(rows: Iterable[Mapping], top: Mapping) -> dict[str, list[str]]:
    """The main claim's controls on its backbone, by what they isolate (Table 1's other claims: the zero-gradient
    buffer, the adaptive gradient): "Translated ReLU beats L1 +0.44 [+0.14, +0.74] supported" each."""
    out: dict[str, list[str]] = {}
    for c in TABLE1_CLAIMS:
        if c == MAIN_PAIR or " helps: " not in c.text:
            continue
        what, versus = c.text.split(" helps: ")
        for r in rows:
            same = r.get("table") == "Table 1" and (r.get("a"), r.get("b")) == (c.a, c.b)
            if same and r.get("backbone") == top.get("backbone"):
                out.setdefault(what, []).append(f"{versus} {_short(r)} {r['verdict']}")
    return out


def takeaway(rows: Sequence[Mapping], cpu: str = "") -> str:
    """The run's takeaway: it opens with the paper's main claim and its verdict, whatever it is ("The paper's main
    claim: Table 1: ...: supported (3 seeds), +1.63 [+0.08, +3.46]", ``main_claim_text``), with ``cpu``, the committed
    cpu run's result on the same claim, beside it in another profile's run (``stsnb.runs.committed.cpu_result``); when
    not tested, the first precondition that failed; then what our controls attribute it to (the zero-gradient buffer
    and the adaptive gradient claims, each with its interval and verdict), or what this run checked instead."""
    rows = list(rows)
    top = main_claim_row(rows)
    text = "The paper's main claim: " + main_claim_text(MAIN, rows) + (f" ({cpu})" if cpu else "")
    if top is None:
        confounded = next((r for r in rows if r.get("confounded_with")), None)
        if confounded is not None:  # the STS analogue without the arm on the same labels
            text += (
                f"; its only comparison here, {confounded['claim'].removeprefix('Table 1, ')} ({_short(confounded)}), "
                f"is a check confounded with {CONFOUND.split(':')[0]}"
            )
        return text + f"; {len(rows)} other claim(s) and check(s) were run."
    failed = claims.failed_preconditions(top)
    if failed:
        text += f", because '{failed[0]['name']}' does not hold"
    controls = _controls(rows, top)
    if not controls:
        return text + "; no control of it ran."
    parts = [f"{what} ({'; '.join(found)})" for what, found in controls.items()]
    return text + ". What our controls attribute it to: " + ", ".join(parts) + "."


def row_notes(row: Mapping) -> list[str]:
    """Lines a notebook prints under a claim (``claims.describe`` gives the claim itself): a decisive verdict on one
    seed marked provisional, the smallest effect of interest with its reason, whether an equivalence margin is
    reachable, and the seeds the dev gates left out of a claim tested on the others."""
    out = []
    if claims.provisional(row):
        out.append(f"verdict: {claims.verdict_text(row, mark_provisional=True)}")
    if row.get("smallest_effect") is not None:
        out.append(f"smallest effect of interest: {row['smallest_effect']:.2f} ({row['smallest_effect_reason']})")
    if row.get("reachability"):
        out.append(str(row["reachability"]))
    if row.get("verdict") != verdict_rules.NOT_TESTED:  # a claim not tested says why in its own line
        out += [f"left out: {seed} ({reason})" for seed, reason in (row.get("seeds_left_out") or {}).items()]
    return out


def _gate_of(row: Mapping, arm: str) -> Mapping | None:
    return next((g for g in row.get("dev_gates") or [] if g.get("arm") == arm), None)


def _measured_lines(rows: Iterable[Mapping]) -> list[str]:
    """Bullets written from what the run measured on dev: the seeds each claim left out and why, and whether
    +Contrast trained (Section 4.2 says contrastive learning on these pairs may not)."""
    out = []
    for r in rows:
        if r.get("seeds_left_out") and r["verdict"] != verdict_rules.NOT_TESTED:  # it stands on the seeds left
            why = "; ".join(f"{seed} ({reason})" for seed, reason in r["seeds_left_out"].items())
            out.append(f"- {r['claim']}: on {claims.seeds_text(r)}; left out, not trained on dev: {why}.")
        contrast = _gate_of(r, "+Contrast")
        if contrast is None:
            continue
        entries = dev_gates.seed_evidence(contrast)
        if all(e.get("trained") for e in contrast["seeds"]):
            out.append(f"- +Contrast trained on STS-B dev ({entries}), so {r['claim']} compares two trained arms.")
        else:
            out.append(
                f"- +Contrast did not train on STS-B dev ({entries}): it never beat the encoder it started from by "
                f"more than dev noise, so {r['claim']} is not tested on that seed (Section 4.2 says "
                'contrastive learning on these pairs "yields little improvement and may even lead to model collapse").'
            )
    return out


def _unreachable(row: Mapping) -> bool:
    """Whether an equivalence row says "equivalent" is out of reach with its intervals (``reachability``)."""
    return str(row.get("reachability", "")).startswith("equivalence not reachable")


def conclusions(rows: Sequence[Mapping], *, profile: str, scope: str) -> str:
    """The Markdown summary of a run, written from its claim rows: the checks of our setting (did fine-tuning move
    the encoder), then the claims of the paper by verdict (each with its interval and seeds), the
    seeds left out on dev and whether +Contrast trained, the reasons for "not tested", the AdamW check, and each
    equivalence claim whose margin this run's intervals cannot reach."""
    paper, checks = claims.split_by_kind(rows)

    def listed(verdict: str) -> str:
        chosen = [r for r in paper if r["verdict"] == verdict]
        if verdict == verdict_rules.NOT_TESTED:  # an interval on a setting that did not train says nothing: names only
            return "; ".join(f"{r['claim']} ({claims.seeds_text(r)})" for r in chosen) or "none"
        return "; ".join(f"{r['claim']} ({_short(r)}, {claims.seeds_text(r)})" for r in chosen) or "none"

    counts = claims.verdict_counts(paper)
    check_text = "; ".join(f"{r['claim']}: {_short(r)}, **{claims.verdict_text(r)}**" for r in checks) or "none run"
    reasons = dict.fromkeys(
        p["name"] for r in paper if r["verdict"] == verdict_rules.NOT_TESTED for p in claims.failed_preconditions(r)
    )
    k_only = [r for r in rows if claims.is_equivalence(r) and r["a"].split(" x0=")[-1] == r["b"].split(" x0=")[-1]]
    lines = [
        f"**What this run shows** (profile `{profile}`, {scope}).",
        "",
        f"**The paper's main claim:** {main_claim_text(MAIN, list(rows))}.",
        "",
        f"**Checks of our setting** (not claims of the paper): {check_text}.",
        "",
        f"**Claims of the paper** ({len(paper)}; each quotes its sentence in Section 6):",
        "",
        *(f"- **{v.capitalize()}** ({counts[v]}): {listed(v)}." for v in verdict_rules.VERDICTS),
        *_measured_lines(paper),
        "- Preconditions that failed (their claims are not tested): "
        + ("; ".join(f"'{name}'" for name in reasons) or "none")
        + ".",
        f"- The AdamW argument (Section 1) predicts no change from $k$ alone: of {len(k_only)} such row(s), "
        f"{sum(r['low'] <= 0 <= r['high'] for r in k_only)} have an interval containing 0.",
        *(f"- {r['claim']}: {r['reachability']}." for r in paper if _unreachable(r)),
    ]
    for r in (r for r in rows if r.get("same_comparison_as")):
        lines.append(
            f"- {r['claim']} is the same comparison as '{r['same_comparison_as']}' here (+Contrast's test "
            "predictions are those of the encoder it started from), so it is counted once, as not tested."
        )
    return "\n".join(lines)
