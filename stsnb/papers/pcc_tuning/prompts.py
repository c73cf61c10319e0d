"""Pcc-tuning's prompt templates (Table 3): the sentence goes into ``*sent_0*``, the embedding is the hidden state of
the template's last token (Section 3; Table 3 is in Section 4.3).

Exact strings of the official code (ZBWpro/Pcc-tuning ``code/settings.py``): note the space before
the colon and the trailing quote of PromptEOL. PromptSTH is the paper's default.
"""

from __future__ import annotations

TEMPLATES: dict[str, str] = {
    "eol": 'This sentence : "*sent_0*" means in one word:"',
    "sth": 'This sentence : "*sent_0*" means something',
    "sum": 'This sentence : "*sent_0*" can be summarized as',
}
TEMPLATE_NAMES = {"eol": "PromptEOL", "sth": "PromptSTH", "sum": "PromptSUM"}  # Table 3's row names
DEFAULT_TEMPLATE = "sth"


def template(name: str) -> str:
    """The template text of ``eol``, ``sth`` or ``sum`` (Table 3)."""
    if name not in TEMPLATES:
        raise ValueError(f"template must be one of {sorted(TEMPLATES)} (Pcc-tuning Table 3), got {name!r}")
    return TEMPLATES[name]
