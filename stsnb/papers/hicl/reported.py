"""The numbers HiCL (Wu, Xiao, Vydiswaran, EMNLP 2023 Findings) reports: Tables 1-4, 6, 7, 12, 13 and the abstract.

Copied from ../shared/papers/hicl.md; never a result of ours. Notebook 30 prints them beside ours with
``REPORTED.compare`` (``stsnb.evaluation.comparison``).
"""

from __future__ import annotations

from ...evaluation.comparison import PaperNumber, ReportedNumbers, average, seven

PAPER = "hicl"
_NUMBERS: list[PaperNumber] = []

# Table 1: Spearman x100, "all" setting; STS12, STS13, STS14, STS15, STS16, STS-B, SICK-R, Avg.
TABLE1 = {
    "SimCSE-BERT-base": (66.92, 78.44, 71.15, 79.50, 77.71, 75.50, 68.76, 74.00),
    "SimCSE-BERT-base +HiCL": (69.04, 80.68, 72.71, 80.39, 78.68, 76.96, 70.35, 75.54),
    "ESimCSE-BERT-base": (70.95, 82.76, 76.52, 83.18, 80.03, 80.15, 71.07, 77.81),
    "ESimCSE-BERT-base +HiCL": (70.05, 83.18, 76.51, 82.97, 80.31, 80.02, 72.53, 77.94),
    "SNCSE-BERT-base": (70.15, 84.36, 76.86, 83.21, 80.16, 81.09, 75.04, 78.70),
    "SNCSE-BERT-base +HiCL": (70.57, 84.51, 76.92, 82.97, 79.91, 80.68, 74.61, 78.60),
    "SimCSE-BERT-large": (70.17, 83.27, 72.82, 82.53, 77.05, 78.25, 66.01, 75.73),
    "SimCSE-BERT-large +HiCL": (70.99, 85.29, 75.62, 83.56, 79.40, 79.91, 74.13, 78.41),
    "ESimCSE-BERT-large": (71.43, 83.91, 75.88, 83.84, 78.86, 79.74, 73.59, 78.18),
    "ESimCSE-BERT-large +HiCL": (72.40, 85.42, 77.29, 84.59, 79.78, 80.72, 74.28, 79.21),
    "SNCSE-BERT-large": (72.03, 86.80, 78.48, 85.27, 80.65, 82.20, 74.40, 79.98),
    "SNCSE-BERT-large +HiCL": (72.40, 86.78, 78.50, 85.52, 80.85, 82.09, 75.13, 80.18),
    "SimCSE-RoBERTa-base": (69.47, 82.12, 73.96, 82.48, 81.11, 81.06, 69.45, 77.09),
    "SimCSE-RoBERTa-base +HiCL": (69.36, 81.77, 73.75, 82.58, 81.03, 81.06, 69.58, 77.02),
    "ESimCSE-RoBERTa-base": (69.03, 80.73, 73.35, 81.26, 81.25, 80.26, 68.11, 76.28),
    "ESimCSE-RoBERTa-base +HiCL": (69.98, 81.31, 74.39, 82.87, 81.43, 80.74, 69.09, 77.12),
    "SNCSE-RoBERTa-base": (70.50, 83.70, 76.55, 84.09, 81.89, 81.73, 74.11, 78.94),
    "SNCSE-RoBERTa-base +HiCL": (71.01, 83.70, 76.08, 84.06, 81.89, 82.07, 73.54, 78.91),
    "SimCSE-RoBERTa-large": (71.41, 83.90, 76.50, 85.07, 82.10, 82.75, 71.17, 78.99),
    "SimCSE-RoBERTa-large +HiCL": (72.36, 84.08, 76.35, 85.07, 82.49, 82.95, 71.40, 79.24),
    "ESimCSE-RoBERTa-large": (70.92, 83.25, 75.62, 81.91, 80.16, 81.73, 72.03, 77.95),
    "ESimCSE-RoBERTa-large +HiCL": (73.06, 84.44, 76.56, 84.59, 81.42, 83.61, 71.49, 79.31),
    "SNCSE-RoBERTa-large": (73.65, 86.45, 79.23, 86.60, 82.45, 83.95, 77.12, 81.35),
    "SNCSE-RoBERTa-large +HiCL": (73.74, 86.19, 79.76, 86.70, 83.20, 84.52, 78.45, 81.79),
}
for _setting, _values in TABLE1.items():
    _NUMBERS += seven(PAPER, "Table 1", _setting, _values)

# Table 2: input length distribution of the training corpus, %, special tokens counted
TABLE2 = {"[0, 32]": 76.031, "(32, 64]": 21.869, "(64, 96]": 1.796, "(96, 128]": 0.225, "(128, 256]": 0.075}
TABLE2["(256, 512]"] = 0.004
for _bin, _share in TABLE2.items():
    _NUMBERS.append(PaperNumber(PAPER, "Table 2", "wiki1m, BERT tokens", _bin, _share, "% of sequences"))

# Table 3 (pooling) and Table 4 (same-sequence relation): SICK-R dev Spearman x100, RoBERTa-large
for _backbone, (_unweighted, _weighted) in {
    "SimCSE-RoBERTa-large": (73.91, 75.24),
    "ESimCSE-RoBERTa-large": (73.13, 74.37),
    "SNCSE-RoBERTa-large": (79.97, 80.86),
}.items():
    _NUMBERS.append(PaperNumber(PAPER, "Table 3", f"{_backbone} unweighted", "SICKRelatedness_dev", _unweighted))
    _NUMBERS.append(PaperNumber(PAPER, "Table 3", f"{_backbone} weighted", "SICKRelatedness_dev", _weighted))
for _backbone, _values in {
    "SimCSE-RoBERTa-large": (73.92, 74.34, 75.24),
    "ESimCSE-RoBERTa-large": (76.96, 74.35, 74.37),
    "SNCSE-RoBERTa-large": (77.33, 79.33, 80.86),
}.items():
    for _relation, _value in zip(("positive", "negative", "neither"), _values, strict=True):
        _NUMBERS.append(PaperNumber(PAPER, "Table 4", f"{_backbone} {_relation}", "SICKRelatedness_dev", _value))

# Table 6: average over the seven tasks, vanilla / +HiCL / trained on full segments (local-only)
for _backbone, (_vanilla, _hicl, _full) in {
    "SimCSE-RoBERTa-large": (78.99, 79.24, 78.45),
    "SNCSE-RoBERTa-large": (81.35, 81.79, 80.41),
}.items():
    _NUMBERS += average(PAPER, "Table 6", f"{_backbone} vanilla", _vanilla)
    _NUMBERS += average(PAPER, "Table 6", f"{_backbone} +HiCL", _hicl)
    _NUMBERS += average(PAPER, "Table 6", f"{_backbone} full segments", _full)

# Table 7: alpha ablation, SimCSE-RoBERTa-large, SICK-R dev
TABLE7 = {0.0: 75.10, 0.01: 75.19, 0.05: 75.24, 0.15: 74.07, 0.3: 73.44, 0.5: 74.68, 0.95: 74.87, 1.0: 74.39}
for _alpha, _value in TABLE7.items():
    _setting = f"SimCSE-RoBERTa-large alpha={_alpha:g}"
    _NUMBERS.append(PaperNumber(PAPER, "Table 7", _setting, "SICKRelatedness_dev", _value))

# Table 12 / Section 3.3: training minutes at truncation size 512
TABLE12 = {
    "BERT-base": (87.5, 69.4),
    "BERT-large": (344.5, 148.4),
    "RoBERTa-base": (92.4, 71.8),
    "RoBERTa-large": (354.5, 152.0),
}
for _backbone, (_whole, _segments) in TABLE12.items():
    _NUMBERS.append(PaperNumber(PAPER, "Table 12", f"SimCSE-{_backbone}", "train_minutes", _whole, "512 tokens"))
    _NUMBERS.append(PaperNumber(PAPER, "Table 12", f"SimCSE-{_backbone} +HiCL", "train_minutes", _segments, "512"))

# Table 13: the tuned alpha and learning rate of each +HiCL model
TABLE13 = {
    "SimCSE-BERT-base": (0.15, 5e-5),
    "SimCSE-BERT-large": (0.15, 3e-5),
    "SimCSE-RoBERTa-base": (0.05, 1e-5),
    "SimCSE-RoBERTa-large": (0.05, 5e-6),
    "ESimCSE-BERT-base": (0.01, 3e-5),
    "ESimCSE-BERT-large": (0.01, 5e-6),
    "ESimCSE-RoBERTa-base": (0.01, 1e-5),
    "ESimCSE-RoBERTa-large": (0.01, 5e-6),
    "SNCSE-BERT-base": (0.01, 1e-5),
    "SNCSE-BERT-large": (0.01, 1e-5),
    "SNCSE-RoBERTa-base": (0.01, 1e-5),
    "SNCSE-RoBERTa-large": (0.15, 5e-6),
}
for _model, (_alpha, _lr) in TABLE13.items():
    _NUMBERS.append(PaperNumber(PAPER, "Table 13", _model, "alpha", _alpha))
    _NUMBERS.append(PaperNumber(PAPER, "Table 13", _model, "lr", _lr))

# Abstract: "+0.2% on BERT-large and +0.44% on RoBERTa-large" (SNCSE + HiCL minus SNCSE, Table 1 averages)
ABSTRACT_CLAIMS = {"SNCSE-BERT-large": 0.2, "SNCSE-RoBERTa-large": 0.44}
for _backbone, _gain in ABSTRACT_CLAIMS.items():
    _NUMBERS.append(PaperNumber(PAPER, "Abstract", f"{_backbone} +HiCL gain", "avg", _gain, "Table 1 difference"))

REPORTED = ReportedNumbers(PAPER, _NUMBERS)


def table1_gain(baseline: str) -> float:
    """The paper's +HiCL minus baseline seven-task average for a Table 1 row, e.g. ``"SNCSE-RoBERTa-large"``."""
    return REPORTED.value("Table 1", f"{baseline} +HiCL") - REPORTED.value("Table 1", baseline)


def table12_speedup(backbone: str = "BERT-base") -> float:
    """The paper's whole-training speedup of SimCSE +HiCL over SimCSE, Table 12 (minutes at truncation size 512 on
    wiki1m, Appendix A.1): SimCSE's minutes over +HiCL's, e.g. 354.5 / 152.0 = 2.33 for RoBERTa-large."""
    if backbone not in TABLE12:
        raise ValueError(f"Table 12 has {sorted(TABLE12)}, got {backbone!r}")
    whole = REPORTED.value("Table 12", f"SimCSE-{backbone}", "train_minutes")
    return whole / REPORTED.value("Table 12", f"SimCSE-{backbone} +HiCL", "train_minutes")
