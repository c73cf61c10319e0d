"""``stsnb run --check``: a plan checked before anything runs (types, GPU count, model ids, peak memory).

- **Types**: every plan value against the default of the notebook's parameter (read from its ``parameters`` cell
  by papermill): a bool for a bool, an int for an int (a float parameter takes an int too), a string, a list, a
  mapping. ``null`` is accepted where the default is None or the parameter's comment documents it ("None: ...").
- **GPUs**: ``num_processes`` at most the GPUs given (``--gpus``).
- **Model ids**: values of parameters named like ``backbone``/``model`` are packaged names, local folders or
  well-formed Hub ids (``owner/name``).
- **Memory**: notebooks that train report an estimate of peak memory per GPU (``stsnb.gpu.memory_estimate``) through
  their paper's memory plan, ``stsnb.papers.<paper>.memory:memory_plan``, registered in the entry-point group
  ``stsnb.memory_plans`` (pyproject.toml: notebook name -> function), so this generic module knows no paper; a plan
  that does not fit ``--gpu-memory`` fails. A memory plan returns one ``MemoryPlanRow`` per training setting: the
  model, the sequences one GPU holds in a forward pass, their padded length and how the weights are held. Where a
  batch is padded to its longest member, the length is measured on the real data (``measured_length``) and capped
  at ``max_length``; without a data folder the cap is used (an upper bound).
- **Batches, time and disk**: each training notebook's fits (its paper's ``costs.fit_plan``, entry-point group
  ``stsnb.fit_plans``) with their global batches shared out over the processes ``num_processes`` gives on
  ``--gpus`` (``"auto"`` resolved by ``stsnb.training.batching``), the estimated hours on ``--gpu-type`` and the
  checkpoint disk (``stsnb.gpu.cost_estimate``, its tables in ``stsnb.gpu.plan_costs``); with ``--gpus``, a notebook
  estimated past its plan timeout fails the check.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..training import batching
from . import cost_estimate, memory_estimate, plan_costs, worst_case
from .calibration import Calibration, calibrate_costs, calibrate_memory
from .plan_costs import (
    NotebookCost,
    batch_table,
    cost_assumptions,
    fit_cost_table,
    notebook_cost,
    notebook_cost_table,
    overhead_table,
)

HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
MODEL_PARAMETER = re.compile(r"(^|_)(backbone|backbones|model|models|encoder)($|_)")


HOW_RUN = {
    "checkpointing": "with gradient checkpointing",
    "none": "without gradient checkpointing",
    "no backward": "scoring, no backward pass",
    "auto: checkpointing": 'with gradient checkpointing, as "auto" chose',
    "auto: none": 'without gradient checkpointing, as "auto" chose',
    "auto": 'gradient checkpointing "auto", decided by the GPU at run time',
}


@dataclass(frozen=True)
class MemoryRow:
    """One training setting of a notebook: where it runs and its estimated peak per GPU, without and with
    gradient checkpointing, and which of the two the plan uses."""

    notebook: str
    label: str
    model: str
    per_gpu_sequences: int
    length: int
    without_checkpointing_gib: float
    with_checkpointing_gib: float
    checkpointing: bool
    backward: bool = True  # False: a scoring row (no backward pass, so checkpointing changes nothing)
    auto: bool = False  # gradient_checkpointing = "auto": ``checkpointing`` as resolved for --gpu-memory (resolve_auto)
    resolved: bool = False  # whether a GPU size decided it (without --gpu-memory "auto" stays open)
    worst_case: bool = False  # a length took its cap: the texts it is measured on were missing

    @property
    def used_gib(self) -> float:
        return self.with_checkpointing_gib if self.checkpointing else self.without_checkpointing_gib

    @property
    def used(self) -> str:
        if not self.backward:
            return "no backward"
        plain = "checkpointing" if self.checkpointing else "none"
        if self.auto:
            return f"auto: {plain}" if self.resolved else "auto"
        return plain


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return ...  # an expression (not a literal): its type is not checked


def type_problem(name: str, value: Any, default_text: str, help_text: str) -> str | None:
    """Why ``value`` does not fit the parameter whose default is ``default_text`` (None when it fits)."""
    default = _literal(default_text)
    if default is ...:
        return None
    if value is None:
        documented = re.search(r"\bNone\b|\bnull\b", help_text or "")
        return None if default is None or documented else f"{name}: null, but the notebook's default is {default_text}"
    if default is None:
        return None
    expected: tuple[type, ...]
    if isinstance(default, bool):
        expected = (bool,)
    elif isinstance(default, int):
        expected = (int,)
    elif isinstance(default, float):
        expected = (int, float)
    elif isinstance(default, str):
        expected = (str,)
    elif isinstance(default, list | tuple):
        expected = (list, tuple)
    elif isinstance(default, dict):
        expected = (dict,)
    else:
        return None
    if isinstance(value, str) and str not in expected and f'"{value}"' in (help_text or ""):
        return None  # a string the parameter's comment documents in quotes (num_processes: "auto")
    if isinstance(value, bool) and bool not in expected:
        return f"{name}: {value!r} is a bool, the notebook's default {default_text} is not"
    if not isinstance(value, expected):
        names = " or ".join(t.__name__ for t in expected)
        return f"{name}: {value!r} is a {type(value).__name__}, expected {names} (the default is {default_text})"
    return None


def _model_values(name: str, value: Any) -> list[str]:
    if not MODEL_PARAMETER.search(name):
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, str)]
    if isinstance(value, Mapping):
        return [k for k in value if isinstance(k, str)]
    return []


def model_id_problem(name: str, model: str) -> str | None:
    """A packaged name, an existing folder and ``owner/name`` pass; anything else is named."""
    from ..models.loading import KNOWN_MODELS

    if model in KNOWN_MODELS or Path(model).expanduser().is_dir() or HUB_ID.match(model):
        return None
    if "/" not in model and re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", model):
        return None  # a legacy Hub id without an owner (bert-base-uncased, roberta-base)
    return f"{name}: {model!r} is neither a packaged model ({', '.join(sorted(KNOWN_MODELS))}), a folder nor owner/name"


# (label, model, setup) of one training setting of a notebook, as its paper's memory plan sees it
MemoryPlanRow = tuple[str, str, memory_estimate.TrainingSetup | memory_estimate.ScoringSetup]


def activation_bytes(params: Mapping[str, Any]) -> int:
    """Activation bytes: the papers train in bf16 on GPUs (fp32 only on the CPU)."""
    return 2 if str(params.get("profile", "")) in ("paper", "rehearsal") else 4


def measured_length(texts_of: Callable[[], Sequence[str]], tokenizer: str, batch: int, cap: int) -> int:
    """``longest_in_batch`` of the texts ``texts_of()`` reads, at most ``cap``; ``cap`` where the data is missing."""
    from .. import data as data

    try:
        texts = texts_of()
    except (data.DataError, OSError) as err:
        worst_case.note(f"a length at its cap {cap} ({str(err).splitlines()[0][:120]})")
        return cap
    return min(cap, longest_in_batch(texts, tokenizer, batch))


def measured_or_cap(
    texts_of: Callable[[], Sequence[str]], tokenizer: str, batch: int, cap: int, sample: int = 4000
) -> tuple[int, bool]:
    """``(measured_length(...), True)`` on a fixed draw of at most ``sample`` of the texts where the data folder
    holds them, else ``(cap, False)``: the cost tables say which."""
    import random

    from .. import data as data

    try:
        texts = list(texts_of())
    except (data.DataError, OSError) as err:
        worst_case.note(f"a length at its cap {cap} ({str(err).splitlines()[0][:120]})")
        return cap, False
    if len(texts) > sample:
        texts = random.Random(0).sample(texts, sample)
    return min(cap, longest_in_batch(texts, tokenizer, batch)), True


def memory_hook(notebook: str) -> Callable[[Mapping[str, Any]], list[MemoryPlanRow]] | None:
    """The function registered for ``notebook`` in the entry-point group ``stsnb.memory_plans`` (None: the notebook
    trains nothing)."""
    from importlib.metadata import entry_points

    for entry in entry_points(group="stsnb.memory_plans"):
        if entry.name == notebook:
            return entry.load()
    return None


def memory_rows(notebook: str, params: Mapping[str, Any]) -> list[MemoryRow]:
    """Estimated peak per GPU of every training setting ``notebook`` runs with ``params`` (its defaults with the
    plan's values over them)."""
    hook = memory_hook(notebook)
    if hook is None:
        return []
    rows = []
    auto = params.get("gradient_checkpointing") == "auto"  # the notebook resolves it from these rows (resolve_auto)
    for label, model, setup in hook(params):
        shape = plan_costs.model_shape(model)
        if shape is None:
            continue
        if isinstance(setup, memory_estimate.ScoringSetup):
            total = memory_estimate.scoring_estimate(shape, setup).total / memory_estimate.GIB
            rows.append(MemoryRow(notebook, label, model, setup.sequences, setup.length, total, total, False, False))
            continue
        plain = memory_estimate.estimate(shape, _with(setup, gradient_checkpointing=False)).total
        checkpointed = memory_estimate.estimate(shape, _with(setup, gradient_checkpointing=True)).total
        rows.append(
            MemoryRow(
                notebook,
                label,
                model,
                setup.sequences,
                setup.length,
                plain / memory_estimate.GIB,
                checkpointed / memory_estimate.GIB,
                setup.gradient_checkpointing,
                auto=auto,
            )
        )
    return rows


def resolve_auto(rows: Sequence[MemoryRow], gpu_gib: float | None) -> list[MemoryRow]:
    """One notebook's rows with ``gradient_checkpointing = "auto"`` decided as the notebook decides it at run time
    (``memory_estimate.auto_checkpointing``: on for every setting where any one without it does not fit
    ``gpu_gib``); without ``gpu_gib`` left open, the figure used being the one without checkpointing."""
    from dataclasses import replace

    auto = [row for row in rows if row.auto and row.backward]
    if not auto:
        return list(rows)
    if gpu_gib is None:
        return [replace(row, checkpointing=False) if row in auto else row for row in rows]
    on = memory_estimate.auto_checkpointing(
        (row.without_checkpointing_gib * memory_estimate.GIB for row in auto), gpu_gib
    )
    return [replace(row, checkpointing=on, resolved=True) if row in auto else row for row in rows]


def _with(setup: memory_estimate.TrainingSetup, **changes) -> memory_estimate.TrainingSetup:
    from dataclasses import replace

    return replace(setup, **changes)


def notebook_problems(
    notebook: str,
    overrides: Mapping[str, Any],
    declared: Mapping[str, Mapping[str, Any]],
    gpus: int | None,
) -> list[str]:
    """Type, GPU-count and model-id problems of one notebook's plan values."""
    problems = []
    for name, value in overrides.items():
        info = declared.get(name)
        if info is None:
            continue  # undeclared parameters are plans.check_plan's to report
        problem = type_problem(name, value, str(info.get("default", "")), str(info.get("help", "")))
        if problem:
            problems.append(problem)
        for model in _model_values(name, value):
            problem = model_id_problem(name, model)
            if problem:
                problems.append(problem)
    processes = overrides.get("num_processes", _literal(str(declared.get("num_processes", {}).get("default", "1"))))
    if processes == batching.AUTO:
        pass  # every GPU present that divides the notebook's global batches (``batching.resolve_processes``)
    elif gpus is not None and isinstance(processes, int) and processes > max(gpus, 1):
        problems.append(f"num_processes: {processes} processes need {processes} GPUs, --gpus gives {gpus}")
    return [f"{notebook}: {p}" for p in problems]


def effective_params(declared: Mapping[str, Mapping[str, Any]], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The notebook's literal defaults with the plan's values over them."""
    values = {name: _literal(str(info.get("default", ""))) for name, info in declared.items()}
    values = {k: v for k, v in values.items() if v is not ...}
    values.update(overrides)
    return values


def memory_table(rows: Sequence[MemoryRow], gpu_gib: float | None) -> str:
    """The memory rows as a Markdown table (the table in docs/gpu-server.md comes from this)."""
    lines = [
        "| notebook | training | model | sequences per GPU x length | no checkpointing | checkpointing | used |"
        + (f" fits {gpu_gib:g} GiB |" if gpu_gib else ""),
        "|---|---|---|---|---:|---:|---|" + ("---|" if gpu_gib else ""),
    ]
    for row in rows:
        fits = ""
        if gpu_gib:
            fits = " yes |" if memory_estimate.fits(row.used_gib * memory_estimate.GIB, gpu_gib) else " **no** |"
        mark = plan_costs.WORST_CASE_MARK if row.worst_case else ""
        lines.append(
            f"| {row.notebook} | {row.label} | {row.model} | {row.per_gpu_sequences} x {row.length}{mark} | "
            f"{row.without_checkpointing_gib:.1f} GiB | {row.with_checkpointing_gib:.1f} GiB | "
            f"{row.used} |{fits}"
        )
    return "\n".join(lines)


@functools.lru_cache(maxsize=32)
def token_lengths(texts: tuple[str, ...], tokenizer_model: str) -> tuple[int, ...]:
    """Each text's token count (special tokens included) with ``tokenizer_model``'s tokenizer, cached: a check
    measures the same texts for several fits."""
    from transformers import AutoTokenizer

    from ..models.loading import resolve

    tokenizer = AutoTokenizer.from_pretrained(resolve(tokenizer_model).path)
    return tuple(len(ids) for ids in tokenizer(list(texts), add_special_tokens=True)["input_ids"])


def longest_in_batch(texts: Sequence[str], tokenizer_model: str, batch: int, draws: int = 200, seed: int = 0) -> int:
    """The 95th percentile, over ``draws`` random batches of ``batch`` texts, of the longest text's token count:
    what a batch padded to its longest member usually costs. ``tokenizer_model`` is a packaged model whose
    tokenizer stands in for the paper's (SmolLM2's BPE for the decoders, MiniLM's = bert-base-uncased's
    WordPiece for the encoders)."""
    import numpy as np

    if not texts:
        raise ValueError("longest_in_batch needs texts")
    lengths = np.array(token_lengths(tuple(texts), tokenizer_model))
    rng = np.random.default_rng(seed)
    size = min(batch, len(lengths))
    longest = [lengths[rng.choice(len(lengths), size=size, replace=False)].max() for _ in range(draws)]
    return int(np.percentile(longest, 95))


LAYOUT_OVERHEAD_MARGIN = 2  # a layout's notebooks stay within their timeouts at this x the assumed per-step overhead
_OVERHEAD_HEAD = (
    "Hours at the assumed per-step overhead and at 2x and 3x it (nothing has measured it on a GPU yet; "
    "`stsnb gpu-check` does, and --calibration applies it):"
)


@dataclass
class CheckReport:
    """What ``stsnb run --check`` found: problems (the check fails when there are any) and the memory rows."""

    profile: str
    problems: list[str]
    memory: list[MemoryRow]
    gpus: int | None
    gpu_memory: float | None
    costs: list[NotebookCost] = field(default_factory=list)
    gpu_type: str = cost_estimate.DEFAULT_GPU
    calibration: Calibration | None = None
    no_data: str | None = None  # why there is no data folder (every measured length is then its cap)
    layout: Any = None  # stsnb.gpu.layout.Layout for --gpus (None: no --gpus, or nothing fits)
    notebooks: list[str] = field(default_factory=list)  # the plan's, in its order

    @property
    def ok(self) -> bool:
        return not self.problems

    def text(self) -> str:
        lines = [
            f"stsnb run --check --profile {self.profile}: " + ("ok" if self.ok else f"{len(self.problems)} problems")
        ]
        worst = [c.notebook for c in self.costs if c.worst_case] + [r.notebook for r in self.memory if r.worst_case]
        if self.no_data or worst:
            lines.append(
                (f"  NO DATA FOLDER ({self.no_data}): " if self.no_data else "  Texts missing from the data folder: ")
                + "every length measured on its texts is its cap, an upper bound; the estimates of "
                + ", ".join(dict.fromkeys(worst))
                + f" are marked{plan_costs.WORST_CASE_MARK}. `stsnb data fetch` (--paper for the paper plan's "
                "corpora) builds it."
            )
        lines += [f"  - {p}" for p in self.problems]
        if self.calibration is not None:
            lines += ["", *self.calibration.describe()]
        if self.memory:
            lines += [
                "",
                "Estimated peak memory per GPU (stsnb.gpu.memory_estimate):",
                "",
                memory_table(self.memory, self.gpu_memory),
            ]
        if self.costs:
            lines += ["", "Global batch per fit (stsnb.training.batching):", "", batch_table(self.costs)]
            lines += ["", "Estimated time and checkpoint disk per fit (stsnb.gpu.cost_estimate):", ""]
            lines += [fit_cost_table(self.costs), "", notebook_cost_table(self.costs, self.gpus, self.gpu_type), ""]
            lines += cost_assumptions(self.costs, self.gpu_type)
            lines += ["", _OVERHEAD_HEAD, "", overhead_table(self.costs)]
        if self.gpus:
            gpus = f"{self.gpus} GPU" + ("s" if self.gpus != 1 else "")
            lines += ["", f"A --parallel layout on {gpus} (stsnb.gpu.layout):", "", self._layout_text()]
        return "\n".join(lines)

    def _layout_text(self) -> str:
        rule = (
            "each notebook where its measured hours stay within its timeout"
            if self.calibration is not None
            else f"each notebook only where its hours at {LAYOUT_OVERHEAD_MARGIN}x the assumed per-step overhead stay "
            "within its timeout"
        )
        from .layout import notebook_jobs

        used = {c.notebook: max([f.split.processes for f in c.fits] or [1]) for c in self.costs}
        timeouts = {c.notebook: c.timeout for c in self.costs}
        jobs = notebook_jobs(used, self.notebooks or list(used), timeouts, self.profile)
        per_notebook = (
            f"\n\nOr one Slurm job per training notebook, each with the GPUs it uses of {self.gpus} (a cluster runs "
            "them side by side on its nodes; the notebooks without training go with the smallest):\n\n```bash\n"
            + "\n".join(jobs)
            + "\n```"
        )
        if self.layout is None:
            return f"No layout places {rule} on these GPUs.{per_notebook}"
        return f"On one node, placed {rule}:\n\n{self.layout.markdown(self.profile)}{per_notebook}"

    def command(self) -> str:
        """The ``stsnb run --check ... --markdown`` command that prints this report's tables."""
        words = ["stsnb run --check", f"--profile {self.profile}"]
        words += [f"--gpus {self.gpus}"] if self.gpus is not None else []
        words += [f"--gpu-memory {self.gpu_memory:g}"] if self.gpu_memory is not None else []
        words += [f"--gpu-type {self.gpu_type}"] if self.gpu_type != cost_estimate.DEFAULT_GPU else []
        return " ".join([*words, "--markdown"])

    def markdown(self) -> str:
        """The tables docs/gpu-server.md holds, each between comments naming :meth:`command` (``--markdown``): the
        memory per GPU, and the time and checkpoint disk per notebook."""
        blocks = []
        if self.memory:
            blocks.append(generated_block(self.command(), "memory", memory_table(self.memory, self.gpu_memory)))
        if self.costs:
            table = notebook_cost_table(self.costs, self.gpus, self.gpu_type)
            blocks.append(generated_block(self.command(), "time and disk", table))
            blocks.append(generated_block(self.command(), "overhead", overhead_table(self.costs)))
        if self.gpus:
            blocks.append(generated_block(self.command(), "layout", self._layout_text()))
        return "\n\n".join(blocks)


def generated_block(command: str, what: str, table: str) -> str:
    """``table`` between the two comments that say it is generated and by which command (docs/gpu-server.md)."""
    return f"<!-- generated by `{command}`: {what} -->\n{table}\n<!-- end of generated table -->"


def check(
    plan,
    notebooks_dir: Path,
    gpus: int | None = None,
    gpu_memory: float | None = None,
    gpu_type: str = cost_estimate.DEFAULT_GPU,
    calibration: Calibration | None = None,
) -> CheckReport:
    """Every check of the module docstring on a loaded plan (``plans.load_plan``); parameters a notebook does not
    declare are reported too (``plans.check_plan``), a memory estimate over ``gpu_memory`` GiB is a problem, and so
    is, with ``gpus``, an estimated time past the notebook's timeout on ``gpus`` GPUs of ``gpu_type``. With a
    ``calibration`` (``stsnb gpu-check``'s report) the measured ratios replace the assumptions. With ``gpus``, a
    ``--parallel`` layout (``stsnb.gpu.layout``). Estimates whose texts were missing are marked as worst cases."""
    import papermill

    from ..runs.plans import PlanError, check_plan

    problems: list[str] = []
    try:
        check_plan(plan, notebooks_dir)
    except PlanError as err:
        problems += [line.strip() for line in str(err).splitlines()[1:]]
    rows: list[MemoryRow] = []
    costs: list[NotebookCost] = []
    params_of: dict[str, dict[str, Any]] = {}
    for name, overrides in plan.notebooks.items():
        notebook = Path(notebooks_dir) / f"{name}.ipynb"
        if not notebook.is_file():
            continue
        declared = papermill.inspect_notebook(str(notebook))
        problems += notebook_problems(name, overrides, declared, gpus)
        params = params_of[name] = effective_params(declared, overrides)
        with worst_case.collecting() as missed:
            cost, notebook_rows = _notebook_estimates(name, params, gpus, gpu_type, plan, calibration, problems)
        worst = bool(missed) or any(not f.row.tokens_measured for f in (cost.fits if cost else []))
        if cost is not None:
            costs.append(replace(cost, worst_case=worst))
        notebook_rows = [replace(row, worst_case=worst) for row in resolve_auto(notebook_rows, gpu_memory)]
        rows += notebook_rows
        if gpu_memory:
            for row in notebook_rows:
                if not memory_estimate.fits(row.used_gib * memory_estimate.GIB, gpu_memory):
                    problems.append(
                        f"{name}: {row.label} on {row.model} needs about {row.used_gib:.1f} GiB per GPU "
                        f"({HOW_RUN[row.used]}), more than "
                        f"{gpu_memory:g} GiB less the CUDA context and 10%"
                    )
    report = CheckReport(plan.profile, problems, rows, gpus, gpu_memory, costs, gpu_type, calibration)
    report.no_data, report.notebooks = _missing_data_folder(), list(plan.notebooks)
    if gpus:
        report.layout = plan_layout(plan, costs, params_of, gpus, gpu_type, gpu_memory, calibration)
    return report


def _notebook_estimates(name, params, gpus, gpu_type, plan, calibration, problems) -> tuple[Any, list[MemoryRow]]:
    """One notebook's cost (calibrated; a time past its timeout is a problem) and memory rows (``num_processes``
    as its cost resolved it)."""
    try:
        cost = notebook_cost(name, params, gpus, gpu_type, plan.timeouts.get(name))
    except batching.BatchError as err:
        problems.append(f"{name}: {err}")
        cost = None
    if cost is not None and calibration is not None:
        cost = calibrate_costs([cost], calibration)[0]
    if cost is not None:
        if "num_processes" in params:
            params = {**params, "num_processes": cost.processes}  # "auto" as resolved for --gpus
        if gpus is not None and cost.over_timeout:
            problems.append(
                f"{name}: estimated {cost.hours:.1f} h on {gpus} x {gpu_type}, more than its plan timeout of "
                f"{cost.timeout / 3600:g} h"
            )
    rows = memory_rows(name, params)
    return cost, calibrate_memory(rows, calibration) if calibration is not None else rows


def _missing_data_folder() -> str | None:
    """Why there is no data folder (``stsnb.data.resolve_data_dir``'s error), None when there is one."""
    from .. import data as data

    try:
        data.resolve_data_dir()
    except data.DataError as err:
        return str(err).splitlines()[0]
    return None


def plan_layout(plan, costs, params_of, gpus: int, gpu_type: str, gpu_memory: float | None, calibration) -> Any:
    """``stsnb.gpu.layout.best_layout`` for the plan's notebooks on ``gpus`` GPUs: each notebook priced on each group
    size (calibrated like the check), a multi-process one only where its memory rows fit the GPU, and each only where
    its hours with the per-step overhead at :data:`LAYOUT_OVERHEAD_MARGIN` times the assumed one stay within its
    timeout (the assumed overhead is the largest unmeasured term; with a calibration, its measured hours)."""
    from . import layout

    memory = gpu_memory or layout.GPU_MEMORY_GIB.get(gpu_type)
    by_name = {cost.notebook: cost for cost in costs}
    known: dict[tuple[str, int], tuple[float, int] | None] = {}

    def hours_at(name: str, size: int) -> tuple[float, int] | None:
        if (name, size) in known:
            return known[name, size]
        cost, params = by_name.get(name), params_of.get(name, {})
        if cost is None:
            known[name, size] = (0.0, 0)  # a notebook without fits: minutes
            return known[name, size]
        wanted = params.get("num_processes")
        if isinstance(wanted, int) and not isinstance(wanted, bool) and wanted > size:
            known[name, size] = None  # a fixed process count needs that many GPUs
            return None
        priced = notebook_cost(name, params, size, gpu_type, cost.timeout, rows=cost.rows)
        if calibration is not None:
            priced = calibrate_costs([priced], calibration)[0]
        used = max([f.split.processes for f in priced.fits] + [wanted if isinstance(wanted, int) else 1])
        fits = True
        if used > 1 and memory:
            sized = {**params, "num_processes": priced.processes}
            fits = all(
                memory_estimate.fits(row.used_gib * memory_estimate.GIB, memory)
                for row in resolve_auto(memory_rows(name, sized), memory)
            )
        margin = priced.hours if calibration is not None else priced.hours_at_overhead(LAYOUT_OVERHEAD_MARGIN)
        within = cost.timeout is None or margin * 3600 <= cost.timeout
        known[name, size] = (priced.hours, used) if fits and within else None
        return known[name, size]

    return layout.best_layout(list(plan.notebooks), hours_at, gpus, plan.timeouts)
