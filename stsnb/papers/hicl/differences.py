"""Where a run of notebook 30 departs from the paper's protocol, computed from its parameters (so the table the
notebook prints stays true under any profile), with the reason for each departure.

The paper's protocol: Section 4.1 (1M Wikipedia sentences, one epoch, SimCSE's unsupervised setting), Appendix A.1
(baselines cut at 32 tokens; Table 12 at 512), A.3 (batch 256 base / 128 large, fp32 base / fp16 large, STS-B dev
every 125 steps), A.4 and Table 13 (alpha and learning rate per model), A.5 (Table 1 is one run; Table 15 three
seeds), A.7 (one A40 GPU), and the baselines' official settings (SimCSE's [CLS] pooling with its MLP in training
only; ESimCSE's repetition rate, momentum and queue of 2.5 x batch; SNCSE's [MASK] prompt and margin loss weight).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...data import WIKI_FILE
from .reported import TABLE13
from .results import PAPER_METHODS, PAPER_MODELS
from .variants import METHODS

WIKI_SAMPLE = 11_914  # sentences of the data folder's wiki1m prefix
# settings the paper (or the baseline's official code) fixes and this run may change; (paper value, where it is from)
FIXED = {
    "temperature": (0.05, "Section 2, 'following SimCSE'"),
    "slice_length": (32, "Section 5.3"),
    "segment_pooling": ("weighted", "Section 3.1, Table 3"),
    "same_sequence": ("neither", "Section 3.2, Table 4"),
    "negative_weighting": ("summation", "Eq. 2, Appendix A.8"),
    "epochs": (1, "Section 4.1"),
    "warmup_ratio": (0.0, "SimCSE's trainer"),
    "max_grad_norm": (1.0, "SimCSE's trainer, HF default"),
    "dup_rate": (0.32, "ESimCSE"),
    "momentum": (0.995, "ESimCSE"),
    "bml_weight": (1e-3, "SNCSE, BERT"),
}
PROBED = "smollm2-135m-l6"  # the backbone benchmarks/bench_simcse_moves.py measured (docs/benchmarks.md)
BUDGET = "the budget: the whole notebook in 30 minutes on 2 CPU cores"


def _lrs(p: Mapping[str, Any]) -> dict[str, float]:
    return {m: float((p.get("method_lrs") or {}).get(m, p["lr"])) for m in p["methods"]}


def _rate(value: float) -> str:
    """``5e-05`` -> ``5e-5``."""
    return f"{value:.0e}".replace("e-0", "e-")


def _short(values: Mapping[str, float]) -> str:
    if len(set(values.values())) == 1:
        return f"{_rate(next(iter(values.values())))} for every method"
    return ", ".join(f"{PAPER_METHODS[m]} {_rate(v)}" for m, v in values.items())


def protocol_differences(
    p: Mapping[str, Any],
    *,
    causal: bool,
    train_count: int,
    longer_than_max: int,
    gpu: bool = False,
    corpus_count: int = WIKI_SAMPLE,
) -> list[dict[str, str]]:
    """One row ``{"detail", "paper", "this run", "why"}`` per protocol detail in which the run with parameters ``p``
    (the notebook's, ``runs.collect_params``) differs from the paper's for its ``paper_backbone`` row of Table 1.
    ``causal``: the backbone is a decoder; ``train_count``: training sentences; ``longer_than_max``: sentences of
    the corpus longer than ``max_length`` tokens; ``gpu``: the run trains on a GPU; ``corpus_count``: sentences of
    the corpus read from ``p["corpus_source"]`` (``data.load_wiki_corpus``: the sample, the Hub's wiki1m or a file).
    """
    rows: list[dict[str, str]] = []

    def add(detail: str, paper: str, ours: str, why: str) -> None:
        rows.append({"detail": detail, "paper": paper, "this run": ours, "why": why})

    row = p["paper_backbone"]
    large = row.endswith("large")
    probed = p["backbone"] == PROBED
    if p["backbone"] != PAPER_MODELS[row]:
        add("backbone", f"{row} ({PAPER_MODELS[row]})", p["backbone"], f"{BUDGET}; levels are not the paper's, only "
            "the sign of +HiCL minus the baseline is compared")  # fmt: skip
    if p["pooling"] != "cls":
        why = "a decoder's first token sees only itself" if causal else "this run's choice"
        add("pooling (SimCSE, ESimCSE)", "[CLS]", str(p["pooling"]), why)
    if causal:
        add("SNCSE's representation", "the prompt's [MASK] token", "the prompt's last token, after 'means'",
            "a decoder has no [MASK]; the last token is the one that would predict it")  # fmt: skip
    if not p["simcse_mlp_head"]:
        why = "SimCSE's code has the head only with [CLS] pooling" if p["pooling"] != "cls" else "this run's choice"
        add("SimCSE's MLP head", "dense + tanh over [CLS] in training, dropped at evaluation", "none", why)
    if p["dropout"] is not None:
        why = "SimCSE's positive is a second dropout pass and the decoder has none"
        if probed:
            why += (
                "; 0.3 is the rate at which SimCSE moved it in the probe "
                "(docs/benchmarks.md, 'Does unsupervised SimCSE move it?')"
            )
        add("dropout", "the model's own (BERT: 0.1)", f"{p['dropout']:g} attention + hidden, added", why)
    if p["freeze_embeddings"]:
        why = "cheaper steps (docs/benchmarks.md, 'The raw backbone')" if probed else "this run's choice"
        add("token embedding", "trained", "frozen", why)
    source = str(p.get("corpus_source", "sample"))
    wiki1m = source in ("hub", "paper") or Path(source).name == WIKI_FILE
    named = {"hub": "wiki1m from the Hub", "paper": "wiki1m from the data folder (paper/)"}
    if source == "sample":
        corpus = f"the {corpus_count:,}-sentence wiki1m sample"
    else:
        corpus = f"{named.get(source, Path(source).name)} ({corpus_count:,} sentences)"
    data = f"{train_count:,} of {corpus}"
    if p.get("long_sentences") is not None:
        data += f", {p['long_sentences']:.0%} of them drawn from those the baselines' cut shortens (not wiki1m's mix)"
    if source == "sample":
        hub = "wiki1m itself: corpus_source='paper' (`stsnb data fetch --paper`), 'hub' or a wiki1m_for_simcse.txt"
        add("training data", "1M Wikipedia sentences (wiki1m)", data,
            f"{BUDGET}; {hub}" if train_count < corpus_count else hub)  # fmt: skip
    elif not wiki1m or train_count < corpus_count or p.get("long_sentences") is not None:
        why = "this run's corpus (corpus_source)" if not wiki1m else "this run's draw (train_sentences, long_sentences)"
        add("training data", "1M Wikipedia sentences (wiki1m)", data, why)
    paper_batch = 128 if large else 256
    if p["batch_size"] != paper_batch:
        queue = "2.5 x batch, as ESimCSE" if p["queue_size"] == round(2.5 * p["batch_size"]) else "not 2.5 x batch"
        add("batch", f"{paper_batch} (ESimCSE queue {round(2.5 * paper_batch)})",
            f"{p['batch_size']} (ESimCSE queue {p['queue_size']}, {queue})", BUDGET)  # fmt: skip
    paper_lrs = {m: TABLE13[f"{PAPER_METHODS[m]}-{row}"][1] for m in p["methods"]}
    if _lrs(p) != paper_lrs:
        why = "this run's choice"
        if probed:
            why = (
                "Table 13's rates are tuned for BERT over ~3,900 steps of 256; on this backbone the probe found "
                "1e-4 moved SimCSE most within 40 steps, and no probe tuned ESimCSE or SNCSE, so they share it"
            )
        add("learning rate", f"{_short(paper_lrs)} (Table 13)", _short(_lrs(p)), why)
    paper_alphas = {m: TABLE13[f"{PAPER_METHODS[m]}-{row}"][0] for m in p["methods"]}
    if {m: p["alphas"].get(m) for m in p["methods"]} != paper_alphas:
        add("alpha", str(paper_alphas) + " (Table 13)", str(dict(p["alphas"])), "this run's choice")
    cut = f"baselines {p['baseline_max_length']} tokens, +HiCL up to {p['max_length']}"
    if p["truncation"] != "paper":
        add("truncation", "baselines 32 tokens (SimCSE's), +HiCL the whole sentence", f"both arms {p['max_length']}",
            "isolates the objective from the extra text (Table 12's 'identical information')")  # fmt: skip
    elif p["baseline_max_length"] != 32 or p["max_length"] < 512:
        why = f"{BUDGET}; {longer_than_max} sentence(s) of the corpus are longer than {p['max_length']} tokens"
        add("truncation", "baselines 32 tokens, +HiCL the whole sentence (unstated; Table 12: 512)", cut, why)
    steps = (train_count // p["batch_size"]) * p["epochs"]
    dev = "all 1,500" if p["dev_pairs"] is None else f"{p['dev_pairs']}"
    add("checkpoint selection", "STS-B dev (1,500 pairs) every 125 steps (from step 125)",
        f"{dev} STS-B dev pairs every {p['eval_every']} of {steps} steps, step 0 included",
        "step 0 as a candidate lets a run that only hurts return the backbone, and gives each arm's dev gate its "
        "untrained score" + ("" if p["eval_every"] >= 125 else f"; {steps} steps in all"))  # fmt: skip
    if p["eval_max_pairs"] is not None or p["eval_tasks"] != "all":
        pairs = "every pair" if p["eval_max_pairs"] is None else f"the same {p['eval_max_pairs']} pairs per task"
        add("test sets", "every pair of STS12-16, STS-B, SICK-R", f"{p['eval_tasks']} tasks, {pairs}", BUDGET)
    if len(p["main_claim_seeds"]) != 1 or len(p["seeds"]) != 1:
        add("training seeds", "one run (Table 1; Table 15: three seeds)",
            f"SimCSE (the main claim): {len(p['main_claim_seeds'])}, the others {len(p['seeds'])}",
            "one paired interval per seed on which both arms trained on dev; a verdict needs every such seed's "
            "interval on one side")  # fmt: skip
    if sorted(p["methods"]) != sorted(METHODS):
        add("baselines", "SimCSE, ESimCSE, SNCSE", ", ".join(PAPER_METHODS[m] for m in p["methods"]), BUDGET)
    if not p["ablations"]:
        add("ablations", "Tables 3, 4, 6, 7, Figure 2, Appendix A.8", "none", BUDGET)
    add("precision and hardware", "fp32 (base) / fp16 (large) on one A40 GPU (Appendix A.3, A.7)",
        "bf16 autocast on a GPU" if gpu else "fp32 on this machine's CPU",
        "stsnb's mixed precision on GPUs" if gpu else "no GPU: training times are not the paper's")  # fmt: skip
    for name, (value, source) in FIXED.items():
        if p[name] != value:
            add(name, f"{value} ({source})", str(p[name]), "this run's choice")
    return rows


def differences_table(rows: Sequence[Mapping[str, str]]) -> str:
    """The rows of ``protocol_differences`` as a markdown table."""
    lines = ["| detail | the paper | this run | why |", "|---|---|---|---|"]
    lines += [f"| {r['detail']} | {r['paper']} | {r['this run']} | {r['why']} |" for r in rows]
    return "\n".join(lines)
