"""``stsnb gpu-check``: the first command on a new GPU server. Ten minutes on one GPU that measure what the paper
plan's estimates assume, with no network and no downloaded weights.

1. the ``gpu`` test tier (``pytest -m gpu``; tests that need two GPUs skip on one);
2. **memory**: each training notebook's largest setting per GPU in the paper plan (Pcc-tuning's 4-bit Mistral-7B with
   LoRA and checkpointing, STS-Regression's BERT-base at its Table 1 batch x 256, HiCL's segment batch, CCL's
   tri-encoder: whatever each paper's memory plan lists, ``stsnb.gpu.plan_check.memory_hook``) built with random
   weights from the package's shapes (``stsnb.gpu.fit_probe``), a few AdamW steps, the measured peak beside
   ``memory_estimate``'s figure and their ratio;
3. **time**: the same steps' seconds beside what ``cost_estimate`` assumes for them (the GPU's peak x a utilisation,
   the 4-bit slowdown, the per-step overhead), and each notebook's hours on the paper plan recomputed with that ratio;
4. **evaluation speed**: stsnb's sentence encoding against a plain sentence-transformers loop, same packaged model
   (all-MiniLM-L6-v2) and pairs (STS-B test from the data folder), with the largest difference of their cosines;
5. a report, ``<out>/<gpu name>.md`` and ``.json`` (default ``benchmarks/results/gpu/``), each row with its measured and
   estimated figures; ``stsnb run --check --calibration FILE`` reads the JSON (``stsnb.gpu.calibration``).

A row whose package is missing (bitsandbytes on a machine without it) says so and the rest runs. Without CUDA the
command exits 2 saying why; ``--cpu-rehearsal`` runs the same code at tiny sizes on the CPU (``Probe.tiny``) and writes
the same report as ``cpu-rehearsal.md``, whose figures check the plumbing, not any GPU.
"""

from __future__ import annotations

import importlib.util
import json
import platform
import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from . import cost_estimate, memory_estimate, plan_costs
from .fit_probe import Probe

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO_ROOT / "benchmarks" / "results" / "gpu"
PAPER_GPUS = 4  # the paper plan's reference server (cost_estimate.TIMEOUT_SAFETY): per-GPU batches as on 4 GPUs
EVAL_PAIRS = 1000
GPU_PRICES = (("H200", "h200"), ("H100", "h100-sxm"), ("A100", "a100-80gb"), ("L40S", "l40s"), ("4090", "rtx-4090"),
              ("A6000", "a6000"))  # fmt: skip


class NoCuda(RuntimeError):
    """``stsnb gpu-check`` without a GPU (exit 2)."""


@dataclass
class Report:
    """What the check found; ``to_json`` is the calibration file ``stsnb run --check --calibration`` reads."""

    gpu: str
    rehearsal: bool
    priced_as: str
    started: str
    environment: dict[str, Any]
    test_tier: dict[str, Any] = field(default_factory=dict)
    fits: list[dict[str, Any]] = field(default_factory=list)
    evaluation: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def priced_as(gpu_name: str) -> str:
    """The ``cost_estimate.GPU_TYPES`` key of a GPU name (the default where none matches, which the report says)."""
    return next((key for part, key in GPU_PRICES if part in gpu_name), cost_estimate.DEFAULT_GPU)


def paper_probes(
    gpu_gib: float | None, gpu: str = cost_estimate.DEFAULT_GPU, gpus: int = PAPER_GPUS
) -> tuple[list[Probe], dict[str, Any]]:
    """Each training notebook's largest training setting per GPU under the paper plan on ``gpus`` GPUs, and the
    notebook's cost (``plan_costs.NotebookCost``, priced as ``gpu``) for the time rows. Gradient checkpointing
    ``"auto"`` is resolved against ``gpu_gib`` as the notebook resolves it."""
    import papermill

    from ..runs.plans import NOTEBOOKS_DIR, load_plan, plan_path
    from .plan_check import effective_params, memory_hook

    plan = load_plan(plan_path("paper"))
    probes, costs = [], {}
    for name, overrides in plan.notebooks.items():
        hook = memory_hook(name)
        notebook = NOTEBOOKS_DIR / f"{name}.ipynb"
        if hook is None or not notebook.is_file():
            continue
        params = effective_params(papermill.inspect_notebook(str(notebook)), overrides)
        cost = plan_costs.notebook_cost(name, params, gpus, gpu, plan.timeouts.get(name))
        if cost is not None:
            params["num_processes"] = cost.processes
            costs[name] = cost
        best: tuple[float, Probe] | None = None
        for label, model, setup in hook(params):
            shape = plan_costs.model_shape(model)
            if shape is None or not isinstance(setup, memory_estimate.TrainingSetup):
                continue
            if params.get("gradient_checkpointing") == "auto":
                plain = memory_estimate.estimate(shape, replace(setup, gradient_checkpointing=False)).total
                setup = replace(setup, gradient_checkpointing=memory_estimate.auto_checkpointing([plain], gpu_gib))
            total = memory_estimate.estimate(shape, setup).total
            if best is None or total > best[0]:
                best = (total, Probe(name, label, model, shape, setup))
        if best is not None:
            probes.append(best[1])
    return probes, costs


def assumed_seconds_per_step(probe: Probe, gpu: str) -> dict[str, float]:
    """What ``cost_estimate`` assumes one optimizer step of the probe takes on ``gpu`` (a ``GPU_TYPES`` key)."""
    setup, shape = probe.setup, probe.shape
    passes = (2.0 if setup.lora_r is not None else 3.0) + (1.0 if setup.gradient_checkpointing else 0.0)
    flops = setup.sequences * setup.length * cost_estimate.forward_flops_per_token(shape, setup.length) * passes
    peak, utilisation = cost_estimate.GPU_TYPES[gpu][1], cost_estimate.mfu(shape)
    slowdown = cost_estimate.QLORA_SLOWDOWN if setup.quantize_4bit else 1.0
    compute = flops * slowdown / (peak * utilisation)
    return {
        "flops_per_step": flops,
        "peak_flops": peak,
        "utilisation": utilisation,
        "qlora_slowdown": slowdown,
        "step_overhead_s": cost_estimate.STEP_OVERHEAD_SECONDS,
        "seconds_per_step": compute + cost_estimate.STEP_OVERHEAD_SECONDS,
    }


def _missing_packages(probe: Probe) -> list[str]:
    needed = ["transformers"] + (["bitsandbytes"] if probe.setup.quantize_4bit else [])
    needed += ["peft"] if probe.setup.lora_r is not None or probe.setup.quantize_4bit else []
    return [name for name in needed if importlib.util.find_spec(name) is None]


def fit_row(
    probe: Probe, measured: Probe, device: str, gpu: str, cost: Any, steps: int, fresh_process: bool = True
) -> dict[str, Any]:
    """One probe measured (in its own process unless ``fresh_process`` is False), beside the estimates."""
    from .fit_probe import measure_probe
    from .memory import measure_in_fresh_process

    row: dict[str, Any] = {
        "notebook": probe.notebook,
        "setting": probe.label,
        "model": probe.model,
        "sequences_x_length": f"{measured.setup.sequences} x {measured.setup.length}",
        "quantize_4bit": probe.setup.quantize_4bit,
        "lora_r": probe.setup.lora_r,
        "gradient_checkpointing": probe.setup.gradient_checkpointing,
    }
    missing = _missing_packages(probe)
    if missing:
        return {**row, "status": f"not run: {', '.join(missing)} not installed (pip install {' '.join(missing)})"}
    try:
        kwargs = {"probe": measured.to_json(), "device": device, "steps": steps}
        if fresh_process:
            result = measure_in_fresh_process("stsnb.gpu.fit_probe:measure_probe", kwargs)
        else:
            result = measure_probe(**kwargs)
    except Exception as err:  # a failed probe is a row of the report (OOM, a kernel missing), never the end of it
        return {**row, "status": f"failed: {str(err).strip().splitlines()[-1][:300]}"}
    on_gpu = result["measured_total_bytes"] is not None
    measured_bytes = result["measured_total_bytes"] if on_gpu else result["measured_added_bytes"]
    estimated_bytes = result["estimated_total_bytes"] if on_gpu else result["estimated_added_bytes"]
    assumed = assumed_seconds_per_step(measured, gpu)
    time_ratio = result["seconds_per_step"] / assumed["seconds_per_step"]
    row.update(
        status="ok",
        memory_measure=("peak allocated, weights included" if on_gpu else "peak the steps added (RSS)"),
        measured_gib=measured_bytes / memory_estimate.GIB,
        estimated_gib=estimated_bytes / memory_estimate.GIB,
        memory_ratio=measured_bytes / estimated_bytes if estimated_bytes else None,
        measured_seconds_per_step=result["seconds_per_step"],
        assumed=assumed,
        time_ratio=time_ratio,
    )
    if cost is not None:  # hours on the paper plan's GPUs, priced as this GPU, then x the measured ratio
        row["notebook_hours_estimated"] = cost.hours
        row["notebook_hours_recomputed"] = cost.hours * time_ratio
        row["notebook_timeout_hours"] = cost.timeout / 3600 if cost.timeout else None
    return row


def run_test_tier(timeout: float = 300) -> dict[str, Any]:
    """``pytest -m gpu`` on this checkout, its last line (passed / skipped / failed) and exit status."""
    if not (REPO_ROOT / "tests").is_dir():
        return {"status": "not run: stsnb is installed without its tests/ folder (run it from a checkout)"}
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-m", "gpu", "-q", "-p", "no:cacheprovider", "tests"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"status": f"failed: still running after {timeout:.0f} s"}
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return {
        "status": "ok" if done.returncode == 0 else f"failed (exit {done.returncode})",
        "summary": lines[-1].strip("= ") if lines else done.stderr[-300:],
        "seconds": time.perf_counter() - started,
    }


def evaluation_speed(device: str, pairs: int = EVAL_PAIRS) -> dict[str, Any]:
    """stsnb's encoding (``SentenceEncoder.encode``) against ``SentenceTransformer.encode``, same packaged model and
    STS-B test pairs, each timed after one warm-up pass; sentences per second and the largest cosine difference."""
    import torch

    from .. import data
    from ..models.loading import load_encoder, resolve

    if importlib.util.find_spec("sentence_transformers") is None:
        return {"status": "not run: sentence-transformers not installed (pip install sentence-transformers)"}
    try:
        chosen = list(data.load_stsb("test"))[:pairs]
    except data.DataError as err:
        return {"status": f"not run: {str(err).split('. ')[0]} (stsnb data fetch builds it)"}
    from sentence_transformers import SentenceTransformer

    sentences = [p.sent1 for p in chosen] + [p.sent2 for p in chosen]
    ours = load_encoder("minilm-l6", device=device)
    plain = SentenceTransformer(str(resolve("minilm-l6").path), device=device)

    def timed(encode: Callable[[], torch.Tensor]) -> tuple[torch.Tensor, float]:
        encode()
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        started = time.perf_counter()
        vectors = encode()
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        return vectors.float().cpu(), time.perf_counter() - started

    a, ours_s = timed(lambda: ours.encode(sentences, batch_size=128))
    b, plain_s = timed(lambda: plain.encode(sentences, batch_size=128, convert_to_tensor=True))
    n = len(chosen)
    cos_a = torch.nn.functional.cosine_similarity(a[:n], a[n:])
    cos_b = torch.nn.functional.cosine_similarity(b[:n], b[n:])
    return {
        "status": "ok",
        "pairs": n,
        "stsnb_sentences_per_s": len(sentences) / ours_s,
        "sentence_transformers_sentences_per_s": len(sentences) / plain_s,
        "speed_ratio": plain_s / ours_s,
        "largest_cosine_difference": float((cos_a - cos_b).abs().max()),
    }


def environment(device: str) -> dict[str, Any]:
    import torch

    from ..runs.context import git_sha

    info = {"python": platform.python_version(), "torch": torch.__version__, "git_sha": git_sha()}
    if device.startswith("cuda"):
        info["cuda"] = torch.version.cuda
        info["gpu_memory_gib"] = memory_estimate.gpu_memory_gib()
    for package in ("transformers", "peft", "bitsandbytes", "accelerate", "sentence_transformers"):
        spec = importlib.util.find_spec(package)
        if spec is None:
            info[package] = None
        else:
            from importlib import metadata

            info[package] = metadata.version(package.replace("_", "-"))
    return info


def run(
    out: Path = DEFAULT_OUT,
    cpu_rehearsal: bool = False,
    steps: int = 3,
    say: Callable[[str], None] = print,
) -> tuple[Report, Path]:
    """Every measurement of the module docstring; writes the report and returns it with the Markdown's path."""
    import torch

    if not cpu_rehearsal and not torch.cuda.is_available():
        reason = "torch has no CUDA build" if torch.version.cuda is None else "CUDA reports no GPU"
        raise NoCuda(
            f"stsnb gpu-check needs a GPU: {reason} (torch {torch.__version__}). On a GPU server install the CUDA "
            "build (scripts/torch_index.sh picks the index); to rehearse the measurements here: "
            "stsnb gpu-check --cpu-rehearsal"
        )
    started = time.perf_counter()
    device = "cpu" if cpu_rehearsal else "cuda"
    gpu = "cpu-rehearsal" if cpu_rehearsal else torch.cuda.get_device_name(0)
    pricing = priced_as(gpu) if not cpu_rehearsal else cost_estimate.DEFAULT_GPU
    report = Report(
        gpu, cpu_rehearsal, pricing, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), environment(device)
    )
    say(
        f"stsnb gpu-check on {gpu}"
        + (" (tiny sizes on the CPU: checks the plumbing, measures no GPU)" if cpu_rehearsal else "")
    )
    if cpu_rehearsal:
        report.test_tier = {"status": "not run: the rehearsal has no CUDA, so every test of the gpu tier would skip"}
    else:
        say("  the gpu test tier (pytest -m gpu) ...")
        report.test_tier = run_test_tier()
    probes, costs = paper_probes(None if cpu_rehearsal else memory_estimate.gpu_memory_gib(), pricing)
    for probe in probes:
        measured = probe.tiny() if cpu_rehearsal else probe
        size = f"{measured.setup.sequences} x {measured.setup.length}"
        say(f"  {probe.notebook}: {probe.label} on {probe.model}, {size} ...")
        # the rehearsal's tiny probes run in this process: their peaks say nothing either way, and four fresh
        # interpreters would cost it more time than the probes themselves
        cost = costs.get(probe.notebook)
        report.fits.append(fit_row(probe, measured, device, pricing, cost, steps, fresh_process=not cpu_rehearsal))
    say("  evaluation speed: stsnb against a sentence-transformers loop ...")
    report.evaluation = evaluation_speed(device, pairs=100 if cpu_rehearsal else EVAL_PAIRS)
    report.seconds = time.perf_counter() - started
    return report, write(report, out)


def write(report: Report, out: Path) -> Path:
    """``<out>/<gpu>.json`` and ``.md``; returns the Markdown's path."""
    from .gpu_check_report import markdown

    out.mkdir(parents=True, exist_ok=True)
    stem = out / slug(report.gpu)
    stem.with_suffix(".json").write_text(json.dumps(report.to_json(), indent=1) + "\n", encoding="utf-8")
    stem.with_suffix(".md").write_text(markdown(report.to_json()), encoding="utf-8")
    return stem.with_suffix(".md")


def failed_rows(report: Report) -> Sequence[str]:
    """The rows that failed (not those skipped for a missing package)."""
    rows = [*report.fits, report.evaluation, report.test_tier]
    return [str(r.get("status")) for r in rows if str(r.get("status", "")).startswith("failed")]
