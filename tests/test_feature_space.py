"""Feature spaces sized from the training data (``FeatureConfig(bits=None)``), checked
against distinct features counted another way: over all candidate parts, the rows that
are 1 in the gold tree."""

import numpy as np
import pytest

from polyparse.decoders.higher_order import PartsConfig, build_parts
from polyparse.features.extractor import (HEADROOM, LABEL_HEADROOM, MAX_BITS, MAX_LABEL_BITS,
                                          FeatureConfig, FeatureExtractor)


def gold_rows_distinct(sentences, vocab, order: str) -> tuple[int, int]:
    probe = FeatureExtractor(FeatureConfig(bits=30, label_bits=30), vocab)
    part_ids, label_ids = set(), set()
    for sentence in sentences:
        parts = build_parts(len(sentence), order=order)
        gold = parts.from_heads(sentence.heads) == 1
        encoded = probe.encode(sentence)
        features = probe.part_features(encoded, parts)[np.flatnonzero(gold)]
        part_ids.update(features.indices.tolist())
        arcs = parts.arcs[sentence.heads[parts.arcs[:, 1]] == parts.arcs[:, 0]]
        label_ids.update(probe.label_features(encoded, arcs).indices.tolist())
    return len(part_ids), len(label_ids)


def smallest_bits(distinct: int, headroom: int, cap: int) -> int:
    bits = 1
    while 2 ** bits < headroom * distinct and bits < cap:
        bits += 1
    return bits


@pytest.mark.parametrize("order", ["1", "2"])
def test_bits_are_the_smallest_with_the_headroom(sample_train, order):
    train = sample_train[:60]
    extractor = FeatureExtractor(FeatureConfig()).fit(train, parts=PartsConfig(order=order))
    n_parts, n_labels = gold_rows_distinct(train, extractor.vocab_, order)
    assert extractor.distinct_gold_features(train, PartsConfig(order=order)) == (n_parts, n_labels)
    assert extractor.config.bits == smallest_bits(n_parts, HEADROOM, MAX_BITS)
    assert extractor.config.label_bits == smallest_bits(n_labels, LABEL_HEADROOM,
                                                        MAX_LABEL_BITS)
    assert extractor.n_features == 2 ** extractor.config.bits < 2 ** MAX_BITS


def test_given_bits_are_kept_and_unsized_spaces_refuse_to_extract(sample_train):
    extractor = FeatureExtractor(FeatureConfig(bits=12)).fit(sample_train[:20])
    assert extractor.config.bits == 12 and extractor.config.label_bits is not None
    unsized = FeatureExtractor(FeatureConfig(), extractor.vocab_)
    with pytest.raises(RuntimeError, match="bits is not sized"):
        unsized.part_features(unsized.encode(sample_train[0]), build_parts(len(sample_train[0])))
