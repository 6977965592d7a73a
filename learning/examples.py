"""Training examples made on demand from sentences with gold trees."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from polyparse.corpora.sentence import Sentence
from polyparse.decoders import Parts
from polyparse.decoders.higher_order import build_parts

from .model import Example, LinearModel


class Examples(Sequence):
    """The examples of a treebank, built when asked for (the features of a treebank do
    not fit in memory); each sentence's candidate arcs (pruned, plus the gold arcs) are
    computed once and kept."""

    def __init__(self, model: LinearModel, sentences: Sequence[Sentence]) -> None:
        self.model = model
        self.sentences = sentences
        self._arcs: dict[int, np.ndarray | None] = {}

    def __len__(self) -> int:
        return len(self.sentences)

    def __getitem__(self, i: int) -> Example:
        return self.model.example(self.sentences[i], gold=True, arcs=self._candidates(i))

    def parts(self, i: int) -> Parts:
        """Example ``i``'s candidate parts, without its features."""
        return build_parts(len(self.sentences[i]), self._candidates(i),
                           **self.model.part_options)

    def _candidates(self, i: int) -> np.ndarray | None:
        if i not in self._arcs:
            self._arcs[i] = self.model.candidate_arcs(self.sentences[i], gold=True)
        return self._arcs[i]
