"""The compiled kernel's modules: their sizes, what imports numba, and numba's on-disk cache.

numba keys a cached function on its own source file only. The kernel's entry points
(``kernel._run``, ``kernel._compact``) are the only cached functions, and the functions of the
other modules are compiled into them; their cache key also holds ``kernel.SOURCES_DIGEST``, the
digest of those modules computed at import (``tests/sim/test_kernel_build.py``). These tests keep
the layout that relies on it.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from importlib.resources import files

import pytest

from optsched.sim.compiled import layout

pytest.importorskip("numba")

MODULES = sorted(p.name for p in files("optsched.sim.compiled").iterdir() if p.name.endswith(".py"))


def _source(name: str) -> str:
    return files("optsched.sim.compiled").joinpath(name).read_text()


def test_only_the_entry_points_are_cached():
    for name in MODULES:
        cached = re.findall(r"@njit\(cache=True\)\ndef (\w+)", _source(name))
        if name == "kernel.py":
            assert sorted(cached) == ["_compact", "_run"]
        else:
            assert cached == [], f"{name}: {cached} cached on its own (a stale copy could outlive an edit)"
    njit_modules = {n[:-3] for n in MODULES if "@njit" in _source(n) or "@helper" in _source(n)} - {"kernel"}
    assert njit_modules <= set(layout.KERNEL_MODULES)


def test_no_module_over_600_lines():
    for name in MODULES:
        assert len(_source(name).splitlines()) <= 600, name


def test_the_driver_does_not_import_numba():
    code = (
        "import sys\nimport optsched.sim.compiled.driver, optsched.sim.compiled.coverage\n"
        "import optsched.sim.compiled.records, optsched.sim.compiled.layout\n"
        "assert 'numba' not in sys.modules, 'numba imported'\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr


def test_the_kernel_runs_as_plain_python_for_debugging():
    """NUMBA_DISABLE_JIT=1 runs the kernel's functions as Python (so a debugger or print works in
    them) with the same result as the Python engine."""
    code = (
        "from optsched.core import Cluster, Job\nfrom optsched.sim import Simulator, get_policy\n"
        "jobs = [Job(i, work=1.0 + i % 5, gpus=1 + i % 3, arrival=float(i // 3)) for i in range(12)]\n"
        "kw = dict(load_time=1.0, save_time=2.0)\n"
        "a = Simulator(Cluster.homogeneous(2, 2), jobs, get_policy('srtf'), engine='compiled', **kw).run()\n"
        "b = Simulator(Cluster.homogeneous(2, 2), jobs, get_policy('srtf'), engine='python', **kw).run()\n"
        "assert a.jobs_frame().equals(b.jobs_frame()) and list(a.log) == list(b.log)\n"
    )
    env = {**__import__("os").environ, "NUMBA_DISABLE_JIT": "1"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr


def _assigned_names(name: str) -> set[str]:
    """The names a kernel module binds at its top level (assignments, tuple unpacking)."""
    out = set()
    for node in ast.parse(_source(name)).body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                out |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return out


def test_event_kinds_and_phases_are_the_python_engines():
    """The kernel's event kinds are optsched.sim.rules' (R3), its phase codes the positions in
    optsched.sim.model.state.PHASES: imported, never written again in the kernel."""
    from optsched.sim import rules
    from optsched.sim.model.state import PHASES

    kinds = ("P_STAGE", "P_SAVED", "P_LOADED", "P_ARRIVAL", "P_TIMER")
    assert tuple(getattr(rules, k) for k in kinds) == layout.EVENT_KINDS
    for k in kinds:
        assert getattr(layout, k) is getattr(rules, k)
    # an event's key is kind << SEQ_BITS | sequence, exact in a float64 (53 bits)
    assert list(layout.EVENT_KINDS) == sorted(set(layout.EVENT_KINDS))
    assert min(layout.EVENT_KINDS) >= 0 and max(layout.EVENT_KINDS) < 1 << (53 - layout.SEQ_BITS)
    assert tuple(PHASES) == layout.PHASE_NAMES and all(type(p) is str for p in layout.PHASE_NAMES)
    for phase in PHASES[:-1]:  # "failed" is the driver's only
        assert getattr(layout, phase.name) == PHASES.index(phase)
    for name in MODULES:
        own = _assigned_names(name) & {*kinds, *(p.name for p in PHASES)}
        assert own == ({p.name for p in PHASES[:-1]} if name == "layout.py" else set()), name


def test_policy_codes_are_named_apart_from_the_policy_classes():
    codes = {"FIFO": "fifo", "SJF": "sjf", "SRTF": "srtf", "LAS": "las", "PSRTF": "srtf-periodic", "LAZER": "lazer"}
    assert {key: getattr(layout, f"K_{name}") for name, key in codes.items()} == layout.KIND_CODES
    assert sorted(layout.KIND_CODES.values()) == list(range(len(codes)))
    for name in MODULES:
        used = {n.id for n in ast.walk(ast.parse(_source(name))) if isinstance(n, ast.Name)}
        assert not used & set(codes), f"{name} uses {sorted(used & set(codes))}: the kernel's codes are K_*"


def test_the_digest_holds_the_imported_constants(monkeypatch):
    before = layout.sources_digest()
    monkeypatch.setattr(layout, "EVENT_KINDS", (0, 1, 2, 4, 3))
    assert layout.sources_digest() != before
