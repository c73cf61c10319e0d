"""``stsnb run --check --online``: the Hub code of each model the plan trusts, run before any compute.

Jina v2's and Nomic v1's modelling code (their config's ``auto_map``) was written for transformers 4.x, and
transformers 5 removed helpers such code calls (``get_head_mask``, ``find_pruneable_heads_and_indices``), so it
may fail when the model is built or run, which importing the class does not show. Here each model is built from its
config with ONE layer (``num_hidden_layers`` / ``n_layer`` = 1; random weights, no weight file read) on the CPU,
under the installed transformers, at the commits the plan pins (``stsnb.models.revisions``), and embeds two
sentences through ``stsnb.models.SentenceEncoder``, the notebooks' own path. Minutes before a batch, not hours into
it.
"""

from __future__ import annotations

from ..models.revisions import UNPINNED, Pin

SENTENCES = ("A man is playing a guitar.", "A woman is slicing an onion.")
LAYER_FIELDS = ("num_hidden_layers", "n_layer", "num_layers")  # BERT-like, GPT-2-like (Nomic's) and others


class RemoteCodeFailed(RuntimeError):
    """The remote code of ``model`` raised at ``stage`` (config, construction, tokenizer or forward)."""

    def __init__(self, model: str, stage: str, err: BaseException):
        import transformers

        text = str(err).strip().splitlines()
        first = f"{type(err).__name__}: {text[0][:300] if text else ''}"
        super().__init__(
            f"{model}: its remote code failed at {stage} under transformers {transformers.__version__}: {first}"
        )
        self.model, self.stage = model, stage


def one_layer(config) -> list[str]:
    """Set every layer-count field ``config`` has to 1; the fields set (none: the count is not known here)."""
    changed = []
    for name in LAYER_FIELDS:
        if isinstance(getattr(config, name, None), int) and not isinstance(getattr(config, name), bool):
            setattr(config, name, 1)
            changed.append(name)
    return changed


def code_repo(reference: str, model: str) -> str:
    """The repo an ``auto_map`` entry's code lives in: ``owner/repo--module.Class`` names it, else the model's."""
    return reference.split("--")[0] if "--" in reference else model


def run_remote_code(model: str, pin: Pin = UNPINNED) -> str:
    """Build ``model`` with one layer under its remote code and embed ``SENTENCES`` on the CPU; what ran, as one line.

    Raises ``RemoteCodeFailed`` naming the stage and the exception (a package the code imports that is not
    installed raises at construction, where the code is imported)."""
    import torch
    import transformers
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    from ..models.loading import SentenceEncoder

    stage = "config"
    try:
        config = AutoConfig.from_pretrained(model, trust_remote_code=True, **pin.kwargs())
        auto_map = getattr(config, "auto_map", None) or {}
        reference = auto_map.get("AutoModel")
        if reference is None:
            raise ValueError(f"no AutoModel in its config's auto_map ({sorted(auto_map) or 'empty'})")
        fields = one_layer(config)
        if not fields:
            raise ValueError(f"its config has none of {', '.join(LAYER_FIELDS)}: cannot build it with one layer")
        stage = "construction"
        code_revision = pin.code_at(code_repo(reference, model), model)
        backbone = AutoModel.from_config(config, trust_remote_code=True, code_revision=code_revision).eval()
        stage = "tokenizer"
        tokenizer = AutoTokenizer.from_pretrained(model, trust_remote_code=True, **pin.kwargs())
        stage = "forward"
        encoder = SentenceEncoder(backbone, tokenizer, "mean", None, 32, model)
        embeddings = encoder.encode(list(SENTENCES))
        if embeddings.shape[0] != len(SENTENCES) or not bool(torch.isfinite(embeddings).all()):
            raise ValueError(f"embeddings of shape {tuple(embeddings.shape)} with non-finite values")
    except Exception as err:  # whatever the remote code raises is the finding
        raise RemoteCodeFailed(model, stage, err) from err
    return (
        f"{model}: remote code {type(backbone).__name__} built with 1 layer ({', '.join(fields)} = 1, random weights) "
        f"and run on {len(SENTENCES)} sentences on the CPU under transformers {transformers.__version__} "
        f"({embeddings.shape[1]}-d)"
    )
