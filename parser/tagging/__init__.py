"""Part-of-speech and morphological tagging (UPOS, XPOS, FEATS) for the parser's input.

:class:`Tagger` is an averaged structured perceptron with Viterbi decoding (Collins 2002);
:func:`jackknife` re-tags a training set by k-fold cross-tagging so that the parser
learns from predicted tags of test-time quality.
"""

from .tagger import Tagger, jackknife, with_tags

__all__ = ["Tagger", "jackknife", "with_tags"]
