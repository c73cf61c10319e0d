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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from ... import data as stsdata
from .model import classify
from .training_data import NLI_RANGE, STS_RANGE, TrainingPair


@dataclass(frozen=True)
class Table1Task:
    """A training task of Table 1: its name, label range (the clamp of Section 3.3 and the classes' span), the
    class names of cross entropy (labels ``0 .. classes - 1``, one apart) and a phrase for printed text."""

    name: str
    label_range: tuple[float, float]
    class_names: tuple[str, ...]
    description: str

    @property
    def classes(self) -> int:
        return len(self.class_names)

    def class_ids(self, targets: Tensor) -> Tensor:
        """Cross entropy's class of each target: the nearest label (NLI targets are already 0 / 1 / 2)."""
        return targets.round().clamp(0, self.classes - 1).long()


NLI_TASK = Table1Task("nli", NLI_RANGE, tuple(stsdata.NLI_LABELS), "NLI fine-tuning (Section 4.1)")
STS_TASK = Table1Task(
    "sts",
    STS_RANGE,
    tuple(f"score {i}" for i in range(6)),
    "fine-tuning on de-duplicated STS-B + SICK-R labels (the STS analogue)",
)
TASKS: dict[str, Table1Task] = {task.name: task for task in (NLI_TASK, STS_TASK)}


def table1_task(name: str) -> Table1Task:
    """The task named by a notebook's ``table1_task`` parameter."""
    if name not in TASKS:
        raise ValueError(f"table1_task must be one of {sorted(TASKS)}, got {name!r}")
    return TASKS[name]


def heldout_accuracy(outputs: Tensor, heldout: Sequence[TrainingPair], task: Table1Task = NLI_TASK) -> float:
    """Accuracy (%) of head outputs read as classes on held-out pairs (Section 3.1): a regression prediction rounds
    to the nearest label within the task's range, a classifier takes its argmax; the gold is ``task.class_ids``.
    NaN for no held-out pairs."""
    if not heldout:
        return float("nan")
    gold = task.class_ids(torch.tensor([p.target for p in heldout]))
    return 100 * (classify(outputs, task.classes) == gold).float().mean().item()
