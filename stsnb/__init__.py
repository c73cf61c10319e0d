"""stsnb: reproducible, Jupyter-first notebooks for four papers on Semantic Textual Similarity.

Modules (one purpose each): ``data`` (loaders), ``models`` (weights, pooling, prompts, LoRA/QLoRA),
``evaluate`` (STS suite), ``stats`` (paired bootstrap intervals, seeds, verdicts), ``train`` (training loop),
``losses`` (every loss of the four papers), ``ceiling`` (the contrastive Spearman ceiling), ``papers`` (the
papers' numbers), ``runs`` (run context), ``runner`` (papermill batch runner), ``plots`` (figure style).
"""

__version__ = "0.1.0"
