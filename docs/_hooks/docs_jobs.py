"""Work the site build hands to other processes, run in parallel and cached (``optsched_docs.py``).

The notebooks are executed and the gallery's commands run while mkdocs renders the other pages.
Each job is a list of commands that write into one output folder; the folder is kept under
``.cache/optsched-docs/<namespace>/<key>/``, where the key hashes the commands, the job's input
files, every file of the ``optsched`` package, ``pyproject.toml`` and the installed
distributions: a rebuild with nothing changed reuses the folder, any change to the code runs the
job again (a fresh clone always runs everything). A job that fails leaves no folder behind and
reports its command, exit code and the end of its output.

Jobs run ``OPTSCHED_DOCS_JOBS`` at a time (default 2, the cores of the machines ``make test`` is
sized for), with this checkout first on ``PYTHONPATH``.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Job:
    """Commands (argv lists; ``{out}`` is replaced by the output folder) run one after another."""

    name: str
    steps: tuple[tuple[str, ...], ...]
    inputs: tuple[Path, ...] = ()
    timeout: float = 900.0
    env: tuple[tuple[str, str], ...] = ()
    cwd: Path | None = None


@dataclass
class Outcome:
    job: Job
    out: Path | None  # the output folder (None when the job failed)
    seconds: float = 0.0
    cached: bool = False
    error: str = ""
    log: str = field(default="", repr=False)


def _digest(paths: list[Path], h) -> None:
    for p in paths:
        h.update(p.as_posix().encode())
        h.update(p.read_bytes())


def source_fingerprint(root: Path) -> str:
    """A hash of what a job's result depends on besides its own inputs: the package's files,
    ``pyproject.toml``, the Python version and the installed distributions."""
    h = hashlib.sha256()
    files = sorted(
        p
        for p in (root / "optsched").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".pyo")
    )
    _digest([*files, root / "pyproject.toml"], h)
    h.update(sys.version.encode())
    dists = sorted(f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions())
    h.update("\n".join(dists).encode())
    return h.hexdigest()


class Runner:
    """Runs jobs in a pool of ``jobs`` worker threads (each waits on its subprocess)."""

    def __init__(self, root: Path, namespace: str, *, jobs: int | None = None):
        self.root = root
        self.cache = root / ".cache" / "optsched-docs" / namespace
        self.jobs = jobs or int(os.environ.get("OPTSCHED_DOCS_JOBS", "2"))
        self._pool = ThreadPoolExecutor(max_workers=max(1, self.jobs), thread_name_prefix="optsched-docs")
        self._futures: dict[str, Future] = {}
        self._fingerprint: str | None = None
        self._lock = threading.Lock()
        self.used: set[Path] = set()

    def fingerprint(self) -> str:
        with self._lock:
            if self._fingerprint is None:
                self._fingerprint = source_fingerprint(self.root)
            return self._fingerprint

    def key(self, job: Job) -> str:
        h = hashlib.sha256(self.fingerprint().encode())
        h.update(repr((job.steps, job.env)).encode())
        _digest(sorted(job.inputs), h)
        return h.hexdigest()[:20]

    def submit(self, job: Job) -> Future:
        if job.name in self._futures:
            raise ValueError(f"two jobs named {job.name!r}")
        fut = self._pool.submit(self._run, job)
        self._futures[job.name] = fut
        return fut

    def result(self, name: str) -> Outcome:
        return self._futures[name].result()

    def results(self) -> list[Outcome]:
        return [f.result() for f in self._futures.values()]

    def evict_unused(self) -> None:
        """Remove the cached folders no job of this build used (older versions of the code)."""
        if not self.cache.is_dir():
            return
        for entry in self.cache.iterdir():
            if entry not in self.used and not _running(entry):
                shutil.rmtree(entry, ignore_errors=True)

    def shutdown(self, *, wait: bool = True) -> None:
        self._pool.shutdown(wait=wait, cancel_futures=True)

    # -- one job ----------------------------------------------------------------------------------
    def _run(self, job: Job) -> Outcome:
        slug = job.name.replace(":", "-").replace("/", "-")
        out = self.cache / f"{slug}-{self.key(job)}"
        self.used.add(out)
        if (out / ".done").is_file():
            return Outcome(job, out, float((out / ".done").read_text() or 0), cached=True)
        tmp = out.with_name(f"{out.name}.tmp-{os.getpid()}")  # two builds at once do not share it
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        env = {**os.environ, **dict(job.env)}
        env["PYTHONPATH"] = os.pathsep.join([str(self.root), *filter(None, [env.get("PYTHONPATH")])])
        t0 = time.monotonic()
        log = []
        for step in job.steps:
            argv = [a.replace("{out}", str(tmp)) for a in step]
            try:
                proc = subprocess.run(
                    argv,
                    cwd=job.cwd or self.root,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=job.timeout,
                )
            except subprocess.TimeoutExpired:
                shutil.rmtree(tmp, ignore_errors=True)
                why = f"timed out after {job.timeout:g} s: {_show(argv)}"
                return Outcome(job, None, time.monotonic() - t0, error=why)
            log.append(f"$ {_show(argv)}\n{proc.stdout}{proc.stderr}")
            if proc.returncode != 0:
                shutil.rmtree(tmp, ignore_errors=True)
                tail = (proc.stderr or proc.stdout).strip().splitlines()[-25:]
                return Outcome(
                    job,
                    None,
                    time.monotonic() - t0,
                    error=f"exit code {proc.returncode}: {_show(argv)}\n" + "\n".join(tail),
                    log="\n".join(log),
                )
        seconds = time.monotonic() - t0
        (tmp / ".log").write_text("\n".join(log), encoding="utf-8")
        (tmp / ".done").write_text(f"{seconds:.1f}")
        try:
            tmp.rename(out)
        except OSError:  # another build finished the same job first: its folder is as good
            shutil.rmtree(tmp, ignore_errors=True)
        return Outcome(job, out, seconds, log="\n".join(log))


def _running(entry: Path) -> bool:
    """Whether ``entry`` is the work folder of a build still running (``<name>.tmp-<pid>``)."""
    _, sep, pid = entry.name.rpartition(".tmp-")
    if not sep or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _show(argv: list[str]) -> str:
    return " ".join(a if a and " " not in a else repr(a) for a in argv)
