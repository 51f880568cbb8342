"""Shipped data is found inside the package; unshipped traces are looked up in order and a miss
says where it looked and how to fetch."""

from __future__ import annotations

import pytest

from optsched.exceptions import DataNotFoundError, UnknownNameError
from optsched.traces import datasets


def test_shipped_files_are_package_data():
    import optsched

    root = datasets.SHIPPED
    assert root.is_relative_to(type(root)(optsched.__file__).parent)
    for parts in (
        ("alibaba-gpu-2023-openb", "jobs.csv.gz"),
        ("philly", "philly_runtime.csv"),
        ("acme", "cluster_summary.csv"),
        ("alibaba-gpu-2023-openb", "README.md"),
    ):
        assert datasets.shipped_path(*parts).is_file()


def test_lookup_order_data_dir_then_env_then_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("OPTSCHED_DATA", str(tmp_path / "env"))
    dirs = datasets.data_dirs(tmp_path / "dd")
    assert dirs[0] == tmp_path / "dd" and dirs[1] == tmp_path / "env" and len(dirs) == 3
    (tmp_path / "env" / "pai-2020").mkdir(parents=True)
    f = tmp_path / "env" / "pai-2020" / "pai_job_table.tar.gz"
    f.write_bytes(b"x")
    assert datasets.find_file("pai-2020", "pai_job_table.tar.gz", data_dir=tmp_path / "dd") == f
    (tmp_path / "dd").mkdir()
    g = tmp_path / "dd" / "pai_job_table.tar.gz"
    g.write_bytes(b"y")  # data_dir wins
    assert datasets.find_file("pai-2020", "pai_job_table.tar.gz", data_dir=tmp_path / "dd") == g


def test_missing_file_message(tmp_path, monkeypatch):
    monkeypatch.setenv("OPTSCHED_DATA", str(tmp_path))
    with pytest.raises(DataNotFoundError) as e:
        datasets.find_file("helios")
    msg = str(e.value)
    assert "data.zip" in msg and str(tmp_path) in msg and "optsched data fetch helios" in msg
    with pytest.raises(UnknownNameError, match="known"):
        datasets.find_file("nope")
    with pytest.raises(UnknownNameError, match="its files"):
        datasets.find_file("philly", "other.csv")


def test_every_remote_file_has_a_url_and_hashes_are_sha256():
    for ds in datasets.DATASETS.values():
        assert ds.files and ds.licence and ds.cite
        for f in ds.files:
            assert f.url.startswith("https://")
            assert f.sha256 is None or (len(f.sha256) == 64 and int(f.sha256, 16) >= 0)
