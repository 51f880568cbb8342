"""What a run produced: :class:`RunRecord` (the engine's records) and :class:`SimResult` (the per-job
table, summary, GPUs in use over time, the schedule for the verifier, files and plots). The
columns of the per-job table are described in :mod:`optsched.sim.metrics.summary`.

Tested in ``tests/sim/test_engine_structure.py`` and ``tests/sim/test_summary_windows.py``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from optsched.core.io import atomic_write_text
from optsched.core.output import write_table
from optsched.core.schedule import Schedule, Segment
from optsched.exceptions import InvalidOptionError
from optsched.sim.metrics.summary import JOB_COLUMNS, summarize
from optsched.sim.model.resources import ids_of, lowest_bits


@dataclass(frozen=True)
class RunRecord:
    """What a run hands to :class:`SimResult`: an explicit snapshot of the engine's records
    (:meth:`Simulator.record`), not its private fields."""

    policy: str
    cluster: Any
    capacity: int
    end_time: float
    n_events: int
    slot: float | None
    jobs: list  # the SimJobs, in input order
    segments: list  # (job index, start, end, placement, GPU masks or None, resource usage or None)
    holds: Any  # array of job index at each start (migrations included), ~index at each release
    open_holds: dict  # job index -> placements still held at the end (run(until=...)), in start order
    held_at_end: list  # (hold start, GPUs) of the jobs holding GPUs at the end
    reserved: list  # migrations: (time, +GPUs) reserved ahead of the new segment, (time, -GPUs) at it
    log: Any  # list of (time, kind, job_id, detail), the compiled run's EventLog, or None
    decision_seconds: Any  # array of seconds per event batch, or None
    engine: str  # the engine that ran: "python" or "compiled"
    columns: dict | None = None  # the per-job table (job_columns) if the engine computed it (compiled)
    steps: tuple | None = None  # (times, GPUs held from each time on) if the engine computed them (compiled)
    compile_seconds: float = 0.0  # seconds spent compiling the compiled kernel first (once per machine)


class SimResult:
    """What a run produced. Built by :meth:`Simulator.run`.

    Attributes
    ----------
    policy : str
    end_time : float
        Time of the last event.
    n_events : int
    engine : str
        The engine that ran: ``"python"`` or ``"compiled"`` (``Simulator(engine=...)``).
    compile_seconds : float
        Seconds spent compiling the compiled kernel before this run (its first run on a machine;
        numba keeps it, so 0.0 afterwards): not part of the simulation's time.
    log : sequence of (time, kind, job_id, detail) or None
        Kinds: arrival, start (placement), train (rate), rate (new rate), checkpoint (stage),
        preempt (rollback), migrate (new placement), saved, complete (stages), fail (stages),
        timer (timer id). A list on the Python engine; on the compiled kernel an
        :class:`~optsched.sim.compiled.records.EventLog` that makes the same tuples from the
        kernel's arrays when read (it equals that list and pickles as it is). None with
        ``record_log=False``.

    Examples
    --------
    >>> from optsched.core import Cluster, Job
    >>> from optsched.sim import get_policy, simulate
    >>> jobs = [Job(0, work=4, gpus=2), Job(1, work=1, arrival=1)]
    >>> res = simulate(Cluster.homogeneous(1, 2), jobs, get_policy("fifo"))
    >>> res.summary()["mean_jct"], res.end_time
    (4.0, 5.0)
    """

    def __init__(self, run: RunRecord | Any):
        if not isinstance(run, RunRecord):  # a Simulator that has run
            run = run.record()
        self.policy = run.policy
        self.cluster = run.cluster
        self.capacity = run.capacity
        self.end_time = run.end_time
        self.n_events = run.n_events
        self.engine = run.engine
        self.compile_seconds = run.compile_seconds
        self.slot = run.slot
        #: wall-clock seconds of each batch's hooks + schedule (``Simulator(time_decisions=True)``)
        self.decision_seconds = (
            np.frombuffer(run.decision_seconds, dtype=np.float64) if run.decision_seconds is not None else None
        )
        self.log = run.log
        self._jobs = run.jobs
        self._seg = run.segments
        self._holds = run.holds
        self._open = run.open_holds
        self._gpu_cap = [int(c) for c in run.cluster.gpus]
        # GPUs in use over time is derived from the segments when first asked for (not kept per event)
        self._held_at_end = run.held_at_end
        self._reserved = run.reserved
        self._util: tuple[np.ndarray, np.ndarray] | None = run.steps
        self._columns: dict[str, np.ndarray] | None = run.columns

    # -- tables ----------------------------------------------------------------------------
    def job_columns(self) -> dict[str, np.ndarray]:
        """The per-job table as NumPy columns (:data:`JOB_COLUMNS`, and ``finish`` in slotted mode),
        in input order: what :meth:`jobs_frame` wraps, without importing pandas."""
        if self._columns is not None:
            return dict(self._columns)
        js = self._jobs
        n = len(js)
        nan = float("nan")
        arrival = np.fromiter((j.arrival for j in js), float, n)
        first = np.fromiter((nan if j.first_start is None else j.first_start for j in js), float, n)
        comp = np.fromiter((nan if j.completion is None else j.completion for j in js), float, n)
        load = np.fromiter((j.loading_time for j in js), float, n)
        train = np.fromiter((j.training_time for j in js), float, n)
        save = np.fromiter((j.saving_time for j in js), float, n)
        jct = comp - arrival
        finish = np.fromiter((nan if j.finish is None else j.finish for j in js), float, n)
        tail = np.nan_to_num(comp - finish) if self.slot is not None else 0.0  # GPUs held to the slot's end
        ids = np.empty(n, dtype=object)
        ids[:] = [j.id for j in js]
        status = np.empty(n, dtype=object)
        status[:] = [j.phase.value for j in js]  # plain strings (tables, files)
        cols = {
            "job_id": ids,
            "arrival": arrival,
            "gpus": np.fromiter((j.gpus for j in js), np.int64, n),
            "work": np.fromiter((j.work for j in js), float, n),
            "weight": np.fromiter((j.weight for j in js), float, n),
            "status": status,
            "first_start": first,
            "completion": comp,
            "queue_delay": first - arrival,
            "jct": jct,
            "waiting": jct - load - train - save - tail,
            "loading_time": load,
            "training_time": train,
            "saving_time": save,
            "futile_time": np.fromiter((j.futile_time for j in js), float, n),
            "n_futile": np.fromiter((j.n_futile for j in js), np.int64, n),
            "lost_work": np.fromiter((j.lost_work for j in js), float, n),
            "n_preemptions": np.fromiter((j.n_preemptions for j in js), np.int64, n),
            "stages_done": np.fromiter((j.stage for j in js), np.int64, n),
        }
        if self.slot is not None:
            cols["finish"] = finish  # when the work was done; "completion" is the end of that slot
        if any(j.config is not None for j in js):
            conf = np.empty(n, dtype=object)
            conf[:] = [j.config for j in js]
            cols["config"] = conf  # what the policy chose at the job's (last) start
        self._columns = cols
        return dict(cols)

    def jobs_frame(self):
        """One row per job (columns :data:`JOB_COLUMNS`, and ``finish`` in slotted mode), in input
        order, as a DataFrame."""
        import pandas as pd

        cols = self.job_columns()
        names = JOB_COLUMNS + [c for c in ("finish", "config") if c in cols]
        return pd.DataFrame(
            {c: (cols[c].tolist() if cols[c].dtype == object else cols[c]) for c in names}, columns=names
        )

    def summary(self) -> dict[str, Any]:
        """Mean/P50/P95/P99 of JCT, first-start queue delay and waiting W, makespan, total (weighted)
        completion and flow time, utilization, preemptions; see :func:`summarize`.

        Utilization (fraction of GPUs held, time-averaged) over two named windows:
        ``mean_utilization_arrivals`` over [first arrival, last arrival] (the cluster under the
        offered load; None if every job arrives at one instant) and ``mean_utilization_makespan``
        over [0, last event] (with the drain after the last arrival, where the cluster empties).
        ``mean_utilization`` is the makespan one, under its former name (kept for old code).
        """
        cols = self.job_columns()
        out = summarize(cols)
        out["policy"] = self.policy
        out["mean_utilization_makespan"] = self.mean_utilization()
        arr = cols["arrival"].astype(float)
        first, last = (float(arr.min()), float(arr.max())) if len(arr) else (0.0, 0.0)
        out["mean_utilization_arrivals"] = self.mean_utilization(first, last) if last > first else None
        out["mean_utilization"] = out["mean_utilization_makespan"]
        span = self.end_time
        gpus = cols["gpus"].astype(float)
        held = float((gpus * (cols["loading_time"] + cols["training_time"] + cols["saving_time"])).sum())
        out["mean_training_utilization"] = (
            float((gpus * cols["training_time"]).sum()) / (self.capacity * span) if span > 0 else 0.0
        )
        out["futile_gpu_share"] = float((gpus * cols["futile_time"]).sum()) / held if held > 0 else 0.0
        if self.decision_seconds is not None and len(self.decision_seconds):
            d = self.decision_seconds
            out["decision_ms_mean"] = float(d.mean() * 1e3)
            out["decision_ms_p95"] = float(np.percentile(d, 95) * 1e3)
        out["n_events"] = self.n_events
        return out

    @property
    def _util_t(self) -> np.ndarray:
        return self._utilization_steps()[0]

    @property
    def _util_g(self) -> np.ndarray:
        return self._utilization_steps()[1]

    def _utilization_steps(self) -> tuple[np.ndarray, np.ndarray]:
        """(times, GPUs held from each time on): one step at every time the count changed, valued
        after all changes at that time; from the segments, the holds open at the end and the GPUs
        migrations reserved ahead of their new segment."""
        if self._util is not None:
            return self._util
        gpus = np.fromiter((j.gpus for j in self._jobs), dtype=np.int64, count=len(self._jobs))
        seg = self._seg
        idx = np.fromiter((x[0] for x in seg), dtype=np.int64, count=len(seg))
        a = np.fromiter((x[1] for x in seg), dtype=np.float64, count=len(seg))
        b = np.fromiter((x[2] for x in seg), dtype=np.float64, count=len(seg))
        g = gpus[idx]
        extra = self._held_at_end + self._reserved
        t = np.concatenate([a, b, np.array([x[0] for x in extra], dtype=np.float64)])
        d = np.concatenate([g, -g, np.array([x[1] for x in extra], dtype=np.int64)])
        if not len(t):
            self._util = (np.zeros(0), np.zeros(0, np.int64))
            return self._util
        order = np.argsort(t, kind="stable")
        t, level = t[order], np.cumsum(d[order])
        last = np.r_[t[1:] != t[:-1], True]  # the level after the last change at each time
        self._util = (t[last], level[last])
        return self._util

    def utilization(self):
        """GPUs in use over time: DataFrame ``time, gpus_in_use, utilization`` (a step function;
        each row holds until the next)."""
        import pandas as pd

        return pd.DataFrame(
            {"time": self._util_t, "gpus_in_use": self._util_g, "utilization": self._util_g / float(self.capacity)}
        )

    def utilization_windows(self, width: float, *, start: float = 0.0, end: float | None = None):
        """Fraction of GPUs held, averaged over consecutive windows of ``width`` seconds (the
        distribution of these is the per-window utilisation CDF, Lazer's Fig. 8d).

        Returns a NumPy array, one value per window of ``[start, end)``.
        """
        if not (width > 0 and np.isfinite(width)):
            raise InvalidOptionError(f"The window 'width' must be a positive number of seconds; got {width!r}.")
        end = self.end_time if end is None else end
        if end <= start:
            return np.zeros(0)
        edges = np.append(np.arange(start, end, width), end)
        t = np.append(self._util_t, end) if len(self._util_t) else np.array([start, end])
        g = self._util_g if len(self._util_g) else np.zeros(1)
        # GPU-seconds held up to each edge (piecewise-linear integral of the step function)
        cum = np.concatenate([[0.0], np.cumsum(np.diff(t) * g)])
        at = np.interp(edges, t, cum)
        return np.diff(at) / (self.capacity * np.diff(edges))

    def mean_utilization(self, start: float = 0.0, end: float | None = None) -> float:
        """Time-average fraction of GPUs in use over ``[start, end]`` (default: 0 to the last event)."""
        end = self.end_time if end is None else end
        if end <= start or not len(self._util_t):
            return 0.0
        t = np.clip(np.append(self._util_t, end), start, end)
        gpu_s = float(np.sum(np.diff(t) * self._util_g))
        return gpu_s / (self.capacity * (end - start))

    def schedule(self) -> Schedule:
        """The GPU-holding segments (loading + training + saving) as a core :class:`Schedule`,
        for :func:`optsched.verify.verify`."""
        s = Schedule()
        js = self._jobs
        all_masks = self._gpu_masks()
        for (idx, a, b, pl, _, usage), masks in zip(self._seg, all_masks, strict=True):
            ids = {m: ids_of(k) for m, k in masks.items()} if masks else None
            if usage:
                pl = {**pl, **{m: {"gpus": pl.get(m, 0), **vec} for m, vec in usage.items()}}
            s.add_segment(js[idx].id, Segment(a, b, pl, ids))
        return s

    def _gpu_masks(self) -> list[dict[int, int]]:
        """GPU ids of every segment as {server: bit mask}: tracked during the run (a policy with
        ``gpu_ids = True``), else given now, the lowest free ids at each start, replaying starts and
        releases in the engine's order (the same ids the engine would have picked)."""
        if all(seg[4] is not None for seg in self._seg):
            return [seg[4] for seg in self._seg]
        free = [(1 << c) - 1 for c in self._gpu_cap]
        segs_of: dict[int, list[int]] = {}  # job index -> its segments, in start (= release) order
        for k, seg in enumerate(self._seg):
            segs_of.setdefault(seg[0], []).append(k)
        n_started: dict[int, int] = {}
        n_released: dict[int, int] = {}
        out: list[dict[int, int]] = [{} for _ in self._seg]
        for e in self._holds:
            if e >= 0:  # a start: the lowest free ids, as the engine would have taken them
                c = n_started.get(e, 0)
                n_started[e] = c + 1
                mine = segs_of.get(e, [])
                if c < len(mine):
                    pl, masks = self._seg[mine[c]][3], out[mine[c]]
                else:  # still held at the end of the run
                    pl, masks = self._open[e][c - len(mine)], {}
                for m, g in pl.items():
                    took = lowest_bits(free[m], g)
                    free[m] ^= took
                    masks[m] = took
            else:
                i = ~e
                c = n_released.get(i, 0)
                n_released[i] = c + 1
                for m, took in out[segs_of[i][c]].items():
                    free[m] |= took
        return out

    def job_servers(self) -> np.ndarray:
        """The most servers each job held GPUs on at once (0: it never started), in input order;
        above 1, the job ran split over servers.

        >>> from optsched.core import Cluster, Job
        >>> from optsched.sim import get_policy, simulate
        >>> res = simulate(Cluster.homogeneous(2, 2), [Job(0, work=4, gpus=3), Job(1, work=1)], get_policy("fifo"))
        >>> res.job_servers().tolist()
        [2, 1]
        """
        out = np.zeros(len(self._jobs), np.int64)
        fast = getattr(self._seg, "job_servers", None)  # the compiled run's segments count them at once
        if fast is not None:
            idx, k = fast()
            np.maximum.at(out, idx, k)
            held = []
        else:
            held = [(x[0], x[3]) for x in self._seg]
        for i, pl in held + [(i, pl) for i, pls in self._open.items() for pl in pls]:
            out[i] = max(int(out[i]), sum(1 for g in pl.values() if g))
        return out

    def segments(self):
        """One row per GPU-holding segment: ``job_id, start, end, placement, gpu_ids, usage``."""
        import pandas as pd

        js = self._jobs
        return pd.DataFrame(
            [
                (js[i].id, a, b, dict(pl), {m: ids_of(k) for m, k in masks.items()}, usage)
                for (i, a, b, pl, _, usage), masks in zip(self._seg, self._gpu_masks(), strict=True)
            ],
            columns=["job_id", "start", "end", "placement", "gpu_ids", "usage"],
        )

    # -- output ------------------------------------------------------------------------------
    def to_files(self, out_dir, fmt: str = "csv") -> list[str]:
        """Write ``jobs``, ``utilization`` (and ``summary.json``) to ``out_dir``; ``fmt`` csv or parquet."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        if fmt not in ("csv", "parquet"):
            raise InvalidOptionError(f"The output format must be 'csv' or 'parquet'; got {fmt!r}.")
        if fmt == "parquet":
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                raise InvalidOptionError(
                    "Parquet output needs pyarrow, which is not installed; `pip install pyarrow` or use CSV."
                ) from None
        paths = []
        for name, df in (("jobs", self.jobs_frame()), ("utilization", self.utilization())):
            # each file whole or absent (a full disk, memory running out: WriteError), streamed to disk
            paths += [str(p) for p in write_table(df, out, name, formats=(fmt,))]
        p = out / "summary.json"
        atomic_write_text(p, json.dumps(self.summary(), indent=2, default=float) + "\n")
        paths.append(str(p))
        return paths

    # -- plots -------------------------------------------------------------------------------
    def plot_cdf(self, column: str = "jct", ax=None, *, label: str | None = None, log: bool = True):
        """Empirical CDF of a per-job column (default JCT) over finished jobs. Returns the axes."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(5, 3.5))
        x = np.sort(self.jobs_frame()[column].dropna().to_numpy())
        y = np.arange(1, len(x) + 1) / max(1, len(x))
        ax.step(x, y, where="post", label=label or self.policy)
        if log and len(x) and x.min() > 0:
            ax.set_xscale("log")
        ax.set_xlabel(f"{column} (s)")
        ax.set_ylabel("fraction of jobs")
        ax.grid(alpha=0.3)
        return ax

    def plot_utilization(self, ax=None, *, label: str | None = None):
        """GPU utilization over time (step plot). Returns the axes."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(6.4, 3))  # optsched.plot.style.FIGURE_WIDTH: readable inline
        u = self.utilization()
        ax.step(u["time"], u["utilization"], where="post", label=label or self.policy)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("GPU utilization")
        ax.set_ylim(0, 1.05)
        ax.grid(alpha=0.3)
        return ax

    def __repr__(self) -> str:
        s = self.summary()
        return (
            f"SimResult(policy={self.policy!r}, jobs={s['n_jobs']}, mean_jct={s['mean_jct']:.6g}, "
            f"makespan={s['makespan']:.6g})"
        )
