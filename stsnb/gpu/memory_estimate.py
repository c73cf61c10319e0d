"""Peak training memory per GPU, estimated from a model's shape before anything is loaded (``stsnb run --check``).

    peak = weights + gradients + optimizer state + saved activations + one layer's backward work + DDP buckets

- **weights**: every parameter at its storage size (fp32 4 bytes, bf16 2; 4-bit NF4 with double quantization about
  0.5625 bytes for the linear layers' weights, embeddings and norms at 4 bytes: ``stsnb.models.load_encoder`` loads
  a 4-bit base with ``dtype=float32`` and peft's ``prepare_model_for_kbit_training`` casts any 16-bit parameter
  left to fp32);
- **gradients** and **AdamW state** (two moments): 4 + 8 bytes per *trainable* parameter (fp32 master copies);
- **saved activations**: what autograd keeps for the backward pass, per token and layer, counted tensor by tensor
  for the two families the papers use (:func:`saved_per_token`), each at the dtype it has: under bf16 autocast the
  matmuls' inputs and outputs are bf16, but the **residual stream** stays at the weights' dtype (fp32: the
  embedding output and every residual sum, fp32 + bf16, are fp32; autocast runs LayerNorm in fp32 and Llama's
  RMSNorm upcasts itself), and on a 4-bit base with fp32 compute (Pcc-tuning's) bitsandbytes' ``Linear4bit``
  returns its input's dtype, so a decoder's MLP tensors are fp32 too. With gradient checkpointing only each
  layer's input is kept, a residual-stream tensor (:attr:`TrainingSetup.residual_bytes`), and one layer is
  recomputed at a time;
- **backward work**: under checkpointing, the activations of the one layer being recomputed; without it none
  (the backward pass frees each layer's saved tensors as it makes gradients of about their size);
- **DDP buckets**: with more than one process, ``DistributedDataParallel`` all-reduces the gradients through flat
  buckets (``bucket_cap_mb``, 25 MiB each) that together hold a copy of every trainable gradient, at its dtype;
  ``gradient_as_bucket_view=True`` would make the gradients views of them ("the saved memory size will be equal
  to the total gradients size", torch's DDP docs), but accelerate's ``DistributedDataParallelKwargs`` leaves it
  False and ``stsnb.training.train.accelerator`` does not set it.

Attention is the SDPA kernel's (no ``s x s`` matrix kept) unless ``eager_attention``, which keeps the attention
probabilities and, with dropout, their mask. The estimate is checked against a measured peak on the CPU
(``tests/test_memory_estimate.py``: within 25% on a small decoder and a small BERT-like encoder); on a GPU the
allocator's fragmentation and CUDA's own context (about 0.5-1 GB) come on top, so :func:`fits` keeps a margin.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Literal

Family = Literal["decoder", "encoder"]
GIB = 1024**3
NF4_BYTES = 0.5625  # 4 bits + the double-quantized absmax constants (QLoRA, Section 2)
FOUR_BIT_OTHER_BYTES = 4.0  # a 4-bit base's embeddings and norms: fp32 (load_encoder's dtype, peft's upcast)
CUDA_CONTEXT_BYTES = 1 * GIB  # the CUDA context and cuBLAS workspaces, not counted by the allocator


@dataclass(frozen=True)
class ModelShape:
    """What the estimate needs from a transformers config."""

    family: Family
    layers: int
    hidden: int
    intermediate: int
    heads: int
    kv_heads: int
    vocab: int

    @classmethod
    def from_config(cls, config) -> ModelShape:
        """From a ``transformers`` config: Llama/Mistral-style decoders and BERT/RoBERTa-style encoders."""
        model_type = getattr(config, "model_type", "")
        family: Family = (
            "encoder" if model_type in ("bert", "roberta", "xlm-roberta", "mpnet", "nomic_bert") else "decoder"
        )
        heads = int(config.num_attention_heads)
        return cls(
            family,
            int(config.num_hidden_layers),
            int(config.hidden_size),
            int(getattr(config, "intermediate_size", 4 * config.hidden_size)),
            heads,
            int(getattr(config, "num_key_value_heads", None) or heads),
            int(config.vocab_size),
        )

    def linear_parameters(self) -> int:
        """Parameters of the transformer layers' linear maps (what LoRA adapts and 4-bit quantizes)."""
        head_dim = self.hidden // self.heads
        attention = 2 * self.hidden * self.hidden + 2 * self.hidden * self.kv_heads * head_dim
        mlp = (3 if self.family == "decoder" else 2) * self.hidden * self.intermediate
        return self.layers * (attention + mlp)

    def other_parameters(self) -> int:
        """Embeddings and norms (kept at 16 bits under 4-bit quantization)."""
        return self.vocab * self.hidden + self.layers * 4 * self.hidden

    def parameters(self) -> int:
        return self.linear_parameters() + self.other_parameters()

    def lora_parameters(self, r: int) -> int:
        """LoRA's A and B on every linear layer ("all-linear", Pcc-tuning's setting)."""
        head_dim = self.hidden // self.heads
        kv = self.kv_heads * head_dim
        shapes = [(self.hidden, self.hidden), (self.hidden, kv), (self.hidden, kv), (self.hidden, self.hidden)]
        shapes += [(self.hidden, self.intermediate)] * (2 if self.family == "decoder" else 1)
        shapes += [(self.intermediate, self.hidden)]
        return self.layers * sum(r * (fan_in + fan_out) for fan_in, fan_out in shapes)


# The papers' backbones, from their public config.json files (read offline: the Hub is not needed to check a plan)
KNOWN_SHAPES: dict[str, ModelShape] = {
    "bert-base-uncased": ModelShape("encoder", 12, 768, 3072, 12, 12, 30522),
    "roberta-base": ModelShape("encoder", 12, 768, 3072, 12, 12, 50265),
    "FacebookAI/roberta-base": ModelShape("encoder", 12, 768, 3072, 12, 12, 50265),
    "FacebookAI/roberta-large": ModelShape("encoder", 24, 1024, 4096, 16, 16, 50265),
    "princeton-nlp/sup-simcse-roberta-base": ModelShape("encoder", 12, 768, 3072, 12, 12, 50265),
    "princeton-nlp/sup-simcse-roberta-large": ModelShape("encoder", 24, 1024, 4096, 16, 16, 50265),
    "voidism/diffcse-roberta-base-sts": ModelShape("encoder", 12, 768, 3072, 12, 12, 50265),
    "jinaai/jina-embeddings-v2-base-en": ModelShape("encoder", 12, 768, 3072, 12, 12, 30528),
    "nomic-ai/nomic-embed-text-v1": ModelShape("encoder", 12, 768, 3072, 12, 12, 30528),
    "mistralai/Mistral-7B-v0.1": ModelShape("decoder", 32, 4096, 14336, 32, 8, 32000),
    "meta-llama/Llama-2-7b-hf": ModelShape("decoder", 32, 4096, 11008, 32, 32, 32000),
    "Qwen/Qwen2-7B": ModelShape("decoder", 28, 3584, 18944, 28, 4, 152064),
}


@dataclass(frozen=True)
class TrainingSetup:
    """One process's training: sequences per forward pass, their length and how the weights are held."""

    sequences: int  # per GPU and forward pass (a pair loss on batch b runs 2b sequences, Pcc's stage 1 3b)
    length: int
    weight_bytes: float = 4.0  # 4 fp32, 2 bf16/fp16; 4-bit: set quantize_4bit
    activation_bytes: int = 4  # 4 fp32, 2 under bf16/fp16 autocast
    quantize_4bit: bool = False  # NF4 at fp32 compute (stsnb.models.quantization_config), norms upcast by peft
    lora_r: int | None = None  # None: every weight trains
    lora_dropout: float = 0.0
    gradient_checkpointing: bool = False
    eager_attention: bool = False
    dropout: float = 0.0  # hidden and attention dropout in train mode (BERT: 0.1)
    ddp: bool = False  # more than one process: DDP's gradient buckets (num_processes > 1, or "auto": uses_ddp)

    @property
    def residual_bytes(self) -> float:
        """Bytes per element of the residual stream (each layer's input, what checkpointing keeps): the weights'
        dtype, which autocast does not lower (a bf16 branch added to an fp32 residual is fp32); fp32 on a 4-bit
        base, whose embeddings and norms are fp32."""
        return FOUR_BIT_OTHER_BYTES if self.quantize_4bit else float(self.weight_bytes)


def uses_ddp(num_processes: int | str) -> bool:
    """Whether a notebook's ``num_processes`` trains under DDP: more than one process, and ``"auto"`` (every GPU
    present, resolved only at run time: ``stsnb.training.batching``) counted as more than one, the larger estimate."""
    return num_processes == "auto" or int(num_processes) > 1


@dataclass(frozen=True)
class MemoryEstimate:
    weights: float
    gradients: float
    optimizer: float
    activations: float
    backward_work: float
    ddp_buckets: float = 0.0

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer + self.activations + self.backward_work + self.ddp_buckets

    def gib(self) -> dict[str, float]:
        """Every part and the total in GiB (for tables)."""
        return {k: v / GIB for k, v in {**asdict(self), "total": self.total}.items()}


def saved_per_token(shape: ModelShape, setup: TrainingSetup) -> tuple[float, float, float]:
    """Elements at the activation dtype, elements at the residual stream's dtype, and 1-byte masks that autograd
    keeps per token and layer (without checkpointing).

    Decoder (pre-norm RMSNorm, SwiGLU, rotary, SDPA): each norm's input, normalised value and output (6h, residual
    dtype: RMSNorm computes in fp32 and multiplies by its fp32 weight), the rotated q, k and v repeated to every
    head, the attention output and o_proj's input (5h), gate, up, SiLU(gate) and their product (4 I; on a 4-bit base
    gate, up and SiLU(gate) at the residual dtype, as ``Linear4bit`` returns the fp32 norm output's dtype, and the
    product kept only as LoRA's input copy). Encoder (post-norm LayerNorm, GELU): q, k, v (3h), the attention output
    and the output projection's input (2h), each norm's input and output (4h, residual dtype: LayerNorm runs in
    fp32 under autocast), intermediate and GELU output (2 I), and the two hidden dropout masks. LoRA adds a copy of
    each adapted layer's input: the dropped one with dropout (and its mask), and under autocast the bf16 cast
    ``lora_A`` keeps even without dropout; eager attention keeps the probabilities (and, with dropout, the dropped
    ones and a mask). Measured with saved-tensor hooks on a tiny 4-bit Mistral with LoRA (h=128, I=384, dropout
    0.05) under CPU bf16 autocast: 13.4 kB per token and layer against 12.4 kB counted here, the fp32 share
    (measured 2.9h + 4 I, the CPU's dropout noise in the input's dtype among them) smaller than counted, the bf16
    share larger."""
    h, inter = shape.hidden, shape.intermediate
    four_bit_mlp = setup.quantize_4bit and shape.family == "decoder"
    if shape.family == "decoder":
        low = 5 * h + (0 if four_bit_mlp else 4 * inter)
        high = 6 * h + (3 * inter if four_bit_mlp else 0)
        masks = 0.0
        adapted_inputs = 6 * h + inter
    else:
        low = 5 * h + 2 * inter
        high = 4 * h
        masks = 2 * h if setup.dropout > 0 else 0.0
        adapted_inputs = 5 * h + inter
    autocast = setup.activation_bytes < setup.residual_bytes
    if setup.lora_r is not None and (setup.lora_dropout > 0 or autocast):
        low += adapted_inputs
        masks += adapted_inputs if setup.lora_dropout > 0 else 0
    if setup.eager_attention:
        low += shape.heads * setup.length * (2 if setup.dropout > 0 else 1)
        masks += shape.heads * setup.length if setup.dropout > 0 else 0
    return float(low), float(high), float(masks)


def _four_bit_weights(shape: ModelShape) -> float:
    """A 4-bit base: NF4 linear weights, fp32 embeddings and norms."""
    return shape.linear_parameters() * NF4_BYTES + shape.other_parameters() * FOUR_BIT_OTHER_BYTES


def estimate(shape: ModelShape, setup: TrainingSetup) -> MemoryEstimate:
    """Peak memory of one training step on one process (bytes), by the parts of the module docstring."""
    if setup.sequences < 1 or setup.length < 1:
        raise ValueError(f"sequences and length must be >= 1, got {setup.sequences} and {setup.length}")
    weights = _four_bit_weights(shape) if setup.quantize_4bit else shape.parameters() * setup.weight_bytes
    trainable = shape.lora_parameters(setup.lora_r) if setup.lora_r is not None else shape.parameters()
    if setup.lora_r is not None:
        weights += trainable * 4  # the adapters live in fp32
    tokens = setup.sequences * setup.length
    low, high, masks = saved_per_token(shape, setup)
    one_layer = tokens * (low * setup.activation_bytes + high * setup.residual_bytes + masks)
    residual = tokens * shape.hidden * setup.residual_bytes  # one layer's input (the embedding output first)
    if setup.gradient_checkpointing:
        activations = shape.layers * residual + residual
    else:
        activations = shape.layers * one_layer + residual
    return MemoryEstimate(
        weights=float(weights),
        gradients=4.0 * trainable,
        optimizer=8.0 * trainable,
        activations=float(activations),
        backward_work=float(one_layer) if setup.gradient_checkpointing else 0.0,
        ddp_buckets=4.0 * trainable if setup.ddp else 0.0,
    )


@dataclass(frozen=True)
class ScoringSetup:
    """The test-set scoring of a 4-bit LoRA run on its unquantized base (Pcc-tuning's official evaluation loads
    the base at 16 bits, ``--load_kbit 16``; ``stsnb.papers.pcc_tuning.protocol.Scorer``), on the main process."""

    sequences: int  # per forward pass: ``stsnb.models.SentenceEncoder.encode``'s batches of padded tokens
    length: int
    lora_r: int
    copy_bytes: float = 2.0  # the copy's weights: bf16 on a GPU
    activation_bytes: int = 2


def scoring_estimate(shape: ModelShape, setup: ScoringSetup) -> MemoryEstimate:
    """Peak memory while a 4-bit LoRA run is scored on its 16-bit copy (bytes): what is alive at the same time.

    ``pcc_tuning.pipeline.run_template`` keeps the training model (its 4-bit base and fp32 adapter) through every
    scoring, since stage 2 trains it again afterwards; ``protocol.unquantized_copy`` then loads the whole base
    at 16 bits with a copy of the adapter (fp32: PEFT keeps adapters of a 16-bit base in fp32) and frees it after.
    ``stsnb.training.train.fit`` has returned by then: its optimizer state went with ``Accelerator.free_memory``, the
    gradients with the last ``zero_grad`` (set to None), and the stage-1 weights kept for stage 2 are a CPU copy.
    The forward passes run without autograd, so the activations are one layer's widest moment at a time: the
    layer's input and its residual (2h per token) and the MLP's intermediate tensors (a decoder's gate, up and
    their product, 3 I; an encoder's intermediate and GELU output, 2 I)."""
    if setup.sequences < 1 or setup.length < 1:
        raise ValueError(f"sequences and length must be >= 1, got {setup.sequences} and {setup.length}")
    adapter = shape.lora_parameters(setup.lora_r) * 4.0
    training_model = _four_bit_weights(shape) + adapter
    copy = shape.parameters() * setup.copy_bytes + adapter
    widest = 2 * shape.hidden + (3 if shape.family == "decoder" else 2) * shape.intermediate
    return MemoryEstimate(
        weights=float(training_model + copy),
        gradients=0.0,
        optimizer=0.0,
        activations=float(setup.sequences * setup.length * widest * setup.activation_bytes),
        backward_work=0.0,
    )


def fits(total_bytes: float, gpu_gib: float, margin: float = 0.9) -> bool:
    """Whether an estimated peak fits a GPU of ``gpu_gib`` GiB, keeping the CUDA context and 10% for the
    allocator's fragmentation."""
    return total_bytes + CUDA_CONTEXT_BYTES <= margin * gpu_gib * GIB


def auto_checkpointing(peaks_without: Iterable[float], gpu_gib: float | None) -> bool:
    """A ``gradient_checkpointing = "auto"`` parameter resolved: on only where an estimated peak without it
    (bytes, one per training setting) does not :func:`fits` a GPU of ``gpu_gib`` GiB; off on the CPU (``gpu_gib``
    None), where memory is not the GPU's and checkpointing only costs time."""
    return gpu_gib is not None and any(not fits(peak, gpu_gib) for peak in peaks_without)


def gpu_memory_gib() -> float | None:
    """The total memory of this process's GPU in GiB (``torch.cuda.get_device_properties``); None without CUDA."""
    import torch

    if not torch.cuda.is_available():
        return None
    return torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory / GIB


def measure_step(
    folder: str,
    sequences: int,
    length: int,
    gradient_checkpointing: bool = False,
    lora_r: int | None = None,
    lora_dropout: float = 0.0,
    quantize_4bit: bool = False,
    bf16_autocast: bool = False,
    steps: int = 2,
) -> dict:
    """Two AdamW steps of the model saved in ``folder`` on random token ids (``sequences x length``), in this
    process: the added peak memory (``stsnb.gpu.memory.PeakMemory``, after loading) beside :func:`estimate`. Run it in
    a fresh process (``stsnb.gpu.memory.measure_in_fresh_process``) so earlier work does not raise the baseline.

    ``quantize_4bit`` loads the base as ``stsnb.models.load_encoder`` does for QLoRA (NF4 at fp32 compute, then
    peft's ``prepare_model_for_kbit_training``; bitsandbytes runs on the CPU); ``bf16_autocast`` runs the steps
    under CPU bf16 autocast, as accelerate's ``mixed_precision="bf16"`` does on a GPU."""
    import contextlib

    import torch
    from transformers import AutoConfig, AutoModel

    from .memory import PeakMemory

    torch.manual_seed(0)
    config = AutoConfig.from_pretrained(folder)
    if quantize_4bit:
        from peft import prepare_model_for_kbit_training

        from ..models.loading import quantization_config

        model = AutoModel.from_pretrained(
            folder, attn_implementation="sdpa", quantization_config=quantization_config(), dtype=torch.float32
        )
        model = prepare_model_for_kbit_training(
            model,
            use_gradient_checkpointing=gradient_checkpointing,
            gradient_checkpointing_kwargs={"use_reentrant": False},
        )
    else:
        model = AutoModel.from_pretrained(folder, attn_implementation="sdpa")
        if gradient_checkpointing:
            from ..models.loading import enable_activation_checkpointing

            enable_activation_checkpointing(model)
    if lora_r is not None:
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(
            model, LoraConfig(r=lora_r, lora_alpha=16, lora_dropout=lora_dropout, target_modules="all-linear")
        )
    model.train()
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=1e-4)
    ids = torch.randint(5, config.vocab_size, (sequences, length))

    def precision():
        return torch.autocast("cpu", dtype=torch.bfloat16) if bf16_autocast else contextlib.nullcontext()

    warm = ids[:1, :8]  # one tiny step first: the lazily loaded kernels and thread pools are not training memory
    with precision():
        hidden = model(input_ids=warm, attention_mask=torch.ones_like(warm)).last_hidden_state
    hidden.float().pow(2).mean().backward()
    model.zero_grad(set_to_none=True)
    with PeakMemory(cuda=False) as peak:
        for _ in range(steps):
            with precision():
                hidden = model(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state
            hidden.float().pow(2).mean().backward()
            optimizer.step()
            optimizer.zero_grad()
    shape = ModelShape.from_config(config)
    setup = TrainingSetup(
        sequences,
        length,
        activation_bytes=2 if bf16_autocast else 4,
        quantize_4bit=quantize_4bit,
        lora_r=lora_r,
        lora_dropout=lora_dropout,
        gradient_checkpointing=gradient_checkpointing,
        dropout=float(getattr(config, "hidden_dropout_prob", 0.0) or 0.0),
        # on the CPU, SDPA with dropout falls back to the math kernel, which keeps the s x s probabilities
        eager_attention=bool(getattr(config, "attention_probs_dropout_prob", 0.0)),
    )
    predicted = estimate(shape, setup)
    return {
        "measured_bytes": peak.added_bytes,
        "estimated_bytes": predicted.total - predicted.weights,
        "measure": peak.measure,
        "parts": predicted.gib(),
    }
