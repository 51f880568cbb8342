"""The engine is chosen before anything is built: ``Simulator(...)`` checks the options once and
builds the engine ``engine=`` names (the Python engine, or the kernel's run where the compiled
driver says it covers it); ``result.engine`` says which ran; ``engine="auto"`` says once per process and
reason why it does not take the kernel, as an ``EngineFallbackWarning`` on workloads where that
matters and in the log below."""

from __future__ import annotations

import dataclasses
import inspect
import logging
import warnings

import pytest

from optsched.core import Cluster, Job
from optsched.exceptions import EngineFallbackWarning, InvalidOptionError
from optsched.sim import FIFO, SRTF, PeriodicSRTF, Simulator, simulate
from optsched.sim.compiled import driver as D
from optsched.sim.engine import PythonEngine
from optsched.sim.options import SimOptions


def _jobs(n: int = 30) -> list[Job]:
    return [Job(i, work=1.0 + i % 7, gpus=1 + i % 3, arrival=float(i // 3)) for i in range(n)]


def test_the_python_engine_is_a_simulator_and_says_so():
    sim = Simulator(Cluster.homogeneous(2, 4), _jobs(), SRTF(), engine="python")
    assert type(sim) is Simulator and sim._compiled is None and isinstance(sim._engine, PythonEngine)
    assert sim.job(3) is sim._engine.sim.job(3) and sim.jobs[3]._sim is sim._engine.sim  # the hooks' sim
    assert isinstance(sim.options, SimOptions) and sim.options.engine == "python"
    assert sim.run().engine == "python"
    assert simulate(Cluster.homogeneous(2, 4), _jobs(), "fifo").engine == "python"  # auto, few jobs


def test_a_compiled_run_is_a_simulator_too_and_says_so():
    pytest.importorskip("numba")
    sim = Simulator(Cluster.homogeneous(2, 4), _jobs(), SRTF(), record_log=False, engine="compiled")
    assert type(sim) is Simulator and sim._engine is sim._compiled and sim._compiled.options is sim.options
    assert sim._compiled is not None and sim.policy.name == "srtf" and sim.capacity == 8
    res = sim.run()
    assert res.engine == "compiled" and sim.n_events == res.n_events and sim.now == res.end_time
    with pytest.raises(AttributeError, match="compiled kernel"):
        sim.start(0)


def test_options_are_checked_before_the_engine_is_chosen():
    cluster = Cluster.homogeneous(1, 2)
    # a bad option is refused whichever engine would run (the kernel never sees it)
    for engine in ("auto", "python", "compiled"):
        with pytest.raises(InvalidOptionError, match="'slot' option"):
            Simulator(cluster, _jobs(3), FIFO(), slot=-1.0, engine=engine)
    with pytest.raises(InvalidOptionError, match="'seed' option"):
        Simulator(cluster, _jobs(3), FIFO(), seed=-1, engine="compiled")
    with pytest.raises(TypeError, match="no_such_option"):
        Simulator(cluster, _jobs(3), FIFO(), no_such_option=1)
    opts = SimOptions(cluster, FIFO(), load_time=2.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.engine = "python"  # type: ignore[misc]


def test_the_signature_is_the_initialisers_and_every_option_field_is_a_keyword():
    params = inspect.signature(Simulator).parameters
    assert list(params) == ["cluster", "jobs", "policy", "options", "option_keywords"]
    assert params["option_keywords"].kind is inspect.Parameter.VAR_KEYWORD
    cluster, pol = Cluster.homogeneous(2, 4), FIFO()
    fields = [f for f in dataclasses.fields(SimOptions) if f.init and f.name not in ("cluster", "policy")]
    defaults = SimOptions(cluster, pol)
    for f in fields:  # each field is a keyword of Simulator(...), passed on as it is
        value = getattr(defaults, f.name)
        sim = Simulator(cluster, _jobs(3), pol, **{f.name: value})
        assert getattr(sim.options, f.name) is value or getattr(sim.options, f.name) == value, f.name
    doc = Simulator.__doc__ or ""  # and the Simulator's docstring documents it
    assert all(f"    {f.name}" in doc or f", {f.name}" in doc for f in fields)


def test_options_given_as_an_object_are_used_as_they_are_and_keywords_replace_fields():
    cluster, pol = Cluster.homogeneous(2, 4), FIFO()
    opts = SimOptions(cluster, pol, load_time=2.0, engine="python")
    sim = Simulator(cluster, _jobs(3), pol, opts)
    assert sim.options is opts
    sim = Simulator(cluster, _jobs(3), pol, opts, save_time=1.0)
    assert (sim.options.load_time, sim.options.save_time, sim.options.engine) == (2.0, 1.0, "python")
    with pytest.raises(InvalidOptionError, match="'slot' option"):  # the replaced fields are checked too
        Simulator(cluster, _jobs(3), pol, opts, slot=0)
    with pytest.raises(InvalidOptionError, match="another cluster or policy"):
        Simulator(cluster, _jobs(3), FIFO(), opts)
    with pytest.raises(InvalidOptionError, match="'options' argument"):
        Simulator(cluster, _jobs(3), pol, {"load_time": 2.0})
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'loadtime'.*load_time"):
        Simulator(cluster, _jobs(3), pol, loadtime=2.0)


class _OwnSRTF(SRTF):
    """A policy of the user's own (a subclass): its hooks are Python code, so the Python engine runs it."""


@pytest.fixture
def fresh(monkeypatch):
    """Nothing said yet in this process, and the kernel's threshold at 10 jobs."""
    monkeypatch.setattr(D, "_said", set())
    monkeypatch.setattr(D, "AUTO_MIN_JOBS", 10)


def test_auto_warns_once_why_a_large_run_stays_on_python(fresh, caplog):
    cluster = Cluster.homogeneous(2, 4)
    with pytest.warns(EngineFallbackWarning, match="slot") as rec:
        Simulator(cluster, _jobs(), SRTF(), slot=1.0)
    assert len(rec) == 1 and rec[0].filename == __file__  # the warning names the caller's line
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Simulator(cluster, _jobs(), SRTF(), slot=1.0)  # said once per process
        Simulator(cluster, _jobs(5), SRTF(), slot=1.0)  # below the threshold: the log only
    with pytest.warns(EngineFallbackWarning, match="policy _OwnSRTF"):  # another reason: said too
        Simulator(cluster, _jobs(), _OwnSRTF())
    with pytest.warns(EngineFallbackWarning, match="policy _OwnSRTF"):  # through simulate(), too
        D._said.clear()
        simulate(cluster, _jobs(), _OwnSRTF())


def test_auto_logs_why_a_small_run_stays_on_python(fresh, caplog):
    with caplog.at_level(logging.INFO, logger="optsched.sim"), warnings.catch_warnings():
        warnings.simplefilter("error")
        Simulator(Cluster.homogeneous(2, 4), _jobs(5), SRTF(), slot=1.0)
    assert "slot" in caplog.text


def test_an_explicit_engine_never_warns(fresh):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim = Simulator(Cluster.homogeneous(2, 4), _jobs(), PeriodicSRTF(), engine="python")
    assert sim.run().engine == "python"
