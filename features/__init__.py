"""Features: sentences and candidate parts -> hashed sparse feature matrices.

Templates for arcs after McDonald, Crammer, Pereira (2005) and for the higher-order parts
(grandparents, siblings, valency, non-projective arcs) after Carreras (2007), Koo and
Collins (2010), McDonald and Pereira (2006) and Martins, Smith, Xing (2009); see
:mod:`features.templates`.
"""

import polyparse.corpora.cache  # noqa: F401  (numba's cache folder, before any kernel)
from .extractor import FeatureConfig, FeatureExtractor
from .templates import LABEL_TEMPLATES, PART_TEMPLATES, TEMPLATE_SETS, PartTemplates
from .vocab import FIELDS, EncodedSentence, Vocabulary

__all__ = ["FIELDS", "LABEL_TEMPLATES", "PART_TEMPLATES", "TEMPLATE_SETS", "EncodedSentence",
           "FeatureConfig", "FeatureExtractor", "PartTemplates", "Vocabulary"]
