"""The Markdown of a ``stsnb gpu-check`` report (``stsnb.gpu.gpu_check``), written beside its JSON."""

from __future__ import annotations

from typing import Any


def _number(value: Any, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _fit_lines(fits: list[dict[str, Any]], priced_as: str) -> list[str]:
    lines = [
        "| notebook | setting | model | sequences x length | 4-bit / LoRA / checkpointing | measured GiB | "
        "estimated GiB | ratio | measured s/step | assumed s/step | ratio | notebook h: estimated -> recomputed |",
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
            f"{row['measured_seconds_per_step']:.3f} | {row['assumed']['seconds_per_step']:.3f} | "
            f"{row['time_ratio']:.2f} | {hours} |"
        )
    assumed = [row for row in fits if row["status"] == "ok"]
    if assumed:
        terms = "; ".join(
            f"{row['notebook']}: utilisation {row['assumed']['utilisation']:g}, x{row['assumed']['qlora_slowdown']:g} "
            f"(4-bit), {row['assumed']['flops_per_step'] / 1e12:.3g} TFLOP per step"
            for row in assumed
        )
        peak = assumed[0]["assumed"]["peak_flops"] / 1e12
        overhead = assumed[0]["assumed"]["step_overhead_s"]
        lines += [
            "",
            f"Assumed by the time estimate (priced as `{priced_as}`, a peak of {peak:.0f} TFLOP/s, plus {overhead:g} s "
            f"per step): {terms}. Recomputed hours: the estimate x the time ratio of the notebook's largest setting.",
        ]
    return lines


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
