"""The summary of ``polyparse gap``: absolute and relative gaps by sentence length."""

import pytest

from polyparse.parser import gap


def record(n, lp_value, ilp_value):
    return {"n": n, "lp_value": lp_value, "ilp_value": ilp_value,
            "gap": lp_value - ilp_value, "integral": lp_value == ilp_value,
            "fallback": False, "time_lp": 0.01, "time_ilp": 0.1}


def test_relative_gap_is_the_gap_over_the_ilp_value():
    records = [record(5, 10.5, 10.0), record(8, -3.0, -4.0), record(15, 0.2, 0.0),
               record(16, 7.0, 7.0)]
    assert gap.relative_gap(records[0]) == pytest.approx(0.05)
    assert gap.relative_gap(records[1]) == pytest.approx(0.25)    # |ILP| for a negative one
    assert gap.relative_gap(records[2]) is None                   # undefined at ILP value 0
    short, longer, every = gap.summarize(records)
    assert (short["length"], longer["length"], every["length"]) == ("1-10", "11-20", "all")
    assert short["mean_gap"] == pytest.approx(0.75)
    assert short["mean_relative_gap"] == pytest.approx(15.0)      # percent
    assert longer["mean_gap"] == pytest.approx(0.1)
    assert longer["mean_relative_gap"] == pytest.approx(0.0)      # only the 7.0 = 7.0 one
    assert every["mean_relative_gap"] == pytest.approx(10.0)      # (5 + 25 + 0) / 3
    assert gap.summarize([record(3, 0.5, 0.0)])[0]["mean_relative_gap"] is None
    table = gap.format_summary([short, longer, every]).splitlines()
    assert "rel gap%" in table[0]
    assert table[1].split()[:5] == ["1-10", "2", "0.0", "0.7500", "15.0000"]
    assert table[3].split()[:5] == ["all", "4", "25.0", "0.4250", "10.0000"]
    undefined = gap.format_summary(gap.summarize([record(3, 0.5, 0.0)])).splitlines()[1]
    assert undefined.split()[4] == "-"
