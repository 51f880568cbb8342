"""The compiled simulator core (numba): the event loop of FIFO, SJF, SRTF, periodic SRTF, LAS and
Lazer with a fixed deferral X (its hooks and round in :mod:`.deferral`) on GPU-only, constant-rate
jobs, with per-job load and save times (rules R1-R12 and reading 4 of ``formulations/lazer.md``).
The loop (:func:`_run`) picks the events in the engine's order; what each does, and the round, is
its handler's in :mod:`.events`, as the Python engine's ``Simulator._run`` calls ``_stage_end``,
``_save_end`` and so on.

Nothing imports this module unless the compiled engine runs (:mod:`optsched.sim.compiled.driver`
decides, builds the arrays and the result). It replays exactly what :class:`~optsched.sim.Simulator`
does with those policies (the Python engine is the reference; hypothesis tests compare the two job
by job): the same event order at equal times, the same decision rounds (:mod:`.rounds`, claims in
:mod:`.claims`), the same placements (:mod:`.gpus`) and the same floating-point operations
(:mod:`.actions`). The state is laid out in :mod:`.layout`.

Helpers take the arrays they use one by one, in the order of ``layout.ARRAYS`` (numba increfs
every member of a tuple at each call, about 55 ns per array, which made a first version slower
than the Python engine), and the arrays
are unmanaged views (:func:`_unmanaged`: no reference count, so a call costs no atomic
operations; the driver keeps the arrays alive while the kernel runs). :func:`run_chunk` returns
after ``budget`` event times, or when a growing buffer may lack room for one more event time; the
driver grows it and calls again (so a run can also show progress and be interrupted).

LAS quantum ticks at which the round cannot change anything (nothing else happens at that time,
nothing is claimed or being saved, and no running job is worse than the best waiting job) are
merged (:mod:`.events`): the kernel walks the quantum grid to the first tick at which a running job has become
worse than the best waiting job, or to the next event, and counts (and logs) the ticks it passed
as the Python engine's events, so the schedule, the event count and the log are the same.

Only the entry points (:func:`_run` and its variants, :func:`_compact`) are cached on disk
(``cache=True``), each for one signature (:data:`RUN_SIGNATURE`, :data:`COMPACT_SIGNATURE`, compiled
by :func:`compile_entry_points` before a run, see :mod:`.build`): the functions of the other modules
are compiled into them. A run compiles only its policy's code: :func:`_run` as written is the entry
point of FIFO, SJF, SRTF and periodic SRTF, and :func:`entry_point` makes a copy of it with LAS's
hooks (``_LAS``) or Lazer's (``_LAZER``) compiled in, the first time one of those runs. The hooks
are constants that the loop passes to the event handlers of :mod:`.events`, which numba copies into
the loop before typing it; numba drops a branch on a constant (``if lazer and ...``) before typing,
so the functions only another policy calls are neither typed nor compiled. numba keys a cached
function on its own source file only, so their cache key also holds :data:`SOURCES_DIGEST`, the
digest of the other modules' sources, computed at import (editing any of them compiles the entry
points again), and the hooks compiled in. The helpers (:mod:`.jit`) have no Python wrapper and no
machine code of their own: only the entry points are called from Python, and LLVM optimises and
compiles each entry point once, as a whole.
"""

from __future__ import annotations

from types import FunctionType

import numpy as np
from numba import carray, njit, types
from numba.core import config as numba_config
from numba.core.caching import FunctionCache
from numba.extending import intrinsic

from optsched.sim.compiled.events import (
    on_arrival,
    on_load_end,
    on_notices,
    on_save_end,
    on_stage_end,
    on_timer,
    schedule,
)
from optsched.sim.compiled.heaps import ev_kind, ev_pop
from optsched.sim.compiled.jit import helper
from optsched.sim.compiled.layout import (
    ARR,
    ARRAY_TYPES,
    ARRAYS,
    EOBJ,
    ET,
    EVER,
    F_MAX_EVENTS,
    F_MAX_TIME,
    F_NOW,
    F_STOP,
    G_AI,
    G_BUDGET,
    G_EHN,
    G_G,
    G_KIND,
    G_LOG,
    G_N,
    G_NEV,
    G_NFIN,
    G_NHOLD,
    G_NLOG,
    G_NOTICES,
    G_NSEG,
    G_NSTALE,
    G_NSTEP,
    G_POOL,
    G_RECORD,
    G_RUNN,
    G_SAME_T,
    H_FAILED,
    H_STALE,
    K_LAS,
    K_LAZER,
    KIND_CODES,
    MAX_BATCHES_AT_ONE_TIME,
    ORDER,
    P_ARRIVAL,
    P_LOADED,
    P_SAVED,
    P_STAGE,
    P_TIMER,
    PLLEN,
    PLOFF,
    RUNL,
    ST_BUDGET,
    ST_END,
    ST_INTERNAL,
    ST_LIMIT,
    ST_LIVELOCK,
    ST_ROOM,
    State,
    sources_digest,
)

#: sha256 of the sources of the other kernel modules (layout.KERNEL_MODULES) and the constants they import
SOURCES_DIGEST = sources_digest()


def _array(dtype, ndim: int):
    return types.Array(dtype, ndim, "C")


#: the one signature of :func:`_run`: the arrays of :class:`~.layout.State`, in order (layout.ARRAY_TYPES)
RUN_SIGNATURE = types.int64(*(_array(getattr(types, dtype), ndim) for dtype, ndim in ARRAY_TYPES))
#: the one signature of :func:`_compact` (ji, gv, rr, pool)
COMPACT_SIGNATURE = types.void(*(RUN_SIGNATURE.args[ARRAYS.index(a)] for a in ("ji", "gv", "rr", "pool")))


class _KernelCache(FunctionCache):
    """numba's on-disk cache of an entry point, keyed also on :data:`SOURCES_DIGEST` (numba's own key
    holds the entry point's file and bytecode only, not the modules compiled into it) and on the
    hooks compiled into it (:func:`entry_point`: the variants of :func:`_run` share its bytecode)."""

    def __init__(self, py_func):
        super().__init__(py_func)
        self._hooks = (py_func.__globals__["_LAS"], py_func.__globals__["_LAZER"])

    def _index_key(self, sig, codegen):
        return (*super()._index_key(sig, codegen), SOURCES_DIGEST, self._hooks)


#: the policies' hooks compiled into :func:`_run` as written (its variants, :func:`entry_point`, are
#: copies of it with other values): LAS's quantum timer, Lazer's deferral. The loop passes them on
#: to the handlers of :mod:`.events` (``la``, ``lz``), which numba copies into it; numba drops a
#: branch on a constant before typing (``if lazer and ...``), so a variant compiles only its
#: policies' code
_LAS = False
_LAZER = False


# -- unmanaged views -------------------------------------------------------------------------------
@intrinsic
def _pointer(typingctx, addr, arr):
    """The integer address ``addr`` as a pointer to ``arr``'s element type."""
    ptrty = types.CPointer(arr.dtype)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(ptrty))

    return ptrty(addr, arr), codegen


@helper
def _unmanaged(a):
    """A view of the C-contiguous array ``a`` without a reference count (numba increfs and decrefs
    every array argument of every call, with atomic operations: 10 to 50 ns each); valid while the
    caller keeps ``a`` alive."""
    return carray(_pointer(a.ctypes.data, a), a.shape)


if numba_config.DISABLE_JIT:  # NUMBA_DISABLE_JIT=1: the kernel runs as plain Python (for debugging)

    def _unmanaged(a):
        return a


@helper
def _room(gv, ev, pool, segi, holds, stt, lgt):
    """Whether every growing buffer has room for one more event time (layout.room_needed)."""
    G = gv[G_G]
    if ev.shape[0] - gv[G_EHN] < 5 * G + 16:
        return False
    if pool.shape[0] - gv[G_POOL] < 2 * G + 2:
        return False
    if len(stt) - gv[G_NSTEP] < 2:
        return False
    if gv[G_RECORD]:
        if segi.shape[0] - gv[G_NSEG] < 3 * G + 1:
            return False
        if len(holds) - gv[G_NHOLD] < 5 * G + 2:
            return False
    return not (gv[G_LOG] and len(lgt) - gv[G_NLOG] < 12 * G + 16 + (gv[G_N] - gv[G_AI]))


# -- the loop ------------------------------------------------------------------------------------------
@njit(cache=True)
def _run(jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ce, ev, pool, segf, segi, holds, stt, stg, lgt, lgi):
    """Simulator._run: the events in the engine's order (R3: at one time, completions, then saves
    ended, loads ended, notices, arrivals and timers), each by its handler (:mod:`.events`), and a
    round after every time at which one changed something.

    IN: none.
    OUT: jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ce, ev, pool, segf, segi, holds, stt, stg, lgt, lgi."""
    jf, jc, ji, gv, fv = _unmanaged(jf), _unmanaged(jc), _unmanaged(ji), _unmanaged(gv), _unmanaged(fv)
    srv, tree, cl, rr, ce = _unmanaged(srv), _unmanaged(tree), _unmanaged(cl), _unmanaged(rr), _unmanaged(ce)
    qh, rh = _unmanaged(qh), _unmanaged(rh)
    ev, pool = _unmanaged(ev), _unmanaged(pool)
    segf, segi, holds = _unmanaged(segf), _unmanaged(segi), _unmanaged(holds)
    stt, stg, lgt, lgi = _unmanaged(stt), _unmanaged(stg), _unmanaged(lgt), _unmanaged(lgi)
    n = gv[G_N]
    budget = gv[G_BUDGET]
    stop = fv[F_STOP]
    max_time = fv[F_MAX_TIME]
    max_events = fv[F_MAX_EVENTS]
    inf = np.inf
    la = _LAS  # the hooks compiled in: constants (entry_point), numba drops the branches they close
    lz = _LAZER
    batches = 0
    while True:
        if not _room(gv, ev, pool, segi, holds, stt, lgt):
            return ST_ROOM
        if batches >= budget:
            return ST_BUDGET
        t = ev[0, ET] if gv[G_EHN] > 0 else inf
        if gv[G_NOTICES] > 0:  # made by the last round: due now
            t = fv[F_NOW]
        ai = gv[G_AI]
        next_arr = jf[ji[ai, ORDER], ARR] if ai < n else inf
        if next_arr < t:
            t = next_arr
        if t == inf or t > stop:
            return ST_END
        if t > max_time or gv[G_NEV] > max_events:
            return ST_LIMIT
        if t == fv[F_NOW] and gv[G_NEV] > 0:
            gv[G_SAME_T] += 1
            if gv[G_SAME_T] > MAX_BATCHES_AT_ONE_TIME:
                return ST_LIVELOCK
        else:
            gv[G_SAME_T] = 0
        fv[F_NOW] = t
        real = False  # an event at t changed something: a round follows
        while True:
            top = gv[G_EHN] > 0 and ev[0, ET] == t
            ek = ev_kind(ev, 0) if top else P_TIMER
            if top and (ek == P_STAGE or (gv[G_NOTICES] == 0 and (ek < P_ARRIVAL or next_arr != t))):
                obj = np.int64(ev[0, EOBJ])
                ver = np.int64(ev[0, EVER])
                ev_pop(gv, ev)
                gv[G_NEV] += 1
                if ek == P_STAGE:
                    h = on_stage_end(
                        jf, jc, ji, gv, srv, tree, rr, pool, segf, segi, holds, stt, stg, lgt, lgi, obj, ver, t, la, lz
                    )
                elif ek == P_SAVED:
                    h = on_save_end(
                        jf,
                        jc,
                        ji,
                        gv,
                        fv,
                        srv,
                        tree,
                        cl,
                        qh,
                        rh,
                        rr,
                        ce,
                        ev,
                        pool,
                        segf,
                        segi,
                        holds,
                        stt,
                        stg,
                        lgt,
                        lgi,
                        obj,
                        ver,
                        t,
                        la,
                        lz,
                    )
                elif ek == P_LOADED:
                    h = on_load_end(jf, jc, ji, gv, fv, rh, ev, lgt, lgi, obj, ver, t)
                else:
                    h = on_timer(jf, jc, ji, gv, fv, cl, qh, rh, ev, lgt, lgi, obj, ver, t, not real, la, lz)
                if h == H_STALE:
                    gv[G_NSTALE] += 1
                    continue
                if h == H_FAILED:
                    return ST_INTERNAL
            elif gv[G_NOTICES] > 0:
                on_notices(jf, jc, ji, gv, fv, cl, qh, ev, t, la, lz)
            elif next_arr == t:
                j = ji[ai, ORDER]
                ai += 1
                gv[G_AI] = ai
                next_arr = jf[ji[ai, ORDER], ARR] if ai < n else inf
                gv[G_NEV] += 1
                on_arrival(jf, jc, ji, gv, fv, cl, qh, ev, lgt, lgi, j, la, lz)
            else:
                break
            real = True
        if real and not schedule(
            jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ce, ev, pool, segf, segi, holds, stt, stg, lgt, lgi, la, lz
        ):
            return ST_INTERNAL
        batches += 1
        if gv[G_NFIN] == n:
            return ST_END


#: the entry points made so far, by the hooks compiled in (_LAS, _LAZER)
_ENTRY_POINTS = {(False, False): _run}


def entry_point(kind: int):
    """The variant of :func:`_run` that runs policy ``kind`` (a ``K_`` code): :func:`_run` itself
    for FIFO, SJF, SRTF and periodic SRTF, a copy with LAS's or Lazer's hooks compiled in for those
    (made once, cached on disk apart from the others)."""
    hooks = (kind == K_LAS, kind == K_LAZER)
    entry = _ENTRY_POINTS.get(hooks)
    if entry is None:
        py = _run.py_func if not numba_config.DISABLE_JIT else _run
        names = dict(py.__globals__, _LAS=hooks[0], _LAZER=hooks[1])
        copy = FunctionType(py.__code__, names, py.__name__, py.__defaults__, py.__closure__)
        copy.__qualname__, copy.__doc__, copy.__module__ = py.__qualname__, py.__doc__, py.__module__
        entry = njit(cache=True)(copy)
        if not numba_config.DISABLE_JIT:
            entry._cache = _KernelCache(copy)  # noqa: SLF001 - numba has no public hook for the key
        _ENTRY_POINTS[hooks] = entry
    return entry


def run_chunk(s: State) -> int:
    """Simulator._run for these policies, from the state in ``s``, until the end, ``budget`` event
    times or a buffer that may lack room (one of the ``ST_*`` codes)."""
    return entry_point(int(s.gv[G_KIND]))(*s)


@njit(cache=True)
def _compact(ji, gv, rr, pool):
    used = gv[G_POOL]
    owner = np.empty(used, dtype=np.int64)  # the running job whose placement starts at each row
    for a in range(used):
        owner[a] = -1
    for r in range(gv[G_RUNN]):
        j = rr[r, RUNL]
        owner[ji[j, PLOFF]] = j  # (a running job holds GPUs: its placements start rows of their own)
    k = 0
    for off in range(used):  # in the order of their offsets, without a sort (a shorter compile)
        j = owner[off]
        if j < 0:
            continue
        ji[j, PLOFF] = k
        for a in range(ji[j, PLLEN]):  # k <= off + a: nothing is overwritten before it moves
            pool[k, 0] = pool[off + a, 0]
            pool[k, 1] = pool[off + a, 1]
            k += 1
    gv[G_POOL] = k


def compact_pool(s: State) -> None:
    """Move the placements of the jobs holding GPUs to the front of the pool (when neither segments
    nor the log are kept), in the order of their offsets."""
    _compact(s.ji, s.gv, s.rr, s.pool)


def compile_entry_points(*policies: str) -> None:
    """Load the entry points of these policies (names of ``layout.KIND_CODES``; all without one) from
    numba's cache, or compile them (once per machine and version of these sources); afterwards a call
    with other argument types is an error, never a second compile in the middle of a run."""
    if numba_config.DISABLE_JIT:
        return
    runs = dict.fromkeys(entry_point(KIND_CODES[p]) for p in (policies or KIND_CODES))
    for entry, sig in [*((r, RUN_SIGNATURE) for r in runs), (_compact, COMPACT_SIGNATURE)]:
        if tuple(sig.args) not in entry.overloads:
            entry.compile(sig)
            entry.disable_compile()


if not numba_config.DISABLE_JIT:  # the entry points' cache key with the other modules' digest
    _run._cache = _KernelCache(_run.py_func)  # noqa: SLF001 - numba has no public hook for the key
    _compact._cache = _KernelCache(_compact.py_func)  # noqa: SLF001 - the same
