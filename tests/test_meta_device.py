"""Every tensor a loss, batch builder or pooling makes goes to the model's device: one training step of each
paper's objective with the model on the ``meta`` device, which raises as soon as a CPU tensor meets a meta one (a
CPU-only machine's stand-in for a GPU: a tensor left on the CPU fails here as it would on the first GPU).

Transformers' own mask code reads values (``.item()``), which meta tensors do not have, so the backbone here is a
small stand-in with the same interface (token ids -> ``last_hidden_state``) and the real MiniLM tokenizer: the code
under test is ours (pooling, prompts, heads, batch builders, losses), not the transformer's.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from torch import nn

from stsnb.models import loading as models

HIDDEN = 16


class StandInBackbone(nn.Module):
    """Token ids -> hidden states (an embedding and a linear layer): no data-dependent control flow."""

    def __init__(self, vocab: int):
        super().__init__()
        self.config = SimpleNamespace(hidden_size=HIDDEN)
        self.embed = nn.Embedding(vocab, HIDDEN)
        self.mix = nn.Linear(HIDDEN, HIDDEN)
        self.dropout = nn.Dropout(0.1)

    def forward(self, input_ids, attention_mask=None, **_):
        return SimpleNamespace(last_hidden_state=self.dropout(self.mix(self.embed(input_ids))))


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(models.resolve("minilm-l6").path)


def meta_encoder(tokenizer, pooling: str = "mean", template: str | None = None) -> models.SentenceEncoder:
    encoder = models.SentenceEncoder(StandInBackbone(len(tokenizer)), tokenizer, pooling, template, max_length=32)
    encoder.to("meta")
    encoder.train()
    return encoder


def assert_meta_step(loss: torch.Tensor) -> None:
    assert loss.device.type == "meta" and loss.dim() == 0
    loss.backward()  # the backward graph, too, stays on the device


def test_meta_device_catches_a_cpu_tensor():
    """The premise: a tensor made without device= next to a meta one raises."""
    with pytest.raises((RuntimeError, NotImplementedError)):
        torch.ones(2, device="meta") + torch.ones(2)


@pytest.mark.parametrize("pooling", ["mean", "cls", "last"])
def test_pooling_stays_on_the_device(tokenizer, pooling):
    encoder = meta_encoder(tokenizer, pooling)
    assert_meta_step(encoder(["a man plays a guitar", "a dog"]).pow(2).mean())


def test_sts_regression_step_on_the_device(tokenizer):
    from stsnb.papers import sts_regression as reg

    for name in ("smooth_k2", "translated_relu", "cross_entropy"):
        loss = reg.table2_loss(name)
        model = reg.SiameseModel(meta_encoder(tokenizer), "(u,v,|u-v|)", reg.head_outputs_for(loss)).to("meta")
        step = reg.pair_loss(loss, "both", (0.0, 2.0))
        batch = [reg.TrainingPair("a man plays", "a man is playing", 2.0), reg.TrainingPair("a dog", "a cat", 0.0)]
        assert_meta_step(step(model, batch))
    contrast = reg.contrast_loss()
    batch = [reg.TrainingPair("a man plays", "a man is playing", 5.0), reg.TrainingPair("a dog", "a cat", 4.5)]
    assert_meta_step(contrast(meta_encoder(tokenizer), batch))


@pytest.mark.parametrize("architecture", ["bi", "tri"])
def test_ccl_step_on_the_device(tokenizer, architecture):
    from stsnb.papers import ccl

    cls = ccl.encoders.BiEncoder if architecture == "bi" else ccl.encoders.TriEncoder
    model = cls(meta_encoder(tokenizer)).to("meta")
    quadruples = [
        ccl.quadruples.Quadruple("a man plays", "a woman sings", "the person", "the sound", 4.0, 2.0),
        ccl.quadruples.Quadruple("a dog runs", "a cat sleeps", "the animal", "the action", 5.0, 1.0),
    ]
    for objective in (ccl.objectives.qumse(), ccl.objectives.ccl(sigma=0.5, temperature=3.0)):
        assert_meta_step(ccl.objectives.loss_function(objective)(model, quadruples))


@pytest.mark.parametrize("hicl_on", [False, True])
def test_hicl_step_on_the_device(tokenizer, hicl_on):
    """Issue: the segment-to-sequence ids were built on the CPU and met the device's embeddings in Eq. 2."""
    from stsnb.papers import hicl

    encoder = meta_encoder(tokenizer)
    model = hicl.training.ContrastiveModel(
        encoder,
        "simcse",
        hicl.training.HiclSettings(enabled=hicl_on, slice_length=8),
        hicl.objectives.ObjectiveSettings(alpha=0.15),
    )
    sentences = ["a short sentence", "a much longer sentence about a man who plays the guitar on a stage", "a dog"]
    examples, _ = hicl.training.make_examples(tokenizer, sentences, 64, "simcse")
    assert_meta_step(model(examples))


def test_pcc_stage_losses_on_the_device(tokenizer):
    from stsnb.data import STSPair, Triplet
    from stsnb.papers import pcc_tuning

    encoder = meta_encoder(tokenizer, pooling="last", template='This sentence : "*sent_0*" means something')
    triplets = [Triplet("a man plays", "a man is playing", "a woman sleeps"), Triplet("a dog", "an animal", "a car")]
    assert_meta_step(pcc_tuning.training.stage1_loss()(encoder, triplets))
    pairs = [STSPair("a man plays", "a man is playing", 4.5, "STSBenchmark", "train"), STSPair("a", "b", 1.0, "x", "y")]
    pairs.append(STSPair("a dog runs", "a dog is running", 5.0, "STSBenchmark", "train"))
    assert_meta_step(pcc_tuning.training.stage2_loss()(encoder, pairs))
