"""The models layer: a model name becomes weights, an encoder and, when asked, LoRA / QLoRA adapters.

Holds the loading of encoders and causal LMs with their pooling and prompt templates (``loading``), the packaged
names, the cache and model folders written whole (``folders``), the raw ``smollm2-135m-l6`` stand-in
(``raw_backbone``), the rehearsal's tiny random models (``tiny``), the embedding cache key (``fingerprint``), the
Hub commits a plan pins its models at (``revisions``) and the progress bar of every fit and evaluation
(``progress``).

May import: no other layer.

The encoder's names are re-exported here, so a notebook reads ``from stsnb import models; models.load_encoder(...)``.
"""

from .folders import KNOWN_MODELS
from .loading import (
    LoraSettings,
    ModelError,
    SentenceEncoder,
    add_lora,
    apply_template,
    count_parameters,
    default_device,
    load_encoder,
    resolve,
)

__all__ = [
    "KNOWN_MODELS",
    "LoraSettings",
    "ModelError",
    "SentenceEncoder",
    "add_lora",
    "apply_template",
    "count_parameters",
    "default_device",
    "load_encoder",
    "resolve",
]
