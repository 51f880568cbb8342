"""optsched.core.paths: what counts as a path argument and as a shipped instance's name."""

from __future__ import annotations

from pathlib import Path, PureWindowsPath

import pytest
from hypothesis import given
from hypothesis import strategies as st

from optsched.core import Cluster, Instance, Job
from optsched.core.paths import check_path_arg, is_library_name
from optsched.exceptions import InvalidInstanceError, InvalidScheduleError


@pytest.mark.parametrize(
    "text, expected",
    [
        ("toy:rigid-2x2-five", True),
        ("papers/asrpt:lemma1-counterexample", True),
        ("rigid.json", False),
        ("dir/toy:x.json", False),  # a file name, even with a colon
        (r"C:\data\x", False),  # a Windows drive, not a collection
        ("plain-name", False),
    ],
)
def test_library_names(text, expected):
    assert is_library_name(text) is expected


def test_a_windows_path_object_is_no_library_name():
    assert not is_library_name(PureWindowsPath(r"C:\x\y"))


@given(st.one_of(st.text(), st.builds(Path, st.text(min_size=1))))
def test_str_and_path_like_are_accepted(path):
    check_path_arg(path)  # returns None, raises nothing


@pytest.mark.parametrize(
    "bad, words",
    [
        (None, "takes the path of an instance JSON file"),
        (3, "got 3 (int)"),
        ({"kind": "rigid"}, "not a dict; build an instance from a dict with optsched.core.instance_from_dict"),
    ],
)
def test_not_a_path_is_refused_saying_what_to_pass(bad, words):
    with pytest.raises(InvalidInstanceError, match=words.replace("(", r"\(").replace(")", r"\)")):
        check_path_arg(bad)


def test_an_instance_object_is_refused_as_loaded_already():
    inst = Instance(Cluster.homogeneous(1, 1), [Job(0, work=1)])
    with pytest.raises(InvalidInstanceError, match="it is loaded already"):
        check_path_arg(inst)


def test_a_schedule_argument_raises_the_schedule_error_and_its_own_fix():
    with pytest.raises(InvalidScheduleError, match="its class's from_dict") as e:
        check_path_arg({}, what="schedule", func="load_schedule")
    assert "shipped name" not in str(e.value)
    assert str(e.value).startswith("load_schedule takes a file path")


@given(st.one_of(st.none(), st.integers(), st.floats(), st.lists(st.integers()), st.dictionaries(st.text(), st.text())))
def test_any_non_path_raises_only_the_invalid_instance_error(value):
    with pytest.raises(InvalidInstanceError):
        check_path_arg(value)
