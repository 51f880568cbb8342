"""Where trace data comes from: files shipped in the package, and public traces too large to ship.

Shipped (package data under ``optsched/traces/data/``, read with :mod:`importlib.resources`):
the complete Alibaba GPU 2023 "OpenB" trace (jobs and nodes), the 83,154 Philly run times, the
Acme cross-trace summary, the PAI 2020 machine table and the Helios per-VC GPU counts, each
folder with its README (source, licence, columns).

Not shipped: the full public job logs. They are looked up, in this order, in

1. ``data_dir`` (``--data-dir`` on the command line),
2. the folder named by the ``OPTSCHED_DATA`` environment variable,
3. the user cache folder (``platformdirs.user_cache_dir("optsched")``),

and ``optsched data fetch NAME`` downloads them there with :mod:`pooch` (public URL, SHA-256
where the publisher gives one). See ``docs/data.md``.

>>> shipped_path("philly", "philly_runtime.csv").name
'philly_runtime.csv'
>>> sorted(DATASETS)[:2]
['acme', 'helios']
"""

from __future__ import annotations

import contextlib
import os
import warnings
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from optsched.exceptions import DataNotFoundError, UnknownNameError


def _shipped_root() -> Path:
    return Path(str(files("optsched.traces") / "data"))


SHIPPED = _shipped_root()
"""Folder of the traces shipped inside the package (``optsched/traces/data/``)."""


def shipped_path(*parts: str) -> Path:
    """Path of a file shipped in ``optsched/traces/data/`` (raises if it is missing)."""
    p = SHIPPED.joinpath(*parts)
    if not p.is_file():  # pragma: no cover - a broken installation
        raise DataNotFoundError(
            f"The shipped data file {'/'.join(parts)!r} is missing from the installed package "
            f"({p}); reinstall optsched."
        )
    return p


@dataclass(frozen=True)
class RemoteFile:
    name: str  # file name in the data folder
    url: str
    sha256: str | None  # None: the publisher gives no checksum (the computed one is reported)
    size: int | None  # bytes, when known


@dataclass(frozen=True)
class Dataset:
    name: str
    title: str
    files: tuple[RemoteFile, ...]
    licence: str
    source: str
    cite: str
    use: str  # how to load it once fetched
    inside: tuple[str, ...] = ()  # the trace files a reader loads, once the download is unpacked

    def file_names(self) -> tuple[str, ...]:
        """The names of its files a reader may give as a trace: those downloaded and those inside."""
        return (*(f.name for f in self.files), *self.inside)


DATASETS: dict[str, Dataset] = {
    "philly": Dataset(
        "philly",
        "Microsoft Philly traces (ATC'19): cluster_job_log and utilisation logs",
        (
            RemoteFile(
                "trace-data.tar.gz",
                "https://media.githubusercontent.com/media/msr-fiddle/philly-traces/master/trace-data.tar.gz",
                "2037ccf63a725a02be718b0e1aeee6142c90b7f62d0d849295120e9f6ba13d2c",
                1_055_988_361,
            ),
        ),
        "CC-BY-4.0",
        "github.com/msr-fiddle/philly-traces (Git LFS object)",
        "Jeon et al., Analysis of Large-Scale Multi-Tenant GPU Clusters for DNN Training Workloads, USENIX ATC 2019",
        "tar xzf trace-data.tar.gz; then load_philly('<dir>/cluster_job_log') or "
        "optsched simulate --trace <dir>/cluster_job_log ...",
        ("cluster_job_log",),
    ),
    "pai-2020": Dataset(
        "pai-2020",
        "Alibaba PAI GPU trace v2020 (NSDI'22): job, task and group-tag tables",
        (
            RemoteFile(
                "pai_job_table.tar.gz",
                "https://aliopentrace.oss-cn-beijing.aliyuncs.com/v2020GPUTraces/pai_job_table.tar.gz",
                "5aad7f7caac501136d14ed6a48e40546f825d7b0617a3a4f337e2348fe0a6cb0",
                None,
            ),
            RemoteFile(
                "pai_task_table.tar.gz",
                "https://aliopentrace.oss-cn-beijing.aliyuncs.com/v2020GPUTraces/pai_task_table.tar.gz",
                "cd1d6dc3215d2a8607ccf6b6dd952b5db776df86926c73259fea7c1499ac40e5",
                None,
            ),
            RemoteFile(
                "pai_group_tag_table.tar.gz",
                "https://aliopentrace.oss-cn-beijing.aliyuncs.com/v2020GPUTraces/pai_group_tag_table.tar.gz",
                "722fef30b7fb7aa50dabd79155614b5423a9d65cf45a9b26c590d57725423a14",
                None,
            ),
        ),
        "CC-BY-4.0",
        "github.com/alibaba/clusterdata, cluster-trace-gpu-v2020 (official checksums)",
        "Weng et al., MLaaS in the Wild: Workload Analysis and Scheduling in Large-Scale Heterogeneous GPU "
        "Clusters, USENIX NSDI 2022",
        "load_pai(find_file('pai-2020', 'pai_job_table.tar.gz'), find_file('pai-2020', 'pai_task_table.tar.gz'))",
    ),
    "helios": Dataset(
        "helios",
        "SenseTime Helios traces (SC'21): cluster_log.csv of Venus (Earth/Saturn/Uranus when released)",
        (RemoteFile("data.zip", "https://github.com/S-Lab-System-Group/HeliosData/raw/main/data.zip", None, None),),
        "CC-BY-4.0",
        "github.com/S-Lab-System-Group/HeliosData",
        "Hu et al., Characterization and Prediction of Deep Learning Workloads in Large-Scale GPU Datacenters, SC 2021",
        "unzip data.zip; then load_helios('<dir>/Venus/cluster_log.csv')",
        ("cluster_log.csv",),
    ),
    "acme": Dataset(
        "acme",
        "Shanghai AI Lab Acme traces (NSDI'24): trace_seren.csv and trace_kalos.csv",
        (
            RemoteFile(
                "trace_seren.csv",
                "https://huggingface.co/datasets/Qinghao/AcmeTrace/resolve/main/data/job_trace/trace_seren.csv",
                None,
                None,
            ),
            RemoteFile(
                "trace_kalos.csv",
                "https://huggingface.co/datasets/Qinghao/AcmeTrace/resolve/main/data/job_trace/trace_kalos.csv",
                None,
                None,
            ),
        ),
        "CC-BY-4.0",
        "github.com/InternLM/AcmeTrace (files on the HuggingFace hub)",
        "Hu et al., Characterization of Large Language Model Development in the Datacenter, USENIX NSDI 2024",
        "load_acme(find_file('acme', 'trace_seren.csv'))",
    ),
}
"""The public traces that are not shipped, by name: files, URLs and checksums, licence, source,
the paper to cite and how to load them once fetched (``optsched data list`` shows them)."""


def _dataset(name: str) -> Dataset:
    try:
        return DATASETS[name]
    except KeyError:
        raise UnknownNameError(f"Unknown dataset {name!r}; known: {sorted(DATASETS)} (`optsched data list`).") from None


def data_dirs(data_dir: str | Path | None = None) -> list[Path]:
    """The folders searched for unshipped data, in order (see the module docstring)."""
    out = []
    if data_dir is not None:
        out.append(Path(data_dir).expanduser())
    env = os.environ.get("OPTSCHED_DATA")
    if env:
        out.append(Path(env).expanduser())
    try:
        from platformdirs import user_cache_dir

        out.append(Path(user_cache_dir("optsched")))
    except ImportError:  # pragma: no cover - platformdirs is a dependency
        out.append(Path.home() / ".cache" / "optsched")
    return out


def find_file(dataset: str, name: str | None = None, *, data_dir: str | Path | None = None) -> Path:
    """The local path of one file of ``dataset`` (first hit in :func:`data_dirs`).

    Parameters
    ----------
    dataset : str
        A name of :data:`DATASETS`.
    name : str, optional
        One of its files (default: the first).
    data_dir : path, optional
        Looked in first, before ``OPTSCHED_DATA`` and the user cache.

    Raises
    ------
    DataNotFoundError
        Naming the file, every folder looked in and the command that fetches it.
    UnknownNameError
        An unknown dataset or file name (the message lists the known ones).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> (folder / "acme").mkdir()
    >>> _ = (folder / "acme" / "trace_seren.csv").write_text("job_id,user,node_num,gpu_num,cpu_num,type")
    >>> find_file("acme", "trace_seren.csv", data_dir=folder) == folder / "acme" / "trace_seren.csv"
    True
    >>> find_file("acme", "trace_x.csv")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    optsched.exceptions.UnknownNameError: Dataset 'acme' has no file 'trace_x.csv'; its files: [...].
    """
    ds = _dataset(dataset)
    fname = name or ds.files[0].name
    if fname not in {f.name for f in ds.files}:
        raise UnknownNameError(f"Dataset {dataset!r} has no file {fname!r}; its files: {[f.name for f in ds.files]}.")
    looked = []
    for d in data_dirs(data_dir):
        for p in (d / dataset / fname, d / fname):
            looked.append(str(p))
            if p.is_file():
                return p
    raise DataNotFoundError(
        f"The {ds.title} file {fname!r} is not on this machine (looked in: {', '.join(looked)}). Fetch it with "
        f"`optsched data fetch {dataset}` (or put it in one of those folders; --data-dir or OPTSCHED_DATA name "
        f"another). Licence {ds.licence}; source {ds.source}."
    )


def fetch(dataset: str, *, data_dir: str | Path | None = None, progress: bool = False) -> list[Path]:
    """Download every file of ``dataset`` into the first folder of :func:`data_dirs` with pooch.

    A file with a published SHA-256 is checked against it (pooch refuses a mismatch); a file
    without one is downloaded and its computed SHA-256 is reported in a warning. A failed download
    (offline, refused, interrupted) raises and removes the folders this call created, if still empty.

    Parameters
    ----------
    dataset : str
        A name of :data:`DATASETS` (``optsched data list``).
    data_dir : path, optional
        Where to put it (default: ``OPTSCHED_DATA``, else the user cache).
    progress : bool
        A progress bar per file.

    Returns
    -------
    list of pathlib.Path
        The downloaded files; :func:`find_file` finds them from then on.

    Raises
    ------
    UnknownNameError
        An unknown dataset (checked before anything is downloaded).

    Examples
    --------
    >>> sorted(DATASETS)
    ['acme', 'helios', 'pai-2020', 'philly']
    >>> fetch("acme", data_dir="traces")  # doctest: +SKIP
    [PosixPath('traces/acme/trace_seren.csv'), PosixPath('traces/acme/trace_kalos.csv')]
    >>> fetch("philly-2017")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    optsched.exceptions.UnknownNameError: Unknown dataset 'philly-2017'; known: [...] (`optsched data list`).
    """

    import pooch

    ds = _dataset(dataset)
    target = data_dirs(data_dir)[0] / dataset
    created = [d for d in (target, *target.parents) if not d.exists()]  # the folders this call makes
    target.mkdir(parents=True, exist_ok=True)
    out = []
    for f in ds.files:
        try:
            path = pooch.retrieve(
                f.url,
                known_hash=f"sha256:{f.sha256}" if f.sha256 else None,
                fname=f.name,
                path=target,
                progressbar=progress,
            )
        except BaseException:  # offline, refused, interrupted: leave no empty folder behind
            for d in created:  # deepest first; a folder with a file in it (an earlier download) stays
                with contextlib.suppress(OSError):
                    d.rmdir()
            raise
        if f.sha256 is None:
            warnings.warn(
                f"{f.name}: the publisher gives no checksum; downloaded file has sha256 {pooch.file_hash(path)}.",
                stacklevel=2,
            )
        out.append(Path(path))
    return out


def dataset_status(data_dir: str | Path | None = None) -> list[dict]:
    """One row per dataset file: name, size, licence, and the local path if present."""
    rows = []
    for ds in DATASETS.values():
        for f in ds.files:
            try:
                local = str(find_file(ds.name, f.name, data_dir=data_dir))
            except DataNotFoundError:
                local = None
            rows.append(
                {
                    "dataset": ds.name,
                    "file": f.name,
                    "size_MB": None if f.size is None else f.size / 1e6,
                    "sha256": (f.sha256[:12] + "...") if f.sha256 else "none published",
                    "licence": ds.licence,
                    "local": local,
                }
            )
    return rows
