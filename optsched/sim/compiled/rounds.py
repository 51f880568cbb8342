"""The decision rounds of the compiled kernel (numba): FIFO and SJF's fill, and the preemptive
round of SRTF, periodic SRTF and LAS (rules R4-R12 of ``formulations/lazer.md``), as
:class:`optsched.sim.policies.preemptive.Preemptive` makes them (``schedule``, ``_round``, ``_fill_fast``,
``_make_room``, ``_worst``), decision by decision.

R5 ("never preempt a job started at this very time") is :func:`r5_started_now`, the one place to
change it.
"""

from __future__ import annotations

import numpy as np

from optsched.sim.compiled.actions import launch, preempt, run_value, wait_value
from optsched.sim.compiled.claims import add_saving, claim, drop_claims, sort_claimants, try_start, try_start_claimant
from optsched.sim.compiled.gpus import fits_avail, fits_free, fits_vec, max_free, needs_layout, place_tree
from optsched.sim.compiled.heaps import key_less, q_pop, q_push, qless, rh_pop, rh_push, rh_top
from optsched.sim.compiled.jit import helper
from optsched.sim.compiled.layout import (
    ARR,
    BIG,
    CAP,
    CBLOCK,
    CCNT,
    CG,
    CLPOS,
    COFF,
    CSINGLE,
    CSORT,
    EX,
    EXMARK,
    F_NOW,
    FREE,
    G_C,
    G_KIND,
    G_LAS_TICK,
    G_LHN,
    G_MAXCAP,
    G_NCL,
    G_NRFREE,
    G_NUSAV,
    G_QN,
    G_RESERVE,
    G_RULE,
    G_S,
    G_STRICT,
    G_TOTFREE,
    G_WHOLEFREE,
    GPUS,
    HSTART,
    K_LAS,
    LOAD_HEAP,
    LOADING,
    PHASE,
    PLLEN,
    PLOFF,
    POPD,
    QJ,
    QKEY,
    RBAD,
    RFREE,
    SAVING,
    SINGLE,
    TOUCHED,
    TRAIN_HEAP,
    USAV,
    VDROP,
    VEC,
    VICT,
    WAITING,
    WHOLE_NODE,
)


@helper
def r5_started_now(jf, j, now):
    """R5: a job started at this very time is never a victim (the policies' ``_since``)."""
    return jf[j, HSTART] == now


@helper
def worst(jf, ji, gv, fv, rh, now):
    """_worst: the worst running job by the key (R4) over the training and loading heaps, or -1."""
    t = rh_top(ji, gv, rh, TRAIN_HEAP)
    lo = rh_top(ji, gv, rh, LOAD_HEAP) if gv[G_LHN] > 0 else -1
    if lo < 0:
        return t
    if t < 0:
        return lo
    a = run_value(jf, ji, gv, fv, t, now)
    b = run_value(jf, ji, gv, fv, lo, now)
    if a != b:
        return t if a > b else lo
    if jf[t, ARR] != jf[lo, ARR]:
        return t if jf[t, ARR] > jf[lo, ARR] else lo
    return t if t > lo else lo


# -- filling free GPUs ----------------------------------------------------------------------------------
@helper
def _pop_best(gv, cl, qh, limit, use_blocked):
    """WaitQueue.pop_best(fits, strict, limit), the classes blocked in this round skipped if use_blocked."""
    strict = gv[G_STRICT]
    best = -1
    bestc = -1
    glob = -1
    for c in range(gv[G_C]):
        if cl[c, CCNT] == 0:
            continue
        top = cl[c, COFF]  # the row of its best job
        if strict and (glob < 0 or qless(qh, top, glob)):
            glob = top
        if (
            (best < 0 or qless(qh, top, best))
            and cl[c, CG] <= limit
            and not (use_blocked and cl[c, CBLOCK])
            and fits_free(gv, cl[c, CG], cl[c, CSINGLE] != 0)
        ):
            best = top
            bestc = c
    if strict and glob >= 0 and (best < 0 or qless(qh, glob, best)):
        return -1
    if best < 0:
        return -1
    return q_pop(gv, cl, qh, bestc)


@helper
def fill(jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ev, pool, holds, stt, stg, lgt, lgi, use_blocked):
    """_QueuePolicy.schedule and Preemptive._fill_fast: start waiting jobs in key order while they
    fit (nothing claimed, nothing being saved).

    IN: none.
    OUT: jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ev, pool, holds, stt, stg, lgt, lgi."""
    now = fv[F_NOW]
    while gv[G_QN] > 0 and gv[G_TOTFREE] > 0:
        j = _pop_best(gv, cl, qh, gv[G_TOTFREE], use_blocked)
        if j < 0:
            break
        k = place_tree(gv, srv, tree, ji[j, GPUS], ji[j, SINGLE] != 0)
        if k == 0:
            return False
        launch(jf, jc, ji, gv, fv, srv, tree, rh, rr, ev, pool, holds, stt, stg, lgt, lgi, j, k, now)
    return True


@helper
def _head(gv, cl, qh):
    """WaitQueue.head(blocked): the class of the best waiting job whose class is not blocked, or -1."""
    best = -1
    bestc = -1
    for c in range(gv[G_C]):
        if cl[c, CCNT] == 0 or cl[c, CBLOCK]:
            continue
        top = cl[c, COFF]
        if best < 0 or qless(qh, top, best):
            best = top
            bestc = c
    return bestc


# -- R11 --------------------------------------------------------------------------------------------------
@helper
def _room_fits(gv, srv, g, single, layout, n_extra, need, n_touched):
    """Whether the candidate fits in the GPUs soon available plus the chosen victims' (srv EX)."""
    if not layout:
        return n_extra >= need
    if gv[G_NRFREE] == 0 and gv[G_NUSAV] == 0:  # the free GPUs plus the victims', by touched servers
        if gv[G_RULE] == WHOLE_NODE and not single and g > gv[G_MAXCAP]:
            tot = gv[G_WHOLEFREE]
            for a in range(n_touched):
                m = srv[a, TOUCHED]
                c = srv[m, CAP]
                f = srv[m, FREE]
                if f != c and f + srv[m, EX] == c:
                    tot += c
            return tot >= g
        if max_free(gv) >= g:
            return True
        for a in range(n_touched):
            m = srv[a, TOUCHED]
            if srv[m, FREE] + srv[m, EX] >= g:
                return True
        return False
    for m in range(gv[G_S]):
        srv[m, VEC] = srv[m, FREE] - srv[m, RFREE] + srv[m, USAV] + srv[m, EX]
    return fits_vec(gv, srv, VEC, g, single)


@helper
def _add_victim(ji, srv, pool, v, sign, n_touched):
    off = ji[v, PLOFF]
    for a in range(ji[v, PLLEN]):
        m = pool[off + a, 0]
        if not srv[m, EXMARK]:
            srv[m, EXMARK] = 1
            srv[n_touched, TOUCHED] = m
            n_touched += 1
        srv[m, EX] += sign * pool[off + a, 1]
    return n_touched


@helper
def make_room(jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ce, ev, pool, segf, segi, holds, stt, stg, lgt, lgi, cand):
    """_make_room (R11): preempt strictly worse running jobs, worst first (R4), none started at this
    very time (R5), until ``cand`` would fit in its soon-available GPUs plus theirs; drop the victims
    not needed, best first; preempt them (R2); start ``cand`` or let it claim their GPUs.
    Returns 1 (done), 0 (cannot fit: nothing done) or -1 (internal error).

    IN: none.
    OUT: jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ce, ev, pool, segf, segi, holds, stt, stg, lgt, lgi."""
    now = fv[F_NOW]
    bound = jf[cand, QKEY]
    g = ji[cand, GPUS]
    single = ji[cand, SINGLE] != 0
    layout = needs_layout(gv, single)
    need = g - (gv[G_TOTFREE] - gv[G_NRFREE] + gv[G_NUSAV])  # GPUs the victims must bring
    n_extra = 0
    n_touched = 0
    nv = 0
    npop = 0
    ok = True
    while not _room_fits(gv, srv, g, single, layout, n_extra, need, n_touched):
        w = worst(jf, ji, gv, fv, rh, now)
        if w < 0 or not (bound < run_value(jf, ji, gv, fv, w, now)):
            ok = False
            break
        rh_pop(gv, rh, LOAD_HEAP if ji[w, PHASE] == LOADING else TRAIN_HEAP)
        rr[npop, POPD] = w
        npop += 1
        if r5_started_now(jf, w, now):
            continue
        rr[nv, VICT] = w
        rr[nv, VDROP] = 0
        nv += 1
        if layout:
            n_touched = _add_victim(ji, srv, pool, w, 1, n_touched)
        n_extra += ji[w, GPUS]
    if ok and nv > 1:
        for i in range(nv - 1, -1, -1):  # drop the victims not needed, best first
            v = rr[i, VICT]
            if layout:
                _add_victim(ji, srv, pool, v, -1, n_touched)
            n_extra -= ji[v, GPUS]
            if _room_fits(gv, srv, g, single, layout, n_extra, need, n_touched):
                rr[i, VDROP] = 1
            else:
                if layout:
                    _add_victim(ji, srv, pool, v, 1, n_touched)
                n_extra += ji[v, GPUS]
    for a in range(n_touched):
        m = srv[a, TOUCHED]
        srv[m, EX] = 0
        srv[m, EXMARK] = 0
    for a in range(npop):  # every running job taken off the heaps and not preempted goes back
        w = rr[a, POPD]
        chosen = False
        if ok:
            for i in range(nv):
                if rr[i, VICT] == w and not rr[i, VDROP]:
                    chosen = True
                    break
        if not chosen:
            rh_push(jf, ji, gv, rh, LOAD_HEAP if ji[w, PHASE] == LOADING else TRAIN_HEAP, w, jf[w, RBAD])
    if not ok:
        return 0
    for i in range(nv):  # worst first
        if rr[i, VDROP]:
            continue
        v = rr[i, VICT]
        preempt(jf, jc, ji, gv, fv, srv, tree, rr, ev, pool, segf, segi, holds, stt, stg, lgt, lgi, v, now)
        if ji[v, PHASE] == SAVING:  # its GPUs are free when its save (or lost load) ends
            add_saving(ji, gv, srv, rr, ce, pool, v)
        elif ji[v, PHASE] == WAITING:  # nothing to save: it competes again in this very round
            jf[v, QKEY] = wait_value(jf, ji, gv, v)
            q_push(jf, ji, gv, cl, qh, v)
    started = try_start(jf, jc, ji, gv, fv, srv, tree, rh, rr, ev, pool, holds, stt, stg, lgt, lgi, cand, now)
    if not started and not claim(ji, gv, srv, tree, rr, ce, cand, nv):
        return -1
    return 1


# -- the round ----------------------------------------------------------------------------------------------
@helper
def preemptive_round(
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
    may_preempt,
):
    """Preemptive._round: the waiting jobs (and the jobs holding a claim) in key order; R8-R12.
    False on an internal error.

    IN: none.
    OUT: jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ce, ev, pool, segf, segi, holds, stt, stg, lgt, lgi."""
    now = fv[F_NOW]
    strict = gv[G_STRICT]
    nc = gv[G_C]
    for c in range(nc):
        cl[c, CBLOCK] = 0
    n_blocked = 0
    fill_now = not may_preempt
    fail_any = BIG
    fail_single = BIG
    ncl = sort_claimants(jf, gv, rr) if gv[G_NCL] > 0 else 0
    ci = 0
    plain = gv[G_NRFREE] == 0
    while gv[G_QN] > 0 or ci < ncl:
        if fill_now and plain and ci == ncl and gv[G_NUSAV] == 0:
            return fill(
                jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ev, pool, holds, stt, stg, lgt, lgi, n_blocked > 0
            )
        c = _head(gv, cl, qh) if gv[G_QN] > 0 else -1
        j = np.int64(qh[cl[c, COFF], QJ]) if c >= 0 else -1
        if ci < ncl:
            cj = rr[ci, CSORT]
            if j < 0 or key_less(jf, cj, j):  # R8 for a job holding a claim, else R9: it waits
                ci += 1
                if ji[cj, CLPOS] >= 0:
                    try_start_claimant(
                        jf, jc, ji, gv, fv, srv, tree, rh, rr, ce, ev, pool, holds, stt, stg, lgt, lgi, cj, now
                    )
                    plain = gv[G_NRFREE] == 0
                continue
        if j < 0:
            break
        g = ji[j, GPUS]
        sg = ji[j, SINGLE] != 0
        if plain:
            if fits_free(gv, g, sg):  # R8
                q_pop(gv, cl, qh, c)
                k = place_tree(gv, srv, tree, g, sg)
                if k == 0:
                    return False
                launch(jf, jc, ji, gv, fv, srv, tree, rh, rr, ev, pool, holds, stt, stg, lgt, lgi, j, k, now)
                continue
        elif fits_avail(gv, srv, g, sg, False):  # R8
            q_pop(gv, cl, qh, c)
            if not try_start(jf, jc, ji, gv, fv, srv, tree, rh, rr, ev, pool, holds, stt, stg, lgt, lgi, j, now):
                return False
            continue
        layout = needs_layout(gv, sg)
        tried = g < fail_any and not (layout and g >= fail_single)
        if tried and gv[G_NUSAV] > 0 and fits_avail(gv, srv, g, sg, True):  # R10
            q_pop(gv, cl, qh, c)
            if not claim(ji, gv, srv, tree, rr, ce, j, 0):
                return False
            plain = False
            continue
        if not fill_now:
            w = worst(jf, ji, gv, fv, rh, now)
            if w < 0 or not (jf[j, QKEY] < run_value(jf, ji, gv, fv, w, now)):
                fill_now = True  # no running job is worse than this job, nor than any job after it
            elif tried:
                q_pop(gv, cl, qh, c)
                r = make_room(
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
                )
                if r < 0:
                    return False
                if r > 0:
                    plain = gv[G_NRFREE] == 0
                    if n_blocked > 0 and gv[G_TOTFREE] > gv[G_NRFREE]:  # the jobs passed over may fit now (R12)
                        for c2 in range(nc):
                            cl[c2, CBLOCK] = 0
                        n_blocked = 0
                        fail_any = BIG
                        fail_single = BIG
                    continue
                q_push(jf, ji, gv, cl, qh, j)
        if tried:
            if layout:
                fail_single = min(fail_single, g)
            else:
                fail_any = min(fail_any, g)
        if not cl[c, CBLOCK]:  # R12: a worse job of its class cannot get in where it could not
            cl[c, CBLOCK] = 1
            n_blocked += 1
        if strict:
            break
    return True


@helper
def preemptive_schedule(
    jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ce, ev, pool, segf, segi, holds, stt, stg, lgt, lgi
):
    """Preemptive.schedule: one decision round (R7-R12). False on an internal error.

    IN: none.
    OUT: jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ce, ev, pool, segf, segi, holds, stt, stg, lgt, lgi."""
    if gv[G_NCL] > 0 and gv[G_RESERVE] == 0:  # R7, reserve="best"
        drop_claims(jf, ji, gv, srv, cl, qh, rr, ce)
    if gv[G_QN] == 0 and gv[G_NCL] == 0:
        return True
    may = True
    if gv[G_KIND] == K_LAS:  # preempt only in the first round with a waiting job at/after a tick
        may = gv[G_LAS_TICK] != 0
        gv[G_LAS_TICK] = 0
    if not may and gv[G_NCL] == 0 and gv[G_NUSAV] == 0:
        return fill(jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ev, pool, holds, stt, stg, lgt, lgi, False)
    return preemptive_round(
        jf, jc, ji, gv, fv, srv, tree, cl, qh, rh, rr, ce, ev, pool, segf, segi, holds, stt, stg, lgt, lgi, may
    )


@helper
def start_claimants(jf, jc, ji, gv, fv, srv, tree, rh, rr, ce, ev, pool, holds, stt, stg, lgt, lgi):
    """_start_claimants: R8 for the jobs holding a claim only, in key order (periodic SRTF between
    ticks).

    IN: none.
    OUT: jf, jc, ji, gv, fv, srv, tree, rh, rr, ce, ev, pool, holds, stt, stg, lgt, lgi."""
    now = fv[F_NOW]
    n = sort_claimants(jf, gv, rr)
    for a in range(n):
        c = rr[a, CSORT]
        if ji[c, CLPOS] >= 0:
            try_start_claimant(jf, jc, ji, gv, fv, srv, tree, rh, rr, ce, ev, pool, holds, stt, stg, lgt, lgi, c, now)
