"""The compiled simulator core (numba): the event loop of FIFO, SJF, SRTF, periodic SRTF, LAS and
Lazer with a fixed deferral X (its hooks and round in :mod:`.deferral`) on GPU-only, constant-rate
jobs, with per-job load and save times (rules R1-R12 and reading 4 of ``formulations/lazer.md``).

Nothing imports this module unless the compiled engine runs (:mod:`optsched.sim.compiled.driver`
decides, builds the arrays and the result). It replays exactly what :class:`~optsched.sim.Simulator`
does with those policies (the Python engine is the reference; hypothesis tests compare the two job
by job): the same event order at equal times, the same decision rounds (:mod:`.rounds`, claims in
:mod:`.claims`), the same placements (:mod:`.gpus`) and the same floating-point operations
(:mod:`.actions`). The state is laid out in :mod:`.layout`.

Helpers take the arrays they use one by one (numba increfs every member of a tuple at each call,
about 55 ns per array, which made a first version slower than the Python engine), and the arrays
are unmanaged views (:func:`_unmanaged`: no reference count, so a call costs no atomic
operations; the driver keeps the arrays alive while the kernel runs). :func:`run_chunk` returns
after ``budget`` event times, or when a growing buffer may lack room for one more event time; the
driver grows it and calls again (so a run can also show progress and be interrupted).

LAS quantum ticks at which the round cannot change anything (nothing else happens at that time,
nothing is claimed or being saved, and no running job is worse than the best waiting job) are
merged: the kernel walks the quantum grid to the first tick at which a running job has become
worse than the best waiting job, or to the next event, and counts (and logs) the ticks it passed
as the Python engine's events, so the schedule, the event count and the log are the same.

Only the entry points (:func:`_run`, :func:`_compact`) are cached on disk (``cache=True``), each
for one signature (:data:`RUN_SIGNATURE`, :data:`COMPACT_SIGNATURE`, compiled by
:func:`compile_entry_points` before a run, see :mod:`.build`): the functions of the other modules
are compiled into them. numba keys a cached function on its own source file only, so their cache
key also holds :data:`SOURCES_DIGEST`, the digest of the other modules' sources, computed at import
(editing any of them compiles the entry points again). The helpers have no Python wrapper
(``no_cpython_wrapper``, ``no_cfunc_wrapper``): only the entry points are called from Python, and
the compile is shorter.
"""

from __future__ import annotations

import numpy as np
from numba import carray, njit, types
from numba.core import config as numba_config
from numba.core.caching import FunctionCache
from numba.extending import intrinsic

from optsched.sim.compiled.actions import (
    arrive_log,
    complete,
    load_end,
    log_row,
    release_after_save,
    run_value,
    set_timer,
    wait_value,
)
from optsched.sim.compiled.claims import saved
from optsched.sim.compiled.deferral import z_arrive, z_completed, z_notices, z_round, z_saved, z_timer
from optsched.sim.compiled.heaps import ev_kind, ev_pop, ev_push, q_push, qless, rh_top
from optsched.sim.compiled.jit import helper
from optsched.sim.compiled.layout import (
    ARR,
    CCNT,
    COFF,
    EOBJ,
    ET,
    EVER,
    F_LAS_NEXT,
    F_MAX_EVENTS,
    F_MAX_TIME,
    F_NOW,
    F_QUANTUM,
    F_STALE,
    F_STOP,
    F_TICK_TIME,
    G_AI,
    G_BUDGET,
    G_C,
    G_EHN,
    G_G,
    G_KIND,
    G_LAS_ACTIVE,
    G_LAS_HAS_NEXT,
    G_LAS_TICK,
    G_LOG,
    G_N,
    G_NCL,
    G_NEV,
    G_NFIN,
    G_NHOLD,
    G_NLOG,
    G_NOTICES,
    G_NSEG,
    G_NSTALE,
    G_NSTEP,
    G_NUSAV,
    G_POOL,
    G_PTICK,
    G_QN,
    G_RECORD,
    G_RUNN,
    G_SAME_T,
    G_SKIPPED,
    G_TIMER_ID,
    G_TIMER_ON,
    K_LAS,
    K_LAZER,
    K_PSRTF,
    K_SJF,
    K_SRTF,
    L_TIMER,
    LOADING,
    MAX_BATCHES_AT_ONE_TIME,
    ORDER,
    P_ARRIVAL,
    P_LOADED,
    P_SAVED,
    P_STAGE,
    P_TIMER,
    PHASE,
    PLLEN,
    PLOFF,
    QK,
    QKEY,
    RUNL,
    SAVING,
    ST_BUDGET,
    ST_END,
    ST_INTERNAL,
    ST_LIMIT,
    ST_LIVELOCK,
    ST_ROOM,
    TRAIN_HEAP,
    VER,
    WAITING,
    State,
    sources_digest,
)
from optsched.sim.compiled.rounds import fill, preemptive_schedule, start_claimants, worst

#: sha256 of the sources of the other kernel modules (layout, heaps, gpus, actions, claims, rounds)
SOURCES_DIGEST = sources_digest()


def _array(dtype, ndim: int):
    return types.Array(dtype, ndim, "C")


_F1, _F2, _F3 = _array(types.float64, 1), _array(types.float64, 2), _array(types.float64, 3)
_I1, _I2 = _array(types.int64, 1), _array(types.int64, 2)
_W1, _W2 = _array(types.int32, 1), _array(types.int32, 2)
#: the one signature of :func:`_run`: the arrays of :class:`~.layout.State`, in order
RUN_SIGNATURE = types.int64(
    _F2, _F2, _W2, _I1, _F1, _I2, _I1, _I2, _F2, _F3, _I2, _I2, _F2, _W2, _F2, _W2, _W1, _F1, _I1, _F1, _I1
)
#: the one signature of :func:`_compact` (ji, gv, rr, pool)
COMPACT_SIGNATURE = types.void(_W2, _I1, _I2, _W2)


class _KernelCache(FunctionCache):
    """numba's on-disk cache of an entry point, keyed also on :data:`SOURCES_DIGEST` (numba's own key
    holds the entry point's file and bytecode only, not the modules compiled into it)."""

    def _index_key(self, sig, codegen):
        return (*super()._index_key(sig, codegen), SOURCES_DIGEST)


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


# -- policies' hooks ---------------------------------------------------------------------------------
@helper
def _las_resume(gv, fv, ev, ji, now):
    """LAS._resume: its quantum timer again, on the same grid (the quanta skipped by the same
    additions the timer makes)."""
    t = fv[F_LAS_NEXT]
    q = fv[F_QUANTUM]
    while t < now:
        t += q
    gv[G_LAS_HAS_NEXT] = 0
    set_timer(ev, ji, gv, fv, t)


@helper
def _arrive(jf, jc, ji, gv, fv, cl, qh, ev, lgt, lgi, j):
    """Simulator._arrive and the policy's on_arrival."""
    ji[j, PHASE] = WAITING
    arrive_log(lgt, lgi, gv, j, fv[F_NOW])
    jf[j, QKEY] = wait_value(jf, ji, gv, j)
    if gv[G_KIND] == K_LAZER:  # the batch's new jobs, not yet in WQ
        z_arrive(jc, gv, j)
        return
    q_push(jf, ji, cl, qh, gv, j)
    if gv[G_KIND] == K_LAS:
        gv[G_LAS_ACTIVE] += 1
        if not gv[G_TIMER_ON]:
            if not gv[G_LAS_HAS_NEXT]:  # the first active job: a new grid
                set_timer(ev, ji, gv, fv, fv[F_NOW] + fv[F_QUANTUM])
            else:
                _las_resume(gv, fv, ev, ji, fv[F_NOW])


@helper
def _las_wants_resume(gv):
    """LAS.on_preempted: the timer is off and a job waits (or holds a claim)."""
    return gv[G_KIND] == K_LAS and not gv[G_TIMER_ON] and gv[G_LAS_HAS_NEXT] and (gv[G_QN] > 0 or gv[G_NCL] > 0)


@helper
def _head_value(gv, cl, qh):
    """The first element of the best waiting job's key."""
    best = -1
    for c in range(gv[G_C]):
        if cl[c, CCNT] > 0 and (best < 0 or qless(qh, cl[c, COFF], best)):
            best = cl[c, COFF]
    return qh[best, QK]


@helper
def _las_next_tick(jf, ji, gv, fv, cl, qh, rh, ev, lgt, lgi, t, quiet):
    """The time of the LAS timer's next firing after its tick at t: t + quantum, or, if the tick at
    t changes nothing (``quiet``: no other event at t, nothing claimed or being saved, no running
    job worse than the best waiting job), the first later tick at which a running job has become
    worse, or the first at/after the next event, the ticks in between counted and logged as the
    engine's (each a round that changes nothing)."""
    q = fv[F_QUANTUM]
    x = t + q
    if not quiet or gv[G_QN] == 0 or gv[G_NCL] > 0 or gv[G_NUSAV] > 0:
        return x
    head = _head_value(gv, cl, qh)
    w = worst(jf, ji, gv, fv, rh, t)
    if w >= 0 and head < run_value(jf, ji, gv, fv, w, t):
        return x
    tt = rh_top(ji, rh, gv, TRAIN_HEAP)
    t_next = ev[0, ET] if gv[G_EHN] > 0 else np.inf
    ai = gv[G_AI]
    if ai < gv[G_N]:
        a = jf[ji[ai, ORDER], ARR]
        if a < t_next:
            t_next = a
    room = len(lgt) - gv[G_NLOG] - 12 * gv[G_G] - 16 - (gv[G_N] - ai)
    stop = min(fv[F_STOP], fv[F_MAX_TIME])
    while x < t_next and x <= stop and gv[G_NEV] <= fv[F_MAX_EVENTS]:
        if tt >= 0 and head < run_value(jf, ji, gv, fv, tt, x):
            break
        if gv[G_LOG]:
            if room <= 0:
                break
            room -= 1
            log_row(lgt, lgi, gv, x, L_TIMER, gv[G_TIMER_ID], 0)
        gv[G_NEV] += 1
        gv[G_SKIPPED] += 1
        if x > fv[F_STALE]:
            fv[F_STALE] = x  # the clock of a run stopped by `until` passes it
        x = x + q
    return x


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
    kind = gv[G_KIND]
    preemptive = kind >= K_SRTF
    inf = np.inf
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
        real = False
        while True:
            top = gv[G_EHN] > 0 and ev[0, ET] == t
            ek = ev_kind(ev, 0) if top else P_TIMER
            if top and (ek == P_STAGE or (gv[G_NOTICES] == 0 and (ek < P_ARRIVAL or next_arr != t))):
                obj = np.int64(ev[0, EOBJ])
                ver = np.int64(ev[0, EVER])
                ev_pop(ev, gv)
                gv[G_NEV] += 1
                if ek == P_STAGE:
                    if ver != ji[obj, VER]:
                        gv[G_NSTALE] += 1
                        continue
                    complete(jf, jc, ji, gv, srv, tree, rr, pool, segf, segi, holds, stt, stg, lgt, lgi, obj, t)
                    if kind == K_LAZER:
                        z_completed(jc, ji, gv, obj)
                    elif kind == K_LAS:  # on_completion: its row in the running-job heap is now stale
                        gv[G_LAS_ACTIVE] -= 1
                        if gv[G_LAS_ACTIVE] == 0:
                            gv[G_TIMER_ON] = 0
                            gv[G_LAS_HAS_NEXT] = 0
                    elif kind == K_PSRTF and gv[G_NFIN] == n:
                        gv[G_TIMER_ON] = 0
                elif ek == P_SAVED:
                    if ver != ji[obj, VER] or ji[obj, PHASE] != SAVING:
                        gv[G_NSTALE] += 1
                        continue
                    release_after_save(
                        jf, jc, ji, gv, srv, tree, rr, pool, segf, segi, holds, stt, stg, lgt, lgi, obj, t
                    )
                    if kind == K_LAZER:  # on_preempted: may start the preemptor it freed GPUs for
                        if not z_saved(
                            jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ev, pool, holds, stt, stg, lgt, lgi, obj, t
                        ):
                            return ST_INTERNAL
                        real = True
                        continue
                    if preemptive:  # on_preempted
                        saved(ji, gv, srv, rr, ce, obj)
                    jf[obj, QKEY] = wait_value(jf, ji, gv, obj)
                    q_push(jf, ji, cl, qh, gv, obj)
                    if _las_wants_resume(gv):
                        _las_resume(gv, fv, ev, ji, t)
                elif ek == P_LOADED:
                    if ver != ji[obj, VER] or ji[obj, PHASE] != LOADING:
                        gv[G_NSTALE] += 1
                        continue
                    load_end(jf, jc, ji, gv, fv, rh, ev, lgt, lgi, obj, t)
                elif kind == K_LAZER:  # a deferral's timer (the deferred job in the version column)
                    log_row(lgt, lgi, gv, t, L_TIMER, obj, 0)
                    z_timer(jc, gv, ver)
                else:  # a policy's periodic timer
                    if obj != gv[G_TIMER_ID] or not gv[G_TIMER_ON]:
                        gv[G_NSTALE] += 1
                        continue
                    log_row(lgt, lgi, gv, t, L_TIMER, obj, 0)
                    if kind == K_LAS:
                        nxt = _las_next_tick(jf, ji, gv, fv, cl, qh, rh, ev, lgt, lgi, t, not real)
                    else:
                        nxt = t + fv[F_QUANTUM]
                    ev_push(ev, ji, gv, fv, nxt, P_TIMER, obj, 0)
                    if kind == K_LAS:
                        gv[G_LAS_TICK] = 1
                        if gv[G_QN] == 0 and gv[G_NCL] == 0:  # nothing waits: off until a job waits
                            gv[G_TIMER_ON] = 0
                            fv[F_LAS_NEXT] = nxt
                            gv[G_LAS_HAS_NEXT] = 1
                    else:  # periodic SRTF's tick
                        gv[G_PTICK] = 1
                        fv[F_TICK_TIME] = t
                real = True
            elif gv[G_NOTICES] > 0:
                # The notices of this time's preemptions without a save, in one go: the engine's (t,
                # saved, seq) events, always at the time of the round that made them, after its
                # completions at that time and before anything else. Each calls on_preempted: the
                # victim is queued already (nothing to do) and LAS resumes its timer if it is off and
                # a job waits, which only the first of them can do.
                gv[G_NEV] += gv[G_NOTICES]
                gv[G_NOTICES] = 0
                if kind == K_LAZER:
                    z_notices(jf, jc, ji, gv, cl, qh)
                if _las_wants_resume(gv):
                    _las_resume(gv, fv, ev, ji, t)
                real = True
            elif next_arr == t:
                real = True
                j = ji[ai, ORDER]
                ai += 1
                gv[G_AI] = ai
                next_arr = jf[ji[ai, ORDER], ARR] if ai < n else inf
                gv[G_NEV] += 1
                _arrive(jf, jc, ji, gv, fv, cl, qh, ev, lgt, lgi, j)
            else:
                break
        if real:  # the policy's schedule(sim) (R3)
            ok = True
            if kind == K_LAZER:
                ok = z_round(
                    jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ev, pool, segf, segi, holds, stt, stg, lgt, lgi
                )
            elif kind == K_PSRTF:
                tick = gv[G_PTICK] != 0
                gv[G_PTICK] = 0
                if tick or t == fv[F_TICK_TIME]:  # a tick, or a round that follows one at the same time
                    ok = preemptive_schedule(
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
                    )
                elif gv[G_NCL] > 0:  # between ticks: only jobs holding a claim, if they fit now (R8)
                    start_claimants(jf, jc, ji, gv, fv, srv, tree, rh, rr, ce, ev, pool, holds, stt, stg, lgt, lgi)
            elif gv[G_QN] > 0 or gv[G_NCL] > 0:
                if kind <= K_SJF:
                    ok = fill(jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ev, pool, holds, stt, stg, lgt, lgi, False)
                else:
                    ok = preemptive_schedule(
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
                    )
            if not ok:
                return ST_INTERNAL
        batches += 1
        if gv[G_NFIN] == n:
            return ST_END


def run_chunk(s: State) -> int:
    """Simulator._run for these policies, from the state in ``s``, until the end, ``budget`` event
    times or a buffer that may lack room (one of the ``ST_*`` codes)."""
    return _run(*s)


@njit(cache=True)
def _compact(ji, gv, rr, pool):
    nr = gv[G_RUNN]
    offs = np.empty(nr, dtype=np.int64)
    for r in range(nr):
        offs[r] = ji[rr[r, RUNL], PLOFF]
    k = 0
    for r in np.argsort(offs):
        j = rr[r, RUNL]
        off = ji[j, PLOFF]
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


def compile_entry_points() -> None:
    """Load the entry points from numba's cache, or compile them (about half a minute, once per
    machine and version of these sources); afterwards a call with other argument types is an error,
    never a second compile in the middle of a run."""
    if numba_config.DISABLE_JIT:
        return
    for entry, sig in ((_run, RUN_SIGNATURE), (_compact, COMPACT_SIGNATURE)):
        if tuple(sig.args) not in entry.overloads:
            entry.compile(sig)
            entry.disable_compile()


if not numba_config.DISABLE_JIT:  # the entry points' cache key with the other modules' digest
    _run._cache = _KernelCache(_run.py_func)  # noqa: SLF001 - numba has no public hook for the key
    _compact._cache = _KernelCache(_compact.py_func)  # noqa: SLF001 - the same
