"""The data layer: every corpus the notebooks read, from the data folder or the Hugging Face Hub.

Holds the records every loader returns and the layer's names (``records``), the loaders (``loading``: STS12-16, STS-B,
SICK in SentEval's "all" setting, SNLI/MultiNLI, Wikipedia, C-STS) with their Hub copies (``hub_copies``), the dev pairs
of checkpoint selection and the held-out ones of the dev gate (``selection``), SentEval's text conversions
(``senteval_text``), ``stsnb data fetch`` (``fetch``, reading the Hub through ``hub`` at the commits ``revisions`` pins)
and the manifest that ``stsnb data verify`` checks a folder against (``manifest``), with its report of lines spaced
otherwise than the reference (``spacing``).

May import: no other layer.

The records and loaders are re-exported here: the rest of the package and the notebooks read
``from stsnb import data; data.load_stsb("test")``.
"""

from .loading import (
    DEFAULT_DATA_DIR,
    SICK_ENTAILMENT,
    SICK_FILES,
    DedupReport,
    dedup_against_tests,
    describe_source,
    has_data_dir,
    load_csts,
    load_nli,
    load_sick,
    load_simcse_triplets,
    load_snli,
    load_sts_year,
    load_stsb,
    load_wiki,
    load_wiki_corpus,
    nli_triplets,
    rescale_sick,
    resolve_data_dir,
    sample,
    seven_test_sets,
    uses_hub,
)
from .records import (
    CSTS_SPLITS,
    DATA_DIR_ENV,
    HUB,
    NLI_LABEL_TO_ID,
    NLI_LABELS,
    SICK_SPLITS,
    SNLI_SPLITS,
    STS_SUBSETS,
    STS_YEARS,
    STSB_SPLITS,
    WIKI_FILE,
    CSTSRecord,
    DataError,
    Loaded,
    NLIPair,
    STSPair,
    TextVariant,
    Triplet,
)
from .selection import GatedSelection, selection_and_gate
from .spacing import env_record as spacing_record

__all__ = [
    "spacing_record",
    "CSTSRecord",
    "CSTS_SPLITS",
    "DATA_DIR_ENV",
    "DEFAULT_DATA_DIR",
    "DataError",
    "DedupReport",
    "HUB",
    "Loaded",
    "NLIPair",
    "NLI_LABELS",
    "NLI_LABEL_TO_ID",
    "SICK_ENTAILMENT",
    "SICK_FILES",
    "SICK_SPLITS",
    "SNLI_SPLITS",
    "STSB_SPLITS",
    "STSPair",
    "STS_SUBSETS",
    "STS_YEARS",
    "TextVariant",
    "Triplet",
    "WIKI_FILE",
    "dedup_against_tests",
    "describe_source",
    "has_data_dir",
    "load_csts",
    "load_nli",
    "load_sick",
    "load_simcse_triplets",
    "load_snli",
    "load_sts_year",
    "load_stsb",
    "load_wiki",
    "load_wiki_corpus",
    "nli_triplets",
    "rescale_sick",
    "resolve_data_dir",
    "GatedSelection",
    "sample",
    "selection_and_gate",
    "seven_test_sets",
    "uses_hub",
]
