"""STS-Regression (Zhang & Li): the Siamese regression model, its training data and its training recipes.

- ``SiameseModel``: shared encoder, mean pooling, ``Linear`` on ``(u, v, |u - v|)`` with one output (Section 3.1,
  Figure 1); ``outputs=K`` is the classification alternative of Sentence-BERT (cross entropy, Table 1);
  ``CONCATENATIONS`` are the Table 6 ablation (Section 4.5).
- ``nli_training_pairs``: contradiction / neutral / entailment -> 0 / 1 / 2 (Section 4.1).
- ``clamp_prediction``: predictions beyond the outermost label moved onto it (Section 3.3).
- ``LossSpec``, ``table2_loss``: the Table 1 losses by name (Eq. 1-2), ``k`` and ``x0`` of Table 2.
- ``train_siamese``: fine-tuning with STS-B dev checkpoint selection (Section 4.1) and the official code's
  layer-wise LR decay (``layerwise_param_groups``).
- ``train_head_frozen``, ``filtered_sts_train``: the two stages of Section 4.2 (Figure 3) and the de-duplicated
  STS-B + SICK-R training set (Appendix A).
- ``train_contrast``: the "+Contrast" baseline of Table 3, InfoNCE (Eq. 3) on the pairs scored >= 4.0.

Where the paper and the official code (ZBWpro/STS-Regression, notes in REFERENCE_NOTES A2) differ, the choice is
a parameter and its docstring says which one each value follows.
"""

from __future__ import annotations

import csv
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import numpy as np
import torch
from torch import Tensor, nn

from . import data as stsdata
from . import evaluate, losses, models
from .train import TrainConfig, TrainResult, fit

# ---- model (Section 3.1, Figure 1; Table 6) ---------------------------------------------------------------------

Concatenation = Literal["(u,v,|u-v|)", "(u,v)", "|u-v|"]
CONCATENATIONS: tuple[Concatenation, ...] = ("(u,v,|u-v|)", "(u,v)", "|u-v|")  # Table 6, ours first
_WIDTH = {"(u,v,|u-v|)": 3, "(u,v)": 2, "|u-v|": 1}


def concatenate(u: Tensor, v: Tensor, how: Concatenation = "(u,v,|u-v|)") -> Tensor:
    """The head's input: ``[u; v; |u - v|]`` (Figure 1), ``[u; v]`` or ``|u - v|`` (Table 6 ablation)."""
    if u.shape != v.shape:
        raise ValueError(f"u and v must have the same shape, got {tuple(u.shape)} and {tuple(v.shape)}")
    if how == "(u,v,|u-v|)":
        return torch.cat([u, v, (u - v).abs()], dim=-1)
    if how == "(u,v)":
        return torch.cat([u, v], dim=-1)
    if how == "|u-v|":
        return (u - v).abs()
    raise ValueError(f"concatenation must be one of {CONCATENATIONS}, got {how!r}")


def concat_width(dim: int, how: Concatenation) -> int:
    """Input width of the head for embeddings of size ``dim`` (3d for ours, Section 3.1 item 2)."""
    if how not in _WIDTH:
        raise ValueError(f"concatenation must be one of {CONCATENATIONS}, got {how!r}")
    return _WIDTH[how] * dim


class SiameseModel(nn.Module):
    """Figure 1: one shared encoder embeds both sentences (mean pooling), a linear head scores the pair.

    ``outputs=1`` is the regression framework (Section 3.1): the head ``Linear(3d, 1)`` predicts the mapped label
    directly. ``outputs=K`` is the classification alternative of Sentence-BERT (``Linear(3d, K)`` + softmax
    cross entropy; the "Cross Entropy" rows of Table 1), ``K`` times more head parameters. Either way the
    sentence embedding used for STS is the encoder's alone: evaluation is the cosine of ``u`` and ``v``
    (official code ``text2embedding``), the head only shapes training.
    """

    def __init__(self, encoder: models.SentenceEncoder, concatenation: Concatenation = "(u,v,|u-v|)", outputs: int = 1):
        super().__init__()
        if outputs < 1:
            raise ValueError(f"outputs must be >= 1 (1 = regression, K = classification), got {outputs}")
        self.encoder = encoder
        self.concatenation: Concatenation = concatenation
        self.outputs = outputs
        self.head = nn.Linear(concat_width(encoder.dim, concatenation), outputs).to(encoder.device)

    def score(self, u: Tensor, v: Tensor) -> Tensor:
        """Head output from embeddings: ``(N,)`` predictions for regression, ``(N, K)`` logits otherwise."""
        return head_output(self.head, u, v, self.concatenation)

    def forward(self, sentences1: Sequence[str], sentences2: Sequence[str]) -> Tensor:
        if len(sentences1) != len(sentences2):
            raise ValueError(f"{len(sentences1)} first sentences for {len(sentences2)} second sentences")
        both = self.encoder(list(sentences1) + list(sentences2))  # one padded batch through the shared encoder
        return self.score(both[: len(sentences1)], both[len(sentences1) :])


def head_output(head: nn.Module, u: Tensor, v: Tensor, concatenation: Concatenation) -> Tensor:
    out = head(concatenate(u, v, concatenation))
    return out.squeeze(-1) if out.shape[-1] == 1 else out


# ---- labels and clamping (Sections 4.1, 3.3) -------------------------------------------------------------------

# Section 4.1: ours orders the classes by similarity; Sentence-BERT's contradiction 0, entailment 1, neutral 2 does
# not (harmless for cross entropy, wrong for regression).
NLI_TARGETS: dict[str, int] = dict(stsdata.NLI_LABEL_TO_ID)
SENTENCE_BERT_LABELS: dict[str, int] = {"contradiction": 0, "entailment": 1, "neutral": 2}
NLI_RANGE = (0.0, 2.0)
STS_RANGE = (0.0, 5.0)

ClampMode = Literal["both", "lower", "none"]
CLAMP_MODES: tuple[ClampMode, ...] = ("both", "lower", "none")


def clamp_prediction(pred: Tensor, label_range: tuple[float, float], mode: ClampMode = "both") -> Tensor:
    """Section 3.3: a prediction past the outermost label is moved onto it before the loss (zero gradient there).

    ``"both"`` follows the paper's text (both ends of the label range); ``"lower"`` follows the official
    training scripts, which clamp only at the lower label 0 (``prediction * (prediction >= 0)``); ``"none"``
    leaves predictions alone. Via ``stsnb.losses.clamp_to_label_range``.
    """
    low, high = label_range
    if mode == "both":
        return losses.clamp_to_label_range(pred, low, high)
    if mode == "lower":
        return losses.clamp_to_label_range(pred, low, None)
    if mode == "none":
        return pred
    raise ValueError(f"clamp must be one of {CLAMP_MODES}, got {mode!r}")


def clamped_fraction(pred: Tensor, label_range: tuple[float, float], mode: ClampMode = "both") -> float:
    """Share of predictions the Section 3.3 clamp moves onto a boundary: they pass no gradient to the model.

    A fresh head whose outputs all lie past a boundary cannot start learning under that clamp.
    """
    pred = pred.detach()
    moved = clamp_prediction(pred, label_range, mode) != pred
    return moved.float().mean().item() if moved.numel() else 0.0


# ---- training pairs (Sections 4.1, 4.2, Appendix A) ------------------------------------------------------------


@dataclass(frozen=True)
class TrainingPair:
    """Two sentences and the regression target (NLI: 0/1/2; STS: 0-5) or class id (cross entropy)."""

    sent1: str
    sent2: str
    target: float


def nli_training_pairs(pairs: Sequence[stsdata.NLIPair], mapping: dict[str, int] = NLI_TARGETS) -> list[TrainingPair]:
    """NLI pairs with the Section 4.1 mapping contradiction/neutral/entailment -> 0/1/2 (premise = sentence 1)."""
    return [TrainingPair(p.premise, p.hypothesis, float(mapping[p.label])) for p in pairs]


def sts_training_pairs(pairs: Sequence[stsdata.STSPair]) -> list[TrainingPair]:
    """STS pairs on the 0-5 scale; SICK relatedness is rescaled by 5(l - 1)/4 (Section 4.2)."""
    return [
        TrainingPair(p.sent1, p.sent2, stsdata.rescale_sick(p.score) if p.dataset == "SICK" else p.score) for p in pairs
    ]


def positive_pairs(pairs: Sequence[TrainingPair], threshold: float = 4.0) -> list[TrainingPair]:
    """The pairs InfoNCE can use as positives: gold >= ``threshold`` (Section 4.2: 4.0 -> 1,543 of 5,398)."""
    return [p for p in pairs if p.target >= threshold]


@dataclass
class FilteredSTSTrain:
    """STS-B train + SICK-R train without the pairs that occur in a test set (Appendix A), SICK rescaled."""

    report: stsdata.DedupReport
    pairs: list[TrainingPair]

    @property
    def removed(self) -> int:
        return len(self.report.removed)

    def removed_by_dataset(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for pair in self.report.removed:
            counts[pair.dataset] = counts.get(pair.dataset, 0) + 1
        return counts


def filtered_sts_train(text: stsdata.TextVariant = "raw", data_dir=None) -> FilteredSTSTrain:
    """Section 4.2 + Appendix A: STS-B train and SICK-R train minus every pair found in a test set, either order.

    ``text="raw"`` compares the original untokenised files and reproduces the paper's counts (5,398 kept, 1,543
    scored >= 4.0). With ``"senteval"`` the STS-B train file and the STS12-16 test files went through different
    tokenisers, so many shared pairs no longer match and more survive (see the notebook).
    """
    train = list(stsdata.load_stsb("train", text, data_dir)) + list(stsdata.load_sick("train", text, data_dir))
    report = stsdata.dedup_against_tests(train, stsdata.seven_test_sets(text, data_dir))
    return FilteredSTSTrain(report, sts_training_pairs(report.kept))


NLI_SOURCES = ("snli-dev-test", "hub")


def load_nli(source: str = "snli-dev-test", data_dir=None) -> list[stsdata.NLIPair]:
    """The NLI training corpus of Section 4.1.

    - ``"snli-dev-test"``: SNLI dev + test from the data folder (19,666 pairs). A stand-in: the paper trains on
      SNLI + MultiNLI *train*, which this workplace does not have.
    - ``"hub"``: SNLI train (``stanfordnlp/snli``) + MultiNLI train (``nyu-mll/multi_nli``) from the Hugging Face
      Hub, the paper's corpus.
    - a path to a CSV with columns ``gold_label, sentence1, sentence2`` (the official ``nli_012.csv``: labels
      0/1/2 = contradiction/neutral/entailment).

    Raises ``RuntimeError`` naming what is missing; it never falls back to another corpus.
    """
    if source == "snli-dev-test":
        return list(stsdata.load_snli("dev", data_dir)) + list(stsdata.load_snli("test", data_dir))
    if source == "hub":
        try:
            snli = list(stsdata.load_snli("train", hub=True))
            mnli = _hub_multinli()
        except Exception as err:
            raise RuntimeError(
                "nli_source='hub' needs SNLI train (stanfordnlp/snli) and MultiNLI train (nyu-mll/multi_nli) from "
                f"the Hugging Face Hub, which could not be read here ({type(err).__name__}: {err}). Provide the "
                "official nli_012.csv and pass its path as nli_source, or use 'snli-dev-test' (a stand-in)."
            ) from err
        return snli + mnli
    path = Path(source).expanduser()
    if not path.is_file():
        raise RuntimeError(
            f"nli_source={source!r} is neither {NLI_SOURCES} nor an existing CSV file (gold_label,sentence1,sentence2)"
        )
    return _read_nli_csv(path)


def _hub_multinli() -> list[stsdata.NLIPair]:
    from datasets import load_dataset

    labels = ("entailment", "neutral", "contradiction")  # nyu-mll/multi_nli: 0/1/2, -1 = no gold label
    rows = load_dataset("nyu-mll/multi_nli", split="train")
    return [
        stsdata.NLIPair(r["premise"], r["hypothesis"], labels[int(r["label"])], f"multi_nli:{i}")
        for i, r in enumerate(rows)
        if int(r["label"]) >= 0
    ]


def _read_nli_csv(path: Path) -> list[stsdata.NLIPair]:
    by_id = {v: k for k, v in NLI_TARGETS.items()}
    pairs = []
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = {"gold_label", "sentence1", "sentence2"} - set(reader.fieldnames or ())
        if missing:
            raise RuntimeError(f"{path}: missing columns {sorted(missing)} (expected gold_label,sentence1,sentence2)")
        for row in reader:
            label = row["gold_label"].strip()
            name = by_id[int(label)] if label.isdigit() else label
            if name not in NLI_TARGETS:
                raise RuntimeError(f"{path}:{reader.line_num}: gold_label {label!r} is not 0/1/2 or an NLI label")
            pairs.append(stsdata.NLIPair(row["sentence1"], row["sentence2"], name, f"{path.name}:{reader.line_num}"))
    return pairs


def sample(items: Sequence, n: int | None, seed: int) -> list:
    """``n`` items drawn without replacement (all of them, in order, when ``n`` is None or too large)."""
    if n is None or n >= len(items):
        return list(items)
    return random.Random(seed).sample(list(items), n)


# ---- losses (Eq. 1-2, Tables 1-2) ------------------------------------------------------------------------------

LOSSES = ("cross_entropy", "l1", "translated_relu", "mse", "smooth_k2")  # the Table 1 rows, in its order

# Table 2: (k, x0) when fine-tuning on NLI.
TABLE2: dict[tuple[str, str], tuple[float, float]] = {
    ("BERT-base", "translated_relu"): (2.5, 0.25),
    ("BERT-base", "smooth_k2"): (2.0, 0.25),
    ("RoBERTa-base", "translated_relu"): (1.0, 0.25),
    ("RoBERTa-base", "smooth_k2"): (3.0, 0.25),
}
# Section 4.2, two stages with Smooth K2: (k, x0) from the official train-/tune-jina-nomic.py (REFERENCE_NOTES A2);
# the paper gives only the Table 5 sweep for these.
STAGE_SETTINGS: dict[str, dict[str, tuple[float, float]]] = {
    "Jina v2": {"stage1": (2.0, 0.2), "stage2": (3.5, 0.2)},
    "Nomic Embed v1": {"stage1": (2.0, 0.25), "stage2": (3.0, 0.2)},
}


# The official settings.py docstring: (lr, max_grad_norm) of the best NLI runs (REFERENCE_NOTES A2); the other
# Table 1 rows have no released recipe.
OFFICIAL_RECIPES: dict[tuple[str, str], tuple[float, float]] = {
    ("BERT-base", "smooth_k2"): (5e-5, 10.0),
    ("BERT-base", "translated_relu"): (2e-5, 10.0),
    ("RoBERTa-base", "smooth_k2"): (2e-5, 2.0),
    ("RoBERTa-base", "translated_relu"): (2e-5, 10.0),
}


@dataclass(frozen=True)
class LossSpec:
    """A Table 1 loss by name with its hyperparameters (``k``, ``x0`` matter for the two buffered losses)."""

    name: str
    k: float = 1.0
    x0: float = 0.0

    def __post_init__(self):
        if self.name not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {self.name!r}")

    @property
    def is_classification(self) -> bool:
        return self.name == "cross_entropy"

    def label(self) -> str:
        if self.name in ("translated_relu", "smooth_k2"):
            return f"{self.name} k={self.k:g} x0={self.x0:g}"
        return self.name

    def __call__(self, output: Tensor, target: Tensor) -> Tensor:
        """Loss of head outputs: logits ``(N, K)`` + class ids for cross entropy, else predictions ``(N,)``."""
        if self.name == "cross_entropy":
            return losses.softmax_cross_entropy(output, target.long())
        if self.name == "l1":
            return losses.l1_loss(output, target)
        if self.name == "mse":
            return losses.mse_loss(output, target)
        if self.name == "translated_relu":
            return losses.translated_relu(output, target, self.k, self.x0)
        return losses.smooth_k2(output, target, self.k, self.x0)


def table2_loss(name: str, row: str = "BERT-base") -> LossSpec:
    """The loss with Table 2's ``k`` and ``x0`` of a backbone row (``"BERT-base"`` or ``"RoBERTa-base"``)."""
    if name in ("translated_relu", "smooth_k2"):
        if (row, name) not in TABLE2:
            raise KeyError(f"Table 2 has no row ({row!r}, {name!r}); rows: {sorted(TABLE2)}")
        k, x0 = TABLE2[(row, name)]
        return LossSpec(name, k, x0)
    return LossSpec(name)


def head_outputs_for(loss: LossSpec, classes: int = 3) -> int:
    """1 output for regression, ``classes`` for the cross-entropy classifier."""
    return classes if loss.is_classification else 1


def seeded_model(
    encoder: models.SentenceEncoder,
    loss: LossSpec | None = None,
    concatenation: Concatenation = "(u,v,|u-v|)",
    seed: int = 0,
) -> SiameseModel:
    """A Siamese model whose new head is drawn after seeding torch with ``seed``: runs with the same seed and
    shapes start from the same head (one output, or ``head_outputs_for(loss)``)."""
    torch.manual_seed(seed)
    return SiameseModel(encoder, concatenation, head_outputs_for(loss) if loss is not None else 1)


def pair_loss(
    loss: LossSpec, clamp: ClampMode, label_range: tuple[float, float]
) -> Callable[[nn.Module, list[TrainingPair]], Tensor]:
    """``loss_fn(model, batch)`` for ``stsnb.train.fit``: Siamese forward, Section 3.3 clamp, then the loss."""

    def step(model: nn.Module, batch: list[TrainingPair]) -> Tensor:
        output = model([p.sent1 for p in batch], [p.sent2 for p in batch])
        target = torch.tensor([p.target for p in batch], device=output.device)
        if not loss.is_classification:
            output = clamp_prediction(output, label_range, clamp)
        return loss(output, target)

    return step


# ---- optimisation (official code: layer-wise LR decay, STS-B dev selection) ---------------------------------------

_LAYER = re.compile(r"\.layers?\.(\d+)\.")


def layerwise_param_groups(
    model: nn.Module, lr: float, decay: float = 0.95, weight_decay: float = 0.01, head_lr: float | None = None
) -> list[dict]:
    """AdamW groups with layer-wise LR decay as in the official ``train-*.py`` (REFERENCE_NOTES A2).

    The top transformer layer gets ``lr``, each layer below it ``decay`` times its upper neighbour's (BERT-base:
    layer 0 at ``lr * 0.95**11``). Parameters outside the numbered layers (embeddings, the head) stay at ``lr``,
    as in the official code, unless ``head_lr`` is given: then the parameters of ``model.head`` get it (a new,
    randomly initialised head that has tens of steps instead of the paper's thousands needs a larger step). No
    weight decay on biases and normalisation weights. ``decay=1`` is plain AdamW.
    """
    named = [(name, p) for name, p in model.named_parameters() if p.requires_grad]
    layers = [int(m.group(1)) for name, _ in named if (m := _LAYER.search(name))]
    top = max(layers, default=0)
    groups: dict[tuple[float, float], list[nn.Parameter]] = {}
    for name, parameter in named:
        match = _LAYER.search(name)
        group_lr = lr * decay ** (top - int(match.group(1))) if match else lr
        if head_lr is not None and name.startswith("head."):
            group_lr = head_lr
        no_decay = name.endswith("bias") or "norm" in name.lower()
        groups.setdefault((group_lr, 0.0 if no_decay else weight_decay), []).append(parameter)
    return [{"params": params, "lr": g_lr, "weight_decay": wd} for (g_lr, wd), params in groups.items()]


def dev_evaluator(dev_pairs: Sequence[stsdata.STSPair]) -> Callable[[nn.Module], float]:
    """STS-B dev Spearman of the *encoder's* cosine (Section 4.1 checkpoint selection; the head is not used)."""

    def score(model: nn.Module) -> float:
        encoder = model.encoder if isinstance(model, SiameseModel) else model
        return evaluate.dev_spearman(encoder, dev_pairs)

    return score


def train_siamese(
    model: SiameseModel,
    pairs: Sequence[TrainingPair],
    loss: LossSpec,
    config: TrainConfig,
    *,
    dev_pairs: Sequence[stsdata.STSPair] | None,
    clamp: ClampMode = "both",
    label_range: tuple[float, float] = NLI_RANGE,
    lr_decay: float = 0.95,
    head_lr: float | None = None,
) -> TrainResult:
    """Fine-tune encoder and head together (Section 4.1; stage 2 of Section 4.2) with ``stsnb.train.fit``.

    Every ``config.eval_every`` steps the STS-B dev Spearman of the cosine is computed and the best weights are
    restored at the end (Section 4.1: "checkpoints saved based on ... the STS-B development set").
    """
    if loss.is_classification != (model.outputs > 1):
        raise ValueError(f"{loss.name} needs a head with {'K > 1' if loss.is_classification else '1'} outputs")
    groups = layerwise_param_groups(model, config.lr, lr_decay, config.weight_decay, head_lr)
    return fit(
        model,
        pair_loss(loss, clamp, label_range),
        list(pairs),
        config,
        evaluate=dev_evaluator(dev_pairs) if dev_pairs is not None else None,
        param_groups=groups,
    )


def fine_tune_nli(
    backbone: str,
    pairs: Sequence[TrainingPair],
    loss: LossSpec,
    config: TrainConfig,
    *,
    dev_pairs: Sequence[stsdata.STSPair] | None,
    concatenation: Concatenation = "(u,v,|u-v|)",
    clamp: ClampMode = "both",
    max_length: int | None = None,
    pooling: models.Pooling = "mean",
    lr_decay: float = 0.95,
    head_lr: float | None = None,
    seed: int = 0,
) -> tuple[SiameseModel, TrainResult]:
    """One Table 1 / 5 / 6 run: a fresh backbone, a new head (seeded: the same initial head for every regression
    loss), NLI fine-tuning with STS-B dev selection (Section 4.1)."""
    model = seeded_model(load_backbone(backbone, max_length, pooling), loss, concatenation, seed)
    result = train_siamese(
        model,
        pairs,
        loss,
        config,
        dev_pairs=dev_pairs,
        clamp=clamp,
        label_range=NLI_RANGE,
        lr_decay=lr_decay,
        head_lr=head_lr,
    )
    return model, result


def train_head_frozen(
    model: SiameseModel,
    pairs: Sequence[TrainingPair],
    loss: LossSpec,
    config: TrainConfig,
    *,
    clamp: ClampMode = "both",
    label_range: tuple[float, float] = NLI_RANGE,
) -> TrainResult:
    """Stage 1 of Section 4.2 (Figure 3, left): the encoder frozen, only the head learns, on NLI.

    With the encoder frozen its embeddings are fixed, so every distinct sentence is embedded once
    (``stsnb.evaluate.embed_sentences``, cached by weight fingerprint) and the head trains on the cached vectors.
    One difference from the official script: it runs the frozen encoder in train mode (dropout on), we embed in
    eval mode. The cosine of the embeddings does not change in this stage, so there is nothing to select on:
    the last head is kept, as the official script keeps its last save.
    """
    table, _ = evaluate.embed_sentences(model.encoder, (s for p in pairs for s in (p.sent1, p.sent2)))
    device = model.head.weight.device
    u = torch.stack([table[p.sent1] for p in pairs]).to(device)
    v = torch.stack([table[p.sent2] for p in pairs]).to(device)
    target = torch.tensor([p.target for p in pairs], device=device)
    concatenation = model.concatenation

    def step(head: nn.Module, index: list[int]) -> Tensor:
        output = head_output(head, u[index], v[index], concatenation)
        if not loss.is_classification:
            output = clamp_prediction(output, label_range, clamp)
        return loss(output, target[index])

    return fit(model.head, step, list(range(len(pairs))), config)


def contrast_loss(temperature: float = 0.05) -> Callable[[nn.Module, list[TrainingPair]], Tensor]:
    """Eq. 3: InfoNCE of each sentence 1 against its sentence 2, the other pairs' sentences 2 as negatives."""

    def step(encoder: nn.Module, batch: list[TrainingPair]) -> Tensor:
        both = encoder([p.sent1 for p in batch] + [p.sent2 for p in batch])
        return losses.info_nce(both[: len(batch)], both[len(batch) :], temperature=temperature)

    return step


def train_contrast(
    encoder: models.SentenceEncoder,
    pairs: Sequence[TrainingPair],
    config: TrainConfig,
    *,
    dev_pairs: Sequence[stsdata.STSPair] | None,
    temperature: float = 0.05,
    lr_decay: float = 0.95,
) -> TrainResult:
    """The "+Contrast" baseline of Table 3: continue training the encoder with InfoNCE (Eq. 3).

    Its code is unreleased (REFERENCE_NOTES A2), so these are our choices: the positives are the pairs scored
    >= 4.0 (``positive_pairs``), negatives are the other positives of the batch (no hard negatives), temperature
    0.05 as SimCSE, one direction as Eq. 3 writes it, the same optimiser, schedule and STS-B dev selection as
    ours. A short last batch is dropped (InfoNCE needs at least two pairs).
    """
    if config.batch_size < 2:
        raise ValueError("InfoNCE needs batches of at least 2 pairs (the in-batch negatives)")
    config = replace(config, drop_last=True)
    return fit(
        encoder,
        contrast_loss(temperature),
        list(pairs),
        config,
        evaluate=dev_evaluator(dev_pairs) if dev_pairs is not None else None,
        param_groups=layerwise_param_groups(encoder, config.lr, lr_decay, config.weight_decay),
    )


# ---- evaluation helpers --------------------------------------------------------------------------------------


def sts_scores(
    encoder: models.SentenceEncoder, tasks: str = "all", max_pairs: int | None = None, seed: int = 0
) -> dict[str, float]:
    """Task -> Spearman x100 of the cosine, plus ``avg`` (SentEval "all" setting, ``stsnb.evaluate.sts``).

    ``max_pairs`` draws that many pairs per task (same draw for every model) for a cheaper, labelled-as-such
    estimate; STS12-16 are then pooled over their subsets as in the "all" setting.
    """
    if max_pairs is None:
        report = evaluate.sts(encoder, tasks)
        return {**report.spearman, "avg": report.avg}
    scores = {}
    for task in evaluate.parse_tasks(tasks):
        pairs = sample(evaluate.load_task(task), max_pairs, seed)
        similarities = evaluate.pair_similarities(encoder, pairs)
        scores[task] = evaluate.correlations(similarities, [p.score for p in pairs])[0]
    scores["avg"] = float(np.mean(list(scores.values())))
    return scores


@torch.inference_mode()
def predict(model: SiameseModel, pairs: Sequence[TrainingPair], batch_size: int = 128) -> Tensor:
    """Head outputs for pairs (no clamp): ``(N,)`` regression predictions or ``(N, K)`` logits."""
    table, _ = evaluate.embed_sentences(model.encoder, (s for p in pairs for s in (p.sent1, p.sent2)))
    device = model.head.weight.device
    outputs = []
    for start in range(0, len(pairs), batch_size):
        chunk = pairs[start : start + batch_size]
        u = torch.stack([table[p.sent1] for p in chunk]).to(device)
        v = torch.stack([table[p.sent2] for p in chunk]).to(device)
        outputs.append(model.score(u, v).cpu())
    return torch.cat(outputs)


def classify(output: Tensor, classes: int = 3) -> Tensor:
    """Section 3.1: regression predictions round to the nearest label (clipped to the range); logits -> argmax."""
    if output.dim() == 2:
        return output.argmax(dim=-1)
    return output.round().clamp(0, classes - 1).long()


# ---- backbones (the paper profile needs Hub weights) ---------------------------------------------------------

REMOTE_CODE_MODELS = ("jinaai/jina-embeddings-v2-base-en", "nomic-ai/nomic-embed-text-v1")


def load_backbone(name: str, max_length: int | None = None, pooling: models.Pooling = "mean") -> models.SentenceEncoder:
    """An encoder with mean pooling (Section 3.1) by name; Jina v2 / Nomic v1 need the Hub's remote code.

    Raises ``RuntimeError`` naming the weights when they cannot be loaded; nothing is substituted.
    """
    try:
        if name in REMOTE_CODE_MODELS:
            from transformers import AutoModel, AutoTokenizer

            backbone = AutoModel.from_pretrained(name, trust_remote_code=True).to(models.default_device())
            tokenizer = AutoTokenizer.from_pretrained(name)
            return models.SentenceEncoder(backbone, tokenizer, pooling, None, max_length or 256, name)
        return models.load_encoder(name, pooling=pooling, max_length=max_length)
    except (OSError, ValueError, models.ModelError) as err:
        raise RuntimeError(
            f"backbone {name!r} could not be loaded ({type(err).__name__}: {err}). The paper profile needs its "
            "weights from the Hugging Face Hub or the local cache; packaged names are "
            f"{sorted(models.KNOWN_MODELS)}. Nothing is substituted."
        ) from err


def require_backbones(names: Sequence[str]) -> None:
    """Fail before any training when a backbone's weights are out of reach (a missing Hub model, no network).

    Packaged names and local folders pass; a Hub id passes when its config can be read (from the local Hugging
    Face cache or the network). The error lists every missing name.
    """
    from transformers import AutoConfig

    missing = []
    for name in names:
        resolved = models.resolve(name)
        if resolved.source != "hub":
            continue
        try:
            AutoConfig.from_pretrained(resolved.path, trust_remote_code=name in REMOTE_CODE_MODELS)
        except Exception as err:  # OSError, connection errors, missing remote code: all mean "not available"
            missing.append(f"{name} ({type(err).__name__}: {str(err).splitlines()[0][:160]})")
    if missing:
        raise RuntimeError(
            "these backbones are not available here, and the notebook does not substitute others: "
            + "; ".join(missing)
            + ". Run where the Hugging Face Hub (or a filled HF cache) is reachable, or choose packaged models "
            f"{sorted(models.KNOWN_MODELS)}."
        )
