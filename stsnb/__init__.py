"""stsnb: reproducible, Jupyter-first notebooks for four papers on Semantic Textual Similarity.

Generic layers (one purpose each; none imports ``stsnb.papers``):
``data`` (loaders and the data-folder resolution), ``models`` (weights, pooling, prompt templates, LoRA/QLoRA),
``losses`` (every loss of the four papers, on tensors), ``train`` (the training loop on ``accelerate``),
``evaluate`` (STS suite, SentEval "all" setting, cached encoding), ``stats`` (paired bootstrap intervals, seeds and
the verdict rule), ``comparison`` (ours beside a paper's numbers),
``fingerprint`` (the embedding cache key), ``distributed`` and ``launch`` (the global batch across processes;
a torchrun child per multi-process job), ``raw_backbone`` (``smollm2-135m-l6`` and its dropout), ``memory``
(peak training memory in a fresh process), ``loss_curves`` (loss values and gradients on grids, for plots), ``runs``
(run context, metrics recorded per section), ``plans``, ``execution`` and ``summary`` (``stsnb run``: the plans,
the papermill batch execution, summary.md), ``cli`` (the ``stsnb`` command), ``book`` (static HTML site of the
executed runs), ``plots`` (figure style).

One subpackage per paper above them, in ``stsnb.papers``: ``pcc_tuning`` (prompts, the contrastive ceiling),
``sts_regression`` (Siamese regression), ``hicl`` and ``ccl``; each has ``reported`` (the paper's numbers, labelled as
the paper's). No paper imports another.
"""

__version__ = "0.1.0"

import logging as _logging

# On CPUs with AVX512-bf16, importing bitsandbytes warns that the optional `kernels` package (a Hub download) is
# missing for one 4-bit CPU kernel, then uses its own: nothing a reader can act on, so that one logger is quieted.
_logging.getLogger("bitsandbytes.backends.cpu.ops").setLevel(_logging.ERROR)
