"""The text-processing stage: raw text to the words, tags and lemmas the parser reads.

Three trained models, run in this order and stored with the parser in one model file:

1. :class:`Tokenizer` (:mod:`.tokenizer`) cuts raw text into sentences and tokens and
   expands multiword tokens into syntactic words (after the UDPipe tokenizer, Straka,
   Hajic and Strakova 2016);
2. :class:`Tagger` (:mod:`.tagger`) gives each word its UPOS, XPOS and FEATS: an
   averaged structured perceptron with Viterbi decoding (Collins 2002); :func:`jackknife`
   re-tags a training set by k-fold cross-tagging so that the parser learns from
   predicted tags of test-time quality;
3. :class:`Lemmatizer` (:mod:`.lemmatizer`) fills LEMMA from the form and the predicted
   tags (a dictionary backed by a classifier of edit scripts).

Once the parser has a sentence's tree, a second :class:`Tagger`, whose words also see
their place in the tree (:func:`second_pass_options`), tags it again, and the lemmatizer
follows (:meth:`parser.pipeline.Parser.retag_parsed`).
"""

from .lemmatizer import Lemmatizer, LemmatizerOptions, with_lemmas
from .tagger import Tagger, TaggerOptions, jackknife, second_pass_options, with_tags
from .tokenizer import Tokenizer, TokenizerOptions

__all__ = ["Lemmatizer", "LemmatizerOptions", "Tagger", "TaggerOptions", "Tokenizer",
           "TokenizerOptions", "jackknife", "second_pass_options", "with_lemmas", "with_tags"]
