"""The linear model's feature difference against its dense definition."""

import numpy as np

from polyparse.decoders import PartType
from polyparse.parser.config import FeatureConfig, PartsConfig, PrunerConfig
from polyparse.parser.pipeline import Parser, TrainConfig

SMALL = FeatureConfig(bits=16, label_bits=12)


def _dense_phi(model, example, output, labels):
    """``Phi(output, labels)`` as a dense vector: part rows weighed by ``output``, each
    ARC row's label features on its label weighed by its ``output``."""
    phi = np.zeros(model.dim)
    phi[:model.part_dim] = example.part_features.T @ output
    arc_out = output[example.parts.block(PartType.ARC)]
    label_features = example.label_features.toarray()
    n_labels = len(model.labels)
    for a, z in enumerate(arc_out):
        if labels[a] >= 0:
            phi[model.part_dim + labels[a]::n_labels] += z * label_features[a]
    return phi


def test_feature_difference_is_phi_of_output_minus_phi_of_gold(sample_train):
    config = TrainConfig(trainer="perceptron", epochs=1, features=SMALL,
                         parts=PartsConfig(order="2"), decoder="ilp", pruner=PrunerConfig(max_heads=3, epochs=1))
    model = Parser.train(sample_train[:20], config).model
    rng = np.random.default_rng(0)
    for sentence in sample_train[20:26]:
        example = model.example(sentence, gold=True)
        n_arcs = len(example.parts.arcs)
        for output in (example.gold, rng.random(len(example.gold)),
                       (rng.random(len(example.gold)) < 0.3).astype(float)):
            labels = rng.integers(0, len(model.labels), n_arcs)
            indices, values = model.feature_difference(example, output, labels)
            got = np.bincount(indices, weights=values, minlength=model.dim)
            want = (_dense_phi(model, example, output, labels)
                    - _dense_phi(model, example, example.gold, example.gold_labels))
            np.testing.assert_allclose(got, want, atol=1e-12)
