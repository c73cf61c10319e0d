"""The paper's sentences each claim of notebook 20 tests, as the paper prints them (``stsnb.evaluation.claims.quote``):
the ``paper_quote`` of every claim row, with its section and table."""

from __future__ import annotations

from ...evaluation.claims import quote

SETTING = quote(
    "Section 4.1",
    "Our experimental setup here closely mirrors that of Sentence-BERT, leveraging fine-tuning on BERT or RoBERTa "
    "with a composite corpus derived from the SNLI and MNLI datasets.",
)
TABLE1_K2 = quote(
    "Section 4.1, Table 1",
    "Our regression framework, particularly when utilizing Smooth K2 Loss, yields an average Spearman correlation of "
    "76.03 for BERT_{base} and 76.04 for RoBERTa_{base}. These figures significantly outstrip those attained through "
    "Sentence-BERT and the classification strategy with Cross-Entropy Loss",
)
MECHANISM = quote(
    "Section 3.1",
    "We model STS tasks, characterized by a progressive relationship between categories, as regression problems. "
    "This is achieved by mapping labels from the original dataset to a sequence of incrementing numbers reflective of "
    "their similarity relations, thus conveying to the model that categories are not independent but progressively "
    "related.",
)
NLI_LABELS = quote(
    "Section 4.1",
    "These NLI datasets categorize sentence pairs into three distinct classes: contradiction, neutral, and "
    "entailment. Sentence-BERT maps these classes to 0, 2, and 1, respectively, and employs a classification strategy "
    "for training (Reimers and Gurevych, 2019). In contrast, our method sequentially maps contradiction, neutral, and "
    "entailment to 0, 1 and 2.",
)
BUFFER_L1 = quote(
    "Section 4.1, Table 1",
    "The adoption of Translated ReLU improves performance for both BERT and RoBERTa beyond what is achieved with L1 "
    "Loss.",
)
BUFFER_MSE = quote("Section 4.1, Table 1", "Similarly, employing Smooth K2 Loss surpasses MSE Loss on both PLMs.")
ADAPTIVE = quote(
    "Section 4.1, Table 1",
    "Models trained with Smooth K2 Loss outperform those utilizing Translated ReLU, and models employing MSE Loss "
    "exceed those with L1 Loss.",
)
TABLE3_OURS = quote(
    "Section 4.2, Table 3",
    "The results demonstrate that our network framework effectively enhances the performance of both models and "
    "surpasses BERT-based methods with comparable parameter sizes.",
)
TABLE3_CONTRAST = quote(
    "Section 4.2, Table 3",
    "As it can be observed in Table 3, after discarding such a large portion of annotation information, contrastive "
    "learning yields little improvement and may even lead to model collapse, causing performance degradation.",
)
TABLE5 = quote(
    "Section 4.4, Table 5",
    "The experimental results from Table 5 reveal minor fluctuations in model performance across diverse "
    "hyperparameter configurations, which affirms the resilience and robustness of our proposed methodology.",
)
TABLE6 = quote(
    "Section 4.5, Table 6",
    "The findings indicate that the concatenation method (u, v, |u - v|) is the most effective for both PLMs, thus "
    "further validating the rationale behind our proposed scheme.",
)


MAIN_CLAIM = quote(
    "Abstract",
    "Despite its efficiency, Sentence-BERT tackles STS tasks from a classification perspective, overlooking the "
    "progressive nature of semantic relationships, which results in suboptimal performance.",
)
