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


# -- the arrays' order and the IN/OUT markers ------------------------------------------------------------
def _kernel_functions():
    """{(module, name): its FunctionDef} for every numba function of the kernel, and each module's
    names of them ({name in the module: (module, name)}), read from the sources."""
    trees = {n[:-3]: ast.parse(_source(n)) for n in MODULES if n[:-3] in {*layout.KERNEL_MODULES, "kernel"}}
    funcs = {
        (m, f.name): f for m, t in trees.items() for f in t.body if isinstance(f, ast.FunctionDef) and f.decorator_list
    }
    scopes = {}
    for m, t in trees.items():
        scope = {name: (mod, name) for mod, name in funcs if mod == m}
        for node in t.body:
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("optsched.sim.compiled."):
                src = node.module.rsplit(".", 1)[1]
                scope.update({a.name: (src, a.name) for a in node.names if (src, a.name) in funcs})
        scopes[m] = scope
    return funcs, scopes


def _changed_in_place(funcs, scopes) -> dict[tuple[str, str], set[str]]:
    """The parameters each function writes into (``a[i] = ...``, through a view ``r = a[h]``, or by
    passing them to a kernel function that does), to a fixed point over the calls."""
    params = {k: [a.arg for a in f.args.args] for k, f in funcs.items()}
    writes = {k: set() for k in funcs}
    calls = {k: [] for k in funcs}
    for k, f in funcs.items():
        of = {p: p for p in params[k]}  # a name -> the parameter it is a view of

        def base(node, of=of):
            while isinstance(node, ast.Subscript):
                node = node.value
            return of.get(node.id) if isinstance(node, ast.Name) else None

        for node in ast.walk(f):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Subscript) and base(node.value):
                of.update({t.id: base(node.value) for t in node.targets if isinstance(t, ast.Name)})
        for node in ast.walk(f):
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and base(node):
                writes[k].add(base(node))
            elif isinstance(node, ast.Call) and getattr(node.func, "id", None) in scopes[k[0]]:
                callee = scopes[k[0]][node.func.id]
                calls[k] += [(callee, params[callee][i], base(a)) for i, a in enumerate(node.args) if base(a)]
    grew = True
    while grew:
        grew = False
        for k, cs in calls.items():
            for callee, p, mine in cs:
                if p in writes[callee] and mine not in writes[k]:
                    writes[k].add(mine)
                    grew = True
    return writes


def test_every_kernel_function_takes_the_arrays_in_the_layout_order():
    """The state arrays' order is declared once (``layout.ARRAYS``): the entry point takes them all in
    it, with the types of ``layout.ARRAY_TYPES``, and every numba function of the kernel takes the
    ones it uses as a subsequence of it."""
    import importlib
    import inspect

    from numba import types

    from optsched.sim.compiled import kernel

    assert list(inspect.signature(kernel._run.py_func).parameters) == list(layout.ARRAYS) == list(layout.State._fields)
    assert len(layout.ARRAY_TYPES) == len(layout.ARRAYS)
    assert kernel.RUN_SIGNATURE.args == tuple(types.Array(getattr(types, d), n, "C") for d, n in layout.ARRAY_TYPES)
    seen = 0
    for name in (*layout.KERNEL_MODULES, "kernel"):
        module = importlib.import_module(f"optsched.sim.compiled.{name}")
        for f in vars(module).values():
            py = getattr(f, "py_func", None)
            if py is None or py.__module__ != module.__name__:
                continue
            arrays = [p for p in inspect.signature(py).parameters if p in layout.ARRAYS]
            assert arrays == sorted(arrays, key=layout.ARRAYS.index), f"{name}.{py.__name__}: {arrays}"
            seen += 1
    assert seen > 90


def test_wide_kernel_functions_mark_their_arrays_in_and_out():
    """A kernel function of 10 or more parameters ends its docstring with ``IN:`` the arrays it only
    reads and ``OUT:`` those it changes in place (itself or through the functions it calls), as the
    source says."""
    funcs, scopes = _kernel_functions()
    writes = _changed_in_place(funcs, scopes)
    assert {"ev", "gv"} <= writes[("heaps", "ev_push")] and "jf" not in writes[("heaps", "ev_push")]
    assert "rh" in writes[("actions", "launch")]  # through rh_push's view r = rh[h]
    wide = 0
    for (mod, name), f in funcs.items():
        params = [a.arg for a in f.args.args]
        doc = ast.get_docstring(f) or ""
        if len(params) < 10:
            assert "IN:" not in doc, f"{mod}.{name}"
            continue
        wide += 1
        arrays = [p for p in params if p in layout.ARRAYS]
        out = [p for p in arrays if p in writes[(mod, name)]]
        want = [
            "IN: " + (", ".join(p for p in arrays if p not in out) or "none") + ".",
            "OUT: " + (", ".join(out) or "none") + ".",
        ]
        assert doc.splitlines()[-2:] == want, f"{mod}.{name}"
    assert wide >= 25
