"""The ``eisner`` decoder: exact arc-factored projective decoding by Eisner's algorithm
(:func:`decoders.trees.eisner`, Eisner 1996). The single-root variant lets the root
take exactly one child; the unconstrained one lets it take any number."""

from __future__ import annotations

from .base import register
from .tree_decoders import TreeAlgorithmDecoder
from .trees import eisner


@register("eisner")
class EisnerDecoder(TreeAlgorithmDecoder):
    """Exact arc-factored projective decoding (Eisner 1996;
    :class:`~decoders.tree_decoders.TreeAlgorithmDecoder`)."""

    algorithm = staticmethod(eisner)
