"""Attachment scores and CoNLL 2018 scores on hand-made parses."""

import pytest

from polyparse.corpora.conllu_io import read_conllu
from polyparse.corpora.errors import CorpusError
from polyparse.parser.evaluate import attachment_scores, conll18_scores

GOLD = """# sent_id = 1
1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_
1\tdo\tdo\tAUX\tVBP\t_\t3\taux\t_\t_
2\tn't\tnot\tPART\tRB\t_\t3\tadvmod\t_\t_
3\tgo\tgo\tVERB\tVB\t_\t0\troot\t_\t_
3.1\tgone\tgo\tVERB\tVBN\t_\t_\t_\t3:conj\t_
4\thome\thome\tNOUN\tNN\t_\t3\tobl:npmod\t_\t_
5\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_

"""


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_scores_count_words_only_and_split_punctuation(tmp_path):
    pred = (GOLD.replace("4\thome\thome\tNOUN\tNN\t_\t3\tobl:npmod", "4\thome\thome\tNOUN\tNN\t_\t3\tobl")
                .replace("5\t.\t.\tPUNCT\t.\t_\t3\tpunct", "5\t.\t.\tPUNCT\t.\t_\t4\tpunct")
                .replace("2\tn't\tnot\tPART\tRB\t_\t3\tadvmod", "2\tn't\tnot\tPART\tRB\t_\t3\tobj"))
    gold_path, pred_path = _write(tmp_path, "g.conllu", GOLD), _write(tmp_path, "p.conllu", pred)
    scores = attachment_scores(read_conllu(gold_path), read_conllu(pred_path))
    every, no_punct = scores.all_words, scores.no_punct
    assert every["words"] == 5 and no_punct["words"] == 4
    assert every["uas"] == pytest.approx(80.0)          # the full stop's head is wrong
    assert every["las"] == pytest.approx(60.0)          # + n't's label; obl = obl:npmod
    assert every["las_full"] == pytest.approx(40.0)     # + obl vs obl:npmod
    assert no_punct["uas"] == pytest.approx(100.0)
    assert no_punct["las"] == pytest.approx(75.0)


def test_different_words_are_a_clear_error(tmp_path):
    gold_path = _write(tmp_path, "g.conllu", GOLD)
    pred_path = _write(tmp_path, "p.conllu", GOLD.replace("\thome\thome\t", "\thouse\thouse\t"))
    with pytest.raises(CorpusError, match=r"p\.conllu:1: words differ .* at word 4"):
        attachment_scores(read_conllu(gold_path), read_conllu(pred_path))


def test_missing_sentence_is_a_clear_error(tmp_path):
    gold_path = _write(tmp_path, "g.conllu", GOLD + GOLD.replace("sent_id = 1", "sent_id = 2"))
    pred_path = _write(tmp_path, "p.conllu", GOLD)
    with pytest.raises(CorpusError, match="ends before"):
        attachment_scores(read_conllu(gold_path), read_conllu(pred_path))


CONTENT_GOLD = """\
1\tThe\tthe\tDET\tDT\tDefinite=Def|PronType=Art\t2\tdet\t_\t_
2\tdog\tdog\tNOUN\tNN\tNumber=Sing\t3\tnsubj\t_\t_
3\tbarks\tbark\tVERB\tVBZ\tNumber=Sing|Person=3|Tense=Pres\t0\troot\t_\t_
4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_

"""


def test_content_word_metrics_by_hand(tmp_path):
    # "The" has a wrong universal feature, so "dog" (its head) loses MLAS but not CLAS;
    # "dog" has only a non-universal feature and a subtype more (both ignored); "barks"
    # has the wrong lemma (BLEX, Lemmas); "." is no content word.
    pred = (CONTENT_GOLD.replace("Definite=Def|PronType=Art", "Definite=Ind|PronType=Art")
                        .replace("Number=Sing\t3\tnsubj", "Number=Sing|Typo=Yes\t3\tnsubj:pass")
                        .replace("barks\tbark", "barks\tbarks"))
    gold = list(read_conllu(_write(tmp_path, "g.conllu", CONTENT_GOLD)))
    scores = conll18_scores(gold, list(read_conllu(_write(tmp_path, "p.conllu", pred))))
    assert (scores.ufeats.correct, scores.lemmas.correct, scores.las.correct) == (3, 3, 4)
    assert (scores.clas.gold, scores.clas.system, scores.clas.aligned) == (2, 2, 2)
    assert (scores.clas.correct, scores.mlas.correct, scores.blex.correct) == (2, 1, 1)
    assert scores.alltags.correct == 3


def test_a_gold_lemma_underscore_counts_as_right(tmp_path):
    gold = CONTENT_GOLD.replace("dog\tdog", "dog\t_")
    pred = CONTENT_GOLD.replace("dog\tdog", "dog\tcat")
    scores = conll18_scores(list(read_conllu(_write(tmp_path, "g.conllu", gold))),
                            list(read_conllu(_write(tmp_path, "p.conllu", pred))))
    assert scores.lemmas.correct == 4 and scores.blex.correct == 2
    swapped = conll18_scores(list(read_conllu(tmp_path / "p.conllu")),
                             list(read_conllu(tmp_path / "g.conllu")))
    assert swapped.lemmas.correct == 3 and swapped.blex.correct == 1


def test_a_word_with_a_space_aligns_without_it(tmp_path):
    # udeval aligns both words: the spaces of a one-word token leave its word's form too.
    gold = ("1\tNew York\tNew York\tPROPN\tNNP\t_\t0\troot\t_\tSpaceAfter=No\n"
            "2\t's\t's\tPART\tPOS\t_\t1\tcase\t_\t_\n\n")
    pred = ("1-2\tNewYork's\t_\t_\t_\t_\t_\t_\t_\t_\n"
            "1\tNewYork\tNew York\tPROPN\tNNP\t_\t0\troot\t_\t_\n"
            "2\t's\t's\tPART\tPOS\t_\t1\tcase\t_\t_\n\n")
    scores = conll18_scores(list(read_conllu(_write(tmp_path, "g.conllu", gold))),
                            list(read_conllu(_write(tmp_path, "p.conllu", pred))))
    assert (scores.tokens.correct, scores.words.correct, scores.las.correct) == (0, 2, 2)
