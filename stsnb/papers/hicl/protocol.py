"""Notebook 30's training protocol in one object: what every Table 1 run and ablation shares, and the switches where
the paper's protocol and a like-for-like comparison part ways.

**Truncation** (Appendix A.1, Section 5.4). The baselines are trained as SimCSE trains them, each sentence cut at 32
tokens ("The original SimCSE, which adopts a truncation size of 32"; SimCSE's ``run_unsup_example.sh``:
``--max_seq_length 32``, special tokens included), while +HiCL slices the whole sentence into segments of L tokens
and so also learns from "the truncated portions of the training corpus - the part exceeding the length limitations
of baselines" (Section 5.4). ``truncation="paper"`` does that: the baseline keeps ``baseline_max_length`` tokens
(the tokenizer's special tokens counted, as SimCSE's ``max_seq_length``), +HiCL ``max_length`` sentence tokens.
``truncation="alike"``: both arms see the same sentence cut at ``max_length`` (Table 12's "identical information"
setting, and this notebook's earlier protocol), so the difference is the objective alone.

**Learning rates** (Table 13, Appendix A.4): one per baseline and backbone (BERT-base: SimCSE 5e-5, ESimCSE 3e-5,
SNCSE 1e-5), listed as "optimized hyperparameters of HiCL". The baselines' own re-tuned rates are not printed
(Appendix A.3 says they were re-tuned), so both arms of a pair use the method's rate here (``method_lrs``; footnote 4
adjusts "the learning rate ... for both baseline and HiCL method"), which also keeps the pair's only difference
HiCL. **SimCSE's MLP head** (``simcse_mlp_head``): SimCSE's unsupervised runs (``--pooler_type cls
--mlp_only_train``) put a dense + tanh layer over [CLS] in training and evaluate without it (``MLPHead``); its code
has the head only with [CLS] pooling.

``TrainingProtocol.train`` runs one arm (``run_training``) with the notebook's settings and named overrides (the
ablations of Tables 3, 4, 6, 7, Figure 2 and Appendix A.8).
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from ...training.config import TrainConfig
from .objectives import ObjectiveSettings
from .records import RunOutcome
from .results import paired_difference
from .segments import slice_tokens, special_token_frame
from .training import BackboneSettings, HiclSettings, run_training
from .variants import METHODS, MethodSettings

Truncation = Literal["paper", "alike"]
TRUNCATIONS: tuple[str, ...] = ("paper", "alike")
SIMCSE_MAX_LENGTH = 32  # SimCSE run_unsup_example.sh --max_seq_length 32; HiCL Appendix A.1 "a truncation size of 32"
OVERRIDES = ("hicl", "alpha", "same_sequence", "negative_weighting", "slice_length", "segment_pooling")


def check_truncation(truncation: str) -> None:
    if truncation not in TRUNCATIONS:
        raise ValueError(f"truncation must be one of {TRUNCATIONS}, got {truncation!r}")


def special_token_count(tokenizer, special_tokens: bool = True) -> int:
    """How many special tokens frame one input ([CLS] + [SEP] = 2 on BERT, 0 on SmolLM2); 0 without them."""
    return sum(len(part) for part in special_token_frame(tokenizer)) if special_tokens else 0


def truncation_summary(
    tokenizer, sentences: Sequence[str], baseline_max_length: int, max_length: int, special_tokens: int = 0
) -> dict:
    """What the baselines' truncation leaves out of ``sentences`` (Section 5.4's "truncated portions"): how many
    sentences have more than ``baseline_max_length - special_tokens`` sentence tokens, and how many of the tokens
    +HiCL sees (each sentence up to ``max_length``) the baseline does not."""
    kept = baseline_max_length - special_tokens
    if kept < 1:
        raise ValueError(f"baseline_max_length {baseline_max_length} leaves no token after {special_tokens} special")
    lengths = [min(len(ids), max_length) for ids in tokenizer(list(sentences), add_special_tokens=False)["input_ids"]]
    cut = [n - kept for n in lengths if n > kept]
    return {
        "sentences": len(lengths),
        "longer": len(cut),
        "baseline_sentence_tokens": kept,
        "tokens": sum(lengths),
        "tokens_only_hicl_sees": sum(cut),
    }


def training_sample(
    sentences: Sequence[str], n: int | None, seed: int, token_counts: Sequence[int], min_tokens: int, long_share=None
) -> list[str]:
    """``n`` training sentences drawn with ``seed`` (``stsnb.data.sample``'s draw when ``long_share`` is None);
    with ``long_share`` in [0, 1], that share of them is drawn from the sentences of more than ``min_tokens`` tokens
    (``token_counts[i]`` for ``sentences[i]``) and the rest from the others: a sample enriched in what the baselines'
    truncation cuts (a protocol difference from wiki1m's length distribution, Table 2)."""
    from ... import data as data

    if long_share is None:
        return data.sample(sentences, n, seed)
    if not 0.0 <= float(long_share) <= 1.0:
        raise ValueError(f"long_share must be in [0, 1] or None, got {long_share!r}")
    if len(token_counts) != len(sentences):
        raise ValueError(f"{len(token_counts)} token counts for {len(sentences)} sentences")
    n = len(sentences) if n is None else n
    long = [s for s, c in zip(sentences, token_counts, strict=True) if c > min_tokens]
    short = [s for s, c in zip(sentences, token_counts, strict=True) if c <= min_tokens]
    n_long = round(n * float(long_share))
    if n_long > len(long) or n - n_long > len(short):
        raise ValueError(
            f"{n} sentences with {n_long} longer than {min_tokens} tokens need {n_long} long and {n - n_long} short "
            f"ones; the corpus has {len(long)} and {len(short)}"
        )
    rng = random.Random(seed)
    chosen = rng.sample(long, n_long) + rng.sample(short, n - n_long)
    rng.shuffle(chosen)
    return chosen


def full_segment_sentences(tokenizer, sentences: Sequence[str], max_length: int, slice_length: int) -> list[str]:
    """Table 6's corpus ("+HiCL full-", Section 5.4): every sentence (first ``max_length`` tokens) cut into its
    segments of ``slice_length`` tokens, each stored as an independent sentence (decoded back to text)."""
    ids = tokenizer(list(sentences), add_special_tokens=False)["input_ids"]
    return [tokenizer.decode(piece) for tokens in ids for piece in slice_tokens(tokens[:max_length], slice_length)]


@dataclass(frozen=True)
class TrainingProtocol:
    """Everything the Table 1 runs of notebook 30 share (its parameters), and ``train`` to run one arm.

    ``config`` holds the optimisation (its ``seed`` is replaced by each run's); ``alphas`` the local-loss weight per
    baseline (Table 13); the truncation as in the module docstring.
    """

    backbone: BackboneSettings
    config: TrainConfig
    alphas: Mapping[str, float]
    method_settings: MethodSettings = field(default_factory=MethodSettings)
    temperature: float = 0.05
    same_sequence: str = "neither"
    negative_weighting: str = "summation"
    bml_weight: float = 1e-3
    slice_length: int = 32
    segment_pooling: str = "weighted"
    segment_special_tokens: bool = True
    truncation: Truncation = "paper"
    max_length: int = 128
    baseline_max_length: int = SIMCSE_MAX_LENGTH
    eval_tasks: str | Sequence[str] = "all"
    eval_max_pairs: int | None = None
    method_lrs: Mapping[str, float] | None = None  # Table 13: one learning rate per baseline (None: config.lr)
    simcse_mlp_head: bool = False  # SimCSE's MLP over the pooled representation, in training only

    def __post_init__(self) -> None:
        check_truncation(self.truncation)
        for name, values in (("alphas", self.alphas), ("method_lrs", self.method_lrs or {})):
            unknown = sorted(set(values) - set(METHODS))
            if unknown:
                raise ValueError(f"{name} for unknown method(s) {unknown}; methods: {METHODS}")
        bad = {m: v for m, v in (self.method_lrs or {}).items() if not float(v) > 0}
        if bad:
            raise ValueError(f"method_lrs must be positive, got {bad}")
        if self.baseline_max_length < 1 or self.max_length < 1:
            raise ValueError(f"max lengths must be >= 1, got {self.baseline_max_length} and {self.max_length}")

    def truncated_at(self, hicl_on: bool) -> tuple[int, bool]:
        """``(length, special tokens counted)`` a training sentence is cut at: the baseline's 32 input tokens under
        ``truncation="paper"``, else ``max_length`` sentence tokens (what +HiCL always slices)."""
        if self.truncation == "paper" and not hicl_on:
            return self.baseline_max_length, True
        return self.max_length, False

    def kept_tokens(self, hicl_on: bool, special_tokens: int) -> int:
        """Sentence tokens an arm keeps (``truncated_at`` with the tokenizer's ``special_tokens`` taken off the
        baseline's SimCSE-style cut when special tokens frame each input)."""
        length, counted = self.truncated_at(hicl_on)
        return length - (special_tokens if counted and self.segment_special_tokens else 0)

    def settings(self, method: str, **override) -> tuple[HiclSettings, ObjectiveSettings]:
        """The segmentation and objective of one run; ``override`` changes named settings (``OVERRIDES``)."""
        unknown = sorted(set(override) - set(OVERRIDES))
        if unknown:
            raise ValueError(f"unknown override(s) {unknown}; known: {OVERRIDES}")
        if "alpha" not in override and method not in self.alphas:
            raise ValueError(f"no alpha for {method!r} in alphas {dict(self.alphas)}")
        objective = ObjectiveSettings(
            alpha=override["alpha"] if "alpha" in override else self.alphas[method],
            temperature=self.temperature,
            same_sequence=override.get("same_sequence", self.same_sequence),
            negative_weighting=override.get("negative_weighting", self.negative_weighting),
            bml_weight=self.bml_weight,
        )
        segmentation = HiclSettings(
            bool(override.get("hicl", True)),
            override.get("slice_length", self.slice_length),
            override.get("segment_pooling", self.segment_pooling),
            self.segment_special_tokens,
        )
        return segmentation, objective

    def lr(self, method: str) -> float:
        """The learning rate of ``method``'s runs, both arms (Table 13's, from ``method_lrs``; else ``config.lr``)."""
        return float((self.method_lrs or {}).get(method, self.config.lr))

    def train_config(self, method: str, seed: int) -> TrainConfig:
        """The optimisation of one run: ``config`` with the run's seed and the method's learning rate."""
        return replace(self.config, seed=seed, lr=self.lr(method))

    def train(
        self,
        method: str,
        seed: int,
        sentences: Sequence[str],
        dev: Sequence,
        *,
        max_length: int | None = None,
        **override,
    ) -> RunOutcome:
        """Train one arm (``hicl=False``: the baseline) from a fresh backbone and score it (``run_training``).
        ``max_length`` replaces the protocol's cut (sentence tokens, special tokens not counted)."""
        segmentation, objective = self.settings(method, **override)
        length, counted = self.truncated_at(segmentation.enabled)
        if max_length is not None:
            length, counted = max_length, False
        return run_training(
            self.backbone,
            sentences,
            method,
            segmentation,
            objective,
            self.train_config(method, seed),
            dev,
            self.method_settings,
            length,
            self.eval_tasks,
            self.eval_max_pairs,
            count_special_tokens=counted,
            mlp_head=self.simcse_mlp_head and method == "simcse",
        )


def run_ablation(
    protocol: TrainingProtocol,
    method: str,
    seed: int,
    change: Mapping,
    sentences: Sequence[str],
    dev: Sequence,
    tokenizer,
    reference: RunOutcome,
    n_resamples: int = 1000,
) -> dict:
    """One ablation of ``method`` +HiCL (Tables 3, 4, 7, Figure 2, Appendix A.8: ``change`` holds ``OVERRIDES``;
    Table 6: ``{"full_segments": True}`` trains the baseline on every segment as an independent sentence, kept whole)
    and its paired difference to ``reference``, the Section 3 run of ``method`` +HiCL with the same seed."""
    change = dict(change)
    started = time.perf_counter()
    if change.pop("full_segments", False):
        length = change.get("slice_length", protocol.slice_length)
        segments = full_segment_sentences(tokenizer, sentences, protocol.max_length, length)
        # kept whole (re-tokenising a decoded segment can add a token): the baseline's 32-token cut does not apply
        outcome = protocol.train(
            method, seed, segments, dev, max_length=protocol.max_length, **{**change, "hicl": False}
        )
        name = f"full segments ({len(segments)} sentences)"
    else:
        outcome = protocol.train(method, seed, sentences, dev, **change)
        name = ", ".join(f"{k}={v}" for k, v in change.items())
    gap = paired_difference(outcome.predictions, reference.predictions, n_resamples, seed)
    return {
        "ablation": name,
        "avg": outcome.scores["avg"],
        "minus_reference": gap.difference,
        "low": gap.low,
        "high": gap.high,
        "best_dev": outcome.result.best_score,
        "seconds": time.perf_counter() - started,
    }


def truncation_sentence(truncation: str, summary: Mapping, baseline_max_length: int, max_length: int) -> str:
    """What the two arms of each pair saw, in one sentence for the notebook's overview (``summary``:
    ``truncation_summary`` of the training sentences)."""
    check_truncation(truncation)
    if truncation == "alike":
        return (
            f"both arms saw each training sentence cut at {max_length} tokens: the +HiCL difference is the objective "
            "alone (Table 12's identical information), not the paper's protocol"
        )
    share = 100 * summary["tokens_only_hicl_sees"] / max(summary["tokens"], 1)
    return (
        f"the baselines saw each training sentence cut at {baseline_max_length} tokens (SimCSE's), +HiCL up to "
        f"{max_length}: {summary['longer']} of {summary['sentences']} sentences were cut, {share:.1f}% of the tokens "
        "only +HiCL saw (Appendix A.1, Section 5.4)"
    )
