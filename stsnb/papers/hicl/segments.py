"""HiCL Section 3.1: slice token sequences into segments of L tokens, encode the segments, pool them per sequence.

- ``segment_count(n, L)`` is the paper's ``l_i = 1 + floor((|seq_i| - 1) / L)``; ``slice_tokens`` the queue rule
  (every L consecutive tokens, no overlap, the remainder of 1..L tokens last); ``seq = concat(segments)``.
- ``SegmentBatch`` / ``build_segments``: the segments of a batch of token sequences, each framed as a standalone
  model input (optionally a prompt template around it, Section 3.1's SNCSE case, and the tokenizer's special tokens),
  with the id of the sequence it came from and its length ``|seg_{i,j}|`` in sequence tokens.
- ``encode_segments`` runs one padded forward over all segments and pools each with the encoder's pooling.
- ``pool_sequences``: ``h_i = sum_j w_{i,j} h_{i,j}`` with ``w_{i,j} = |seg_{i,j}| / sum_k |seg_{i,k}|`` (weighted,
  the paper's choice) or ``w_{i,j} = 1 / l_i`` (unweighted), Table 3.
- ``length_distribution``: Table 2's histogram of input lengths.

Open choice (the paper is silent; REFERENCE_NOTES A3 recommends "yes"): ``special_tokens=True`` encodes each
segment as a standalone input with the tokenizer's special tokens ([CLS] ... [SEP] for BERT, <s> ... </s> for
RoBERTa; SmolLM2's tokenizer adds none). The length weights count sequence tokens only (not special or prompt
tokens), so that they sum to |seq_i| as in Section 3.1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch

from ...models.loading import length_sorted_chunks, training_chunk_tokens

SegmentPooling = Literal["weighted", "unweighted"]
SEGMENT_POOLINGS: tuple[str, ...] = ("weighted", "unweighted")
# Table 2's bins (upper edges, tokens, [CLS] and [SEP] counted)
TABLE2_EDGES: tuple[int, ...] = (32, 64, 96, 128, 256, 512)


def _check_length(slice_length: int) -> None:
    if isinstance(slice_length, bool) or not isinstance(slice_length, int) or slice_length < 1:
        raise ValueError(f"slice_length (L) must be an integer >= 1, got {slice_length!r}")


def segment_count(n_tokens: int, slice_length: int) -> int:
    """``l_i = 1 + floor((|seq_i| - 1) / L)``, HiCL Section 3.1 (a sequence of 1..L tokens is one segment)."""
    _check_length(slice_length)
    if n_tokens < 1:
        raise ValueError(f"a sequence needs at least 1 token to be sliced, got {n_tokens}")
    return 1 + (n_tokens - 1) // slice_length


def slice_tokens(tokens: Sequence[int], slice_length: int) -> list[list[int]]:
    """The queue rule of Section 3.1: consecutive, non-overlapping runs of L tokens, the last one 1..L tokens."""
    count = segment_count(len(tokens), slice_length)
    pieces = [list(tokens[j * slice_length : (j + 1) * slice_length]) for j in range(count)]
    return pieces


def special_token_frame(tokenizer) -> tuple[list[int], list[int]]:
    """The ids the tokenizer puts before and after a text as a single input (e.g. [CLS] / [SEP]); may be empty."""
    probe = "hello"
    plain = tokenizer(probe, add_special_tokens=False)["input_ids"]
    framed = tokenizer(probe, add_special_tokens=True)["input_ids"]
    for start in range(len(framed) - len(plain) + 1):
        if framed[start : start + len(plain)] == plain:
            return list(framed[:start]), list(framed[start + len(plain) :])
    raise ValueError(f"{type(tokenizer).__name__}: cannot find the text's ids {plain} inside {framed}")


@dataclass(frozen=True)
class Template:
    """A prompt around each segment, as token ids: ``prefix + segment + suffix`` (SNCSE's prompt, Section 3.1)."""

    prefix: tuple[int, ...] = ()
    suffix: tuple[int, ...] = ()

    @classmethod
    def from_text(cls, tokenizer, text: str | None, slot: str = "[X]") -> Template:
        """``'This sentence : "[X]" means'`` -> the ids of the text before and after the slot (no special tokens)."""
        if text is None:
            return cls()
        if text.count(slot) != 1:
            raise ValueError(f"a template must contain the slot {slot!r} exactly once, got {text!r}")
        before, after = text.split(slot)
        ids = tokenizer(before, add_special_tokens=False)["input_ids"] if before else []
        tail = tokenizer(after, add_special_tokens=False)["input_ids"] if after else []
        return cls(tuple(ids), tuple(tail))


@dataclass
class SegmentBatch:
    """All segments of a batch of sequences, ready for one forward pass.

    ``input_ids[m]`` is segment ``m`` framed as a model input; ``sequence_ids[m]`` the index of its sequence in the
    batch; ``lengths[m]`` its length in sequence tokens ``|seg_{i,j}|``; ``n_sequences`` the batch size.
    """

    input_ids: list[list[int]]
    sequence_ids: torch.Tensor
    lengths: torch.Tensor
    n_sequences: int

    def __len__(self) -> int:
        return len(self.input_ids)

    @property
    def segments_per_sequence(self) -> torch.Tensor:
        return torch.bincount(self.sequence_ids, minlength=self.n_sequences)


Transform = Callable[[list[int]], list[int]]


def build_segments(
    sequences: Sequence[Sequence[int]],
    slice_length: int | None,
    *,
    frame: tuple[Sequence[int], Sequence[int]] = ((), ()),
    template: Template = Template(),
    transform: Transform | None = None,
) -> SegmentBatch:
    """Slice each token sequence (Section 3.1) and frame every segment as ``frame[0] + prefix + seg + suffix +
    frame[1]``. ``slice_length=None`` keeps each sequence whole (the baselines). ``transform`` rewrites each
    segment's tokens before framing (ESimCSE's word repetition of the positive view); ``lengths`` are the sliced
    lengths before it, so a repeated view pools with the same weights as its anchor.
    """
    inputs: list[list[int]] = []
    owners: list[int] = []
    lengths: list[int] = []
    head, tail = list(frame[0]), list(frame[1])
    for index, tokens in enumerate(sequences):
        if len(tokens) == 0:
            raise ValueError(f"sequence {index} of the batch is empty: every sentence needs at least one token")
        pieces = [list(tokens)] if slice_length is None else slice_tokens(tokens, slice_length)
        for piece in pieces:
            body = transform(piece) if transform is not None else piece
            inputs.append(head + list(template.prefix) + body + list(template.suffix) + tail)
            owners.append(index)
            lengths.append(len(piece))
    return SegmentBatch(inputs, torch.tensor(owners), torch.tensor(lengths), len(sequences))


def pad_inputs(input_ids: Sequence[Sequence[int]], pad_id: int, device: torch.device | str = "cpu") -> dict:
    """Right-padded ``input_ids`` and ``attention_mask`` (pooling finds the last real token on either side)."""
    width = max(len(ids) for ids in input_ids)
    ids = torch.full((len(input_ids), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(input_ids), width), dtype=torch.long)
    for row, values in enumerate(input_ids):
        ids[row, : len(values)] = torch.tensor(values, dtype=torch.long)
        mask[row, : len(values)] = 1
    return {"input_ids": ids.to(device), "attention_mask": mask.to(device)}


def encode_segments(
    encoder, input_ids: Sequence[Sequence[int]], backbone: torch.nn.Module | None = None, *, padded: bool = False
):
    """Every row of ``input_ids`` encoded and pooled with ``encoder.pool`` (mean / cls / last), in input order.

    ``padded``: one forward of every row padded to the longest (SimCSE's collator, the paper's baseline); otherwise
    the rows go through in length-sorted chunks of at most ``training_chunk_tokens`` padded tokens, each padded to its
    own longest (``stsnb.models.loading.length_sorted_chunks``, as every training batch of this project): the same
    embeddings (padding is masked), without the compute a batch of mixed lengths spends on padding. ``backbone``
    replaces ``encoder.backbone`` (ESimCSE's momentum encoder shares the pooling, not the weights)."""
    model = backbone if backbone is not None else encoder.backbone
    device = next(model.parameters()).device
    if padded:
        return _encode_rows(encoder, model, input_ids, device)
    chunks = length_sorted_chunks([len(ids) for ids in input_ids], training_chunk_tokens(device))
    if len(chunks) == 1:
        return _encode_rows(encoder, model, input_ids, device)
    parts = [_encode_rows(encoder, model, [input_ids[i] for i in chunk], device) for chunk in chunks]
    order = torch.tensor([i for chunk in chunks for i in chunk], device=parts[0].device)
    return torch.cat(parts).index_select(0, torch.argsort(order))


def _encode_rows(encoder, model: torch.nn.Module, input_ids: Sequence[Sequence[int]], device) -> torch.Tensor:
    """One forward over ``input_ids`` right-padded to their longest, pooled (SNCSE on a masked LM: its [MASK])."""
    pad = encoder.tokenizer.pad_token_id
    features = pad_inputs(input_ids, pad if pad is not None else 0, device)
    output = model(input_ids=features["input_ids"], attention_mask=features["attention_mask"])
    pool_features = getattr(encoder, "pool_features", None)  # SNCSE on a masked LM: the [MASK] token
    if pool_features is not None:
        return pool_features(output.last_hidden_state, features).float()
    return encoder.pool(output.last_hidden_state, features["attention_mask"]).float()


def segment_weights(sequence_ids: torch.Tensor, lengths: torch.Tensor, pooling: SegmentPooling) -> torch.Tensor:
    """``w_{i,j}``: ``|seg_{i,j}| / sum_k |seg_{i,k}|`` (weighted, Section 3.1) or ``1 / l_i`` (unweighted)."""
    if pooling not in SEGMENT_POOLINGS:
        raise ValueError(f"segment pooling must be one of {SEGMENT_POOLINGS}, got {pooling!r}")
    if sequence_ids.shape != lengths.shape or sequence_ids.dim() != 1:
        raise ValueError(
            f"sequence_ids and lengths must be 1-D of one shape, got {tuple(sequence_ids.shape)} and "
            f"{tuple(lengths.shape)}"
        )
    mass = lengths.double() if pooling == "weighted" else torch.ones_like(lengths, dtype=torch.float64)
    if bool((mass <= 0).any()):
        raise ValueError("every segment length must be >= 1")
    totals = torch.zeros(int(sequence_ids.max()) + 1, dtype=torch.float64).index_add_(0, sequence_ids, mass)
    return mass / totals[sequence_ids]


def pool_sequences(
    segment_embeddings: torch.Tensor,
    sequence_ids: torch.Tensor,
    lengths: torch.Tensor,
    n_sequences: int,
    pooling: SegmentPooling = "weighted",
) -> torch.Tensor:
    """``h_i = sum_j w_{i,j} h_{i,j}``, Section 3.1 (``pooling`` as in ``segment_weights``); ``(n_sequences, D)``."""
    if segment_embeddings.dim() != 2 or segment_embeddings.shape[0] != sequence_ids.shape[0]:
        raise ValueError(
            f"segment_embeddings must be (segments, D) with one row per sequence id ({sequence_ids.shape[0]}), got "
            f"{tuple(segment_embeddings.shape)}"
        )
    present = torch.bincount(sequence_ids, minlength=n_sequences)
    if present.numel() != n_sequences or bool((present == 0).any()):
        raise ValueError(f"every sequence 0..{n_sequences - 1} needs at least one segment, got counts {present}")
    weights = segment_weights(sequence_ids, lengths, pooling).to(segment_embeddings)
    pooled = torch.zeros(n_sequences, segment_embeddings.shape[1], dtype=segment_embeddings.dtype)
    pooled = pooled.to(segment_embeddings.device)
    return pooled.index_add(0, sequence_ids.to(segment_embeddings.device), segment_embeddings * weights[:, None])


def length_distribution(lengths: Sequence[int], edges: Sequence[int] = TABLE2_EDGES) -> dict[str, float]:
    """Share of sequences (in %) per length bin ``[0, e1], (e1, e2], ...`` and beyond the last edge (Table 2)."""
    values = np.asarray(lengths)
    if values.size == 0:
        raise ValueError("lengths is empty")
    shares: dict[str, float] = {}
    low = 0
    for index, high in enumerate(edges):
        inside = (values >= low) & (values <= high) if index == 0 else (values > low) & (values <= high)
        shares[f"[0, {high}]" if index == 0 else f"({low}, {high}]"] = 100 * float(inside.mean())
        low = high
    shares[f"> {low}"] = 100 * float((values > low).mean())
    return shares


def token_lengths(tokenizer, sentences: Sequence[str], special_tokens: bool = True) -> list[int]:
    """Token count of each sentence (Table 2 counts [CLS] and [SEP]: ``special_tokens=True``)."""
    ids = tokenizer(list(sentences), add_special_tokens=special_tokens)["input_ids"]
    return [len(x) for x in ids]
