"""The settings of a training run, stored in the model file's metadata."""

from __future__ import annotations

from dataclasses import dataclass, field

from polyparse.decoders import Decoder, make_decoder, preferred_decoder
from polyparse.decoders.higher_order import part_types


@dataclass
class TrainConfig:
    """Everything that decides a training run (stored in the model file).

    ``tokenizer`` and ``tagger`` are the options of the :class:`~parser.text.tokenizer.Tokenizer`
    and of the :class:`~parser.text.Tagger` (plus ``"epochs"``, default 8; its
    ``"clusters"`` is the path of a word-cluster file, read when training) trained
    with the parser, or ``None`` for none; ``lemmatizer`` the options of the
    :class:`~parser.text.Lemmatizer` (plus ``"epochs"``, default 5), trained whenever
    the tagger is, on the jackknifed tags, unless it is ``None``. The tokenizer is
    trained by default, when the treebank has ``# text`` comments. The tagger is trained
    when ``tagger`` is a dict (``{}`` for the defaults; ``polyparse train`` does so
    unless ``--no-tagger``); the default ``None`` keeps the parser on the treebank's gold
    tags, as before, so that experiments on gold tags keep their meaning. With a tagger
    the parser is trained on tags predicted by ``jackknife``-fold cross-tagging, and
    without lemmas
    (``lemmas=None`` means: lemmas only when there is no tagger): its features were
    chosen and measured without them on predicted input, and the lemmatizer's output is
    for the LEMMA column, not for the parser.

    ``mixing`` is None for a run in one process, or for iterative parameter mixing
    (McDonald, Hall and Mann 2010; :mod:`learning.mixing`) ``{"shards": K, "mixing":
    "uniform"}``: the weights were trained on ``K`` shards, mixed after every epoch. Where
    the shards ran (this process or a Dask cluster) does not change the weights and is
    not stored.
    """

    trainer: str = "ssg"
    decoder: str | None = None                     # default: default_decoder(parts)
    single_root: bool = True
    epochs: int = 10
    seed: int = 0
    trainer_options: dict = field(default_factory=dict)
    decoder_options: dict = field(default_factory=dict)
    features: dict = field(default_factory=dict)
    parts: dict = field(default_factory=dict)      # build_parts options: order, ...
    prune: bool | None = None                      # default: for higher-order models
    pruner: dict = field(default_factory=dict)     # threshold, max_heads, epochs, labeled
    tokenizer: dict | None = field(default_factory=dict)
    tagger: dict | None = None
    lemmatizer: dict | None = field(default_factory=dict)
    jackknife: int = 10
    lemmas: bool | None = None
    ud_rules: bool = True                          # learn UD's validator rules (UD data)
    mixing: dict | None = None

    def __post_init__(self) -> None:
        if self.decoder is None:
            self.decoder = default_decoder(self.parts)

    @property
    def shards(self) -> int | None:
        """Shards of iterative parameter mixing (None: trained in one process)."""
        return None if self.mixing is None else int(self.mixing["shards"])

    @property
    def order(self) -> str:
        return str(self.parts.get("order", "1"))

    @property
    def pruned(self) -> bool:
        return self.order != "1" if self.prune is None else self.prune

    @property
    def uses_lemmas(self) -> bool:
        """Whether the parser's features see the LEMMA column."""
        return self.tagger is None if self.lemmas is None else self.lemmas


    @classmethod
    def from_json(cls, settings: dict) -> "TrainConfig":
        """The settings stored in a model file. Files written before tokenizers, taggers
        and lemmatizers were stored have none; those written before SSG-eta declared its
        relaxed decoder as a trainer option have it as ``relaxed_decoder``."""
        settings = {"tokenizer": None, "tagger": None, "lemmatizer": None, **settings}
        relaxed = settings.pop("relaxed_decoder", None)
        if relaxed is not None and settings.get("trainer_options", {}).get("eta"):
            settings["trainer_options"] = {**settings["trainer_options"], "relaxed": relaxed}
        return cls(**settings)


def default_decoder(parts: dict) -> str:
    """The decoder a model with parts ``parts`` (:func:`build_parts`' options) is
    trained and parsed with unless one is chosen: the preferred exact decoder of its
    part types (:func:`decoders.base.preferred_decoder`): ``mst`` for arcs alone, else
    AD3's branch and bound wherever its factor graphs hold the parts (all but
    consecutive siblings: the ILP's trees at 27-30x its speed at order 2 and 29-34x at
    full order on en_ewt dev, ``eval/results/frozen/decoders_en_ewt_full.md``), else the
    ILP."""
    return preferred_decoder(part_types(**parts))


def config_decoder(config: TrainConfig) -> Decoder:
    """The decoder of ``config``, checked to take every part type of its model."""
    return check_decoder(config, make_decoder(config.decoder, config.single_root,
                                              **config.decoder_options))


def check_decoder(config: TrainConfig, decoder: Decoder) -> Decoder:
    """``decoder``, if it takes every part type of ``config``'s model; else ValueError."""
    if not part_types(**config.parts) <= decoder.part_types:
        raise ValueError(f"decoder {decoder.name!r} cannot decode order {config.order} "
                         "models (use ilp or lp)")
    return decoder
