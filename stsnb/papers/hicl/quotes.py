"""The paper's sentences each claim of notebook 30 tests, as the paper prints them (``stsnb.evaluation.claims.quote``):
the ``paper_quote`` of every claim row, with its section: Table 1's accuracy claims (``TABLE1``), the setting its
checks test (``BASELINES``), the efficiency at equal truncation (``EQUAL_TRUNCATION``, Section 3.3 on Table 12) and
the main claims' abstract sentences (``claims.MAIN_CLAIMS``)."""

from __future__ import annotations

from ...evaluation.claims import quote

TABLE1 = quote(
    "Section 4.2, Table 1",
    "(iii) HiCL enhances the performance across nine backbone models, yet marginally underperforms (≤ 0.1) on three "
    "models employing the -base architecture.",
)

BASELINES = quote(
    "Section 4.1",
    "We employ the official implementations of these models and adhere to the unsupervised setting utilized by "
    "Sim-CSE.",
)

SECTION_3_3 = quote(
    "Section 3.3",
    "The longer the training corpus, the higher the benefit using HiCL. This suggests that our approach has a variety "
    "of use cases, particularly in pre-training, due to its efficient encoding process.",
)

EQUAL_TRUNCATION = quote(
    "Section 3.3",
    "In short, we are faster than baselines when maintaining the same sequence truncation size 512.",
)

IDENTICAL_INFORMATION = quote(
    "Appendix A.1",
    "Please note that these advantages in efficiency are discussed specifically in the context of training with "
    "identical information, where the same truncation size is maintained.",
)

MAIN_CLAIM_EFFECTIVENESS = quote(
    "Abstract",
    "Conversely, HiCL improves its effectiveness by dividing the sequence into several segments and employing both "
    "local and global contrastive learning to model segment-level and sequencelevel relationships.",
)

MAIN_CLAIM_EFFICIENCY = quote(
    "Abstract",
    "Further, considering the quadratic time complexity of transformers over input tokens, HiCL boosts training "
    "efficiency by first encoding short segments and then aggregating them to obtain the sequence representation.",
)
