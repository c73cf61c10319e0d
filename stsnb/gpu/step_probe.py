"""What ``stsnb gpu-check`` measures of one notebook beyond its largest setting (``stsnb.gpu.fit_probe``), on the same
model in the same fresh process, so each term of ``cost_estimate``'s hours gets its own measured ratio:

- **a whole optimizer step at the notebook's typical batch** (``Typical``: notebook 20's main fits are 16 pairs of
  about 57 tokens per GPU) through ``stsnb.training.train.fit`` itself: sentences tokenized and collated in the loop,
  the Accelerator's mixed precision, AdamW, the scheduler, gradient clipping. Timed as the difference of two fits
  (``FIT_STEPS`` and ``FIT_STEPS + steps`` steps), so the fit's own start-up is not counted. Less the compute the
  largest setting's measured throughput gives it, this is the per-step overhead;
- **evaluation**: ``SentenceEncoder``-style mean pooling under ``no_grad`` at the notebook's scoring batch, seconds per
  sequence; for a 4-bit notebook (Pcc-tuning) on the 16-bit copy its scoring loads beside the training model
  (``ScoringSetup``): that copy's peak memory is the scoring row's measurement (the largest of the plan, 19.4 GiB),
  its speed Mistral's evaluation.

The sentences are made of repeated words, tokenized by the packaged MiniLM tokenizer (BERT's WordPiece, whose ids fit
every paper model's vocabulary): the tokenization is real work on real strings, the weights are random.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import asdict, dataclass
from typing import Any

FIT_STEPS = 2  # the shorter of the two fits whose difference times the steps
WORDS = ("the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "while", "seven", "small", "birds",
         "sing", "near", "an", "old", "stone", "bridge")  # fmt: skip


@dataclass(frozen=True)
class Typical:
    """A notebook's typical optimizer step on one GPU and its scoring batch."""

    examples: int  # examples per process and step
    sequences_per_example: int
    tokens: int  # padded tokens per sequence
    eval_sequences: int  # sequences per scoring forward
    eval_tokens: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def sentences(count: int, tokens: int, offset: int = 0) -> list[str]:
    """``count`` different sentences of about ``tokens - 2`` WordPiece tokens."""
    length = max(1, tokens - 2)
    return [" ".join(WORDS[(offset + i + j) % len(WORDS)] for j in range(length)) for i in range(count)]


def _tokenizer():
    from transformers import AutoTokenizer

    from ..models.loading import resolve

    return AutoTokenizer.from_pretrained(resolve("minilm-l6").path)


def _vocabulary(model) -> int:
    """The model's vocabulary size: ids past it (a rehearsal's tiny vocabulary) wrap around."""
    return int(model.get_input_embeddings().num_embeddings)


class _Pooled:
    """Mean pooling over a backbone's last hidden state (what the notebooks' encoders do)."""

    @staticmethod
    def embed(model, ids, mask):
        hidden = model(input_ids=ids, attention_mask=mask).last_hidden_state
        weights = mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * weights).sum(1) / weights.sum(1).clamp(min=1)


def typical_step_seconds(model, typical: Typical, steps: int, base: int = FIT_STEPS, warm_up: bool = True) -> float:
    """Seconds per optimizer step of ``stsnb.training.train.fit`` on ``model`` at the typical batch: a fit of
    ``base + steps`` steps less one of ``base``, after a one-step warm-up fit (``warm_up``; the CPU rehearsal skips
    it, its figures being plumbing)."""
    import torch

    from ..training.config import TrainConfig
    from ..training.train import fit

    tokenizer = _tokenizer()
    group = typical.sequences_per_example
    texts = sentences(typical.examples * group * (base + steps), typical.tokens)
    data = [(tuple(texts[i * group : (i + 1) * group]), float(i % 5) / 4) for i in range(len(texts) // group)]

    vocab = _vocabulary(model)

    def collate(items):
        flat = [text for texts_of, _ in items for text in texts_of]
        batch = tokenizer(flat, padding=True, truncation=True, max_length=typical.tokens, return_tensors="pt")
        labels = torch.tensor([label for _, label in items])
        return batch["input_ids"].remainder(vocab), batch["attention_mask"], labels

    def loss(model, batch):
        ids, mask, labels = (t.to(next(model.parameters()).device) for t in batch)
        embeddings = _Pooled.embed(model, ids, mask).float().view(len(labels), group, -1)
        similarity = torch.nn.functional.cosine_similarity(embeddings[:, 0], embeddings[:, -1])
        return ((similarity - labels) ** 2).mean()

    def timed(n: int) -> float:
        config = TrainConfig(epochs=1, batch_size=typical.examples, lr=1e-5, max_steps=n, eval_at_start=False,
                             progress=False, warmup_ratio=0.0)  # fmt: skip
        started = time.perf_counter()
        fit(model, loss, data[: n * typical.examples], config, collate=collate)
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        return time.perf_counter() - started

    if warm_up:
        timed(1)  # the Accelerator, kernels, AdamW's state
    return (timed(base + steps) - timed(base)) / steps


def encode_seconds(model, sequences: int, tokens: int, device: str, batches: int = 3) -> float:
    """Seconds per sequence of a pooled forward under ``no_grad`` (bf16 autocast on a GPU), after one warm-up."""
    import torch

    tokenizer = _tokenizer()
    batch = tokenizer(sentences(sequences, tokens), padding="max_length", truncation=True, max_length=tokens,
                      return_tensors="pt")  # fmt: skip
    ids, mask = batch["input_ids"].remainder(_vocabulary(model)).to(device), batch["attention_mask"].to(device)
    cuda = device.startswith("cuda")
    precision = torch.autocast("cuda", dtype=torch.bfloat16) if cuda else contextlib.nullcontext()

    def forward() -> None:
        with torch.no_grad(), precision:
            _Pooled.embed(model, ids, mask)

    forward()
    if cuda:
        torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(batches):
        forward()
    if cuda:
        torch.cuda.synchronize()
    return (time.perf_counter() - started) / (batches * sequences)


def scoring_copy(spec, device: str):
    """The 16-bit copy a 4-bit run is scored on (``pcc_tuning.protocol.unquantized_copy``): the base in bf16 (fp32 on
    the CPU) with a LoRA adapter, in eval mode."""
    from dataclasses import replace

    from .fit_probe import build

    weight_bytes = 2 if device.startswith("cuda") else 4
    setup = replace(spec.setup, quantize_4bit=False, weight_bytes=weight_bytes, gradient_checkpointing=False)
    return build(replace(spec, setup=setup), device).eval()


def measure_notebook(
    probe: dict[str, Any],
    typical: dict[str, Any],
    device: str = "cuda",
    steps: int = 3,
    scoring: dict | None = None,
    quick: bool = False,
) -> dict[str, Any]:
    """The probe's largest setting (``fit_probe.timed_steps``), then its typical step through ``fit`` and its
    evaluation, on one model; with ``scoring`` (a 4-bit notebook's ``ScoringSetup`` fields), the 16-bit copy's peak
    memory and speed beside the training model. ``quick`` (the CPU rehearsal): the typical step's fits as short as
    they go, without a warm-up."""
    import torch

    from .fit_probe import Probe, build, timed_steps
    from .memory import PeakMemory
    from .memory_estimate import ScoringSetup, scoring_estimate

    torch.manual_seed(0)
    spec, shape = Probe.from_json(probe), Typical(**typical)
    model = build(spec, device)
    result = timed_steps(model, spec, device, steps)
    base, warm_up = (1, False) if quick else (FIT_STEPS, True)
    result["typical_seconds_per_step"] = typical_step_seconds(model, shape, steps, base, warm_up)
    model.eval()
    if scoring is None:
        result["eval_seconds_per_sequence"] = encode_seconds(model, shape.eval_sequences, shape.eval_tokens, device)
        return result
    setup = ScoringSetup(**scoring)
    cuda = device.startswith("cuda")
    with PeakMemory(cuda=cuda) as peak:
        copy = scoring_copy(spec, device)
        result["eval_seconds_per_sequence"] = encode_seconds(copy, setup.sequences, setup.length, device)
    estimate = scoring_estimate(spec.shape, setup)
    result["scoring"] = {
        "measured_bytes": peak.peak_bytes if cuda else peak.added_bytes,
        "estimated_bytes": estimate.total if cuda else estimate.total - estimate.weights,
        "measure": "peak allocated, both models included" if cuda else "peak the copy added (RSS)",
        "sequences_x_length": f"{setup.sequences} x {setup.length}",
    }
    return result


def ddp_step_seconds(probe: dict[str, Any], typical: dict[str, Any], steps: int = 3) -> float:
    """:func:`typical_step_seconds` of the probe's model on this process's GPU (one process, or each of a DDP run:
    ``stsnb.training.distributed.run``)."""
    import torch

    from ..models.loading import default_device
    from .fit_probe import Probe, build

    torch.manual_seed(0)
    spec = Probe.from_json(probe)
    return typical_step_seconds(build(spec, str(default_device())), Typical(**typical), steps)
