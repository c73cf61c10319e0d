"""The paper's sentences each claim of notebook 10 tests, as the paper prints them (``stsnb.evaluation.claims.quote``):
the ``paper_quote`` of every claim row, with its section and table. A check of our own setting quotes the sentence
about the setting it checks."""

from __future__ import annotations

from ...evaluation.claims import quote

STAGE1 = quote(
    "Section 3",
    "After the contrastive learning phase, the semantic space of the PLM will be adjusted to a superior encoding "
    "state, capable of generating high-quality embeddings.",
)
STAGE2_GAIN = quote(  # the main claim's row (Table 4's stage 2 over stage 1)
    "Section 4.2, Tables 2 and 4",
    "In contrast, Pcc-tuning provides improvements of about 5 percentage points, reaffirming the mathematical "
    "derivations discussed in Section 2.",
)
GRANULARITY = quote(  # the control's row: the paper puts stage 1's plateau down to contrastive learning itself
    "Section 4.2, Table 2",
    "It reveals that, constrained by the coarse granularity of contrastive learning, whether adopting the earlier "
    "released OPT model or the newly open-sourced Mistral model, the Spearman’s correlation scores for PromptSTH are "
    "confined between 85.3 to 85.7, showing limited progress.",
)
TEST_DATA = quote(
    "Section 4.1",
    "In all experiments, only during the testing phase can models access data from the evaluation benchmarks.",
)
TEMPLATES = quote(
    "Section 4.3, Table 4",
    "It can be seen that regardless of the chosen prompt, Pcc-tuning consistently enhances the model’s performance "
    "from approximately 85 to around 90, with minimal impact from the different templates on the final outcomes.",
)
BATCH_SIZES = quote("Appendix A, Table 5", "This observation indicates that Pcc-tuning is not sensitive to batch size.")


MAIN_CLAIM = quote(
    "Abstract",
    "To transcend this ceiling, we propose an innovative approach termed Pcc-tuning, which employs Pearson’s "
    "correlation coefficient as a loss function to refine model performance beyond contrastive learning.",
)
