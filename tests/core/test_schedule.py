"""optsched.core.schedule: segments and schedules, round trip, queries and errors."""

from __future__ import annotations

import pytest

from optsched.core import Schedule, Segment
from optsched.exceptions import InvalidScheduleError


def test_schedule_round_trip_and_queries(tmp_path):
    s = Schedule()
    s.add("a", 0, 2, {0: 2})
    s.add("a", 3, 4, {1: 2})
    s.add("b", 1, 5, {0: 1})
    assert s.completion("a") == 4 and s.start("b") == 1 and s.n_preemptions("a") == 1
    s.to_json(tmp_path / "s.json")
    assert Schedule.load(tmp_path / "s.json") == s
    df = s.to_dataframe()
    assert list(df["job"]) == ["a", "a", "b"]


@pytest.mark.parametrize(
    "bad",
    [
        {"start": 2, "end": 1},
        {"start": 0, "end": 1, "placement": {0: 0}},
        {"start": 0, "end": 1, "placement": {-1: 1}},
        {"start": "x", "end": 1},
    ],
)
def test_segment_errors(bad):
    with pytest.raises(InvalidScheduleError):
        Segment(**bad)
