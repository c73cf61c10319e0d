"""HiCL (Wu, Xiao, Vydiswaran, EMNLP 2023 Findings): hierarchical contrastive learning of sentence embeddings.

- ``segments``: Section 3.1, the queue rule, segment framing and encoding, weighted / unweighted pooling (Table 3),
  Table 2's length distribution.
- ``objectives``: Eq. 1 (+ ESimCSE's queue, + SNCSE's margin loss), Eq. 2 via ``stsnb.training.losses.hicl_local_loss``
  (Table 4's same-sequence relation, Appendix A.8's summation / averaging), ``alpha L_l + (1 - alpha) L_g``.
- ``variants``: Table 1's baselines, SimCSE, ESimCSE (word repetition, momentum queue), SNCSE (negation, prompts).
- ``training``: one model / loss per (baseline, HiCL on/off) trained with ``stsnb.training.train.fit`` and STS-B dev
  selection.
- ``step``: the terms of a batch's loss in words, for the training step by hand (``stsnb.training.training_step``).
- ``protocol``: what the notebook's runs share (``TrainingProtocol``) and the paper's truncation (Appendix A.1,
  Section 5.4: baselines cut at 32 tokens, +HiCL slicing the whole sentence) or both arms alike; the ablations.
- ``differences``: where a run's parameters depart from the paper's protocol, and why (the notebook's table).
- ``table12``: the efficiency main claim where the paper makes it (Section 3.3, Appendix A.1, Table 12): SimCSE
  training steps on the training data's batches at equal truncation, whole vs in segments, as a claim row.
- ``efficiency``: the runs' own whole-training ratio (the paper's protocol); Section 3.3's mechanism, one step whole vs
  in segments at fixed lengths, time, growth with the length and peak memory in fresh processes.
- ``records``: ``RunOutcome``, the record of one training run (written by ``training``, read by ``results``).
- ``results``: per-pair STS predictions, paired intervals per training seed, the Table 1 claims as the paper's rows
  state them (a gain with its smallest effect, or "within 0.1"), gated per seed on their own arms' dev scores
  (``stsnb.evaluation.dev_gates``), the checks against the untrained backbone, the takeaway opening with the main
  claims (``claims.MAIN_CLAIMS``), and whether our levels are comparable.
- ``memory``: the notebook's memory plan for ``stsnb run --check`` (each arm's forward, whole or in segments).
- ``probe``: does plain unsupervised SimCSE move the backbone at all (last step vs untrained, paired interval)?
- ``reported``: the paper's numbers.
"""

from . import differences, quotes, table12
from .objectives import ObjectiveSettings, bml_loss, global_loss, hicl_objective, queue_info_nce
from .probe import BASELINE_PROBES, ProbeSetting, baseline_probes_note, simcse_moves
from .protocol import (
    SIMCSE_MAX_LENGTH,
    TRUNCATIONS,
    TrainingProtocol,
    full_segment_sentences,
    run_ablation,
    special_token_count,
    training_sample,
    truncation_summary,
)
from .records import RunOutcome, histories_by_method
from .reported import ABSTRACT_CLAIMS, REPORTED, TABLE1, TABLE2, TABLE12, table1_gain, table12_speedup
from .results import (
    MAIN_METHOD,
    MARGINAL,
    PAPER_METHODS,
    comparability,
    dev_gate,
    main_claims_opening,
    methods_line,
    paired_difference,
    paper_direction,
    paper_row,
    plus_hicl_claim,
    seed_intervals,
    smallest_effect,
    spearman_scores,
    task_predictions,
    untrained_check,
)
from .segments import (
    SEGMENT_POOLINGS,
    TABLE2_EDGES,
    SegmentBatch,
    Template,
    build_segments,
    encode_segments,
    length_distribution,
    pool_sequences,
    segment_count,
    segment_weights,
    slice_tokens,
    special_token_frame,
    token_lengths,
)
from .step import terms_text
from .training import (
    BackboneSettings,
    ContrastiveModel,
    HiclSettings,
    MaskTokenEncoder,
    TrainedModel,
    TrainingExample,
    evaluation_encoder,
    make_examples,
    run_training,
    sncse_encoder,
    train_method,
)
from .variants import (
    HICL_PAPER_PROMPT,
    METHODS,
    SNCSE_ANCHOR_PROMPT,
    SNCSE_POSITIVE_PROMPT,
    MethodSettings,
    MomentumQueue,
    negate,
    prompt_for_backbone,
    repeat_tokens,
    repetition_count,
)
