"""The GPU planning layer: what a GPU server needs before hours of compute.

Holds the CUDA check (``cuda_check``), the preflight of a plan's models and data (``preflight``) with the run of
its trusted remote code (``remote_code``), ``stsnb models fetch`` and the offline check of the HF cache
(``local_models``), ``stsnb run --check`` (``check_command``, ``plan_check``) with its memory estimate
(``memory_estimate``, measured by ``memory``), its time and disk estimates (``cost_estimate``, tabled by
``plan_costs``; ``worst_case`` marks what took a cap) and its ``--parallel`` layout (``layout``); ``stsnb gpu-check``
(``gpu_check``, ``fit_probe``, ``step_probe``, ``gpu_check_report``) and the calibration it feeds (``calibration``).

May import: data, models, training, evaluation, runs.
"""
