"""The compiled kernel's heaps (numba): waiting jobs per class, running jobs, events.

All three are 4-ary min- or max-heaps (the children of row i are rows 4i + 1 to 4i + 4, next to
each other in memory): half as deep as binary heaps, so a push or a pop touches half as many cache
lines, which is what a replay of 100,000 jobs on 6,000 GPUs waits for. Every key is unique, so the
order in which rows come out does not depend on the heap's shape: it is the Python engine's.

- Waiting jobs: one heap per (GPU demand, single-server) class in the rows of ``qh`` (value,
  arrival, index), as :class:`~optsched.sim.WaitQueue`; the last row is scratch.
- Running jobs: two max-heaps in ``rh[h]`` (h = 0: training jobs by badness, the policies'
  ``_train``; h = 1: loading jobs by value, their ``_loading``), rows (key, arrival, index,
  version at the push); a row is stale once its job left that phase or started again (deleted
  lazily, and all at once when they are more than half of the heap); the last row of each is scratch.
- Events: rows (time, kind << 48 | sequence, job or timer, version) of ``ev`` (floats: every
  integer here is below 2**53), ordered by time then key. As in the Python engine a cancelled event
  stays in the heap, stale, and is skipped when its time comes; unlike there, the stale rows are
  dropped when they are more than half of the heap (:func:`ev_compact`), so that it stays about as
  small as the number of running jobs.
"""

from __future__ import annotations

import numpy as np

from optsched.sim.compiled.jit import helper
from optsched.sim.compiled.layout import (
    ARR,
    CCNT,
    CLS,
    COFF,
    EK,
    EOBJ,
    ET,
    EVER,
    F_STALE,
    F_STOP,
    G_EHN,
    G_EV_SLACK,
    G_KIND,
    G_NEV,
    G_NSTALE,
    G_QN,
    G_RH_SLACK,
    G_RHN,
    G_RUNN,
    G_SEQ,
    G_TIMER_ID,
    G_TIMER_ON,
    HA,
    HB,
    HJ,
    HV,
    K_LAZER,
    LOAD_HEAP,
    LOADING,
    P_LOADED,
    P_SAVED,
    P_STAGE,
    P_TIMER,
    PHASE,
    QA,
    QJ,
    QK,
    QKEY,
    SAVING,
    SEQ_BITS,
    TRAINING,
    VER,
)


# -- waiting jobs: one heap per class, rows (value, arrival, index) of qh ---------------------------
@helper
def qless(qh, r1, r2):
    a = qh[r1, QK]
    b = qh[r2, QK]
    if a != b:
        return a < b
    a = qh[r1, QA]
    b = qh[r2, QA]
    if a != b:
        return a < b
    return qh[r1, QJ] < qh[r2, QJ]


@helper
def _qcopy(qh, dst, src):
    qh[dst, QK] = qh[src, QK]
    qh[dst, QA] = qh[src, QA]
    qh[dst, QJ] = qh[src, QJ]


@helper
def key_less(jf, a, b):
    """Whether waiting job a's key (value, arrival, index) is below b's."""
    x = jf[a, QKEY]
    y = jf[b, QKEY]
    if x != y:
        return x < y
    x = jf[a, ARR]
    y = jf[b, ARR]
    if x != y:
        return x < y
    return a < b


@helper
def q_push(jf, ji, gv, cl, qh, j):
    """Queue waiting job j with the key in jf QKEY (the last row of qh is scratch)."""
    c = ji[j, CLS]
    off = cl[c, COFF]
    i = cl[c, CCNT]
    cl[c, CCNT] = i + 1
    x = len(qh) - 1
    qh[x, QK] = jf[j, QKEY]
    qh[x, QA] = jf[j, ARR]
    qh[x, QJ] = j
    while i > 0:
        p = (i - 1) >> 2
        if qless(qh, x, off + p):
            _qcopy(qh, off + i, off + p)
            i = p
        else:
            break
    _qcopy(qh, off + i, x)
    gv[G_QN] += 1


@helper
def q_pop(gv, cl, qh, c):
    """Remove and return the best waiting job of class c."""
    off = cl[c, COFF]
    cnt = cl[c, CCNT] - 1
    cl[c, CCNT] = cnt
    top = np.int64(qh[off, QJ])
    if cnt > 0:
        last = off + cnt
        i = 0
        while True:
            first = 4 * i + 1
            if first >= cnt:
                break
            m = first
            for k in range(first + 1, min(first + 4, cnt)):
                if qless(qh, off + k, off + m):
                    m = k
            if qless(qh, off + m, last):
                _qcopy(qh, off + i, off + m)
                i = m
            else:
                break
        _qcopy(qh, off + i, last)
    gv[G_QN] -= 1
    return top


# -- running jobs: max-heaps of rows (key, arrival, index, version) of rh[h] -----------------------------
@helper
def _rworse(r, a, b):
    x = r[a, HB]
    y = r[b, HB]
    if x != y:
        return x > y
    x = r[a, HA]
    y = r[b, HA]
    if x != y:
        return x > y
    return r[a, HJ] > r[b, HJ]


@helper
def _rcopy(r, dst, src):
    r[dst, HB] = r[src, HB]
    r[dst, HA] = r[src, HA]
    r[dst, HJ] = r[src, HJ]
    r[dst, HV] = r[src, HV]


@helper
def _rh_sift_up(r, i, x):
    """Put row x (scratch) at position i, sifting up."""
    while i > 0:
        p = (i - 1) >> 2
        if _rworse(r, x, p):
            _rcopy(r, i, p)
            i = p
        else:
            break
    _rcopy(r, i, x)


@helper
def rh_pop(gv, rh, h):
    """Remove the top row of heap h."""
    r = rh[h]
    n = gv[G_RHN + h] - 1
    gv[G_RHN + h] = n
    if n == 0:
        return
    i = 0
    while True:
        first = 4 * i + 1
        if first >= n:
            break
        m = first
        for k in range(first + 1, min(first + 4, n)):
            if _rworse(r, k, m):
                m = k
        if _rworse(r, m, n):
            _rcopy(r, i, m)
            i = m
        else:
            break
    _rcopy(r, i, n)


@helper
def _rh_live(ji, r, h, k):
    j = np.int64(r[k, HJ])
    return ji[j, PHASE] == (LOADING if h == LOAD_HEAP else TRAINING) and ji[j, VER] == np.int64(r[k, HV])


@helper
def rh_top(ji, gv, rh, h):
    """The worst job of heap h (stale rows above it dropped), or -1."""
    r = rh[h]
    while gv[G_RHN + h] > 0:
        if _rh_live(ji, r, h, 0):
            return np.int64(r[0, HJ])
        rh_pop(gv, rh, h)
    return -1


@helper
def rh_push(jf, ji, gv, rh, h, j, key):
    """Push running job j into heap h with ``key``; drop the stale rows when they are most of it."""
    r = rh[h]
    n = gv[G_RHN + h]
    if n >= 2 * gv[G_RUNN] + gv[G_RH_SLACK]:  # (live rows are at most one per job holding GPUs)
        k = 0
        for q in range(n):
            if _rh_live(ji, r, h, q):
                _rcopy(r, k, q)
                k += 1
        gv[G_RHN + h] = 0
        x = r.shape[0] - 1
        for q in range(k):  # heapify by pushes
            _rcopy(r, x, q)
            _rh_sift_up(r, gv[G_RHN + h], x)
            gv[G_RHN + h] += 1
        n = k
    x = r.shape[0] - 1
    r[x, HB] = key
    r[x, HA] = jf[j, ARR]
    r[x, HJ] = j
    r[x, HV] = ji[j, VER]
    gv[G_RHN + h] = n + 1
    _rh_sift_up(r, n, x)


# -- events: rows (time, key, object, version) of ev, by (time, key) -------------------------------------
@helper
def _ev_less(ev, a, b):
    return ev[a, ET] < ev[b, ET] or (ev[a, ET] == ev[b, ET] and ev[a, EK] < ev[b, EK])


@helper
def _ev_copy(ev, dst, src):
    ev[dst, ET] = ev[src, ET]
    ev[dst, EK] = ev[src, EK]
    ev[dst, EOBJ] = ev[src, EOBJ]
    ev[dst, EVER] = ev[src, EVER]


@helper
def _ev_down(ev, n, i, x):
    """Put row x at position i of a heap of n rows, sifting down."""
    while True:
        first = 4 * i + 1
        if first >= n:
            break
        m = first
        for k in range(first + 1, min(first + 4, n)):
            if _ev_less(ev, k, m):
                m = k
        if _ev_less(ev, m, x):
            _ev_copy(ev, i, m)
            i = m
        else:
            break
    _ev_copy(ev, i, x)


@helper
def ev_kind(ev, r):
    """The kind (P_*) of heap row r."""
    return np.int64(ev[r, EK]) >> SEQ_BITS


@helper
def ev_live(ji, gv, ev, r):
    """Whether heap row r is a real event (not a stopped job's completion, load end or save end, nor
    a cancelled timer): the engine's handlers' test."""
    kind = ev_kind(ev, r)
    obj = np.int64(ev[r, EOBJ])
    if kind == P_TIMER:  # Lazer's deferral timers are never cancelled
        return gv[G_KIND] == K_LAZER or (obj == gv[G_TIMER_ID] and gv[G_TIMER_ON] != 0)
    if np.int64(ev[r, EVER]) != ji[obj, VER]:
        return False
    if kind == P_SAVED:
        return ji[obj, PHASE] == SAVING
    if kind == P_LOADED:
        return ji[obj, PHASE] == LOADING
    return kind == P_STAGE


@helper
def ev_compact(ji, gv, fv, ev):
    """Drop the stale rows. The Python engine pops each of them when its time comes: they are
    counted as (stale) events now, and the latest of them up to ``until`` is kept (the clock of a
    run that stops unfinished passes it)."""
    n = gv[G_EHN]
    k = 0
    for r in range(n):
        if ev_live(ji, gv, ev, r):
            _ev_copy(ev, k, r)
            k += 1
        else:
            gv[G_NEV] += 1
            gv[G_NSTALE] += 1
            if ev[r, ET] <= fv[F_STOP] and ev[r, ET] > fv[F_STALE]:
                fv[F_STALE] = ev[r, ET]
    x = ev.shape[0] - 1
    for i in range((k - 2) // 4, -1, -1):  # heapify (from the last parent up)
        _ev_copy(ev, x, i)
        _ev_down(ev, k, i, x)
    gv[G_EHN] = k


@helper
def ev_push(ji, gv, fv, ev, t, kind, obj, ver):
    """Push an event; the last row of ev is scratch."""
    if gv[G_EHN] >= 2 * gv[G_RUNN] + gv[G_EV_SLACK]:  # (live events: one per job holding GPUs, a timer)
        ev_compact(ji, gv, fv, ev)
    gv[G_SEQ] += 1
    k = float((kind << SEQ_BITS) | gv[G_SEQ])
    i = gv[G_EHN]
    gv[G_EHN] = i + 1
    while i > 0:
        p = (i - 1) >> 2
        tp = ev[p, ET]
        if t < tp or (t == tp and k < ev[p, EK]):
            _ev_copy(ev, i, p)
            i = p
        else:
            break
    ev[i, ET] = t
    ev[i, EK] = k
    ev[i, EOBJ] = obj
    ev[i, EVER] = ver


@helper
def ev_pop(gv, ev):
    """Remove the top row (read it before)."""
    n = gv[G_EHN] - 1
    gv[G_EHN] = n
    if n > 0:
        _ev_down(ev, n, 0, n)
