"""The data layer: every corpus the notebooks read, from the data folder or the Hugging Face Hub.

Holds the loaders (``loading``: STS12-16, STS-B, SICK in SentEval's "all" setting, SNLI/MultiNLI, Wikipedia, C-STS),
SentEval's text conversions (``senteval_text``), ``stsnb data fetch`` (``fetch``) and the manifest that
``stsnb data verify`` checks a folder against (``manifest``).

May import: no other layer (the bottom of the package).

The loaders' names are re-exported here, so a notebook reads ``from stsnb import data; data.load_stsb("test")``.
"""

from .loading import (
    NLI_LABELS,
    CSTSRecord,
    DataError,
    Loaded,
    NLIPair,
    STSPair,
    Triplet,
    dedup_against_tests,
    describe_source,
    load_csts,
    load_nli,
    load_sick,
    load_simcse_triplets,
    load_snli,
    load_sts_year,
    load_stsb,
    load_wiki_corpus,
    nli_triplets,
    resolve_data_dir,
    sample,
    seven_test_sets,
)

__all__ = [
    "CSTSRecord",
    "DataError",
    "Loaded",
    "NLIPair",
    "NLI_LABELS",
    "STSPair",
    "Triplet",
    "dedup_against_tests",
    "describe_source",
    "load_csts",
    "load_nli",
    "load_sick",
    "load_simcse_triplets",
    "load_snli",
    "load_sts_year",
    "load_stsb",
    "load_wiki_corpus",
    "nli_triplets",
    "resolve_data_dir",
    "sample",
    "seven_test_sets",
]
