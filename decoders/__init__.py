"""Decoders: maximize a linear score over dependency trees or a relaxation of them.

Every module of this package that defines a decoder registers it with
:func:`decoders.base.register`; importing the package imports them all, so a new decoder
plugs in by adding one module.
"""

import polyparse.corpora.cache  # noqa: F401  (numba's cache folder, before any kernel)
import importlib
import pkgutil

from .base import (CERTIFICATE_KINDS, DECODERS, Budget, Certificate, CertificateCounts,
                   DecodeResult, DecodeStats, Decoder, ScoredTree, TimeLimitReached,
                   decoder_class, hamming_cost, make_decoder, preferred_decoder, register)
from .declared import Declared, Option, OptionError
from .parts import Parts, PartType, arc_parts

for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["CERTIFICATE_KINDS", "DECODERS", "Budget", "Certificate", "CertificateCounts",
           "DecodeResult", "DecodeStats", "Declared", "Decoder", "Option", "OptionError", "Parts",
           "ScoredTree", "decoder_class", "make_decoder", "PartType", "TimeLimitReached",
           "arc_parts", "hamming_cost", "preferred_decoder", "register"]
