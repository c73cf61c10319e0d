"""The papers' reported numbers (theirs, never ours), each with its table and setting, and the comparison helper.

Every value here is copied from the paper text in ../shared/papers/. Notebooks print their own results beside
these with ``compare``; nothing in this module is ever shown as a result of ours.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

SEVEN = ("STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness", "avg")


@dataclass(frozen=True)
class PaperNumber:
    paper: str  # file stem in shared/papers: pcc-tuning, sts-regression, hicl, ccl-csts
    table: str  # "Table 1", "Eq. 7", ...
    setting: str  # the row: backbone + method (+ hyperparameters)
    task: str  # STS12 ... SICKRelatedness, avg, or a named quantity
    value: float
    note: str = ""


def _seven(paper: str, table: str, setting: str, values: tuple[float, ...], note: str = "") -> list[PaperNumber]:
    if len(values) != len(SEVEN):
        raise ValueError(f"{paper} {table} {setting}: expected {len(SEVEN)} values, got {len(values)}")
    return [PaperNumber(paper, table, setting, task, v, note) for task, v in zip(SEVEN, values, strict=True)]


def _avg(paper: str, table: str, setting: str, value: float, note: str = "") -> list[PaperNumber]:
    return [PaperNumber(paper, table, setting, "avg", value, note)]


_NUMBERS: list[PaperNumber] = []

# ---- Pcc-tuning (Zhang & Li) -----------------------------------------------------------------------------
_NUMBERS += [
    PaperNumber(
        "pcc-tuning", "Eq. 7", "optimal binary classifier", "max_spearman_limit", 87.5, "lim (7n^2-4)/(8(n^2-1)) x100"
    ),
]
_PCC_T2 = {
    "LLaMA2-7b SimCSE": (78.39, 89.95, 84.80, 88.50, 86.04, 87.86, 81.11, 85.24),
    "LLaMA2-7b PromptEOL": (79.24, 90.31, 84.74, 88.72, 86.01, 87.87, 80.94, 85.40),
    "LLaMA2-7b AnglE": (79.00, 90.56, 85.79, 89.43, 87.00, 88.97, 80.94, 85.96),
    "LLaMA2-7b DeeLM": (79.01, 90.32, 85.84, 89.47, 87.18, 89.15, 81.08, 86.01),
    "OPT-6.7b PromptSTH": (79.30, 89.59, 84.69, 89.17, 85.96, 88.36, 81.51, 85.51),
    "OPT-6.7b Pcc-tuning": (82.83, 93.30, 92.66, 93.09, 87.44, 90.34, 86.24, 89.41),
    "LLaMA-7b PromptSTH": (78.48, 90.09, 85.10, 88.71, 85.93, 88.51, 80.95, 85.40),
    "LLaMA-7b Pcc-tuning": (84.40, 94.40, 93.15, 93.49, 88.62, 90.86, 87.08, 90.29),
    "LLaMA2-7b PromptSTH": (79.12, 89.94, 84.54, 88.57, 86.05, 87.82, 81.10, 85.31),
    "LLaMA2-7b Pcc-tuning": (84.22, 94.37, 93.49, 93.49, 88.62, 90.95, 87.22, 90.34),
    "Mistral-7b PromptSTH": (79.19, 89.70, 85.07, 88.88, 86.65, 88.20, 81.95, 85.66),
    "Mistral-7b Pcc-tuning": (85.77, 93.79, 93.78, 94.02, 89.07, 90.73, 87.14, 90.61),
}
for _setting, _values in _PCC_T2.items():
    _NUMBERS += _seven("pcc-tuning", "Table 2", _setting, _values)
_PCC_T4 = {  # (stage 1, stage 2) averages over the seven tasks
    "OPT-6.7b PromptEOL": (85.52, 89.29),
    "OPT-6.7b PromptSUM": (85.57, 89.39),
    "OPT-6.7b PromptSTH": (85.51, 89.41),
    "LLaMA-7b PromptEOL": (85.48, 90.38),
    "LLaMA-7b PromptSUM": (85.47, 90.13),
    "LLaMA-7b PromptSTH": (85.40, 90.29),
    "LLaMA2-7b PromptEOL": (85.40, 90.32),
    "LLaMA2-7b PromptSUM": (85.53, 90.31),
    "LLaMA2-7b PromptSTH": (85.31, 90.34),
    "Mistral-7b PromptEOL": (85.50, 90.39),
    "Mistral-7b PromptSUM": (85.83, 90.57),
    "Mistral-7b PromptSTH": (85.66, 90.61),
}
for _setting, (_s1, _s2) in _PCC_T4.items():
    _NUMBERS += _avg("pcc-tuning", "Table 4", f"{_setting} stage 1", _s1)
    _NUMBERS += _avg("pcc-tuning", "Table 4", f"{_setting} stage 2", _s2)

# ---- STS-Regression (Zhang & Li): Translated ReLU and Smooth K2 ------------------------------------------
_REG_T1 = {
    "BERT-base Sentence-BERT": (70.97, 76.53, 73.19, 79.09, 74.30, 77.03, 72.91, 74.89),
    "BERT-base cross_entropy": (70.01, 71.18, 70.10, 78.37, 72.92, 74.88, 73.58, 73.01),
    "BERT-base l1": (69.76, 69.56, 68.13, 76.33, 70.96, 73.61, 70.28, 71.23),
    "BERT-base translated_relu": (72.51, 75.46, 72.34, 78.46, 72.64, 76.54, 72.02, 74.28),
    "BERT-base mse": (72.38, 76.47, 74.35, 78.71, 72.95, 77.91, 70.67, 74.78),
    "BERT-base smooth_k2": (72.39, 78.33, 75.28, 80.26, 74.52, 78.78, 72.65, 76.03),
    "RoBERTa-base Sentence-BERT": (71.54, 72.49, 70.80, 78.74, 73.69, 77.77, 74.46, 74.21),
    "RoBERTa-base cross_entropy": (71.15, 74.29, 72.66, 79.44, 74.12, 76.56, 73.02, 74.46),
    "RoBERTa-base l1": (68.12, 62.27, 64.20, 72.80, 67.28, 72.44, 66.82, 67.70),
    "RoBERTa-base translated_relu": (71.13, 76.07, 72.18, 78.13, 73.94, 77.59, 70.94, 74.28),
    "RoBERTa-base mse": (72.67, 77.09, 72.93, 79.52, 74.12, 77.88, 69.85, 74.87),
    "RoBERTa-base smooth_k2": (72.53, 78.28, 73.88, 80.88, 75.35, 77.44, 73.94, 76.04),
}
for _setting, _values in _REG_T1.items():
    _NUMBERS += _seven("sts-regression", "Table 1", _setting, _values)
_REG_T3 = {
    "CT-SBERT-base": (74.84, 83.20, 78.07, 83.84, 77.93, 81.46, 76.42, 79.39),
    "SimCSE-BERT-base": (75.30, 84.67, 80.19, 85.40, 80.82, 84.25, 80.39, 81.57),
    "PromptBERT-base": (75.48, 85.59, 80.57, 85.99, 81.08, 84.56, 80.52, 81.97),
    "PromCSE-BERT-base": (75.58, 84.33, 79.67, 85.79, 81.24, 84.25, 80.79, 81.81),
    "Nomic Embed v1": (73.75, 85.03, 80.52, 87.40, 83.55, 83.90, 76.52, 81.52),
    "Nomic Embed v1 +Contrast": (76.10, 85.79, 80.58, 87.35, 83.54, 85.16, 72.33, 81.55),
    "Nomic Embed v1 +Ours": (73.06, 86.63, 81.06, 87.67, 83.43, 85.18, 82.75, 82.83),
    "Jina v2": (74.28, 84.18, 78.81, 87.55, 85.35, 84.85, 78.98, 82.00),
    "Jina v2 +Contrast": (76.04, 86.37, 80.16, 86.53, 85.24, 84.31, 74.18, 81.83),
    "Jina v2 +Ours": (75.17, 86.10, 79.96, 88.44, 85.01, 86.83, 83.34, 83.55),
}
for _setting, _values in _REG_T3.items():
    _NUMBERS += _seven("sts-regression", "Table 3", _setting, _values)
_NUMBERS += [
    PaperNumber("sts-regression", "Section 4.2", "filtered STS-B + SICK-R train", "pairs_after_dedup", 5398),
    PaperNumber("sts-regression", "Section 4.2", "filtered STS-B + SICK-R train", "pairs_score_ge_4", 1543),
    PaperNumber("sts-regression", "Table 4", "BERT SimCSE len 100", "peak_memory_gb", 81.30, "4x24GB GPUs"),
    PaperNumber("sts-regression", "Table 4", "BERT Ours len 256", "peak_memory_gb", 41.27, "4x24GB GPUs"),
    PaperNumber("sts-regression", "Table 4", "RoBERTa SimCSE len 100", "peak_memory_gb", 81.61, "4x24GB GPUs"),
    PaperNumber("sts-regression", "Table 4", "RoBERTa Ours len 256", "peak_memory_gb", 42.33, "4x24GB GPUs"),
]
_REG_T5 = [  # (backbone, loss, k, x0, avg)
    ("BERT-base", "translated_relu", 1.5, 0.25, 74.21),
    ("BERT-base", "translated_relu", 2, 0.25, 74.21),
    ("BERT-base", "translated_relu", 2.5, 0.25, 74.28),
    ("BERT-base", "smooth_k2", 3, 0.25, 75.75),
    ("BERT-base", "smooth_k2", 2.5, 0.25, 75.89),
    ("BERT-base", "smooth_k2", 2, 0.25, 76.03),
    ("RoBERTa-base", "translated_relu", 2, 0.25, 74.00),
    ("RoBERTa-base", "translated_relu", 1.5, 0.25, 74.11),
    ("RoBERTa-base", "translated_relu", 1, 0.25, 74.28),
    ("RoBERTa-base", "smooth_k2", 2.5, 0.25, 75.89),
    ("RoBERTa-base", "smooth_k2", 3, 0.2, 75.90),
    ("RoBERTa-base", "smooth_k2", 3, 0.25, 76.04),
    ("Nomic v1", "smooth_k2", 3.5, 0.2, 82.76),
    ("Nomic v1", "smooth_k2", 2.5, 0.2, 82.79),
    ("Nomic v1", "smooth_k2", 2, 0.2, 82.82),
    ("Nomic v1", "smooth_k2", 3, 0.2, 82.83),
    ("Jina v2", "smooth_k2", 3, 0.15, 83.51),
    ("Jina v2", "smooth_k2", 3, 0.2, 83.54),
    ("Jina v2", "smooth_k2", 3.5, 0.2, 83.55),
    ("Jina v2", "smooth_k2", 4, 0.2, 83.55),
]
for _backbone, _loss, _k, _x0, _value in _REG_T5:
    _NUMBERS += _avg("sts-regression", "Table 5", f"{_backbone} {_loss} k={_k:g} x0={_x0:g}", _value)
for _backbone, _values in {"BERT-base": (53.30, 54.84, 76.03), "RoBERTa-base": (60.99, 59.10, 76.04)}.items():
    for _concat, _value in zip(("(u,v)", "|u-v|", "(u,v,|u-v|)"), _values, strict=True):
        _NUMBERS += _avg("sts-regression", "Table 6", f"{_backbone} {_concat}", _value)

PAPER_NUMBERS: tuple[PaperNumber, ...] = tuple(_NUMBERS)


def lookup(
    paper: str, table: str | None = None, setting: str | None = None, task: str | None = None
) -> list[PaperNumber]:
    return [
        n
        for n in PAPER_NUMBERS
        if n.paper == paper
        and (table is None or n.table == table)
        and (setting is None or n.setting == setting)
        and (task is None or n.task == task)
    ]


def value(paper: str, table: str, setting: str, task: str = "avg") -> float:
    found = lookup(paper, table, setting, task)
    if len(found) != 1:
        known = sorted({n.setting for n in lookup(paper, table)})
        raise KeyError(
            f"{paper} {table}: no single number for setting {setting!r}, task {task!r}; settings in that table: {known}"
        )
    return found[0].value


def compare(
    ours: Mapping[str, float], paper: str, table: str, setting: str, *, our_setting: str = "", note: str = ""
) -> list[dict]:
    """Rows ``ours | paper | delta`` for every task of ``ours`` that the paper reports for that setting."""
    rows = []
    for task, our_value in ours.items():
        found = lookup(paper, table, setting, task)
        if not found:
            continue
        theirs = found[0].value
        rows.append(
            {
                "paper": paper,
                "table": table,
                "setting": setting if not our_setting else f"{our_setting} vs {setting}",
                "task": task,
                "ours": float(our_value),
                "paper_value": theirs,
                "delta": float(our_value) - theirs,
                "note": note,
            }
        )
    if not rows:
        raise KeyError(f"{paper} {table} {setting!r}: none of the tasks {list(ours)} is reported there")
    return rows


def comparison_table(rows: list[dict]):
    """The comparison rows as a small pandas-free text table (ours | paper | delta), for printing."""
    header = f"{'setting':<48} {'task':<16} {'ours':>8} {'paper':>8} {'delta':>8}"
    lines = [header, "-" * len(header)]
    for r in rows:
        lines.append(
            f"{r['setting'][:48]:<48} {r['task']:<16} {r['ours']:>8.2f} {r['paper_value']:>8.2f} {r['delta']:>+8.2f}"
        )
    return "\n".join(lines)
