"""The training layer: the losses of the four papers and one training loop for all of them.

Holds every loss on tensors (``losses``), the loop on ``accelerate`` with best-on-dev selection and resume (``train``,
what a fit is asked and returns in ``config``, its AdamW groups in ``param_groups``), global batches shared out over
processes (``batching``, ``distributed``), the torchrun child of a multi-process fit (``launch``), the watchdogs and the
checkpoint lock that leave no orphan training behind a killed run (``orphans``) on the one lock primitive of the package
(``file_lock``), one training step done by hand in a notebook (``training_step``), a fit's bar and pace line
(``progress``, over ``stsnb.models.progress``) and a fit's heartbeat for ``stsnb status`` (``heartbeat``).

May import: data, models.
"""
