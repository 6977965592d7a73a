"""The settings of a training run, stored in the model file's metadata.

Every setting is declared once, typed, with its default: a component's own settings in
the component's module (:class:`~decoders.higher_order.PartsConfig`,
:class:`~features.extractor.FeatureConfig`, :class:`~parser.text.TokenizerOptions`,
:class:`~parser.text.TaggerOptions`, :class:`~parser.text.LemmatizerOptions`,
:class:`~learning.pruning.PrunerOptions`), what a training run adds to them here
(:class:`TaggerConfig`, :class:`LemmatizerConfig`, :class:`PrunerConfig`,
:class:`MixingConfig`), and the options of the chosen decoder and trainer in their
registries (:mod:`decoders.declared`). A name that is none of these is an error when the
:class:`TrainConfig` is made or read from a model file. In the model file each of them
is a plain JSON object of its fields (:meth:`TrainConfig.to_json`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import ClassVar

from polyparse.decoders import Decoder, decoder_class, make_decoder, preferred_decoder
from polyparse.decoders.higher_order import PartsConfig
from polyparse.features.extractor import FeatureConfig
from polyparse.learning.mixing import MIXING
from polyparse.learning.pruning import PrunerOptions
from polyparse.learning.relabeler import RelabelerOptions
from polyparse.learning.trainers import TRAINERS

from .text import LemmatizerOptions, TaggerOptions, TokenizerOptions

__all__ = ["ConfigError", "FeatureConfig", "LemmatizerConfig", "MixingConfig", "PartsConfig",
           "PrunerConfig", "TaggerConfig", "TokenizerOptions", "TrainConfig", "check_decoder",
           "config_decoder", "default_decoder"]

class ConfigError(ValueError):
    """Training settings with a name or value that this polyparse does not take."""


@dataclass(frozen=True)
class TaggerConfig(TaggerOptions):
    """The tagger of a training run: its :class:`~parser.text.TaggerOptions`, and

    Attributes
    ----------
    epochs:
        Perceptron epochs of the tagger (and of each of the jackknifing taggers).
    second_pass:
        Also fit a second-pass tagger, the tagger's options with tree features
        (:attr:`~parser.text.TaggerOptions.tree`), on the gold trees and the
        jackknifed tags of the training data: a parse tags its sentences again with it
        once their trees are known (:meth:`parser.pipeline.Parser.retag_parsed`). Off
        by default; on in the recipes whose treebanks it helped
        (:attr:`parser.recipes.Recipe.second_pass`).
    """

    epochs: int = 8
    second_pass: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.tree:
            raise ValueError("the tagger of a training run tags before parsing: tree "
                             "features are its second pass's (second_pass)")


@dataclass(frozen=True)
class LemmatizerConfig(LemmatizerOptions):
    """The lemmatizer of a training run: its :class:`~parser.text.LemmatizerOptions`,
    and

    Attributes
    ----------
    epochs:
        Perceptron epochs of the lemmatizer.
    """

    epochs: int = 5


@dataclass(frozen=True)
class PrunerConfig(PrunerOptions):
    """The pruner of a training run (:func:`parser.training.train_pruner`): its
    :class:`~learning.pruning.PrunerOptions`, and

    Attributes
    ----------
    epochs:
        Perceptron epochs of the arc-factored model.
    labeled:
        A labeled arc-factored model (default: unlabeled, as TurboParser's).
    """

    epochs: int = 2
    labeled: bool = False


@dataclass(frozen=True)
class MixingConfig:
    """Iterative parameter mixing (McDonald, Hall and Mann 2010; :mod:`learning.mixing`).

    Attributes
    ----------
    shards:
        The weights are trained on this many shards, mixed after every epoch.
    mixing:
        How the shards' weights are mixed: ``"uniform"``
        (:data:`learning.mixing.MIXING`), the only way there is.
    """

    shards: int
    mixing: str = MIXING

    def __post_init__(self) -> None:
        if self.shards < 1:
            raise ValueError(f"shards must be >= 1, not {self.shards}")
        if self.mixing != MIXING:
            raise ValueError(f"mixing must be {MIXING!r}, not {self.mixing!r}")


NEVER_NONE = frozenset({"features", "parts", "pruner"})
"""The typed settings of :class:`TrainConfig` that cannot be None."""


@dataclass
class TrainConfig:
    """Everything that decides a training run (stored in the model file).

    ``tokenizer``, ``tagger`` and ``lemmatizer`` are the settings of the
    :class:`~parser.text.tokenizer.Tokenizer`, the :class:`~parser.text.Tagger` and the
    :class:`~parser.text.Lemmatizer` trained with the parser, or ``None`` for none; the
    lemmatizer is trained whenever the tagger is, on the jackknifed tags, unless it is
    ``None``. The tokenizer is trained by default, when the treebank has ``# text``
    comments. The tagger is trained when ``tagger`` is a :class:`TaggerConfig`
    (``TaggerConfig()`` for the defaults; ``polyparse train`` does so unless
    ``--no-tagger``); the default ``None`` keeps the parser on the treebank's gold tags,
    as before, so that experiments on gold tags keep their meaning. With a tagger the
    parser is trained on tags predicted by ``jackknife``-fold cross-tagging, and without
    lemmas (``lemmas=None`` means: lemmas only when there is no tagger): its features were
    chosen and measured without them on predicted input, and the lemmatizer's output is
    for the LEMMA column, not for the parser.

    ``trainer_options`` and ``decoder_options`` are the options of the chosen trainer and
    decoder, by name, checked against those the component declares
    (:meth:`~decoders.declared.Declared.check_options`), where they are described.

    ``word_clusters`` is the path of a Brown word-cluster file (Liang's paths format),
    read when training, or None: the tagger's features read the clusters, and the
    parser's do if ``features.clusters``; the model file keeps the table.

    ``relabeler`` is None, or the :class:`~learning.relabeler.RelabelerOptions` of a
    second-stage labeler fitted on the gold trees and jackknifed tags, which labels the
    arcs of every decoded tree again (:class:`~learning.relabeler.Relabeler`). Off by
    default; on in the recipes whose treebanks it helped
    (:attr:`parser.recipes.Recipe.relabel`).

    ``mixing`` is None for a run in one process, or a :class:`MixingConfig` for iterative
    parameter mixing. Where the shards ran (this process or a Dask cluster) does not
    change the weights and is not stored.
    """

    trainer: str = "ssg"
    decoder: str | None = None                     # default: default_decoder(parts)
    single_root: bool = True
    epochs: int = 10
    seed: int = 0
    trainer_options: dict = field(default_factory=dict)
    decoder_options: dict = field(default_factory=dict)
    features: FeatureConfig = FeatureConfig()
    parts: PartsConfig = PartsConfig()
    prune: bool | None = None                      # default: for higher-order models
    pruner: PrunerConfig = PrunerConfig()
    tokenizer: TokenizerOptions | None = TokenizerOptions()
    tagger: TaggerConfig | None = None
    lemmatizer: LemmatizerConfig | None = LemmatizerConfig()
    jackknife: int = 10
    lemmas: bool | None = None
    ud_rules: bool = True                          # learn UD's validator rules (UD data)
    relabeler: RelabelerOptions | None = None
    mixing: MixingConfig | None = None
    word_clusters: str | None = None

    TYPED: ClassVar[dict[str, type]] = {
        "features": FeatureConfig, "parts": PartsConfig, "pruner": PrunerConfig,
        "tokenizer": TokenizerOptions, "tagger": TaggerConfig,
        "lemmatizer": LemmatizerConfig, "relabeler": RelabelerOptions,
        "mixing": MixingConfig}
    """The settings of a type of their own (None where the field allows it)."""

    def __post_init__(self) -> None:
        for name, kind in self.TYPED.items():
            value = getattr(self, name)
            if not isinstance(value, kind) and (value is not None or name in NEVER_NONE):
                raise TypeError(f"TrainConfig.{name} is a {kind.__name__}, not "
                                f"{type(value).__name__} ({value!r})")
        TRAINERS.get_class(self.trainer).check_options(self.trainer_options)
        if self.decoder is None:
            self.decoder = default_decoder(self.parts)
        decoder_class(self.decoder).check_options(self.decoder_options)
        if self.features.clusters and self.word_clusters is None:
            raise ValueError("cluster features need word clusters (word_clusters)")

    @property
    def shards(self) -> int | None:
        """Shards of iterative parameter mixing (None: trained in one process)."""
        return None if self.mixing is None else self.mixing.shards

    @property
    def order(self) -> str:
        return self.parts.order

    @property
    def pruned(self) -> bool:
        return self.order != "1" if self.prune is None else self.prune

    @property
    def uses_lemmas(self) -> bool:
        """Whether the parser's features see the LEMMA column."""
        return self.tagger is None if self.lemmas is None else self.lemmas

    def to_json(self) -> dict:
        """The settings as JSON: each typed one as an object of its fields."""
        return asdict(self)

    @classmethod
    def from_json(cls, settings: dict) -> "TrainConfig":
        """The settings stored in a model file (:meth:`to_json`); :class:`ConfigError`
        naming a setting or option that this polyparse does not take.

        Files written before tokenizers, taggers and lemmatizers were stored have none;
        those written before SSG-eta declared its relaxed decoder as a trainer option have
        it as ``relaxed_decoder``; a tokenizer's ``seed`` (possible before its options
        were typed) is the run's, as the tokenizer stored with the model says; those
        written before the parser read word clusters have the tagger's as its
        ``clusters``."""
        settings = {"tokenizer": None, "tagger": None, "lemmatizer": None, **settings}
        if isinstance(settings["tagger"], dict) and "clusters" in settings["tagger"]:
            tagger = dict(settings["tagger"])
            settings.setdefault("word_clusters", tagger.pop("clusters"))
            settings["tagger"] = tagger
        relaxed = settings.pop("relaxed_decoder", None)
        if relaxed is not None and settings.get("trainer_options", {}).get("eta"):
            settings["trainer_options"] = {**settings["trainer_options"], "relaxed": relaxed}
        if settings["tokenizer"] is not None:
            settings["tokenizer"] = {k: v for k, v in settings["tokenizer"].items()
                                     if k != "seed"}
        _check_names("training setting", settings, {f.name for f in fields(cls)})
        for name, kind in cls.TYPED.items():
            if settings.get(name) is not None:
                settings[name] = _typed(kind, settings[name], name)
        try:
            return cls(**settings)
        except (TypeError, ValueError) as error:
            raise ConfigError(str(error)) from None


def _typed(kind: type, options, name: str):
    """``kind(**options)`` for the stored settings ``name``; :class:`ConfigError` for
    an option ``kind`` does not declare, or a value it refuses."""
    if not isinstance(options, dict):
        raise ConfigError(f"{name} settings are not a JSON object: {options!r}")
    _check_names(f"{name} option", options, {f.name for f in fields(kind)})
    try:
        return kind(**options)
    except (TypeError, ValueError) as error:
        raise ConfigError(f"{name} settings: {error}") from None


def _check_names(what: str, given: dict, known: set[str]) -> None:
    unknown = sorted(set(given) - known)
    if unknown:
        raise ConfigError(f"unknown {what}{'s' if len(unknown) > 1 else ''} "
                          f"{', '.join(map(repr, unknown))} (this polyparse takes "
                          f"{', '.join(sorted(known))})")


def default_decoder(parts: PartsConfig) -> str:
    """The decoder a model with parts ``parts`` is trained and parsed with unless one is
    chosen: the preferred exact decoder of its part types
    (:func:`decoders.base.preferred_decoder`): ``mst`` for arcs alone, else AD3's branch
    and bound wherever its factor graphs hold the parts (all but consecutive siblings:
    the ILP's trees at 27-30x its speed at order 2 and 29-34x at full order on en_ewt
    dev, ``eval/results/frozen/decoders_en_ewt_full.md``), else the ILP."""
    return preferred_decoder(parts.part_types)


def config_decoder(config: TrainConfig) -> Decoder:
    """The decoder of ``config``, checked to take every part type of its model."""
    return check_decoder(config, make_decoder(config.decoder, config.single_root,
                                              **config.decoder_options))


def check_decoder(config: TrainConfig, decoder: Decoder) -> Decoder:
    """``decoder``, if it takes every part type of ``config``'s model; else ValueError."""
    if not config.parts.part_types <= decoder.part_types:
        raise ValueError(f"decoder {decoder.name!r} cannot decode order {config.order} "
                         "models (use ilp or lp)")
    return decoder
