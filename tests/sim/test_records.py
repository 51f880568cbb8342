"""The compiled run's records made on access (:mod:`optsched.sim.compiled.records`), the event log
above all: a run that keeps its log (the default) hands over the kernel's packed rows, split over the
buffers the kernel filled one after another, and :class:`EventLog` makes the Python engine's tuples
from them when they are read. The log read that way must be the eagerly built one: the Python
engine's list on hypothesis-drawn workloads (ties, load and save times, LAS and periodic ticks,
runs stopped early), the same whether the kernel's rows came in one buffer or in many, the same
by index, slice and iteration, and the same after pickling (compare runs its rows in worker
processes).
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.exceptions import SimulationError
from optsched.sim import ConstantRate, Simulator
from optsched.sim.compiled import driver as D
from optsched.sim.compiled.layout import (
    L_ARRIVAL,
    L_COMPLETE,
    L_FINISH_LOAD,
    L_PREEMPT,
    L_SAVED,
    L_START,
    L_TIMER,
    L_TRAIN,
    LOG_JOB_BITS,
    LOG_KIND_BITS,
)
from optsched.sim.compiled.records import EventLog

from .test_kernel import _SETTINGS, POLICY_CLASSES, assert_same_log, cases, run

pytest.importorskip("numba")


def _code(kind: int, j: int, detail: int = 0) -> int:
    return kind | (j << LOG_KIND_BITS) | (detail << (LOG_KIND_BITS + LOG_JOB_BITS))


def test_rows_decode_to_the_python_engines_tuples_across_buffers():
    """Every kind of row, written by hand, the log split over two buffers between the two starts: a
    start's placement runs from its pool offset to the next start's (or the pool's end)."""
    pool = np.array([[0, 2], [1, 1], [2, 1]], dtype=np.int32)  # job "a" on server 0; job 7 on 1 and 2
    rows = [
        (0.0, _code(L_ARRIVAL, 0)),
        (0.0, _code(L_START, 0, 0)),
        (1.5, _code(L_TRAIN, 0)),
        (2.0, _code(L_TIMER, 3)),
        (2.0, _code(L_PREEMPT, 0)),
        (2.0, _code(L_START, 1, 1)),
        (2.5, _code(L_FINISH_LOAD, 1)),
        (3.0, _code(L_SAVED, 0)),
        (4.0, _code(L_COMPLETE, 1, 1)),
    ]
    t = np.array([r[0] for r in rows])
    c = np.array([r[1] for r in rows], dtype=np.int64)
    log = EventLog([t[:4], t[4:]], [c[:4], c[4:]], pool, ["a", 7], 0.5, True)
    want = [
        (0.0, "arrival", "a", None),
        (0.0, "start", "a", {0: 2}),
        (1.5, "train", "a", 0.5),
        (2.0, "timer", None, 3),
        (2.0, "preempt", "a", True),
        (2.0, "start", 7, {1: 1, 2: 1}),
        (2.5, "preempt", 7, "finish-load"),
        (3.0, "saved", "a", None),
        (4.0, "complete", 7, 1),
    ]
    assert len(log) == len(want)
    assert list(log) == want and log == want
    assert [log[k] for k in range(len(log))] == want
    assert log[-4] == want[-4] and log[2:7] == want[2:7] and log[::3] == want[::3] and log[5:2] == []
    with pytest.raises(IndexError):
        log[len(want)]
    assert pickle.loads(pickle.dumps(log)) == want
    assert EventLog([], [], pool, [], 1.0, False) == [] and repr(log) == "EventLog(9 events)"


@st.composite
def logged_cases(draw):
    """A kernel case of :func:`tests.sim.test_kernel.cases` (any of its policies), the log kept."""
    case = draw(cases(draw(st.sampled_from(list(POLICY_CLASSES)))))
    cluster, jobs, pol, rate, until, kw = case
    return cluster, jobs, pol, rate, until, {**kw, "record_log": True}


@settings(max_examples=150, **_SETTINGS)
@given(case=logged_cases(), block=st.sampled_from([1, 3, EventLog.BLOCK]))
def test_the_default_runs_log_is_the_eagerly_built_one(case, block):
    """The compiled run's log read on access equals the Python engine's list (built as the run
    goes), and is the same to the last bit whether the kernel wrote its rows into one buffer or
    into many (the smallest buffers, a budget of 3 event times per call), read in any block size,
    and after pickling the result; so are its segments and holds."""
    cluster, jobs, pol, rate, until, kw = case
    try:
        want = run(cluster, jobs, pol, rate, until, "python", max_events=20_000, **kw)
    except SimulationError:
        return  # LAS with rollback may livelock: tests/sim/test_kernel.py checks both engines say so
    whole = run(cluster, jobs, pol, rate, until, "compiled", max_events=20_000, **kw)
    rates = None if rate is None else ConstantRate(rate)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(D.CompiledRun, "BUDGET", 3)
        sim = Simulator(cluster, jobs, pol, rate_model=rates, engine="compiled", **kw)
        split = sim._compiled.run(until, max_events=20_000, initial=1)
        m.setattr(EventLog, "BLOCK", block)
        rows = list(split.log)
        assert_same_log(rows, want.log)
        assert rows == list(whole.log)
        assert [split.log[k] for k in range(len(split.log))] == rows
        again = pickle.loads(pickle.dumps(split))
        assert list(again.log) == rows
        assert list(split._seg) == list(whole._seg) == list(again._seg)
        assert list(split._holds) == list(whole._holds) == list(again._holds)
        a, b = again.job_columns(), split.job_columns()
        assert all(np.array_equal(a[c], b[c], equal_nan=a[c].dtype.kind == "f") for c in b)


def test_records_over_many_buffers_are_joined_once_and_pickle_unread():
    """300 jobs on 3 x 4 GPUs under LAS from the smallest buffers: the kernel fills several log,
    segment and hold buffers; the result keeps them apart until they are read, pickles them so, and
    reads the same rows as a run from big buffers (the log also as the Python engine's)."""
    from optsched.core import Cluster
    from optsched.sim import get_policy
    from optsched.traces import synthetic_workload

    cluster = Cluster.homogeneous(3, 4)
    df = synthetic_workload(300, cluster_gpus=cluster.total_gpus, load=1.2, max_duration=7200.0, seed=3)
    sim = Simulator(cluster, df, get_policy("las"), engine="compiled")
    split = sim._compiled.run(initial=1)
    assert all(len(sim._compiled.filled[name]) > 1 for name in ("log", "seg", "holds"))
    unread = pickle.loads(pickle.dumps(split))
    whole = Simulator(cluster, df, get_policy("las"), engine="compiled").run()
    rows = list(split.log)
    assert rows == list(unread.log) == list(whole.log)
    assert_same_log(rows, Simulator(cluster, df, get_policy("las"), engine="python").run().log)
    for res in (split, unread):
        assert len(res._seg) == len(whole._seg) and list(res._seg) == list(whole._seg)
        assert len(res._holds) == len(whole._holds) and list(res._holds) == list(whole._holds)
        assert [x.tolist() for x in res._seg.job_servers()] == [x.tolist() for x in whole._seg.job_servers()]
        assert res.segments().equals(whole.segments())
