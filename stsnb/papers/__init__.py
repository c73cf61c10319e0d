"""The papers layer: one subpackage per paper, with its recipes, heads, prompts, data rules, claims and reported
numbers.

``pcc_tuning`` (Pcc-tuning), ``sts_regression`` (STS-Regression), ``hicl`` (HiCL) and ``ccl`` (CCL on C-STS).

May import: data, models, training, evaluation, runs, gpu, teaching; no paper imports another.
"""
