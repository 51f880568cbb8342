"""The compiled kernel's event handlers (numba): what one event of each kind does, as the Python
engine's ``Simulator._stage_end``, ``_save_end``, ``_load_end``, ``_arrive`` and ``_timer_fires`` do
with the policy's hooks, the notices of preemptions without a save, and the policy's round (R3).
The loop that picks the events in the engine's order (R3) is :func:`optsched.sim.compiled.kernel._run`.

An event handler returns ``H_DONE`` (the event changed something: a round follows), ``H_STALE`` (an
event of an older version of its job, or of a cancelled timer: counted, nothing else) or
``H_FAILED`` (an internal inconsistency: the run stops with ``ST_INTERNAL``); the codes are in
:mod:`.layout`. The branches on ``gv[G_KIND]`` are the policies' hooks (``K_LAZER``'s in
:mod:`.deferral`); LAS's and Lazer's are each behind a constant of the loop as well (``las``,
``lazer``: the handlers are copied into the loop, and numba drops what an entry point without them
would never run, :func:`optsched.sim.compiled.kernel.entry_point`).

Tested through ``tests/sim/test_kernel_differential.py`` (against the Python engine, bit for bit)
and ``tests/sim/test_kernel.py``.
"""

from __future__ import annotations

import numpy as np

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
from optsched.sim.compiled.heaps import ev_push, q_push, qless, rh_top
from optsched.sim.compiled.jit import helper
from optsched.sim.compiled.layout import (
    ARR,
    CCNT,
    COFF,
    ET,
    F_LAS_NEXT,
    F_MAX_EVENTS,
    F_MAX_TIME,
    F_NOW,
    F_QUANTUM,
    F_STALE,
    F_STOP,
    F_TICK_TIME,
    G_AI,
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
    G_NLOG,
    G_NOTICES,
    G_NUSAV,
    G_PTICK,
    G_QN,
    G_SKIPPED,
    G_TIMER_ID,
    G_TIMER_ON,
    H_DONE,
    H_FAILED,
    H_STALE,
    K_LAS,
    K_LAZER,
    K_PSRTF,
    K_SJF,
    K_SRTF,
    L_TIMER,
    LOADING,
    ORDER,
    P_TIMER,
    PHASE,
    QK,
    QKEY,
    SAVING,
    TRAIN_HEAP,
    VER,
    WAITING,
)
from optsched.sim.compiled.rounds import fill, preemptive_schedule, start_claimants, worst


# -- policies' hooks ---------------------------------------------------------------------------------
@helper
def _las_resume(ji, gv, fv, ev, now):
    """LAS._resume: its quantum timer again, on the same grid (the quanta skipped by the same
    additions the timer makes)."""
    t = fv[F_LAS_NEXT]
    q = fv[F_QUANTUM]
    while t < now:
        t += q
    gv[G_LAS_HAS_NEXT] = 0
    set_timer(ji, gv, fv, ev, t)


@helper(inline=True)
def on_arrival(jf, jc, ji, gv, fv, cl, qh, ev, lgt, lgi, j, las, lazer):
    """Simulator._arrive (an arrival) and the policy's on_arrival.

    IN: none.
    OUT: jf, jc, ji, gv, fv, cl, qh, ev, lgt, lgi."""
    ji[j, PHASE] = WAITING
    arrive_log(gv, lgt, lgi, j, fv[F_NOW])
    jf[j, QKEY] = wait_value(jf, ji, gv, j)
    if lazer and gv[G_KIND] == K_LAZER:  # the batch's new jobs, not yet in WQ
        z_arrive(jc, gv, j)
        return
    q_push(jf, ji, gv, cl, qh, j)
    if las and gv[G_KIND] == K_LAS:
        gv[G_LAS_ACTIVE] += 1
        if not gv[G_TIMER_ON]:
            if not gv[G_LAS_HAS_NEXT]:  # the first active job: a new grid
                set_timer(ji, gv, fv, ev, fv[F_NOW] + fv[F_QUANTUM])
            else:
                _las_resume(ji, gv, fv, ev, fv[F_NOW])


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
    engine's (each a round that changes nothing).

    IN: jf, ji, cl, qh, ev.
    OUT: gv, fv, rh, lgt, lgi."""
    q = fv[F_QUANTUM]
    x = t + q
    if not quiet or gv[G_QN] == 0 or gv[G_NCL] > 0 or gv[G_NUSAV] > 0:
        return x
    head = _head_value(gv, cl, qh)
    w = worst(jf, ji, gv, fv, rh, t)
    if w >= 0 and head < run_value(jf, ji, gv, fv, w, t):
        return x
    tt = rh_top(ji, gv, rh, TRAIN_HEAP)
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
            log_row(gv, lgt, lgi, x, L_TIMER, gv[G_TIMER_ID], 0)
        gv[G_NEV] += 1
        gv[G_SKIPPED] += 1
        if x > fv[F_STALE]:
            fv[F_STALE] = x  # the clock of a run stopped by `until` passes it
        x = x + q
    return x


# -- the events ----------------------------------------------------------------------------------------
@helper(inline=True)
def on_stage_end(jf, jc, ji, gv, srv, tree, rr, pool, segf, segi, holds, stt, stg, lgt, lgi, j, ver, t, las, lazer):
    """Simulator._stage_end (job ``j`` completes) and the policy's on_completion.

    IN: pool.
    OUT: jf, jc, ji, gv, srv, tree, rr, segf, segi, holds, stt, stg, lgt, lgi."""
    if ver != ji[j, VER]:
        return H_STALE
    complete(jf, jc, ji, gv, srv, tree, rr, pool, segf, segi, holds, stt, stg, lgt, lgi, j, t)
    kind = gv[G_KIND]
    if lazer and kind == K_LAZER:
        z_completed(jc, ji, gv, j)
    elif las and kind == K_LAS:  # on_completion: its row in the running-job heap is now stale
        gv[G_LAS_ACTIVE] -= 1
        if gv[G_LAS_ACTIVE] == 0:
            gv[G_TIMER_ON] = 0
            gv[G_LAS_HAS_NEXT] = 0
    elif kind == K_PSRTF and gv[G_NFIN] == gv[G_N]:
        gv[G_TIMER_ON] = 0
    return H_DONE


@helper(inline=True)
def on_save_end(
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
    j,
    ver,
    t,
    las,
    lazer,
):
    """Simulator._save_end (job ``j`` has saved and releases its GPUs) and the policy's
    on_preempted.

    IN: none.
    OUT: jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ce, ev, pool, segf, segi, holds, stt, stg, lgt, lgi."""
    if ver != ji[j, VER] or ji[j, PHASE] != SAVING:
        return H_STALE
    release_after_save(jf, jc, ji, gv, srv, tree, rr, pool, segf, segi, holds, stt, stg, lgt, lgi, j, t)
    kind = gv[G_KIND]
    if lazer and kind == K_LAZER:  # on_preempted: may start the preemptor it freed GPUs for
        ok = z_saved(jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ev, pool, holds, stt, stg, lgt, lgi, j, t)
        return H_DONE if ok else H_FAILED
    if kind >= K_SRTF:  # on_preempted
        saved(ji, gv, srv, rr, ce, j)
    jf[j, QKEY] = wait_value(jf, ji, gv, j)
    q_push(jf, ji, gv, cl, qh, j)
    if las and _las_wants_resume(gv):
        _las_resume(ji, gv, fv, ev, t)
    return H_DONE


@helper(inline=True)
def on_load_end(jf, jc, ji, gv, fv, rh, ev, lgt, lgi, j, ver, t):
    """Simulator._load_end: job ``j`` has loaded and trains.

    IN: none.
    OUT: jf, jc, ji, gv, fv, rh, ev, lgt, lgi."""
    if ver != ji[j, VER] or ji[j, PHASE] != LOADING:
        return H_STALE
    load_end(jf, jc, ji, gv, fv, rh, ev, lgt, lgi, j, t)
    return H_DONE


@helper(inline=True)
def on_timer(jf, jc, ji, gv, fv, cl, qh, rh, ev, lgt, lgi, obj, ver, t, quiet, las, lazer):
    """Simulator._timer_fires: timer ``obj`` and the policy's on_timer (Lazer: a deferral's end, the
    deferred job in ``ver``; LAS: its quantum, ``quiet`` if nothing else happened at ``t`` so far;
    periodic SRTF: its tick).

    IN: jf, ji, cl, qh.
    OUT: jc, gv, fv, rh, ev, lgt, lgi."""
    kind = gv[G_KIND]
    if lazer and kind == K_LAZER:  # a deferral's timer
        log_row(gv, lgt, lgi, t, L_TIMER, obj, 0)
        z_timer(jc, gv, ver)
        return H_DONE
    if obj != gv[G_TIMER_ID] or not gv[G_TIMER_ON]:
        return H_STALE
    log_row(gv, lgt, lgi, t, L_TIMER, obj, 0)
    if las and kind == K_LAS:
        nxt = _las_next_tick(jf, ji, gv, fv, cl, qh, rh, ev, lgt, lgi, t, quiet)
    else:
        nxt = t + fv[F_QUANTUM]
    ev_push(ji, gv, fv, ev, nxt, P_TIMER, obj, 0)
    if las and kind == K_LAS:
        gv[G_LAS_TICK] = 1
        if gv[G_QN] == 0 and gv[G_NCL] == 0:  # nothing waits: off until a job waits
            gv[G_TIMER_ON] = 0
            fv[F_LAS_NEXT] = nxt
            gv[G_LAS_HAS_NEXT] = 1
    else:  # periodic SRTF's tick
        gv[G_PTICK] = 1
        fv[F_TICK_TIME] = t
    return H_DONE


@helper(inline=True)
def on_notices(jf, jc, ji, gv, fv, cl, qh, ev, t, las, lazer):
    """The notices of this time's preemptions without a save, in one go: the engine's (t, saved,
    seq) events, always at the time of the round that made them, after its completions at that time
    and before anything else. Each calls on_preempted: the victim is queued already (nothing to do)
    and LAS resumes its timer if it is off and a job waits, which only the first of them can do.

    IN: jc, ji.
    OUT: jf, gv, fv, cl, qh, ev."""
    gv[G_NEV] += gv[G_NOTICES]
    gv[G_NOTICES] = 0
    if lazer and gv[G_KIND] == K_LAZER:
        z_notices(jf, jc, ji, gv, cl, qh)
    if las and _las_wants_resume(gv):
        _las_resume(ji, gv, fv, ev, t)


# -- the round -----------------------------------------------------------------------------------------
@helper(inline=True)
def schedule(
    jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ce, ev, pool, segf, segi, holds, stt, stg, lgt, lgi, las, lazer
):
    """The policy's schedule(sim) after the events at the current time (``fv[F_NOW]``, R3); False on
    an internal inconsistency.

    IN: none.
    OUT: jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ce, ev, pool, segf, segi, holds, stt, stg, lgt, lgi."""
    kind = gv[G_KIND]
    if lazer and kind == K_LAZER:
        return z_round(jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ev, pool, segf, segi, holds, stt, stg, lgt, lgi)
    if kind == K_PSRTF:
        tick = gv[G_PTICK] != 0
        gv[G_PTICK] = 0
        if tick or fv[F_NOW] == fv[F_TICK_TIME]:  # a tick, or a round that follows one at the same time
            return preemptive_schedule(
                jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ce, ev, pool, segf, segi, holds, stt, stg, lgt, lgi
            )
        if gv[G_NCL] > 0:  # between ticks: only jobs holding a claim, if they fit now (R8)
            start_claimants(jf, jc, ji, gv, fv, srv, tree, rh, rr, ce, ev, pool, holds, stt, stg, lgt, lgi)
        return True
    if gv[G_QN] == 0 and gv[G_NCL] == 0:
        return True
    if kind <= K_SJF:
        return fill(jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ev, pool, holds, stt, stg, lgt, lgi, False)
    return preemptive_schedule(
        jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ce, ev, pool, segf, segi, holds, stt, stg, lgt, lgi
    )
