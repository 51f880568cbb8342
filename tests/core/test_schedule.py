"""optsched.core.schedule: segments and schedules, round trip, queries and errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import optsched
from optsched.core import Schedule, Segment
from optsched.core.io import instance_fingerprint, json_one_item_per_line, save_schedule
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


_ids = st.one_of(st.integers(-(2**70), 2**70), st.text(max_size=4))
_times = st.one_of(st.floats(0, 1e12, allow_nan=False), st.integers(0, 10**6))
_placements = st.dictionaries(st.integers(0, 12), st.integers(1, 9), max_size=3)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            _ids,
            st.lists(st.tuples(_times, _times, _placements, st.booleans()), min_size=1, max_size=2),
        ),
        max_size=6,
    )
)
def test_json_text_is_json_one_item_per_line_of_to_dict(jobs):
    """Plain one-segment jobs (written by a format string) and any other (GPU ids, several
    segments, integer times, str ids with quotes or non-ASCII characters) give the same text as
    the json module; save_schedule writes it with the instance's record as before."""
    s = Schedule()
    for jid, segs in jobs:
        for a, b, pl, with_ids in segs:
            start, end = sorted((a, b))
            ids = {k: tuple(range(g)) for k, g in pl.items()} if with_ids else None
            s.add(jid, start, end, pl, ids)
    assert s.json_text() == json_one_item_per_line(s.to_dict(), "jobs")


def test_save_schedule_writes_json_text_with_the_instance_record(tmp_path):
    inst = optsched.load_instance("toy:rigid-2x2-five")
    s = Schedule()
    s.add(0, 0.0, 1.5, {0: 2})
    s.add("x", 1.0, 2.0, {1: 1}, {1: (0,)})
    save_schedule(s, tmp_path / "a.json", inst)
    d = {"instance": instance_fingerprint(inst), **s.to_dict()}
    assert (tmp_path / "a.json").read_text() == json_one_item_per_line(d, "jobs")
    assert Schedule.load(tmp_path / "a.json") == s
