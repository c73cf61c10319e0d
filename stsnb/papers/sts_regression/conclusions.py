"""What notebook 20 concludes from its claim rows: the headline row, the takeaway sentence, the findings and how far
our levels compare with the paper's."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ...evaluation import claims, verdict_rules
from .claims import CONFOUND, HEADLINE, TABLE1_CLAIMS

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
    return f"{row['difference']:+.2f} [{row['low']:+.2f}, {row['high']:+.2f}]"


def headline(rows: Iterable[Mapping]) -> Mapping | None:
    """The headline claim's row (Table 1: Smooth K2 vs cross entropy, the first of several backbones; in a run
    without cross entropy the check :func:`lead_with_check` marks; ``stsnb.evaluation.claims.headline_of``)."""
    return claims.headline_of(rows)


def _controls(rows: Iterable[Mapping], top: Mapping) -> dict[str, list[str]]:
    """The headline's controls on its backbone, by what they isolate (Table 1's other claims: the zero-gradient
    buffer, the adaptive gradient): "Translated ReLU beats L1 +0.44 [+0.14, +0.74] supported" each."""
    out: dict[str, list[str]] = {}
    for c in TABLE1_CLAIMS:
        if c == HEADLINE or " helps: " not in c.text:
            continue
        what, versus = c.text.split(" helps: ")
        for r in rows:
            same = r.get("table") == "Table 1" and (r.get("a"), r.get("b")) == (c.a, c.b)
            if same and r.get("backbone") == top.get("backbone"):
                out.setdefault(what, []).append(f"{versus} {_short(r)} {r['verdict']}")
    return out


def takeaway(rows: Sequence[Mapping], cpu: str = "") -> str:
    """One sentence for the overview: the paper's headline (Table 1) with our difference, its interval, the verdict
    with its seeds (and, when not tested, the first precondition that failed), then what our controls attribute it
    to: the zero-gradient buffer and the adaptive gradient claims, each with its interval and verdict. ``cpu``: the
    committed cpu run's result on the headline's claim, set beside ours in another profile's run
    (``stsnb.runs.committed.cpu_result``)."""
    top = headline(rows)
    beside = f" ({cpu})" if cpu else ""
    if top is not None and top.get("kind") == claims.CHECK:  # the run trained no comparison of the paper's headline
        return (
            f"Headline of this run, a check of our setting (not a claim of the paper): "
            f"{top['claim'].removeprefix('Table 1, ')}: ours {_short(top)}, {claims.verdict_text(top)}{beside}. The "
            f"paper's headline ({HEADLINE.text}) was not run in this profile; {len(rows) - 1} other claims were "
            "checked."
        )
    if top is None:
        confounded = next((r for r in rows if r.get("confounded_with")), None)
        if confounded is not None:  # the STS analogue without the arm on the same labels
            return (
                f"The paper's headline ({HEADLINE.text}) was not tested: its only comparison here, "
                f"{confounded['claim'].removeprefix('Table 1, ')} ({_short(confounded)}), is a check confounded with "
                f"{CONFOUND.split(':')[0]}; {len(rows) - 1} other claims were checked."
            )
        return f"The paper's headline ({HEADLINE.text}) was not run; {len(rows)} other claims were checked."
    text = f"Paper's headline (Section 4.1): {top['claim'].removeprefix('Table 1, ')}: ours {_short(top)}, "
    text += claims.verdict_text(top) + beside
    failed = claims.failed_preconditions(top)
    if failed:
        text += f", because '{failed[0]['name']}' does not hold"
    controls = _controls(rows, top)
    if not controls:
        return text + "; no control of it ran."
    parts = [f"{what} ({'; '.join(found)})" for what, found in controls.items()]
    return text + ". What our controls attribute it to: " + ", ".join(parts) + "."


def _finding_lines(rows: Iterable[Mapping]) -> list[str]:
    """One bullet per arm whose staying put was recorded as the paper's finding (``claims.staying_put``)."""
    out = []
    for r in rows:
        for p in r.get("preconditions") or []:
            if str(p.get("name", "")).endswith(claims.STAYED_PUT):
                measured = str(p.get("evidence", "")).split("; measured: ", 1)[-1]
                out.append(f"- {r['claim']}: {p['name']}; measured: {measured}.")
    return out


def conclusions(rows: Sequence[Mapping], *, profile: str, scope: str) -> str:
    """The Markdown summary of a run, written from its claim rows: the checks of our setting (did fine-tuning move
    the encoder), then the claims of the paper by verdict (each with its interval and seeds), the arms whose
    staying put is the paper's finding, the reasons for "not tested", the AdamW check."""
    paper, checks = claims.split_by_kind(rows)

    def listed(verdict: str) -> str:
        chosen = [r for r in paper if r["verdict"] == verdict]
        if verdict == verdict_rules.NOT_TESTED:  # an interval on a setting that did not train says nothing: names only
            return "; ".join(f"{r['claim']} ({claims.seeds_text(r)})" for r in chosen) or "none"
        return "; ".join(f"{r['claim']} ({_short(r)}, {claims.seeds_text(r)})" for r in chosen) or "none"

    counts = claims.verdict_counts(paper)
    check_text = "; ".join(f"{r['claim']}: {_short(r)}, **{claims.verdict_text(r)}**" for r in checks) or "none run"
    reasons = dict.fromkeys(
        p["name"] for r in rows if r["verdict"] == verdict_rules.NOT_TESTED for p in claims.failed_preconditions(r)
    )
    k_only = [r for r in rows if claims.is_equivalence(r) and r["a"].split(" x0=")[-1] == r["b"].split(" x0=")[-1]]
    lines = [
        f"**What this run shows** (profile `{profile}`, {scope}).",
        "",
        f"**Checks of our setting** (not claims of the paper): {check_text}.",
        "",
        f"**Claims of the paper** ({len(paper)}; each quotes its sentence in Section 6):",
        "",
        *(f"- **{v.capitalize()}** ({counts[v]}): {listed(v)}." for v in verdict_rules.VERDICTS),
        *_finding_lines(paper),
        "- Preconditions that failed (their claims are not tested): "
        + ("; ".join(f"'{name}'" for name in reasons) or "none")
        + ".",
        f"- The AdamW argument (Section 1) predicts no change from $k$ alone: of {len(k_only)} such row(s), "
        f"{sum(r['low'] <= 0 <= r['high'] for r in k_only)} have an interval containing 0.",
    ]
    for r in (r for r in rows if r.get("same_comparison_as")):
        lines.append(
            f"- {r['claim']} is the same comparison as '{r['same_comparison_as']}' here (+Contrast kept the "
            "encoder it started from), so it is counted once, as not tested."
        )
    return "\n".join(lines)
