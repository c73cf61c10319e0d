"""stsnb.training.training_step: the one training step the notebooks show by hand (a batch, the loss, backward, a
step)."""

from __future__ import annotations

import pytest
import torch

from stsnb.training import training_step


def test_same_dropout_replays_the_mask_and_leaves_the_callers_random_state():
    dropout = torch.nn.Dropout(0.5).train()
    x = torch.ones(200)
    torch.manual_seed(123)
    state = torch.get_rng_state()
    with training_step.same_dropout(7):
        first = dropout(x)
    with training_step.same_dropout(7):
        second = dropout(x)
    assert torch.equal(first, second) and not torch.equal(first, x)  # one mask, and dropout did act
    assert torch.equal(torch.get_rng_state(), state)  # the caller's random numbers are untouched
    with training_step.same_dropout(8):
        assert not torch.equal(dropout(x), first)  # another seed, another mask


def test_trainable_lists_only_the_parameters_that_train():
    model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 1))
    model[0].requires_grad_(False)
    assert training_step.trainable(model) == list(model[1].parameters())
    model.requires_grad_(False)
    with pytest.raises(ValueError, match="no trainable parameter"):
        training_step.trainable(model)


def test_describe_says_before_after_and_the_change():
    text = training_step.describe("Eq. 9 (1 - r)", torch.tensor(0.75), 0.5, "8 pairs")
    assert text == "Eq. 9 (1 - r) on 8 pairs: 0.7500 before the step, 0.5000 after (-0.2500)"
    timed = training_step.describe("Eq. 9 (1 - r)", 0.75, 0.5, "8 pairs", seconds=2.6)
    assert timed == text + "; 3 s"  # the cell's cost, whole seconds


def test_one_step_by_hand_lowers_the_loss_on_its_batch_and_measures_the_step_alone():
    """The notebooks' cell on a small model with dropout: the loss before, backward, one AdamW step, the loss after
    on the same batch with the same dropout mask; without a step the two measurements are equal."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Dropout(0.3), torch.nn.Linear(16, 1)).train()
    x, y = torch.randn(32, 4), torch.randn(32, 1)

    def loss_fn():
        return torch.nn.functional.mse_loss(model(x), y)

    with training_step.same_dropout(0), torch.no_grad():
        unchanged = loss_fn()
    optimizer = torch.optim.AdamW(training_step.trainable(model), lr=1e-2)
    with training_step.same_dropout(0):
        loss = loss_fn()
    assert loss.item() == unchanged.item()  # the same mask: no step, no difference
    loss.backward()
    optimizer.step()
    with training_step.same_dropout(0), torch.no_grad():
        after = loss_fn()
    assert after.item() < loss.item()


def test_release_memory_collects_what_a_deleted_model_held_and_leaves_cuda_alone():
    import weakref

    class Holder(torch.nn.Module):  # a reference cycle around a model, as peft's wrappers make
        def __init__(self):
            super().__init__()
            self.inner = torch.nn.Linear(4, 4)
            self.cycle = [self]

    holder = Holder()
    weights = weakref.ref(holder.inner.weight)
    initialised = torch.cuda.is_initialized()
    del holder
    training_step.release_memory()
    assert weights() is None  # the cycle is gone with its weights
    assert torch.cuda.is_initialized() == initialised  # nothing initialised CUDA on the way (no-op on the CPU)
