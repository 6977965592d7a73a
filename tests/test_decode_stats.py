"""DecodeStats: one declared field per measurement, so that a misspelt name fails where
it is written instead of adding a measurement no reader looks for (issue 42)."""

import pytest

from polyparse.decoders import DecodeStats, make_decoder
from test_certificate import fractional_instance


def test_a_misspelt_measurement_fails_when_set():
    stats = DecodeStats()
    with pytest.raises(AttributeError):
        stats.fallbak = True
    with pytest.raises(AttributeError):
        stats.update(fallbak_stage="lp")
    with pytest.raises(TypeError):
        DecodeStats(fallbak=True)
    assert stats == DecodeStats()


def test_a_fallback_keeps_what_was_measured_before_it():
    """The LP out of time while building: the maximum spanning tree, its build time
    kept and nothing of the LP reported (``parser/gap.py`` then counts the LP's time as
    the rest of the decoding)."""
    parts, scores = fractional_instance()
    stats = make_decoder("lp", time_limit=1e-9).decode(parts, scores).stats
    assert stats.fallback and stats.fallback_stage in ("build", "lp")
    assert stats.time_build >= 0.0
    assert stats.time_lp is None and stats.lp_value is None and stats.integral is None
