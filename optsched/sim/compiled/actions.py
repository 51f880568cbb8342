"""The engine's actions in the compiled kernel (numba): start, load, train, preempt, save, release,
complete, and what a job's priority is.

Each function copies the floating-point operations of its counterpart in
:class:`~optsched.sim.Simulator` (``_launch``, ``_begin_training``, ``preempt`` with ``_stop`` and
``_after_stop``, ``_release_after_save``, ``_load_end``, ``_stage_end``, ``_release``), so that both
engines give the same times to the last bit, and keeps the event log the engine keeps
(``record_log``): the same rows in the same order.
"""

from __future__ import annotations

import numpy as np

from optsched.sim.compiled.gpus import set_free
from optsched.sim.compiled.heaps import ev_push, rh_push
from optsched.sim.compiled.jit import helper
from optsched.sim.compiled.layout import (
    ARR,
    COMP,
    DONE,
    DONE_W,
    F_RATE,
    FIRST,
    FREE,
    FUT,
    G_FINISH,
    G_GPUW,
    G_KIND,
    G_LEVEL,
    G_LOG,
    G_NFIN,
    G_NHOLD,
    G_NLOG,
    G_NOTICES,
    G_NSEG,
    G_NSTEP,
    G_POOL,
    G_RECORD,
    G_ROLLBACK,
    G_RUNN,
    G_SEQ,
    G_TIMER_ID,
    G_TIMER_ON,
    G_TOTFREE,
    GPUS,
    HSTART,
    K_FIFO,
    K_LAS,
    K_LAZER,
    K_SJF,
    L_ARRIVAL,
    L_COMPLETE,
    L_FINISH_LOAD,
    L_PREEMPT,
    L_SAVED,
    L_START,
    L_TRAIN,
    LAST_LOAD,
    LOAD_HEAP,
    LOAD_S,
    LOADING,
    LOADT,
    LOG_JOB_BITS,
    LOG_KIND_BITS,
    LOST,
    NFUT,
    NPRE,
    P_LOADED,
    P_SAVED,
    P_STAGE,
    P_TIMER,
    PHASE,
    PLLEN,
    PLOFF,
    RBAD,
    RUNL,
    RUNPOS,
    SAVE_S,
    SAVET,
    SAVING,
    SJ,
    SLEN,
    SOFF,
    TMPG,
    TMPM,
    TRAIN,
    TRAIN_HEAP,
    TRAINING,
    TSTART,
    VER,
    WAITING,
    WORK,
)


@helper
def log_row(gv, lgt, lgi, t, kind, j, a):
    """One row of the event log (if it is kept)."""
    if gv[G_LOG]:
        k = gv[G_NLOG]
        lgt[k] = t
        lgi[k] = kind | (np.int64(j) << LOG_KIND_BITS) | (np.int64(a) << (LOG_KIND_BITS + LOG_JOB_BITS))
        gv[G_NLOG] = k + 1


@helper
def step(gv, stt, stg, now, dg):
    """GPUs in use change by dg at ``now``: one step per time (the level after every change)."""
    gv[G_LEVEL] += dg
    k = gv[G_NSTEP]
    if k > 0 and stt[k - 1] == now:
        stg[k - 1] = gv[G_LEVEL]
    else:
        stt[k] = now
        stg[k] = gv[G_LEVEL]
        gv[G_NSTEP] = k + 1


@helper
def done_work(jf, ji, fv, j, now):
    """SimJob.done_work at ``now``."""
    if ji[j, PHASE] != TRAINING:
        return jf[j, DONE_W]
    d = jf[j, DONE_W] + fv[F_RATE] * (now - jf[j, TSTART])
    w = jf[j, WORK]
    return d if d < w else w


@helper
def run_value(jf, ji, gv, fv, j, now):
    """The policy's value of a running job (_run_value): remaining work (SRTF) or attained service
    (LAS), in the units of a waiting job's key."""
    kind = gv[G_KIND]
    if kind == K_LAS:
        a = done_work(jf, ji, fv, j, now)
        return a * ji[j, GPUS] if gv[G_GPUW] else a
    return jf[j, WORK] - done_work(jf, ji, fv, j, now)


@helper
def wait_value(jf, ji, gv, j):
    """The first element of a waiting job's key."""
    kind = gv[G_KIND]
    if kind == K_FIFO:
        return jf[j, ARR]
    if kind == K_SJF:
        return jf[j, WORK]
    if kind == K_LAS:
        a = jf[j, DONE_W]
        return a * ji[j, GPUS] if gv[G_GPUW] else a
    return jf[j, WORK] - jf[j, DONE_W]


@helper
def push_running(jf, ji, gv, fv, rh, j, now):
    """Preemptive._push_running: a loading job into the loading heap by value, a training one into
    the training heap by badness (SRTF: predicted end; LAS: attained service minus elapsed time)."""
    kind = gv[G_KIND]
    if kind <= K_SJF or kind == K_LAZER:  # (Lazer's orchestrator reads the running jobs' list)
        return
    if ji[j, PHASE] == LOADING:
        key = run_value(jf, ji, gv, fv, j, now)
        jf[j, RBAD] = key
        rh_push(jf, ji, gv, rh, LOAD_HEAP, j, key)
        return
    if kind == K_LAS:
        a = done_work(jf, ji, fv, j, now)
        if gv[G_GPUW]:
            g = ji[j, GPUS]
            key = a * g - now * g
        else:
            key = a - now * 1.0
    else:
        key = now + (jf[j, WORK] - done_work(jf, ji, fv, j, now)) / fv[F_RATE]
    jf[j, RBAD] = key
    rh_push(jf, ji, gv, rh, TRAIN_HEAP, j, key)


@helper
def set_timer(ji, gv, fv, ev, t):
    """A policy's periodic timer, first firing at t (a new id; the previous timer is off)."""
    gv[G_TIMER_ID] += 1
    gv[G_TIMER_ON] = 1
    ev_push(ji, gv, fv, ev, t, P_TIMER, gv[G_TIMER_ID], 0)


@helper
def begin_training(jf, ji, gv, fv, ev, lgt, lgi, j, now):
    """Simulator._begin_training: train from now; its completion is an event."""
    ji[j, PHASE] = TRAINING
    jf[j, TSTART] = now
    log_row(gv, lgt, lgi, now, L_TRAIN, j, 0)
    ji[j, VER] += 1
    ev_push(ji, gv, fv, ev, now + (jf[j, WORK] - jf[j, DONE_W]) / fv[F_RATE], P_STAGE, j, ji[j, VER])


@helper
def launch(jf, jc, ji, gv, fv, srv, tree, rh, rr, ev, pool, holds, stt, stg, lgt, lgi, j, k, now):
    """Simulator.start + _launch on the placement in srv[:k, TMPM/TMPG] (in the order of the
    engine's dict), and the policy's _push_running.

    IN: none.
    OUT: jf, jc, ji, gv, fv, srv, tree, rh, rr, ev, pool, holds, stt, stg, lgt, lgi."""
    g = ji[j, GPUS]
    if gv[G_RECORD]:
        h = gv[G_NHOLD]
        holds[h] = j
        gv[G_NHOLD] = h + 1
    off = gv[G_POOL]
    for a in range(k):
        m = srv[a, TMPM]
        ga = srv[a, TMPG]
        pool[off + a, 0] = m
        pool[off + a, 1] = ga
        set_free(gv, srv, tree, m, srv[m, FREE] - ga)
    gv[G_POOL] = off + k
    gv[G_TOTFREE] -= g
    ji[j, PLOFF] = off
    ji[j, PLLEN] = k
    if np.isnan(jc[j, FIRST]):
        jc[j, FIRST] = now
    jf[j, HSTART] = now
    r = gv[G_RUNN]
    rr[r, RUNL] = j
    ji[j, RUNPOS] = r
    gv[G_RUNN] = r + 1
    log_row(gv, lgt, lgi, now, L_START, j, off)
    step(gv, stt, stg, now, g)
    load = jf[j, LOAD_S]
    jc[j, LAST_LOAD] = 0.0
    if load > 0:
        ji[j, PHASE] = LOADING
        jf[j, TSTART] = now
        ji[j, VER] += 1
        ev_push(ji, gv, fv, ev, now + load, P_LOADED, j, ji[j, VER])
    else:
        begin_training(jf, ji, gv, fv, ev, lgt, lgi, j, now)
    push_running(jf, ji, gv, fv, rh, j, now)


@helper
def release(jf, ji, gv, srv, tree, rr, pool, segf, segi, holds, stt, stg, j, now):
    """Simulator._release: record the segment, free the GPUs.

    IN: jf, pool.
    OUT: ji, gv, srv, tree, rr, segf, segi, holds, stt, stg."""
    off = ji[j, PLOFF]
    k = ji[j, PLLEN]
    if gv[G_RECORD]:
        n = gv[G_NSEG]
        segi[n, SJ] = j
        segf[n, 0] = jf[j, HSTART]
        segf[n, 1] = now
        segi[n, SOFF] = off
        segi[n, SLEN] = k
        gv[G_NSEG] = n + 1
        h = gv[G_NHOLD]
        holds[h] = ~j
        gv[G_NHOLD] = h + 1
    g = 0
    for a in range(k):
        m = pool[off + a, 0]
        ga = pool[off + a, 1]
        set_free(gv, srv, tree, m, srv[m, FREE] + ga)
        g += ga
    gv[G_TOTFREE] += g
    r = ji[j, RUNPOS]
    last = rr[gv[G_RUNN] - 1, RUNL]
    rr[r, RUNL] = last
    ji[last, RUNPOS] = r
    gv[G_RUNN] -= 1
    ji[j, RUNPOS] = -1
    step(gv, stt, stg, now, -ji[j, GPUS])


@helper
def release_after_save(jf, jc, ji, gv, srv, tree, rr, pool, segf, segi, holds, stt, stg, lgt, lgi, j, now):
    """Simulator._release_after_save: the save (or lost load) ended, the GPUs are free, it waits.

    IN: jf, pool.
    OUT: jc, ji, gv, srv, tree, rr, segf, segi, holds, stt, stg, lgt, lgi."""
    jc[j, SAVET] += now - jf[j, TSTART]
    release(jf, ji, gv, srv, tree, rr, pool, segf, segi, holds, stt, stg, j, now)
    ji[j, PHASE] = WAITING
    log_row(gv, lgt, lgi, now, L_SAVED, j, 0)


@helper
def preempt(jf, jc, ji, gv, fv, srv, tree, rr, ev, pool, segf, segi, holds, stt, stg, lgt, lgi, v, now):
    """Simulator.preempt of a loading or training job (R2). With nothing to save its GPUs are free
    at once and a notice follows as an event at this time (counted in G_NOTICES); else it saves
    (or, preempt_loading="finish", its load runs on) and a save end is an event.

    IN: pool.
    OUT: jf, jc, ji, gv, fv, srv, tree, rr, ev, segf, segi, holds, stt, stg, lgt, lgi."""
    if ji[v, PHASE] == LOADING and gv[G_FINISH]:  # the load runs on, then is lost whole
        end = jf[v, TSTART] + jf[v, LOAD_S]  # the engine's _load_end
        d = end - jf[v, TSTART]
        jc[v, LOADT] += d
        jc[v, FUT] += d
        ji[v, NFUT] += 1
        ji[v, NPRE] += 1
        ji[v, VER] += 1
        ji[v, PHASE] = SAVING
        jf[v, TSTART] = end
        ev_push(ji, gv, fv, ev, end, P_SAVED, v, ji[v, VER])
        log_row(gv, lgt, lgi, now, L_FINISH_LOAD, v, 0)
        return
    # _stop
    was_training = False
    if ji[v, PHASE] == LOADING:
        d = now - jf[v, TSTART]
        jc[v, LOADT] += d
        jc[v, FUT] += d
        ji[v, NFUT] += 1
    else:
        just_loaded = now == jf[v, TSTART] and jc[v, LAST_LOAD] > 0
        if just_loaded:  # no training since its load: the whole load is futile (eq. (2))
            jc[v, FUT] += jc[v, LAST_LOAD]
            ji[v, NFUT] += 1
        was_training = not just_loaded
        d = jf[v, DONE_W] + fv[F_RATE] * (now - jf[v, TSTART])
        w = jf[v, WORK]
        jf[v, DONE_W] = d if d < w else w  # min(d, stages[stage])
        jc[v, TRAIN] += now - jf[v, TSTART]
        if gv[G_ROLLBACK]:
            jc[v, LOST] += jf[v, DONE_W] - 0.0
            jf[v, DONE_W] = 0.0
    ji[v, VER] += 1
    ji[v, NPRE] += 1
    log_row(gv, lgt, lgi, now, L_PREEMPT, v, gv[G_ROLLBACK])
    # _after_stop
    save = jc[v, SAVE_S] if was_training else 0.0
    ji[v, PHASE] = SAVING
    jf[v, TSTART] = now
    if save > 0:
        ev_push(ji, gv, fv, ev, now + save, P_SAVED, v, ji[v, VER])
    else:
        release_after_save(jf, jc, ji, gv, srv, tree, rr, pool, segf, segi, holds, stt, stg, lgt, lgi, v, now)
        gv[G_SEQ] += 1
        gv[G_NOTICES] += 1  # its notice: the engine's event (now, saved, seq), counted only (see kernel)


@helper
def load_end(jf, jc, ji, gv, fv, rh, ev, lgt, lgi, j, t):
    """Simulator._load_end (the load ended: it trains) and the policy's on_loaded.

    IN: none.
    OUT: jf, jc, ji, gv, fv, rh, ev, lgt, lgi."""
    jc[j, LAST_LOAD] = t - jf[j, TSTART]
    jc[j, LOADT] += jc[j, LAST_LOAD]
    begin_training(jf, ji, gv, fv, ev, lgt, lgi, j, t)
    push_running(jf, ji, gv, fv, rh, j, t)


@helper
def complete(jf, jc, ji, gv, srv, tree, rr, pool, segf, segi, holds, stt, stg, lgt, lgi, j, t):
    """Simulator._stage_end of a job's last stage: it is done.

    IN: pool.
    OUT: jf, jc, ji, gv, srv, tree, rr, segf, segi, holds, stt, stg, lgt, lgi."""
    jf[j, DONE_W] = jf[j, WORK]
    jc[j, TRAIN] += t - jf[j, TSTART]
    ji[j, PHASE] = DONE
    jc[j, COMP] = t
    release(jf, ji, gv, srv, tree, rr, pool, segf, segi, holds, stt, stg, j, t)
    ji[j, VER] += 1
    gv[G_NFIN] += 1
    log_row(gv, lgt, lgi, t, L_COMPLETE, j, 1)


@helper
def arrive_log(gv, lgt, lgi, j, t):
    log_row(gv, lgt, lgi, t, L_ARRIVAL, j, 0)
