"""optsched.core.library: the shipped instances by name, from any folder."""

from __future__ import annotations

import pytest

from optsched.core.library import instance_path, library_root, list_instances, resolve_instance
from optsched.exceptions import InvalidInstanceError, UnknownNameError


def test_every_listed_instance_resolves_to_its_file():
    rows = list_instances()
    assert rows and {r["kind"] for r in rows} >= {"rigid", "asrpt", "elastic", "rarddls", "sojourn"}
    for r in rows:
        assert instance_path(r["name"]) == r["path"] and r["path"].is_file() and r["n_jobs"] >= 1
        assert r["path"].is_relative_to(library_root())
    assert all(r["name"].startswith("toy:") for r in list_instances("toy"))


def test_a_bare_unique_name_and_the_json_suffix_are_accepted():
    p = instance_path("toy:rigid-2x2-five")
    assert instance_path("rigid-2x2-five") == p == instance_path("toy:rigid-2x2-five.json")


def test_an_unknown_name_lists_the_collections():
    with pytest.raises(UnknownNameError, match=r"No shipped instance 'toy:nope'. Collections: \['papers/"):
        instance_path("toy:nope")


def test_resolve_prefers_an_existing_file_and_refuses_a_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rigid-2x2-five").write_text("{}")  # a local file shadows the shipped name
    assert (
        resolve_instance("rigid-2x2-five") == tmp_path / "rigid-2x2-five"
        or resolve_instance("rigid-2x2-five").name == "rigid-2x2-five"
    )
    assert resolve_instance("toy:rigid-2x2-five") == instance_path("toy:rigid-2x2-five")
    with pytest.raises(InvalidInstanceError, match="is a directory, not an instance file"):
        resolve_instance(tmp_path)
    assert resolve_instance("other.json").name == "other.json"  # a path that does not exist yet, as given
