"""The three baselines of HiCL Table 1, each usable with and without HiCL: SimCSE, ESimCSE, SNCSE.

- SimCSE (Gao et al. 2021): the positive is the same input under a second dropout mask.
- ESimCSE (Wu et al. 2022): the positive repeats a few of the input's tokens (``repeat_tokens``), and a queue of
  sentence embeddings from a momentum-updated copy of the encoder adds negatives (``MomentumQueue``). Following
  caskcsg/sentemb ``ESimCSE/train.py`` (``dup_type="bpe"``): ``dup_len`` is drawn uniformly from
  ``range(min(10, max(2, int(dup_rate * n))))`` (the ESimCSE paper: ``[0, max(2, int(dup_rate * N))]``) and that
  many distinct positions are repeated once; its ``trainers.py`` encodes the anchors with the momentum encoder in
  eval mode (no dropout) after the loss and keeps the newest ``queue_size``; the momentum update
  ``m <- lambda m + (1 - lambda) theta`` runs at every forward. Defaults: dup_rate 0.32, lambda 0.995,
  queue 2.5 x batch (ESimCSE's settings for BERT-base).
- SNCSE (Wang et al. 2022): a negated copy of each sentence is a soft negative (``negate``), kept between
  ``alpha`` and ``beta`` less similar than the positive by the bidirectional margin loss; every view is wrapped in a
  prompt and represented by the [MASK] token. Sense-GVT/SNCSE ``train_SNCSE.py`` uses two prompts: the anchor
  ``This sentence : "[X]" means [MASK] .`` and, for the positive and the negation, ``This sentence of "[X]" means
  [MASK] .`` (HiCL Section 2 paraphrases it as "The sentence of x_i means [MASK]").

With HiCL (Section 3.1, 3.2), every view is sliced into segments of L tokens the same way: the prompt goes around
each segment ("we add the prompt to each segment instead of the entire sequence. We also apply the same method to
the negated sentences"), and ESimCSE's repetition is applied per segment, so the positive view of segment
``(i, j)`` is that segment repeated (one decision where the paper is silent: its Section 3.2 writes the segment
positive as a second dropout pass, which is the SimCSE and SNCSE case; repeating inside each segment keeps the two
views' segments aligned, which the local loss needs, and is the whole-sentence repetition when a sequence is one
segment).

**A decoder has no [MASK].** For a causal backbone (SmolLM2) the prompt ends right after "means" and the
embedding is that last token's hidden state, the token whose next-token prediction would be the [MASK]
(PromptEOL-style last-token pooling; causal attention lets it see the whole prompt). For a masked LM the prompt
keeps ``[MASK]`` where the tokenizer has a mask token; a backbone with neither is refused.
"""

from __future__ import annotations

import copy
import random
import re
from dataclasses import dataclass
from typing import Literal

import torch
from torch import nn

Method = Literal["simcse", "esimcse", "sncse"]
METHODS: tuple[str, ...] = ("simcse", "esimcse", "sncse")

# Sense-GVT/SNCSE train_SNCSE.py (the [MASK] / <mask> slot at the end); HiCL Section 2's paraphrase
SNCSE_ANCHOR_PROMPT = 'This sentence : "[X]" means [MASK] .'
SNCSE_POSITIVE_PROMPT = 'This sentence of "[X]" means [MASK] .'
HICL_PAPER_PROMPT = 'The sentence of "[X]" means [MASK] .'


# ---- ESimCSE: word repetition ----------------------------------------------------------------------------------


def repetition_count(n: int, dup_rate: float, rng: random.Random) -> int:
    """How many of ``n`` units to repeat: uniform in ``range(min(10, n, max(2, int(dup_rate * n))))``."""
    if not 0.0 <= dup_rate <= 1.0:
        raise ValueError(f"dup_rate must be in [0, 1], got {dup_rate}")
    if n < 1:
        return 0
    return rng.randrange(min(10, n, max(2, int(dup_rate * n))))


def repeat_tokens(units: list[int], dup_rate: float, rng: random.Random) -> tuple[list[int], list[int]]:
    """ESimCSE's word repetition: ``(repeated units, positions repeated)``; each chosen unit appears twice in place."""
    count = repetition_count(len(units), dup_rate, rng)
    positions = sorted(rng.sample(range(len(units)), count)) if count else []
    chosen = set(positions)
    out: list[int] = []
    for index, unit in enumerate(units):
        out.append(unit)
        if index in chosen:
            out.append(unit)
    return out, positions


class MomentumQueue(nn.Module):
    """ESimCSE's momentum encoder and FIFO queue of its sentence embeddings (the newest ``size`` rows kept).

    The momentum backbone is a frozen copy, updated by ``update(backbone)`` as ``m <- lambda m + (1 - lambda)
    theta`` and always run in eval mode (no dropout), as in caskcsg/sentemb's ``trainers.py``.
    """

    def __init__(self, backbone: nn.Module, size: int, momentum: float = 0.995):
        super().__init__()
        if size < 0:
            raise ValueError(f"queue size must be >= 0, got {size}")
        if not 0.0 <= momentum <= 1.0:
            raise ValueError(f"momentum must be in [0, 1], got {momentum}")
        self.backbone = copy.deepcopy(backbone)
        for parameter in self.backbone.parameters():
            parameter.requires_grad_(False)
        self.size = size
        self.momentum = momentum
        self.register_buffer("queue", torch.zeros(0, int(backbone.config.hidden_size)), persistent=False)

    def train(self, mode: bool = True) -> MomentumQueue:
        super().train(mode)
        self.backbone.eval()  # never dropout
        return self

    @torch.no_grad()
    def update(self, backbone: nn.Module) -> None:
        for mine, theirs in zip(self.backbone.parameters(), backbone.parameters(), strict=True):
            mine.mul_(self.momentum).add_(theirs.detach(), alpha=1.0 - self.momentum)

    @torch.no_grad()
    def push(self, embeddings: torch.Tensor) -> None:
        """Append ``embeddings`` (detached); keep the newest ``size`` rows."""
        if self.size == 0:
            return
        self.queue = torch.cat([self.queue.to(embeddings), embeddings.detach()], dim=0)[-self.size :]


# ---- SNCSE: negation ---------------------------------------------------------------------------------------------

# SNCSE's special_words plus the auxiliaries its dependency parse marks "aux" / "auxpass" (have, do, be)
AUXILIARIES = frozenset(
    {"am", "is", "was", "are", "were", "can", "could", "will", "would", "shall", "should", "may", "must", "might"}
    | {"has", "have", "had", "do", "does", "did", "be", "been", "being"}
)
NegationRule = Literal["remove not", "after auxiliary", "prefix Not"]


def negate(sentence: str) -> tuple[str, NegationRule]:
    """SNCSE's soft negative, rule-based (Sense-GVT/SNCSE ``generate_soft_negative_samples.py``), and which rule fired.

    1. a token ``not`` is present: delete the first one (SNCSE's first rule);
    2. else the first auxiliary / modal / copula (``AUXILIARIES``) gets ``not`` after it (SNCSE inserts ``not``
       after the first token its spaCy parse labels aux/auxpass, or after a ROOT that is one of its special words);
    3. else ``Not`` goes in front (SNCSE's fallback).

    Not reproduced: SNCSE's "do/does/did not + lemma" for a main verb in the present or past (it needs spaCy's
    tagger and lemmatiser, not installable here); such sentences fall to rule 3, which the notebook counts.
    Tokens are split on spaces (the wiki sentences are space-separated) and rejoined with single spaces.
    """
    tokens = sentence.split()
    if not tokens:
        raise ValueError("negate needs a non-empty sentence")
    lowered = [t.lower() for t in tokens]
    if "not" in lowered:
        del tokens[lowered.index("not")]
        return " ".join(tokens) if tokens else "Not", "remove not"
    for index, word in enumerate(lowered):
        if re.sub(r"[^a-z]", "", word) == word and word in AUXILIARIES:
            return " ".join(tokens[: index + 1] + ["not"] + tokens[index + 1 :]), "after auxiliary"
    return "Not " + " ".join(tokens), "prefix Not"


def prompt_for_backbone(prompt: str, tokenizer, causal: bool) -> str:
    """SNCSE's prompt adapted to a backbone: ``[X]`` stays the sentence slot; ``[MASK]`` becomes the tokenizer's
    mask token, or for a decoder the prompt is cut right after the word before ``[MASK]`` (embedding = last token).
    """
    if prompt.count("[X]") != 1 or prompt.count("[MASK]") != 1:
        raise ValueError(f"an SNCSE prompt needs one [X] and one [MASK], got {prompt!r}")
    if causal:
        return prompt.split("[MASK]")[0].rstrip()
    mask = getattr(tokenizer, "mask_token", None)
    if mask is None:
        raise ValueError(f"{type(tokenizer).__name__} has no mask token and the backbone is not causal")
    return prompt.replace("[MASK]", mask)


@dataclass(frozen=True)
class MethodSettings:
    """Per-baseline knobs (ESimCSE's repetition and queue; SNCSE's prompts), with the papers' defaults."""

    dup_rate: float = 0.32  # ESimCSE
    momentum: float = 0.995  # ESimCSE lambda
    queue_size: int = 80  # ESimCSE: 2.5 x batch (ESimCSE Section 4); 80 for batch 32
    anchor_prompt: str = SNCSE_ANCHOR_PROMPT  # SNCSE
    positive_prompt: str = SNCSE_POSITIVE_PROMPT  # SNCSE (also the negation's)
