"""The GPU path (``pytest -m gpu`` on a machine with CUDA; skipped elsewhere): a tiny random Mistral-architecture
model in 4-bit NF4 with LoRA (QLoRA) on this process's GPU takes bf16 training steps."""

from __future__ import annotations

import pytest
import torch

from stsnb.models import loading as models
from stsnb.training import losses
from stsnb.training.config import TrainConfig
from stsnb.training.train import fit

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA: run `pytest -m gpu` on a GPU machine"),
]


@pytest.fixture(scope="module")
def tiny_mistral(tmp_path_factory):
    from conftest import save_tiny_causal_lm
    from transformers import MistralConfig

    return save_tiny_causal_lm(tmp_path_factory.mktemp("tiny-mistral"), MistralConfig)


def test_qlora_on_the_gpu_takes_bf16_steps(tiny_mistral):
    encoder = models.load_encoder(
        str(tiny_mistral),
        template='This sentence : "*sent_0*" means something',
        quantize_4bit=True,
        lora=models.LoraSettings(r=8, alpha=16),
        gradient_checkpointing=True,
    )
    assert encoder.device.type == "cuda" and encoder.pooling == "last"
    before = {n: p.detach().clone() for n, p in encoder.named_parameters() if p.requires_grad}
    pairs = [("A man plays a guitar.", "A man is playing the guitar."), ("A dog runs.", "The market fell.")] * 4

    def loss_fn(model, batch):
        u = model([a for a, _ in batch])
        v = model([b for _, b in batch])
        return losses.info_nce(u, v, temperature=0.05)

    precision = "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    result = fit(encoder, loss_fn, pairs, TrainConfig(batch_size=4, lr=1e-3, mixed_precision=precision, progress=False))
    assert result.steps == 2
    changed = [n for n, p in encoder.named_parameters() if p.requires_grad and not torch.equal(p.detach(), before[n])]
    assert changed and all("lora_" in n for n in changed)


def _cuda_in_worker() -> dict:
    """What a launched worker sees: its rank, the world size and a CUDA tensor on its own GPU."""
    from accelerate import PartialState

    state = PartialState()
    x = torch.ones(2, device=state.device)
    return {"processes": state.num_processes, "device": str(x.device), "sum": float(x.sum())}


def test_the_run_record_then_a_two_process_launch(tmp_path, monkeypatch):
    """Issue: runs.start() used to initialise CUDA in the kernel, after which forked workers could not use it. The
    record reads the GPU names through nvidia-smi, and the launch starts a fresh torchrun child."""
    if torch.cuda.device_count() < 2:
        pytest.skip("needs 2 GPUs")
    from stsnb.runs import context as runs
    from stsnb.training import distributed

    monkeypatch.setenv("STSNB_RUN_DIR", str(tmp_path))
    runs.start("gpu-tier", params={"seed": 0})
    assert not torch.cuda.is_initialized()
    out = distributed.run(_cuda_in_worker, (), num_processes=2)
    assert out["processes"] == 2 and out["device"] == "cuda:0" and out["sum"] == 2.0


def _qlora_checkpointing_ddp(folder: str) -> dict:
    from stsnb.models.loading import LoraSettings, load_encoder

    encoder = load_encoder(
        folder,
        template='This sentence : "*sent_0*" means something',
        quantize_4bit=True,
        lora=LoraSettings(r=8, alpha=16),
        gradient_checkpointing=True,
    )
    texts = [f"sentence {i} about a guitar" for i in range(16)]

    def loss_fn(model, batch):
        return model(list(batch)).float().pow(2).mean()

    result = fit(encoder, loss_fn, texts, TrainConfig(batch_size=4, lr=1e-3, mixed_precision="bf16", progress=False))
    return {"steps": result.steps, "change": result.weight_change}


def test_qlora_with_checkpointing_under_ddp_on_two_gpus(tiny_mistral):
    """Issue: reentrant checkpointing under DDP failed with "Expected to mark a variable ready only once"."""
    if torch.cuda.device_count() < 2:
        pytest.skip("needs 2 GPUs")
    from stsnb.training import distributed

    out = distributed.run(_qlora_checkpointing_ddp, (str(tiny_mistral),), num_processes=2)
    assert out["steps"] == 2 and out["change"] > 0


def test_evaluation_runs_in_bf16_on_the_gpu_and_returns_fp32(tiny_mistral):
    encoder = models.load_encoder(str(tiny_mistral), pooling="mean")
    with models.evaluation_precision(encoder.device):
        assert torch.get_autocast_dtype("cuda") == torch.bfloat16 or not torch.cuda.is_bf16_supported()
    vectors = encoder.encode(["a man plays a guitar", "a dog runs"])
    assert vectors.dtype == torch.float32 and vectors.device.type == "cpu" and torch.isfinite(vectors).all()


def test_a_hicl_step_and_the_efficiency_probe_on_the_gpu(tiny_mistral, data_dir):
    """Issue: HiCL's segment ids were built on the CPU and met GPU tensors in the local loss; the efficiency probe
    timed on a hard-coded CPU device and passed dropout= to a BERT."""
    from stsnb.papers import hicl

    encoder = models.load_encoder(str(tiny_mistral), pooling="mean", dropout=0.1)
    assert encoder.device.type == "cuda"
    model = hicl.training.ContrastiveModel(
        encoder,
        "simcse",
        hicl.training.HiclSettings(enabled=True, slice_length=8),
        hicl.objectives.ObjectiveSettings(alpha=0.15),
    )
    sentences = ["a short sentence", "a much longer sentence about a man who plays the guitar on a stage", "a dog"]
    examples, _ = hicl.training.make_examples(encoder.tokenizer, sentences, 64, "simcse")
    loss = model(examples)
    assert torch.isfinite(loss) and loss.device.type == "cuda"
    loss.backward()
    row = hicl.efficiency.step_cost(str(tiny_mistral), 64, "segments", batch_size=2, repeats=1, slice_length=16)
    assert row["device"].startswith("cuda") and row["seconds"] > 0


def test_the_hand_step_cell_leaves_the_gpu_as_it_found_it(tiny_mistral):
    """Notebook 10's hand step: a 4-bit copy with LoRA on the kernel's GPU, one step, ``del`` and
    ``training_step.release_memory``: the memory the process holds (allocated and reserved) is what it was before
    (the second time: the first one leaves libraries' one-off workspaces)."""
    from stsnb.training import training_step

    def hand_step() -> None:
        demo = models.load_encoder(
            str(tiny_mistral), quantize_4bit=True, lora=models.LoraSettings(r=8, alpha=16), gradient_checkpointing=True
        )
        optimizer = torch.optim.AdamW(training_step.trainable(demo), lr=1e-4)
        loss = demo(["A man plays a guitar.", "A dog runs."]).float().pow(2).mean()
        loss.backward()
        optimizer.step()
        del demo, optimizer, loss
        training_step.release_memory()

    hand_step()
    before = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
    hand_step()
    assert (torch.cuda.memory_allocated(), torch.cuda.memory_reserved()) == before
