"""One subpackage per paper: its recipes, heads, prompts, data rules and reported numbers.

``pcc_tuning`` (../shared/papers/pcc-tuning.md), ``sts_regression`` (sts-regression.md), ``hicl`` (hicl.md),
``ccl`` (ccl-csts.md). They build on the generic layers of ``stsnb``; no paper imports another.
"""

# notebook -> "module:function" giving its training settings for the memory estimate of ``stsnb run --check``
MEMORY_PLANS: dict[str, str] = {
    "10_pcc_tuning": "stsnb.papers.memory_plans:pcc_tuning",
    "20_sts_regression": "stsnb.papers.memory_plans:sts_regression",
    "30_hicl": "stsnb.papers.memory_plans:hicl",
    "40_ccl_csts": "stsnb.papers.memory_plans:ccl",
}
