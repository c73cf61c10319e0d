"""``stsnb gpu-check``: the first command on a new GPU server. Ten minutes on one GPU that measure what the paper
plan's estimates assume, with no network and no downloaded weights.

1. the ``gpu`` test tier (``pytest -m gpu``; tests that need two GPUs skip on one);
2. per training notebook, on one model built with random weights from the package's shapes (``stsnb.gpu.fit_probe``)
   in a fresh process (``stsnb.gpu.step_probe.measure_notebook``):
   - **memory and compute**: its largest setting per GPU in the paper plan (Pcc-tuning's 4-bit Mistral-7B with LoRA
     and checkpointing, STS-Regression's BERT-base at its Table 1 batch x 256, HiCL's segment batch, CCL's
     tri-encoder: whatever each paper's memory plan lists), a few AdamW steps, the measured peak beside
     ``memory_estimate``'s figure, and the seconds per step over the FLOPs at the assumed utilisation;
   - **the per-step overhead**: a whole optimizer step at its typical batch (notebook 20: 16 pairs of about 57
     tokens per GPU) through ``stsnb.training.train.fit``, tokenization and collation included, less the compute the
     measured throughput gives it, over the assumed ``STEP_OVERHEAD_SECONDS``;
   - **evaluation**: its scoring forward, seconds per sequence over its FLOPs; for Pcc-tuning on the 16-bit copy its
     scoring loads beside the 4-bit training model, whose peak is the scoring row's measurement;
3. **checkpoint writes**: a file of a fit's ``last/`` size written to the report's folder, against the assumed rate;
4. **DDP**: with two or more GPUs, notebook 20's typical step on two processes against one; on one GPU the report
   says it did not run;
5. **evaluation speed**: stsnb's sentence encoding against a plain sentence-transformers loop, same packaged model
   (all-MiniLM-L6-v2) and pairs (STS-B test from the data folder), with the largest difference of their cosines;
6. a report, ``<out>/<gpu name>.md`` and ``.json`` (default ``benchmarks/results/gpu/``), each row with its measured and
   assumed figures and one ratio per term (compute, overhead, evaluation, io); ``stsnb run --check --calibration
   FILE`` scales each term of each notebook's hours by its own ratio (``stsnb.gpu.calibration``).

A row whose package is missing (bitsandbytes on a machine without it) says so and the rest runs. Without CUDA the
command exits 2 saying why; ``--cpu-rehearsal`` runs the same code at tiny sizes on the CPU (``Probe.tiny``) and writes
the same report as ``cpu-rehearsal.md``, whose figures check the plumbing, not any GPU.
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from . import cost_estimate, memory_estimate, plan_costs
from .fit_probe import Probe
from .step_probe import Typical

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO_ROOT / "benchmarks" / "results" / "gpu"
PAPER_GPUS = 4  # the paper plan's reference server (cost_estimate.TIMEOUT_SAFETY): per-GPU batches as on 4 GPUs
EVAL_PAIRS = 1000
EVAL_BATCH = 64  # sequences per scoring forward in the evaluation probe
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
    io: dict[str, Any] = field(default_factory=dict)
    ddp: dict[str, Any] = field(default_factory=dict)

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
    probes, costs, scoring = [], {}, {}
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
            if isinstance(setup, memory_estimate.ScoringSetup):
                scoring[name] = setup  # Pcc's 16-bit copy beside the 4-bit model: probed with its largest setting
            if shape is None or not isinstance(setup, memory_estimate.TrainingSetup):
                continue
            if params.get("gradient_checkpointing") == "auto":
                plain = memory_estimate.estimate(shape, replace(setup, gradient_checkpointing=False)).total
                setup = replace(setup, gradient_checkpointing=memory_estimate.auto_checkpointing([plain], gpu_gib))
            total = memory_estimate.estimate(shape, setup).total
            if best is None or total > best[0]:
                best = (total, Probe(name, label, model, shape, setup))
        if best is not None:
            probes.append(replace(best[1], typical=typical_of(costs.get(name)), scoring=scoring.get(name)))
    return probes, costs


def typical_of(cost: Any) -> Typical | None:
    """A notebook's typical optimizer step on one GPU: the fit row with the most optimizer steps (where the per-step
    overhead lies), its per-process examples, sequences and tokens, and its scoring batch."""
    rows = [f for f in (cost.fits if cost is not None else []) if cost_estimate.optimizer_steps(f.row)]
    if not rows:
        return None
    main = max(rows, key=lambda f: cost_estimate.optimizer_steps(f.row) * f.row.count)
    row = main.row
    eval_tokens = row.eval_tokens or row.tokens
    return Typical(main.split.per_process, row.sequences_per_example, row.tokens, EVAL_BATCH, eval_tokens)


def compute_seconds(shape: Any, sequences: int, length: int, passes: float, quantize_4bit: bool, gpu: str) -> float:
    """What ``cost_estimate`` assumes the FLOPs of ``sequences`` x ``length`` tokens take on ``gpu``."""
    flops = sequences * length * cost_estimate.forward_flops_per_token(shape, length) * passes
    slowdown = cost_estimate.QLORA_SLOWDOWN if quantize_4bit else 1.0
    return flops * slowdown / (cost_estimate.GPU_TYPES[gpu][1] * cost_estimate.mfu(shape))


def assumed_seconds_per_step(probe: Probe, gpu: str) -> dict[str, float]:
    """What ``cost_estimate`` assumes one optimizer step of the probe takes on ``gpu`` (a ``GPU_TYPES`` key)."""
    setup, shape = probe.setup, probe.shape
    passes = (2.0 if setup.lora_r is not None else 3.0) + (1.0 if setup.gradient_checkpointing else 0.0)
    flops = setup.sequences * setup.length * cost_estimate.forward_flops_per_token(shape, setup.length) * passes
    compute = compute_seconds(shape, setup.sequences, setup.length, passes, setup.quantize_4bit, gpu)
    return {
        "flops_per_step": flops,
        "peak_flops": cost_estimate.GPU_TYPES[gpu][1],
        "utilisation": cost_estimate.mfu(shape),
        "qlora_slowdown": cost_estimate.QLORA_SLOWDOWN if setup.quantize_4bit else 1.0,
        "step_overhead_s": cost_estimate.STEP_OVERHEAD_SECONDS,
        "compute_seconds_per_step": compute,
        "seconds_per_step": compute + cost_estimate.STEP_OVERHEAD_SECONDS,
    }


def term_ratios(measured: Probe, result: dict[str, Any], gpu: str) -> dict[str, Any]:
    """Measured / assumed per term (``cost_estimate.FitCost.terms``) from one notebook's probe result: compute from
    its largest setting; the per-step overhead from its typical step less the compute that throughput gives it;
    evaluation from its scoring forward."""
    setup, shape, typical = measured.setup, measured.shape, measured.typical
    compute = result["seconds_per_step"] / assumed_seconds_per_step(measured, gpu)["compute_seconds_per_step"]
    passes = (2.0 if setup.lora_r is not None else 3.0) + (1.0 if setup.gradient_checkpointing else 0.0)
    sequences = typical.examples * typical.sequences_per_example
    typical_compute = compute * compute_seconds(shape, sequences, typical.tokens, passes, setup.quantize_4bit, gpu)
    overhead = max(0.0, result["typical_seconds_per_step"] - typical_compute)
    scored = measured.scoring
    eval_tokens = scored.length if scored is not None else typical.eval_tokens
    assumed_eval = compute_seconds(shape, 1, eval_tokens, 1.0, False, gpu)
    return {
        "ratios": {
            "compute": compute,
            "overhead": overhead / cost_estimate.STEP_OVERHEAD_SECONDS,
            "evaluation": result["eval_seconds_per_sequence"] / assumed_eval,
        },
        "typical_step": {
            "examples_x_sequences_x_tokens": f"{typical.examples} x {typical.sequences_per_example} x {typical.tokens}",
            "measured_seconds": result["typical_seconds_per_step"],
            "compute_seconds_at_measured_throughput": typical_compute,
            "overhead_seconds": overhead,
            "assumed_overhead_seconds": cost_estimate.STEP_OVERHEAD_SECONDS,
        },
        "evaluation": {
            "seconds_per_sequence": result["eval_seconds_per_sequence"],
            "assumed_seconds_per_sequence": assumed_eval,
            "tokens": eval_tokens,
        },
    }


def _missing_packages(probe: Probe) -> list[str]:
    needed = ["transformers"] + (["bitsandbytes"] if probe.setup.quantize_4bit else [])
    needed += ["peft"] if probe.setup.lora_r is not None or probe.setup.quantize_4bit else []
    return [name for name in needed if importlib.util.find_spec(name) is None]


def fit_row(
    probe: Probe, measured: Probe, device: str, gpu: str, cost: Any, steps: int, fresh_process: bool = True
) -> dict[str, Any]:
    """One probe measured (in its own process unless ``fresh_process`` is False), beside the estimates."""
    from .memory import measure_in_fresh_process
    from .step_probe import measure_notebook

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
    if measured.typical is None:
        return {**row, "status": "not run: the notebook's cost plan lists no optimizer step"}
    try:
        kwargs = {"probe": measured.to_json(), "typical": measured.typical.to_json(), "device": device, "steps": steps}
        kwargs["quick"] = not fresh_process  # the CPU rehearsal, in this process: its figures are plumbing
        if measured.scoring is not None:
            kwargs["scoring"] = asdict(measured.scoring)
        if fresh_process:
            result = measure_in_fresh_process("stsnb.gpu.step_probe:measure_notebook", kwargs)
        else:
            result = measure_notebook(**kwargs)
    except Exception as err:  # a failed probe is a row of the report (OOM, a kernel missing), never the end of it
        return {**row, "status": f"failed: {str(err).strip().splitlines()[-1][:300]}"}
    on_gpu = result["measured_total_bytes"] is not None
    measured_bytes = result["measured_total_bytes"] if on_gpu else result["measured_added_bytes"]
    estimated_bytes = result["estimated_total_bytes"] if on_gpu else result["estimated_added_bytes"]
    assumed = assumed_seconds_per_step(measured, gpu)
    terms = term_ratios(measured, result, gpu)
    row.update(
        status="ok",
        memory_measure=("peak allocated, weights included" if on_gpu else "peak the steps added (RSS)"),
        measured_gib=measured_bytes / memory_estimate.GIB,
        estimated_gib=estimated_bytes / memory_estimate.GIB,
        memory_ratio=measured_bytes / estimated_bytes if estimated_bytes else None,
        measured_seconds_per_step=result["seconds_per_step"],
        assumed=assumed,
        **terms,
    )
    if "scoring" in result:
        scoring = result["scoring"]
        estimated = scoring["estimated_bytes"]
        scoring["ratio"] = scoring["measured_bytes"] / estimated if estimated else None
        row["scoring"] = scoring
    if cost is not None:  # hours on the paper plan's GPUs, priced as this GPU, each term x its measured ratio
        row["notebook_hours_estimated"] = cost.hours
        row["notebook_hours_recomputed"] = sum(f.scaled(terms["ratios"]).hours for f in cost.fits)
        row["notebook_timeout_hours"] = cost.timeout / 3600 if cost.timeout else None
    return row


def io_probe(out: Path, costs: dict[str, Any], tiny: bool = False) -> dict[str, Any]:
    """A file the size of the paper plan's largest ``last/`` (64 MiB in the rehearsal) written with ``torch.save``
    to ``out`` (the file system a run's folder is on, if the report goes there) and read back; bytes per second
    against ``cost_estimate``'s assumed write rate, whose ratio the calibration applies to writes and loads."""
    import torch

    largest = max((f.last_bytes for c in costs.values() for f in c.fits), default=2**30)
    size = 64 * 2**20 if tiny else int(min(largest, 4 * 2**30))
    out.mkdir(parents=True, exist_ok=True)
    path = out / ".io-probe.pt"
    try:
        started = time.perf_counter()
        torch.save(torch.zeros(size // 4, dtype=torch.float32), path)
        with open(path, "rb") as handle:
            os.fsync(handle.fileno())
        written = time.perf_counter() - started
    except OSError as err:
        return {"status": f"failed: {err}"}
    finally:
        path.unlink(missing_ok=True)
    rate = size / written
    return {"status": "ok", "bytes": size, "seconds": written, "bytes_per_s": rate,
            "assumed_bytes_per_s": cost_estimate.CHECKPOINT_WRITE_BYTES_PER_S,
            "ratio": cost_estimate.CHECKPOINT_WRITE_BYTES_PER_S / rate}  # fmt: skip


def ddp_probe(probes: Sequence[Probe], device: str, rehearsal: bool, steps: int) -> dict[str, Any]:
    """Notebook 20's typical step on two processes (DDP's all-reduce included) against one, where there are two GPUs;
    otherwise a status saying why it did not run."""
    if rehearsal:
        return {"status": "not run: the rehearsal runs on one CPU device (tests/test_distributed.py runs DDP there)"}
    import torch

    if torch.cuda.device_count() < 2:
        return {"status": "not run: one GPU, and a DDP step needs two; the per-step overhead above has no all-reduce"}
    probe = next((p for p in probes if p.notebook == "20_sts_regression" and p.typical is not None), None)
    if probe is None:
        return {"status": "not run: no probe of notebook 20"}
    from ..training import distributed
    from .step_probe import ddp_step_seconds

    try:
        one = ddp_step_seconds(probe.to_json(), probe.typical.to_json(), steps)
        two = distributed.run(ddp_step_seconds, (probe.to_json(), probe.typical.to_json(), steps), 2)
    except Exception as err:  # a failed launch is the finding
        return {"status": f"failed: {str(err).strip().splitlines()[-1][:300]}"}
    return {"status": "ok", "one_process_seconds_per_step": one, "two_processes_seconds_per_step": two,
            "ratio": two / one}  # fmt: skip


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
        timed = 1 if cpu_rehearsal else steps  # the rehearsal checks the plumbing: one timed step of each kind
        report.fits.append(fit_row(probe, measured, device, pricing, cost, timed, fresh_process=not cpu_rehearsal))
    say("  checkpoint writes: a fit's last/ written to the report's folder ...")
    report.io = io_probe(out, costs, tiny=cpu_rehearsal)
    for row in report.fits:
        if row.get("status") == "ok" and report.io.get("status") == "ok":
            row["ratios"]["io"] = report.io["ratio"]
    report.ddp = ddp_probe(probes, device, cpu_rehearsal, steps)
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
    rows = [*report.fits, report.evaluation, report.test_tier, report.io, report.ddp]
    return [str(r.get("status")) for r in rows if str(r.get("status", "")).startswith("failed")]
