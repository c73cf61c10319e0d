"""The numbers STS-Regression (Zhang & Li): Tables 1, 3-6, Section 4.2 counts, as the paper reports them.

Copied from ../shared/papers/sts-regression.md; never a result of ours. Notebooks print theirs beside ours with
``REPORTED.compare`` (``stsnb.evaluation.comparison``).
"""

from __future__ import annotations

from ...evaluation.comparison import PaperNumber, ReportedNumbers, average, seven

_NUMBERS: list[PaperNumber] = []
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
    _NUMBERS += seven("sts-regression", "Table 1", _setting, _values)
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
    _NUMBERS += seven("sts-regression", "Table 3", _setting, _values)
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
    ("Nomic Embed v1", "smooth_k2", 3.5, 0.2, 82.76),
    ("Nomic Embed v1", "smooth_k2", 2.5, 0.2, 82.79),
    ("Nomic Embed v1", "smooth_k2", 2, 0.2, 82.82),
    ("Nomic Embed v1", "smooth_k2", 3, 0.2, 82.83),
    ("Jina v2", "smooth_k2", 3, 0.15, 83.51),
    ("Jina v2", "smooth_k2", 3, 0.2, 83.54),
    ("Jina v2", "smooth_k2", 3.5, 0.2, 83.55),
    ("Jina v2", "smooth_k2", 4, 0.2, 83.55),
]
for _backbone, _loss, _k, _x0, _value in _REG_T5:
    _NUMBERS += average("sts-regression", "Table 5", f"{_backbone} {_loss} k={_k:g} x0={_x0:g}", _value)
for _backbone, _values in {"BERT-base": (53.30, 54.84, 76.03), "RoBERTa-base": (60.99, 59.10, 76.04)}.items():
    for _concat, _value in zip(("(u,v)", "|u-v|", "(u,v,|u-v|)"), _values, strict=True):
        _NUMBERS += average("sts-regression", "Table 6", f"{_backbone} {_concat}", _value)

REPORTED = ReportedNumbers("sts-regression", _NUMBERS)


def key_numbers() -> str:
    """The paper's key numbers as text (Tables 1 and 3, Section 4.2), for the top of a notebook."""
    losses = ("cross_entropy", "l1", "translated_relu", "mse", "smooth_k2")
    lines = ["Table 1, average Spearman x100 over the seven STS tasks (NLI fine-tuning):"]
    for row in ("BERT-base", "RoBERTa-base"):
        lines.append(f"  {row:<13} " + "  ".join(f"{n} {REPORTED.value('Table 1', f'{row} {n}'):.2f}" for n in losses))
    lines.append("Table 3, average over the seven tasks (contrastive encoders, before / +Contrast / +Ours):")
    for row in ("Jina v2", "Nomic Embed v1"):
        values = [REPORTED.value("Table 3", f"{row}{suffix}") for suffix in ("", " +Contrast", " +Ours")]
        lines.append(f"  {row:<15} " + " / ".join(f"{v:.2f}" for v in values))
    kept = REPORTED.value("Section 4.2", "filtered STS-B + SICK-R train", "pairs_after_dedup")
    positive = REPORTED.value("Section 4.2", "filtered STS-B + SICK-R train", "pairs_score_ge_4")
    lines.append(
        f"Section 4.2: {kept:.0f} de-duplicated STS-B + SICK-R training pairs, {positive:.0f} of them scored >= 4.0"
    )
    return "\n".join(lines)
