"""Features: sentences and candidate parts -> hashed sparse feature matrices.

Templates after McDonald, Crammer, Pereira (2005), see :mod:`features.templates`.
"""

from .extractor import FeatureConfig, FeatureExtractor
from .templates import LABEL_TEMPLATES, PART_TEMPLATES, TEMPLATE_SETS, PartTemplates
from .vocab import FIELDS, EncodedSentence, Vocabulary

__all__ = ["FIELDS", "LABEL_TEMPLATES", "PART_TEMPLATES", "TEMPLATE_SETS", "EncodedSentence",
           "FeatureConfig", "FeatureExtractor", "PartTemplates", "Vocabulary"]
