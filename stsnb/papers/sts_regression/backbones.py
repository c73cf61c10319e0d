"""The backbones of STS-Regression's paper profile: BERT/RoBERTa and two encoders that need the Hub's remote code.

The ``paper`` profile needs Hub weights; here only packaged names load. Nothing is ever substituted.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...models import loading as models

REMOTE_CODE_MODELS = ("jinaai/jina-embeddings-v2-base-en", "nomic-ai/nomic-embed-text-v1")


def load_backbone(
    name: str,
    max_length: int | None = None,
    pooling: models.Pooling = "mean",
    *,
    freeze_embeddings: bool = False,
    gradient_checkpointing: bool = False,
) -> models.SentenceEncoder:
    """An encoder with mean pooling (Section 3.1) by name; Jina v2 / Nomic v1 need the Hub's remote code.

    ``freeze_embeddings`` keeps the token embedding fixed (``stsnb.models.load_encoder``): on the raw backbone
    ``smollm2-135m-l6`` that table is most of the weights, and freezing it makes a training step faster
    (``benchmarks/bench_raw_backbone.py``); the paper trains it. ``gradient_checkpointing`` (non-reentrant
    activation checkpointing) recomputes activations in the backward pass: less memory, the same gradients.

    Raises ``RuntimeError`` naming the weights when they cannot be loaded; nothing is substituted.
    """
    try:
        return models.load_encoder(
            name,
            pooling=pooling,
            max_length=max_length,
            trust_remote_code=name in REMOTE_CODE_MODELS,
            freeze_embeddings=freeze_embeddings,
            gradient_checkpointing=gradient_checkpointing,
        )
    except (OSError, ValueError, models.ModelError) as err:
        raise RuntimeError(
            f"backbone {name!r} could not be loaded ({type(err).__name__}: {err}). The paper profile needs its "
            "weights from the Hugging Face Hub or the local cache; packaged names are "
            f"{sorted(models.KNOWN_MODELS)}. Nothing is substituted."
        ) from err


def require_backbones(names: Sequence[str]) -> None:
    """Fail before any training when a backbone's weights are out of reach (a missing Hub model, no network).

    Packaged names and local folders pass; a Hub id passes when its config can be read (from the local Hugging
    Face cache or the network). The error lists every missing name.
    """
    from transformers import AutoConfig

    missing = []
    for name in names:
        try:
            resolved = models.resolve(name)
        except models.ModelError as err:
            missing.append(f"{name} ({err})")
            continue
        if resolved.source != "hub":
            continue
        try:
            AutoConfig.from_pretrained(resolved.path, trust_remote_code=name in REMOTE_CODE_MODELS)
        except Exception as err:  # OSError, connection errors, missing remote code: all mean "not available"
            missing.append(f"{name} ({type(err).__name__}: {str(err).splitlines()[0][:160]})")
    if missing:
        raise RuntimeError(
            "these backbones are not available here, and the notebook does not substitute others: "
            + "; ".join(missing)
            + ". Run where the Hugging Face Hub (or a filled HF cache) is reachable, or choose packaged models "
            f"{sorted(models.KNOWN_MODELS)}."
        )
