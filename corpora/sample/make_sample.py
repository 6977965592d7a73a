#!/usr/bin/env python3
"""Generate the polyparse sample treebank: original synthetic English in UD v2 style.

Usage::

    python corpora/sample/make_sample.py              # rewrite the files next to this script
    python corpora/sample/make_sample.py --out DIR    # write them into DIR instead

Writes ``train.conllu`` (400 sentences), ``dev.conllu`` (100 sentences) and
``sentence.conllu`` (one unparsed sentence for the README demo). The output depends only
on :data:`SEED` and on this file: running it twice gives identical bytes. Standard
library only.

Every sentence is produced by the small phrase-structure grammar below, which builds the
dependency tree at the same time as the words; nothing is taken from an existing
treebank. The annotation follows the UD v2 guidelines for English (as in UD_English-EWT):

* Content words head their phrases. Determiners, case markers (prepositions, possessive
  ``'s``), auxiliaries, copulas, subordinators, coordinating conjunctions and
  punctuation are leaves (``det``, ``case``, ``aux``, ``aux:pass``, ``cop``, ``mark``,
  ``cc``, ``punct``).
* Copular clauses are headed by the predicate (adjective, noun, or the noun of a PP);
  ``be`` is ``cop``. Existential ``there is`` is headed by ``be`` (a VERB) with ``There``
  as ``expl``.
* Negation ``not`` / ``n't`` is ``advmod`` of the predicate (PART, RB, Polarity=Neg).
  ``cannot`` is a multiword token ``can`` + ``not``; ``can't`` / ``won't`` are the two
  tokens ``ca`` / ``wo`` + ``n't`` (lemmas ``can`` / ``will``), as in EWT.
* Coordination: the first conjunct heads the others (``conj``); ``cc`` and a preceding
  comma attach to the conjunct that follows them.
* Relative clauses are ``acl:relcl`` of the modified noun; the relative pronoun takes
  its role inside the clause (``nsubj``, ``obj``, ``obl``). A stranded preposition is
  ``case`` of the relative or interrogative pronoun (``the house that Ann lived in``,
  ``Who did you talk to ?``): these trees are non-projective.
* Finite complement clauses are ``ccomp`` (with optional ``that`` as ``mark``),
  controlled ``to``-infinitives are ``xcomp`` (``to`` is PART TO, ``mark``), adverbial
  clauses are ``advcl``.
* Comparatives: ``bigger than the cat`` has ``than the cat`` as ``obl`` of ``bigger``;
  in ``more books than Ben`` the ``than`` phrase is ``obl`` of ``more`` (ADJ JJR, ``amod``
  of ``books``), which crosses the arc from the verb to ``books``: non-projective.
* Extraposition: ``A man arrived yesterday who knew the answer`` keeps ``acl:relcl``
  from ``man``, and ``A report appeared today about the storm`` keeps ``nmod`` from
  ``report``; both cross the verb. Long wh-movement (``What did Ann say Ben bought ?``)
  keeps ``obj`` from the embedded verb.
* Punctuation: the final mark and a comma after a fronted phrase attach to the head of
  the main clause; a comma before a conjunct attaches to that conjunct. Tokens before
  punctuation, ``n't`` and ``'s`` carry ``SpaceAfter=No``.
* Bare temporal nouns (``yesterday``, ``last week``, ``every morning``) are ``obl:tmod``;
  ``by`` phrases of passives are ``obl:agent``.
* FEATS follow EWT (``Number``, ``Tense``, ``VerbForm``, ``Mood``, ``Person``, ``Case``,
  ``PronType``, ``Definite``, ``Degree``, ``NumType``, ...), sorted by name.

About 7.5% of the sentences of each file are non-projective; the other constructions
always give projective trees (checked when generating).
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

SEED = 20250611
N_TRAIN = 400
N_DEV = 100
NONPROJECTIVE_SHARE = 0.075
MIN_WORDS, MAX_WORDS = 3, 30
HERE = Path(__file__).resolve().parent


# =========================================================================================
# Tokens and phrases
# =========================================================================================

def feats(**kw: object) -> str:
    """FEATS column: ``Name=Value`` pairs sorted case-insensitively by name, or ``_``."""
    pairs = sorted(((k, v) for k, v in kw.items() if v is not None), key=lambda kv: kv[0].lower())
    return "|".join(f"{k}={v}" for k, v in pairs) or "_"


class Tok:
    """One syntactic word; ``head`` is another :class:`Tok` (``None`` for the root)."""

    __slots__ = ("form", "lemma", "upos", "xpos", "feats", "head", "deprel", "space_after",
                 "mwt")

    def __init__(self, form: str, lemma: str, upos: str, xpos: str, feat: str = "_"):
        self.form, self.lemma, self.upos, self.xpos, self.feats = form, lemma, upos, xpos, feat
        self.head: Tok | None = None
        self.deprel: str | None = None
        self.space_after = True
        self.mwt: str | None = None  # surface form of a 2-word token starting here


class Phrase:
    """Words in surface order, their head, agreement (for subjects) and noun classes."""

    def __init__(self, toks: list[Tok], head: Tok, person: int = 3, number: str = "Sing",
                 classes: tuple[str, ...] = (), ends_open: bool = False):
        self.toks, self.head, self.person, self.number = toks, head, person, number
        self.classes = classes      # what the phrase denotes (for selection restrictions)
        self.ends_open = ends_open  # ends with a clause: no adjunct of the host may follow
        self.subj: Phrase | None = None  # for clauses: their subject


class NoFit(Exception):
    """The random choices so far admit no continuation; the sentence is drawn again."""


def attach(dep: Tok | Phrase, head: Tok, rel: str) -> None:
    tok = dep.head if isinstance(dep, Phrase) else dep
    tok.head, tok.deprel = head, rel


def pick(rng: random.Random, weighted: list[tuple[object, float]]):
    """Weighted choice with a stable use of the generator."""
    total = sum(w for _, w in weighted)
    x = rng.random() * total
    for item, w in weighted:
        x -= w
        if x < 0:
            return item
    return weighted[-1][0]


# Closed-class words -----------------------------------------------------------------------

def det(form: str) -> Tok:
    f = {"the": feats(Definite="Def", PronType="Art"),
         "a": feats(Definite="Ind", PronType="Art"), "an": feats(Definite="Ind", PronType="Art"),
         "this": feats(Number="Sing", PronType="Dem"), "that": feats(Number="Sing", PronType="Dem"),
         "these": feats(Number="Plur", PronType="Dem"),
         "those": feats(Number="Plur", PronType="Dem"),
         "every": feats(PronType="Tot"), "each": feats(PronType="Tot"),
         "some": feats(PronType="Ind"), "another": feats(PronType="Ind"),
         "no": feats(PronType="Neg"), "which": feats(PronType="Int")}[form]
    lemma = {"an": "a", "these": "this", "those": "that"}.get(form, form)
    return Tok(form, lemma, "DET", "WDT" if form == "which" else "DT", f)


def adp(form: str) -> Tok:
    return Tok(form, form, "ADP", "IN")


def punct(form: str) -> Tok:
    return Tok(form, form, "PUNCT", "," if form == "," else ".")


def cconj(form: str) -> Tok:
    return Tok(form, form, "CCONJ", "CC")


def sconj(form: str) -> Tok:
    return Tok(form, form, "SCONJ", "IN")


def part_to() -> Tok:
    return Tok("to", "to", "PART", "TO")


def neg_tok(form: str = "not") -> Tok:
    return Tok(form, "not", "PART", "RB", feats(Polarity="Neg"))


def adv(form: str, xpos: str = "RB", **kw) -> Tok:
    return Tok(form, form, "ADV", xpos, feats(**kw))


def wh_pron(form: str, rel: bool = False) -> Tok:
    xpos = "WDT" if form in ("that", "which") else "WP"
    return Tok(form, form, "PRON", xpos, feats(PronType="Rel" if rel else "Int"))


def wh_adv(form: str) -> Tok:
    return Tok(form, form, "ADV", "WRB", feats(PronType="Int"))


def number_tok(value: str) -> Tok:
    form = "Digit" if value.isdigit() else "Word"
    return Tok(value, value, "NUM", "CD", feats(NumForm=form, NumType="Card"))


def possessive_s() -> Tok:
    return Tok("'s", "'s", "PART", "POS")


# Personal pronouns: (nominative, accusative, possessive, Person, Number, Gender, weight).
# "you" has no Number in EWT; it agrees like a plural.
PRONOUNS = [
    ("I", "me", "my", 1, "Sing", None, 3),
    ("you", "you", "your", 2, None, None, 2),
    ("he", "him", "his", 3, "Sing", "Masc", 3),
    ("she", "her", "her", 3, "Sing", "Fem", 3),
    ("we", "us", "our", 1, "Plur", None, 1.5),
    ("they", "them", "their", 3, "Plur", None, 2),
]
IT = ("it", "it", "its", 3, "Sing", "Neut", 0)
THEY = PRONOUNS[-1]


def pron_tok(entry, case: str) -> Tok:
    nom, acc, poss, person, number, gender, _ = entry
    form = {"Nom": nom, "Acc": acc, "Gen": poss}[case]
    f = feats(Case=case, Gender=gender, Number=number, Person=person,
              Poss="Yes" if case == "Gen" else None, PronType="Prs")
    return Tok(form, nom, "PRON", "PRP$" if case == "Gen" else "PRP", f)


# =========================================================================================
# Lexicon
# =========================================================================================

class Noun:
    def __init__(self, sg: str, pl: str | None, classes: tuple[str, ...]):
        self.sg, self.pl, self.classes = sg, pl, classes + (sg,)
        self.mass = pl is None

    def tok(self, number: str) -> Tok:
        if number == "Plur":
            return Tok(self.pl, self.sg, "NOUN", "NNS", feats(Number="Plur"))
        return Tok(self.sg, self.sg, "NOUN", "NN", feats(Number="Sing"))


# "singular plural classes..."; "-" marks a mass noun. A noun's lemma is also a class.
NOUN_TABLE = """
man men person | woman women person | boy boys person | girl girls person
child children person | teacher teachers person job | doctor doctors person job
student students person job | farmer farmers person job | driver drivers person job
singer singers person job | writer writers person job | neighbor neighbors person
baker bakers person job | nurse nurses person job | pilot pilots person job
artist artists person job | king kings person | queen queens person
soldier soldiers person job | sister sisters person kin | brother brothers person kin
mother mothers person kin | father fathers person kin | uncle uncles person kin
aunt aunts person kin | friend friends person kin | officer officers person job
waiter waiters person job | captain captains person job | judge judges person job
visitor visitors person | guest guests person | stranger strangers person
lawyer lawyers person job
dog dogs animal pet | cat cats animal pet | horse horses animal | bird birds animal
cow cows animal | fox foxes animal | rabbit rabbits animal pet | mouse mice animal
duck ducks animal | lion lions animal | goat goats animal | owl owls animal
bear bears animal | wolf wolves animal
book books thing info openable | letter letters thing info openable
box boxes thing container openable | key keys thing instr | knife knives thing instr
hammer hammers thing instr | cup cups thing container fragile | ball balls thing catchable
bag bags thing container openable accessory | hat hats thing accessory
coat coats thing accessory | umbrella umbrellas thing accessory openable
picture pictures thing drawable | phone phones thing fragile fixable
bottle bottles thing container fragile openable | lamp lamps thing fragile fixable
ring rings thing | map maps thing drawable | ticket tickets thing | gift gifts thing openable
flower flowers thing plant | stone stones thing catchable | pen pens thing instr
basket baskets thing container | brush brushes thing instr | scarf scarves thing accessory
toy toys thing | clock clocks thing fragile fixable | camera cameras thing fragile fixable
candle candles thing | plate plates thing fragile | bowl bowls thing container fragile
glass glasses thing container fragile | spoon spoons thing instr | stick sticks thing instr
door doors part openable fixable | window windows part openable fragile fixable
apple apples food fruit | cake cakes food | sandwich sandwiches food | egg eggs food
orange oranges food fruit | cookie cookies food | pie pies food | banana bananas food fruit
potato potatoes food
bread - food | soup - food | rice - food | cheese - food
coffee - food drink | tea - food drink | milk - food drink | water - food drink
juice - food drink
house houses place building | garden gardens place | park parks place
city cities place | village villages place | school schools place building
station stations place building | kitchen kitchens place room | market markets place
library libraries place building | shop shops place building openable
office offices place building room | hospital hospitals place building
street streets place | beach beaches place | room rooms place room
bridge bridges place buildable | hill hills place | church churches place building
farm farms place | forest forests place | river rivers place water
museum museums place building | restaurant restaurants place building
hotel hotels place building | island islands place | lake lakes place water
airport airports place building
table tables surface | bench benches surface | bed beds surface | floor floors surface
roof roofs surface fixable | shelf shelves surface | mat mats surface | sofa sofas surface
desk desks surface | chair chairs surface | wall walls surface
car cars vehicle fixable | bus buses vehicle | train trains vehicle catchable
boat boats vehicle fixable | bicycle bicycles vehicle fixable | truck trucks vehicle fixable
plane planes vehicle
story stories info | song songs info sound | poem poems info | report reports info
message messages info | newspaper newspapers info | question questions info
answer answers info | secret secrets info | plan plans info | joke jokes info
film films info | article articles info | lesson lessons info | news - info
music - sound | noise noises sound
party parties event | meeting meetings event | concert concerts event | game games event
storm storms event | dinner dinners event | lunch lunches event | wedding weddings event
festival festivals event | race races event | match matches event | trip trips event
morning mornings time | evening evenings time | afternoon afternoons time
night nights time | week weeks time | weekend weekends time
tree trees plant
"""

NOUNS = [Noun(f[0], None if f[1] == "-" else f[1], tuple(f[2:]))
         for part in NOUN_TABLE.replace("\n", " | ").split("|")
         if (f := part.split())]
NOUN = {n.sg: n for n in NOUNS}

# Proper nouns: people and cities (PROPN NNP Number=Sing).
PERSON_NAMES = ("Anna Ben Clara David Emma Frank Grace Henry Iris Jack Kate Leo Maria Nora "
                "Oscar Paul Rosa Sam Tom Zoe Omar Lena Ivan Mei Raj").split()
CITY_NAMES = "Paris London Boston Berlin Tokyo Cairo Lima Oslo Madrid Rome Dublin".split()

# Noun + noun compounds: head -> possible modifiers (compound).
COMPOUNDS = {
    "cup": ["coffee", "tea"], "bus": ["school"], "station": ["train", "police", "bus"],
    "party": ["birthday", "garden"], "table": ["kitchen"], "door": ["kitchen", "garden"],
    "ball": ["tennis"], "shop": ["flower", "book"], "bag": ["school"], "key": ["car", "door"],
    "window": ["kitchen"], "bottle": ["water", "milk"], "game": ["football"], "officer":
    ["police"], "teacher": ["music", "history"], "driver": ["bus", "truck"], "report":
    ["weather", "news"], "lesson": ["music", "history"], "shelf": ["book"], "film": ["horror"],
}

# Prepositions of place by noun class (verb-attached obl, or nmod inside subjects).
PLACE_PREPS = {"place": ["in", "near"], "building": ["in", "at", "near", "behind"],
               "room": ["in"], "surface": ["on", "under", "near"], "water": ["near"],
               "city": ["in"], "beach": ["on", "at"], "bridge": ["on", "under", "near"],
               "hill": ["on", "near"], "street": ["on", "in"], "station": ["at", "near"],
               "airport": ["at"], "market": ["at", "in"], "farm": ["on", "near"],
               "island": ["on"], "tree": ["under", "near"]}

# Relational nouns taking an "of" complement (nmod): head -> complement classes.
OF_NOUNS = {"door": ("building", "car", "room"), "window": ("building", "car", "room"),
            "roof": ("building",), "owner": (), "name": ("pet", "village", "street"),
            "mother": ("person",), "father": ("person",), "friend": ("person",),
            "sister": ("person",), "brother": ("person",), "king": ("city",),
            "queen": ("city",), "captain": ("boat", "plane"),
            "picture": ("person", "animal", "place"), "map": ("city", "place")}
NOUNS += [Noun("owner", "owners", ("person",)), Noun("name", "names", ("info",))]
NOUN.update((n.sg, n) for n in NOUNS[-2:])

# Containers: "a cup of coffee" (nmod "of" + bare content noun).
CONTENTS = {"cup": ["coffee", "tea", "milk"], "glass": ["water", "milk", "juice"],
            "bottle": ["water", "milk", "juice"], "box": ["apples", "cookies", "toys", "books"],
            "bag": ["apples", "oranges", "potatoes", "bread"], "basket": ["apples", "eggs",
            "flowers", "bread"], "bowl": ["soup", "rice"], "plate": ["cookies", "cheese"]}


class Adj:
    def __init__(self, pos: str, cmp: str | None, classes: tuple[str, ...]):
        self.pos, self.cmp, self.classes = pos, cmp, classes

    def tok(self, comparative: bool = False) -> Tok:
        if comparative:
            return Tok(self.cmp, self.pos, "ADJ", "JJR", feats(Degree="Cmp"))
        return Tok(self.pos, self.pos, "ADJ", "JJ", feats(Degree="Pos"))


# "positive comparative classes..."; "-" = comparative with "more".
ADJ_TABLE = """
big bigger animal thing place vehicle | small smaller animal thing place vehicle food
old older person animal thing place vehicle | young younger person animal
new newer thing vehicle place info | red - thing vehicle | blue - thing vehicle
green - thing vehicle | white whiter animal thing vehicle | black - animal thing vehicle
brown - animal thing | yellow - thing vehicle | happy happier person animal
sad sadder person | tired - person animal | hungry hungrier person animal
angry angrier person animal | quiet quieter person place animal | loud louder person event
tall taller person plant building | short shorter person info event
long longer info event street river | heavy heavier thing | cold colder drink place
warm warmer drink place | hot hotter food | beautiful - person place thing animal info
strange - person thing info event | friendly friendlier person animal
clever cleverer person animal | brave braver person | famous - person place info
empty - container place | expensive - thing vehicle food | cheap cheaper thing vehicle food
dark darker place | busy busier person place | lazy lazier person animal
kind kinder person | nice nicer person place thing food event | little - animal thing
fresh fresher food | sweet sweeter food | interesting - info person event
important - info person event | dangerous - animal place | careful - person
polite - person | delicious - food | dirty dirtier thing place vehicle
wooden - thing surface | fast faster vehicle animal | slow slower vehicle animal
"""
ADJS = [Adj(f[0], None if f[1] == "-" else f[1], tuple(f[2:]))
        for part in ADJ_TABLE.replace("\n", " | ").split("|") if (f := part.split())]

MANNER_ADVS = ["quickly", "slowly", "carefully", "quietly", "loudly", "happily", "suddenly",
               "again", "together", "early", "late"]
FREQ_ADVS = ["often", "always", "never", "usually", "sometimes", "rarely"]
DEGREE_ADVS = ["very", "quite", "really", "too", "extremely"]
NUMBER_WORDS = "two three four five six seven eight nine ten twelve twenty".split()


class Verb:
    """A verb lemma, its forms, and the frames it allows.

    subj: noun classes allowed as subject. Frames: ``intr``; ``obj`` (transitive; object
    classes); ``ditr`` (theme classes; the recipient is a person: iobj, or "to" + obl);
    ``prep`` (prepositional verb: list of (preposition, object classes)); ``motion``
    (goal "to"/"into" + place); ``ccomp``, ``xcomp``, ``ocontrol`` (obj + to-infinitive);
    ``passive``; adjunct licences ``loc``, ``instr``, ``ben``.
    """

    def __init__(self, forms: str, subj: str, **frames):
        parts = forms.split()
        base = parts[0]
        self.lemma = base
        self.past = parts[1] if len(parts) > 1 else regular_past(base)
        self.pp = parts[2] if len(parts) > 2 else self.past
        self.ing = parts[3] if len(parts) > 3 else regular_ing(base)
        self.s3 = {"have": "has", "do": "does", "go": "goes"}.get(base) or regular_s3(base)
        self.subj = tuple(subj.split())
        self.intr = frames.pop("intr", False)
        self.obj = tuple(frames.pop("obj", "").split())
        self.ditr = tuple(frames.pop("ditr", "").split())
        self.prep = [(p.split(":")[0], tuple(p.split(":")[1].split(",")))
                     for p in frames.pop("prep", "").split()]
        self.motion = frames.pop("motion", False)
        self.ccomp = frames.pop("ccomp", False)
        self.xcomp = frames.pop("xcomp", False)
        self.ocontrol = frames.pop("ocontrol", False)
        self.passive = frames.pop("passive", False)
        self.loc = frames.pop("loc", False)
        self.instr = frames.pop("instr", False)
        self.ben = frames.pop("ben", False)
        self.to_dative = frames.pop("to_dative", bool(self.ditr))
        assert not frames, frames

    def tok(self, xpos: str, imperative: bool = False, passive: bool = False) -> Tok:
        form = {"VB": self.lemma, "VBP": self.lemma, "VBZ": self.s3, "VBD": self.past,
                "VBN": self.pp, "VBG": self.ing}[xpos]
        return Tok(form, self.lemma, "VERB", xpos, verb_feats(xpos, imperative, passive))


def verb_feats(xpos: str, imperative: bool = False, passive: bool = False,
               person: int | None = None, number: str | None = None) -> str:
    if xpos == "VB":
        return feats(Mood="Imp", VerbForm="Fin") if imperative else feats(VerbForm="Inf")
    if xpos == "VBZ":
        return feats(Mood="Ind", Number="Sing", Person=3, Tense="Pres", VerbForm="Fin")
    if xpos == "VBP":
        return feats(Mood="Ind", Number=number, Person=person, Tense="Pres", VerbForm="Fin")
    if xpos == "VBD":
        return feats(Mood="Ind", Number=number, Person=person, Tense="Past", VerbForm="Fin")
    if xpos == "VBN":
        return feats(Tense="Past", VerbForm="Part", Voice="Pass" if passive else None)
    if xpos == "VBG":
        return feats(Tense="Pres", VerbForm="Part")
    if xpos == "MD":
        return feats(VerbForm="Fin")
    raise ValueError(xpos)


def regular_past(base: str) -> str:
    if base.endswith("e"):
        return base + "d"
    if base.endswith("y") and base[-2] not in "aeiou":
        return base[:-1] + "ied"
    return base + "ed"


def regular_ing(base: str) -> str:
    if base.endswith("e") and not base.endswith(("ee", "ye")):
        return base[:-1] + "ing"
    return base + "ing"


def regular_s3(base: str) -> str:
    if base.endswith(("s", "sh", "ch", "x", "z", "o")):
        return base + "es"
    if base.endswith("y") and base[-2] not in "aeiou":
        return base[:-1] + "ies"
    return base + "s"


ANIM = "person animal"
CONCRETE = "person animal thing food vehicle place plant part surface"
VERBS = [
    # intransitive, motion, location
    Verb("sleep slept", ANIM, intr=True, loc=True),
    Verb("arrive", "person animal vehicle", intr=True, loc=True),
    Verb("leave left", "person vehicle", intr=True, obj="place"),
    Verb("laugh", "person", intr=True, prep="at:person,animal,joke"),
    Verb("smile", "person", intr=True, prep="at:person"),
    Verb("run ran run running", ANIM, intr=True, motion=True, loc=True),
    Verb("walk", ANIM, intr=True, motion=True, loc=True),
    Verb("sing sang sung", "person bird", intr=True, obj="song", loc=True, ben=True,
         ditr="song"),
    Verb("dance", "person", intr=True, loc=True),
    Verb("cry", "person", intr=True),
    Verb("wait", "person animal", intr=True, loc=True, prep="for:person,vehicle,news"),
    Verb("swim swam swum swimming", ANIM, intr=True, loc=True),
    Verb("fall fell fallen", "person animal thing", intr=True),
    Verb("work", "person", intr=True, loc=True, prep="in:building,city on:farm"),
    Verb("win won won winning", "person", intr=True, obj="game race match"),
    Verb("disappear", "person animal thing vehicle", intr=True),
    Verb("appear", "person animal", intr=True),
    Verb("happen happened", "event", intr=True),
    Verb("return", "person vehicle", intr=True, motion=True),
    Verb("come came come", "person animal vehicle", intr=True, motion=True),
    Verb("go went gone", ANIM, intr=True, motion=True),
    Verb("sit sat sat sitting", ANIM, intr=True, loc=True,
         prep="on:surface,hill under:tree"),
    Verb("stay", ANIM, intr=True, loc=True, prep="in:building,room,city,village"),
    Verb("live", ANIM, prep="in:house,city,village,building near:place"),
    Verb("travel", "person", intr=True, motion=True),
    Verb("jump", ANIM, intr=True, loc=True),
    Verb("bark", "dog", intr=True, prep="at:person,animal"),
    Verb("shout", "person", intr=True, prep="at:person,animal"),
    Verb("talk", "person", intr=True, loc=True, prep="to:person about:person,info,event"),
    Verb("look", ANIM, prep="at:person,animal,thing,plant for:person,thing,pet"),
    Verb("listen", ANIM, prep="to:person,sound,song,story"),
    Verb("play", ANIM, intr=True, loc=True, obj="game match"),
    Verb("fly flew flown", "bird plane", intr=True, motion=True),
    Verb("begin began begun beginning", "event", intr=True),
    Verb("start", "event vehicle", intr=True),
    # transitive, ditransitive
    Verb("see saw seen", ANIM, obj=CONCRETE + " film game", loc=True, passive=True),
    Verb("read read read", "person", obj="book letter story newspaper poem article message "
         "report news", ditr="story letter poem", intr=True, loc=True),
    Verb("write wrote written", "person", obj="letter story poem song report message article "
         "book", ditr="letter message poem", instr=True, ben=True, passive=True, loc=True),
    Verb("buy bought", "person", obj="thing food vehicle house", ditr="thing food",
         ben=True, passive=True, to_dative=False),
    Verb("sell sold", "person", obj="thing food vehicle house", ditr="thing food vehicle",
         passive=True),
    Verb("find found", ANIM, obj="thing food person animal", passive=True, loc=True),
    Verb("lose lost", "person", obj="key ticket bag ring map umbrella pen phone camera"),
    Verb("open", "person", obj="openable", instr=True, passive=True),
    Verb("close", "person", obj="openable", passive=True),
    Verb("carry carried", "person horse", obj="thing food child", loc=True),
    Verb("eat ate eaten", ANIM, obj="food", intr=True, loc=True, passive=True),
    Verb("cook", "person", obj="soup rice egg potato dinner lunch", ben=True, loc=True),
    Verb("paint", "person", obj="house wall door picture fence boat room", instr=True,
         passive=True),
    Verb("visit", "person", obj="person place", passive=True),
    Verb("watch", ANIM, obj="person animal film game match race bird", loc=True),
    Verb("like", ANIM, obj="person animal food thing music info place", xcomp=True),
    Verb("love", "person", obj="person animal food music info place", xcomp=True),
    Verb("need", ANIM, obj="thing food person", xcomp=True),
    Verb("want", ANIM, obj="thing food vehicle", xcomp=True, ocontrol=True),
    Verb("build built", "person", obj="house bridge wall boat church shop school",
         ben=True, passive=True),
    Verb("break broke broken", "person animal", obj="fragile", passive=True),
    Verb("fix fixed", "person", obj="fixable", instr=True, passive=True, ben=True),
    Verb("clean", "person", obj="room kitchen house car floor table window", passive=True),
    Verb("bring brought", "person animal", obj="thing food", ditr="thing food"),
    Verb("take took taken", "person", obj="thing food pet child"),
    Verb("hold held", "person", obj="thing animal child"),
    Verb("call", "person", obj="person animal", passive=True),
    Verb("help helped", ANIM, obj="person", ocontrol=True, passive=True),
    Verb("meet met", "person", obj="person", loc=True),
    Verb("follow", ANIM, obj="person animal vehicle", passive=True),
    Verb("catch caught", ANIM, obj="animal catchable bus", passive=True),
    Verb("drive drove driven", "person", obj="vehicle", intr=True, motion=True),
    Verb("push pushed", "person", obj="vehicle thing door"),
    Verb("hide hid hidden hiding", ANIM, obj="thing food gift", loc=True, passive=True),
    Verb("forget forgot forgotten forgetting", "person", obj="thing info person",
         xcomp=True, ccomp=True),
    Verb("remember", "person", obj="person info place", xcomp=True, ccomp=True),
    Verb("know knew known", "person", obj="person info place"),
    Verb("hear heard", ANIM, obj="sound person song storm", ccomp=True),
    Verb("have had had having", ANIM, obj="thing animal vehicle house food"),
    Verb("make made made", "person", obj="cake pie sandwich soup plan box toy", ben=True,
         ditr="cake pie sandwich toy", to_dative=False),
    Verb("steal stole stolen", "person fox", obj="thing food vehicle", passive=True),
    Verb("kick", "person horse", obj="ball door stone"),
    Verb("throw threw thrown", "person", obj="ball stone stick", ditr="ball stick"),
    Verb("feed fed", "person", obj="animal child", loc=True),
    Verb("wash", "person", obj="car dog cup plate window", loc=True),
    Verb("draw drew drawn", "person", obj="drawable animal house tree", instr=True, ben=True),
    Verb("teach taught", "person", obj="person", ditr="song lesson poem game"),
    Verb("show showed shown", "person", obj="thing info", ditr="thing picture map letter"),
    Verb("give gave given", "person", ditr="thing food letter", passive=True),
    Verb("send sent", "person", ditr="letter message gift picture book", passive=True),
    Verb("offer", "person", ditr="food thing ticket"),
    Verb("lend lent", "person", ditr="book umbrella pen car bicycle camera"),
    Verb("tell told", "person", ditr="story joke secret answer news", ocontrol=True),
    Verb("ask", "person", obj="person", ditr="question", ocontrol=True, to_dative=False),
    Verb("save", ANIM, obj="person animal", passive=True),
    Verb("chase", "animal person", obj="animal person ball", passive=True),
    Verb("notice", ANIM, obj=CONCRETE, ccomp=True),
    Verb("enter", ANIM, obj="room building"),
    Verb("cross", "person animal vehicle", obj="river street bridge"),
    Verb("climb climbed", "person animal", obj="hill tree wall"),
    Verb("plant", "person", obj="plant", loc=True),
    # clausal complements
    Verb("say said", "person", ccomp=True),
    Verb("think thought", "person", ccomp=True, prep="about:person,info,event,place"),
    Verb("believe", "person", ccomp=True),
    Verb("hope hoped", "person", ccomp=True, xcomp=True),
    Verb("claim", "person", ccomp=True),
    Verb("realize", "person", ccomp=True),
    Verb("learn learned", "person", obj="song poem lesson", xcomp=True, ccomp=True),
    Verb("promise", "person", xcomp=True),
    Verb("decide", "person", xcomp=True, ccomp=True),
    Verb("try tried", "person animal", xcomp=True),
    Verb("plan planned planned planning", "person", xcomp=True),
    Verb("refuse", "person", xcomp=True),
    Verb("expect", "person", ocontrol=True, ccomp=True),
    Verb("allow", "person", ocontrol=True),
    Verb("persuade", "person", ocontrol=True),
]
VERB = {v.lemma: v for v in VERBS}

# Verbs not used in the progressive.
STATIVE = ("know", "like", "love", "need", "want", "have", "believe", "realize", "hear",
           "see", "remember", "forget", "notice")
# Adjectives without an -er form that still take "more ... than".
GRADABLE = ("beautiful", "strange", "famous", "expensive", "interesting", "important",
            "dangerous", "careful", "polite", "delicious", "tired")


def classes_match(noun_classes, wanted) -> bool:
    return any(c in wanted for c in noun_classes)


def nouns_of(wanted, *, count: bool = False) -> list[Noun]:
    return [n for n in NOUNS if classes_match(n.classes, wanted) and not (count and n.mass)]


# What "what" can stand for: every class and lemma of the inanimate nouns, in lexicon order.
WHAT_CLASSES = tuple(dict.fromkeys(c for n in NOUNS if not classes_match(n.classes, ANIM.split())
                                   for c in n.classes))


# =========================================================================================
# The grammar
# =========================================================================================

class Grammar:
    """Builds phrases and their dependency arcs at the same time.

    Every builder returns a :class:`Phrase` whose words already point to their heads,
    except the phrase head, which the caller attaches.
    """

    def __init__(self, rng: random.Random):
        self.R = rng

    def chance(self, p: float) -> bool:
        return self.R.random() < p

    def choice(self, seq):
        if not seq:
            raise NoFit
        return self.R.choice(seq)

    # ---------------------------------------------------------------- noun phrases
    def noun_phrase(self, wanted, role: str = "obj", depth: int = 0, *, pron: float = 0.14,
                    propn: float = 0.18, post: bool = True, coord: float = 0.0,
                    number: str | None = None, determiner: str | None = None,
                    relcl: float = 0.08) -> Phrase:
        """A noun phrase of one of the classes ``wanted``.

        role: ``subj`` (nominative pronouns), ``obj`` (accusative) or ``pobj``.
        determiner: force ``indef`` (a/an, bare plural, numeral, some), ``def`` or ``bare``.
        Order: determiner | possessor | numeral, adjectives, compound, noun, PP | relative
        clause | participle.
        """
        R, wanted = self.R, tuple(wanted)
        if coord and depth == 0 and self.chance(coord):
            return self.coordinated_np(wanted, role, depth)
        if determiner is None and pron and self.chance(pron):
            p = self.pronoun(wanted, role)
            if p:
                return p
        names = (PERSON_NAMES if "person" in wanted else []) + \
                (CITY_NAMES if "city" in wanted else [])
        if determiner is None and names and self.chance(propn):
            return self.proper_noun(self.choice(names))
        candidates = nouns_of(wanted, count=determiner == "indef" or number == "Plur")
        if not candidates:  # only a proper noun fits
            return self.proper_noun(self.choice(names))
        noun = self.choice(candidates)
        if number is None:
            number = "Sing" if noun.mass else ("Plur" if self.chance(0.3) else "Sing")
        head = noun.tok(number)
        # --- determiner, possessor or numeral
        if determiner == "indef":
            kind = "a" if number == "Sing" else pick(R, [("bare", 3), ("num", 2), ("some", 1)])
        elif determiner in ("def", "bare"):
            kind = {"def": "the", "bare": "bare"}[determiner]
        elif noun.mass:
            kind = pick(R, [("the", 4), ("bare", 4), ("some", 1), ("poss", 1), ("this", 0.5)])
        elif number == "Sing":
            kind = pick(R, [("the", 10), ("a", 6), ("this", 1), ("poss", 2), ("gen", 1),
                            ("every", 0.4), ("another", 0.3), ("no", 0.2)])
        else:
            kind = pick(R, [("the", 8), ("bare", 4), ("num", 3), ("this", 1), ("some", 1.5),
                            ("poss", 1.5), ("gen", 0.5)])
        pre: list[Tok] = []
        if kind == "poss":                      # my / his / its ...: nmod:poss
            entry = pick(R, [(e, e[-1]) for e in PRONOUNS] + [(IT, 1)])
            tok = pron_tok(entry, "Gen")
            attach(tok, head, "nmod:poss")
            pre.append(tok)
        elif kind == "gen":                     # Anna 's / the teacher 's
            pre += self.saxon_genitive(head)
        elif kind == "num":                     # three cats: nummod
            tok = number_tok(R.choice(NUMBER_WORDS))
            attach(tok, head, "nummod")
            pre.append(tok)
        elif kind != "bare":
            if kind == "this":
                form = R.choice(["this", "that"] if number == "Sing" else ["these", "those"])
            else:
                form = kind
            tok = det(form)
            attach(tok, head, "det")
            pre.append(tok)
        # --- adjectives (the first maybe with a degree adverb), compound modifier
        n_adj = pick(R, [(0, 62), (1, 30), (2, 8)]) if depth < 2 else pick(R, [(0, 3), (1, 1)])
        adjs = [a for a in ADJS if classes_match(noun.classes, a.classes)]
        R.shuffle(adjs)
        for i, a in enumerate(adjs[:n_adj]):
            tok = a.tok()
            attach(tok, head, "amod")
            if i == 0 and self.chance(0.15):
                d = adv(R.choice(DEGREE_ADVS))
                attach(d, tok, "advmod")
                pre.append(d)
            pre.append(tok)
        if noun.sg in COMPOUNDS and self.chance(0.18):
            tok = Noun(R.choice(COMPOUNDS[noun.sg]), None, ()).tok("Sing")
            attach(tok, head, "compound")
            pre.append(tok)
        toks = pre + [head]
        fix_article(toks)
        phrase = Phrase(toks, head, 3, number, noun.classes)
        # --- post-modifiers
        if post and depth < 2:
            r = R.random()
            if r < 0.16:
                pp = self.noun_pp(noun, role, depth)
                if pp:
                    attach(pp, head, "nmod")
                    phrase.toks += pp.toks
            elif r < 0.16 + relcl and depth == 0:
                rel = self.relative_clause(phrase, depth + 1)
                attach(rel, head, "acl:relcl")
                phrase.toks += rel.toks
                phrase.ends_open = True
            elif r < 0.19 + relcl and depth == 0 and classes_match(noun.classes, ANIM.split()):
                acl = self.participle_clause(noun, depth + 1)
                attach(acl, head, "acl")
                phrase.toks += acl.toks
                phrase.ends_open = True
        return phrase

    def proper_noun(self, name: str) -> Phrase:
        tok = Tok(name, name, "PROPN", "NNP", feats(Number="Sing"))
        return Phrase([tok], tok, 3, "Sing",
                      ("city", "place") if name in CITY_NAMES else ("person",))

    def pronoun(self, wanted, role: str) -> Phrase | None:
        case = "Nom" if role == "subj" else "Acc"
        if "person" in wanted:
            entry = pick(self.R, [(e, e[-1]) for e in PRONOUNS])
            classes = ("person",)
        elif classes_match(("thing", "animal", "food", "vehicle", "info", "event"), wanted):
            entry = IT if self.chance(0.7) else THEY
            classes = tuple(c for c in wanted if c != "person")
        else:
            return None
        tok = pron_tok(entry, case)
        return Phrase([tok], tok, entry[3], entry[4] or "Plur", classes)

    def saxon_genitive(self, possessed: Tok) -> list[Tok]:
        """``Anna 's`` / ``the teacher 's``: nmod:poss of the possessed noun, 's is case."""
        if self.chance(0.6):
            owner = self.proper_noun(self.choice(PERSON_NAMES)).head
            toks = [owner]
        else:
            owner = self.choice(nouns_of(("person",))).tok("Sing")
            the = det("the")
            attach(the, owner, "det")
            toks = [the, owner]
        s = possessive_s()
        attach(s, owner, "case")
        attach(owner, possessed, "nmod:poss")
        return toks + [s]

    def coordinated_np(self, wanted, role: str, depth: int) -> Phrase:
        """``cats and dogs``, ``Anna , Ben and Clara``: conj from the first conjunct; cc
        and commas attach to the conjunct that follows them."""
        n = 3 if self.chance(0.2) else 2
        conjuncts = [self.noun_phrase(wanted, role, depth + 1, pron=0, post=False)
                     for _ in range(n)]
        first = conjuncts[0]
        toks = list(first.toks)
        for i, c in enumerate(conjuncts[1:], start=1):
            attach(c, first.head, "conj")
            if i < n - 1 or (n == 3 and self.chance(0.5)):  # list comma, Oxford comma
                comma = punct(",")
                attach(comma, c.head, "punct")
                toks.append(comma)
            if i == n - 1:
                cc = cconj(pick(self.R, [("and", 5), ("or", 1)]))
                attach(cc, c.head, "cc")
                toks.append(cc)
            toks += c.toks
        # "Anna and Ben are ...", but "a cat or the dogs are ..." agrees with the last one.
        last = conjuncts[-1]
        number = "Plur" if cc.form == "and" else last.number
        person = 3 if cc.form == "and" else last.person
        return Phrase(toks, first.head, person, number, first.classes)

    def noun_pp(self, noun: Noun, role: str, depth: int) -> Phrase | None:
        """A PP attached to a noun (nmod). Which PPs a noun takes depends on its meaning,
        so that noun and verb attachment stay predictable from the words."""
        R = self.R
        options = []
        if noun.sg in CONTENTS:
            options.append("contents")          # a cup of coffee
        if noun.sg in OF_NOUNS:
            options.append("of")                # the door of the house
        if "info" in noun.classes and noun.sg not in ("answer", "news", "name"):
            options.append("about")             # a story about the king
        if "person" in noun.classes:
            options += ["with", "from"]         # the man with the hat / from Paris
        if "place" in noun.classes and role == "subj":
            options.append("near")              # the house near the river (subjects only)
        if not options:
            return None
        kind = R.choice(options)
        if kind == "contents":
            filler = R.choice(CONTENTS[noun.sg])
            n = next(x for x in NOUNS if filler in (x.sg, x.pl))
            tok = n.tok("Plur" if filler == n.pl else "Sing")
            obj, prep = Phrase([tok], tok), "of"
        elif kind == "of":
            wanted = OF_NOUNS[noun.sg] or ("vehicle", "pet", "building", "horse")
            obj = self.noun_phrase(wanted, "pobj", depth + 1, pron=0, post=False,
                                   determiner=None if self.chance(0.3) else "def")
            prep = "of"
        elif kind == "about":
            obj = self.noun_phrase(("person", "animal", "event", "city", "king"), "pobj",
                                   depth + 1, pron=0, post=False)
            prep = "about"
        elif kind == "with":
            obj = self.noun_phrase(("accessory", "pet"), "pobj", depth + 1, pron=0, post=False)
            prep = "with"
        elif kind == "from":
            obj = self.noun_phrase(("city", "village", "farm"), "pobj", depth + 1, pron=0,
                                   post=False, propn=0.6)
            prep = "from"
        else:
            obj = self.noun_phrase(("river", "lake", "station", "park", "market", "school"),
                                   "pobj", depth + 1, pron=0, post=False, determiner="def")
            prep = "near"
        case = adp(prep)
        attach(case, obj.head, "case")
        return Phrase([case] + obj.toks, obj.head)

    def place_pp(self, depth: int, classes=("place", "surface", "city")) -> Phrase:
        """A locative PP (obl, or a copular predicate): the preposition fits the noun."""
        obj = self.noun_phrase(classes, "pobj", depth + 1, pron=0, post=False, propn=0.15,
                               determiner=None if self.chance(0.3) else "def",
                               number=None if self.chance(0.2) else "Sing")
        head = obj.head
        if head.upos == "PROPN":
            preps = ["in"]
        else:
            noun = NOUN[head.lemma]
            preps = next((PLACE_PREPS[c] for c in (noun.sg,) + noun.classes[::-1]
                          if c in PLACE_PREPS), ["in", "near"])
        case = adp(self.R.choice(preps))
        attach(case, head, "case")
        return Phrase([case] + obj.toks, head)

    # ---------------------------------------------------------------- verb groups
    def finite_aux(self, lemma: str, tense: str, person: int, number: str) -> Tok:
        """A finite form of be / have / do agreeing with the subject."""
        sing3 = person == 3 and number == "Sing"
        if lemma == "be":
            if tense == "pres":
                form = "am" if (person, number) == (1, "Sing") else ("is" if sing3 else "are")
            else:
                form = "was" if number == "Sing" and person in (1, 3) else "were"
        elif lemma == "have":
            form = ("has" if sing3 else "have") if tense == "pres" else "had"
        elif lemma == "do":
            form = ("does" if sing3 else "do") if tense == "pres" else "did"
        else:
            raise ValueError(lemma)
        xpos = {"am": "VBP", "is": "VBZ", "are": "VBP", "has": "VBZ", "have": "VBP",
                "does": "VBZ", "do": "VBP"}.get(form, "VBD")
        if form in ("am", "was"):
            f = feats(Mood="Ind", Number="Sing", Person=person,
                      Tense="Pres" if form == "am" else "Past", VerbForm="Fin")
        else:
            f = verb_feats(xpos)
        return Tok(form, lemma, "AUX", xpos, f)

    def modal(self, form: str | None = None) -> Tok:
        form = form or pick(self.R, [("will", 4), ("can", 2), ("could", 1.5), ("should", 1.5),
                                     ("must", 1), ("might", 1), ("would", 1)])
        return Tok(form, form, "AUX", "MD", verb_feats("MD"))

    def verb_group(self, verb: Verb | None, person: int, number: str, tense: str, *,
                   neg: bool = False, invert: bool = False, passive: bool = False,
                   finite: bool = True, imperative: bool = False):
        """Auxiliaries, negation and main verb (``verb=None``: the copula ``be``).

        Returns ``(auxes, negs, main)``: ``auxes`` in surface order (the last one of a
        passive has deprel ``aux:pass``), ``negs`` go right after ``auxes[0]``, ``main``
        is the lexical verb or the copula. The caller attaches all of them.
        tense: past | pres | fut (will) | modal | can | perf | prog (not with the copula).
        """
        auxes: list[Tok] = []
        cop = verb is None

        def main_tok(xpos: str) -> Tok:
            if cop:
                form = {"VB": "be", "VBN": "been", "VBG": "being"}[xpos]
                return Tok(form, "be", "AUX", xpos, verb_feats(xpos))
            return verb.tok(xpos, imperative=imperative, passive=passive)

        def be_inf() -> Tok:
            return Tok("be", "be", "AUX", "VB", verb_feats("VB"))

        if imperative:
            if neg:  # Do n't touch it: do-support
                auxes.append(Tok("do", "do", "AUX", "VB", verb_feats("VB", imperative=True)))
            main = main_tok("VB")
        elif not finite:
            if passive:
                auxes.append(be_inf())
                main = main_tok("VBN")
            else:
                main = main_tok("VB")
        elif tense in ("fut", "modal", "can"):
            auxes.append(self.modal({"fut": "will", "can": "can"}.get(tense)))
            if passive:
                auxes.append(be_inf())
            main = main_tok("VBN" if passive else "VB")
        elif tense == "perf":
            auxes.append(self.finite_aux("have", pick(self.R, [("pres", 2), ("past", 1)]),
                                         person, number))
            if passive:
                auxes.append(Tok("been", "be", "AUX", "VBN", verb_feats("VBN")))
            main = main_tok("VBN")
        elif tense == "prog":
            auxes.append(self.finite_aux("be", self.R.choice(["pres", "past"]), person, number))
            main = main_tok("VBG")
        elif passive:
            auxes.append(self.finite_aux("be", tense, person, number))
            main = main_tok("VBN")
        elif cop:
            main = self.finite_aux("be", tense, person, number)
        elif neg or invert:  # do-support
            auxes.append(self.finite_aux("do", tense, person, number))
            main = main_tok("VB")
        else:
            sing3 = person == 3 and number == "Sing"
            xpos = "VBD" if tense == "past" else ("VBZ" if sing3 else "VBP")
            main = main_tok(xpos)
        if passive and auxes:
            auxes[-1].deprel = "aux:pass"
        negs = self.negation(auxes[0] if auxes else main) if neg else []
        return auxes, negs, main

    def negation(self, first: Tok) -> list[Tok]:
        """``not`` / ``n't`` after the first auxiliary. ``cannot`` is a multiword token
        (can + not); ``can't`` and ``won't`` are ``ca`` / ``wo`` + ``n't``."""
        contractible = ("do", "does", "did", "is", "are", "was", "were", "has", "have",
                        "had", "could", "should", "would")
        if first.form == "can":
            if self.chance(0.7):
                first.mwt = "cannot"
                return [neg_tok("not")]
            first.form = "ca"
            return [neg_tok("n't")]
        if first.form == "will" and self.chance(0.4):
            first.form = "wo"
            return [neg_tok("n't")]
        if first.form in contractible and self.chance(0.5):
            return [neg_tok("n't")]
        return [neg_tok("not")]

    def choose_tense(self, depth: int, verb: Verb, passive: bool = False) -> str:
        if passive:
            return pick(self.R, [("past", 6), ("pres", 2), ("modal", 1), ("perf", 1)])
        prog = 0 if verb.lemma in STATIVE else 1
        if depth == 0:
            return pick(self.R, [("past", 45), ("pres", 25), ("fut", 8), ("modal", 5),
                                 ("can", 4), ("perf", 7), ("prog", 7 * prog)])
        return pick(self.R, [("past", 55), ("pres", 30), ("fut", 5), ("modal", 4),
                             ("can", 1), ("perf", 3), ("prog", 2 * prog)])

    # ---------------------------------------------------------------- clauses
    def pick_verb(self, frame: str, subj_cls=None, obj_cls=None) -> Verb:
        """A verb allowing ``frame`` whose subject / object restrictions fit the classes."""
        def ok(v: Verb) -> bool:
            if subj_cls is not None and not classes_match(subj_cls, v.subj):
                return False
            if frame in ("obj", "passive"):
                return bool(v.obj) and (frame == "obj" or v.passive) and (
                    obj_cls is None or classes_match(obj_cls, v.obj))
            if frame == "ditr":
                return bool(v.ditr) and (obj_cls is None or classes_match(obj_cls, v.ditr))
            if frame == "prep":
                return any(obj_cls is None or classes_match(obj_cls, c) for _, c in v.prep)
            return bool(getattr(v, frame))

        return self.choice([v for v in VERBS if ok(v)])

    def clause(self, depth: int = 0, *, frame: str | None = None, verb: Verb | None = None,
               subj: Phrase | None = None, gap: tuple | None = None, invert: bool = False,
               tense: str | None = None, neg: bool | None = None, comp: Phrase | None = None,
               obj: Phrase | None = None, n_adjuncts: int | None = None,
               finite: bool = True, imperative: bool = False, adjunct_kinds=None,
               front: bool = False, subj_cls=None) -> Phrase:
        """A verbal clause: its words (without a gap filler) and its head verb.

        frame: intr | obj | ditr | prep | motion | passive | ccomp | xcomp | ocontrol.
        gap: ``("subj", filler)``: the filler is the subject, placed by the caller
        (relative pronoun, wh-word); ``("shared", subject)``: second conjunct of a VP
        coordination, the subject is neither placed nor attached; ``("obj", filler)``;
        ``("pobj", filler, prep)``: the preposition is stranded after the verb;
        ``("adv", wh_adverb)``.
        comp: a finished complement for ``ccomp`` (long wh-movement).
        invert: subject-auxiliary inversion (questions). finite=False: bare VP (to-inf).
        """
        R = self.R
        gap_kind, filler = (gap[0], gap[1]) if gap else (None, None)
        gap_cls = filler.classes if isinstance(filler, Phrase) else None
        if frame is None:
            weights = [("intr", 16), ("obj", 30), ("ditr", 7), ("prep", 8), ("motion", 7),
                       ("passive", 5)]
            if depth < 2:
                weights += [("ccomp", 8 if depth == 0 else 3), ("xcomp", 8 if depth == 0 else 3),
                            ("ocontrol", 4 if depth == 0 else 1)]
            frame = pick(R, weights)
        if verb is None:
            if gap_kind in ("subj", "shared"):
                verb = self.pick_verb(frame, subj_cls=gap_cls)
            elif gap_kind == "obj":
                verb = self.pick_verb(frame, obj_cls=gap_cls, subj_cls=subj_cls)
            elif gap_kind == "pobj":
                verb = self.pick_verb("prep", obj_cls=gap_cls, subj_cls=subj_cls)
            elif subj is not None:
                verb = self.pick_verb(frame, subj_cls=subj.classes)
            else:
                verb = self.pick_verb(frame, subj_cls=subj_cls)
        passive = frame == "passive"
        # ---------------- subject
        subj_phrase = None
        if gap_kind in ("subj", "shared"):
            subj_phrase = filler
        elif subj is not None:
            subj_phrase = subj
        elif finite and not imperative:
            if passive:
                subj_phrase = self.noun_phrase(verb.obj, "subj", depth, coord=0.04)
            else:
                wanted = verb.subj
                if "person" in wanted and self.chance(0.5):
                    wanted = ("person",)
                subj_phrase = self.noun_phrase(wanted, "subj", depth, coord=0.05,
                                               relcl=0.08 if depth == 0 and not invert else 0)
        if imperative:
            person, number = 2, "Plur"
        elif subj_phrase is not None:
            person, number = subj_phrase.person, subj_phrase.number
        else:
            person, number = 3, "Sing"
        # ---------------- verb group
        if tense is None or (tense == "prog" and verb.lemma in STATIVE):
            tense = self.choose_tense(depth, verb, passive)
        if neg is None:
            p_neg = 0.6 if tense == "can" else 0.1 if depth == 0 else 0.05
            neg = not invert and finite and gap_kind != "shared" and self.chance(p_neg)
        auxes, negs, main = self.verb_group(verb, person, number, tense, neg=neg, invert=invert,
                                            passive=passive, finite=finite,
                                            imperative=imperative)
        for a in auxes:
            attach(a, main, a.deprel or "aux")
        for n in negs:
            attach(n, main, "advmod")
        if subj_phrase is not None and gap_kind != "shared":
            attach(subj_phrase, main, "nsubj:pass" if passive else "nsubj")
        # ---------------- complements, in surface order
        comps: list[Phrase] = []
        stranded: list[Tok] = []
        if gap_kind == "adv":
            attach(filler, main, "advmod")
        if frame in ("obj", "ocontrol"):
            if gap_kind == "obj":
                attach(filler, main, "obj")
            else:
                o = obj or self.noun_phrase(verb.obj if frame == "obj" else ("person",), "obj",
                                            depth, coord=0.05, pron=0.2,
                                            relcl=0.1 if depth == 0 else 0)
                attach(o, main, "obj")
                comps.append(o)
            if frame == "ocontrol":
                comps.append(self.infinitive(main, depth + 1, ("person",)))
        elif frame == "ditr":
            # Recipient as iobj (give the girl a flower) or as "to" obl (give a flower to
            # the girl). A fronted theme keeps the iobj.
            if gap_kind == "obj" or self.chance(0.6) or not verb.to_dative:
                rec = self.noun_phrase(("person",), "obj", depth + 1, pron=0.45, post=False)
                attach(rec, main, "iobj")
                comps.append(rec)
                if gap_kind == "obj":
                    attach(filler, main, "obj")
                else:
                    theme = self.noun_phrase(verb.ditr, "obj", depth, pron=0,
                                             relcl=0.05 if depth == 0 else 0)
                    attach(theme, main, "obj")
                    comps.append(theme)
            else:
                theme = self.noun_phrase(verb.ditr, "obj", depth + 1, pron=0.15, post=False)
                attach(theme, main, "obj")
                rec = self.noun_phrase(("person",), "pobj", depth, pron=0.2,
                                       relcl=0.05 if depth == 0 else 0)
                to = adp("to")
                attach(to, rec.head, "case")
                attach(rec, main, "obl")
                comps += [theme, Phrase([to] + rec.toks, rec.head, ends_open=rec.ends_open)]
        elif frame == "prep":
            if gap_kind == "pobj":
                prep = gap[2] if len(gap) > 2 else next(
                    p for p, c in verb.prep if classes_match(gap_cls, c))
                case = adp(prep)
                attach(case, filler.head, "case")
                attach(filler, main, "obl")
                stranded.append(case)
            else:
                prep, wanted = R.choice(verb.prep)
                pobj = self.noun_phrase(wanted, "pobj", depth, pron=0.15,
                                        relcl=0.06 if depth == 0 else 0)
                case = adp(prep)
                attach(case, pobj.head, "case")
                attach(pobj, main, "obl")
                comps.append(Phrase([case] + pobj.toks, pobj.head, ends_open=pobj.ends_open))
        elif frame == "motion":
            goal = self.noun_phrase(("place", "city"), "pobj", depth + 1, pron=0, post=False,
                                    determiner=None if self.chance(0.3) else "def")
            inside = goal.head.upos == "NOUN" and classes_match(NOUN[goal.head.lemma].classes,
                                                                ("room", "building", "water"))
            case = adp("into" if inside and self.chance(0.4) else "to")
            attach(case, goal.head, "case")
            attach(goal, main, "obl")
            comps.append(Phrase([case] + goal.toks, goal.head))
        elif frame == "passive":
            if self.chance(0.45):
                agent = self.noun_phrase(verb.subj, "pobj", depth + 1, post=False, pron=0.1)
                by = adp("by")
                attach(by, agent.head, "case")
                attach(agent, main, "obl:agent")
                comps.append(Phrase([by] + agent.toks, agent.head))
        elif frame == "ccomp":
            c = comp or self.complement_clause(depth + 1)
            attach(c, main, "ccomp")
            comps.append(c)
        elif frame == "xcomp":
            controller = subj_phrase.classes if subj_phrase is not None else subj_cls
            comps.append(self.infinitive(main, depth + 1, controller))
        # ---------------- adjuncts
        pre_adv: list[Tok] = []
        fronted: list[Tok] = []
        post_adjuncts: list[Phrase] = []
        open_end = bool(comps) and comps[-1].ends_open
        if frame in ("ccomp", "xcomp", "ocontrol") or open_end or stranded:
            n_adjuncts = 0  # "said that Ben left yesterday": whose adjunct? avoid it
        elif n_adjuncts is None:
            if depth == 0:
                n_adjuncts = pick(R, [(0, 40), (1, 42), (2, 18)])
            else:
                n_adjuncts = pick(R, [(0, 75), (1, 25)])
        used: list[str] = []
        for _ in range(n_adjuncts):
            a = self.adjunct(verb, main, tense, depth, bool(comps), used, adjunct_kinds)
            if a is not None:
                post_adjuncts.append(a)
        if (finite and not invert and not neg and not imperative and depth <= 1
                and gap_kind != "shared" and self.chance(0.07)):
            a = adv(R.choice(FREQ_ADVS))      # Anna often reads / has never seen
            attach(a, main, "advmod")
            pre_adv.append(a)
        if front and post_adjuncts and not invert:
            moved = post_adjuncts.pop(0)      # Yesterday , Anna ... (comma on the verb)
            comma = punct(",")
            attach(comma, main, "punct")
            fronted = moved.toks + [comma]
        # ---------------- linear order
        placed_subj = (subj_phrase.toks if subj_phrase is not None
                       and gap_kind not in ("subj", "shared") else [])
        if invert:
            toks = auxes[:1] + placed_subj + negs + auxes[1:] + [main]
        else:
            toks = fronted + placed_subj + auxes[:1] + negs + pre_adv + auxes[1:] + [main]
        for c in comps:
            toks += c.toks
        toks += stranded
        for a in post_adjuncts:
            toks += a.toks
        ends_open = (frame in ("ccomp", "xcomp", "ocontrol") or open_end) and not post_adjuncts
        result = Phrase(toks, main, person, number, (), ends_open=ends_open)
        result.subj = subj_phrase
        return result

    def adjunct(self, verb: Verb, head: Tok, tense: str, depth: int, has_obj: bool,
                used: list[str], allowed=None) -> Phrase | None:
        """A modifier of the verb: locative / instrument (with) / beneficiary (for) /
        temporal PP or noun, or a manner adverb. At most one of each kind per clause."""
        R = self.R
        kinds = [("time", 3), ("manner", 2)]
        if verb.loc:
            kinds.append(("loc", 5))
        if verb.instr and has_obj:
            kinds.append(("instr", 3))
        if verb.ben and has_obj:
            kinds.append(("ben", 3))
        kinds = [(k, w) for k, w in kinds if k not in used and (allowed is None or k in allowed)]
        if not kinds:
            return None
        kind = pick(R, kinds)
        used.append(kind)
        if kind == "manner":
            tok = adv(R.choice(MANNER_ADVS))
            attach(tok, head, "advmod")
            return Phrase([tok], tok)
        if kind == "loc":
            pp = self.place_pp(depth)
            attach(pp, head, "obl")
            return pp
        if kind in ("instr", "ben"):
            if kind == "instr":
                obj = self.noun_phrase(("instr",), "pobj", depth + 1, pron=0, post=False)
            else:
                obj = self.noun_phrase(("person",), "pobj", depth + 1, pron=0.3, post=False)
            case = adp("with" if kind == "instr" else "for")
            attach(case, obj.head, "case")
            attach(obj, head, "obl")
            return Phrase([case] + obj.toks, obj.head)
        return self.time_expression(head, tense)

    def time_expression(self, head: Tok, tense: str) -> Phrase:
        """``yesterday`` / ``last week`` / ``every morning`` (NOUN, obl:tmod), ``in 1998``,
        or a temporal PP (``after the party``, ``in the morning``): obl."""
        R = self.R
        options = ["pp", "pp"] + {"past": ["yesterday", "last", "year"],
                                  "fut": ["tomorrow", "next"],
                                  "pres": ["every", "today"]}.get(tense, [])
        choice = R.choice(options)
        if choice in ("yesterday", "tomorrow", "today"):
            tok = Tok(choice, choice, "NOUN", "NN", feats(Number="Sing"))
            attach(tok, head, "obl:tmod")
            return Phrase([tok], tok)
        if choice in ("last", "next", "every"):
            nouns = {"last": ["night", "week", "weekend"], "next": ["week", "weekend"],
                     "every": ["morning", "evening", "night", "week", "weekend"]}[choice]
            tok = NOUN[R.choice(nouns)].tok("Sing")
            if choice == "every":
                mod = det("every")
                attach(mod, tok, "det")
            else:
                mod = Tok(choice, choice, "ADJ", "JJ", feats(Degree="Pos"))
                attach(mod, tok, "amod")
            attach(tok, head, "obl:tmod")
            return Phrase([mod, tok], tok)
        if choice == "year":
            tok = number_tok(str(R.randint(1950, 2020)))
            case = adp("in")
            attach(case, tok, "case")
            attach(tok, head, "obl")
            return Phrase([case, tok], tok)
        prep = R.choice(["in", "after", "before", "during"])
        if prep == "in":
            noun = NOUN[R.choice(["morning", "evening", "afternoon"])].tok("Sing")
            the = det("the")
            attach(the, noun, "det")
            obj = Phrase([the, noun], noun)
        else:
            obj = self.noun_phrase(("event",), "pobj", 2, pron=0, post=False,
                                   determiner="def" if self.chance(0.7) else None)
        case = adp(prep)
        attach(case, obj.head, "case")
        attach(obj, head, "obl")
        return Phrase([case] + obj.toks, obj.head)

    def infinitive(self, controller: Tok, depth: int, subj_cls=None) -> Phrase:
        """``to`` + VP: xcomp of the controlling verb; ``to`` is PART TO, mark."""
        frame = pick(self.R, [("intr", 3), ("obj", 5), ("motion", 1), ("prep", 1)])
        vp = self.clause(depth, frame=frame, finite=False, subj_cls=subj_cls,
                         n_adjuncts=pick(self.R, [(0, 3), (1, 1)]))
        to = part_to()
        attach(to, vp.head, "mark")
        attach(vp, controller, "xcomp")
        return Phrase([to] + vp.toks, vp.head, ends_open=True)

    def complement_clause(self, depth: int) -> Phrase:
        """Finite complement clause (ccomp) with optional ``that`` (SCONJ, mark)."""
        c = self.copular_clause(depth) if self.chance(0.35) else self.clause(depth)
        if self.chance(0.6):
            that = sconj("that")
            attach(that, c.head, "mark")
            c = Phrase([that] + c.toks, c.head)
        c.ends_open = True
        return c

    def relative_clause(self, antecedent: Phrase, depth: int, kind: str | None = None,
                        zero: bool = True) -> Phrase:
        """``who / that / which`` + clause with a subject or object gap (acl:relcl of the
        noun). The relative pronoun is nsubj / obj of the clause; object relatives may
        have no pronoun (``the book Anna read``) unless ``zero`` is false."""
        R = self.R
        person = "person" in antecedent.classes
        if kind is None:
            kind = pick(R, [("subj", 5), ("obj", 4)])
        if person and not zero:  # extraposed: "who" cannot be misread as modifying a thing
            form = "who"
        elif kind == "subj":
            form = pick(R, [("who", 3), ("that", 2)] if person else [("that", 3), ("which", 2)])
        else:
            form = pick(R, [("who", 1), ("that", 2), ("", 2 if zero else 0)] if person else
                        [("that", 3), ("which", 1), ("", 2 if zero else 0)])
        rel = wh_pron(form or "that", rel=True)
        filler = Phrase([rel], rel, 3, antecedent.number, antecedent.classes)
        n_adj = pick(R, [(0, 2), (1, 1)])
        if kind == "subj":
            frame = pick(R, [("intr", 2), ("obj", 4), ("prep", 1)])
            body = self.clause(depth, gap=("subj", filler), frame=frame, n_adjuncts=n_adj)
        else:
            body = self.clause(depth, gap=("obj", filler), frame="obj", n_adjuncts=n_adj)
        toks = [rel] + body.toks if form else body.toks
        return Phrase(toks, body.head, ends_open=True)

    def participle_clause(self, noun: Noun, depth: int) -> Phrase:
        """``the girl sitting on the bench`` / ``the man reading a newspaper`` (acl)."""
        if self.chance(0.5):
            verb = VERB[self.R.choice(["sit", "wait", "sleep", "stay", "swim", "run"])]
            v = verb.tok("VBG")
            pp = self.place_pp(depth)
            attach(pp, v, "obl")
            return Phrase([v] + pp.toks, v)
        verb = VERB[self.R.choice(["read", "carry", "hold", "eat", "watch"])]
        if not classes_match(noun.classes, verb.subj):
            raise NoFit
        v = verb.tok("VBG")
        o = self.noun_phrase(verb.obj, "obj", depth + 1, pron=0, post=False)
        attach(o, v, "obj")
        return Phrase([v] + o.toks, v)

    def copular_clause(self, depth: int = 0, *, invert: bool = False, subj: Phrase | None = None,
                       tense: str | None = None, neg: bool | None = None,
                       comparative: bool = True) -> Phrase:
        """``The soup is hot``, ``Anna was a teacher``, ``The keys are on the table``,
        ``The dog is bigger than the cat``: the predicate heads the clause, ``be`` is cop,
        a modal is aux, the subject is nsubj of the predicate."""
        R = self.R
        kind = pick(R, [("adj", 55), ("nom", 18), ("loc", 20), ("cmp", 10 if comparative else 0)])
        if subj is None:
            wanted = {"nom": ("person",),
                      "loc": ("person", "animal", "thing", "food", "vehicle")}.get(
                kind, ("person", "animal", "thing", "food", "place", "info", "event", "vehicle"))
            subj = self.noun_phrase(wanted, "subj", depth, coord=0.04, propn=0.15,
                                    relcl=0.06 if depth == 0 and not invert else 0)
        elif kind == "nom" and "person" not in subj.classes:
            kind = "adj"
        taken = {t.lemma for t in subj.toks}
        adjs = [a for a in ADJS if classes_match(subj.classes, a.classes)
                and a.pos not in ("wooden", "little") and a.pos not in taken]
        if kind == "cmp":
            adjs = [a for a in adjs if a.cmp or a.pos in GRADABLE]
        if kind in ("adj", "cmp"):
            a = self.choice(adjs)
            if kind == "cmp":
                if a.cmp:                     # bigger than ...
                    head = a.tok(comparative=True)
                    pred = [head]
                else:                         # more beautiful than ...
                    more = adv("more", "RBR", Degree="Cmp")
                    head = a.tok()
                    attach(more, head, "advmod")
                    pred = [more, head]
                other = self.noun_phrase(subj.classes, "obj", depth + 1, post=False, pron=0.15)
                than = adp("than")
                attach(than, other.head, "case")
                attach(other, head, "obl")
                pred += [than] + other.toks
            else:
                head = a.tok()
                pred = [head]
                if self.chance(0.2):
                    d = adv(R.choice(DEGREE_ADVS))
                    attach(d, head, "advmod")
                    pred.insert(0, d)
                if self.chance(0.1) and len(adjs) > 1:   # tired and hungry
                    second = self.choice([b for b in adjs if b is not a]).tok()
                    cc = cconj(R.choice(["and", "but"]))
                    attach(second, head, "conj")
                    attach(cc, second, "cc")
                    pred += [cc, second]
        elif kind == "nom":
            head = self.choice(nouns_of(("job",))).tok(subj.number)
            pred = [head]
            if self.chance(0.35):
                t = self.choice([x for x in ADJS if "person" in x.classes]).tok()
                attach(t, head, "amod")
                pred.insert(0, t)
            if subj.number == "Sing":
                article = det("a")
                attach(article, head, "det")
                pred.insert(0, article)
                fix_article(pred)
        else:
            pp = self.place_pp(depth)
            head, pred = pp.head, pp.toks
        if tense is None:
            tense = pick(R, [("pres", 45), ("past", 40), ("fut", 7), ("modal", 5), ("can", 4)])
        if neg is None:
            neg = not invert and self.chance(0.6 if tense == "can" else 0.1)
        auxes, negs, cop = self.verb_group(None, subj.person, subj.number, tense, neg=neg,
                                           invert=invert)
        for a in auxes:
            attach(a, head, "aux")
        attach(cop, head, "cop")
        for n in negs:
            attach(n, head, "advmod")
        attach(subj, head, "nsubj")
        verbal = auxes + [cop]
        if invert:
            toks = verbal[:1] + subj.toks + verbal[1:] + pred
        else:
            toks = subj.toks + verbal[:1] + negs + verbal[1:] + pred
        result = Phrase(toks, head, subj.person, subj.number, (), ends_open=kind == "cmp")
        result.subj = subj
        return result

    # ---------------------------------------------------------------- sentences
    def finish(self, body: Phrase, mark: str = ".") -> list[Tok]:
        """Make the body's head the root and attach the final punctuation to it."""
        p = punct(mark)
        attach(p, body.head, "punct")
        body.head.head, body.head.deprel = None, "root"
        return body.toks + [p]

    def s_declarative(self) -> list[Tok]:
        return self.finish(self.clause(0, front=self.chance(0.1)))

    def s_copular(self) -> list[Tok]:
        return self.finish(self.copular_clause(0))

    def s_existential(self) -> list[Tok]:
        """``There are two cats in the garden .``: be is the root (VERB), There is expl."""
        R = self.R
        subj = self.noun_phrase(("person", "animal", "thing", "food", "vehicle"), "subj", 1,
                                determiner="indef", post=False)
        be = self.finite_aux("be", R.choice(["pres", "past"]), 3, subj.number)
        be.upos = "VERB"
        there = Tok("there", "there", "PRON", "EX")
        attach(there, be, "expl")
        attach(subj, be, "nsubj")
        toks = [there, be]
        if subj.number == "Sing" and self.chance(0.15):   # There was n't a cloud ...
            n = neg_tok("n't" if self.chance(0.5) else "not")
            attach(n, be, "advmod")
            toks.append(n)
        loc = self.place_pp(1)
        attach(loc, be, "obl")
        return self.finish(Phrase(toks + subj.toks + loc.toks, be))

    def s_imperative(self) -> list[Tok]:
        """``Close the door .``, ``Please wait here .``, ``Do n't touch the cake !``:
        the verb is VB with Mood=Imp; ``please`` is INTJ, discourse."""
        R = self.R
        frame = pick(R, [("obj", 5), ("ditr", 2), ("motion", 2), ("prep", 1), ("intr", 1)])
        neg = self.chance(0.2)
        body = self.clause(1, frame=frame, imperative=True, neg=neg, subj_cls=("person",),
                           tense="fut",  # only for the choice of time adjuncts
                           n_adjuncts=pick(R, [(0, 2), (1, 1)]))
        if not neg and self.chance(0.3):
            please = Tok("please", "please", "INTJ", "UH")
            attach(please, body.head, "discourse")
            body.toks.insert(0, please)
        return self.finish(body, "!" if self.chance(0.25) else ".")

    def s_adverbial_clause(self) -> list[Tok]:
        """Main clause + ``because / when / if ...`` clause (advcl; the subordinator is
        mark), or the adverbial clause first, followed by a comma."""
        R = self.R
        sub_word = R.choice(["because", "when", "before", "after", "while", "if", "although"])
        tense = R.choice(["past", "past", "pres"])
        main_tense = "fut" if sub_word == "if" else tense
        sub_tense = {"if": "pres", "while": "prog"}.get(sub_word, tense)
        main = self.clause(0, tense=main_tense, n_adjuncts=pick(R, [(0, 2), (1, 1)]),
                           frame=pick(R, [("intr", 2), ("obj", 3), ("motion", 1), ("prep", 1)]))
        if self.chance(0.3) and sub_word != "while":
            sub = self.copular_clause(1, tense=sub_tense, comparative=False)
        else:
            sub = self.clause(1, tense=sub_tense,
                              frame=pick(R, [("intr", 2), ("obj", 3), ("motion", 1)]))
        mark = sconj(sub_word)
        attach(mark, sub.head, "mark")
        attach(sub, main.head, "advcl")
        if self.chance(0.35):
            comma = punct(",")
            attach(comma, main.head, "punct")
            toks = [mark] + sub.toks + [comma] + main.toks
        elif main.ends_open:
            raise NoFit
        else:
            toks = main.toks + [mark] + sub.toks
        return self.finish(Phrase(toks, main.head))

    def s_coordinated_clauses(self) -> list[Tok]:
        """``Anna sang , and Ben danced .``: conj between the clause heads."""
        R = self.R
        first = self.clause(1) if self.chance(0.8) else self.copular_clause(1)
        second = self.clause(1) if self.chance(0.8) else self.copular_clause(1)
        cc = cconj(pick(R, [("and", 3), ("but", 2), ("so", 0.5)]))
        comma = punct(",")
        attach(cc, second.head, "cc")
        attach(comma, second.head, "punct")
        attach(second, first.head, "conj")
        return self.finish(Phrase(first.toks + [comma, cc] + second.toks, first.head))

    def s_coordinated_vps(self) -> list[Tok]:
        """``Anna opened the door and left .``: the subject depends on the first verb only."""
        R = self.R
        tense = R.choice(["past", "past", "pres"])
        first = self.clause(0, tense=tense, neg=False, n_adjuncts=pick(R, [(0, 3), (1, 1)]),
                            frame=pick(R, [("intr", 1), ("obj", 3), ("motion", 1)]))
        if first.ends_open:
            raise NoFit
        frame = pick(R, [("intr", 2), ("obj", 3), ("motion", 1)])
        verb = self.pick_verb(frame, subj_cls=first.subj.classes)
        if verb.lemma == first.head.lemma:
            raise NoFit
        second = self.clause(1, verb=verb, tense=tense, neg=False, frame=frame,
                             gap=("shared", first.subj), n_adjuncts=pick(R, [(0, 3), (1, 1)]))
        cc = cconj(pick(R, [("and", 4), ("but", 1), ("or", 0.5)]))
        attach(cc, second.head, "cc")
        attach(second, first.head, "conj")
        return self.finish(Phrase(first.toks + [cc] + second.toks, first.head))

    def s_question(self) -> list[Tok]:
        """Yes/no questions (subject-auxiliary inversion, do-support) and wh-questions
        (the wh-phrase takes its role in the clause: nsubj, obj, advmod)."""
        R = self.R
        kind = pick(R, [("yn", 30), ("yn_cop", 10), ("wh_subj", 18), ("wh_obj", 20),
                        ("wh_adv", 15), ("how_many", 5)])
        if kind == "yn":
            return self.finish(self.clause(0, invert=True, tense=pick(
                R, [("past", 4), ("pres", 3), ("fut", 1), ("modal", 1), ("perf", 1),
                    ("prog", 1)])), "?")
        if kind == "yn_cop":
            return self.finish(self.copular_clause(0, invert=True, comparative=False,
                                                   tense=R.choice(["pres", "past"])), "?")
        if kind == "wh_subj":
            filler = self.wh_filler()
            body = self.clause(0, gap=("subj", filler),
                               frame=pick(R, [("intr", 3), ("obj", 4), ("ditr", 1),
                                              ("motion", 1)]))
            return self.finish(Phrase(filler.toks + body.toks, body.head), "?")
        if kind in ("wh_obj", "how_many"):
            filler = self.wh_filler(how_many=kind == "how_many")
            body = self.clause(0, gap=("obj", filler), invert=True,
                               frame="obj" if self.chance(0.85) else "ditr",
                               tense=pick(R, [("past", 4), ("pres", 2), ("fut", 1),
                                              ("modal", 1), ("prog", 1)]))
            return self.finish(Phrase(filler.toks + body.toks, body.head), "?")
        word = R.choice(["where", "when", "why", "how"])
        wh = wh_adv(word)
        verb, frame = None, pick(R, [("intr", 2), ("obj", 3)])
        if word == "where":
            verb, frame = VERB[R.choice(["live", "sleep", "work", "stay", "wait", "go", "run",
                                         "travel", "drive", "walk", "fly", "swim"])], "intr"
        elif word == "how":
            verb, frame = VERB[R.choice(["open", "fix", "write", "paint", "draw", "find",
                                         "build", "clean"])], "obj"
        body = self.clause(0, gap=("adv", wh), frame=frame, verb=verb, invert=True,
                           n_adjuncts=0 if word in ("where", "how") else None,
                           adjunct_kinds=("manner", "instr", "ben"),
                           tense=pick(R, [("past", 4), ("pres", 2), ("fut", 1), ("modal", 1)]))
        return self.finish(Phrase([wh] + body.toks, body.head), "?")

    def wh_filler(self, how_many: bool = False, classes=None) -> Phrase:
        """A fronted wh-phrase: ``who``, ``what``, ``which book`` (which is det),
        ``how many cats`` (how is advmod of many, many is amod of the noun)."""
        R = self.R
        if how_many:
            noun = self.choice(nouns_of(("thing", "animal", "food", "person"), count=True))
            how, many = wh_adv("how"), Tok("many", "many", "ADJ", "JJ", feats(Degree="Pos"))
            n = noun.tok("Plur")
            attach(how, many, "advmod")
            attach(many, n, "amod")
            return Phrase([how, many, n], n, 3, "Plur", noun.classes)
        choice = pick(R, [("who", 3), ("what", 3), ("which", 2)])
        things = tuple(c for c in (classes or WHAT_CLASSES) if c not in ("person", "animal"))
        if choice == "who" and (classes is None or "person" in classes):
            t = wh_pron("who")
            return Phrase([t], t, 3, "Sing", ("person",))
        if choice == "what" and things:
            t = wh_pron("what")
            return Phrase([t], t, 3, "Sing", things)
        wanted = classes or ("person", "animal", "thing", "food", "vehicle", "info", "place")
        noun = self.choice(nouns_of(wanted, count=True))
        number = "Plur" if self.chance(0.25) else "Sing"
        n = noun.tok(number)
        which = det("which")
        attach(which, n, "det")
        return Phrase([which, n], n, 3, number, noun.classes)

    # ---------------------------------------------------------------- non-projective
    def np_extraposed_subject_relcl(self) -> list[Tok]:
        """``A man arrived yesterday who knew the answer .``: acl:relcl of ``man``
        crosses the verb (and the adjunct)."""
        R = self.R
        subj = self.noun_phrase(("person",), "subj", 1, determiner="indef", post=False)
        verb = VERB[R.choice(["arrive", "appear", "come", "return", "leave"])]
        main = self.clause(0, verb=verb, frame="intr", subj=subj, tense="past", neg=False,
                           n_adjuncts=pick(R, [(0, 2), (1, 3)]), adjunct_kinds=("time",))
        rel = self.relative_clause(subj, 1, zero=False)
        attach(rel, subj.head, "acl:relcl")
        return self.finish(Phrase(main.toks + rel.toks, main.head))

    def np_extraposed_object_relcl(self) -> list[Tok]:
        """``Anna met a man yesterday who ...``: acl:relcl of the object crosses the
        adjunct of the verb."""
        R = self.R
        verb = VERB[R.choice(["meet", "see", "visit", "call", "help", "find", "follow"])]
        obj = self.noun_phrase(("person",), "obj", 1, determiner="indef", post=False)
        main = self.clause(0, verb=verb, frame="obj", obj=obj, tense="past", neg=False,
                           n_adjuncts=1, adjunct_kinds=("time", "loc"))
        rel = self.relative_clause(obj, 1, kind="subj", zero=False)
        attach(rel, obj.head, "acl:relcl")
        return self.finish(Phrase(main.toks + rel.toks, main.head))

    def np_extraposed_pp(self) -> list[Tok]:
        """``A report appeared yesterday about the storm .``: nmod of ``report`` crosses
        the verb."""
        R = self.R
        noun = NOUN[R.choice(["report", "story", "article", "book", "film", "poem", "song"])]
        head = noun.tok("Sing")
        art = det("an" if noun.sg[0] in "aeiou" else "a")
        attach(art, head, "det")
        subj = Phrase([art, head], head, 3, "Sing", noun.classes)
        main = self.clause(0, verb=VERB["appear"], frame="intr", subj=subj, tense="past",
                           neg=False, n_adjuncts=1, adjunct_kinds=("time",))
        topic = self.noun_phrase(("person", "animal", "event", "city", "king"), "pobj", 1,
                                 pron=0, post=False)
        about = adp("about")
        attach(about, topic.head, "case")
        attach(topic, head, "nmod")
        return self.finish(Phrase(main.toks + [about] + topic.toks, main.head))

    def np_stranded_question(self) -> list[Tok]:
        """``Who did Anna talk to ?``: the stranded preposition is case of ``who``,
        which is obl of the verb."""
        R = self.R
        verb = R.choice([v for v in VERBS if v.prep])
        prep, classes = R.choice(verb.prep)
        filler = self.wh_filler(classes=classes)
        body = self.clause(0, verb=verb, frame="prep", gap=("pobj", filler, prep), invert=True,
                           tense=pick(R, [("past", 4), ("pres", 2), ("prog", 2), ("fut", 1)]))
        return self.finish(Phrase(filler.toks + body.toks, body.head), "?")

    def np_long_wh(self) -> list[Tok]:
        """``What did Anna say Ben bought ?``: the wh-word is obj of the embedded verb."""
        R = self.R
        filler = self.wh_filler()
        inner = self.clause(1, frame="obj", gap=("obj", filler), neg=False,
                            tense=pick(R, [("past", 4), ("pres", 1), ("fut", 1)]),
                            n_adjuncts=pick(R, [(0, 3), (1, 1)]))
        bridge = VERB[R.choice(["say", "think", "believe", "claim"])]
        outer = self.clause(0, verb=bridge, frame="ccomp", comp=inner, invert=True,
                            tense=R.choice(["past", "pres"]))
        return self.finish(Phrase(filler.toks + outer.toks, outer.head), "?")

    def np_more_than(self) -> list[Tok]:
        """``Anna has more books than Ben .``: ``more`` is amod of the object and the
        than-phrase is obl of ``more``."""
        R = self.R
        verb = VERB[R.choice(["have", "buy", "sell", "eat", "read", "write", "find", "catch",
                              "make", "draw", "bring"])]
        noun = self.choice(nouns_of(verb.obj, count=True))
        n = noun.tok("Plur")
        if self.chance(0.75):
            more = Tok("more", "more", "ADJ", "JJR", feats(Degree="Cmp"))
        else:
            more = Tok("fewer", "few", "ADJ", "JJR", feats(Degree="Cmp"))
        attach(more, n, "amod")
        obj = Phrase([more, n], n, 3, "Plur", noun.classes)
        subj = self.noun_phrase(verb.subj, "subj", 1, post=False)
        main = self.clause(0, verb=verb, frame="obj", subj=subj, obj=obj, n_adjuncts=0,
                           tense=pick(R, [("past", 3), ("pres", 2), ("perf", 1)]))
        other = self.noun_phrase(subj.classes, "obj", 1, post=False, pron=0.25)
        than = adp("than")
        attach(than, other.head, "case")
        attach(other, more, "obl")
        return self.finish(Phrase(main.toks + [than] + other.toks, main.head))

    def np_stranded_relative(self) -> list[Tok]:
        """``The house that Anna lived in was old .`` (``that`` is obl of ``lived``, with
        ``in`` as case), or long relativization ``the book that Anna said Ben wrote``."""
        R = self.R
        long = self.chance(0.3)
        if long:
            noun = self.choice(nouns_of(("info", "food", "thing"), count=True))
        else:
            verb = R.choice([v for v in VERBS if v.prep])
            prep, classes = R.choice(verb.prep)
            noun = self.choice(nouns_of(classes, count=True))
        number = "Plur" if self.chance(0.25) else "Sing"
        head = noun.tok(number)
        the = det("the")
        attach(the, head, "det")
        person = "person" in noun.classes
        rel = wh_pron("who" if person and self.chance(0.5) else "that", rel=True)
        filler = Phrase([rel], rel, 3, number, noun.classes)
        if long:
            inner = self.clause(2, frame="obj", gap=("obj", filler), tense="past", neg=False,
                                n_adjuncts=0)
            body = self.clause(1, verb=VERB[R.choice(["say", "think", "believe"])],
                               frame="ccomp", comp=inner, tense="past", neg=False)
        else:
            body = self.clause(1, verb=verb, frame="prep", gap=("pobj", filler, prep),
                               neg=False, tense=R.choice(["past", "pres", "perf"]))
        attach(body, head, "acl:relcl")
        np = Phrase([the, head, rel] + body.toks, head, 3, number, noun.classes,
                    ends_open=True)
        if self.chance(0.5):
            return self.finish(self.copular_clause(0, subj=np, comparative=False))
        verb = self.pick_verb("obj", obj_cls=noun.classes)
        return self.finish(self.clause(0, verb=verb, frame="obj", obj=np, n_adjuncts=0))

    # ---------------------------------------------------------------- plan
    PROJECTIVE = [("s_declarative", 40), ("s_copular", 13), ("s_question", 14),
                  ("s_adverbial_clause", 7), ("s_coordinated_clauses", 6),
                  ("s_coordinated_vps", 5), ("s_existential", 4), ("s_imperative", 5)]
    NONPROJECTIVE = [("np_extraposed_subject_relcl", 20), ("np_extraposed_object_relcl", 14),
                     ("np_stranded_question", 20), ("np_long_wh", 16), ("np_more_than", 14),
                     ("np_extraposed_pp", 6), ("np_stranded_relative", 12)]

    def sentence(self, nonprojective: bool) -> list[Tok]:
        """One sentence of a construction drawn from the table; redrawn if stuck."""
        table = self.NONPROJECTIVE if nonprojective else self.PROJECTIVE
        while True:
            try:
                return getattr(self, pick(self.R, table))()
            except NoFit:
                continue


def fix_article(toks: list[Tok]) -> None:
    """``a`` becomes ``an`` before a vowel letter (the lexicon has no "an hour" cases)."""
    for a, b in zip(toks, toks[1:]):
        if a.form in ("a", "an") and a.upos == "DET":
            a.form = "an" if b.form[0] in "aeiou" else "a"


# =========================================================================================
# Trees, checks and CoNLL-U
# =========================================================================================

def heads_of(toks: list[Tok]) -> list[int]:
    index = {id(t): i + 1 for i, t in enumerate(toks)}
    return [0 if t.head is None else index[id(t.head)] for t in toks]


def is_projective(heads: list[int]) -> bool:
    """Every arc h -> d covers only descendants of h."""
    n = len(heads)
    for d in range(1, n + 1):
        h = heads[d - 1]
        lo, hi = sorted((h, d))
        for k in range(lo + 1, hi):
            a = k
            while a != 0 and a != h:
                a = heads[a - 1]
            if a != h:
                return False
    return True


LEAF_RELATIONS = ("det", "case", "aux", "aux:pass", "cop", "mark", "cc", "punct", "expl")


def check_tree(toks: list[Tok]) -> None:
    ids = {id(t) for t in toks}
    roots = [t for t in toks if t.head is None]
    assert len(roots) == 1 and roots[0].deprel == "root", [t.form for t in roots]
    for t in toks:
        assert t.deprel, (t.form, [x.form for x in toks])
        assert t.head is None or id(t.head) in ids, (t.form, t.head.form)
        seen, a = set(), t
        while a is not None:
            assert id(a) not in seen, "cycle"
            seen.add(id(a))
            a = a.head
        if t.head is not None:
            assert t.head.deprel not in LEAF_RELATIONS, (t.form, t.head.form, t.head.deprel)


NO_SPACE_BEFORE = {".", ",", "?", "!", "n't", "'s"}


def finalize(toks: list[Tok]) -> None:
    """Capitalize the first word and set SpaceAfter."""
    first = toks[0]
    first.form = first.form[0].upper() + first.form[1:]
    if first.mwt:
        first.mwt = first.mwt[0].upper() + first.mwt[1:]
    for a, b in zip(toks, toks[1:]):
        a.space_after = b.form not in NO_SPACE_BEFORE
    toks[-1].space_after = True


def text_of(toks: list[Tok]) -> str:
    out, i = [], 0
    while i < len(toks):
        t = toks[i]
        if t.mwt:
            out.append(t.mwt + (" " if toks[i + 1].space_after else ""))
            i += 2
            continue
        out.append(t.form + (" " if t.space_after else ""))
        i += 1
    return "".join(out).strip()


def to_conllu(toks: list[Tok], sent_id: str, with_tree: bool = True) -> str:
    heads = heads_of(toks) if with_tree else None
    lines = [f"# sent_id = {sent_id}", f"# text = {text_of(toks)}"]
    for i, t in enumerate(toks, start=1):
        if t.mwt:
            misc = "_" if toks[i].space_after else "SpaceAfter=No"
            lines.append(f"{i}-{i + 1}\t{t.mwt}\t_\t_\t_\t_\t_\t_\t_\t{misc}")
        inside_mwt = t.mwt or (i > 1 and toks[i - 2].mwt)
        misc = "_" if t.space_after or inside_mwt else "SpaceAfter=No"
        head = str(heads[i - 1]) if with_tree else "_"
        deprel = t.deprel if with_tree else "_"
        lines.append("\t".join([str(i), t.form, t.lemma, t.upos, t.xpos, t.feats, head, deprel,
                                "_", misc]))
    return "\n".join(lines) + "\n\n"


def generate(rng: random.Random, n: int, split: str, seen: set[str]) -> tuple[str, dict]:
    grammar = Grammar(rng)
    n_nonproj = round(n * NONPROJECTIVE_SHARE)
    plan = [True] * n_nonproj + [False] * (n - n_nonproj)
    rng.shuffle(plan)
    blocks, stats = [], {"sentences": n, "tokens": 0, "nonprojective": 0, "mwt": 0}
    for i, nonproj in enumerate(plan, start=1):
        while True:
            toks = grammar.sentence(nonproj)
            if not MIN_WORDS <= len(toks) <= MAX_WORDS:
                continue
            finalize(toks)
            text = text_of(toks)
            if text in seen:
                continue
            break
        seen.add(text)
        check_tree(toks)
        projective = is_projective(heads_of(toks))
        assert projective != nonproj, (text, nonproj)
        stats["tokens"] += len(toks)
        stats["nonprojective"] += not projective
        stats["mwt"] += sum(1 for t in toks if t.mwt)
        blocks.append(to_conllu(toks, f"sample-{split}-{i:04d}"))
    return "".join(blocks), stats


def demo_sentence() -> str:
    """``The cat sat on the mat .`` with HEAD and DEPREL left empty, for ``polyparse parse``."""
    toks = [det("the"), NOUN["cat"].tok("Sing"), VERB["sit"].tok("VBD"), adp("on"),
            det("the"), NOUN["mat"].tok("Sing"), punct(".")]
    finalize(toks)
    return to_conllu(toks, "sample-sentence-0001", with_tree=False)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE,
                        help="directory to write the .conllu files to (default: %(default)s)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(SEED)
    seen: set[str] = set()
    for name, n in (("train", N_TRAIN), ("dev", N_DEV)):
        text, stats = generate(rng, n, name, seen)
        (args.out / f"{name}.conllu").write_text(text, encoding="utf-8", newline="\n")
        print(f"{name}.conllu: {stats['sentences']} sentences, {stats['tokens']} tokens, "
              f"{stats['nonprojective']} non-projective, {stats['mwt']} multiword tokens")
    (args.out / "sentence.conllu").write_text(demo_sentence(), encoding="utf-8", newline="\n")
    print("sentence.conllu: 1 sentence (HEAD and DEPREL empty)")


if __name__ == "__main__":
    main()
