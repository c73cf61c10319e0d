"""HiCL's protocol switches (notebook 30): activation checkpointing in every training run, on the real MiniLM."""

from __future__ import annotations

import torch

from stsnb import models
from stsnb.papers import hicl

SENTENCES = [
    "a man plays a guitar on a small stage in front of a quiet crowd of people",
    "a dog runs across the green field",
    "the committee met on tuesday and agreed to postpone the vote until the next session of the council",
    "two women are sitting on a bench",
]


def _minilm(**settings) -> models.SentenceEncoder:
    return hicl.BackboneSettings("minilm-l6", "mean", None, False, 64, **settings).load()


def test_gradient_checkpointing_reaches_the_backbone_and_leaves_the_gradients_unchanged():
    """``gradient_checkpointing`` (notebook 30's parameter) goes through ``BackboneSettings.load``, which every
    training run of the notebook (``run_training``) uses, and changes memory, not the gradient of a +HiCL loss."""
    grads = {}
    for checkpointing in (False, True):
        encoder = _minilm(gradient_checkpointing=checkpointing)
        assert models.activation_checkpointing(encoder.backbone) is checkpointing
        model = hicl.ContrastiveModel(
            encoder, "simcse", hicl.HiclSettings(True, 8), hicl.ObjectiveSettings(alpha=0.15)
        ).train()
        examples, _ = hicl.make_examples(encoder.tokenizer, SENTENCES, 64, "simcse")
        torch.manual_seed(1)  # the same dropout masks (non-reentrant checkpointing replays the RNG state)
        model(examples).backward()
        grads[checkpointing] = encoder.backbone.encoder.layer[0].attention.self.query.weight.grad.clone()
    assert grads[False].abs().sum() > 0
    torch.testing.assert_close(grads[True], grads[False], rtol=1e-5, atol=1e-7)
