"""Training a baseline (SimCSE / ESimCSE / SNCSE) with or without HiCL on unlabelled sentences, through
``stsnb.training.train.fit`` with STS-B dev selection every ``eval_every`` steps, step 0 included (HiCL Appendix A.3:
"we evaluate the model every 125 training steps on the development set of STS-B and select the best checkpoint").

One optimizer step: the batch's sentences (token ids, truncated to ``max_length``) are cut into segments of
``slice_length`` tokens when HiCL is on (whole otherwise), the anchor view and the positive view (and SNCSE's negated
view) of every segment go through the backbone in one padded forward (different dropout masks per row), segment
embeddings are pooled into sequence embeddings (Section 3.1), and the loss is the baseline's ``L_g`` on sequences,
mixed with Eq. 2 on segments as ``alpha L_l + (1 - alpha) L_g`` under HiCL (Section 3.2).

Evaluation always embeds whole sentences with the model's sentence encoder (for SNCSE: the anchor prompt, last or
[MASK] token), as the baselines' SentEval evaluation does; the paper does not say that HiCL slices test sentences
(STS sentences are mostly shorter than L anyway).
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import nn

from ...evaluation.evaluate import dev_evaluator, gate_evaluator
from ...models import loading as models
from ...models.loading import SentenceEncoder
from ...training.config import TrainConfig, TrainResult
from ...training.train import fit
from .objectives import ObjectiveSettings, global_loss, hicl_objective
from .records import RunOutcome
from .results import spearman_scores, task_predictions
from .segments import (
    SegmentBatch,
    SegmentPooling,
    Template,
    build_segments,
    encode_segments,
    pool_sequences,
    special_token_frame,
)
from .variants import Method, MethodSettings, MomentumQueue, negate, prompt_for_backbone, repeat_tokens


@dataclass(frozen=True)
class HiclSettings:
    """HiCL on or off and its segmentation (Section 3.1): L, segment pooling (Table 3), special tokens per segment."""

    enabled: bool = True
    slice_length: int = 32  # L, "we recommend setting the default slicing length as 32" (Section 5.3)
    segment_pooling: SegmentPooling = "weighted"  # Table 3: weighted (the paper's) | unweighted
    special_tokens: bool = True  # each segment a standalone input with the tokenizer's special tokens (open choice)


@dataclass
class TrainingExample:
    """One unlabelled sentence as token ids (and, for SNCSE, its negation's ids)."""

    ids: list[int]
    negation_ids: list[int] | None = None


def is_causal(encoder: SentenceEncoder) -> bool:
    """A decoder-only backbone (by its config, as ``stsnb.models`` decides it)."""
    return models._config_is_causal(encoder.backbone.config.to_dict())


class MaskTokenEncoder(SentenceEncoder):
    """A masked LM read at its [MASK] token (SNCSE's representation): the template holds the mask token once."""

    def pool_features(self, hidden: torch.Tensor, features: dict[str, torch.Tensor]) -> torch.Tensor:
        where = features["input_ids"] == self.tokenizer.mask_token_id
        if not bool((where.sum(dim=1) == 1).all()):
            raise ValueError("every input of a MaskTokenEncoder needs exactly one mask token (the SNCSE prompt)")
        return hidden[where]

    def embed(self, features: dict[str, torch.Tensor]) -> torch.Tensor:
        output = self.backbone(input_ids=features["input_ids"], attention_mask=features["attention_mask"])
        return self.pool_features(output.last_hidden_state, features).float()


def sncse_encoder(encoder: SentenceEncoder, settings: MethodSettings) -> SentenceEncoder:
    """The SNCSE sentence encoder sharing ``encoder``'s backbone and weights: the anchor prompt, read at the last
    token (a decoder: the prompt ends after "means") or at the [MASK] token (a masked LM)."""
    causal = is_causal(encoder)
    template = prompt_for_backbone(settings.anchor_prompt, encoder.tokenizer, causal).replace("[X]", "*sent_0*")
    kind = SentenceEncoder if causal else MaskTokenEncoder
    wrapped = kind(encoder.backbone, encoder.tokenizer, "last", template, encoder.max_length, encoder.name)
    wrapped.weights_source, wrapped.load_settings = encoder.weights_source, encoder.load_settings
    wrapped.load_record = encoder.load_record  # the embedding cache key follows the shared weights
    return wrapped


class MLPHead(nn.Module):
    """SimCSE's training-only head (princeton-nlp/SimCSE ``simcse/models.py``, ``MLPLayer``): a dense layer of the
    hidden size and a tanh over the pooled representation. With ``--mlp_only_train`` (its unsupervised runs) it is
    used in training and dropped at evaluation. Initialised as BERT initialises a linear layer (normal, std
    ``initializer_range`` = 0.02; bias 0), from ``seed``, so both arms of a pair start from the same head."""

    def __init__(self, hidden_size: int, seed: int = 0, std: float = 0.02):
        super().__init__()
        self.dense = nn.Linear(hidden_size, hidden_size)
        generator = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            self.dense.weight.copy_(torch.randn(hidden_size, hidden_size, generator=generator) * std)
            self.dense.bias.zero_()

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.dense(features))


class ContrastiveModel(nn.Module):
    """What ``fit`` trains: ``encoder`` (evaluated on STS-B dev) and, for ESimCSE, the momentum encoder and queue;
    with ``mlp_head`` (SimCSE only) SimCSE's training-only ``MLPHead``, which ``encoder`` does not contain, so the
    dev and test evaluations (which read ``encoder``) never see it.

    Under HiCL the head acts on every segment embedding, before the segments are pooled into the sequence
    embedding (our decision where the paper is silent: in SimCSE's code the head follows the pooler, which is per
    encoded input, and HiCL encodes segments); a one-segment sequence is then exactly the baseline's case."""

    def __init__(
        self,
        encoder: SentenceEncoder,
        method: Method,
        hicl: HiclSettings,
        objective: ObjectiveSettings,
        method_settings: MethodSettings | None = None,
        seed: int = 0,
        mlp_head: bool = False,
        padded: bool = False,
    ):
        super().__init__()
        self.padded = padded  # one forward padded to the longest row (the paper's collator), else length-sorted chunks
        if method not in ("simcse", "esimcse", "sncse"):
            raise ValueError(f"method must be 'simcse', 'esimcse' or 'sncse', got {method!r}")
        if mlp_head and method != "simcse":
            raise ValueError(f"the MLP head is SimCSE's (its training-only MLPLayer); {method} has none here")
        self.method = method
        self.hicl = hicl
        self.objective = objective
        method_settings = method_settings or MethodSettings()
        self.settings = method_settings
        self.rng = random.Random(seed)
        self.encoder = sncse_encoder(encoder, method_settings) if method == "sncse" else encoder
        self.frame = special_token_frame(encoder.tokenizer)
        tokenizer = encoder.tokenizer
        if method == "sncse":
            causal = is_causal(encoder)
            self.anchor_template = Template.from_text(
                tokenizer, prompt_for_backbone(method_settings.anchor_prompt, tokenizer, causal)
            )
            self.positive_template = Template.from_text(
                tokenizer, prompt_for_backbone(method_settings.positive_prompt, tokenizer, causal)
            )
        else:
            self.anchor_template = self.positive_template = Template()
        self.momentum = (
            MomentumQueue(encoder.backbone, method_settings.queue_size, method_settings.momentum)
            if method == "esimcse"
            else None
        )
        self.head: MLPHead | None = None
        if mlp_head:
            config = encoder.backbone.config
            std = float(getattr(config, "initializer_range", 0.02))
            device = next(encoder.backbone.parameters()).device
            self.head = MLPHead(int(config.hidden_size), seed, std).to(device)
        self.last_parts: dict[str, float] = {}

    def segments(self, sequences: Sequence[Sequence[int]], template: Template, transform=None) -> SegmentBatch:
        length = self.hicl.slice_length if self.hicl.enabled else None
        frame = self.frame if self.hicl.special_tokens else ((), ())
        return build_segments(sequences, length, frame=frame, template=template, transform=transform)

    def forward(self, batch: Sequence[TrainingExample]) -> torch.Tensor:
        """The training loss: ``fit`` calls the model, so on several processes the call goes through DDP's forward
        (which its gradient synchronisation needs) rather than around it."""
        return self.loss(batch)

    def loss(self, batch: Sequence[TrainingExample]) -> torch.Tensor:
        """The training loss of one batch (see the module docstring)."""
        ids = [example.ids for example in batch]
        anchor = self.segments(ids, self.anchor_template)
        transform = None
        if self.method == "esimcse":
            transform = lambda piece: repeat_tokens(piece, self.settings.dup_rate, self.rng)[0]  # noqa: E731
        positive = self.segments(ids, self.positive_template, transform)
        views = [anchor, positive]
        if self.method == "sncse":
            negations = [example.negation_ids for example in batch]
            if any(n is None for n in negations):
                raise ValueError("SNCSE needs every TrainingExample's negation_ids (make_examples(..., 'sncse'))")
            views.append(self.segments(negations, self.positive_template))
        if self.momentum is not None:
            self.momentum.update(self.encoder.backbone)
        rows = [row for view in views for row in view.input_ids]
        embedded = encode_segments(self.encoder, rows, padded=self.padded)
        if self.head is not None:
            embedded = self.head(embedded)  # SimCSE's MLP, training only (absent from self.encoder)
        parts = torch.split(embedded, [len(view) for view in views])
        pooling = self.hicl.segment_pooling
        pooled = [
            pool_sequences(e, v.sequence_ids, v.lengths, v.n_sequences, pooling)
            for e, v in zip(parts, views, strict=True)
        ]
        queue = self.momentum.queue if self.momentum is not None else None
        soft_negative = pooled[2] if self.method == "sncse" else None
        loss = global_loss(pooled[0], pooled[1], self.objective, queue=queue, soft_negative=soft_negative)
        self.last_parts = {"global": _value(loss)}
        if self.hicl.enabled and self.objective.alpha > 0:
            loss, local = hicl_objective(parts[0], parts[1], anchor.sequence_ids, loss, self.objective)
            self.last_parts["local"] = _value(local)
        if self.momentum is not None:
            with torch.no_grad():
                keys = encode_segments(
                    self.encoder, anchor.input_ids, backbone=self.momentum.backbone, padded=self.padded
                )
                self.momentum.push(pool_sequences(keys, anchor.sequence_ids, anchor.lengths, len(ids), pooling))
        return loss


def _value(loss: torch.Tensor) -> float:
    """A loss as a number for the log (NaN on the ``meta`` device, which holds shapes only)."""
    return float("nan") if loss.device.type == "meta" else float(loss.detach())


def make_examples(
    tokenizer, sentences: Sequence[str], max_length: int, method: Method
) -> tuple[list[TrainingExample], dict[str, int]]:
    """Token ids of each sentence (no special tokens, first ``max_length`` kept) and, for SNCSE, of its negation;
    returns the examples and how often each negation rule fired (empty unless SNCSE)."""
    if max_length < 1:
        raise ValueError(f"max_length must be >= 1, got {max_length}")
    ids = tokenizer(list(sentences), add_special_tokens=False)["input_ids"]
    rules: dict[str, int] = {}
    examples = []
    negated_ids: list[list[int]] | None = None
    if method == "sncse":
        negated = [negate(s) for s in sentences]
        for _, rule in negated:
            rules[rule] = rules.get(rule, 0) + 1
        negated_ids = tokenizer([text for text, _ in negated], add_special_tokens=False)["input_ids"]
    for index, tokens in enumerate(ids):
        if not tokens:
            raise ValueError(f"sentence {index} ({sentences[index]!r}) has no tokens")
        negation = negated_ids[index][:max_length] if negated_ids is not None else None
        examples.append(TrainingExample(list(tokens[:max_length]), negation))
    return examples, rules


@dataclass
class TrainedModel:
    encoder: SentenceEncoder  # the sentence encoder to evaluate (for SNCSE with the anchor prompt)
    result: TrainResult
    losses: list[dict] = field(default_factory=list)
    evaluation_seconds: float = 0.0  # time ``fit`` spent in the dev evaluations (inside ``result.seconds``)

    @property
    def train_seconds(self) -> float:
        """``fit``'s time without its dev evaluations: the optimizer steps (forward, backward, update) alone."""
        return self.result.seconds - self.evaluation_seconds


def train_method(
    encoder: SentenceEncoder,
    examples: Sequence[TrainingExample],
    method: Method,
    hicl: HiclSettings,
    objective: ObjectiveSettings,
    config: TrainConfig,
    evaluate=None,
    method_settings: MethodSettings | None = None,
    mlp_head: bool = False,
    gate=None,
) -> TrainedModel:
    """Train ``encoder`` in place with ``fit``; ``evaluate(model) -> STS-B dev Spearman`` selects the checkpoint
    (``stsnb.evaluation.evaluate.dev_evaluator``: it reads ``model.encoder``, never SimCSE's training-only
    ``mlp_head``). Trainable parameters: those of ``encoder`` that require a gradient (the momentum copy does not) and
    the head. The time spent in ``evaluate`` is kept apart (``TrainedModel.evaluation_seconds``), so that
    ``train_seconds`` is the training alone (Table 12's quantity). ``gate``: ``fit``'s held-out dev scoring (the dev
    gate's), timed apart too."""
    model = ContrastiveModel(encoder, method, hicl, objective, method_settings, seed=config.seed, mlp_head=mlp_head)
    parts: list[dict] = []
    evaluation_seconds = [0.0]

    def timed(evaluation):
        def run(m: ContrastiveModel):
            started = time.perf_counter()
            try:
                return evaluation(m)
            finally:
                evaluation_seconds[0] += time.perf_counter() - started

        return run

    def loss_fn(m: ContrastiveModel, batch: Sequence[TrainingExample]) -> torch.Tensor:
        loss = m(batch)  # through DDP's forward when fit runs on several processes
        parts.append(dict(getattr(m, "module", m).last_parts))
        return loss

    config = config.labelled(f"{method}{' +HiCL' if hicl.enabled else ''}, seed {config.seed}")
    result = fit(
        model,
        loss_fn,
        list(examples),
        config,
        evaluate=timed(evaluate) if evaluate is not None else None,
        gate=timed(gate) if gate is not None else None,
    )
    return TrainedModel(model.encoder, result, parts, evaluation_seconds[0])


@dataclass(frozen=True)
class BackboneSettings:
    """How the backbone is loaded (``stsnb.models.load_encoder``); ``dropout`` only for a Llama-family backbone.
    ``gradient_checkpointing`` (non-reentrant) recomputes the activations in the backward pass: less memory, the same
    gradients (the paper plan's batch of 256 on BERT-base needs it to fit 24 GiB)."""

    name: str = "smollm2-135m-l6"
    pooling: str | None = "mean"  # SimCSE / ESimCSE sentence pooling (SNCSE always reads its prompt token)
    dropout: float | None = 0.1  # attention + hidden dropout added to a raw decoder (None: the model's own)
    freeze_embeddings: bool = True  # keep the token embedding fixed
    max_length: int = 128  # evaluation cutoff of the sentence encoder
    gradient_checkpointing: bool = False  # non-reentrant activation checkpointing in training

    def load(self) -> SentenceEncoder:
        return models.load_encoder(
            self.name,
            pooling=self.pooling,
            max_length=self.max_length,
            dropout=self.dropout,
            freeze_embeddings=self.freeze_embeddings,
            gradient_checkpointing=self.gradient_checkpointing,
        )


def run_training(
    backbone: BackboneSettings,
    sentences: Sequence[str],
    method: Method,
    hicl: HiclSettings,
    objective: ObjectiveSettings,
    config: TrainConfig,
    dev_pairs: Sequence,
    method_settings: MethodSettings | None = None,
    max_length: int = 128,
    eval_tasks: str = "all",
    eval_max_pairs: int | None = None,
    eval_sample_seed: int = 0,
    count_special_tokens: bool = False,
    mlp_head: bool = False,
) -> RunOutcome:
    """Load a fresh backbone, train ``method`` (+HiCL if ``hicl.enabled``) on ``sentences`` with STS-B dev selection,
    then score the selected checkpoint on ``eval_tasks`` (per-pair predictions kept for paired intervals; a sample of
    ``eval_max_pairs`` per task is drawn with ``eval_sample_seed``, the same pairs for every run).

    Each training sentence keeps its first ``max_length`` tokens; with ``count_special_tokens`` the tokenizer's
    special tokens count towards ``max_length``, as SimCSE's ``max_seq_length`` does (32 in its unsupervised runs:
    [CLS] + 30 tokens + [SEP] on BERT; SmolLM2's tokenizer adds none). ``mlp_head``: SimCSE's training-only MLP
    (``MLPHead``), never evaluated."""
    started = time.perf_counter()
    encoder = backbone.load()
    if count_special_tokens and hicl.special_tokens:
        max_length -= sum(len(part) for part in special_token_frame(encoder.tokenizer))
    examples, _ = make_examples(encoder.tokenizer, sentences, max_length, method)
    trained = train_method(
        encoder,
        examples,
        method,
        hicl,
        objective,
        config,
        dev_evaluator(dev_pairs),
        method_settings,
        mlp_head,
        gate=gate_evaluator(dev_pairs),
    )
    predictions = task_predictions(trained.encoder, eval_tasks, eval_max_pairs, eval_sample_seed)
    return RunOutcome(
        method,
        hicl.enabled,
        config.seed,
        predictions,
        spearman_scores(predictions),
        trained.result,
        trained.losses,
        time.perf_counter() - started,
        trained.train_seconds,
        max(len(e.ids) for e in examples),
    )


def queue_fill_losses(
    encoder: SentenceEncoder,
    examples: Sequence[TrainingExample],
    batch_size: int,
    objective: ObjectiveSettings,
    method_settings: MethodSettings | None = None,
    steps: int | None = None,
    seed: int = 0,
) -> list[tuple[int, float]]:
    """ESimCSE's loss (Eq. 1 with its queue of momentum negatives) on consecutive batches of ``examples`` with the
    weights held fixed (no optimizer step, dropout on, as in training) while the queue fills: ``(rows in the queue
    the batch met, loss)`` per batch, ``steps`` batches (default: until the queue is full, then two more). A rise
    here is the queue's extra negatives alone (more terms in the denominator of Eq. 1), not training."""
    settings = method_settings or MethodSettings()
    steps = steps or -(-settings.queue_size // batch_size) + 2
    model = ContrastiveModel(encoder, "esimcse", HiclSettings(False), objective, settings, seed=seed)
    was_training = encoder.training
    model.train()
    torch.manual_seed(seed)
    losses: list[tuple[int, float]] = []
    try:
        with torch.no_grad():
            for k in range(steps):
                batch = examples[k * batch_size : (k + 1) * batch_size]
                if len(batch) < batch_size:
                    break
                queued = len(model.momentum.queue)
                losses.append((queued, _value(model(batch))))
    finally:
        encoder.train(was_training)
    return losses


def queue_fill_reading(fill: Sequence[tuple[int, float]], first: float, last: float) -> str:
    """What ``queue_fill_losses`` says about a trained ESimCSE run whose loss went from ``first`` to ``last``: with
    the queue full, the untrained weights already score at least ``last``, so the rise is the queue filling (and
    training lowered the loss from there); otherwise the queue does not explain it alone."""
    if not fill:
        raise ValueError("queue_fill_losses gave no batch")
    empty = [loss for queued, loss in fill if queued == 0]
    full = [loss for queued, loss in fill if queued == max(q for q, _ in fill)]
    level = sum(full) / len(full)
    start = f"fixed untrained weights: {empty[0]:.3f} with an empty queue, " if empty else "fixed untrained weights: "
    text = f"{start}{level:.3f} with a full one (mean of {len(full)} batch(es)); the trained run: {first:.3f} -> "
    text += f"{last:.3f}"
    if last <= level:
        return text + (
            ". The rise is the queue filling (more negatives in Eq. 1's denominator), and training lowered the loss "
            "from the full-queue level: first and last losses are not comparable, the loss did not get worse."
        )
    return text + (
        ". The queue filling does not explain the whole rise; an open hypothesis: its negatives get harder as the "
        "encoder trains (the momentum copy follows it)."
    )


def evaluation_encoder(encoder: SentenceEncoder, method: Method, settings: MethodSettings | None = None):
    """The sentence encoder a method is evaluated with: the backbone's pooling, or for SNCSE its anchor prompt."""
    return sncse_encoder(encoder, settings or MethodSettings()) if method == "sncse" else encoder
