"""A part-of-speech and morphology tagger: averaged structured perceptron + Viterbi.

The model is Collins (2002): a first-order (tag bigram) linear sequence model trained
with the structured perceptron and averaged parameters, decoded exactly with Viterbi.
Training decodes cost-augmented (each wrong tag gets a bonus ``margin``, as in max-margin
training: Taskar et al. 2004, Tsochantaridis et al. 2005), so the perceptron also updates
on sentences it tags right by too small a margin; on en_ewt this gives +0.25 UPOS and
+0.25 XPOS over ``margin=0``. The word features follow Ratnaparkhi (1996) and Toutanova
et al. (2003): the word, its lowercased form, prefixes up to 4 and suffixes up to 6
characters, word shape, spelling flags (capitals, digits, hyphen), the words within +-2
and conjunctions of them (including the bigrams ``w-2 w-1`` and ``w+1 w+2``), plus the
ambiguity classes (UPOS sets) of frequent words around, and a few word features
conjoined with the previous tag (see :func:`parser.text._tagger_kernels.context_features`).
Frequent words may only take the tags they had in training (Ratnaparkhi's tag
dictionary), which also makes decoding fast.

Features are hashed (Weinberger et al. 2009) with a deterministic 64-bit hash into the
rows of a ``(2**k, T)`` weight matrix per *layer*. A layer is one tag sequence:
``"upos"``, ``"xpos"`` (or the joint ``"upos+xpos"``) and the morphological features,
either as one layer over the whole FEATS string or as one layer per feature name
(``"feats:Case"``: the value, or ``"_"`` when absent), the factored scheme of Qi et al.
(2018). The layers share the features and are trained independently. They are decoded
as a pipeline: the first layer (UPOS) freely, each later one restricted, word by word, to
the tags seen in training with the first layer's tag of that word, and with features on
the first layer's tags of the neighbouring words (gold in training, predicted when
tagging; :func:`parser.text._tagger_kernels.group_features`) and, with ``own_upos``
(:class:`TaggerOptions`), on the word's own first-layer tag conjoined with its
form, suffixes and ending: the factored model's morphological features then depend on
the word's part of speech as its letters do (UDPipe 1's tagger, whose guesser proposes
whole UPOS+FEATS analyses by suffix, gets the same from its joint tags). With ``bundles``
(:class:`TaggerOptions`), a word whose XPOS and FEATS come out as a combination never
seen in training with its UPOS takes the seen one its layers score highest.

Given Brown word clusters from unlabelled text (:mod:`corpora.word_clusters`), every
layer also sees the prefixes of the cluster bit strings of the word and of its
neighbours (Koo et al. 2008; Turian et al. 2010;
:func:`parser.text._tagger_kernels.cluster_features`): on en_ewt, with spaCy's English
clusters, +0.18 UPOS and +0.28 XPOS (mean of 2 seeds); of the 44 UPOS errors fewer
(seed 0), 21 are on words seen 10 times or more in training, 19 on rarer ones and 4 on
unseen ones. The table of the clusters is stored in the model.

With ``endings`` (:class:`TaggerOptions`; the Turkic recipe), every layer
also sees a word's *ending*: the rest of the word after the longest training lemma it
starts with, its *stem*, with the set of UPOS of that lemma, and the word's suffixes of 7
to 9 characters (:meth:`Tagger._ending_atoms`). In agglutinative and fusional languages
most words of new text are unseen forms of seen lemmas (tr_imst dev: 31.7% of its words
unseen); there a stem and an ending say what a word's letters alone do not. On tr_imst dev
they gave +1.35 UPOS, +2.13 FEATS and +0.29 lemmas; on the six other treebanks of
``eval/results/tagger_endings.md`` between -0.88 and +0.62 UPOS and less accurate lemmas.

With ``tree`` (:class:`TaggerOptions`), every layer also sees the word's place in the
dependency tree of its sentence (:func:`parser.text._tagger_kernels.tree_features`) and
the word's own tags from a first pass: the *second pass* of the pipeline, which tags a
sentence again once it is parsed (:meth:`parser.pipeline.Parser.retag_parsed`). It is
stacked generalization (Wolpert 1992) as Nivre and McDonald (2008) and Martins et al.
(2008) stack parsers: fitted on the gold trees, with the first pass's jackknifed tags as
its input (:meth:`Tagger.fit`'s ``tagged``), since those are the tags it reads when it
tags. The tree decides what a word's neighbours leave open: a base-form verb with ``to``
is infinitive and one heading a clause without a subject imperative, a pronoun that is
an object is accusative, a verb agrees with its subject and an auxiliary with its
head's, a conjunct takes its head's mood. From raw text, with the same trees, it took
MLAS from 73.39 to 74.14 on en_ewt dev and from 53.19 to 56.29 on sl_ssj
(``eval/results/stages_en_ewt.md``, ``stages_others.md``: the *first-pass tags* rows);
on the three smallest treebanks, whose trees are worst, it raised MLAS but lowered UPOS
by up to 0.51 (it learns from gold trees).

References
----------
- M. Collins. Discriminative training methods for hidden Markov models: theory and
  experiments with perceptron algorithms. EMNLP 2002.
- A. Ratnaparkhi. A maximum entropy model for part-of-speech tagging. EMNLP 1996.
- K. Toutanova, D. Klein, C. Manning, Y. Singer. Feature-rich part-of-speech tagging with
  a cyclic dependency network. NAACL 2003.
- W. Daelemans, J. Zavrel, P. Berck, S. Gillis. MBT: a memory-based part of speech
  tagger-generator. WVLC 1996 (ambiguity classes).
- H. Daume III. Practical structured learning techniques for natural language
  processing. PhD thesis, USC, 2006 (sec. 2.1.1: lazy averaging).
- K. Weinberger et al. Feature hashing for large scale multitask learning. ICML 2009.
- B. Taskar, C. Guestrin, D. Koller. Max-margin Markov networks. NIPS 2004.
- I. Tsochantaridis, T. Joachims, T. Hofmann, Y. Altun. Large margin methods for
  structured and interdependent output variables. JMLR 6, 2005.
- P. Qi, T. Dozat, Y. Zhang, C. Manning. Universal dependency parsing from scratch.
  CoNLL 2018 shared task (one classifier per morphological feature).
- T. Koo, X. Carreras, M. Collins. Simple semi-supervised dependency parsing. ACL 2008.
- J. Turian, L. Ratinov, Y. Bengio. Word representations: a simple and general method
  for semi-supervised learning. ACL 2010.
- J. Nivre, R. McDonald. Integrating graph-based and transition-based dependency
  parsers. ACL 2008 (stacking).
- A. Martins, D. Das, N. Smith, E. Xing. Stacking dependency parsers. EMNLP 2008.
- D. Wolpert. Stacked generalization. Neural Networks 5(2), 1992.
- J. Strakova, M. Straka, J. Hajic. Open-source tools for morphology, lemmatization, POS
  tagging and named entity recognition. ACL 2014 (MorphoDiTa's suffix guesser).
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, fields, replace
from typing import Mapping, Sequence

import numpy as np

from polyparse.corpora._hashing import sorted_lookup, string_hashes
from polyparse.corpora.sentence import ROOT, Sentence
from polyparse.corpora.word_clusters import ClusterTable

from . import _tagger_kernels as K

log = logging.getLogger(__name__)

FORMAT = "polyparse-tagger"
FORMAT_VERSION = 2  # bump whenever the features of _kernels.context_features change

# CoNLL-U columns (0-based) that tagging rewrites in Sentence.lines.
UPOS_COLUMN, XPOS_COLUMN, FEATS_COLUMN = 3, 4, 5
ABSENT = "_"
"""FEATS of a word without features, and the value of an absent feature in a layer."""
_JOINT = "\t"  # separates UPOS from XPOS in the tags of the joint layer

CHOICES = {"xpos": ("separate", "joint"), "feats": ("whole", "split")}
"""The values of the :class:`TaggerOptions` that name a layout of the layers."""


@dataclass
class _Layer:
    """One tag sequence: its tags and its fitted (averaged) weights.

    ``weights`` is ``float32 (B, T)`` with ``B`` a power of two, ``trans`` ``float32
    (T + 1, T + 1)`` (boundary at index ``T``); ``dict_ptr`` / ``dict_tags`` are the CSR
    rows of the tag dictionary (one row per entry of :attr:`Tagger.dict_keys_`), and
    ``group_ptr`` / ``group_tags`` the tags seen with each tag of the first layer (empty
    for the first layer itself).
    """

    name: str
    tags: tuple[str, ...]
    weights: np.ndarray
    trans: np.ndarray
    dict_ptr: np.ndarray
    dict_tags: np.ndarray
    group_ptr: np.ndarray
    group_tags: np.ndarray


_STORED = ("trans", "dict_ptr", "dict_tags", "group_ptr", "group_tags")
_TABLES = {"dict_keys": np.uint64, "class_keys": np.uint64, "class_values": np.uint64,
           "stem_keys": np.uint64, "stem_classes": np.uint64, "bundle_ptr": np.int64,
           "bundle_tags": np.int64}
"""The tagger's lookup tables (attributes with a trailing ``_``) and their types; its word
clusters are stored as ``cluster_keys``, ``cluster_paths`` and ``cluster_lengths``."""
_LATER_TABLES = ("stem_keys", "stem_classes", "bundle_ptr", "bundle_tags")
"""Tables that models saved before them lack (read as empty)."""
_OLD_VALUES = {"own_upos": False, "bundles": False}
"""Options whose default changed, with the value that models saved without them had."""
MIN_STEM = 3
"""Characters of the shortest stem (:meth:`Tagger._ending_atoms`)."""
LONG_SUFFIXES = (7, 8, 9)
"""Suffix lengths of a word's ending features, beyond the type hashes' 1 to 6."""
N_ENDING_FEATURES = 4 + len(LONG_SUFFIXES)
"""Columns that :meth:`Tagger._ending_atoms` adds when ``endings`` is on."""


@dataclass(frozen=True)
class TaggerOptions:
    """The settings of a :class:`Tagger` (stored with it in a model file).

    Attributes
    ----------
    xpos:
        ``"separate"``: UPOS and XPOS are two layers; ``"joint"``: one layer over the
        (UPOS, XPOS) pairs seen in training.
    feats:
        ``"whole"``: one layer over FEATS strings; ``"split"``: one layer per feature name.
    hash_bits:
        Each layer hashes features into at most ``2**hash_bits`` rows.
    max_weights:
        A layer with ``T`` tags gets the largest power of two of rows ``<= max_weights / T``
        (and at most ``2**hash_bits``): this bounds the memory of large tag sets.
    dict_min_count:
        Words seen at least this often in training get a tag-dictionary entry, and
        (lowercased) an ambiguity class.
    max_candidates:
        Words without a dictionary entry keep this many tags of highest emission score
        before Viterbi (all tags when a layer has no more).
    margin:
        Training decodes with this bonus on every wrong tag of every word (cost-augmented
        decoding; 0 is the plain perceptron). Weights move by 1 per update, so it is
        measured in updates; 60 was best of 0, 1, 4, 10, 25, 60, 90 and 150 on en_ewt.
    endings:
        Every layer also sees the word's *ending* after its *stem* and its suffixes of 7
        to 9 characters (:meth:`Tagger._ending_atoms`): for agglutinative languages, where
        most words of new text are unseen forms of lemmas seen in training.
    own_upos:
        The layers after the first also see the word's own first-layer tag (its UPOS)
        conjoined with its lowercased form, its suffixes and its ending features
        (:meth:`Tagger._with_groups`): a suffix says one thing of the FEATS of a noun
        and another of those of a verb. All tags right +0.5 to +2.1 on five treebanks,
        +0.02 on the two English ones (``eval/results/tagger_own_upos.md``).
    bundles:
        A word whose XPOS and FEATS layers give a combination of tags never seen in
        training with its UPOS gets instead the combination seen with it whose summed
        emission scores are highest (:meth:`Tagger._seen_bundles`): UDPipe 1 tags whole
        UPOS+XPOS+FEATS strings and never writes an unseen one.
    tree:
        Every layer also sees the word's place in the dependency tree of its sentence
        (:func:`parser.text._tagger_kernels.tree_features`: its DEPREL with its head's
        tags and form, its dependents' DEPRELs, its auxiliaries, markers and subject):
        the *second-pass tagger* of a pipeline, which tags again once the sentence is
        parsed (stacking: Nivre and McDonald 2008; Martins et al. 2008). It is fitted on
        the gold trees of the training data, reading the first pass's jackknifed tags
        (:meth:`Tagger.fit`'s ``tagged``), and tags sentences that have a tree.
    """

    xpos: str = "separate"
    feats: str = "whole"
    hash_bits: int = 18
    max_weights: int = 2**22
    dict_min_count: int = 10
    max_candidates: int = 16
    margin: float = 60.0
    endings: bool = False
    own_upos: bool = True
    bundles: bool = True
    tree: bool = False

    def __post_init__(self) -> None:
        for name, allowed in CHOICES.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, not {getattr(self, name)!r}")
        for name in ("hash_bits", "max_weights", "dict_min_count", "max_candidates"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a positive integer, not {value!r}")
        if not isinstance(self.margin, (int, float, np.number)) or not 0 <= self.margin < np.inf:
            raise ValueError(f"margin must be a finite number >= 0, not {self.margin!r}")
        for name in ("endings", "own_upos", "bundles"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, not {getattr(self, name)!r}")


class Tagger:
    """Predicts UPOS, XPOS and FEATS of each word; fit with :meth:`fit`.

    Parameters
    ----------
    options:
        Its :class:`TaggerOptions`.
    clusters:
        Optional Brown clusters, ``{word: bit string}``
        (:func:`corpora.word_clusters.read_word_clusters`) or a
        :class:`~corpora.word_clusters.ClusterTable`. A word is looked up as it is
        written, else lowercased. Not one of its :class:`TaggerOptions`: the fitted
        tagger keeps the table itself (:attr:`cluster_table_`).

    Attributes
    ----------
    layers_:
        Fitted layers, in decoding order.
    dict_keys_:
        ``uint64``, sorted: form hashes of the words in the tag dictionary.
    class_keys_, class_values_:
        ``uint64``: sorted hashes of lowercased frequent words, and the hash of the set of
        UPOS each had in training.
    bundle_ptr_, bundle_tags_:
        ``int64``: the rows ``bundle_tags_[bundle_ptr_[g]:bundle_ptr_[g + 1]]`` are the
        combinations of the tags of the layers after the first (XPOS and FEATS, one
        column per layer) seen in training with first-layer tag ``g`` (empty unless
        ``options.bundles``).
    stem_keys_, stem_classes_:
        ``uint64``: sorted hashes of the lowercased lemmas of the training data, and the
        hash of the set of UPOS each had (empty unless ``options.endings``).
    cluster_table_:
        The word clusters (:class:`~corpora.word_clusters.ClusterTable`; no word
        without clusters).
    history_:
        Per epoch, the number of training words the perceptron tagged wrongly (summed
        over layers) before updating, in its cost-augmented decoding.
    """

    def __init__(self, options: TaggerOptions = TaggerOptions(), *,
                 clusters: Mapping[str, str] | ClusterTable | None = None) -> None:
        self.options = options
        self.clusters = clusters

    def get_params(self) -> dict:
        """Its :class:`TaggerOptions` as JSON (those of a subclass, such as a training
        run's :class:`~parser.config.TaggerConfig`, left out)."""
        return _own_options(self.options)

    # ------------------------------------------------------------------ training

    def fit(self, sentences: Sequence[Sentence], *, epochs: int = 8, seed: int = 0,
            tagged: Sequence[Sentence] | None = None) -> "Tagger":
        """Train every layer for ``epochs`` passes over ``sentences`` (gold tags).

        With tree features (:attr:`TaggerOptions.tree`), ``tagged`` are the same
        sentences as a first-pass tagger tags them (jackknifed, :func:`jackknife`): the
        tree features read the tags of a word's head and subject there, of the quality
        they have when a parsed sentence is tagged again (stacking: Wolpert 1992, Martins
        et al. 2008), and ``sentences`` give the gold tags to learn.

        Sentences are shuffled before each epoch by a ``numpy`` generator seeded with
        ``seed``: the same data, parameters and seed give the same model.
        """
        if epochs < 1:
            raise ValueError(f"epochs must be >= 1, not {epochs}")
        if not sentences:
            raise ValueError("no training sentences")
        counts = Counter(form for s in sentences for form in s.forms[1:])
        self.dict_keys_ = np.unique(string_hashes([f for f, c in counts.items()
                                           if c >= self.options.dict_min_count], K.FORM))
        lower_counts: Counter[str] = Counter()
        lower_tags: dict[str, set[str]] = {}
        for s in sentences:
            for form, upos in zip(s.forms[1:], s.upos[1:]):
                lower_counts[form.lower()] += 1
                lower_tags.setdefault(form.lower(), set()).add(upos)
        self.class_keys_, self.class_values_ = _class_table(
            {w: lower_tags[w] for w, c in lower_counts.items()
             if c >= self.options.dict_min_count}, K.LOWER)
        self.cluster_table_ = ClusterTable.of(self.clusters or {})
        self.stem_keys_, self.stem_classes_ = (_stem_table(sentences) if self.options.endings
                                               else (np.zeros(0, np.uint64),) * 2)
        if tagged is not None and [s.forms for s in tagged] != [s.forms for s in sentences]:
            raise ValueError("tagged must be the training sentences, tagged")
        features, sent_ptr, tok_dict = self._encode(sentences, tagged)

        rng = np.random.default_rng(seed)
        orders = [rng.permutation(len(sentences)) for _ in range(epochs)]
        errors = np.zeros(epochs, dtype=np.int64)
        self.layers_ = []
        groups = np.full(features.shape[0], -1, dtype=np.int64)
        n_groups = 0
        later_gold = []
        for name in self._layer_names(sentences):
            per_sentence = [_layer_tags(s, name) for s in sentences]
            tags = tuple(sorted({t for seq in per_sentence for t in seq}))
            index = {t: j for j, t in enumerate(tags)}
            gold = np.fromiter((index[t] for seq in per_sentence for t in seq),
                               dtype=np.int64, count=features.shape[0])
            dict_ptr, dict_tags = _csr(tok_dict, gold, self.dict_keys_.shape[0])
            group_ptr, group_tags = _csr(groups, gold, n_groups)
            constraints = (tok_dict, dict_ptr, dict_tags, groups, group_ptr, group_tags)
            # The perceptron's weights are counts of updates: float32 holds them exactly
            # (below 2**24), and the kernels then run on the dtype of a fitted layer,
            # compiled once. Their step-weighted sums need float64.
            weights = np.zeros((self._rows(len(tags)), len(tags)), dtype=np.float32)
            weights_sum = np.zeros(weights.shape)
            trans = np.zeros((len(tags) + 1, len(tags) + 1), dtype=np.float32)
            trans_sum = np.zeros(trans.shape)
            step = 1
            for epoch, order in enumerate(orders):
                with np.errstate(over="ignore"):
                    step, wrong = K.train_epoch(features, sent_ptr, order, constraints, gold,
                                                weights, weights_sum, trans, trans_sum,
                                                self.options.max_candidates,
                                                float(self.options.margin), step)
                errors[epoch] += wrong
                log.debug("layer %s, epoch %d: %d words wrong", name, epoch + 1, wrong)
            self.layers_.append(_Layer(
                name=name, tags=tags,
                weights=_averaged(weights, weights_sum, step),
                trans=_averaged(trans, trans_sum, step),
                dict_ptr=dict_ptr, dict_tags=dict_tags, group_ptr=group_ptr,
                group_tags=group_tags))
            if n_groups:
                later_gold.append(gold)
            else:
                groups, n_groups = gold, len(tags)
                features = self._with_groups(sent_ptr, features, groups)
        self.bundle_ptr_, self.bundle_tags_ = (
            _csr(groups, np.stack(later_gold, axis=1), n_groups) if self.options.bundles
            else (np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.int64)))
        self.history_ = errors.tolist()
        log.info("tagger: %d layers on %d words; training errors per epoch %s",
                 len(self.layers_), features.shape[0], self.history_)
        return self

    def _layer_names(self, sentences: Sequence[Sentence]) -> list[str]:
        names = ["upos", "xpos"] if self.options.xpos == "separate" else ["upos+xpos"]
        if self.options.feats == "whole":
            return names + ["feats"]
        features = {pair.split("=", 1)[0] for s in sentences for feats in s.feats[1:]
                    if feats != ABSENT for pair in feats.split("|")}
        return names + [f"feats:{f}" for f in sorted(features, key=_feature_order)]

    def _rows(self, n_tags: int) -> int:
        budget = max(self.options.max_weights // n_tags, 1)
        return 1 << min(self.options.hash_bits, budget.bit_length() - 1)

    def _encode(self, sentences: Sequence[Sentence], tagged: Sequence[Sentence] | None = None
                ) -> tuple[np.ndarray, ...]:
        """``(features uint64 (N, F), sent_ptr int64 (S + 1,), tok_dict int64 (N,))``;
        the tree features, if any, read the trees of ``sentences`` and the tags of
        ``tagged`` (default: ``sentences``)."""
        types: dict[str, int] = {}
        type_ids = np.fromiter((types.setdefault(form, len(types)) for s in sentences
                                for form in s.forms[1:]), dtype=np.int64)
        sent_ptr = np.zeros(len(sentences) + 1, dtype=np.int64)
        np.cumsum([len(s.forms) - 1 for s in sentences], out=sent_ptr[1:])
        strings = [x for form in types for x in _type_strings(form)]
        seeds = np.tile(np.arange(K.N_TYPE_HASHES, dtype=np.uint64), len(types))
        type_hashes = string_hashes(strings, seeds).reshape(len(types), K.N_TYPE_HASHES)
        no_class = string_hashes([""], K.CLASS_SEED)[0]
        classes = sorted_lookup(self.class_keys_, self.class_values_, type_hashes[:, K.LOWER],
                          no_class)[type_ids]
        with np.errstate(over="ignore"):
            features = K.context_features(sent_ptr, type_ids, type_hashes, classes)
            if len(self.cluster_table_):
                paths, lengths = self.cluster_table_.lookup(list(types))
                features = K.cluster_features(sent_ptr, features, paths[type_ids],
                                              lengths[type_ids])
        if self.options.endings:
            features = K.word_features(features, self._ending_atoms(list(types))[type_ids])
        if self.options.tree:
            features = K.word_features(features, _tree_atoms(sentences, tagged or sentences,
                                                             sent_ptr, features))
        rows = sorted_lookup(self.dict_keys_, np.arange(self.dict_keys_.shape[0]),
                       type_hashes[:, K.FORM], -1)
        return features, sent_ptr, rows[type_ids].astype(np.int64)

    def _with_groups(self, sent_ptr: np.ndarray, features: np.ndarray, groups: np.ndarray
                     ) -> np.ndarray:
        """The features of the layers after the first: ``features`` with the first
        layer's tags ``groups`` of the neighbours (:func:`K.group_features`) and, with
        ``own_upos``, the word's own first-layer tag conjoined with its lowercased form,
        its suffixes of 1 to 6 characters and its ending features
        (:func:`K.own_group_features`)."""
        n_emit = features.shape[1] - K.N_PAIR_FEATURES
        with np.errstate(over="ignore"):
            grouped = K.group_features(sent_ptr, features, groups)
            if not self.options.own_upos:
                return grouped
            columns = [1 + K.LOWER] + [1 + K.SUFFIX1 + k for k in range(6)]
            if self.options.endings:    # _encode puts them last before the pair features
                columns += list(range(n_emit - N_ENDING_FEATURES, n_emit))
            return K.own_group_features(grouped, groups, np.array(columns, dtype=np.int64))

    def _ending_atoms(self, types: Sequence[str]) -> np.ndarray:
        """``uint64 (len(types), N_ENDING_FEATURES)``: the ending features of each word
        type.

        A word's *stem* is its longest proper prefix (lowercased, at least
        :data:`MIN_STEM` characters) that is a lemma of the training data, and its
        *ending* the rest: ``maviye`` is ``mavi`` + ``ye``, ``evlerinden`` ``ev`` +
        ``lerinden`` where ``ev`` is a lemma, as a learned approximation of the
        stem-and-suffix segmentation that morphological guessers use for unknown words
        (the suffix rules of MorphoDiTa, UDPipe 1's tagger: Strakova et al. 2014). Its
        atoms: the set of UPOS the stem's lemma had in training, that set with the ending
        and with the ending's last two characters, the ending alone (a constant for all
        four when no stem is found), and the word's suffixes of :data:`LONG_SUFFIXES`
        characters. On tr_imst dev (gold tokens; 31.7% of its words unseen in training)
        they took UPOS from 89.75 to 91.10, XPOS from 89.59 to 90.87 and FEATS from 80.89
        to 83.02 (``eval/results/tagger_endings.md``).
        """
        lows = [t.lower() for t in types]
        owner = np.repeat(np.arange(len(lows)), [max(len(w) - MIN_STEM, 0) for w in lows])
        prefixes = [w[:k] for w in lows for k in range(MIN_STEM, len(w))]
        found = sorted_lookup(self.stem_keys_, np.arange(self.stem_keys_.shape[0]),
                              string_hashes(prefixes, K.STEM_SEED), -1)
        stem_len = np.zeros(len(lows), dtype=np.int64)
        stem_row = np.full(len(lows), -1, dtype=np.int64)
        hit = np.flatnonzero(found >= 0)      # prefixes in order of length within a word
        last = hit[np.r_[owner[hit][1:] != owner[hit][:-1], True]] if hit.size else hit
        stem_row[owner[last]] = found[last]
        stem_len[owner[last]] = [len(prefixes[j]) for j in last.tolist()]
        strings = []
        for w, k, row in zip(lows, stem_len.tolist(), stem_row.tolist()):
            if row < 0:
                strings += ["", "", "", ""]
            else:
                cls, ending = f"{int(self.stem_classes_[row]):016x}", w[k:]
                strings += [cls, f"{cls} {ending}", f"{cls} {ending[-2:]}", ending]
            strings += [w[-n:] for n in LONG_SUFFIXES]
        seeds = np.tile(np.arange(N_ENDING_FEATURES, dtype=np.uint64) + K.ENDING_SEED,
                        len(lows))
        return string_hashes(strings, seeds).reshape(len(lows), N_ENDING_FEATURES)

    # ------------------------------------------------------------------ tagging

    def predict(self, sentences: Sequence[Sentence]) -> list[tuple[tuple[str, ...], ...]]:
        """``(upos, xpos, feats)`` of each sentence, each a tuple of length ``n + 1``
        whose entry 0 is :data:`~corpora.sentence.ROOT`."""
        features, sent_ptr, tok_dict = self._encode(sentences)
        decoded = []
        groups = np.full(features.shape[0], -1, dtype=np.int64)
        for j, layer in enumerate(self.layers_):
            constraints = (tok_dict, layer.dict_ptr, layer.dict_tags, groups, layer.group_ptr,
                           layer.group_tags)
            with np.errstate(over="ignore"):
                decoded.append(K.decode(features, sent_ptr, constraints, layer.weights,
                                        layer.trans, self.options.max_candidates))
            if j == 0:
                groups = decoded[0]
                features = self._with_groups(sent_ptr, features, groups)
        if self.bundle_ptr_.size:
            decoded[1:] = self._seen_bundles(features, groups,
                                             np.stack(decoded[1:], axis=1)).T
        columns = {layer.name: [layer.tags[i] for i in ids.tolist()]
                   for layer, ids in zip(self.layers_, decoded)}
        upos, xpos = _upos_xpos(columns)
        feats = _feats(columns, len(upos))
        return [tuple((ROOT,) + tuple(col[lo:hi]) for col in (upos, xpos, feats))
                for lo, hi in zip(sent_ptr[:-1].tolist(), sent_ptr[1:].tolist())]

    def _seen_bundles(self, features: np.ndarray, groups: np.ndarray, ids: np.ndarray
                      ) -> np.ndarray:
        """``ids`` (``int64 (N, L)``: the tags of the ``L`` layers after the first, XPOS
        and FEATS, of each word) with every row that is no combination seen in training
        with the word's first-layer tag (``groups``) replaced by the seen one whose
        emission scores, summed over the layers, are highest (:func:`K.best_bundles`):
        the MAP combination of the layers' emissions over the bundles of the treebank,
        where their independent Viterbi decisions left it (on tr_imst dev 348 words of
        10,000 with per-feature layers, all but 3 of them wrong). Words whose
        combination was seen keep it: choosing every word's combination by its emissions
        alone, without the layers' transitions and tag dictionaries, lost 5 to 9 points
        of all tags right on sl_ssj, nl_alpino, tr_imst and sv_talbanken."""
        unseen = np.flatnonzero(K.unseen_bundles(ids, groups, self.bundle_ptr_,
                                                 self.bundle_tags_))
        if not unseen.size:
            return ids
        layers = self.layers_[1:]
        n_emit = features.shape[1] - K.N_PAIR_FEATURES
        scores = np.full((unseen.size, len(layers), max(len(layer.tags) for layer in layers)),
                         -np.inf)
        for l, layer in enumerate(layers):
            rows = features[unseen, :n_emit] & np.uint64(layer.weights.shape[0] - 1)
            scores[:, l, :len(layer.tags)] = layer.weights[rows.astype(np.int64)].sum(axis=1)
        best = K.best_bundles(scores, groups[unseen], self.bundle_ptr_, self.bundle_tags_)
        out = ids.copy()
        out[unseen[best >= 0]] = self.bundle_tags_[best[best >= 0]]
        return out

    def tag(self, sentences: Sequence[Sentence]) -> list[Sentence]:
        """Copies of ``sentences`` whose UPOS, XPOS and FEATS (fields and the matching
        columns of :attr:`~corpora.sentence.Sentence.lines`) are the predicted ones."""
        return [with_tags(s, *tags) for s, tags in zip(sentences, self.predict(sentences))]

    # ------------------------------------------------------------------ storage

    def to_arrays(self) -> tuple[dict, dict[str, np.ndarray]]:
        """The fitted model as JSON-able metadata plus named numpy arrays (no pickle).

        Arrays: ``dict_keys``, ``class_keys``, ``class_values``, ``cluster_keys``,
        ``cluster_paths``, ``cluster_lengths`` and, for layer ``j``,
        ``layer{j}.rows`` (the weight rows that are not all zero), ``layer{j}.weights``
        (those rows), ``layer{j}.trans``, ``.dict_ptr``, ``.dict_tags``, ``.group_ptr``
        and ``.group_tags``.
        """
        meta = {"format": FORMAT, "format_version": FORMAT_VERSION,
                "n_features": K.N_FEATURES, "n_tree_features": K.N_TREE_FEATURES,
                "params": self.get_params(),
                "history": self.history_,
                "layers": [{"name": layer.name, "tags": list(layer.tags),
                            "n_rows": layer.weights.shape[0]} for layer in self.layers_]}
        arrays = {name: getattr(self, name + "_") for name in _TABLES}
        arrays.update({f"cluster_{name}": array
                       for name, array in self.cluster_table_.to_arrays().items()})
        for j, layer in enumerate(self.layers_):
            rows = np.flatnonzero(layer.weights.any(axis=1))
            arrays[f"layer{j}.rows"] = rows
            arrays[f"layer{j}.weights"] = layer.weights[rows]
            for field in _STORED:
                arrays[f"layer{j}.{field}"] = getattr(layer, field)
        return meta, arrays

    @classmethod
    def from_arrays(cls, meta: dict, arrays: dict[str, np.ndarray]) -> "Tagger":
        """The tagger saved by :meth:`to_arrays`."""
        found = (meta.get("format"), meta.get("format_version"), meta.get("n_features"),
                 meta.get("n_tree_features", K.N_TREE_FEATURES))
        if found != (FORMAT, FORMAT_VERSION, K.N_FEATURES, K.N_TREE_FEATURES):
            raise ValueError(f"not a {FORMAT} model of version {FORMAT_VERSION} with "
                             f"{K.N_FEATURES} features and {K.N_TREE_FEATURES} tree "
                             f"features: {found}")
        tagger = cls(TaggerOptions(**{**_OLD_VALUES, **meta["params"]}))
        tagger.history_ = list(meta["history"])
        for name, dtype in _TABLES.items():
            stored = arrays.get(name, np.zeros(0)) if name in _LATER_TABLES else arrays[name]
            setattr(tagger, name + "_", np.asarray(stored, dtype=dtype))
        # models saved before word clusters existed have no cluster arrays
        tagger.cluster_table_ = ClusterTable.from_arrays(
            {name: arrays.get(f"cluster_{name}", np.zeros(0))
             for name in ("keys", "paths", "lengths")})
        tagger.layers_ = []
        for j, spec in enumerate(meta["layers"]):
            weights = np.zeros((spec["n_rows"], len(spec["tags"])), dtype=np.float32)
            rows = np.asarray(arrays[f"layer{j}.rows"], dtype=np.int64)
            weights[rows] = arrays[f"layer{j}.weights"]
            stored = {field: np.asarray(arrays[f"layer{j}.{field}"],
                                        dtype=np.float32 if field == "trans" else np.int64)
                      for field in _STORED}
            tagger.layers_.append(_Layer(name=spec["name"], tags=tuple(spec["tags"]),
                                         weights=weights, **stored))
        return tagger


def _averaged(weights: np.ndarray, weights_sum: np.ndarray, step: int) -> np.ndarray:
    """``weights - weights_sum / step``, computed in float64 and rounded once into the
    float32 ``weights``, in place (no temporary copy of a layer)."""
    weights_sum /= step
    return np.subtract(weights, weights_sum, out=weights, casting="same_kind")


def _own_options(options: TaggerOptions) -> dict:
    """The fields of :class:`TaggerOptions` in ``options`` (of a subclass too, such as a
    training run's :class:`~parser.config.TaggerConfig`), as JSON."""
    return {f.name: getattr(options, f.name) for f in fields(TaggerOptions)}


def second_pass_options(options: TaggerOptions) -> TaggerOptions:
    """The :class:`TaggerOptions` of ``options`` (of a subclass too) with tree features:
    those of the second-pass tagger."""
    return TaggerOptions(**{**_own_options(options), "tree": True})


def jackknife(sentences: Sequence[Sentence], k: int = 10,
              options: TaggerOptions = TaggerOptions(), *, epochs: int = 8, seed: int = 0,
              clusters: Mapping[str, str] | None = None) -> list[Sentence]:
    """Re-tag ``sentences`` by ``k``-fold cross-tagging (jackknifing).

    The sentences are shuffled with ``seed`` and dealt into ``k`` folds; each fold is
    tagged by a :class:`Tagger` (``options``, ``clusters``) trained on the other ``k - 1``
    folds only, so the returned copies (in the input order) carry tags of test-time
    quality, for training a parser on predicted tags.
    """
    if not 2 <= k <= len(sentences):
        raise ValueError(f"k must be between 2 and the number of sentences, not {k}")
    folds = np.array_split(np.random.default_rng(seed).permutation(len(sentences)), k)
    out: list[Sentence] = list(sentences)
    for j, fold in enumerate(folds):
        held_out = np.zeros(len(sentences), dtype=bool)
        held_out[fold] = True
        train = [s for s, h in zip(sentences, held_out) if not h]
        # The fold's tagger is a temporary: gone before the next one is trained.
        tagged = Tagger(options, clusters=clusters).fit(train, epochs=epochs, seed=seed).tag(
            [sentences[i] for i in fold])
        for i, sentence in zip(fold.tolist(), tagged):
            out[i] = sentence
        log.info("jackknife: fold %d of %d tagged", j + 1, k)
    return out


def with_tags(sentence: Sentence, upos: Sequence[str], xpos: Sequence[str],
              feats: Sequence[str]) -> Sentence:
    """A copy of ``sentence`` with new UPOS, XPOS and FEATS (each of length ``n + 1``).

    Entry 0 becomes :data:`~corpora.sentence.ROOT`; the same columns of the word lines
    in :attr:`~corpora.sentence.Sentence.lines` change too, and nothing else.
    """
    upos, xpos, feats = ((ROOT,) + tuple(seq[1:]) for seq in (upos, xpos, feats))
    if not len(upos) == len(xpos) == len(feats) == len(sentence.forms):
        raise ValueError("upos, xpos and feats must have length n + 1")
    lines = list(sentence.lines)
    if lines:
        for i in range(1, len(sentence.forms)):
            j = int(sentence.word_lines[i])
            cols = lines[j].split("\t")
            cols[UPOS_COLUMN], cols[XPOS_COLUMN], cols[FEATS_COLUMN] = upos[i], xpos[i], feats[i]
            lines[j] = "\t".join(cols)
    return replace(sentence, upos=upos, xpos=xpos, feats=feats, lines=tuple(lines))


# ---------------------------------------------------------------------- layers <-> fields

def _feature_order(name: str) -> tuple[str, str]:
    """UD orders the features of a word by name, case-insensitively."""
    return name.lower(), name


def _layer_tags(sentence: Sentence, name: str) -> tuple[str, ...]:
    """The gold tags of layer ``name`` for the words 1..n of ``sentence``."""
    if name == "upos":
        return sentence.upos[1:]
    if name == "xpos":
        return sentence.xpos[1:]
    if name == "upos+xpos":
        return tuple(u + _JOINT + x for u, x in zip(sentence.upos[1:], sentence.xpos[1:]))
    if name == "feats":
        return sentence.feats[1:]
    feature = name.split(":", 1)[1]
    return tuple(dict(pair.split("=", 1) for pair in feats.split("|")).get(feature, ABSENT)
                 if feats != ABSENT else ABSENT for feats in sentence.feats[1:])


def _upos_xpos(columns: dict[str, list[str]]) -> tuple[list[str], list[str]]:
    if "upos+xpos" in columns:
        pairs = [tag.split(_JOINT, 1) for tag in columns["upos+xpos"]]
        return [u for u, _ in pairs], [x for _, x in pairs]
    return columns["upos"], columns["xpos"]


def _feats(columns: dict[str, list[str]], n: int) -> list[str]:
    if "feats" in columns:
        return columns["feats"]
    split = [(name.split(":", 1)[1], col) for name, col in columns.items()
             if name.startswith("feats:")]
    out = []
    for i in range(n):
        pairs = [f"{name}={col[i]}" for name, col in split if col[i] != ABSENT]
        out.append("|".join(pairs) if pairs else ABSENT)
    return out


# ---------------------------------------------------------------------- features

def _shape(form: str, max_run: int) -> str:
    """Word shape: ``X`` upper, ``x`` lower, ``a`` other letters, ``d`` digits, other
    characters kept; runs of one class longer than ``max_run`` are cut to ``max_run``."""
    out = []
    prev, run = "", 0
    for ch in form:
        c = ("X" if ch.isupper() else "x" if ch.islower() else "a" if ch.isalpha()
             else "d" if ch.isdigit() else ch)
        run = run + 1 if c == prev else 1
        if run <= max_run:
            out.append(c)
        prev = c
    return "".join(out)


def _flags(form: str) -> str:
    """Spelling flags: initial capital, all capitals, capital inside, digit, hyphen,
    no letter at all; then the length up to 6."""
    letters = [ch for ch in form if ch.isalpha()]
    bits = (form[:1].isupper(), bool(letters) and all(ch.isupper() for ch in letters),
            any(ch.isupper() for ch in form[1:]), any(ch.isdigit() for ch in form),
            "-" in form, not letters)
    return "".join("1" if b else "0" for b in bits) + str(min(len(form), 6))


def _type_strings(form: str) -> list[str]:
    """The strings hashed into the ``N_TYPE_HASHES`` columns of a word type, in order."""
    low = form.lower()
    return ([form, low] + [low[:k] for k in range(1, 5)] + [low[-k:] for k in range(1, 7)]
            + [_shape(form, 4), _shape(form, 1), _flags(form)])


_DEPENDENT_KINDS = {"nsubj": K.SUBJECT, "csubj": K.SUBJECT, "expl": K.SUBJECT,
                   "aux": K.AUXILIARY, "cop": K.AUXILIARY, "mark": K.MARKER,
                   "case": K.MARKER}
"""The universal DEPRELs of the dependents that :func:`K.tree_features` reads."""


def _tree_atoms(sentences: Sequence[Sentence], tagged: Sequence[Sentence],
                sent_ptr: np.ndarray, features: np.ndarray) -> np.ndarray:
    """The columns of :func:`K.tree_features` for ``sentences`` (each with a tree:
    ``ValueError`` otherwise), with the tags of ``tagged``, whose words' type hashes are
    the columns of ``features`` (:meth:`Tagger._encode`)."""
    if not all(s.has_tree() for s in sentences):
        raise ValueError("a tagger with tree features tags parsed sentences only: "
                         "every word needs a head")
    heads = np.concatenate([s.heads[1:] for s in sentences] or [np.zeros(0)]).astype(np.int64)
    values = np.empty((features.shape[0], 7), dtype=np.uint64)
    for j, column in ((0, "deprels"), (1, "upos"), (2, "xpos"), (6, "feats")):
        names, ids = np.unique([x for s in (tagged if j else sentences)
                                for x in getattr(s, column)[1:]],
                               return_inverse=True)
        values[:, j] = string_hashes(names.tolist(), K.TREE_SEED + 100 + j)[ids]
        if j == 0:          # the kind of dependent each DEPREL makes a word
            kinds = np.array([_DEPENDENT_KINDS.get(d.split(":")[0], 0) for d in names],
                             dtype=np.int64)[ids]
    values[:, 3:6] = features[:, [1 + K.LOWER, 1 + K.SUFFIX1 + 1, 1 + K.SUFFIX1 + 2]]
    with np.errstate(over="ignore"):
        return K.tree_features(sent_ptr, heads, values, kinds)


def _stem_table(sentences: Sequence[Sentence]) -> tuple[np.ndarray, np.ndarray]:
    """``(stem_keys, stem_classes)``: the sorted hashes of the lowercased lemmas of
    ``sentences`` (``_`` left out) and the hash of the set of UPOS each had."""
    tags: dict[str, set[str]] = {}
    for s in sentences:
        for lemma, upos in zip(s.lemmas[1:], s.upos[1:]):
            if lemma != ABSENT:
                tags.setdefault(lemma.lower(), set()).add(upos)
    return _class_table(tags, K.STEM_SEED)


def _class_table(tags: Mapping[str, set[str]], key_seed: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """``(keys, classes)``: the sorted hashes (under ``key_seed``) of the words of
    ``tags`` and the hash of each one's set of tags, its ambiguity class (for
    :func:`~corpora._hashing.sorted_lookup`)."""
    words = list(tags)
    keys = string_hashes(words, key_seed)
    order = np.argsort(keys)
    classes = string_hashes(["|".join(sorted(tags[w])) for w in words], K.CLASS_SEED)
    return keys[order], classes[order]


def _csr(keys: np.ndarray, values: np.ndarray, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR ``(ptr, values)``: for each key ``0..n_rows-1``, the distinct ``values`` seen
    with it, sorted: tags (``values`` ``(N,)``: the tag dictionary, the tags of a group)
    or rows of tags (``(N, L)``: the bundles); words whose ``keys`` is -1 are left out."""
    known = keys >= 0
    pairs = np.unique(np.column_stack([keys[known], values[known]]), axis=0)
    ptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(pairs[:, 0], minlength=n_rows), out=ptr[1:])
    return ptr, np.ascontiguousarray(pairs[:, 1:] if values.ndim == 2 else pairs[:, 1],
                                     dtype=np.int64)
