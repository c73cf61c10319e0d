"""The paper's sentences each claim of notebook 40 tests, as the paper prints them (``stsnb.evaluation.claims.quote``):
the ``paper_quote`` of every claim row, with its section and table."""

from __future__ import annotations

from ...evaluation.claims import quote

TABLE3 = quote(
    "Section 4.3, Table 3",
    "CCL outperforms QuMSE when applied on all the models, it achieves the SOTA performance on the bi-encoder "
    "architecture and demonstrates the broad applicability.",
)
APPENDIX_A = quote(
    "Appendix A",
    "The results on the C-STS validation set indicate that the number of over-estimation samples for QuMSE is 134, "
    "while for CCL, it is only 46.",
)
TABLE4_CONTRASTIVE = quote(
    "Section 4.4, Table 4",
    "Removing $l_{\\text{W-ACL}}$ or l_{BCL} from the conditional contrastive learning framework (CCL) can decrease "
    "the model’s performance on the C-STS validation set.",
)
TABLE4_MSE = quote(
    "Section 4.4, Table 4",
    "The RoBERTa model can achieve higher benefits from the two MSE losses. However, for the SimCSE model, the "
    "benefits obtained from $l_{\\text{C-MSE}}$ are minimal or even detrimental.",
)
SIGMA_ZERO = quote(
    "Section 4.5.1, Table 5",
    "We can find that the optimal effect cannot be achieved without controversial negative samples ($\\sigma = 0$).",
)
SIGMA_OTHER = quote(
    "Section 4.5.1, Table 5",
    "The model benefits from an appropriate σ to strike a reasonable balance between false and hard negative samples.",
)
TAU = quote(
    "Section 4.5.2, Figure 2",
    "We analyze the influence of temperature coefficient in l_{BCL} and find that the model based on bi-encoder "
    "architecture has a certain robustness to temperature coefficient for Spearman correlation, which remains at a "
    "high level, as shown in Figure 2.",
)


def table4(term: str) -> str:
    """The sentence a Table 4 claim removing ``term`` tests: W-ACL and BCL always help; MSE and C-MSE by backbone."""
    return TABLE4_CONTRASTIVE if term in ("w_acl", "bcl") else TABLE4_MSE


MAIN_CLAIM = quote(
    "Abstract",
    "We validate the proposed method with five models based on bi-encoder and tri-encoder architectures, the results "
    "show that our proposed method achieves state-of-the-art performance.",
)
ONE_POINT = quote(
    "Section 4.3",
    "On SimCSE_{base} and DiffCSE_{base} that have been fine-tuned by contrastive learning, CCL achieves improvements "
    "of more than one point.",
)
