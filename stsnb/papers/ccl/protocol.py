"""What notebook 40 tells a reader before it trains: the paper (title, authors, venue, link) and the protocol table,
i.e. every detail in which a run differs from the paper and why (the measured runtimes: ``stsnb.runs.runtimes``).

The table is built from the run's parameters (``Run.params``), so a profile that changes a value changes its row;
nothing in it is typed into the notebook.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .objectives import TERM_LABELS
from .reported import PAPER_BACKBONES, SIGMAS, hyperparameters

TITLE = "Conditional Semantic Textual Similarity via Conditional Contrastive Learning"
AUTHORS = "Xinyue Liu, Zeyang Qin, Zeyu Wang, Wenxin Liang, Linlin Zong, Bo Xu (Dalian University of Technology)"
VENUE = "COLING 2025"
# The paper's text names no venue; venue and Anthology id as a public bibliography lists them.
LINK = "https://aclanthology.org/2025.coling-main.306/"
CODE = "https://github.com/qinzeyang0919/CCL"  # named in the abstract; it holds only a README


@dataclass(frozen=True)
class ProtocolRow:
    """One protocol detail: the paper's choice, this run's, and why they differ (or why we chose where it is silent)."""

    detail: str
    paper: str
    ours: str
    why: str
    differs: bool = True


def _paper_row(params: Mapping[str, Any], backbone: str) -> str:
    return {**params.get("raw_paper_rows", {}), **params["paper_rows"]}[backbone]


def _listing(values) -> str:
    return ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values)


def _not_run(name: str, table2_value: float) -> str:
    return rf"not run in this profile (every CCL run uses Table 2's $\{name}$ = {table2_value:g})"


def protocol_rows(params: Mapping[str, Any]) -> list[ProtocolRow]:
    """Every protocol detail of notebook 40 beside the paper's, from the run's parameters.

    ``differs`` is False where the run follows the paper (e.g. the paper profile's epochs); the notebook prints the
    rows that differ, then the readings where the paper is silent (:func:`reading_rows`)."""
    p = params
    backbones, first = list(p["backbones"]) + list(p.get("raw_backbones", [])), p["backbones"][0]
    row = _paper_row(p, first)
    table2 = hyperparameters("bi", row)
    poolings = {b: p["poolings"].get(b, "cls") for b in backbones}
    epochs = p["epochs"] or table2.epochs
    seeds = [p["seed"] + i for i in range(p["training_seeds"])]
    swept_sigmas = sorted({table2.sigma, *p["sigmas"]})
    swept_taus = sorted({table2.temperature, *p["temperatures"]})
    sweeps = bool(p["sweep_architectures"])
    backbone_lr = p["lr"] or table2.lr
    return [
        ProtocolRow(
            "backbone",
            "RoBERTa, SimCSE, DiffCSE, base and large (Table 3)",
            ", ".join(backbones),
            f"the 2-core budget; a finished sentence encoder like SimCSE and DiffCSE, so it takes the {row} row's "
            "settings (`paper_rows`)",
            not set(p["backbones"]) <= set(PAPER_BACKBONES.values()),
        ),
        ProtocolRow(
            "pooling",
            "first token, [CLS] (Section 3.2.1)",
            ", ".join(f"{b}: {k}" for b, k in poolings.items()),
            "each model pooled as it was trained: all-MiniLM-L6-v2 was trained with mean pooling, its first token "
            "never as a sentence vector",
            any(k != "cls" for k in poolings.values()),
        ),
        ProtocolRow(
            "data",
            "the original C-STS (Deshpande et al. 2023)",
            "the re-annotated C-STS (Zhang, Zhou, Bollegala 2025): refined conditions, new labels",
            "the original is encrypted (password on request) and may not be redistributed",
        ),
        ProtocolRow(
            "evaluation rows",
            "original test split (Tables 3, 7); original validation (Tables 4, 5, 8, 9, Appendix A)",
            "re-annotated validation, "
            + ("all labelled rows" if p["eval_rows"] is None else f"first {p['eval_rows']}"),
            "the test labels are withheld, so validation is our evaluation set: no number here is a test number",
        ),
        ProtocolRow(
            "training data",
            "the whole train split",
            "all train pairs not held out" if p["train_pairs"] is None else f"{p['train_pairs']} quadruples",
            "time: training is the cost of every run",
            p["train_pairs"] is not None,
        ),
        ProtocolRow(
            "epochs",
            f"{table2.epochs} (Table 6, {row})",
            str(epochs),
            "time: every run of the notebook trains this long",
            epochs != table2.epochs,
        ),
        ProtocolRow(
            "batch",
            f"{table2.batch_size} rows x {table2.grad_accum} accumulated (Table 6)",
            f"{2 * p['batch_size']} rows ({p['batch_size']} quadruples) x {p['grad_accum']} accumulated",
            "more optimizer steps from a small sample; BCL's in-batch negatives are the rows of one forward pass",
            (2 * p["batch_size"], p["grad_accum"]) != (table2.batch_size, table2.grad_accum),
        ),
        ProtocolRow(
            "checkpoint selection",
            "best epoch on the validation split (Section 4.1)",
            "validation rows"
            if p["selection"] == "validation"
            else f"{p['selection_pairs']} sentence pairs held out of the train split",
            "validation is our evaluation set: selecting on it makes its numbers optimistic",
            p["selection"] != "validation",
        ),
        ProtocolRow(
            "selection frequency",
            "after every epoch",
            "after every epoch" if p["eval_every"] is None else f"every {p['eval_every']} optimizer steps",
            "with one epoch, per-epoch selection would select nothing",
            p["eval_every"] is not None,
        ),
        ProtocolRow(
            "learning rates",
            f"{table2.lr:g} for every parameter (Table 2; one optimizer, as in c-sts)",
            f"backbone {backbone_lr:g}, new layers (g, condition transform) {p['head_lr'] or backbone_lr:g}",
            "the new layers start random and barely move at the backbone's rate within so few steps",
            p["head_lr"] is not None or (p["lr"] is not None and p["lr"] != table2.lr),
        ),
        ProtocolRow(
            "training seeds",
            "one, seed 42 (Section 4.1)",
            f"{_listing(seeds)} for Table 3's {_listing(p['seeded_architectures'])}-encoder (Table 4's ablations on "
            f"the first {p.get('ablation_seeds', 1)} of them); {p['seed']} elsewhere",
            "a claim should hold across training seeds; the other runs get one seed for time",
        ),
        ProtocolRow(
            "Table 4 ablations",
            "each of W-ACL, BCL, MSE, C-MSE removed, bi- and tri-encoder",
            f"{_listing(TERM_LABELS[t] for t in p['ablation_terms'])} removed, "
            f"{_listing(p['ablation_architectures'])}-encoder",
            "time; W-ACL and BCL are the two the paper says always help",
            set(p["ablation_terms"]) != {"w_acl", "bcl", "mse", "c_mse"}
            or set(p["ablation_architectures"]) != {"bi", "tri"},
        ),
        ProtocolRow(
            r"Table 5 $\sigma$",
            _listing(SIGMAS),
            f"{_listing(swept_sigmas)} ({_listing(p['sweep_architectures'])}-encoder)"
            if sweeps and len(swept_sigmas) > 1
            else _not_run("sigma", table2.sigma),
            "time; 0 (no same-pair negatives) is the value the paper says never wins",
            set(swept_sigmas) != set(SIGMAS),
        ),
        ProtocolRow(
            r"Figure 2 $\tau$",
            "a sweep whose values only the figure shows",
            _listing(swept_taus) if sweeps and len(swept_taus) > 1 else _not_run("tau", table2.temperature),
            "time; the figure gives no values to copy",
        ),
    ]


def reading_rows(params: Mapping[str, Any]) -> list[ProtocolRow]:
    """Where the paper is silent or ambiguous: our reading, a parameter each (the notebook prints these too)."""
    p = params
    table2 = hyperparameters("bi", _paper_row(p, p["backbones"][0]))
    divisor = p["temperature_reading"] == "divisor"
    return [
        ProtocolRow(
            r"BCL's $\tau$ (Eq. 10)",
            rf"$\cos/\tau$ as printed, with Table 2's $\tau$ of 3-10 (here {table2.temperature:g})",
            r"$\cos/\tau$ (divisor)" if divisor else r"$\cos\cdot\tau$ (multiplier)",
            "no code released; as printed, logits lie within $\\pm 1/\\tau$, so the multiplier is the other reading",
            not divisor,
        ),
        ProtocolRow(
            "projection g of BCL",
            "not specified",
            p["projection"],
            "SimCSE's training-time head (Linear + tanh) by default",
        ),
        ProtocolRow("C-MSE", "named, no formula", p["c_mse_target"], "see Section 3 of this notebook"),
        ProtocolRow(
            "tri-encoder fusion",
            "Hadamard product (text)",
            "Hadamard product after the c-sts condition transform" if p["condition_transform"] else "Hadamard product",
            "the c-sts code applies a Dropout + Linear to f(c)",
        ),
        ProtocolRow(
            "Eq. 17",
            "as printed it can never hold",
            p["overestimation_reading"],
            "the mirror image of Eq. 16 is the reading that can count anything",
        ),
        ProtocolRow("tokens per input", "not stated", str(p["max_length"]), "C-STS inputs are at most about 45 tokens"),
        ProtocolRow(
            "sigma (Table 5)",
            '"the optimal effect cannot be achieved" with sigma = 0',
            "a direction claim: Table 2's sigma beats the other",
            "the paper's words say sigma matters; a robustness test could not tell its gap from none",
        ),
        ProtocolRow(
            '"robust to" tau (Figure 2)',
            "in words, bi-encoder",
            f"the paired 95% interval inside $\\pm${p['equivalence_margin']:g} Spearman points",
            "a direction test can never support 'hardly matters'; the margin stays below the paper's smallest effect",
        ),
        ProtocolRow(
            "intervals",
            "none",
            f"paired bootstrap over sentence pairs, {p['n_resamples']} resamples",
            "a pair's two conditions are not independent",
        ),
    ]


def _table(rows: Sequence[ProtocolRow], header: str) -> str:
    lines = [f"| {header} | paper | this run | why |", "|---|---|---|---|"]
    lines += [f"| {r.detail} | {r.paper} | {r.ours} | {r.why} |" for r in rows]
    return "\n".join(lines)


def protocol_markdown(params: Mapping[str, Any]) -> str:
    """The notebook's protocol tables: the details that differ from the paper, then our readings where it is silent."""
    rows = protocol_rows(params)
    differ = [r for r in rows if r.differs]
    same = [r.detail for r in rows if not r.differs]
    text = f"**Where this run (profile `{params.get('profile', '?')}`) differs from the paper**\n\n"
    text += _table(differ, "detail") if differ else "Nowhere among the details below."
    if same:
        text += "\n\nAs in the paper: " + ", ".join(same) + "."
    text += "\n\n**Where the paper is silent or ambiguous: our reading (a parameter each)**\n\n"
    return text + _table(reading_rows(params), "detail")
