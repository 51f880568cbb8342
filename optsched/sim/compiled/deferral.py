"""Lazer's orchestrator, fixed deferral and completion handler in the compiled kernel (numba).

The counterpart of :class:`optsched.lazer.policy.Lazer` (Alg. 1 and 2 of paper 004 with reading 4
of ``formulations/lazer.md``) for a fixed deferral X (X = 0 included), both ``secured`` modes and
every placement rule but ``random``. The queues are kept without Python containers:

- WQ is the kernel's waiting-job heaps (``cl`` / ``qh``, keyed (remaining, arrival, index) as the
  policy's ``_key``); the jobs arriving in a batch (the policy's ``_new``) and the deferrals ended in
  it (``_ended``) are lists through ``jc[:, Z_NEXT]``; at a completion's time the handler takes the
  best fitting job among WQ and them, which is what pushing them into WQ, running the handler and
  taking the rest out again does (keys are unique);
- RQ is the jobs holding GPUs (``rr[:, RUNL]``) that load or train and are not in DRQ; DRQ is the
  jobs whose ``jc[:, Z_OWN]`` names the deferred job whose J_r they are; DWQ is ``jc[:, Z_STATE] ==
  1`` (counted in ``gv[G_Z_NDWQ]``); a pending preemptor (``Z_STATE == 2``) counts its saving
  victims and the GPUs they hold (``Z_NSAV``, ``Z_HELD``; each victim names it in ``Z_VOF``), and
  ``gv[G_Z_RES]`` is the policy's ``_reserved``, kept by the same integer sums;
- a deferral's timer is an event (``P_TIMER``, its timer id, the deferred job in the version
  column), never cancelled;
- a victim whose GPUs are free at once joins WQ at its notice (the engine's event at the same
  time, after the round), through the list ``jc[:, Z_NNEXT]``.

Each function names the method of ``Lazer`` it replays; the floating-point operations are the
policy's (remaining durations as ``SimJob.remaining``).

Tested in ``tests/sim/test_kernel_differential.py`` (family ``lazer``: against the Python engine,
bit for bit, and the reference simulator) and ``tests/lazer/test_policy.py``.
"""

from __future__ import annotations

import numpy as np

from optsched.sim.compiled.actions import done_work, launch, preempt, wait_value
from optsched.sim.compiled.gpus import fits_free, fits_vec, needs_layout, place_tree
from optsched.sim.compiled.heaps import ev_push, key_less, q_pop, q_push, qless
from optsched.sim.compiled.jit import helper
from optsched.sim.compiled.layout import (
    ARR,
    CCNT,
    CG,
    COFF,
    CSINGLE,
    DONE_W,
    F_NOW,
    F_Z_X,
    FREE,
    G_C,
    G_G,
    G_QN,
    G_RUNN,
    G_S,
    G_TIMER_ID,
    G_TOTFREE,
    G_Z_ALL,
    G_Z_COMPL,
    G_Z_ENDH,
    G_Z_ENDT,
    G_Z_NDWQ,
    G_Z_NEWH,
    G_Z_NEWT,
    G_Z_NOTH,
    G_Z_NOTT,
    G_Z_NPEND,
    G_Z_REL,
    G_Z_RES,
    GPUS,
    HSTART,
    LOADING,
    P_TIMER,
    PHASE,
    PLLEN,
    PLOFF,
    QA,
    QJ,
    QK,
    QKEY,
    RBAD,
    RUNL,
    SAVING,
    SINGLE,
    TRAINING,
    VEC,
    VICT,
    WAITING,
    WORK,
    Z_HELD,
    Z_NEXT,
    Z_NNEXT,
    Z_NSAV,
    Z_OWN,
    Z_STATE,
    Z_VOF,
)

DEFERRED, PENDING_PREEMPTOR = 1, 2


# -- lists through jc ------------------------------------------------------------------------------------
@helper
def _append(jc, gv, head, tail, col, j):
    """Append job j to the list whose head and tail are gv[head], gv[tail] (links in jc[:, col])."""
    jc[j, col] = -1.0
    t = gv[tail]
    if t < 0:
        gv[head] = j
    else:
        jc[t, col] = j
    gv[tail] = j


@helper
def _take(jc, gv, head, tail, col):
    """The jobs of a list, in order (the list is emptied)."""
    k = 0
    x = gv[head]
    while x >= 0:
        k += 1
        x = np.int64(jc[x, col])
    out = np.empty(k, dtype=np.int64)
    x = gv[head]
    for a in range(k):
        out[a] = x
        x = np.int64(jc[x, col])
    gv[head] = -1
    gv[tail] = -1
    return out


# -- hooks ---------------------------------------------------------------------------------------------------
@helper
def z_arrive(jc, gv, j):
    """Lazer.on_arrival: j joins the batch's new jobs."""
    _append(jc, gv, G_Z_NEWH, G_Z_NEWT, Z_NEXT, j)


@helper
def z_completed(jc, ji, gv, j):
    """Lazer.on_completion: out of RQ / DRQ; the batch counts it and the GPUs it released."""
    jc[j, Z_OWN] = -1.0
    gv[G_Z_COMPL] += 1
    gv[G_Z_REL] += ji[j, GPUS]


@helper
def z_timer(jc, gv, j):
    """Lazer.on_timer of a deferral: j's deferral ended in this batch."""
    _append(jc, gv, G_Z_ENDH, G_Z_ENDT, Z_NEXT, j)


@helper
def z_notices(jf, jc, ji, gv, cl, qh):
    """Lazer.on_preempted of the victims freed at once (their notices): they join WQ."""
    x = gv[G_Z_NOTH]
    while x >= 0:
        if ji[x, PHASE] == WAITING:
            jf[x, QKEY] = wait_value(jf, ji, gv, x)
            q_push(jf, ji, gv, cl, qh, x)
        x = np.int64(jc[x, Z_NNEXT])
    gv[G_Z_NOTH] = -1
    gv[G_Z_NOTT] = -1


@helper
def _start(jf, jc, ji, gv, fv, srv, tree, rh, rr, ev, pool, holds, stt, stg, lgt, lgi, j, now):
    """Lazer._start: sim.start on the placement rule's GPUs (False: no placement, an internal error).

    IN: none.
    OUT: jf, jc, ji, gv, fv, srv, tree, rh, rr, ev, pool, holds, stt, stg, lgt, lgi."""
    k = place_tree(gv, srv, tree, ji[j, GPUS], ji[j, SINGLE] != 0)
    if k == 0:
        return False
    launch(jf, jc, ji, gv, fv, srv, tree, rh, rr, ev, pool, holds, stt, stg, lgt, lgi, j, k, now)
    return True


@helper
def _queue(jf, ji, gv, cl, qh, j):
    """wq.push(job, _key(job))."""
    jf[j, QKEY] = wait_value(jf, ji, gv, j)
    q_push(jf, ji, gv, cl, qh, j)


@helper
def z_saved(jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ev, pool, holds, stt, stg, lgt, lgi, v, now):
    """Lazer.on_preempted after a save (or a lost load) ended: v joins WQ; if it freed GPUs for a
    pending preemptor, the reserve shrinks, and the preemptor starts (or joins WQ) when the last of
    its victims is done (_launch_or_queue).

    IN: none.
    OUT: jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ev, pool, holds, stt, stg, lgt, lgi."""
    _queue(jf, ji, gv, cl, qh, v)
    o = np.int64(jc[v, Z_VOF])
    if o < 0:
        return True
    jc[v, Z_VOF] = -1.0
    if jc[o, Z_STATE] != PENDING_PREEMPTOR:
        return True
    g = ji[o, GPUS]
    held = np.int64(jc[o, Z_HELD])
    old = max(0, g - held)
    held -= ji[v, GPUS]
    ns = np.int64(jc[o, Z_NSAV]) - 1
    jc[o, Z_HELD] = held
    jc[o, Z_NSAV] = ns
    if ns > 0:
        gv[G_Z_RES] += max(0, g - held) - old
        return True
    gv[G_Z_RES] -= old
    gv[G_Z_NPEND] -= 1
    jc[o, Z_STATE] = 0.0
    if ji[o, PHASE] != WAITING:  # pragma: no cover - a pending preemptor waits
        return True
    single = ji[o, SINGLE] != 0
    if fits_free(gv, g, single) and gv[G_TOTFREE] - gv[G_Z_RES] >= g:
        return _start(jf, jc, ji, gv, fv, srv, tree, rh, rr, ev, pool, holds, stt, stg, lgt, lgi, o, now)
    _queue(jf, ji, gv, cl, qh, o)
    return True


# -- the orchestrator (Alg. 2, reading 4) -----------------------------------------------------------------
@helper
def _worse(jf, a, b):
    """Whether running job a comes before b in J_r's order: longer remaining (jf RBAD), then later
    arrival, then larger index (R4's key, the worse first)."""
    x = jf[a, RBAD]
    y = jf[b, RBAD]
    if x != y:
        return x > y
    x = jf[a, ARR]
    y = jf[b, ARR]
    if x != y:
        return x > y
    return a > b


@helper
def _orchestrate(jf, jc, ji, gv, fv, srv, rr, pool, j, now):
    """Lazer.orchestrate: 0 if j fits now (free GPUs less the reserve), the number of victims J_r in
    rr[:, VICT] if preempting them makes it fit, -1 if nothing does.

    IN: jc, ji, gv, fv, pool.
    OUT: jf, srv, rr."""
    g = ji[j, GPUS]
    single = ji[j, SINGLE] != 0
    base = gv[G_TOTFREE] - gv[G_Z_RES]
    layout = needs_layout(gv, single)
    if base >= g and (not layout or fits_free(gv, g, single)):
        return 0
    t_new = jf[j, WORK] - jf[j, DONE_W]
    k = 0
    for r in range(gv[G_RUNN]):
        x = rr[r, RUNL]
        p = ji[x, PHASE]
        if (p == LOADING or p == TRAINING) and jc[x, Z_OWN] < 0:  # noqa: SIM109 (numba)
            rem = jf[x, WORK] - done_work(jf, ji, fv, x, now)
            if rem > t_new and jf[x, HSTART] != now:
                jf[x, RBAD] = rem
                rr[k, VICT] = x
                k += 1
    if k == 0:
        return -1
    if layout:
        for m in range(gv[G_S]):
            srv[m, VEC] = srv[m, FREE]
    freed = 0
    for a in range(k):
        b = a
        for c in range(a + 1, k):
            if _worse(jf, rr[c, VICT], rr[b, VICT]):
                b = c
        v = rr[b, VICT]
        rr[b, VICT] = rr[a, VICT]
        rr[a, VICT] = v
        freed += ji[v, GPUS]
        if layout:
            off = ji[v, PLOFF]
            for e in range(ji[v, PLLEN]):
                srv[pool[off + e, 0], VEC] += pool[off + e, 1]
        if base + freed >= g and (not layout or fits_vec(gv, srv, VEC, g, single)):
            return a + 1
    return -1


@helper
def _preempt_for(jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ev, pool, segf, segi, holds, stt, stg, lgt, lgi, j, nv):
    """Lazer._preempt_for: pause-and-save the nv victims in rr[:, VICT]; j starts when their GPUs are
    free (a pending preemptor while some save), at once if none saves and it fits, else joins WQ.

    IN: none.
    OUT: jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ev, pool, segf, segi, holds, stt, stg, lgt, lgi."""
    now = fv[F_NOW]
    saving = 0
    held = 0
    for a in range(nv):
        v = rr[a, VICT]
        preempt(jf, jc, ji, gv, fv, srv, tree, rr, ev, pool, segf, segi, holds, stt, stg, lgt, lgi, v, now)
        if ji[v, PHASE] == SAVING:
            saving += 1
            held += ji[v, GPUS]
            jc[v, Z_VOF] = j
        else:  # freed at once: it joins WQ at its notice
            _append(jc, gv, G_Z_NOTH, G_Z_NOTT, Z_NNEXT, v)
    g = ji[j, GPUS]
    if saving > 0:
        jc[j, Z_STATE] = PENDING_PREEMPTOR
        jc[j, Z_NSAV] = saving
        jc[j, Z_HELD] = held
        gv[G_Z_NPEND] += 1
        gv[G_Z_RES] += max(0, g - held)
        return True
    if fits_free(gv, g, ji[j, SINGLE] != 0):
        return _start(jf, jc, ji, gv, fv, srv, tree, rh, rr, ev, pool, holds, stt, stg, lgt, lgi, j, now)
    _queue(jf, ji, gv, cl, qh, j)
    return True


@helper
def _restore(jc, ji, gv, rr, j):
    """Lazer._restore: j out of DWQ, its J_r (those still running) back in RQ."""
    if jc[j, Z_STATE] != DEFERRED:
        return
    jc[j, Z_STATE] = 0.0
    gv[G_Z_NDWQ] -= 1
    for r in range(gv[G_RUNN]):
        x = rr[r, RUNL]
        if jc[x, Z_OWN] == j:
            jc[x, Z_OWN] = -1.0


@helper
def _place_or_preempt(
    jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ev, pool, segf, segi, holds, stt, stg, lgt, lgi, j, defer
):
    """Lazer._handle_arrival (``defer``: the chooser's X applies) or _end_deferral after _restore.

    IN: none.
    OUT: jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ev, pool, segf, segi, holds, stt, stg, lgt, lgi."""
    now = fv[F_NOW]
    nv = _orchestrate(jf, jc, ji, gv, fv, srv, rr, pool, j, now)
    if nv < 0:
        _queue(jf, ji, gv, cl, qh, j)
        return True
    if nv == 0:
        return _start(jf, jc, ji, gv, fv, srv, tree, rh, rr, ev, pool, holds, stt, stg, lgt, lgi, j, now)
    x = fv[F_Z_X]
    if not defer or x <= 0:
        return _preempt_for(
            jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ev, pool, segf, segi, holds, stt, stg, lgt, lgi, j, nv
        )
    jc[j, Z_STATE] = DEFERRED
    gv[G_Z_NDWQ] += 1
    for a in range(nv):
        jc[rr[a, VICT], Z_OWN] = j
    gv[G_TIMER_ID] += 1
    ev_push(ji, gv, fv, ev, now + x, P_TIMER, gv[G_TIMER_ID], j)
    return True


# -- the completion handler (Alg. 1 lines 12-17) ---------------------------------------------------------
@helper
def _before_row(jf, qh, e, r):
    """Whether waiting job e's key is below the key in heap row r."""
    x = jf[e, QKEY]
    y = qh[r, QK]
    if x != y:
        return x < y
    x = jf[e, ARR]
    y = qh[r, QA]
    if x != y:
        return x < y
    return e < qh[r, QJ]


@helper
def _complete(jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ev, pool, holds, stt, stg, lgt, lgi, ex, secured):
    """Lazer._complete over WQ and the waiting jobs of ``ex``: the best job whose class fits the free
    GPUs and needs at most ``secured`` of them starts, while any does (WaitQueue.pop_best).

    IN: none.
    OUT: jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ev, pool, holds, stt, stg, lgt, lgi."""
    now = fv[F_NOW]
    while secured > 0:
        bc = -1
        for c in range(gv[G_C]):
            if (
                cl[c, CCNT] > 0
                and (bc < 0 or qless(qh, cl[c, COFF], cl[bc, COFF]))
                and cl[c, CG] <= secured
                and fits_free(gv, cl[c, CG], cl[c, CSINGLE] != 0)
            ):
                bc = c
        be = -1
        for a in range(len(ex)):
            e = ex[a]
            if (
                ji[e, PHASE] == WAITING
                and ji[e, GPUS] <= secured
                and (be < 0 or key_less(jf, e, be))
                and fits_free(gv, ji[e, GPUS], ji[e, SINGLE] != 0)
            ):
                be = e
        if bc < 0 and be < 0:
            return True
        if be >= 0 and (bc < 0 or _before_row(jf, qh, be, cl[bc, COFF])):
            j = be
        else:
            j = q_pop(gv, cl, qh, bc)
        if not _start(jf, jc, ji, gv, fv, srv, tree, rh, rr, ev, pool, holds, stt, stg, lgt, lgi, j, now):
            return False
        secured -= ji[j, GPUS]
    return True


@helper
def _waiting(ji, xs):
    """The jobs of xs that still wait, in order."""
    k = 0
    for a in range(len(xs)):
        if ji[xs[a], PHASE] == WAITING:
            xs[k] = xs[a]
            k += 1
    return xs[:k]


# -- the decision round ------------------------------------------------------------------------------------
@helper
def z_round(jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ev, pool, segf, segi, holds, stt, stg, lgt, lgi):
    """Lazer.schedule: at a completion's time the handler over WQ, the new jobs and the ended
    deferrals (their J_r back in RQ first); then each ended deferral not started goes through the
    orchestrator, then the new jobs not started in SRTF order (_handle_arrival); then the safety net
    (nothing holds GPUs, nothing deferred or pending, jobs wait: every GPU to the handler).

    IN: none.
    OUT: jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ev, pool, segf, segi, holds, stt, stg, lgt, lgi."""
    new = _take(jc, gv, G_Z_NEWH, G_Z_NEWT, Z_NEXT)
    ended = _take(jc, gv, G_Z_ENDH, G_Z_ENDT, Z_NEXT)
    if gv[G_Z_COMPL] > 0:
        for a in range(len(ended)):
            e = ended[a]
            _restore(jc, ji, gv, rr, e)
            jf[e, QKEY] = wait_value(jf, ji, gv, e)
        avail = gv[G_TOTFREE] - gv[G_Z_RES]
        secured = avail if gv[G_Z_ALL] else min(avail, gv[G_Z_REL])
        gv[G_Z_COMPL] = 0
        gv[G_Z_REL] = 0
        ex = np.concatenate((new, ended))
        if not _complete(
            jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ev, pool, holds, stt, stg, lgt, lgi, ex, secured
        ):
            return False
        new = _waiting(ji, new)
        ended = _waiting(ji, ended)
    for a in range(len(ended)):
        e = ended[a]
        _restore(jc, ji, gv, rr, e)
        if not _place_or_preempt(
            jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ev, pool, segf, segi, holds, stt, stg, lgt, lgi, e, False
        ):
            return False
    if len(new) > 0:
        keys = np.empty(len(new))
        for a in range(len(new)):
            keys[a] = jf[new[a], WORK] - jf[new[a], DONE_W]  # remaining(); all arrived now, in index order
        order = np.argsort(keys, kind="mergesort")
        for a in range(len(new)):
            j = new[order[a]]
            if not _place_or_preempt(
                jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ev, pool, segf, segi, holds, stt, stg, lgt, lgi, j, True
            ):
                return False
    if gv[G_QN] > 0 and gv[G_Z_NDWQ] == 0 and gv[G_Z_NPEND] == 0 and gv[G_TOTFREE] == gv[G_G]:
        none = np.empty(0, dtype=np.int64)
        return _complete(
            jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ev, pool, holds, stt, stg, lgt, lgi, none, gv[G_TOTFREE]
        )
    return True
