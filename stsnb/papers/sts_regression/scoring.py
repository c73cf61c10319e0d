"""Which test pairs every model of a comparison is scored on, and how our scores line up with the paper's columns.

The paper's tables report Spearman x100 on the seven STS tasks and their plain average ("Avg."). A cheaper profile
scores a fixed sample of pairs per task (the same draw for every model, so predictions pair up for the intervals
of ``claims``) or fewer tasks; an average over fewer tasks is then named for what it is, never "avg".
"""

from __future__ import annotations

from dataclasses import dataclass

from ...evaluation import evaluate
from .reported import REPORTED


@dataclass(frozen=True)
class Evaluation(evaluate.EvalPairs):
    """``stsnb.evaluation.evaluate.EvalPairs`` whose average is named for what it is when compared with the paper's."""

    @property
    def all_seven(self) -> bool:
        return set(evaluate.parse_tasks(self.tasks)) == set(evaluate.STS_TASKS)

    def average_name(self) -> str:
        """ "avg" for the seven tasks (the paper's column), else "avg of <tasks>"."""
        return "avg" if self.all_seven else f"avg of {self.tasks}"

    def comparable(self, scores: dict[str, float]) -> dict[str, float]:
        """``scores`` with the average renamed by :meth:`average_name`, so it is compared with the paper's seven-task
        average only when it is one."""
        return {(self.average_name() if task == "avg" else task): value for task, value in scores.items()}


def compare(
    scores: dict[str, float], evaluation: Evaluation, table: str, setting: str, *, our_setting: str, note: str
) -> list[dict]:
    """``REPORTED.compare`` of the columns the paper reports for ``setting`` (none: an empty list), the note
    saying which pairs ours were scored on."""
    named = evaluation.comparable(scores)
    if not any(REPORTED.lookup(table, setting, task) for task in named):
        return []
    return REPORTED.compare(
        named, table, setting, our_setting=our_setting, note=f"{note}; ours on {evaluation.scope()}"
    )
