"""What Table 1 (and Tables 5-6) fine-tune on: the paper's NLI task (Section 4.1) or a labelled STS analogue.

The paper trains a raw encoder on SNLI + MultiNLI with labels contradiction / neutral / entailment -> 0 / 1 / 2 and
compares cross entropy (a 3-way classifier) with regression losses (one output). Its claim is about the *labels*:
a label order that follows similarity, learnt by regression with a zero-gradient buffer of half-width ``x0``
around each label (Eq. 1-2), beats classification that ignores the order.

The ``"sts"`` task asks the same question where a small raw backbone can learn within minutes: STS-B train +
SICK-R train, de-duplicated against every test set (Appendix A), gold scores on 0-5. Regression losses learn the
score itself; cross entropy learns the score rounded to the nearest integer as one of 6 classes (0 ... 5), so the
classifier again ignores that 4 is closer to 5 than to 0. Labels one apart, as in NLI (``d = 1``), so Table 2's
``x0 <= d / 2`` keeps its meaning. It is an analogue, not the paper's setting: although the encoder sees the very
kind of supervision it is scored on, our levels sit far *below* the paper's NLI-trained ones (the committed cpu
run's small raw backbone, trained for minutes; notebook 20 prints the deltas); differences between losses are what
it can speak to.

**The analogue's confound, and the task that removes it.** On NLI both objectives see the same three labels, so
Table 1's main claim (Smooth K2 beats cross entropy, Section 4.1) isolates the objective: a regression that knows the
labels' order (Section 3.1) against a classifier that does not. On the ``"sts"`` task they do not: regression learns
the continuous score, cross entropy its 6 rounded classes, so "order-aware objective" is confounded with label
resolution. The ``"sts_rounded"`` task gives regression the very class ids cross entropy learns (the score rounded,
``Table1Task.class_ids``, as a number 0 .. 5): the same pairs and the same label information, only the objective
differs. Cross entropy trains identically on both tasks (it rounds the targets itself). What it can show: whether
the order-aware objective beats the order-blind one on six ordered STS classes, on this backbone and scale. What it
cannot: the paper's NLI (three classes of another kind of label) and its levels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import torch
from torch import Tensor

from ... import data as stsdata
from .model import classify
from .training_data import NLI_RANGE, STS_RANGE, TrainingPair

Targets = Literal["classes", "score", "rounded"]  # what a regression loss of a task learns (``Table1Task.targets``)


@dataclass(frozen=True)
class Table1Task:
    """A training task of Table 1: its name, label range (the clamp of Section 3.3 and the classes' span), the
    class names of cross entropy (labels ``0 .. classes - 1``, one apart), a phrase for printed text and what its
    regression losses learn (``targets``): "classes", the labels are the class ids already (NLI's 0 / 1 / 2);
    "score", a finer score than the classes (the STS analogue's 0-5 gold); "rounded", that score rounded to cross
    entropy's class ids (:meth:`training_pairs`)."""

    name: str
    label_range: tuple[float, float]
    class_names: tuple[str, ...]
    description: str
    targets: Targets = "classes"

    @property
    def classes(self) -> int:
        return len(self.class_names)

    @property
    def same_labels(self) -> bool:
        """Whether regression and cross entropy learn the same label information (then Table 1's regression vs
        classification isolates the objective; with "score" it is confounded with label resolution)."""
        return self.targets != "score"

    def class_ids(self, targets: Tensor) -> Tensor:
        """Cross entropy's class of each target: the nearest label (NLI targets are already 0 / 1 / 2)."""
        return targets.round().clamp(0, self.classes - 1).long()

    def training_pairs(self, pairs: Sequence[TrainingPair]) -> list[TrainingPair]:
        """The pairs every loss of this task trains on: as given, or (``targets == "rounded"``) with each target
        replaced by its class id as a number (``class_ids`` of the float32 targets cross entropy's loss rounds), the
        label cross entropy learns from the same pair."""
        pairs = list(pairs)
        if self.targets != "rounded" or not pairs:
            return pairs
        ids = self.class_ids(torch.tensor([p.target for p in pairs])).tolist()
        return [replace(p, target=float(i)) for p, i in zip(pairs, ids, strict=True)]


NLI_TASK = Table1Task("nli", NLI_RANGE, tuple(stsdata.NLI_LABELS), "NLI fine-tuning (Section 4.1)")
STS_TASK = Table1Task(
    "sts",
    STS_RANGE,
    tuple(f"score {i}" for i in range(6)),
    "fine-tuning on de-duplicated STS-B + SICK-R labels (the STS analogue)",
    "score",
)
STS_ROUNDED_TASK = replace(
    STS_TASK,
    name="sts_rounded",
    description="fine-tuning on de-duplicated STS-B + SICK-R labels rounded to 6 classes (the STS analogue, "
    "both objectives on the same labels)",
    targets="rounded",
)
TASKS: dict[str, Table1Task] = {task.name: task for task in (NLI_TASK, STS_TASK, STS_ROUNDED_TASK)}


def table1_task(name: str) -> Table1Task:
    """The task named by a notebook's ``table1_task`` parameter."""
    if name not in TASKS:
        raise ValueError(f"table1_task must be one of {sorted(TASKS)}, got {name!r}")
    return TASKS[name]


def same_labels_task(task: Table1Task) -> Table1Task:
    """The task whose regression learns the labels cross entropy learns on ``task``'s pairs: ``task`` itself where
    they already agree (NLI), its rounded twin where regression learns a finer score ("sts" -> "sts_rounded")."""
    if task.same_labels:
        return task
    twins = [t for t in TASKS.values() if t.targets == "rounded" and t.class_names == task.class_names]
    if not twins:
        raise ValueError(f"no task trains regression on the class ids of {task.name!r}")
    return twins[0]


def heldout_accuracy(outputs: Tensor, heldout: Sequence[TrainingPair], task: Table1Task = NLI_TASK) -> float:
    """Accuracy (%) of head outputs read as classes on held-out pairs (Section 3.1): a regression prediction rounds
    to the nearest label within the task's range, a classifier takes its argmax; the gold is ``task.class_ids``.
    NaN for no held-out pairs."""
    if not heldout:
        return float("nan")
    gold = task.class_ids(torch.tensor([p.target for p in heldout]))
    return 100 * (classify(outputs, task.classes) == gold).float().mean().item()


def majority_accuracy(heldout: Sequence[TrainingPair], task: Table1Task = NLI_TASK) -> float:
    """Accuracy (%) of always guessing the held-out pairs' most common class: the floor a trained head's accuracy
    (:func:`heldout_accuracy`) is read against. NaN for no held-out pairs."""
    if not heldout:
        return float("nan")
    gold = task.class_ids(torch.tensor([p.target for p in heldout]))
    return max(class_shares(gold, task.classes))


def accuracy_text(accuracy: float, majority: float, task: Table1Task = NLI_TASK) -> str:
    """ "held-out STS acc 45.0%", with the surprise said where it is no better than always guessing the most common
    class: "held-out STS acc 31.0% (not above always guessing the most common class, 36.0%)"."""
    text = f"held-out {task.name.upper()} acc {accuracy:.1f}%"
    if accuracy <= majority:
        text += f" (not above always guessing the most common class, {majority:.1f}%)"
    return text


def class_shares(classes: Tensor, n_classes: int) -> list[float]:
    """The share (%) of each class 0 .. ``n_classes - 1`` among ``classes`` (class ids)."""
    if classes.numel() == 0:
        return [float("nan")] * n_classes
    counts = torch.bincount(classes.long().flatten(), minlength=n_classes)[:n_classes]
    return (100 * counts.float() / classes.numel()).tolist()


def heldout_classes_line(outputs: Tensor, heldout: Sequence[TrainingPair], task: Table1Task = NLI_TASK) -> str:
    """The classes a head's held-out outputs are read as (``classify``: regression rounded to the nearest label,
    clipped to the range; a classifier's argmax), as shares beside the gold classes' and the accuracy: where a
    regression head's numbers sit relative to the labels, which decides its accuracy (Section 3.1)."""
    gold = task.class_ids(torch.tensor([p.target for p in heldout]))
    predicted = classify(outputs, task.classes)
    shares = class_shares(predicted, task.classes)
    gold_shares = class_shares(gold, task.classes)
    right = 100 * (predicted == gold).float().mean().item() if len(heldout) else float("nan")
    read = " ".join(f"{i}:{p:.0f}%" for i, p in enumerate(shares))
    truth = " ".join(f"{i}:{g:.0f}%" for i, g in enumerate(gold_shares))
    return f"classes read {read} | gold {truth} | accuracy {right:.1f}%"
