"""CCL (Liu et al.): Conditional Semantic Textual Similarity via Conditional Contrastive Learning, on C-STS.

- ``quadruples``: C-STS rows paired into (high, low) quadruples (Section 3.1), the label scale ``(l - 1) / 4``.
- ``encoders``: the bi-encoder and the tri-encoder (Section 3.2.1), the score of Eq. 2, BCL's projection ``g``.
- ``objectives``: QuMSE (Quad + MSE) and CCL (Eq. 3), FDL / RDL / ACL (Eq. 5-8), C-MSE under our two readings.
- ``overestimation``: the Appendix A count (Eq. 16-17).
- ``training``: one experiment (build, fit with selection, score Spearman / Pearson x100).
- ``claims``: our differences as ``stsnb.evaluation.claims`` rows: intervals over sentence pairs, seeds, preconditions,
  verdicts; the paper's main claim (``MAIN_CLAIMS``).
- ``gates``: per-seed dev gates of each arm, each claim's smallest effect with its reason, the Table 5 gradient floor.
- ``reported``: the paper's numbers (Tables 3-9, Appendix A, Table 1) and hyperparameters (Tables 2, 6).
- ``data_look``: real quadruples with a model's cosines, the most wrong ones, how much the condition matters.
- ``probes``: BCL's share of the gradient by tau and its reading (Table 5, Figure 2).
- ``figures``: the notebook's figures in one style.
- ``memory``: the notebook's memory plan for ``stsnb run --check`` (a micro-batch of quadruples per GPU).
- ``protocol``: the paper's reference, the measured runtimes, and every protocol detail of a run beside the paper's.
"""

from . import figures, gates, quotes
from .claims import (
    MAIN_CLAIMS,
    WHAT_W_ACL_DOES,
    ablation_note,
    ablation_seeds_of,
    check_ablation_seeds,
    count_claim,
    fewest_resolvable_count,
    paired_count_difference,
    per_seed_text,
    quadruple_groups,
    robustness_margin,
    row_interval,
    seed_intervals,
    sigma_changes_weights,
    sigma_claim,
    spearman_claim,
    spearman_interval,
    tau_claim,
)
from .data_look import (
    LENGTH_GROUPS,
    ConditionSpread,
    LengthOrder,
    QuadrupleLook,
    architecture_note,
    condition_spread,
    condition_token_share,
    condition_tokens,
    conditioning_notes,
    looks,
    looks_markdown,
    looks_of_model,
    most_wrong,
    order_by_length,
    spread_examples,
    spread_table,
    wrong_order,
)
from .encoders import (
    ARCHITECTURES,
    PROJECTIONS,
    Architecture,
    BiEncoder,
    ConditionalEncoder,
    Projection,
    TriEncoder,
    build_encoder,
    hadamard,
    make_condition_transform,
    make_projection,
)
from .gates import (
    SIGMA_FLOOR_REASON,
    SIGMA_GRADIENT_FLOOR,
    arm_gates,
    dev_gate,
    differences_text,
    gates_text,
    sigma_acts,
    sigma_reach,
    smallest_effect,
    why_not_tested,
)
from .objectives import (
    C_MSE_TARGETS,
    CCL_TERMS,
    TEMPERATURE_READINGS,
    TERM_LABELS,
    TERMS,
    CMseTarget,
    Objective,
    acl,
    batch_terms,
    c_mse,
    ccl,
    fdl,
    loss_function,
    qumse,
    rdl,
    terms_text,
    total,
    untested_hypotheses,
)
from .overestimation import (
    READINGS,
    ErrorSides,
    OverestimationCount,
    count_overestimated,
    error_sides,
    overestimated,
    quadruple_scores,
    run_flags,
    sides_note,
    wide_gaps,
)
from .probes import (
    SIMCSE_TEMPERATURE,
    GradientShare,
    gradient_shares,
    probe_settings,
    shares_table,
    sweep_notes,
)
from .protocol import ProtocolRow, protocol_markdown, protocol_rows, reading_rows
from .quadruples import (
    LABEL_RANGE,
    Pairing,
    Quadruple,
    pair_conditions,
    rows_of,
    rows_of_pair,
    scale_label,
    split_quadruples,
)
from .reported import (
    ABLATION_SUFFIXES,
    ARCHITECTURE_LABELS,
    HYPERPARAMETERS,
    MODELS,
    NOT_COMPARABLE_TEST,
    NOT_COMPARABLE_VALIDATION,
    PAPER_BACKBONES,
    REPORTED,
    SIGMAS,
    TABLE1,
    Hyperparameters,
    Table1Example,
    compare_validation,
    hyperparameters,
    setting,
)
from .training import (
    Evaluation,
    ModelSettings,
    RunOutcome,
    evaluate_rows,
    gold_labels,
    pair_id,
    param_groups,
    train_and_evaluate,
    zero_shot,
)
