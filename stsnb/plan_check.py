"""``stsnb run --check``: a plan checked before anything runs (types, GPU count, model ids, peak memory).

- **Types**: every plan value against the default of the notebook's parameter (read from its ``parameters`` cell
  by papermill): a bool for a bool, an int for an int (a float parameter takes an int too), a string, a list, a
  mapping. ``null`` is accepted where the default is None or the parameter's comment documents it ("None: ...").
- **GPUs**: ``num_processes`` at most the GPUs given (``--gpus``).
- **Model ids**: values of parameters named like ``backbone``/``model`` are packaged names, local folders or
  well-formed Hub ids (``owner/name``).
- **Memory**: notebooks that train report an estimate of peak memory per GPU (``stsnb.memory_estimate``) through
  their paper's memory plan, ``stsnb.papers.<paper>.memory:memory_plan``, registered in the entry-point group
  ``stsnb.memory_plans`` (pyproject.toml: notebook name -> function), so this generic module knows no paper; a plan
  that does not fit ``--gpu-memory`` fails. A memory plan returns one ``MemoryPlanRow`` per training setting: the
  model, the sequences one GPU holds in a forward pass, their padded length and how the weights are held. Where a
  batch is padded to its longest member, the length is measured on the real data (``measured_length``) and capped
  at ``max_length``; without a data folder the cap is used (an upper bound).
- **Batches, time and disk**: each training notebook's fits (its paper's ``costs.fit_plan``, entry-point group
  ``stsnb.fit_plans``) with their global batches shared out over the processes ``num_processes`` gives on
  ``--gpus`` (``"auto"`` resolved by ``stsnb.batching``), the estimated hours on ``--gpu-type`` and the checkpoint
  disk (``stsnb.cost_estimate``); with ``--gpus``, a notebook estimated past its plan timeout fails the check.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import batching, cost_estimate, memory_estimate

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
    from .models import KNOWN_MODELS

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
    from . import data

    try:
        texts = texts_of()
    except (data.DataError, OSError):
        return cap
    return min(cap, longest_in_batch(texts, tokenizer, batch))


def measured_or_cap(
    texts_of: Callable[[], Sequence[str]], tokenizer: str, batch: int, cap: int, sample: int = 4000
) -> tuple[int, bool]:
    """``(measured_length(...), True)`` on a fixed draw of at most ``sample`` of the texts where the data folder
    holds them, else ``(cap, False)``: the cost tables say which."""
    import random

    from . import data

    try:
        texts = list(texts_of())
    except (data.DataError, OSError):
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
        shape = memory_estimate.KNOWN_SHAPES.get(model)
        if shape is None:
            shape = _shape_from_folder(model)
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


def _shape_from_folder(model: str) -> memory_estimate.ModelShape | None:
    """The shape of a packaged or local model from its config.json (no weights loaded); None for a Hub id."""
    from transformers import AutoConfig

    from .models import KNOWN_MODELS, resolve

    try:
        folder = resolve(model).path if model in KNOWN_MODELS else model
        if not Path(folder).is_dir():
            return None
        return memory_estimate.ModelShape.from_config(AutoConfig.from_pretrained(folder))
    except (OSError, ValueError, KeyError):
        return None


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
        pass  # every GPU present that divides the notebook's global batches (``stsnb.batching.resolve_processes``)
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
        lines.append(
            f"| {row.notebook} | {row.label} | {row.model} | {row.per_gpu_sequences} x {row.length} | "
            f"{row.without_checkpointing_gib:.1f} GiB | {row.with_checkpointing_gib:.1f} GiB | "
            f"{row.used} |{fits}"
        )
    return "\n".join(lines)


@dataclass(frozen=True)
class NotebookCost:
    """One notebook's estimate: its fits priced, the processes they train on, hours, timeout and disk."""

    notebook: str
    fits: list[cost_estimate.FitCost]
    processes: int
    timeout: float | None  # seconds, from the plan (None: no limit)
    skipped: list[str]  # models whose shape is unknown (Hub ids not in memory_estimate.KNOWN_SHAPES)

    @property
    def hours(self) -> float:
        return sum(f.hours for f in self.fits)

    @property
    def peak_bytes(self) -> float:
        return sum(f.peak_bytes for f in self.fits)

    @property
    def kept_bytes(self) -> float:
        return sum(f.kept_bytes for f in self.fits)

    @property
    def over_timeout(self) -> bool:
        return self.timeout is not None and self.hours * 3600 > self.timeout


def _shape(model: str) -> memory_estimate.ModelShape | None:
    return memory_estimate.KNOWN_SHAPES.get(model) or _shape_from_folder(model)


def notebook_cost(
    notebook: str,
    params: Mapping[str, Any],
    gpus: int | None,
    gpu: str = cost_estimate.DEFAULT_GPU,
    timeout: float | None = None,
) -> NotebookCost | None:
    """``notebook``'s fits (its ``stsnb.fit_plans`` hook) priced on ``gpus`` GPUs of type ``gpu``, ``num_processes``
    resolved as the notebook resolves it; None for a notebook that trains nothing."""
    hook = cost_estimate.fit_plan_hook(notebook)
    if hook is None:
        return None
    rows = hook(params)
    processes = cost_estimate.processes_for(params.get("num_processes", 1), rows, gpus)
    fits, skipped = [], []
    for row in rows:
        shape = _shape(row.model)
        if shape is None:
            skipped.append(row.model)
            continue
        fits.append(cost_estimate.fit_cost(notebook, row, shape, processes, gpu))
    return NotebookCost(notebook, fits, processes, timeout, sorted(set(skipped)))


def batch_table(costs: Sequence[NotebookCost]) -> str:
    """Global batch per fit and how it is shared out: processes x per process x accumulation."""
    lines = [
        "| notebook | fit | model | fits | global batch | processes | per process | accumulation | loss |",
        "|---|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for nb in costs:
        for f in nb.fits:
            if not f.row.examples:
                continue
            s = f.split
            loss = "batch-level" if f.row.batch_level else "per pair"
            lines.append(
                f"| {nb.notebook} | {f.row.label} | {f.row.model} | {f.row.count} | {s.global_batch} | "
                f"{s.processes} | {s.per_process} | {s.accumulation} | {loss} |"
            )
    return "\n".join(lines)


def fit_cost_table(costs: Sequence[NotebookCost]) -> str:
    """Per fit: the work (examples x epochs, sequences x tokens), what trains, FLOPs, hours and checkpoint disk."""
    count = cost_estimate.count
    lines = [
        "| notebook | fit | model | fits | examples x epochs | sequences x tokens | trains "
        "| FLOPs per fit (train + eval) | hours, all fits | last/ + best.pt per fit | kept per fit |",
        "|---|---|---|---:|---|---|---|---:|---:|---:|---:|",
    ]
    for nb in costs:
        for f in nb.fits:
            r = f.row
            tokens = f"{r.tokens} {'measured' if r.tokens_measured else 'cap'}"
            work = f"{count(r.examples)} x {r.epochs:g}" if r.examples else "scoring only"
            trains = {
                "lora": f"LoRA r={r.lora_r} {count(f.trainable_parameters)}",
                "head": f"head {count(f.trainable_parameters)}",
                "none": "nothing",
            }.get(r.trainable, f"full {count(f.trainable_parameters)}")
            trains += " 4-bit" if r.quantize_4bit else ""
            trains += " ckpt" if r.gradient_checkpointing else ""
            disk = cost_estimate.gib(f.last_bytes + f.best_bytes) if f.best_bytes else "none"
            lines.append(
                f"| {nb.notebook} | {r.label} | {r.model} | {r.count} | {work} | {r.sequences_per_example} x {tokens} "
                f"| {trains} "
                f"| {count(f.train_flops)} + {count(f.eval_flops)} | {f.hours:.2f} | {disk} | "
                f"{cost_estimate.gib(f.best_bytes) if f.best_bytes else 'none'} |"
            )
    return "\n".join(lines)


def notebook_cost_table(costs: Sequence[NotebookCost], gpus: int | None, gpu: str) -> str:
    """Per notebook: processes, estimated hours, the plan's timeout, checkpoint peak and kept weights; then the plan
    (notebooks one after another: the peak is the largest of each notebook's peak plus the weights kept before)."""
    gib = cost_estimate.gib
    lines = [
        f"| notebook | GPUs used (of {gpus if gpus is not None else 'the visible'}) | estimated hours "
        f"({cost_estimate.GPU_TYPES[gpu][0]}) | timeout | within | {cost_estimate.TIMEOUT_SAFETY:g}x, whole hours "
        "| checkpoint peak | weights kept |",
        "|---|---:|---:|---:|---|---:|---:|---:|",
    ]
    kept_before, sequential_peak = 0.0, 0.0
    for nb in costs:
        used = max([f.split.processes for f in nb.fits] or [1])
        timeout = "none" if nb.timeout is None else f"{nb.timeout / 3600:g} h"
        within = "-" if nb.timeout is None else ("**no**" if nb.over_timeout else "yes")
        lines.append(
            f"| {nb.notebook} | {used} | {nb.hours:.1f} | {timeout} | {within} | "
            f"{cost_estimate.timeout_for(nb.hours) / 3600:g} h | {gib(nb.peak_bytes)} | {gib(nb.kept_bytes)} |"
        )
        sequential_peak = max(sequential_peak, kept_before + nb.peak_bytes)
        kept_before += nb.kept_bytes
    total = sum(nb.hours for nb in costs)
    at_once = sum(nb.peak_bytes for nb in costs)
    lines.append(
        f"| plan | | {total:.1f} | | | | {gib(sequential_peak)} (all at once: {gib(at_once)}) | {gib(kept_before)} |"
    )
    return "\n".join(lines)


def cost_assumptions(costs: Sequence[NotebookCost], gpu: str) -> list[str]:
    """The assumptions the time and disk tables rest on, printed under them."""
    name, peak = cost_estimate.GPU_TYPES[gpu]
    lines = [
        f"GPU: {name} (--gpu-type {gpu}), dense bf16 peak {peak / 1e12:g} TFLOP/s; model FLOPs utilisation "
        f"{cost_estimate.MFU_LARGE} for 1B+ parameters, {cost_estimate.MFU_SMALL} for the encoders (assumed).",
        "FLOPs per training token: 2 per matmul weight per forward; x3 training every weight (6 N), x2 with a frozen "
        "base (LoRA), +1 forward with gradient checkpointing; a 4-bit base takes "
        f"{cost_estimate.QLORA_SLOWDOWN}x the time (dequantisation); each optimizer step adds "
        f"{cost_estimate.STEP_OVERHEAD_SECONDS:g} s (update, all-reduce, Python loop, collation). Dev evaluation and "
        "test scoring: forward only, on the main process. Not counted: model loading, data downloads, bootstrap.",
        "Tokens: padded to the longest of a batch, measured on the data folder (95th percentile over random batches) "
        "where it holds the texts ('measured'), else the cap ('cap', an upper bound).",
        "Disk: last/ = trainable weights + AdamW's 2 fp32 moments + RNG states, best.pt = trainable weights (fp32), "
        "never a frozen base; every fit's last/ stays until its notebook succeeds, which then keeps only best.pt "
        "in <notebook>/weights/. Notebooks run side by side (--parallel) add their peaks (the 'all at once' figure).",
        "No estimate here has been compared with a GPU run.",
    ]
    skipped = sorted({m for nb in costs for m in nb.skipped})
    if skipped:
        lines.append(f"Not priced (shape unknown offline): {', '.join(skipped)}.")
    return lines


@functools.lru_cache(maxsize=32)
def token_lengths(texts: tuple[str, ...], tokenizer_model: str) -> tuple[int, ...]:
    """Each text's token count (special tokens included) with ``tokenizer_model``'s tokenizer, cached: a check
    measures the same texts for several fits."""
    from transformers import AutoTokenizer

    from .models import resolve

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

    @property
    def ok(self) -> bool:
        return not self.problems

    def text(self) -> str:
        lines = [
            f"stsnb run --check --profile {self.profile}: " + ("ok" if self.ok else f"{len(self.problems)} problems")
        ]
        lines += [f"  - {p}" for p in self.problems]
        if self.memory:
            lines += [
                "",
                "Estimated peak memory per GPU (stsnb.memory_estimate):",
                "",
                memory_table(self.memory, self.gpu_memory),
            ]
        if self.costs:
            lines += ["", "Global batch per fit (stsnb.batching):", "", batch_table(self.costs)]
            lines += ["", "Estimated time and checkpoint disk per fit (stsnb.cost_estimate):", ""]
            lines += [fit_cost_table(self.costs), "", notebook_cost_table(self.costs, self.gpus, self.gpu_type), ""]
            lines += cost_assumptions(self.costs, self.gpu_type)
        return "\n".join(lines)


def check(
    plan,
    notebooks_dir: Path,
    gpus: int | None = None,
    gpu_memory: float | None = None,
    gpu_type: str = cost_estimate.DEFAULT_GPU,
) -> CheckReport:
    """Every check of the module docstring on a loaded plan (``plans.load_plan``); parameters a notebook does not
    declare are reported too (``plans.check_plan``), a memory estimate over ``gpu_memory`` GiB is a problem, and so
    is, with ``gpus``, an estimated time past the notebook's timeout on ``gpus`` GPUs of ``gpu_type``."""
    import papermill

    from .plans import PlanError, check_plan

    problems: list[str] = []
    try:
        check_plan(plan, notebooks_dir)
    except PlanError as err:
        problems += [line.strip() for line in str(err).splitlines()[1:]]
    rows: list[MemoryRow] = []
    costs: list[NotebookCost] = []
    for name, overrides in plan.notebooks.items():
        notebook = Path(notebooks_dir) / f"{name}.ipynb"
        if not notebook.is_file():
            continue
        declared = papermill.inspect_notebook(str(notebook))
        problems += notebook_problems(name, overrides, declared, gpus)
        params = effective_params(declared, overrides)
        try:
            cost = notebook_cost(name, params, gpus, gpu_type, plan.timeouts.get(name))
        except batching.BatchError as err:
            problems.append(f"{name}: {err}")
            cost = None
        if cost is not None:
            costs.append(cost)
            if "num_processes" in params:
                params["num_processes"] = cost.processes  # "auto" as resolved for --gpus, for the memory plan
            if gpus is not None and cost.over_timeout:
                problems.append(
                    f"{name}: estimated {cost.hours:.1f} h on {gpus} x {gpu_type}, more than its plan timeout of "
                    f"{cost.timeout / 3600:g} h"
                )
        notebook_rows = resolve_auto(memory_rows(name, params), gpu_memory)
        rows += notebook_rows
        if gpu_memory:
            for row in notebook_rows:
                if not memory_estimate.fits(row.used_gib * memory_estimate.GIB, gpu_memory):
                    problems.append(
                        f"{name}: {row.label} on {row.model} needs about {row.used_gib:.1f} GiB per GPU "
                        f"({HOW_RUN[row.used]}), more than "
                        f"{gpu_memory:g} GiB less the CUDA context and 10%"
                    )
    return CheckReport(plan.profile, problems, rows, gpus, gpu_memory, costs, gpu_type)
