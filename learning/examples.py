"""Training examples made on demand from sentences with gold trees."""

from __future__ import annotations

from collections.abc import Sequence

from polyparse.corpora.sentence import Sentence
from polyparse.decoders import Parts

from .model import Example, LinearModel


class Examples(Sequence):
    """The examples of a treebank, built when asked for (the features of a treebank do
    not fit in memory); each sentence's candidate parts (over the pruned arcs plus the
    gold arcs) are built once and kept, the same object at every visit (what a trainer
    derives from them, e.g. a factor graph's structure, can be kept too)."""

    def __init__(self, model: LinearModel, sentences: Sequence[Sentence]) -> None:
        self.model = model
        self.sentences = sentences
        self._parts: dict[int, Parts] = {}

    def __len__(self) -> int:
        return len(self.sentences)

    def __getitem__(self, i: int) -> Example:
        return self.model.example(self.sentences[i], gold=True, parts=self.parts(i))

    def parts(self, i: int) -> Parts:
        """Example ``i``'s candidate parts, without its features."""
        if i not in self._parts:
            sentence = self.sentences[i]
            self._parts[i] = self.model.parts(sentence,
                                              self.model.candidate_arcs(sentence, gold=True))
        return self._parts[i]
