"""Pcc-tuning's protocol where the official code (ZBWpro/Pcc-tuning) fixes details the paper leaves open, each a
switch of the notebook with the official choice as its default.

- **Evaluation text fixes** (``evaluation.py``'s batcher, applied to every sentence it encodes): a final ``.`` when
  the sentence does not end in ``. ? " '``, every ``"`` replaced by ``'``, a final ``?`` turned into ``.``; no
  truncation. SentEval hands the batcher whitespace tokens joined by single spaces. :func:`eval_text_fix`.
- **Stage 2's training text** (:func:`stage2_text_form`). The official ``tune.py`` reads its own file
  (``merged-SICK-STS-B-train.jsonl``, on Google Drive only, so its text form is unknown here), cuts each sentence to
  64 tokens and applies **no** fixes. Our test sets are SentEval's (STS12-16 and STS-B Moses-tokenised and
  lower-cased, SICK tokenised), so training on the original cased text would train on another text form than the
  one scored. ``"evaluation"`` (default): the SentEval copies of STS-B train and SICK-R train with the fixes the
  evaluation applies, so train and test text agree; ``"senteval"``: the same copies without fixes (the official
  ``tune.py`` applies none); ``"raw"``: the original text (our earlier protocol).
- **Scoring a quantized run** (:class:`Scorer`). The official evaluation loads the base *unquantized*
  (``--load_kbit 16``: a plain ``from_pretrained``) and puts the trained LoRA adapter on it, although training ran on
  the 4-bit NF4 base. With ``quantize_4bit`` and ``score_unquantized`` every model (the untrained one too) is scored
  on the unquantized base (bf16 on a GPU, the model's own dtype on the CPU) with a copy of the adapter; the copy is
  loaded for each scoring and freed after it, so training never holds both bases. Dev selection during training
  stays on the training (4-bit) model.
- **The official recipe** (:class:`Protocol`, ``recipes.paper_recipe``): per backbone and template, both stages'
  batches, stage 2's epochs, lr 5e-4 and a warmup of 100 optimizer steps (``train.py`` / ``tune.py``), turned into
  the warmup ratio ``stsnb.training.train.TrainConfig`` takes from the number of steps ``fit`` will count.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import torch

from ... import data as stsdata
from ...evaluation import evaluate
from ...models import loading as models
from ...training import batching
from ...training.checkpoints import trainable_state
from ...training.config import TrainConfig
from .recipes import Recipe, paper_recipe, warmup_ratio

EVAL_ENDINGS = ".?\"'"  # endings after which the official evaluation appends no period
STAGE2_TEXTS = ("evaluation", "senteval", "raw")


def eval_text_fix(sentence: str) -> str:
    """The official evaluation's text fixes (``evaluation.py``, SentEval batcher), in its order: the whitespace tokens
    joined by one space (what SentEval hands the batcher), ``.`` appended unless the sentence ends in ``. ? " '``,
    ``"`` -> ``'``, a final ``?`` -> ``.``. No truncation."""
    s = " ".join(sentence.split())
    if s and s[-1] not in EVAL_ENDINGS:
        s += "."
    s = s.replace('"', "'")
    if s and s[-1] == "?":
        s = s[:-1] + "."
    return s


def eval_preprocess(eval_text_fixes: bool) -> Callable[[str], str] | None:
    """What every test and dev sentence goes through before encoding: :func:`eval_text_fix`, or nothing."""
    return eval_text_fix if eval_text_fixes else None


def fix_pairs(pairs: Sequence[stsdata.STSPair], preprocess: Callable[[str], str] | None) -> list[stsdata.STSPair]:
    """``pairs`` with both sentences mapped by ``preprocess`` (scores, datasets and sources kept)."""
    if preprocess is None:
        return list(pairs)
    return [replace(p, sent1=preprocess(p.sent1), sent2=preprocess(p.sent2)) for p in pairs]


@functools.lru_cache(maxsize=4)
def _senteval_stage2(data_dir: str) -> dict[tuple[str, str, str], stsdata.STSPair]:
    """(dataset, split, source line) -> the SentEval copy of each STS-B train / SICK-R train pair (SICK rescaled)."""
    from .corpora import sts_b_and_sick_train

    del data_dir  # the cache key: the folder the pairs were read from
    return {(p.dataset, p.subset, p.source): p for p in sts_b_and_sick_train("senteval")}


def stage2_text_form(
    pairs: Sequence[stsdata.STSPair], form: str, preprocess: Callable[[str], str] | None = None
) -> list[stsdata.STSPair]:
    """Stage 2's pairs (read from the original text, as ``corpora`` matches them against the test sets) in the text
    form ``form`` trains on: ``"raw"`` as they are; ``"senteval"`` the SentEval copy of the same line (STS-B
    lower-cased and tokenised, SICK tokenised); ``"evaluation"`` that copy through ``preprocess`` (the evaluation's
    fixes; nothing when None)."""
    if form not in STAGE2_TEXTS:
        raise ValueError(f"stage2_text must be one of {STAGE2_TEXTS}, got {form!r}")
    if form == "raw":
        return list(pairs)
    table = _senteval_stage2(str(stsdata.resolve_data_dir()))
    missing = [p.source for p in pairs if (p.dataset, p.subset, p.source) not in table]
    if missing:
        raise ValueError(f"{len(missing)} stage-2 pairs have no SentEval copy (first: {missing[0]!r})")
    converted = [table[(p.dataset, p.subset, p.source)] for p in pairs]
    return fix_pairs(converted, preprocess) if form == "evaluation" else converted


# ---- the official recipe and its warmup ------------------------------------------------------------------------


def optimizer_steps(n_examples: int, global_batch: int, num_processes: int, epochs: int, drop_last: bool) -> int:
    """The optimizer steps ``stsnb.training.train.fit`` counts for ``n_examples`` at a global batch over
    ``num_processes`` (each process takes ``global_batch // num_processes``, ``stsnb.training.batching``; batches are
    shared out among the processes)."""
    per_process = max(1, global_batch // num_processes)
    batches = n_examples // per_process if drop_last else math.ceil(n_examples / per_process)
    return math.ceil(batches / num_processes) * epochs


@dataclass(frozen=True)
class Protocol:
    """The training settings of one run: the notebook's parameters, or, with ``recipe_row`` (``use_paper_recipe``),
    the official recipe of that paper row for each template (``recipes.paper_recipe``): stage-1 and stage-2 batch,
    stage-2 epochs, lr 5e-4 for both stages and a warmup of 100 optimizer steps. Batches are global (all processes
    together, the official code's); stage 2 drops a short last batch (a Pearson of 1-2 pairs means nothing)."""

    num_processes: int = 1
    stage1_batch_size: int = 16
    stage1_lr: float = 5e-4
    stage2_batch_sizes: tuple[int, ...] = (32,)
    stage2_epochs: int = 1
    stage2_lr: float = 5e-4
    warmup_ratio: float = 0.1
    eval_every: int | None = None
    max_grad_norm: float | None = 1.0
    recipe_row: str | None = None
    stage1_cutoff: int = 32
    stage2_cutoff: int = 64

    @classmethod
    def from_parameters(cls, params: Mapping[str, Any], gpus: int | None = None) -> Protocol:
        """The protocol of the notebook's parameters (``use_paper_recipe``: ``paper_row``'s official recipe), on
        the processes ``num_processes`` names: ``"auto"`` takes the largest count of the visible GPUs (or ``gpus``)
        that divides every global batch of ``templates`` (``stsnb.training.batching.resolve_processes``)."""
        proto = cls(
            stage1_batch_size=int(params["stage1_batch_size"]),
            stage1_lr=float(params["stage1_lr"]),
            stage2_batch_sizes=tuple(int(b) for b in params["stage2_batch_sizes"]),
            stage2_epochs=int(params["stage2_epochs"]),
            stage2_lr=float(params["stage2_lr"]),
            warmup_ratio=float(params["warmup_ratio"]),
            eval_every=params["eval_every"],
            recipe_row=params["paper_row"] if params.get("use_paper_recipe") else None,
            stage1_cutoff=int(params["stage1_cutoff"]),
            stage2_cutoff=int(params["stage2_cutoff"]),
        )
        batches = proto.global_batches(params["templates"])
        return replace(proto, num_processes=batching.resolve_processes(params["num_processes"], batches, gpus))

    @classmethod
    def from_plan_values(cls, params: Mapping[str, Any], num_processes: int = 1) -> Protocol:
        """The batches, epochs and cutoffs ``stsnb run --check`` reads from a plan's values (the notebook's defaults
        where a value is absent), on ``num_processes`` already resolved: what the memory and cost plans price."""
        return cls(
            num_processes=num_processes,
            stage1_batch_size=int(params.get("stage1_batch_size", 16)),
            stage2_batch_sizes=tuple(int(b) for b in params.get("stage2_batch_sizes") or [32]),
            stage2_epochs=int(params.get("stage2_epochs", 1)),
            recipe_row=str(params.get("paper_row", "Mistral-7b")) if params.get("use_paper_recipe") else None,
            stage1_cutoff=int(params.get("stage1_cutoff", 32)),
            stage2_cutoff=int(params.get("stage2_cutoff", 64)),
        )

    def global_batches(self, templates: Sequence[str]) -> list[int]:
        """Every global batch the notebook trains on: each template's stage 1 and stage-2 sizes."""
        return sorted({b for t in templates for b in (self.stage1_batch(t), *self.batch_sizes(t))})

    def recipe(self, template: str) -> Recipe | None:
        """The official recipe of ``template`` on ``recipe_row`` (None without ``use_paper_recipe``)."""
        return None if self.recipe_row is None else paper_recipe(self.recipe_row, template)

    def stage1_batch(self, template: str) -> int:
        recipe = self.recipe(template)
        return self.stage1_batch_size if recipe is None else recipe.stage1_batch

    def batch_sizes(self, template: str) -> list[int]:
        """Stage 2's global batch sizes for ``template``: the first is the main run's, the stage 2 of the paper's main
        claim (the recipe's own batch with ``use_paper_recipe``), the rest Table 5's sweep."""
        recipe = self.recipe(template)
        if recipe is None:
            return list(self.stage2_batch_sizes)
        return [recipe.stage2_batch] + [b for b in self.stage2_batch_sizes if b != recipe.stage2_batch]

    def main_label(self, template: str) -> str:
        """The label of ``template``'s main stage-2 run, the main claim's (its first batch size)."""
        return f"batch {self.batch_sizes(template)[0]}"

    def cutoffs(self, template: str) -> tuple[int, int]:
        """Tokens per sentence in stage 1 and stage 2 (official 32 and 64)."""
        recipe = self.recipe(template)
        if recipe is None:
            return self.stage1_cutoff, self.stage2_cutoff
        return recipe.stage1_cutoff, recipe.stage2_cutoff

    def _config(
        self, recipe: Recipe | None, global_batch: int, lr: float, epochs: int, n: int, seed: int, drop_last: bool
    ) -> TrainConfig:
        if recipe is None:
            ratio = self.warmup_ratio
        else:
            ratio = warmup_ratio(
                recipe.warmup_steps, optimizer_steps(n, global_batch, self.num_processes, epochs, drop_last)
            )
        return TrainConfig(
            epochs=epochs,
            batch_size=batching.split_batch(global_batch, self.num_processes, batch_level=True).per_process,
            lr=lr,
            warmup_ratio=ratio,
            max_grad_norm=self.max_grad_norm,
            eval_every=self.eval_every,
            seed=seed,
            drop_last=drop_last,
        )

    def stage1_config(self, template: str, n_triplets: int, seed: int) -> TrainConfig:
        """Stage 1 (Eq. 8) on ``n_triplets``: the recipe's batch, lr, 1 epoch and 100 warmup steps, or the
        parameters."""
        recipe = self.recipe(template)
        lr = self.stage1_lr if recipe is None else recipe.lr
        epochs = 1 if recipe is None else recipe.stage1_epochs
        return self._config(recipe, self.stage1_batch(template), lr, epochs, n_triplets, seed, drop_last=False)

    def stage2_config(self, template: str, global_batch: int, n_pairs: int, seed: int) -> TrainConfig:
        """Stage 2 (Eq. 9, or the control) at ``global_batch`` on ``n_pairs``: the recipe's epochs, lr and 100
        warmup steps, or the parameters."""
        recipe = self.recipe(template)
        lr = self.stage2_lr if recipe is None else recipe.lr
        epochs = self.stage2_epochs if recipe is None else recipe.stage2_epochs
        return self._config(recipe, global_batch, lr, epochs, n_pairs, seed, drop_last=True)

    def describe(self, templates: Sequence[str]) -> str:
        """One line per template: what the run trains with, and where it comes from."""
        lines = []
        for t in templates:
            recipe = self.recipe(t)
            source = "parameters" if recipe is None else f"official recipe of {self.recipe_row}"
            warmup = f"warmup ratio {self.warmup_ratio:g}" if recipe is None else f"{recipe.warmup_steps} warmup steps"
            stage2_epochs = self.stage2_epochs if recipe is None else recipe.stage2_epochs
            stage2_lr = self.stage2_lr if recipe is None else recipe.lr
            stage1_lr = self.stage1_lr if recipe is None else recipe.lr
            lines.append(
                f"{t} ({source}): stage 1 batch {self.stage1_batch(t)}, lr {stage1_lr:g}; stage 2 batch "
                f"{self.batch_sizes(t)}, {stage2_epochs} epoch(s), lr {stage2_lr:g}; {warmup}"
            )
        return "\n".join(lines)


# ---- scoring a quantized run on the unquantized base -----------------------------------------------------------


def scores_unquantized(quantize_4bit: bool, score_unquantized: bool) -> bool:
    """Whether the models are scored on the unquantized base (the official evaluation's ``--load_kbit 16``): only a
    4-bit run has another base to be scored on."""
    return bool(quantize_4bit and score_unquantized)


def unquantized_copy(
    encoder: models.SentenceEncoder,
    backbone: str,
    template: str,
    *,
    lora: models.LoraSettings,
    max_length: int | None = None,
) -> models.SentenceEncoder:
    """The unquantized ``backbone`` (bf16 on a GPU, its own dtype on the CPU) with a fresh adapter of the same
    settings into which ``encoder``'s trained adapter weights are copied (every one must fit)."""
    from .training import load_prompt_encoder

    dtype = torch.bfloat16 if torch.cuda.is_available() else None
    copy = load_prompt_encoder(backbone, template, lora=lora, max_length=max_length, dtype=dtype)
    weights = trainable_state(encoder)
    own = copy.state_dict()
    missing = sorted(set(weights) - set(own))
    if missing:
        raise ValueError(f"the trained adapter does not fit the unquantized base: {missing[:3]}")
    copy.load_state_dict({k: v.to(own[k].dtype) for k, v in weights.items()}, strict=False)
    copy.eval()
    return copy


@dataclass(frozen=True)
class Scorer:
    """Scores a trained encoder on ``scoring``'s test pairs (and probes transfer): on the encoder itself, or, with
    ``unquantized``, on a copy of its adapter on the unquantized base, loaded for the scoring and freed after it."""

    scoring: evaluate.EvalPairs
    backbone: str
    template: str
    lora: models.LoraSettings
    max_length: int | None = None
    unquantized: bool = False

    @contextlib.contextmanager
    def model(self, encoder: models.SentenceEncoder) -> Iterator[models.SentenceEncoder]:
        """The model the scores come from (the encoder, or its unquantized copy while the block runs)."""
        if not self.unquantized:
            yield encoder
            return
        copy = unquantized_copy(encoder, self.backbone, self.template, lora=self.lora, max_length=self.max_length)
        try:
            yield copy
        finally:
            del copy
            gc.collect()
            if torch.cuda.is_available():
                torch.cuda.empty_cache()

    def predictions(self, encoder: models.SentenceEncoder) -> evaluate.TaskPredictions:
        with self.model(encoder) as model:
            return self.scoring.predictions(model)

    def base(self) -> str:
        return "the unquantized base with the trained adapter" if self.unquantized else "the training model itself"
