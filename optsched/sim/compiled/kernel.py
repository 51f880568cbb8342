"""The compiled simulator core: FIFO, SJF, SRTF and LAS on GPU-only, constant-rate jobs (numba).

This module imports numba; nothing imports it unless the compiled engine runs
(:mod:`optsched.sim.compiled.driver` decides, builds the arrays and the result). It replays exactly what
:class:`~optsched.sim.Simulator` does with those policies (the Python engine is the reference; a
hypothesis test compares the two job by job): the same event order at equal times, the same
decision rounds (rules R3-R12 of ``formulations/lazer.md`` for the preemptive policies: with no
load and no save time no job is ever saving, so no claim ever exists), the same placements and the
same floating-point operations.

State is a structure of arrays (:class:`State`; every array's columns are named by the constants
below):

- ``jf`` / ``ji``: one row per job, its float and integer fields (arrival, work, key, progress,
  times; GPUs, class, phase, version, placement, heap positions), and two per-position columns
  (``ORDER``: the jobs by arrival);
- ``gv`` / ``fv``: scalars, the run's parameters and the count of servers per number of free GPUs;
- ``srv`` (one row per server: capacity, free GPUs, scratch) and ``tree``, a segment tree of bit
  masks (bit f: a server below has f free GPUs) for placement queries in O(log servers);
- ``cl``: one binary heap of waiting jobs per (GPU demand, single-server) class, keyed (value,
  arrival, position) as :class:`~optsched.sim.WaitQueue`;
- ``rr``: an indexed max-heap of the running jobs keyed as the policies' running-job heaps, the
  list of running jobs and the victim search's scratch;
- ``evt`` / ``evi``: a binary heap of events keyed (time, kind << 56 | sequence);
- growing buffers: ``pool`` (the placements), ``segf`` / ``segi`` / ``holds`` (segments and the
  order of starts and releases, if recorded), ``stt`` / ``stg`` (GPUs in use over time).

Helpers take the arrays they use one by one (numba increfs every member of a tuple at each call,
about 55 ns per array, which made a first version slower than the Python engine), and the arrays
are unmanaged views (:func:`_unmanaged`: no reference count, so a call costs no atomic
operations; the driver keeps the arrays alive while the kernel runs).
:func:`run_chunk` returns after ``budget`` event times, or when a growing buffer may lack room
for one more event time; the driver grows it and calls again (so a run can also show progress
and be interrupted).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import carray, njit, types
from numba.extending import intrinsic

# phases, in the order of optsched.sim.state.PHASES
PENDING, WAITING, TRAINING, DONE = 0, 1, 3, 5
# policies
FIFO, SJF, SRTF, LAS = 0, 1, 2, 3
# placement rules
CONSOLIDATE, FIRST_FIT, LEAST_LOADED, WHOLE_NODE = 0, 1, 2, 3
# event kinds (the engine's priorities at equal times)
P_STAGE, P_SAVED, P_ARRIVAL, P_TIMER = 0, 1, 3, 4
SEQ_BITS = 56
BIG = 1 << 62
MAX_BATCHES_AT_ONE_TIME = 100_000

# run_chunk's return codes
ST_END, ST_BUDGET, ST_ROOM, ST_LIMIT, ST_LIVELOCK, ST_INTERNAL = 0, 1, 2, 3, 4, 5

# jf columns (float64)
# (HSTART, the time of the job's last start, is also the engine's _phase_start and _t while it
# trains: with no load and no save time, a job trains from its start until it stops)
ARR, WORK, QKEY, DONE_W, HSTART, FIRST, COMP, TRAIN, LOST, RBAD = range(10)
N_JF = 10
# ji columns (int32)
GPUS, SINGLE, CLS, PHASE, VER, NPRE, PLOFF, PLLEN, RUNPOS, ORDER = range(10)
N_JI = 10
# gv (int64): parameters, then state, then the count of servers per free count from G_FCNT
(
    G_KIND,
    G_RULE,
    G_STRICT,
    G_ROLLBACK,
    G_GPUW,
    G_N,
    G_S,
    G_MAXCAP,
    G_G,
    G_P,
    G_C,
    G_RECORD,
    G_BUDGET,
    G_SEQ,
    G_EHN,
    G_AI,
    G_NFIN,
    G_NEV,
    G_NSTALE,
    G_TOTFREE,
    G_WHOLEFREE,
    G_QN,
    G_RHN,
    G_RUNN,
    G_SAME_T,
    G_TIMER_ID,
    G_TIMER_ON,
    G_LAS_ACTIVE,
    G_LAS_TICK,
    G_LAS_HAS_NEXT,
    G_NSEG,
    G_NHOLD,
    G_NSTEP,
    G_POOL,
    G_LEVEL,
    G_NOTICES,
    G_EV_SLACK,
    G_RH_SLACK,
) = range(38)
G_FCNT = 64
N_GV = 128  # servers have at most 62 GPUs (free-count bit masks in int64)
# fv (float64)
F_NOW, F_LAS_NEXT, F_RATE, F_QUANTUM, F_MAX_TIME, F_MAX_EVENTS, F_STOP, F_STALE = range(8)
N_FV = 8
# srv columns (int64)
CAP, FREE, WNORD, TMPM, TMPG, EX, EXMARK, TOUCHED = range(8)
N_SRV = 8
# cl columns (int64): GPUs, single-server, heap offset, heap size, blocked in this round
CG, CSINGLE, COFF, CCNT, CBLOCK = range(5)
N_CL = 5
# rr columns (int64): running-job list, victims, popped, victim dropped
RUNL, VICT, POPD, VDROP = range(4)
N_RR = 4
# qh columns (float64): a waiting job's key (value, arrival, index); rh: a running job's (badness,
# arrival, index, version at its start). Keys live in the heaps, not behind job indices: a
# comparison reads one row, not two random job rows.
QK, QA, QJ = range(3)
HB, HA, HJ, HV = range(4)
# evi columns (int64)
EK, EOBJ, EVER = range(3)
# segi columns (int64)
SJ, SOFF, SLEN = range(3)

State = namedtuple(
    "State",
    [
        "jf",
        "ji",
        "gv",
        "fv",
        "srv",
        "tree",
        "cl",
        "qh",
        "rh",
        "rr",
        "evt",
        "evi",
        "pool",
        "segf",
        "segi",
        "holds",
        "stt",
        "stg",
    ],
)


# -- unmanaged views -------------------------------------------------------------------------------
@intrinsic
def _pointer(typingctx, addr, arr):
    """The integer address ``addr`` as a pointer to ``arr``'s element type."""
    ptrty = types.CPointer(arr.dtype)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(ptrty))

    return ptrty(addr, arr), codegen


@njit(cache=True)
def _unmanaged(a):
    """A view of the C-contiguous array ``a`` without a reference count (numba increfs and decrefs
    every array argument of every call, with atomic operations: 10 to 50 ns each); valid while the
    caller keeps ``a`` alive."""
    return carray(_pointer(a.ctypes.data, a), a.shape)


# -- waiting jobs: one binary heap per class, rows (value, arrival, index) of qh ----------------------
@njit(cache=True)
def _qless(qh, r1, r2):
    a = qh[r1, QK]
    b = qh[r2, QK]
    if a != b:
        return a < b
    a = qh[r1, QA]
    b = qh[r2, QA]
    if a != b:
        return a < b
    return qh[r1, QJ] < qh[r2, QJ]


@njit(cache=True)
def _qcopy(qh, dst, src):
    qh[dst, QK] = qh[src, QK]
    qh[dst, QA] = qh[src, QA]
    qh[dst, QJ] = qh[src, QJ]


@njit(cache=True)
def _q_push(jf, ji, cl, qh, gv, j):
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
        p = (i - 1) >> 1
        if _qless(qh, x, off + p):
            _qcopy(qh, off + i, off + p)
            i = p
        else:
            break
    _qcopy(qh, off + i, x)
    gv[G_QN] += 1


@njit(cache=True)
def _q_pop(cl, qh, gv, c):
    """Remove and return the best waiting job of class c."""
    off = cl[c, COFF]
    cnt = cl[c, CCNT] - 1
    cl[c, CCNT] = cnt
    top = np.int64(qh[off, QJ])
    if cnt > 0:
        last = off + cnt
        i = 0
        while True:
            left = 2 * i + 1
            if left >= cnt:
                break
            m = left
            if left + 1 < cnt and _qless(qh, off + left + 1, off + left):
                m = left + 1
            if _qless(qh, off + m, last):
                _qcopy(qh, off + i, off + m)
                i = m
            else:
                break
        _qcopy(qh, off + i, last)
    gv[G_QN] -= 1
    return top


# -- running jobs: max-heap of rows (badness, arrival, index, version) of rh, stale rows dropped lazily --
@njit(cache=True)
def _rworse(rh, r1, r2):
    a = rh[r1, HB]
    b = rh[r2, HB]
    if a != b:
        return a > b
    a = rh[r1, HA]
    b = rh[r2, HA]
    if a != b:
        return a > b
    return rh[r1, HJ] > rh[r2, HJ]


@njit(cache=True)
def _rcopy(rh, dst, src):
    rh[dst, HB] = rh[src, HB]
    rh[dst, HA] = rh[src, HA]
    rh[dst, HJ] = rh[src, HJ]
    rh[dst, HV] = rh[src, HV]


@njit(cache=True)
def _rh_sift_up(rh, i, x):
    """Put row x (scratch) at position i, sifting up."""
    while i > 0:
        p = (i - 1) >> 1
        if _rworse(rh, x, p):
            _rcopy(rh, i, p)
            i = p
        else:
            break
    _rcopy(rh, i, x)


@njit(cache=True)
def _rh_pop(rh, gv):
    """Remove the top row."""
    n = gv[G_RHN] - 1
    gv[G_RHN] = n
    if n == 0:
        return
    i = 0
    while True:
        left = 2 * i + 1
        if left >= n:
            break
        m = left
        if left + 1 < n and _rworse(rh, left + 1, left):
            m = left + 1
        if _rworse(rh, m, n):
            _rcopy(rh, i, m)
            i = m
        else:
            break
    _rcopy(rh, i, n)


@njit(cache=True)
def _rh_live(ji, rh, r):
    j = np.int64(rh[r, HJ])
    return ji[j, PHASE] == TRAINING and ji[j, VER] == np.int64(rh[r, HV])


@njit(cache=True)
def _rh_top(ji, rh, gv):
    """The worst running job (stale rows above it dropped), or -1."""
    while gv[G_RHN] > 0:
        if _rh_live(ji, rh, 0):
            return np.int64(rh[0, HJ])
        _rh_pop(rh, gv)
    return -1


@njit(cache=True)
def _rh_push(jf, ji, rh, gv, j):
    """Push running job j (key: jf RBAD); drop the stale rows when they are most of the heap."""
    n = gv[G_RHN]
    if n >= 2 * gv[G_G] + gv[G_RH_SLACK]:
        k = 0
        for r in range(n):
            if _rh_live(ji, rh, r):
                _rcopy(rh, k, r)
                k += 1
        gv[G_RHN] = 0
        for r in range(k):  # heapify by pushes (the order of equal keys cannot differ: keys are unique)
            _rcopy(rh, len(rh) - 1, r)
            _rh_sift_up(rh, gv[G_RHN], len(rh) - 1)
            gv[G_RHN] += 1
        n = k
    x = len(rh) - 1
    rh[x, HB] = jf[j, RBAD]
    rh[x, HA] = jf[j, ARR]
    rh[x, HJ] = j
    rh[x, HV] = ji[j, VER]
    gv[G_RHN] = n + 1
    _rh_sift_up(rh, n, x)


# -- events: binary heap by (time, kind << 56 | sequence) ---------------------------------------------
# As in the Python engine, a preempted job's pending completion stays in the heap, stale, and is
# skipped when its time comes. Unlike there, the stale entries are dropped when they are more than
# half of the heap (_ev_compact), so that it stays about as small as the number of running jobs.
@njit(cache=True)
def _ev_less(evt, evi, a, b):
    return evt[a] < evt[b] or (evt[a] == evt[b] and evi[a, EK] < evi[b, EK])


@njit(cache=True)
def _ev_copy(evt, evi, dst, src):
    evt[dst] = evt[src]
    evi[dst, EK] = evi[src, EK]
    evi[dst, EOBJ] = evi[src, EOBJ]
    evi[dst, EVER] = evi[src, EVER]


@njit(cache=True)
def _ev_down(evt, evi, n, i, x):
    """Put row x at position i of a heap of n rows, sifting down."""
    while True:
        left = 2 * i + 1
        if left >= n:
            break
        m = left
        if left + 1 < n and _ev_less(evt, evi, left + 1, left):
            m = left + 1
        if _ev_less(evt, evi, m, x):
            _ev_copy(evt, evi, i, m)
            i = m
        else:
            break
    _ev_copy(evt, evi, i, x)


@njit(cache=True)
def _ev_live(ji, gv, evi, r):
    """Whether heap row r is a real event (not a preempted job's completion, nor a cancelled timer)."""
    kind = evi[r, EK] >> SEQ_BITS
    if kind == P_STAGE:
        return evi[r, EVER] == ji[evi[r, EOBJ], VER]
    if kind == P_TIMER:
        return evi[r, EOBJ] == gv[G_TIMER_ID] and gv[G_TIMER_ON] != 0
    return True


@njit(cache=True)
def _ev_compact(evt, evi, ji, gv, fv):
    """Drop the stale rows. The Python engine pops each of them when its time comes: they are
    counted as (stale) events now, and the latest of them up to ``until`` is kept (the clock of a
    run that stops unfinished passes it)."""
    n = gv[G_EHN]
    k = 0
    for r in range(n):
        if _ev_live(ji, gv, evi, r):
            _ev_copy(evt, evi, k, r)
            k += 1
        else:
            gv[G_NEV] += 1
            gv[G_NSTALE] += 1
            if evt[r] <= fv[F_STOP] and evt[r] > fv[F_STALE]:
                fv[F_STALE] = evt[r]
    x = len(evt) - 1
    for i in range(k // 2 - 1, -1, -1):  # heapify
        _ev_copy(evt, evi, x, i)
        _ev_down(evt, evi, k, i, x)
    gv[G_EHN] = k


@njit(cache=True)
def _ev_push(evt, evi, ji, gv, fv, t, kind, obj, ver):
    if gv[G_EHN] >= 2 * gv[G_G] + gv[G_EV_SLACK]:
        _ev_compact(evt, evi, ji, gv, fv)
    gv[G_SEQ] += 1
    k = (kind << SEQ_BITS) | gv[G_SEQ]
    i = gv[G_EHN]
    gv[G_EHN] = i + 1
    while i > 0:
        p = (i - 1) >> 1
        tp = evt[p]
        if t < tp or (t == tp and k < evi[p, EK]):
            _ev_copy(evt, evi, i, p)
            i = p
        else:
            break
    evt[i] = t
    evi[i, EK] = k
    evi[i, EOBJ] = obj
    evi[i, EVER] = ver


@njit(cache=True)
def _ev_pop(evt, evi, gv):
    """Remove the top row (read it before)."""
    n = gv[G_EHN] - 1
    gv[G_EHN] = n
    if n > 0:
        _ev_down(evt, evi, n, 0, n)


# -- free GPUs ------------------------------------------------------------------------------------------
@njit(cache=True)
def _set_free(srv, tree, gv, m, new):
    old = srv[m, FREE]
    gv[G_FCNT + old] -= 1
    gv[G_FCNT + new] += 1
    srv[m, FREE] = new
    c = srv[m, CAP]
    if old == c:
        gv[G_WHOLEFREE] -= c
    if new == c:
        gv[G_WHOLEFREE] += c
    i = m + gv[G_P]
    tree[i] = np.int64(1) << new
    i >>= 1
    while i >= 1:
        tree[i] = tree[2 * i] | tree[2 * i + 1]
        i >>= 1


@njit(cache=True)
def _find(tree, p, lo, bits):
    """The lowest server index >= lo whose free count is in ``bits`` (bit f: f free), or -1."""
    if lo >= p:
        return -1
    if lo == 0:  # from the root
        if (tree[1] & bits) == 0:
            return -1
        i = 1
        while i < p:
            i <<= 1
            if (tree[i] & bits) == 0:
                i += 1
        return i - p
    i = lo + p
    if tree[i] & bits:
        return lo
    while i > 1:
        if (i & 1) == 0 and (tree[i + 1] & bits) != 0:
            i += 1
            while i < p:
                i <<= 1
                if (tree[i] & bits) == 0:
                    i += 1
            return i - p
        i >>= 1
    return -1


@njit(cache=True)
def _max_free(gv):
    for f in range(gv[G_MAXCAP], 0, -1):
        if gv[G_FCNT + f] > 0:
            return f
    return 0


@njit(cache=True)
def _needs_layout(gv, single):
    return single or gv[G_RULE] == WHOLE_NODE


@njit(cache=True)
def _fits(gv, g, single):
    """FreeGPUs.fits (WholeNodeGPUs.fits under whole_node)."""
    if gv[G_RULE] == WHOLE_NODE:
        if single or g <= gv[G_MAXCAP]:
            return _max_free(gv) >= g
        return gv[G_WHOLEFREE] >= g
    if single:
        return _max_free(gv) >= g
    return gv[G_TOTFREE] >= g


@njit(cache=True)
def _sort_tmp(srv, k):
    """Sort the placement in srv[:k, TMPM/TMPG] by server (insertion sort: a few entries)."""
    for a in range(1, k):
        m = srv[a, TMPM]
        g = srv[a, TMPG]
        b = a - 1
        while b >= 0 and srv[b, TMPM] > m:
            srv[b + 1, TMPM] = srv[b, TMPM]
            srv[b + 1, TMPG] = srv[b, TMPG]
            b -= 1
        srv[b + 1, TMPM] = m
        srv[b + 1, TMPG] = g


@njit(cache=True)
def _place(srv, tree, gv, g, single):
    """FreeGPUs.place with the policy's rule: the placement in srv[:k, TMPM/TMPG], sorted by server;
    returns k (0: it does not fit)."""
    rule = gv[G_RULE]
    top = gv[G_MAXCAP]
    p = gv[G_P]
    if rule == WHOLE_NODE:
        if g > top:
            if gv[G_TOTFREE] < g:
                return 0
            k = 0
            need = g
            for q in range(gv[G_S]):  # whole free servers, largest first, lower index among equals
                m = srv[q, WNORD]
                f = srv[m, FREE]
                if f == srv[m, CAP] and f > 0:
                    take = f if f < need else need
                    srv[k, TMPM] = m
                    srv[k, TMPG] = take
                    k += 1
                    need -= take
                    if need == 0:
                        _sort_tmp(srv, k)
                        return k
            return 0
        rule = CONSOLIDATE
        single = True
    if single or rule == CONSOLIDATE:
        m = -1
        if rule == CONSOLIDATE:  # the fullest server that fits, lowest index among equals
            for f in range(g, top + 1):
                if gv[G_FCNT + f] > 0:
                    m = _find(tree, p, 0, np.int64(1) << f)
                    break
        elif rule == FIRST_FIT:
            if g <= top:
                m = _find(tree, p, 0, ((np.int64(1) << (top + 1)) - 1) ^ ((np.int64(1) << g) - 1))
        else:  # least_loaded: most free first
            for f in range(top, g - 1, -1):
                if gv[G_FCNT + f] > 0:
                    m = _find(tree, p, 0, np.int64(1) << f)
                    break
        if m >= 0:
            srv[0, TMPM] = m
            srv[0, TMPG] = g
            return 1
        if single:
            return 0
    if gv[G_TOTFREE] < g:
        return 0
    k = 0
    need = g
    if rule == FIRST_FIT:  # servers in index order
        bits = ((np.int64(1) << (top + 1)) - 1) ^ 1
        m = _find(tree, p, 0, bits)
        while m >= 0:
            f = srv[m, FREE]
            take = f if f < need else need
            srv[k, TMPM] = m
            srv[k, TMPG] = take
            k += 1
            need -= take
            if need == 0:
                return k
            m = _find(tree, p, m + 1, bits)
        return 0  # unreachable: total_free >= g
    for f in range(top, 0, -1):  # most free first, lower index first among equals
        if gv[G_FCNT + f] == 0:
            continue
        bit = np.int64(1) << f
        m = _find(tree, p, 0, bit)
        while m >= 0:
            take = f if f < need else need
            srv[k, TMPM] = m
            srv[k, TMPG] = take
            k += 1
            need -= take
            if need == 0:
                _sort_tmp(srv, k)
                return k
            m = _find(tree, p, m + 1, bit)
    return 0  # unreachable


# -- the engine's actions ------------------------------------------------------------------------------
@njit(cache=True)
def _step(stt, stg, gv, now, dg):
    """GPUs in use change by dg at ``now``: one step per time (the level after every change)."""
    gv[G_LEVEL] += dg
    k = gv[G_NSTEP]
    if k > 0 and stt[k - 1] == now:
        stg[k - 1] = gv[G_LEVEL]
    else:
        stt[k] = now
        stg[k] = gv[G_LEVEL]
        gv[G_NSTEP] = k + 1


@njit(cache=True)
def _done_work(jf, fv, j, now):
    """SimJob.done_work at ``now`` (the job is training)."""
    d = jf[j, DONE_W] + fv[F_RATE] * (now - jf[j, HSTART])
    w = jf[j, WORK]
    return d if d < w else w


@njit(cache=True)
def _run_value(jf, ji, gv, fv, j, now):
    """The policy's value of a running (training) job: remaining work (SRTF) or attained service (LAS)."""
    if gv[G_KIND] == SRTF:
        return jf[j, WORK] - _done_work(jf, fv, j, now)
    a = _done_work(jf, fv, j, now)
    return a * ji[j, GPUS] if gv[G_GPUW] else a


@njit(cache=True)
def _wait_value(jf, ji, gv, j):
    """The first element of a waiting job's key."""
    kind = gv[G_KIND]
    if kind == FIFO:
        return jf[j, ARR]
    if kind == SJF:
        return jf[j, WORK]
    if kind == SRTF:
        return jf[j, WORK] - jf[j, DONE_W]
    a = jf[j, DONE_W]
    return a * ji[j, GPUS] if gv[G_GPUW] else a


@njit(cache=True)
def _start(jf, ji, gv, fv, srv, tree, rh, rr, evt, evi, pool, holds, stt, stg, j):
    """Simulator.start(job) with the policy's placement, and the policy's _push_running. False if it
    does not fit (an internal error: the callers checked)."""
    now = fv[F_NOW]
    g = ji[j, GPUS]
    k = _place(srv, tree, gv, g, ji[j, SINGLE] != 0)
    if k == 0:
        return False
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
        _set_free(srv, tree, gv, m, srv[m, FREE] - ga)
    gv[G_POOL] = off + k
    gv[G_TOTFREE] -= g
    ji[j, PLOFF] = off
    ji[j, PLLEN] = k
    if np.isnan(jf[j, FIRST]):
        jf[j, FIRST] = now
    jf[j, HSTART] = now
    r = gv[G_RUNN]
    rr[r, RUNL] = j
    ji[j, RUNPOS] = r
    gv[G_RUNN] = r + 1
    # training at once (no load time)
    ji[j, PHASE] = TRAINING
    ji[j, VER] += 1
    rate = fv[F_RATE]
    _ev_push(evt, evi, ji, gv, fv, now + (jf[j, WORK] - jf[j, DONE_W]) / rate, P_STAGE, j, ji[j, VER])
    _step(stt, stg, gv, now, g)
    kind = gv[G_KIND]
    if kind == SRTF:  # predicted end time
        jf[j, RBAD] = now + (jf[j, WORK] - _done_work(jf, fv, j, now)) / rate
        _rh_push(jf, ji, rh, gv, j)
    elif kind == LAS:  # attained service minus elapsed time
        a = _done_work(jf, fv, j, now)
        if gv[G_GPUW]:
            jf[j, RBAD] = a * g - now * g
        else:
            jf[j, RBAD] = a - now * 1.0
        _rh_push(jf, ji, rh, gv, j)
    return True


@njit(cache=True)
def _release(jf, ji, gv, srv, tree, rr, pool, segf, segi, holds, stt, stg, j, now):
    """Simulator._release: record the segment, free the GPUs."""
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
        _set_free(srv, tree, gv, m, srv[m, FREE] + ga)
        g += ga
    gv[G_TOTFREE] += g
    r = ji[j, RUNPOS]
    last = rr[gv[G_RUNN] - 1, RUNL]
    rr[r, RUNL] = last
    ji[last, RUNPOS] = r
    gv[G_RUNN] -= 1
    ji[j, RUNPOS] = -1
    _step(stt, stg, gv, now, -ji[j, GPUS])


@njit(cache=True)
def _preempt(jf, ji, gv, fv, srv, tree, cl, qh, rr, evt, evi, pool, segf, segi, holds, stt, stg, v, now):
    """Simulator.preempt of a training job with no save time: its GPUs are free at once, a notice
    follows as an event at the same time; the policy queues it again at once."""
    d = jf[v, DONE_W] + fv[F_RATE] * (now - jf[v, HSTART])
    w = jf[v, WORK]
    jf[v, DONE_W] = d if d < w else w  # min(d, stages[stage])
    jf[v, TRAIN] += now - jf[v, HSTART]
    if gv[G_ROLLBACK]:
        jf[v, LOST] += jf[v, DONE_W] - 0.0
        jf[v, DONE_W] = 0.0
    ji[v, VER] += 1
    ji[v, NPRE] += 1
    _release(jf, ji, gv, srv, tree, rr, pool, segf, segi, holds, stt, stg, v, now)
    ji[v, PHASE] = WAITING
    gv[G_SEQ] += 1  # its notice: the engine's event (now, saved, seq), counted only (see _run)
    gv[G_NOTICES] += 1
    jf[v, QKEY] = _wait_value(jf, ji, gv, v)
    _q_push(jf, ji, cl, qh, gv, v)


@njit(cache=True)
def _set_timer(evt, evi, ji, gv, fv, t):
    """LAS's periodic quantum timer, first firing at t (the previous one is off)."""
    gv[G_TIMER_ID] += 1
    gv[G_TIMER_ON] = 1
    _ev_push(evt, evi, ji, gv, fv, t, P_TIMER, gv[G_TIMER_ID], 0)


@njit(cache=True)
def _las_resume(gv, fv, evt, evi, ji, now):
    t = fv[F_LAS_NEXT]
    q = fv[F_QUANTUM]
    while t < now:  # the quanta skipped, by the same additions the timer makes
        t += q
    gv[G_LAS_HAS_NEXT] = 0
    _set_timer(evt, evi, ji, gv, fv, t)


# -- decisions -------------------------------------------------------------------------------------------
@njit(cache=True)
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
        if strict and (glob < 0 or _qless(qh, top, glob)):
            glob = top
        if (
            (best < 0 or _qless(qh, top, best))
            and cl[c, CG] <= limit
            and not (use_blocked and cl[c, CBLOCK])
            and _fits(gv, cl[c, CG], cl[c, CSINGLE] != 0)
        ):
            best = top
            bestc = c
    if strict and glob >= 0 and (best < 0 or _qless(qh, glob, best)):
        return -1
    if best < 0:
        return -1
    return _q_pop(cl, qh, gv, bestc)


@njit(cache=True)
def _fill(jf, ji, gv, fv, srv, tree, cl, qh, rh, rr, evt, evi, pool, holds, stt, stg, use_blocked):
    """_QueuePolicy.schedule and _Preemptive._fill_fast: start waiting jobs in key order while they fit."""
    while gv[G_QN] > 0 and gv[G_TOTFREE] > 0:
        j = _pop_best(gv, cl, qh, gv[G_TOTFREE], use_blocked)
        if j < 0:
            break
        if not _start(jf, ji, gv, fv, srv, tree, rh, rr, evt, evi, pool, holds, stt, stg, j):
            return False
    return True


@njit(cache=True)
def _head(gv, cl, qh):
    """WaitQueue.head(blocked): the class of the best waiting job whose class is not blocked, or -1."""
    best = -1
    bestc = -1
    for c in range(gv[G_C]):
        if cl[c, CCNT] == 0 or cl[c, CBLOCK]:
            continue
        top = cl[c, COFF]
        if best < 0 or _qless(qh, top, best):
            best = top
            bestc = c
    return bestc


@njit(cache=True)
def _room_fits(gv, srv, g, single, layout, n_extra, n_touched):
    """Whether a job of g GPUs fits in the free GPUs plus the chosen victims' (srv EX per server)."""
    if not layout:
        return gv[G_TOTFREE] + n_extra >= g
    if gv[G_RULE] == WHOLE_NODE and not single and g > gv[G_MAXCAP]:
        tot = gv[G_WHOLEFREE]
        for a in range(n_touched):
            m = srv[a, TOUCHED]
            c = srv[m, CAP]
            f = srv[m, FREE]
            if f != c and f + srv[m, EX] == c:
                tot += c
        return tot >= g
    if _max_free(gv) >= g:
        return True
    for a in range(n_touched):
        m = srv[a, TOUCHED]
        if srv[m, FREE] + srv[m, EX] >= g:
            return True
    return False


@njit(cache=True)
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


@njit(cache=True)
def _make_room(jf, ji, gv, fv, srv, tree, cl, qh, rh, rr, evt, evi, pool, segf, segi, holds, stt, stg, cand):
    """_Preemptive._make_room (R11): preempt strictly worse running jobs, worst first, none started at
    this very time, until ``cand`` fits; drop the victims not needed, best first; start ``cand``.
    Returns 1 (done), 0 (cannot fit: nothing done) or -1 (internal error)."""
    now = fv[F_NOW]
    bound = jf[cand, QKEY]
    g = ji[cand, GPUS]
    single = ji[cand, SINGLE] != 0
    layout = _needs_layout(gv, single)
    n_extra = 0
    n_touched = 0
    nv = 0
    npop = 0
    ok = True
    while not _room_fits(gv, srv, g, single, layout, n_extra, n_touched):
        w = _rh_top(ji, rh, gv)
        if w < 0 or not (bound < _run_value(jf, ji, gv, fv, w, now)):
            ok = False
            break
        _rh_pop(rh, gv)
        rr[npop, POPD] = w
        npop += 1
        if jf[w, HSTART] == now:  # started at this very time: never a victim (R5)
            continue
        rr[nv, VICT] = w
        rr[nv, VDROP] = 0
        nv += 1
        if layout:
            n_touched = _add_victim(ji, srv, pool, w, 1, n_touched)
        n_extra += ji[w, GPUS]
    if ok:
        for i in range(nv - 1, -1, -1):  # drop the victims not needed, best first
            v = rr[i, VICT]
            if layout:
                _add_victim(ji, srv, pool, v, -1, n_touched)
            n_extra -= ji[v, GPUS]
            if _room_fits(gv, srv, g, single, layout, n_extra, n_touched):
                rr[i, VDROP] = 1
            else:
                if layout:
                    _add_victim(ji, srv, pool, v, 1, n_touched)
                n_extra += ji[v, GPUS]
    for a in range(n_touched):
        m = srv[a, TOUCHED]
        srv[m, EX] = 0
        srv[m, EXMARK] = 0
    # every running job taken off the heap and not preempted goes back
    for a in range(npop):
        w = rr[a, POPD]
        chosen = False
        if ok:
            for i in range(nv):
                if rr[i, VICT] == w and not rr[i, VDROP]:
                    chosen = True
                    break
        if not chosen:
            _rh_push(jf, ji, rh, gv, w)
    if not ok:
        return 0
    for i in range(nv):  # worst first
        if not rr[i, VDROP]:
            _preempt(
                jf, ji, gv, fv, srv, tree, cl, qh, rr, evt, evi, pool, segf, segi, holds, stt, stg, rr[i, VICT], now
            )
    if not _fits(gv, g, single) or not _start(jf, ji, gv, fv, srv, tree, rh, rr, evt, evi, pool, holds, stt, stg, cand):
        return -1
    return 1


@njit(cache=True)
def _round(jf, ji, gv, fv, srv, tree, cl, qh, rh, rr, evt, evi, pool, segf, segi, holds, stt, stg, may_preempt):
    """_Preemptive._round when nothing is claimed: R8, R11, R12. False on an internal error."""
    strict = gv[G_STRICT]
    nc = gv[G_C]
    for c in range(nc):
        cl[c, CBLOCK] = 0
    n_blocked = 0
    fill = not may_preempt
    fail_any = BIG
    fail_single = BIG
    while gv[G_QN] > 0:
        if fill:
            return _fill(jf, ji, gv, fv, srv, tree, cl, qh, rh, rr, evt, evi, pool, holds, stt, stg, n_blocked > 0)
        c = _head(gv, cl, qh)
        if c < 0:
            break
        j = np.int64(qh[cl[c, COFF], QJ])
        g = ji[j, GPUS]
        if _fits(gv, g, ji[j, SINGLE] != 0):  # R8
            _q_pop(cl, qh, gv, c)
            if not _start(jf, ji, gv, fv, srv, tree, rh, rr, evt, evi, pool, holds, stt, stg, j):
                return False
            continue
        single = _needs_layout(gv, ji[j, SINGLE] != 0)
        tried = g < fail_any and not (single and g >= fail_single)
        w = _rh_top(ji, rh, gv)
        if w < 0 or not (jf[j, QKEY] < _run_value(jf, ji, gv, fv, w, fv[F_NOW])):
            fill = True  # no running job is worse than this job, nor than any job after it
        elif tried:
            _q_pop(cl, qh, gv, c)
            r = _make_room(jf, ji, gv, fv, srv, tree, cl, qh, rh, rr, evt, evi, pool, segf, segi, holds, stt, stg, j)
            if r < 0:
                return False
            if r > 0:
                if n_blocked > 0 and gv[G_TOTFREE] > 0:  # the jobs passed over may fit now (R12)
                    for c2 in range(nc):
                        cl[c2, CBLOCK] = 0
                    n_blocked = 0
                    fail_any = BIG
                    fail_single = BIG
                continue
            _q_push(jf, ji, cl, qh, gv, j)
        if tried:
            if single:
                fail_single = min(fail_single, g)
            else:
                fail_any = min(fail_any, g)
        if not cl[c, CBLOCK]:
            cl[c, CBLOCK] = 1
            n_blocked += 1
        if strict:
            break
    return True


# -- events ----------------------------------------------------------------------------------------------
@njit(cache=True)
def _arrive(jf, ji, gv, fv, cl, qh, evt, evi, j):
    ji[j, PHASE] = WAITING
    jf[j, QKEY] = _wait_value(jf, ji, gv, j)
    _q_push(jf, ji, cl, qh, gv, j)
    if gv[G_KIND] == LAS:
        gv[G_LAS_ACTIVE] += 1
        if not gv[G_TIMER_ON]:
            if not gv[G_LAS_HAS_NEXT]:  # the first active job: a new grid
                _set_timer(evt, evi, ji, gv, fv, fv[F_NOW] + fv[F_QUANTUM])
            else:
                _las_resume(gv, fv, evt, evi, ji, fv[F_NOW])


@njit(cache=True)
def _complete(jf, ji, gv, srv, tree, rr, pool, segf, segi, holds, stt, stg, j, t):
    jf[j, DONE_W] = jf[j, WORK]
    jf[j, TRAIN] += t - jf[j, HSTART]
    ji[j, PHASE] = DONE
    jf[j, COMP] = t
    _release(jf, ji, gv, srv, tree, rr, pool, segf, segi, holds, stt, stg, j, t)
    ji[j, VER] += 1
    gv[G_NFIN] += 1
    if gv[G_KIND] == LAS:  # (its row in the running-job heap is now stale)
        gv[G_LAS_ACTIVE] -= 1
        if gv[G_LAS_ACTIVE] == 0:
            gv[G_TIMER_ON] = 0
            gv[G_LAS_HAS_NEXT] = 0


@njit(cache=True)
def _room(gv, evt, pool, segi, holds, stt):
    """Whether every growing buffer has room for one more event time (at most: every GPU released
    once, every GPU started twice, one notice per release)."""
    G = gv[G_G]
    if len(evt) - gv[G_EHN] < 3 * G + 8:
        return False
    if pool.shape[0] - gv[G_POOL] < 2 * G + 2:
        return False
    if len(stt) - gv[G_NSTEP] < 2:
        return False
    if gv[G_RECORD]:
        if segi.shape[0] - gv[G_NSEG] < G + 1:
            return False
        if len(holds) - gv[G_NHOLD] < 3 * G + 2:
            return False
    return True


@njit(cache=True)
def _run(jf, ji, gv, fv, srv, tree, cl, qh, rh, rr, evt, evi, pool, segf, segi, holds, stt, stg):
    jf, ji, gv, fv = _unmanaged(jf), _unmanaged(ji), _unmanaged(gv), _unmanaged(fv)
    srv, tree, cl, rr = _unmanaged(srv), _unmanaged(tree), _unmanaged(cl), _unmanaged(rr)
    qh, rh = _unmanaged(qh), _unmanaged(rh)
    evt, evi, pool = _unmanaged(evt), _unmanaged(evi), _unmanaged(pool)
    segf, segi, holds = _unmanaged(segf), _unmanaged(segi), _unmanaged(holds)
    stt, stg = _unmanaged(stt), _unmanaged(stg)
    n = gv[G_N]
    budget = gv[G_BUDGET]
    stop = fv[F_STOP]
    max_time = fv[F_MAX_TIME]
    max_events = fv[F_MAX_EVENTS]
    inf = np.inf
    batches = 0
    while True:
        if not _room(gv, evt, pool, segi, holds, stt):
            return ST_ROOM
        if batches >= budget:
            return ST_BUDGET
        t = evt[0] if gv[G_EHN] > 0 else inf
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
            top = gv[G_EHN] > 0 and evt[0] == t
            kind = evi[0, EK] >> SEQ_BITS if top else P_TIMER
            if top and (kind == P_STAGE or (gv[G_NOTICES] == 0 and (kind < P_ARRIVAL or next_arr != t))):
                obj = evi[0, EOBJ]
                ver = evi[0, EVER]
                _ev_pop(evt, evi, gv)
                gv[G_NEV] += 1
                if kind == P_STAGE:
                    if ver != ji[obj, VER]:
                        gv[G_NSTALE] += 1
                        continue
                    _complete(jf, ji, gv, srv, tree, rr, pool, segf, segi, holds, stt, stg, obj, t)
                else:  # the quantum timer
                    if obj != gv[G_TIMER_ID] or not gv[G_TIMER_ON]:
                        gv[G_NSTALE] += 1
                        continue
                    nxt = t + fv[F_QUANTUM]
                    _ev_push(evt, evi, ji, gv, fv, nxt, P_TIMER, obj, 0)
                    gv[G_LAS_TICK] = 1
                    if gv[G_QN] == 0:  # nothing waits: off until a job waits (at the next quantum)
                        gv[G_TIMER_ON] = 0
                        fv[F_LAS_NEXT] = nxt
                        gv[G_LAS_HAS_NEXT] = 1
                real = True
            elif gv[G_NOTICES] > 0:
                # The notices of this time's preemptions, in one go: the engine's (t, saved, seq)
                # events, always at the time of the round that made them, after its completions
                # at that time and before anything else. Each calls on_preempted: the victim is
                # queued already (nothing to do) and LAS resumes its timer if it is off and a job
                # waits, which only the first of them can do.
                gv[G_NEV] += gv[G_NOTICES]
                gv[G_NOTICES] = 0
                if gv[G_KIND] == LAS and not gv[G_TIMER_ON] and gv[G_LAS_HAS_NEXT] and gv[G_QN] > 0:
                    _las_resume(gv, fv, evt, evi, ji, t)
                real = True
            elif next_arr == t:
                real = True
                j = ji[ai, ORDER]
                ai += 1
                gv[G_AI] = ai
                next_arr = jf[ji[ai, ORDER], ARR] if ai < n else inf
                gv[G_NEV] += 1
                _arrive(jf, ji, gv, fv, cl, qh, evt, evi, j)
            else:
                break
        if real and gv[G_QN] > 0:  # the policy's schedule(sim); nothing to do without a waiting job
            kind = gv[G_KIND]
            if kind <= SJF:  # FIFO, SJF
                ok = _fill(jf, ji, gv, fv, srv, tree, cl, qh, rh, rr, evt, evi, pool, holds, stt, stg, False)
            else:
                may = True
                if kind == LAS:  # preempt only in the first round with a waiting job at/after a tick
                    may = gv[G_LAS_TICK] != 0
                    gv[G_LAS_TICK] = 0
                ok = _round(jf, ji, gv, fv, srv, tree, cl, qh, rh, rr, evt, evi, pool, segf, segi, holds, stt, stg, may)
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
    """Move the placements of the running jobs to the front of the pool (when segments are not
    kept), in the order of their offsets."""
    _compact(s.ji, s.gv, s.rr, s.pool)
