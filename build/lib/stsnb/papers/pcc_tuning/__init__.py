"""Pcc-tuning (Zhang & Li): the contrastive Spearman ceiling (Section 2, Appendix C: ``ceiling``), the prompt
templates of Table 3 (``prompts``) and the paper's reported numbers (``reported``)."""

from . import ceiling
from .prompts import DEFAULT_TEMPLATE, TEMPLATE_NAMES, TEMPLATES, template
from .reported import REPORTED

__all__ = ["DEFAULT_TEMPLATE", "REPORTED", "TEMPLATES", "TEMPLATE_NAMES", "ceiling", "template"]
