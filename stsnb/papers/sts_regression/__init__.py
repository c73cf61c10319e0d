"""STS-Regression (Zhang & Li): Siamese regression with Translated ReLU and Smooth K2.

- ``model``: the Siamese model (Section 3.1, Figure 1), head inputs (Table 6), the Section 3.3 clamp.
- ``training_data``: NLI labels 0/1/2 (Section 4.1), STS pairs, the de-duplicated STS train set (Appendix A).
- ``recipes``: losses by name with Table 2's ``k``/``x0``, NLI fine-tuning, the two stages of Section 4.2, +Contrast.
- ``two_stage``: Section 4.2 end to end on one encoder: "+Ours" (two stages) and "+Contrast", scored on the same pairs
  (``Section42`` holds what every run shares, ``Table3Result`` what the notebook keeps of Table 3).
- ``scoring``: the test pairs every model of a comparison is scored on; our averages named truthfully.
- ``sweeps``: the runs behind Tables 5 and 6, which of them a Table 1 run already answers, their comparison rows and
  claims.
- ``claims``: the paper's Table 1 and Table 3 claims on our runs, with their dev gates, smallest effects, paired
  intervals and verdicts (``stsnb.evaluation.claims``), and the dev-only choice of the best loss; ``sweep_claims``:
  those of Tables 5 and 6; ``conclusions``: the takeaway sentence (opening with the main claim's verdict), the
  findings and whether levels compare.
- ``quotes``: the paper's sentence each claim tests, with its section and table.
- ``backbones``: the paper profile's encoders (Jina / Nomic need the Hub's remote code, loaded in a guarded step:
  one that fails is recorded as not run and its tables skipped).
- ``table1``: the Table 1 runs: which arms on which seed (the main claim's Smooth K2 on cross entropy's labels too),
  one run as a job, what the notebook keeps of each.
- ``tasks``: what Table 1 trains on: NLI, the STS analogue, or the analogue with regression on the rounded classes.
- ``memory``: Table 4, peak training memory of regression vs InfoNCE, and the sanity check on it; the notebook's
  memory plan for ``stsnb run --check``.
- ``figures``: the figures of Tables 1, 3, 4, 5 and 6 (a claims forest plot shared by them).
- ``step``: what notebook 20's training step by hand needs (Table 1's optimizer, a batch's predictions, the share
  inside the buffer); the step itself is ``stsnb.training.training_step``.
- ``reported``: the paper's numbers.
"""

from . import claims, conclusions, figures, memory, quotes, sweep_claims, sweeps, table1
from .backbones import REMOTE_CODE_MODELS, guarded_backbone, load_backbone, require_backbones
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
    Recipe,
    Table1Run,
    contrast_loss,
    dev_curve,
    fine_tune_table1,
    head_outputs_for,
    pair_loss,
    seeded_model,
    table1_run,
    table2_loss,
    train_contrast,
    train_head_frozen,
    train_siamese,
)
from .reported import REPORTED, key_numbers
from .scoring import Evaluation, compare
from .step import inside_buffer, scored_batch, step_optimizer
from .sweeps import (
    NLIVariant,
    answered_by_table1,
    nli_sweep_plan,
    scope_line,
    stage2_sweep_plan,
    sweep_comparison,
    sweep_table5_claims,
    sweep_table6_claims,
)
from .table1 import (
    Table1Runs,
    arm_label,
    arm_loss,
    arm_task,
    arms_on_seed,
    isolates,
    losses_on_seed,
    main_claim_labels_note,
    plan_line,
    table1_job,
)
from .tasks import (
    NLI_TASK,
    STS_ROUNDED_TASK,
    STS_TASK,
    TASKS,
    Table1Task,
    class_shares,
    heldout_accuracy,
    heldout_classes_line,
    same_labels_task,
    table1_task,
)
from .training_data import (
    NLI_RANGE,
    NLI_TARGETS,
    SENTENCE_BERT_LABELS,
    STS_RANGE,
    FilteredSTSTrain,
    PairSplit,
    TrainingPair,
    filtered_sts_train,
    nli_training_pairs,
    positive_pairs,
    split_pairs,
    sts_training_pairs,
)
from .two_stage import (
    ContrastRun,
    Section42,
    Table3Result,
    TwoStageRun,
    contrast_line,
    contrast_run,
    stage2_config,
    stage2_sweep_line,
    two_stage_run,
)
