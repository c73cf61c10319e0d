"""The numbers Pcc-tuning (Zhang & Li): the contrastive ceiling (Eq. 7), Tables 2, 4, 5, 6, as the paper reports them.

Copied from ../shared/papers/pcc-tuning.md; never a result of ours. Notebooks print theirs beside ours with
``REPORTED.compare`` (``stsnb.evaluation.comparison``).
"""

from __future__ import annotations

from ...evaluation.comparison import PaperNumber, ReportedNumbers, average, seven

_NUMBERS: list[PaperNumber] = []
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
    _NUMBERS += seven("pcc-tuning", "Table 2", _setting, _values)
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
    _NUMBERS += average("pcc-tuning", "Table 4", f"{_setting} stage 1", _s1)
    _NUMBERS += average("pcc-tuning", "Table 4", f"{_setting} stage 2", _s2)

_PCC_T5 = {  # Appendix A: PromptSTH, stage-2 global batch size -> seven-task average
    "OPT-6.7b": {192: 89.34, 216: 89.41, 224: 89.38, 256: 89.35},
    "LLaMA-7b": {192: 90.26, 224: 90.28, 232: 90.29, 256: 90.25},
    "LLaMA2-7b": {192: 90.34, 200: 90.32, 216: 90.30, 256: 90.32},
    "Mistral-7b": {192: 90.54, 224: 90.61, 232: 90.60, 256: 90.54},
}
for _row, _by_batch in _PCC_T5.items():
    for _batch, _value in _by_batch.items():
        _NUMBERS += average("pcc-tuning", "Table 5", f"{_row} batch {_batch}", _value)
TRANSFER_TASKS = ("MR", "CR", "SUBJ", "MPQA", "SST2", "TREC", "MRPC")
_PCC_T6 = {  # accuracy (%) per transfer task, then the average
    "OPT-6.7b Pcc-tuning": (89.40, 92.77, 95.95, 91.29, 94.34, 95.80, 76.00, 90.79),
    "LLaMA-7b Pcc-tuning": (89.59, 92.74, 95.63, 90.19, 94.12, 95.00, 77.62, 90.70),
    "LLaMA2-7b Pcc-tuning": (89.72, 93.51, 95.95, 90.75, 94.34, 94.60, 76.12, 90.71),
    "Mistral-7b Pcc-tuning": (88.78, 92.21, 95.77, 89.45, 93.74, 95.80, 74.09, 89.98),
    "SimCSE-BERT": (81.18, 86.46, 94.45, 88.88, 85.50, 89.80, 74.43, 85.81),
}
for _setting, _values in _PCC_T6.items():
    for _task, _value in zip((*TRANSFER_TASKS, "avg"), _values, strict=True):
        _NUMBERS.append(PaperNumber("pcc-tuning", "Table 6", _setting, _task, _value, "accuracy %"))

REPORTED = ReportedNumbers("pcc-tuning", _NUMBERS)
