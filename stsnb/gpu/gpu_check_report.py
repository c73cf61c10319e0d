"""The Markdown of a ``stsnb gpu-check`` report (``stsnb.gpu.gpu_check``), written beside its JSON."""

from __future__ import annotations

from typing import Any


def _number(value: Any, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _fit_lines(fits: list[dict[str, Any]], priced_as: str) -> list[str]:
    lines = [
        "| notebook | setting | model | sequences x length | 4-bit / LoRA / checkpointing | measured GiB | "
        "estimated GiB | ratio | measured s/step | assumed compute s/step | compute ratio | notebook h: estimated -> "
        "recomputed |",
        "|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in fits:
        how = " / ".join(
            [
                "4-bit" if row["quantize_4bit"] else "—",
                f"r={row['lora_r']}" if row["lora_r"] else "—",
                "yes" if row["gradient_checkpointing"] else "no",
            ]
        )
        head = f"| {row['notebook']} | {row['setting']} | {row['model']} | {row['sequences_x_length']} | {how} |"
        if row["status"] != "ok":
            lines.append(f"{head} {row['status']} | | | | | | |")
            continue
        hours = "—"
        if "notebook_hours_estimated" in row:
            hours = f"{row['notebook_hours_estimated']:.1f} -> {row['notebook_hours_recomputed']:.1f}"
            if row.get("notebook_timeout_hours"):
                hours += f" (timeout {row['notebook_timeout_hours']:g})"
        lines.append(
            f"{head} {row['measured_gib']:.3f} | {row['estimated_gib']:.3f} | {_number(row['memory_ratio'])} | "
            f"{row['measured_seconds_per_step']:.3f} | {row['assumed']['compute_seconds_per_step']:.3f} | "
            f"{row['ratios']['compute']:.2f} | {hours} |"
        )
    ok = [row for row in fits if row["status"] == "ok"]
    if ok:
        lines += ["", *_term_lines(ok), ""]
        peak = ok[0]["assumed"]["peak_flops"] / 1e12
        terms = "; ".join(
            f"{row['notebook']}: utilisation {row['assumed']['utilisation']:g}, x{row['assumed']['qlora_slowdown']:g} "
            f"(4-bit), {row['assumed']['flops_per_step'] / 1e12:.3g} TFLOP per step"
            for row in ok
        )
        lines += [
            f"Assumed by the time estimate (priced as `{priced_as}`, a peak of {peak:.0f} TFLOP/s): {terms}. "
            "Recomputed hours: each term of the notebook's estimate (compute, per-step overhead, evaluation, I/O) x "
            "its own measured ratio, as `stsnb run --check --calibration` applies them.",
        ]
    return lines


def _term_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The per-term ratios, the typical step and the scoring row of each notebook."""
    lines = [
        "| notebook | typical step (examples x sequences x tokens) | measured s/step | of which overhead | overhead "
        "ratio | evaluation s/sequence (assumed) | evaluation ratio | I/O ratio |",
        "|---|---|---:|---:|---:|---|---:|---:|",
    ]
    for row in rows:
        typical, evaluation, ratios = row["typical_step"], row["evaluation"], row["ratios"]
        lines.append(
            f"| {row['notebook']} | {typical['examples_x_sequences_x_tokens']} | {typical['measured_seconds']:.4f} | "
            f"{typical['overhead_seconds']:.4f} (assumed {typical['assumed_overhead_seconds']:g}) | "
            f"{ratios['overhead']:.2f} | {evaluation['seconds_per_sequence']:.2e} "
            f"({evaluation['assumed_seconds_per_sequence']:.2e}) | {ratios['evaluation']:.2f} | "
            f"{_number(ratios.get('io'))} |"
        )
    for row in rows:
        if "scoring" in row:
            scoring = row["scoring"]
            lines += [
                "",
                f"{row['notebook']}'s scoring row (the 16-bit copy beside the 4-bit training model, "
                f"{scoring['sequences_x_length']}): measured {scoring['measured_bytes'] / 2**30:.3f} GiB, estimated "
                f"{scoring['estimated_bytes'] / 2**30:.3f} GiB ({scoring['measure']}), ratio "
                f"{_number(scoring['ratio'])}.",
            ]
    return lines


def _io_ddp_lines(report: dict[str, Any]) -> list[str]:
    io, ddp = report.get("io") or {}, report.get("ddp") or {}
    lines = ["## Checkpoint writes and DDP", ""]
    if io.get("status") == "ok":
        lines.append(
            f"Checkpoint write: {io['bytes'] / 2**30:.2f} GiB in {io['seconds']:.2f} s, {io['bytes_per_s'] / 1e9:.2f} "
            f"GB/s against an assumed {io['assumed_bytes_per_s'] / 1e9:g} GB/s (I/O ratio {io['ratio']:.2f})."
        )
    else:
        lines.append(f"Checkpoint write: {io.get('status', 'not run')}.")
    if ddp.get("status") == "ok":
        lines.append(
            f"DDP: notebook 20's typical step on two processes {ddp['two_processes_seconds_per_step']:.4f} s against "
            f"{ddp['one_process_seconds_per_step']:.4f} s on one (x{ddp['ratio']:.2f})."
        )
    else:
        lines.append(f"DDP: {ddp.get('status', 'not run')}.")
    return [*lines, ""]


def markdown(report: dict[str, Any]) -> str:
    """The report as Markdown: the GPU tier, the fits, evaluation speed, the environment."""
    title = "CPU rehearsal" if report["rehearsal"] else report["gpu"]
    lines = [f"# stsnb gpu-check: {title}", ""]
    if report["rehearsal"]:
        lines += [
            "**A rehearsal**: the same code at tiny sizes on the CPU (two layers, hidden size 64, at most 4 x 32",
            "tokens), with resident-set memory. It checks that every measurement runs and the report is written; its",
            "figures say nothing about a GPU or the paper plan.",
            "",
        ]
    env = report["environment"]
    lines += [
        f"Run {report['started']} at git {env.get('git_sha') or 'unknown'} in {report['seconds']:.0f} s; torch "
        f"{env.get('torch')}" + (f", CUDA {env['cuda']}" if env.get("cuda") else "") + ".",
        "",
        "## The gpu test tier",
        "",
        f"{report['test_tier'].get('status')}"
        + (f": {report['test_tier']['summary']}" if "summary" in report["test_tier"] else ""),
        "",
        "## Memory and time of each notebook's largest setting per GPU (the paper plan on 4 GPUs)",
        "",
        *_fit_lines(report["fits"], report["priced_as"]),
        "",
        *_io_ddp_lines(report),
        "## Evaluation speed",
        "",
    ]
    ev = report["evaluation"]
    if ev.get("status") == "ok":
        lines += [
            f"{ev['pairs']} STS-B test pairs, all-MiniLM-L6-v2: stsnb {ev['stsnb_sentences_per_s']:.0f} sentences/s, "
            f"a plain sentence-transformers loop {ev['sentence_transformers_sentences_per_s']:.0f} sentences/s "
            f"(stsnb {ev['speed_ratio']:.2f}x its speed); the largest difference of their cosines "
            f"{ev['largest_cosine_difference']:.1e}.",
        ]
    else:
        lines.append(str(ev.get("status")))
    lines += ["", "## Environment", "", *(f"- {k}: {v}" for k, v in env.items()), ""]
    return "\n".join(lines)
