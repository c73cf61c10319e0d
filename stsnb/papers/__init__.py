"""The papers layer: one subpackage per paper, with its recipes, heads, prompts, data rules, claims and reported
numbers.

``pcc_tuning`` (Pcc-tuning), ``sts_regression`` (STS-Regression), ``hicl`` (HiCL) and ``ccl`` (CCL on C-STS).

May import: data, models, training, evaluation, runs, gpu, teaching; no paper imports another.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def pipelines() -> dict[str, Callable[[Mapping[str, Any]], Any]]:
    """Training notebook -> its paper's opening-figure builder (``figures.pipeline``: parameters -> ``Pipeline``),
    which ``stsnb figures`` draws (``stsnb.teaching.pipeline``)."""
    from .ccl import figures as ccl
    from .hicl import figures as hicl
    from .pcc_tuning import figures as pcc_tuning
    from .sts_regression import figures as sts_regression

    return {
        "10_pcc_tuning": pcc_tuning.pipeline,
        "20_sts_regression": sts_regression.pipeline,
        "30_hicl": hicl.pipeline,
        "40_ccl_csts": ccl.pipeline,
    }
