"""Part-of-speech and morphological tagging (UPOS, XPOS, FEATS) for the parser's input.

:class:`Tagger` is an averaged structured perceptron with Viterbi decoding (Collins 2002);
:func:`jackknife` re-tags a training set by k-fold cross-tagging so that the parser
learns from predicted tags of test-time quality. :class:`Lemmatizer` fills LEMMA from the
form and the predicted tags (a dictionary backed by a classifier of edit scripts).
"""

from .lemmatizer import Lemmatizer, LemmatizerOptions, with_lemmas
from .tagger import Tagger, TaggerOptions, jackknife, with_tags

__all__ = ["Lemmatizer", "LemmatizerOptions", "Tagger", "TaggerOptions", "jackknife",
           "with_lemmas", "with_tags"]
