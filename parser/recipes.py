"""Training recipes: the settings the benchmarks found best, written down per language
family (not per treebank; English apart from the other Germanic languages for the
second-pass tagger alone), for ``polyparse train --treebank NAME``.

A treebank's language is the first part of its file prefix (``en_ewt`` -> ``en``,
:func:`language`); its family's :class:`Recipe` sets what the plain defaults leave
(the model order, the morphology features, the tagger's FEATS layers); a language in no
family of :data:`FAMILIES` gets the plain defaults (:data:`PLAIN`). Options given on
the command line override a recipe's settings.

Word clusters are in no recipe: they come with the language, not its family, from an
optional package (``polyparse[clusters]``, spaCy's lookups data, for en, de and es only),
and ``train --lang`` or ``--treebank`` takes them where it is installed
(:func:`parser.cli.train.word_clusters`); they gave the en_ewt tagger +0.18 UPOS (95.59
against 95.41, ``eval/results/frozen/tagger.md``), and the parser +0.16 to +0.56 UAS and
+0.10 to +0.47 LAS on en_ewt dev at orders 1 and 2, gold and predicted tags
(``eval/results/cluster_features_en_ewt.md``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from polyparse.decoders.higher_order import PartsConfig
from polyparse.features.extractor import FeatureConfig

from .text import TaggerOptions

__all__ = ["FAMILIES", "PLAIN", "Family", "Recipe", "language", "recipe_for"]


@dataclass(frozen=True)
class Recipe:
    """The settings of a training run that a language family changes; each defaults to
    the plain default of its setting.

    Attributes
    ----------
    order:
        :attr:`~decoders.higher_order.PartsConfig.order` (``--order``).
    morphology:
        :attr:`~features.extractor.FeatureConfig.morphology` (``--morphology``).
    tagger:
        The tagger's :class:`~parser.text.TaggerOptions` (its FEATS layers, its ending
        features, ...): a new tagger option is set here and nowhere else.
    second_pass:
        :attr:`~parser.config.TaggerConfig.second_pass` (``--second-pass``): tag every
        parsed sentence again with a tagger that reads its tree.
    relabel:
        :attr:`~parser.config.TrainConfig.relabeler` (``--relabel``): label the arcs of
        every decoded tree again with a second stage that sees the whole tree.
    """

    order: str = PartsConfig.order
    morphology: bool = FeatureConfig.morphology
    tagger: TaggerOptions = TaggerOptions()
    second_pass: bool = False
    relabel: bool = False

    def describe(self) -> str:
        """The settings that differ from the plain defaults, as options and tagger
        options: ``--order 2, tagger feats=split``."""
        changed = [f"--order {self.order}" if self.order != PLAIN.order else "",
                   "--morphology" if self.morphology != PLAIN.morphology else "",
                   "--second-pass" if self.second_pass != PLAIN.second_pass else "",
                   "--relabel" if self.relabel != PLAIN.relabel else "",
                   *(f"tagger {f.name}={getattr(self.tagger, f.name)}"
                     for f in fields(TaggerOptions)
                     if getattr(self.tagger, f.name) != getattr(PLAIN.tagger, f.name))]
        return ", ".join(text for text in changed if text) or "the plain defaults"


PLAIN = Recipe()
"""The plain defaults: a language in no family of :data:`FAMILIES`."""


@dataclass(frozen=True)
class Family:
    """A language family: its languages (the ISO 639 codes of UD's file prefixes) and
    its recipe."""

    languages: frozenset[str]
    recipe: Recipe


FAMILIES: dict[str, Family] = {
    # Order 2 against order 1 (eval/results/defaults.md, issue 41): UAS +1.91 en_ewt,
    # +2.49 en_gum, +0.58 da_ddt, +3.30 sv_talbanken, and -0.54 nl_alpino (on 71 held-out
    # sentences), at 0.04-0.73x the parsing speed in process and ~1.6x the training time.
    # Second-stage labeler (learning/relabeler.py): from raw text, the same trees, LAS
    # +0.93 sv_talbanken, +0.00 da_ddt, +2.16 nl_alpino, MLAS +1.21, +0.50, +3.09
    # (eval/results/stages_relabel.md, the *first-stage labels* rows).
    "Germanic": Family(frozenset({"de", "nl", "da", "sv", "no", "nb", "nn", "is", "fo",
                                  "af", "got", "gsw", "lb", "yi"}),
                       Recipe(order="2", relabel=True)),
    # English: the Germanic recipe and the second pass. From raw text, the same trees, it
    # raised every tag metric on both English treebanks: en_ewt dev MLAS 73.39 -> 74.14,
    # UFeats +0.26, UPOS +0.02 (eval/results/stages_en_ewt.md), en_gum dev MLAS 76.60 ->
    # 77.25, UFeats +0.17, UPOS +0.02 (stages_en_gum.md); on the three small Germanic
    # treebanks (504-718 training sentences, LAS 62-70) it cost UPOS 0.09-0.51
    # (stages_others.md): English apart for this alone.
    # Second-stage labeler: en_ewt dev from raw text LAS 82.30 -> 82.62, MLAS 74.14 ->
    # 74.71 (eval/results/peers_en_ewt_polyparse.md against peers_en_ewt.md); en_gum dev
    # LAS 85.53 -> 85.86, MLAS 78.93 -> 79.55 (eval/results/stages_relabel_en_gum.md).
    "English": Family(frozenset({"en"}), Recipe(order="2", second_pass=True, relabel=True)),
    # Order 2: UAS +1.32 on sl_ssj (eval/results/defaults.md) at 0.11x the speed. FEATS
    # per feature name: with the tagger's XPOS and FEATS held to the treebank's
    # combinations (TaggerOptions.bundles), on sl_ssj's last fifth XPOS +1.25, FEATS
    # +1.20, all tags right +1.24 (eval/results/tagger_feats.md; before the bundles it
    # lowered FEATS, eval/results/frozen/tagger.md); on da_ddt, sv_talbanken and the
    # English treebanks it loses 0.03 to 0.52 of all tags, on nl_alpino +0.05: Slavic
    # only. Morphology features unmeasured. Tagger endings: on sl_ssj's last fifth UPOS
    # -0.44, FEATS +0.04, lemmas -1.31 (eval/results/tagger_endings.md): left out.
    # Second pass: on sl_ssj's held-out tenth from raw text, the same trees, MLAS 53.19 ->
    # 56.29, XPOS +1.67, UFeats +1.59, UPOS +0.04, lemmas +0.16, BLEX +0.13
    # (eval/results/stages_others.md: case and gender agree along the tree).
    # Second-stage labeler: sl_ssj from raw text LAS +0.28, MLAS +0.54
    # (eval/results/stages_relabel.md).
    "Slavic": Family(frozenset({"sl", "cs", "sk", "pl", "ru", "uk", "be", "bg", "mk", "hr",
                                "sr", "hsb", "orv", "cu", "csb", "qpm"}),
                     Recipe(order="2", tagger=TaggerOptions(feats="split"),
                            second_pass=True, relabel=True)),
    # Order 2: UAS +0.93 on tr_imst (eval/results/defaults.md) at 0.05x the speed.
    # Morphology features (XPOS|FEATS): order-2 UAS 70.02 against 68.45, LAS 62.99
    # against 60.58, on gold tags (eval/results/frozen/orders_tr_imst_morphology.md
    # against orders_tr_imst_lambda1e-2.md). FEATS per feature name: tagger FEATS 80.89
    # against 80.32, all tags right 77.65 against 76.69, UPOS unchanged
    # (eval/results/frozen/tagger.md). Tagger endings: UPOS +1.35, XPOS +1.28, FEATS
    # +2.13, lemmas +0.29 on tr_imst dev (eval/results/tagger_endings.md; on the other six
    # treebanks UPOS -0.88 to +0.62, lemmas -2.72 to +0.05: in no other recipe). Second
    # pass: MLAS +0.29 but UFeats -0.51, UPOS -0.23 on tr_imst dev from raw text, where a
    # parse of LAS 55 misleads a tagger fitted on gold trees (stages_others.md): off.
    # Second-stage labeler: tr_imst dev from raw text LAS 55.00 -> 55.36, MLAS +0.39, BLEX
    # +0.33 (eval/results/stages_relabel_tr_imst.md).
    "Turkic": Family(frozenset({"tr", "az", "kk", "ky", "tt", "ug", "uz", "sah", "ota"}),
                     Recipe(order="2", morphology=True,
                            tagger=TaggerOptions(feats="split", endings=True), relabel=True)),
}
"""The language families whose recipe the benchmarks measured, by name."""


def language(prefix: str) -> str:
    """The language code of a treebank's file prefix.

    >>> language("en_ewt")
    'en'
    """
    return prefix.partition("_")[0]


def recipe_for(language_code: str) -> tuple[str | None, Recipe]:
    """The family of ``language_code`` and its recipe; ``(None, PLAIN)`` for a language
    in no family of :data:`FAMILIES`."""
    for name, family in FAMILIES.items():
        if language_code in family.languages:
            return name, family.recipe
    return None, PLAIN
