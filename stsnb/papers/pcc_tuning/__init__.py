"""Pcc-tuning (Zhang & Li): the contrastive ceiling and two-stage training of a causal LM with prompt templates.

- ``ceiling``: Section 2 and Appendix C, the 7/8 Spearman ceiling of a binary classifier (sympy).
- ``prompts``: Table 3's templates (PromptEOL, PromptSUM, PromptSTH).
- ``corpora``: stage 1's NLI triplets and stage 2's STS-B + SICK-R pairs, with and without the test-set overlap (the
  two arms drawn with the same STS-B / SICK-R mix).
- ``training``: the prompt encoder (last token, LoRA / QLoRA), Eq. 8 and Eq. 9 as losses, both stages on ``fit``;
  the control, stage 2's pairs under Eq. 8's form.
- ``pipeline``: untrained, stage 1, stage 2 variants from the stage-1 adapter, one call per training seed, scored on
  the same test pairs.
- ``transfer``: Table 6's logistic-regression probe (SICK-E here; the other six need the Hub).
- ``recipes``: the official settings per backbone and template, for the paper profile.
- ``protocol``: the official code's choices as switches: the evaluation's text fixes, stage 2's text form, a 4-bit
  run scored on the unquantized base, the recipe and its 100-step warmup (``Protocol``).
- ``memory``: the notebook's memory plan for ``stsnb run --check`` (each stage's sequences and prompt length per GPU).
- ``notebook``, ``figures``: notebook 10's plumbing (inputs, runs, results beside the paper) and its figure.
- ``claims``: our stage differences with paired intervals per training seed, dev gates per seed, smallest effects
  and verdicts (``stsnb.evaluation.claims``); ``MAIN_CLAIMS``, the paper's main claim (Table 4: stage 2 beats stage 1).
- ``reported``: the paper's numbers.
"""

from . import ceiling, claims, corpora, figures, notebook, pipeline, protocol, quotes, recipes, training, transfer
from .pipeline import Scoring, Stage2Variant, StageRun, TemplateRun, run_template, stage1, stage2_from
from .prompts import DEFAULT_TEMPLATE, TEMPLATE_NAMES, TEMPLATES, template
from .recipes import PAPER_BACKBONES, Recipe, paper_recipe, warmup_ratio
from .reported import REPORTED, TRANSFER_TASKS
from .training import (
    control_loss,
    cut,
    load_prompt_encoder,
    scored_pairs_info_nce,
    stage1_loss,
    stage2_loss,
    train_stage,
)

__all__ = [
    "DEFAULT_TEMPLATE",
    "PAPER_BACKBONES",
    "REPORTED",
    "TEMPLATES",
    "TEMPLATE_NAMES",
    "TRANSFER_TASKS",
    "Recipe",
    "ceiling",
    "claims",
    "figures",
    "notebook",
    "protocol",
    "control_loss",
    "corpora",
    "cut",
    "load_prompt_encoder",
    "paper_recipe",
    "pipeline",
    "recipes",
    "Scoring",
    "Stage2Variant",
    "StageRun",
    "TemplateRun",
    "run_template",
    "scored_pairs_info_nce",
    "stage1",
    "stage2_from",
    "stage1_loss",
    "stage2_loss",
    "template",
    "train_stage",
    "training",
    "transfer",
    "warmup_ratio",
]
