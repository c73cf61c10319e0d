"""One paper fit's real architecture with random weights, a few optimizer steps, measured (``stsnb gpu-check``).

A probe needs no download: the architecture comes from the package (``memory_estimate.KNOWN_SHAPES``, read from the
backbones' public config.json files) and is built by ``transformers`` with random weights directly on the device. A
4-bit base is quantized in place, each linear layer turned into bitsandbytes' ``Linear4bit`` (NF4, double
quantization, fp32 compute: ``stsnb.models.quantization_config``'s setting), then prepared as
``stsnb.models.load_encoder`` prepares a QLoRA base (peft's ``prepare_model_for_kbit_training``, LoRA on every linear
layer). The steps run on random token ids with a loss on the last hidden state; what is measured is the peak memory
the steps add (``stsnb.gpu.memory.PeakMemory``: CUDA's allocator, or the resident set on the CPU) and the seconds per
optimizer step after one warm-up step. :func:`measure_probe` runs in a fresh process
(``stsnb.gpu.memory.measure_in_fresh_process``) so one probe's peak is not the next one's baseline.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, replace
from typing import Any

from .memory_estimate import ModelShape, TrainingSetup, estimate

# the rehearsal's architecture: the same family at a size the CPU runs in seconds
TINY = {"layers": 2, "hidden": 64, "intermediate": 128, "heads": 4, "vocab": 1000}
TINY_SEQUENCES, TINY_LENGTH = 4, 32


@dataclass(frozen=True)
class Probe:
    """What to build and run: a notebook's largest training setting per GPU (``stsnb.gpu.gpu_check.paper_probes``)."""

    notebook: str
    label: str
    model: str
    shape: ModelShape
    setup: TrainingSetup
    typical: Any = None  # ``step_probe.Typical``: the notebook's typical step and scoring batch
    scoring: Any = None  # ``memory_estimate.ScoringSetup``: a 4-bit notebook's 16-bit scoring copy

    def tiny(self) -> Probe:
        """The same family and training setting at the rehearsal's size."""
        kv = TINY["heads"] if self.shape.kv_heads == self.shape.heads else TINY["heads"] // 2
        shape = ModelShape(self.shape.family, TINY["layers"], TINY["hidden"], TINY["intermediate"], TINY["heads"], kv,
                           TINY["vocab"])  # fmt: skip
        setup = replace(
            self.setup, sequences=min(self.setup.sequences, TINY_SEQUENCES), length=min(self.setup.length, TINY_LENGTH)
        )
        typical, scoring = self.typical, self.scoring
        if typical is not None:
            typical = replace(typical, examples=min(typical.examples, 2), tokens=min(typical.tokens, TINY_LENGTH),
                              eval_sequences=min(typical.eval_sequences, TINY_SEQUENCES),
                              eval_tokens=min(typical.eval_tokens, TINY_LENGTH))  # fmt: skip
        if scoring is not None:
            scoring = replace(scoring, sequences=min(scoring.sequences, TINY_SEQUENCES),
                              length=min(scoring.length, TINY_LENGTH))  # fmt: skip
        return replace(self, shape=shape, setup=setup, typical=typical, scoring=scoring)

    def to_json(self) -> dict[str, Any]:
        return {"notebook": self.notebook, "label": self.label, "model": self.model, "shape": asdict(self.shape),
                "setup": asdict(self.setup)}  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Probe:
        return cls(data["notebook"], data["label"], data["model"], ModelShape(**data["shape"]),
                   TrainingSetup(**data["setup"]))  # fmt: skip


def transformers_config(shape: ModelShape, model: str):
    """A ``transformers`` config of ``shape``: Mistral or Llama for a decoder (by the model id), BERT for an encoder
    (RoBERTa's layers have BERT's shapes; only its vocabulary and positions differ, which the shape carries)."""
    from transformers import BertConfig, LlamaConfig, MistralConfig

    if shape.family == "decoder":
        config_class = MistralConfig if "mistral" in model.lower() else LlamaConfig
        return config_class(
            hidden_size=shape.hidden,
            intermediate_size=shape.intermediate,
            num_hidden_layers=shape.layers,
            num_attention_heads=shape.heads,
            num_key_value_heads=shape.kv_heads,
            vocab_size=shape.vocab,
        )
    return BertConfig(
        hidden_size=shape.hidden,
        intermediate_size=shape.intermediate,
        num_hidden_layers=shape.layers,
        num_attention_heads=shape.heads,
        vocab_size=shape.vocab,
    )


def quantize_linear_layers(model, device) -> None:
    """Every ``nn.Linear`` of ``model`` as bitsandbytes' NF4 ``Linear4bit`` on ``device`` (quantized on the move)."""
    import bitsandbytes as bnb
    import torch
    from torch import nn

    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if not isinstance(child, nn.Linear):
                continue
            layer = bnb.nn.Linear4bit(
                child.in_features,
                child.out_features,
                bias=child.bias is not None,
                compute_dtype=torch.float32,
                compress_statistics=True,
                quant_type="nf4",
            )
            weight = child.weight.data
            layer.weight = bnb.nn.Params4bit(weight, requires_grad=False, compress_statistics=True, quant_type="nf4")
            if child.bias is not None:
                layer.bias = nn.Parameter(child.bias.data, requires_grad=False)
            setattr(module, name, layer.to(device))
            del child, weight
    model.is_loaded_in_4bit = True  # what peft's prepare_model_for_kbit_training looks for


def build(probe: Probe, device):
    """The probe's model on ``device``, set up for training as the notebook's fit sets it up."""
    import torch
    from transformers import AutoModel

    from ..models.loading import enable_activation_checkpointing

    setup = probe.setup
    config = transformers_config(probe.shape, probe.model)
    config.attn_implementation = "sdpa"
    dtype = torch.float32 if setup.weight_bytes >= 4 or setup.quantize_4bit else torch.bfloat16
    with torch.device(device):
        model = AutoModel.from_config(config, dtype=dtype)
    if setup.quantize_4bit:
        from peft import prepare_model_for_kbit_training

        quantize_linear_layers(model, device)
        model = prepare_model_for_kbit_training(
            model,
            use_gradient_checkpointing=setup.gradient_checkpointing,
            gradient_checkpointing_kwargs={"use_reentrant": False},
        )
    elif setup.gradient_checkpointing:
        enable_activation_checkpointing(model)
    if setup.lora_r is not None:
        from peft import LoraConfig, get_peft_model

        lora = LoraConfig(r=setup.lora_r, lora_alpha=16, lora_dropout=setup.lora_dropout, target_modules="all-linear")
        model = get_peft_model(model, lora)
    return model.to(device).train()


def measure_probe(probe: dict[str, Any], device: str = "cuda", steps: int = 3) -> dict[str, Any]:
    """Build the probe (its JSON), take one warm-up and ``steps`` timed AdamW steps on ``device``; return the peak
    the steps added, the estimate without weights beside it, and the seconds per step."""
    import torch

    torch.manual_seed(0)
    spec = Probe.from_json(probe)
    return timed_steps(build(spec, device), spec, device, steps)


def timed_steps(model, spec: Probe, device: str, steps: int) -> dict[str, Any]:
    """One warm-up and ``steps`` timed AdamW steps of ``model`` on random ids at the probe's setting: the peak the
    steps added (beside ``memory_estimate``'s), the seconds per step."""
    import contextlib

    import torch

    from .memory import PeakMemory

    cuda = device.startswith("cuda")
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=1e-5)
    setup = spec.setup
    ids = torch.randint(5, spec.shape.vocab, (setup.sequences, setup.length), device=device)
    mask = torch.ones_like(ids)
    autocast = setup.activation_bytes == 2

    def step() -> None:
        precision = torch.autocast(device.split(":")[0], dtype=torch.bfloat16) if autocast else contextlib.nullcontext()
        with precision:
            hidden = model(input_ids=ids, attention_mask=mask).last_hidden_state
        hidden.float().pow(2).mean().backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    step()  # warm-up: kernels, cuBLAS workspaces and AdamW's state are allocated once
    with PeakMemory(cuda=cuda) as peak:
        started = time.perf_counter()
        for _ in range(steps):
            step()
        if cuda:
            torch.cuda.synchronize()
        seconds = (time.perf_counter() - started) / steps
    predicted = estimate(spec.shape, replace(setup, ddp=False))
    weights = torch.cuda.memory_allocated() if cuda else None
    return {
        "measured_added_bytes": peak.added_bytes,
        # AdamW's state exists before the measured block (the warm-up made it): the estimate's part that the block adds
        "estimated_added_bytes": predicted.total - predicted.weights - predicted.optimizer,
        "estimated_total_bytes": predicted.total,
        "measured_total_bytes": peak.peak_bytes if cuda else None,
        "allocated_after_bytes": weights,
        "seconds_per_step": seconds,
        "steps": steps,
        "measure": peak.measure,
    }
