"""A look at the data for notebook 40: real C-STS quadruples with a model's cosine under each condition (Section 3.1,
Eq. 2), the ones a trained model gets most wrong, and how much its cosines depend on the condition at all.

A quadruple is one sentence pair under its higher (``pos``) and lower (``neg``) condition; its labels are scaled to
[0, 1] by ``(l - 1) / 4`` (the cosine's scale, :func:`~stsnb.papers.ccl.quadruples.scale_label`). The model is judged
on each row (``|cos - l|``) and on the pair (does the higher condition get the higher cosine?).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

from .encoders import BiEncoder, ConditionalEncoder
from .quadruples import Quadruple, rows_of, scale_label


@dataclass(frozen=True)
class QuadrupleLook:
    """One quadruple with a model's cosine under each of its two conditions."""

    quadruple: Quadruple
    cos_pos: float
    cos_neg: float

    @property
    def label_pos(self) -> float:
        return scale_label(self.quadruple.label_high)

    @property
    def label_neg(self) -> float:
        return scale_label(self.quadruple.label_low)

    @property
    def error(self) -> float:
        """The larger of the two rows' ``|cos - l|`` (labels scaled to [0, 1])."""
        return max(abs(self.cos_pos - self.label_pos), abs(self.cos_neg - self.label_neg))

    @property
    def wrong_order(self) -> bool:
        """The labels rank the two conditions and the cosines rank them the other way (ties in the labels: never)."""
        return self.label_pos > self.label_neg and self.cos_pos < self.cos_neg


def spread_examples(quadruples: Sequence[Quadruple], k: int = 5, seed: int = 0) -> list[Quadruple]:
    """``k`` quadruples for a first look: one per label gap ``l_pos - l_neg`` from the largest down (4, 3, ... 0 on
    the 1-5 scale), drawn with ``seed`` among those with two different conditions, then random ones if gaps run out."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    candidates = [q for q in quadruples if q.condition_high != q.condition_low]
    if len(candidates) < k:
        raise ValueError(f"{len(candidates)} quadruples with two conditions, fewer than k = {k}")
    rng = random.Random(seed)
    by_gap: dict[float, list[Quadruple]] = {}
    for q in candidates:
        by_gap.setdefault(q.label_high - q.label_low, []).append(q)
    chosen = [rng.choice(by_gap[gap]) for gap in sorted(by_gap, reverse=True)][:k]
    rest = [q for q in candidates if q not in chosen]
    return chosen + rng.sample(rest, k - len(chosen))


def looks(quadruples: Sequence[Quadruple], predictions: Mapping[str, float]) -> list[QuadrupleLook]:
    """Each quadruple with the per-row predictions of a run (``Evaluation.by_source()``: row source -> cosine)."""
    return [QuadrupleLook(q, float(predictions[q.source_high]), float(predictions[q.source_low])) for q in quadruples]


def looks_of_model(model: ConditionalEncoder, quadruples: Sequence[Quadruple]) -> list[QuadrupleLook]:
    """Each quadruple with ``model``'s cosines (Eq. 2, eval mode), computed here."""
    cosines = model.similarities(rows_of(quadruples))  # higher row, lower row, per quadruple
    return [QuadrupleLook(q, float(cosines[2 * i]), float(cosines[2 * i + 1])) for i, q in enumerate(quadruples)]


def most_wrong(items: Sequence[QuadrupleLook], k: int = 5) -> list[QuadrupleLook]:
    """The ``k`` quadruples with the largest row error ``max |cos - l|``, largest first."""
    return sorted(items, key=lambda item: -item.error)[:k]


def wrong_order(items: Sequence[QuadrupleLook], k: int = 5) -> list[QuadrupleLook]:
    """Up to ``k`` quadruples whose cosines rank the two conditions against the labels: the largest label gap first,
    then the largest reversed cosine gap."""
    reversed_ = [item for item in items if item.wrong_order]
    return sorted(reversed_, key=lambda i: (-(i.label_pos - i.label_neg), i.cos_pos - i.cos_neg))[:k]


def _cell(text: str) -> str:
    return text.replace("|", "/").replace("\n", " ")


def looks_markdown(items: Sequence[QuadrupleLook], cosine: str = "cos") -> str:
    """A Markdown table: the sentences, each condition with its gold label (1-5, scaled) and the model's cosine."""
    lines = [
        f"| sentence 1 | sentence 2 | higher condition | gold | {cosine} | lower condition | gold | {cosine} |",
        "|---|---|---|---:|---:|---|---:|---:|",
    ]
    for item in items:
        q = item.quadruple
        flag = " **(order wrong)**" if item.wrong_order else ""
        lines.append(
            f"| {_cell(q.sent1)} | {_cell(q.sent2)} | {_cell(q.condition_high)} | {q.label_high:g} "
            f"({item.label_pos:.2f}) | {item.cos_pos:.2f} | {_cell(q.condition_low)}{flag} | {q.label_low:g} "
            f"({item.label_neg:.2f}) | {item.cos_neg:.2f} |"
        )
    return "\n".join(lines)


@dataclass(frozen=True)
class ConditionSpread:
    """How much a model's cosine depends on the condition, over the quadruples: the mean ``|cos_pos - cos_neg|``
    beside the mean label gap, the share of quadruples with unequal labels ranked right, and the Spearman
    correlation (x100) between the cosine gap and the label gap (0: the condition's effect is unrelated to the
    labels)."""

    name: str
    quadruples: int
    mean_cosine_gap: float
    mean_label_gap: float
    right_order: float
    gap_spearman: float
    ranked: int = 0  # quadruples whose labels differ: the ones ``right_order`` is a share of
    tied: int = 0  # of those, the ones whose two cosines are equal (counted as not right; e.g. one condition twice)


def condition_spread(name: str, items: Sequence[QuadrupleLook]) -> ConditionSpread:
    if len(items) < 3:
        raise ValueError(f"condition_spread needs at least 3 quadruples, got {len(items)}")
    cos_gap = np.array([i.cos_pos - i.cos_neg for i in items])
    label_gap = np.array([i.label_pos - i.label_neg for i in items])
    ranked = label_gap > 0
    right = float((cos_gap[ranked] > 0).mean()) if ranked.any() else float("nan")
    rho = scipy_stats.spearmanr(cos_gap, label_gap).statistic if np.ptp(cos_gap) and np.ptp(label_gap) else 0.0
    tied = int((cos_gap[ranked] == 0).sum())
    return ConditionSpread(
        name,
        len(items),
        float(np.abs(cos_gap).mean()),
        float(label_gap.mean()),
        right,
        100 * float(rho),
        int(ranked.sum()),
        tied,
    )


def spread_table(spreads: Sequence[ConditionSpread]) -> str:
    """A plain-text table of :class:`ConditionSpread` rows ("tied": of the quadruples whose labels differ, those
    with two equal cosines, counted as not right)."""
    header = (
        f"{'model':<28}{'mean |cos+ - cos-|':>20}{'mean l+ - l-':>14}{'order right':>13}{'tied':>6}"
        f"{'Spearman(gaps)':>16}"
    )
    lines = [header, "-" * len(header)]
    lines += [
        f"{s.name:<28}{s.mean_cosine_gap:>20.3f}{s.mean_label_gap:>14.3f}{s.right_order:>13.1%}{s.tied:>6d}"
        f"{s.gap_spearman:>16.1f}"
        for s in spreads
    ]
    return "\n".join(lines)


@dataclass(frozen=True)
class LengthOrder:
    """The share of quadruples (labels differing) a model ranks the right way round, split by whether the higher
    condition has fewer, as many or more tokens than the lower one."""

    group: str
    quadruples: int
    right_order: float


LENGTH_GROUPS = ("higher condition shorter", "same length", "higher condition longer")


def condition_tokens(model: BiEncoder, conditions: Sequence[str]) -> dict[str, int]:
    """Each distinct condition's number of tokens (no special tokens) under ``model``'s tokenizer."""
    distinct = sorted(set(conditions))
    if not distinct:
        raise ValueError("no condition to count")
    ids = model.encoder.tokenizer(distinct, add_special_tokens=False)["input_ids"]
    return {c: len(i) for c, i in zip(distinct, ids, strict=True)}


def order_by_length(items: Sequence[QuadrupleLook], tokens: Mapping[str, int]) -> list[LengthOrder]:
    """:class:`LengthOrder` per group of ``LENGTH_GROUPS`` (a group without quadruples is left out): with mean
    pooling both inputs of a row carry the same condition, so its tokens are shared by both sides of the cosine."""
    groups: dict[str, list[bool]] = {g: [] for g in LENGTH_GROUPS}
    for item in items:
        if item.label_pos <= item.label_neg:
            continue
        q = item.quadruple
        difference = tokens[q.condition_high] - tokens[q.condition_low]
        group = LENGTH_GROUPS[0] if difference < 0 else LENGTH_GROUPS[2] if difference > 0 else LENGTH_GROUPS[1]
        groups[group].append(item.cos_pos > item.cos_neg)
    return [LengthOrder(g, len(v), float(np.mean(v))) for g, v in groups.items() if v]


def _below_chance(untrained: ConditionSpread, by_length: Sequence[LengthOrder] | None) -> str:
    """Markdown on an untrained model that ranks fewer than half the pairs right: the ties, then the length split."""
    text = (
        f"**Below chance before any training.** The untrained bi-encoder ranks {untrained.right_order:.1%} of the "
        f"{untrained.ranked} quadruples whose labels differ the right way round (Spearman of the gaps "
        f"{untrained.gap_spearman:.1f}). Ties do not explain it: {untrained.tied} of them have two equal cosines "
        "(counted as not right; a pair with the same condition text twice gets two equal inputs), the rest are "
        "ranked the wrong way round."
    )
    if by_length:
        where = {
            "higher condition shorter": "the higher condition has fewer tokens than the lower",
            "same length": "both have as many",
            "higher condition longer": "the higher condition has more",
        }
        parts = ", ".join(f"{g.right_order:.0%} where {where[g.group]} ({g.quadruples})" for g in by_length)
        text += (
            f" Measured by the conditions' token counts, it ranks right {parts}: a condition's tokens enter both "
            "inputs of its row, so part of the untrained cosine gap follows how many tokens the two conditions "
            "have, not what they say. *Hypothesis, not tested here:* the rest of the shortfall comes from what the "
            "conditions' words share with the sentences."
        )
    return text


def conditioning_notes(
    spreads: Mapping[str, ConditionSpread],
    token_share: float | None,
    backbone: str,
    by_length: Sequence[LengthOrder] | None = None,
) -> str:
    """Markdown on how much the cosines depend on the condition, from :func:`condition_spread` rows keyed
    ``"<arch> untrained"`` and ``"<arch> <method>"`` and the bi-encoder's condition token share (None: not measured);
    when the untrained bi-encoder ranks fewer than half the pairs right, a paragraph on why, with ``by_length``
    (:func:`order_by_length` of the untrained bi-encoder) where given. A hypothesis says so."""
    text = _conditioning_notes(spreads, token_share, backbone)
    untrained = spreads.get("bi untrained")
    if untrained is not None and untrained.right_order < 0.5:
        text += "\n\n" + _below_chance(untrained, by_length)
    return text


def architecture_note(
    trained: Mapping[str, float],
    untrained: Mapping[str, float],
    spreads: Mapping[str, ConditionSpread],
    paper: Mapping[str, float],
    paper_row: str,
    *,
    lr: float,
    head_lr: float | None,
) -> str:
    """Markdown on the tri-encoder beside the bi-encoder (both after CCL, Spearman x100: ``trained``, ``untrained``
    and ``paper`` keyed "bi" and "tri"), "" unless both ran. When the tri-encoder scores higher, the reverse of the
    paper's Table 3, it says what was measured beside it (the untrained scores, how much each follows the condition)
    and the untested explanation that the new layer's learning rate offers."""
    if not {"bi", "tri"} <= set(trained):
        return ""
    head = (
        f"**Tri- against bi-encoder.** After CCL the tri-encoder scores {trained['tri']:.1f} and the bi-encoder "
        f"{trained['bi']:.1f} Spearman x100; the paper's Table 3 ({paper_row}, original test split) has the "
        f"bi-encoder ahead, {paper['bi']:.1f} against {paper['tri']:.1f}."
    )
    if trained["tri"] <= trained["bi"]:
        return head + " Here too the bi-encoder is ahead."
    bi, tri = spreads.get("bi CCL"), spreads.get("tri CCL")
    measured = f" Untrained they start at {untrained['tri']:.1f} (tri) and {untrained['bi']:.1f} (bi)"
    if bi is not None and tri is not None:
        measured += (
            f", and after CCL the tri-encoder's cosines follow the condition more: it ranks {tri.right_order:.0%} of "
            f"the pairs the right way round against {bi.right_order:.0%} (Spearman of the gaps {tri.gap_spearman:.1f} "
            f"against {bi.gap_spearman:.1f})"
        )
    text = head + " Ours is the reverse." + measured + "."
    if head_lr is not None and head_lr > lr:
        text += (
            f" *Hypothesis, not tested here:* in a run this short the backbone moves at {lr:g} while the "
            f"tri-encoder's condition transform, a new layer, trains at `head_lr` = {head_lr:g}, so the tri-encoder "
            "can learn what a condition changes through that layer within a few steps, where the bi-encoder has to "
            "learn it through the backbone; the paper trains every weight at one rate for 5-10 epochs. "
            "`head_lr = None` tests it."
        )
    return text


def condition_token_share(model: BiEncoder, sentences: Sequence[str], conditions: Sequence[str]) -> float:
    """The mean share of a bi-encoder input's tokens (special tokens included) that belong to the condition: what
    mean pooling averages the condition with (``[CLS] s [SEP] c [SEP]``, Section 3.2.1)."""
    if len(sentences) != len(conditions) or not sentences:
        raise ValueError("one condition per sentence, at least one")
    tokenizer = model.encoder.tokenizer
    condition_tokens = [len(ids) for ids in tokenizer(list(conditions), add_special_tokens=False)["input_ids"]]
    totals = []
    for start in range(0, len(sentences), 256):
        batch = model.tokenize_pairs(sentences[start : start + 256], conditions[start : start + 256])
        totals += batch["attention_mask"].sum(dim=1).tolist()
    return float(np.mean(np.array(condition_tokens) / np.array(totals)))


def _conditioning_notes(spreads: Mapping[str, ConditionSpread], token_share: float | None, backbone: str) -> str:
    """:func:`conditioning_notes` without the paragraph on an untrained model below chance."""
    first = next(iter(spreads.values()))
    parts = []
    for arch in ("bi", "tri"):
        if f"{arch} CCL" in spreads:
            start, ccl_run = spreads.get(f"{arch} untrained"), spreads[f"{arch} CCL"]
            before = f"{start.mean_cosine_gap:.3f} untrained, " if start else ""
            parts.append(
                f"the {arch}-encoder's cosines by {before}{ccl_run.mean_cosine_gap:.3f} after CCL, ranking "
                f"{ccl_run.right_order:.0%} of the pairs with unequal labels the right way round (Spearman of the gaps "
                f"{ccl_run.gap_spearman:.1f})"
            )
    lines = [
        f"**How much the cosine depends on the condition** ({backbone}, validation, {first.quadruples} quadruples): "
        f"the gold labels of a pair's two conditions differ by {first.mean_label_gap:.2f} on average (scaled to "
        "[0, 1]); " + "; ".join(parts) + ". Half the pairs ranked right is chance."
    ]
    bi = spreads.get("bi CCL")
    if bi is not None:
        barely = bi.mean_cosine_gap < 0.25 * bi.mean_label_gap
        lines.append(
            f"So the trained bi-encoder's cosines {'barely' if barely else 'do'} move with the condition: its mean "
            f"cosine gap is {bi.mean_cosine_gap / bi.mean_label_gap:.0%} of the mean label gap."
        )
        if barely and token_share is not None:
            lines.append(
                f"*Hypothesis, not tested here (an open question):* in the bi-encoder the condition is on average "
                f"{token_share:.0%} of the tokens mean pooling averages, and both sentences carry the same condition, "
                "so a new condition moves $h_1$ and $h_2$ alike and leaves their cosine nearly where it was; the "
                "tri-encoder multiplies $f(s)$ by $T(f(c))$ dimension by dimension, which can change what the cosine "
                "compares. A test would relate each pair's cosine gap to its conditions' token share, or pool the "
                "bi-encoder over the sentence's tokens only."
            )
    return "\n\n".join(lines)
