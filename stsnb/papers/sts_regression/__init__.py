"""STS-Regression (Zhang & Li): Siamese regression with Translated ReLU and Smooth K2.

- ``model``: the Siamese model (Section 3.1, Figure 1), head inputs (Table 6), the Section 3.3 clamp.
- ``training_data``: NLI labels 0/1/2 (Section 4.1), STS pairs, the de-duplicated STS train set (Appendix A).
- ``recipes``: losses by name with Table 2's ``k``/``x0``, NLI fine-tuning, the two stages of Section 4.2, +Contrast.
- ``two_stage``: Section 4.2 end to end on one encoder: "+Ours" (two stages) and "+Contrast", scored on the same pairs.
- ``scoring``: the test pairs every model of a comparison is scored on; our averages named truthfully.
- ``sweeps``: the runs behind Tables 5 and 6, and which of them a Table 1 run already answers.
- ``claims``: the paper's claims on our runs, with their preconditions, paired intervals and verdicts
  (``stsnb.claims``), the dev-only choice of the best loss, the takeaway sentence and whether levels compare.
- ``backbones``: the paper profile's encoders (Jina / Nomic need the Hub's remote code).
- ``memory``: Table 4, peak training memory of regression vs InfoNCE.
- ``reported``: the paper's numbers.
"""

from . import claims, sweeps
from .backbones import REMOTE_CODE_MODELS, load_backbone, require_backbones
from .model import (
    CLAMP_MODES,
    CONCATENATIONS,
    ClampMode,
    Concatenation,
    SiameseModel,
    clamp_prediction,
    clamped_fraction,
    classify,
    concat_width,
    concatenate,
    head_output,
    predict,
)
from .recipes import (
    LOSSES,
    OFFICIAL_RECIPES,
    STAGE_SETTINGS,
    TABLE2,
    LossSpec,
    Table1Run,
    contrast_loss,
    fine_tune_nli,
    head_outputs_for,
    pair_loss,
    seeded_model,
    table1_run,
    table2_loss,
    train_contrast,
    train_head_frozen,
    train_siamese,
)
from .reported import REPORTED, headlines
from .scoring import Evaluation, compare
from .sweeps import NLIVariant, answered_by_table1, nli_sweep_plan, stage2_sweep_plan
from .training_data import (
    NLI_RANGE,
    NLI_TARGETS,
    SENTENCE_BERT_LABELS,
    STS_RANGE,
    FilteredSTSTrain,
    TrainingPair,
    filtered_sts_train,
    nli_training_pairs,
    positive_pairs,
    sts_training_pairs,
)
from .two_stage import ContrastRun, TwoStageRun, contrast_run, heldout_accuracy, stage2_config, two_stage_run
