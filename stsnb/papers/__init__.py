"""One subpackage per paper: its recipes, heads, prompts, data rules and reported numbers.

``pcc_tuning`` (../shared/papers/pcc-tuning.md), ``sts_regression`` (sts-regression.md), ``hicl`` (hicl.md),
``ccl`` (ccl-csts.md). They build on the generic layers of ``stsnb``; no paper imports another.
"""
