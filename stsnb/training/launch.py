"""Script entry point for ``accelerate launch``: run one function of the package on every process.

    accelerate launch --num_processes 4 -m stsnb.training.launch package.module:function '{"name": "value"}'

Each process imports ``package.module``, calls ``function(**kwargs)`` (kwargs as a JSON object) and, on the main
process, prints the JSON of what it returns when that is JSON-able.

    python -m stsnb.training.launch --torchrun --nproc_per_node 2 -m stsnb.training.launch --job FOLDER/job.pkl

is how ``stsnb.training.distributed.run`` starts a pickled ``(function, args)`` job outside the notebook kernel:
torchrun (``torch.distributed.run``) with the watchdog that stops it when the runner is gone
(``stsnb.training.orphans``), whose workers run the job; the main process saves the result as ``FOLDER/result.pt``.
"""

from __future__ import annotations

import importlib
import json
import sys


def main(argv: list[str] | None = None) -> None:
    args = argv if argv is not None else sys.argv[1:]
    if args[:1] == ["--torchrun"]:
        from torch.distributed.run import main as torchrun

        from .orphans import guard_agent

        guard_agent()
        torchrun(args[1:])
        return
    if len(args) == 2 and args[0] == "--job":
        from .distributed import run_job

        run_job(args[1])
        return
    if not args or ":" not in args[0]:
        raise SystemExit('usage: python -m stsnb.training.launch package.module:function [\'{"json": "kwargs"}\']')
    module, _, name = args[0].partition(":")
    kwargs = json.loads(args[1]) if len(args) > 1 else {}
    if not isinstance(kwargs, dict):
        raise SystemExit(f"the kwargs must be a JSON object, got {args[1]!r}")
    result = getattr(importlib.import_module(module), name)(**kwargs)
    from accelerate import PartialState

    if PartialState().is_main_process:
        try:
            print(json.dumps(result))
        except TypeError:
            print(repr(result))


if __name__ == "__main__":
    main()
