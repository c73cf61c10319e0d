"""stsnb: reproducible, Jupyter-first notebooks for four papers on Semantic Textual Similarity.

The folders are the layers, lowest first (docs/architecture.md; ``tests/test_layout.py`` holds the order):
``data`` and ``models``; ``training`` and ``evaluation``; ``runs``; ``gpu`` and ``teaching``; ``papers`` (one
subpackage per paper, none importing another); ``cli`` (the ``stsnb`` command) on top. A module imports its own layer
and those below it. This file holds the version and one logger setting, and imports nothing of stsnb.
"""

__version__ = "0.1.0"

import logging as _logging

# On CPUs with AVX512-bf16, importing bitsandbytes warns that the optional `kernels` package (a Hub download) is
# missing for one 4-bit CPU kernel, then uses its own: nothing a reader can act on, so that one logger is quieted.
_logging.getLogger("bitsandbytes.backends.cpu.ops").setLevel(_logging.ERROR)
