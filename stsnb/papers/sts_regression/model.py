"""STS-Regression's Siamese regression model (Section 3.1, Figure 1), its head inputs (Table 6), the NLI label
mapping (Section 4.1) and the clamp of Section 3.3.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import torch
from torch import Tensor, nn

from ...evaluation import evaluate
from ...models import loading as models
from ...training import losses

if TYPE_CHECKING:
    from .training_data import TrainingPair

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
        both = self.encoder(list(sentences1) + list(sentences2))  # one forward through the shared encoder
        return self.score(both[: len(sentences1)], both[len(sentences1) :])


def head_output(head: nn.Module, u: Tensor, v: Tensor, concatenation: Concatenation) -> Tensor:
    out = head(concatenate(u, v, concatenation))
    return out.squeeze(-1) if out.shape[-1] == 1 else out


# ---- labels and clamping (Sections 4.1, 3.3) -------------------------------------------------------------------

ClampMode = Literal["both", "lower", "none"]
CLAMP_MODES: tuple[ClampMode, ...] = ("both", "lower", "none")


def clamp_prediction(pred: Tensor, label_range: tuple[float, float], mode: ClampMode = "both") -> Tensor:
    """Section 3.3: a prediction past the outermost label is moved onto it before the loss (zero gradient there).

    ``"both"`` follows the paper's text (both ends of the label range); ``"lower"`` follows the official
    training scripts, which clamp only at the lower label 0 (``prediction * (prediction >= 0)``); ``"none"``
    leaves predictions alone. Via ``stsnb.training.losses.clamp_to_label_range``.
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
