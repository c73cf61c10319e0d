"""The ``stsnb`` command: ``stsnb data`` (fetch and verify the data folder), ``stsnb models fetch`` (a plan's Hub models
into the HF cache), ``stsnb run`` (the papermill batch runner), ``stsnb eval`` (the STS suite on a model) and
``stsnb book`` (a static HTML site of the executed runs); ``stsnb status`` (where a plan's run stands, read from its
output folder); ``stsnb summary`` rewrites a profile's summary.md from its run folders without running anything;
``stsnb answers`` runs exercises (``--run``) and lists what the answer sheet of ``stsnb book --instructor`` does not
measure yet; ``stsnb figures`` redraws the notebooks' pipeline figures.

    stsnb data fetch [--to DIR] [--paper] [--latest] [--strict]
    stsnb data verify [DIR] [--strict]
    stsnb models fetch --paper
    stsnb run [--profile smoke|class|cpu|paper|rehearsal] [--only NOTEBOOK,...] [--out DIR]
    stsnb run --profile paper --parallel "0,1,2,3:10_pcc_tuning 4,5,6,7:20_sts_regression,30_hicl"
    stsnb run --profile paper --check [--only NOTEBOOK,...] [--online] [--offline] [--gpus N] [--gpu-memory GIB]
              [--calibration REPORT.json]
    stsnb status [FOLDER] [--profile paper] [--out DIR]
    stsnb gpu-check [--out DIR] [--cpu-rehearsal]
    stsnb summary [--profile cpu] [--out DIR]
    stsnb eval --model NAME [--pooling mean|cls|last] [--template TEXT] [--tasks all|sts12,...]
               [--text senteval|raw] [--data-dir DIR] [--json]
    stsnb book [--profile cpu] [--out DIR] [--instructor]
    stsnb answers [--run NOTEBOOK:N[,N...]] [--check]   (Nb: exercise N's second run)
    stsnb figures [--check]

Bad arguments exit with status 2; ``stsnb run`` exits 1 when a notebook failed (with ``--check``: when the check
found a problem), ``stsnb data`` and ``stsnb models`` when something could not be fetched or does not verify.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path


def _names(value: str) -> list[str]:
    return [name.strip().removesuffix(".ipynb") for name in value.split(",") if name.strip()]


def _timeout(value: str) -> float | None | str:
    if value.lower() in ("none", "plan"):  # no limit; the plan's limits (the default)
        return None if value.lower() == "none" else "plan"
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds or 'none', got {value!r}")
    return seconds


def _groups(value: str) -> list:
    from .runs.parallel import parse_groups

    try:
        return parse_groups(value)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def build_parser() -> argparse.ArgumentParser:
    """The ``stsnb`` parser: one sub-parser per command, each built by its own function below."""
    parser = argparse.ArgumentParser(prog="stsnb", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for add in (_data_parser, _models_parser, _run_parser, _status_parser, _gpu_check_parser, _summary_parser,
                _eval_parser, _book_parser, _answers_parser, _figures_parser):  # fmt: skip
        add(commands)
    return parser


def _data_parser(commands) -> None:
    data_command = commands.add_parser("data", help="fetch the data folder from the Hugging Face Hub, or verify one")
    data_actions = data_command.add_subparsers(dest="action", required=True)
    fetch = data_actions.add_parser(
        "fetch",
        help="build the data folder from public Hub copies and verify it (does nothing if it already verifies)",
    )
    fetch.add_argument("--to", type=Path, help="the folder to build (default: $STSNB_DATA_DIR, else ./data)")
    fetch.add_argument(
        "--paper",
        action="store_true",
        help="add the paper plan's corpora under paper/ (wiki1m whole, nli_for_simcse.csv, SNLI + MultiNLI train)",
    )
    fetch.add_argument(
        "--latest",
        action="store_true",
        help="read every repo at its main branch instead of the commits stsnb pins (the manifest still checks it)",
    )
    strict = "fail on lines whose text equals the reference copy's but for its spacing (default: accept and report)"
    fetch.add_argument("--strict", action="store_true", help=strict)
    fetch.set_defaults(handler=data_fetch_command, parser=fetch)
    verify = data_actions.add_parser("verify", help="check a data folder against the manifest shipped in stsnb")
    verify.add_argument("dir", nargs="?", type=Path, help="the folder (default: $STSNB_DATA_DIR, else ./data)")
    verify.add_argument("--strict", action="store_true", help=strict)
    verify.set_defaults(handler=data_verify_command, parser=verify)


def _models_parser(commands) -> None:
    models_command = commands.add_parser("models", help="put a plan's Hub models in the HF cache before compute")
    models_actions = models_command.add_subparsers(dest="action", required=True)
    models_fetch = models_actions.add_parser(
        "fetch",
        help="download every weight and remote-code repo the plan names, at its pinned commits, into the HF cache "
        "(sizes first); then `stsnb run --check --offline` confirms compute nodes can run with HF_HUB_OFFLINE=1",
    )
    models_fetch.add_argument("--paper", action="store_true", required=True, help="the paper plan's models")
    models_fetch.set_defaults(handler=models_fetch_command, parser=models_fetch)


def _run_parser(commands) -> None:
    from .runs.plans import DEFAULT_OUT

    run = commands.add_parser("run", help="execute the notebooks of a plan with papermill and write summary.md")
    run.add_argument("--profile", default="cpu", help="plan papermill_runs/plans/<profile>.yaml (default: cpu)")
    run.add_argument(
        "--only",
        type=_names,
        action="extend",
        metavar="NOTEBOOK,...",
        help="run (with --check: check) only these notebooks of the plan (summary.md still lists all of them)",
    )
    run.add_argument(
        "--parallel",
        type=_groups,
        metavar='"GPUS:NOTEBOOK,... ..."',
        help="run groups of notebooks side by side, each a child `stsnb run --only` with CUDA_VISIBLE_DEVICES=GPUS, "
        'e.g. "0,1,2,3:10_pcc_tuning 4,5,6,7:20_sts_regression,30_hicl,40_ccl_csts"; exits with the worst code',
    )
    run.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output root (default: papermill_runs/)")
    run.add_argument(
        "--timeout",
        type=_timeout,
        default="plan",
        metavar="SECONDS|none",
        help="seconds each notebook may run, or 'none' for no limit (default: the plan's timeout)",
    )
    run.add_argument(
        "--resume",
        action="store_true",
        help="skip the notebooks whose run in --out finished ok at the same plan values and commit, and continue the "
        "training runs of the others from the checkpoints a failed or killed earlier run left",
    )
    _check_arguments(run)
    run.set_defaults(handler=run_command, parser=run)


def _check_arguments(run: argparse.ArgumentParser) -> None:
    """``stsnb run --check`` and the options that go with it."""
    from .gpu.cost_estimate import DEFAULT_GPU, GPU_TYPES

    run.add_argument(
        "--check",
        action="store_true",
        help="run nothing: check the plan (value types, num_processes vs --gpus, model ids, peak memory per GPU, "
        "global batches, estimated hours against each timeout, checkpoint disk, a --parallel layout for --gpus)",
    )
    run.add_argument(
        "--online",
        action="store_true",
        help="with --check: also reach every Hub model and dataset of the plan (config, tokenizer, remote code, "
        "gated access with your token) and verify the data folder; downloads no weights",
    )
    run.add_argument(
        "--offline",
        action="store_true",
        help="with --check: confirm, without the network, that every model of the plan is in the HF cache at its "
        "pinned commit and the data folder holds its paper/ corpora (so compute nodes run with HF_HUB_OFFLINE=1)",
    )
    run.add_argument(
        "--markdown",
        action="store_true",
        help="with --check: print only the tables docs/gpu-server.md holds (memory per GPU, time per notebook, the "
        "overhead's sensitivity, the --parallel layout), between comments naming this command, to paste there "
        "(tests/test_docs.py compares them)",
    )
    run.add_argument("--gpus", type=int, help="with --check: GPUs on the server (num_processes must fit)")
    run.add_argument("--gpu-memory", type=float, metavar="GIB", help="with --check: memory per GPU in GiB")
    run.add_argument(
        "--gpu-type",
        choices=sorted(GPU_TYPES),
        default=None,
        help=f"with --check: the GPU type whose bf16 peak prices the time estimate (default: {DEFAULT_GPU})",
    )
    run.add_argument(
        "--calibration",
        type=Path,
        metavar="FILE",
        help="with --check: a `stsnb gpu-check` report (.json) whose measured ratios replace the assumptions, each "
        "term (compute, per-step overhead, evaluation, I/O) by its own",
    )


def _status_parser(commands) -> None:
    from .runs.plans import DEFAULT_OUT

    status = commands.add_parser(
        "status",
        help="where a plan's run stands, read from its output folder alone (works from a login node while the job "
        "runs): each notebook's state, its fit and step, pace and projected end against its timeout",
    )
    status.add_argument(
        "folder",
        nargs="?",
        type=Path,
        help="the plan's output folder (default: <--out>/<--profile>, papermill_runs/paper)",
    )
    status.add_argument("--profile", default=None, help="the plan (default: the folder's name, else paper)")
    status.add_argument("--out", type=Path, default=DEFAULT_OUT, help="runs root (default: papermill_runs/)")
    status.set_defaults(handler=status_command, parser=status)


def _gpu_check_parser(commands) -> None:
    gpu_check = commands.add_parser(
        "gpu-check",
        help="the first command on a GPU server: the gpu test tier, measured memory and time of each paper fit, "
        "evaluation speed; writes a report that `stsnb run --check --calibration` reads (about 10 minutes)",
    )
    gpu_check.add_argument(
        "--out", type=Path, default=None, help="report folder (default: benchmarks/results/gpu/ in the checkout)"
    )
    gpu_check.add_argument(
        "--cpu-rehearsal",
        action="store_true",
        help="run every measurement at tiny sizes on the CPU (a plumbing check, under 3 minutes; measures no GPU)",
    )
    gpu_check.set_defaults(handler=gpu_check_command, parser=gpu_check)


def _summary_parser(commands) -> None:
    from .runs.plans import DEFAULT_OUT

    summary = commands.add_parser(
        "summary", help="rewrite papermill_runs/<profile>/summary.md from the run folders (runs no notebook)"
    )
    summary.add_argument("--profile", default="cpu", help="plan papermill_runs/plans/<profile>.yaml (default: cpu)")
    summary.add_argument("--out", type=Path, default=DEFAULT_OUT, help="runs root (default: papermill_runs/)")
    summary.set_defaults(handler=summary_command, parser=summary)


def _eval_parser(commands) -> None:
    evaluate = commands.add_parser("eval", help="evaluate a model on the STS suite (Spearman x100, SentEval 'all')")
    evaluate.add_argument("--model", required=True, help="minilm-l6, smollm2-135m, a local folder or a Hub id")
    evaluate.add_argument("--pooling", choices=("mean", "cls", "last"), help="default: the model's own")
    evaluate.add_argument(
        "--template",
        help="a prompt template with the slot *sent_0* (last-token pooling), e.g. Pcc-tuning's PromptSTH "
        "'This sentence : \"*sent_0*\" means something'",
    )
    evaluate.add_argument("--tasks", default="all", help="all, or a comma list like sts12,sts13,stsb,sickr")
    evaluate.add_argument("--text", choices=("senteval", "raw"), default="senteval", help="default: senteval")
    evaluate.add_argument(
        "--data-dir", type=Path, help="data folder (default: $STSNB_DATA_DIR, else ./data); 'hub': the Hub copies"
    )
    evaluate.add_argument("--json", action="store_true", help="print one JSON object: task -> Spearman, avg")
    evaluate.set_defaults(handler=eval_command, parser=evaluate)


def _book_parser(commands) -> None:
    from .runs.plans import DEFAULT_OUT

    book = commands.add_parser("book", help="a static HTML site of the executed runs of a profile (readable offline)")
    book.add_argument("--profile", default="cpu", help="the runs under papermill_runs/<profile>/ (default: cpu)")
    book.add_argument(
        "--out",
        type=Path,
        help="output folder (default: papermill_runs/<profile>/book, with --instructor book-instructor)",
    )
    book.add_argument("--runs", type=Path, default=DEFAULT_OUT, help="runs root (default: papermill_runs/)")
    book.add_argument("--instructor", action="store_true", help="the instructor's edition: with the answer sheet")
    book.set_defaults(handler=book_command, parser=book)


def _answers_parser(commands) -> None:
    answers = commands.add_parser(
        "answers",
        help="run exercises and list what the answer sheet (stsnb book --instructor) does not measure yet",
    )
    answers.add_argument(
        "--run",
        type=_exercises,
        action="append",
        default=[],
        help="first run these exercises (the notebook with each exercise's change; Nb: exercise N's second run), e.g."
        " 10_pcc_tuning:2,3 or 20_sts_regression:5b",
    )
    answers.add_argument("--check", action="store_true", help="exit 1 if the sheet has a value not measured yet")
    answers.set_defaults(handler=answers_command, parser=answers)


def _figures_parser(commands) -> None:
    figures = commands.add_parser("figures", help="redraw the training notebooks' pipeline figures (their openings)")
    figures.add_argument("--check", action="store_true", help="exit 1 if a committed figure is out of date")
    figures.set_defaults(handler=figures_command, parser=figures)


def _exercises(value: str) -> tuple[str, list[str]]:
    """``NOTEBOOK:N[,N...]``: exercise N's run, or ``Nb`` for its second run."""
    from .runs.plans import PlanError
    from .teaching.answers import parse_run

    notebook, _, runs = value.partition(":")
    chosen = [run.strip() for run in runs.split(",") if run.strip()]
    try:
        for run in chosen:
            parse_run(run)
    except PlanError:
        chosen = []
    if not notebook or not chosen:
        raise argparse.ArgumentTypeError(
            f"expected NOTEBOOK:N[,N...] (Nb: its second run), e.g. 10_pcc_tuning:2,3b, got {value!r}"
        )
    return notebook.removesuffix(".ipynb"), chosen


def data_fetch_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .data.fetch import fetch
    from .data.hub import FetchError

    try:
        result = fetch(
            args.to, paper=args.paper, latest=args.latest, strict=args.strict, say=lambda line: print(line, flush=True)
        )
    except FetchError as err:
        print(f"stsnb data fetch: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(
            "stsnb data fetch: interrupted; nothing was put in place (run it again: completed downloads are cached)",
            file=sys.stderr,
        )
        return 130
    print(f"stsnb data fetch: {result.message}")
    return 0


def data_verify_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .data.fetch import default_target
    from .data.hub import FetchError
    from .data.manifest import verify

    try:
        folder = args.dir if args.dir is not None else default_target()
    except FetchError as err:
        parser.error(str(err))
    result = verify(folder, strict=args.strict)
    print(f"stsnb data verify: {result.text()}", file=sys.stdout if result.ok else sys.stderr)
    return 0 if result.ok else 1


def gpu_check_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .gpu.gpu_check import DEFAULT_OUT, NoCuda, failed_rows, run

    try:
        report, path = run(args.out or DEFAULT_OUT, cpu_rehearsal=args.cpu_rehearsal)
    except NoCuda as err:
        print(f"stsnb gpu-check: {err}", file=sys.stderr)
        return 2
    failed = failed_rows(report)
    print(f"stsnb gpu-check: report in {path} and {path.with_suffix('.json')} ({report.seconds:.0f} s)")
    for line in failed:
        print(f"  failed: {line}", file=sys.stderr)
    return 1 if failed else 0


def run_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .runs.execution import run
    from .runs.plans import PLANS_DIR, PlanError

    if args.check:
        return _check_command(args, parser)
    asked = (args.gpus, args.gpu_memory, args.gpu_type, args.calibration)
    if any(value is not None for value in asked) or args.online or args.offline or args.markdown:
        parser.error(
            "--gpus, --gpu-memory, --gpu-type, --calibration, --online, --offline and --markdown go with --check"
        )
    if args.parallel and args.only:
        parser.error("--parallel names the notebooks of each group: leave out --only")
    from .gpu.check_command import cuda_refusal

    refusal = cuda_refusal(args.profile, PLANS_DIR)
    if refusal:
        print(f"stsnb run: {refusal}", file=sys.stderr)
        return 2
    if args.parallel:
        return _run_parallel(args, parser)
    try:
        return run(args.profile, args.only, args.out, timeout=args.timeout, resume=args.resume)
    except PlanError as err:
        parser.error(str(err))


def _check_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``stsnb run --check``: the plan (its ``--only`` notebooks) checked by ``stsnb.gpu.check_command``."""
    from .gpu.calibration import CalibrationError
    from .gpu.calibration import load as load_calibration
    from .gpu.check_command import only_plan, run_check
    from .gpu.cost_estimate import DEFAULT_GPU
    from .runs.plans import NOTEBOOKS_DIR, PLANS_DIR, PlanError, load_plan, plan_path

    try:
        plan = load_plan(plan_path(args.profile, PLANS_DIR))
        unknown = [name for name in args.only or () if name not in plan.notebooks]
        if unknown:
            raise PlanError(
                f"--only {', '.join(unknown)}: not in {plan.path.name} (it has: {', '.join(plan.notebooks)})"
            )
        calibration = load_calibration(args.calibration) if args.calibration else None
    except (PlanError, CalibrationError) as err:
        parser.error(str(err))
    return run_check(
        only_plan(plan, args.only),
        NOTEBOOKS_DIR,
        gpus=args.gpus,
        gpu_memory=args.gpu_memory,
        gpu_type=args.gpu_type or DEFAULT_GPU,
        calibration=calibration,
        markdown=args.markdown,
        online=args.online,
        offline=args.offline,
    )


def status_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``stsnb status``: ``stsnb.runs.status`` on the plan's output folder; exit 1 when it holds no run."""
    from .runs.plans import PLANS_DIR, PlanError, load_plan, plan_path
    from .runs.status import plan_status

    folder = args.folder if args.folder is not None else Path(args.out) / (args.profile or "paper")
    profile = args.profile or folder.resolve().name
    if not folder.is_dir():
        parser.error(f"{folder} does not exist: give the output folder of a plan (stsnb run --out DIR --profile NAME)")
    try:
        notebooks: dict | list = load_plan(plan_path(profile, PLANS_DIR)).notebooks
    except PlanError:  # a folder of no known plan: the notebooks it holds
        names = {p.name.removeprefix(".partial-").removesuffix(".failed") for p in folder.iterdir() if p.is_dir()}
        notebooks = sorted(n for n in names if not n.startswith("."))
    print(plan_status(folder, notebooks))
    return 0


def _run_parallel(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``--parallel``: the groups' notebooks checked against the plan, then one child ``stsnb run --only`` per group
    (``stsnb.runs.parallel``)."""
    from .runs.parallel import run_parallel
    from .runs.plans import NOTEBOOKS_DIR, PLANS_DIR, PlanError, check_plan, load_plan, plan_path

    named = [name for group in args.parallel for name in group.notebooks]
    try:
        plan = load_plan(plan_path(args.profile, PLANS_DIR))
        check_plan(plan, NOTEBOOKS_DIR, named)
    except PlanError as err:
        parser.error(str(err))
    left = [name for name in plan.notebooks if name not in named]
    if left:
        print(f"[stsnb run] --parallel leaves out {', '.join(left)} (not run)", file=sys.stderr, flush=True)
    timeout = "none" if args.timeout is None else str(args.timeout)  # "plan" or seconds, as _timeout reads them
    base = [sys.executable, "-m", "stsnb.cli", "run", "--profile", args.profile, "--out", str(Path(args.out).resolve())]
    base += ["--timeout", timeout] + (["--resume"] if args.resume else [])
    return run_parallel(args.parallel, lambda group: [*base, "--only", ",".join(group.notebooks)])


def models_fetch_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``stsnb models fetch --paper``: :func:`stsnb.gpu.local_models.fetch` over the paper plan's models."""
    from .gpu import local_models
    from .runs.plans import NOTEBOOKS_DIR, PLANS_DIR, PlanError, load_plan, plan_path

    try:
        plan = load_plan(plan_path("paper", PLANS_DIR))
        models, pins = local_models.plan_models_and_pins(plan, NOTEBOOKS_DIR)
    except PlanError as err:
        parser.error(str(err))
    try:
        result = local_models.fetch(models, pins, say=lambda line: print(line, flush=True))
    except KeyboardInterrupt:
        print(
            "stsnb models fetch: interrupted (run it again: completed downloads are in the HF cache)", file=sys.stderr
        )
        return 130
    if not result.ok:
        print(f"stsnb models fetch: {len(result.problems)} repos not fetched (named above)", file=sys.stderr)
        return 1
    print(f"stsnb models fetch: {len(result.fetched)} repos in the HF cache; check with "
          "`stsnb run --profile paper --check --offline`")  # fmt: skip
    return 0


def summary_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .runs.plans import PlanError
    from .runs.summary import write_summary

    try:
        path = write_summary(args.profile, args.out)
    except PlanError as err:
        parser.error(str(err))
    print(f"stsnb summary: {path}")
    return 0


def eval_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .data import DataError, describe_source
    from .evaluation.evaluate import EmbeddingCache, parse_tasks, sts
    from .models.loading import LazyEncoder, ModelError, cache_dir, folder_cache_key, load_encoder

    try:
        tasks = parse_tasks(args.tasks)
    except ValueError as err:
        parser.error(str(err))
    if args.template and args.pooling not in (None, "last"):
        parser.error(f"--template {args.template} embeds the prompt's last token: use --pooling last (or omit it)")
    data_dir = str(args.data_dir) if args.data_dir is not None else None
    try:
        source = describe_source(data_dir)  # before loading a model: a missing data folder is a quick, clear error
    except DataError as err:
        parser.error(str(err))
    pooling = args.pooling or ("last" if args.template else None)
    # with --json, stdout carries the JSON object only: anything a library prints goes to stderr
    with contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext():
        try:
            key = folder_cache_key(args.model, pooling=pooling, template=args.template)
            if key is not None:  # the model is built only if an embedding is missing from the cache
                encoder = LazyEncoder(args.model, key, pooling=pooling, template=args.template)
            else:
                encoder = load_encoder(args.model, pooling=pooling, template=args.template)
        except ModelError as err:
            parser.error(str(err))
        cache = EmbeddingCache(cache_dir() / "embeddings")
        try:
            report = sts(encoder, tasks=tasks, text=args.text, data_dir=data_dir, cache=cache)
        except DataError as err:
            parser.error(str(err))
        print(
            f"{args.model} (pooling {encoder.pooling}, template {encoder.template!r}, text {args.text}) on {source}: "
            f"{report.encoded} sentences encoded, the rest from the cache; {report.seconds:.1f} s",
            file=sys.stderr,
        )
    if args.json:
        print(json.dumps(report.headline()))
    else:
        print(report.table())
    return 0


def book_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    import time

    from .teaching.book import BookError, build

    started = time.perf_counter()
    try:
        index = build(args.profile, args.out, args.runs, instructor=args.instructor)
    except BookError as err:
        parser.error(str(err))
    print(f"stsnb book: {index} ({time.perf_counter() - started:.1f} s); open it in a browser (file://{index})")
    return 0


def answers_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .runs.plans import PlanError
    from .teaching import answers

    failed = 0
    for notebook, runs in args.run:
        for run in runs:
            try:
                outcome = answers.run_exercise(notebook, run)
            except (PlanError, FileNotFoundError) as err:
                parser.error(str(err))
            print(f"stsnb answers: exercise {run} of {notebook}: {outcome.status} {outcome.reason}".rstrip())
            failed += outcome.status != "ok"
    missing = answers.not_measured()
    print(f"stsnb answers: the answer sheet (stsnb book --instructor) has {len(missing)} values not measured yet")
    for line in missing:
        print(f"  {line}")
    return 1 if failed or (args.check and missing) else 0


def figures_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .papers import pipelines
    from .teaching.pipeline import write_all

    stale = write_all(pipelines(), check=args.check)  # the notebooks whose figure changed (or would)
    print(f"stsnb figures: {len(stale)} {'out of date' if args.check else 'redrawn'} {' '.join(stale)}".rstrip())
    return 1 if args.check and stale else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return args.handler(args, args.parser)


if __name__ == "__main__":
    sys.exit(main())
