"""Claims in the compiled kernel (numba): rules R6-R10 of ``formulations/lazer.md`` as the Python
preemptive policies keep them (:class:`optsched.sim.policies.preemptive.Preemptive`: ``_claim``,
``_release_claim``, ``_drop_claims``, ``_try_start``, ``_try_start_claimant``, ``on_preempted``).

A claim holds, for one waiting job, free GPUs per server (list ``ji[c, CLF]``) and GPUs being saved
by other jobs (list ``ji[c, CLP]``, each entry naming the saving job); a saving job's GPUs that
nobody claims are its list ``ji[v, LEFT]``. The lists are rows of ``ce`` chained in insertion
order, because the Python policy keeps dicts and their order decides which servers' GPUs a claim
takes and where its job starts; ``srv[:, RFREE]`` / ``srv[:, USAV]`` and ``gv[G_NRFREE]`` /
``gv[G_NUSAV]`` hold the sums the policy keeps per server and in all.
"""

from __future__ import annotations

import numpy as np

from optsched.sim.compiled.actions import launch, wait_value
from optsched.sim.compiled.gpus import avail_vec, find_server, fits_avail, fits_vec, needs_layout, place_tree, place_vec
from optsched.sim.compiled.heaps import key_less, q_push
from optsched.sim.compiled.jit import helper
from optsched.sim.compiled.layout import (
    CE_M,
    CE_N,
    CE_NEXT,
    CE_SRC,
    CLF,
    CLL,
    CLP,
    CLPOS,
    CSORT,
    FREE,
    G_CEFREE,
    G_MAXCAP,
    G_NCL,
    G_NRFREE,
    G_NSAV,
    G_NUSAV,
    G_P,
    G_TOTFREE,
    GPUS,
    LEFT,
    PLG,
    PLLEN,
    PLM,
    PLOFF,
    QKEY,
    RFREE,
    SAVL,
    SAVPOS,
    SINGLE,
    SORT,
    TMPG,
    TMPM,
    USAV,
    VDROP,
    VEC,
    VICT,
)


# -- entries and ordered lists -----------------------------------------------------------------------
@helper
def _alloc(gv, ce, m, n, src):
    r = gv[G_CEFREE]
    gv[G_CEFREE] = ce[r, CE_NEXT]
    ce[r, CE_NEXT] = -1
    ce[r, CE_M] = m
    ce[r, CE_N] = n
    ce[r, CE_SRC] = src
    return r


@helper
def _free(gv, ce, r):
    ce[r, CE_NEXT] = gv[G_CEFREE]
    gv[G_CEFREE] = r


@helper
def _append(ji, gv, ce, j, col, m, n, src):
    """Append (m, n, src) at the end of job j's list ``col``."""
    r = _alloc(gv, ce, m, n, src)
    h = ji[j, col]
    if h < 0:
        ji[j, col] = r
        return
    while ce[h, CE_NEXT] >= 0:
        h = ce[h, CE_NEXT]
    ce[h, CE_NEXT] = r


@helper
def _map_add(ji, gv, ce, j, col, m, n):
    """``d[m] = d.get(m, 0) + n`` on job j's list ``col`` as an ordered dict."""
    h = ji[j, col]
    last = -1
    while h >= 0:
        if ce[h, CE_M] == m:
            ce[h, CE_N] += n
            return
        last = h
        h = ce[h, CE_NEXT]
    r = _alloc(gv, ce, m, n, -1)
    if last < 0:
        ji[j, col] = r
    else:
        ce[last, CE_NEXT] = r


@helper
def _list_remove(ji, gv, rr, col, poscol, count, j):
    """Remove job j from the unordered list in rr column ``col`` (positions in ji ``poscol``)."""
    p = ji[j, poscol]
    n = gv[count] - 1
    last = rr[n, col]
    rr[p, col] = last
    ji[last, poscol] = p
    gv[count] = n
    ji[j, poscol] = -1


# -- jobs saving for a preemptor (the policy's _saving) -------------------------------------------------
@helper
def add_saving(ji, gv, srv, rr, ce, pool, v):
    """A victim saves (or loses a load): its GPUs are free when that ends, nobody claims them yet."""
    off = ji[v, PLOFF]
    ji[v, LEFT] = -1
    for a in range(ji[v, PLLEN]):
        m = pool[off + a, 0]
        g = pool[off + a, 1]
        _append(ji, gv, ce, v, LEFT, m, g, -1)
        srv[m, USAV] += g
        gv[G_NUSAV] += g
    n = gv[G_NSAV]
    rr[n, SAVL] = v
    ji[v, SAVPOS] = n
    gv[G_NSAV] = n + 1


@helper
def saved(ji, gv, srv, rr, ce, v):
    """on_preempted of a job whose save ended (its GPUs are free now): its GPUs nobody claimed are
    nobody's; the parts claimed from it become claimed free GPUs of their claims."""
    if ji[v, SAVPOS] < 0:
        return
    h = ji[v, LEFT]
    while h >= 0:
        m = ce[h, CE_M]
        srv[m, USAV] -= ce[h, CE_N]
        gv[G_NUSAV] -= ce[h, CE_N]
        nx = ce[h, CE_NEXT]
        _free(gv, ce, h)
        h = nx
    ji[v, LEFT] = -1
    _list_remove(ji, gv, rr, SAVL, SAVPOS, G_NSAV, v)
    for q in range(gv[G_NCL]):
        c = rr[q, CLL]
        h = ji[c, CLP]
        prev = -1
        while h >= 0:
            nx = ce[h, CE_NEXT]
            if ce[h, CE_SRC] == v:
                m = ce[h, CE_M]
                n = ce[h, CE_N]
                if prev < 0:
                    ji[c, CLP] = nx
                else:
                    ce[prev, CE_NEXT] = nx
                _free(gv, ce, h)
                _map_add(ji, gv, ce, c, CLF, m, n)
                srv[m, RFREE] += n
                gv[G_NRFREE] += n
            else:
                prev = h
            h = nx


# -- claims ---------------------------------------------------------------------------------------------
@helper
def _room_of(srv, layout, k, m):
    """How many GPUs of server m the claim may still take: where the layout matters, what is left of
    the placement in srv[:k, TMPM/TMPG] on m; else m's free GPUs nobody claims plus its GPUs being
    saved nobody claims (the policy's soon-available vector as the claim takes from it)."""
    if not layout:
        return srv[m, FREE] - srv[m, RFREE] + srv[m, USAV]
    for a in range(k):
        if srv[a, TMPM] == m:
            return srv[a, TMPG]
    return 0


@helper
def _took(srv, layout, k, m, n):
    if layout:
        for a in range(k):
            if srv[a, TMPM] == m:
                srv[a, TMPG] -= n
                return


@helper
def claim(ji, gv, srv, tree, rr, ce, c, nv):
    """_claim (R10/R11): claim GPUs for waiting job c: its victims' GPUs being saved first (rr[:nv,
    VICT] not dropped), then other GPUs being saved that nobody claims (saving jobs by index), then
    free GPUs nobody claims, servers in index order; on the servers the placement rule picks where
    the layout matters. False if it cannot (an internal error: the callers checked)."""
    g = ji[c, GPUS]
    single = ji[c, SINGLE] != 0
    layout = needs_layout(gv, single)
    k = 0
    if layout:
        avail_vec(gv, srv, True)
        k = place_vec(gv, srv, VEC, g, single)  # sorted by server
        if k == 0:
            return False
    # the saving jobs in the order the claim takes their GPUs
    no = 0
    for a in range(nv):
        v = rr[a, VICT]
        if rr[a, VDROP] == 0 and ji[v, SAVPOS] >= 0:
            rr[no, SORT] = v
            no += 1
    first_other = no
    for q in range(gv[G_NSAV]):
        i = rr[q, SAVL]
        seen = False
        for a in range(first_other):
            if rr[a, SORT] == i:
                seen = True
                break
        if seen:
            continue
        b = no  # insertion by index
        while b > first_other and rr[b - 1, SORT] > i:
            rr[b, SORT] = rr[b - 1, SORT]
            b -= 1
        rr[b, SORT] = i
        no += 1
    ji[c, CLF] = -1
    ji[c, CLP] = -1
    need = g
    for q in range(no):
        i = rr[q, SORT]
        h = ji[i, LEFT]
        prev = -1
        while h >= 0 and need > 0:
            nx = ce[h, CE_NEXT]
            m = ce[h, CE_M]
            take = min(ce[h, CE_N], _room_of(srv, layout, k, m), need)
            if take > 0:
                ce[h, CE_N] -= take
                if ce[h, CE_N] == 0:
                    if prev < 0:
                        ji[i, LEFT] = nx
                    else:
                        ce[prev, CE_NEXT] = nx
                    _free(gv, ce, h)
                else:
                    prev = h
                _took(srv, layout, k, m, take)
                need -= take
                srv[m, USAV] -= take
                gv[G_NUSAV] -= take
                _append(ji, gv, ce, c, CLP, m, take, i)
            else:
                prev = h
            h = nx
        if need == 0:
            break
    if need > 0:  # then free GPUs nobody claims, servers in index order
        if layout:
            for a in range(k):
                m = srv[a, TMPM]
                take = min(srv[m, FREE] - srv[m, RFREE], srv[a, TMPG], need)
                if take <= 0:
                    continue
                _append(ji, gv, ce, c, CLF, m, take, -1)
                srv[m, RFREE] += take
                gv[G_NRFREE] += take
                need -= take
                if need == 0:
                    break
        else:  # the servers with a free GPU, from the free-count masks (room >= free - claimed)
            bits = ((np.int64(1) << (gv[G_MAXCAP] + 1)) - 1) ^ 1
            m = find_server(tree, gv[G_P], 0, bits)
            while m >= 0 and need > 0:
                take = min(srv[m, FREE] - srv[m, RFREE], need)
                if take > 0:
                    _append(ji, gv, ce, c, CLF, m, take, -1)
                    srv[m, RFREE] += take
                    gv[G_NRFREE] += take
                    need -= take
                m = find_server(tree, gv[G_P], m + 1, bits)
    if need > 0:
        return False
    n = gv[G_NCL]
    rr[n, CLL] = c
    ji[c, CLPOS] = n
    gv[G_NCL] = n + 1
    return True


@helper
def release_claim(ji, gv, srv, rr, ce, c):
    """_release_claim: c's claimed free GPUs are nobody's, its GPUs still being saved unclaimed. The
    claims list keeps the order in which the claims were made (the policy's dict)."""
    _release_entries(ji, gv, srv, ce, c)
    p = ji[c, CLPOS]
    n = gv[G_NCL] - 1
    for q in range(p, n):
        x = rr[q + 1, CLL]
        rr[q, CLL] = x
        ji[x, CLPOS] = q
    gv[G_NCL] = n
    ji[c, CLPOS] = -1


@helper
def _release_entries(ji, gv, srv, ce, c):
    h = ji[c, CLF]
    while h >= 0:
        m = ce[h, CE_M]
        srv[m, RFREE] -= ce[h, CE_N]
        gv[G_NRFREE] -= ce[h, CE_N]
        nx = ce[h, CE_NEXT]
        _free(gv, ce, h)
        h = nx
    h = ji[c, CLP]
    while h >= 0:
        m = ce[h, CE_M]
        n = ce[h, CE_N]
        _map_add(ji, gv, ce, ce[h, CE_SRC], LEFT, m, n)
        srv[m, USAV] += n
        gv[G_NUSAV] += n
        nx = ce[h, CE_NEXT]
        _free(gv, ce, h)
        h = nx
    ji[c, CLF] = -1
    ji[c, CLP] = -1


@helper
def drop_claims(jf, ji, gv, srv, cl, qh, rr, ce):
    """R7 (reserve="best"): every claim ends, in the order they were made; their jobs wait in the
    queue again."""
    for q in range(gv[G_NCL]):
        c = rr[q, CLL]
        _release_entries(ji, gv, srv, ce, c)
        ji[c, CLPOS] = -1
        jf[c, QKEY] = wait_value(jf, ji, gv, c)
        q_push(jf, ji, gv, cl, qh, c)
    gv[G_NCL] = 0


# -- R8 ---------------------------------------------------------------------------------------------------
@helper
def try_start(jf, jc, ji, gv, fv, srv, tree, rh, rr, ev, pool, holds, stt, stg, lgt, lgi, j, now):
    """_try_start: start j in the free GPUs nobody claims if it fits there (R8).

    IN: none.
    OUT: jf, jc, ji, gv, fv, srv, tree, rh, rr, ev, pool, holds, stt, stg, lgt, lgi."""
    g = ji[j, GPUS]
    single = ji[j, SINGLE] != 0
    if not fits_avail(gv, srv, g, single, False):
        return False
    if gv[G_NRFREE] == 0:
        k = place_tree(gv, srv, tree, g, single)
    else:
        avail_vec(gv, srv, False)
        k = place_vec(gv, srv, VEC, g, single)
    if k == 0:
        return False
    launch(jf, jc, ji, gv, fv, srv, tree, rh, rr, ev, pool, holds, stt, stg, lgt, lgi, j, k, now)
    return True


@helper
def try_start_claimant(jf, jc, ji, gv, fv, srv, tree, rh, rr, ce, ev, pool, holds, stt, stg, lgt, lgi, c, now):
    """_try_start_claimant (R8 for a job holding a claim): it starts if it fits in its claimed free
    GPUs plus the free GPUs nobody claims, on its claimed GPUs first; its claim ends.

    IN: none.
    OUT: jf, jc, ji, gv, fv, srv, tree, rh, rr, ce, ev, pool, holds, stt, stg, lgt, lgi."""
    g = ji[c, GPUS]
    single = ji[c, SINGLE] != 0
    own = 0
    kp = 0
    h = ji[c, CLF]
    while h >= 0:  # its claimed free GPUs, in the claim's order
        n = ce[h, CE_N]
        own += n
        if n > 0:
            srv[kp, PLM] = ce[h, CE_M]
            srv[kp, PLG] = n
            kp += 1
        h = ce[h, CE_NEXT]
    if not needs_layout(gv, single):
        if gv[G_TOTFREE] - gv[G_NRFREE] + own < g:
            return False
        release_claim(ji, gv, srv, rr, ce, c)
        if own < g:
            avail_vec(gv, srv, False)
            for a in range(kp):
                srv[srv[a, PLM], VEC] -= srv[a, PLG]
            kr = place_vec(gv, srv, VEC, g - own, False)
            for a in range(kr):
                m = srv[a, TMPM]
                found = False
                for b in range(kp):
                    if srv[b, PLM] == m:
                        srv[b, PLG] += srv[a, TMPG]
                        found = True
                        break
                if not found:
                    srv[kp, PLM] = m
                    srv[kp, PLG] = srv[a, TMPG]
                    kp += 1
        for a in range(kp):
            srv[a, TMPM] = srv[a, PLM]
            srv[a, TMPG] = srv[a, PLG]
        k = kp
    else:
        avail_vec(gv, srv, False)
        for a in range(kp):
            srv[srv[a, PLM], VEC] += srv[a, PLG]
        if not fits_vec(gv, srv, VEC, g, single):
            return False
        release_claim(ji, gv, srv, rr, ce, c)
        m0 = -1
        best = 0
        for a in range(kp):  # its claim's server with the most GPUs (the first of equals)
            if m0 < 0 or srv[a, PLG] > best:
                m0 = srv[a, PLM]
                best = srv[a, PLG]
        if m0 >= 0 and srv[m0, VEC] >= g:
            srv[0, TMPM] = m0
            srv[0, TMPG] = g
            k = 1
        else:
            k = place_vec(gv, srv, VEC, g, single)
            if k == 0:
                return False
    launch(jf, jc, ji, gv, fv, srv, tree, rh, rr, ev, pool, holds, stt, stg, lgt, lgi, c, k, now)
    return True


@helper
def sort_claimants(jf, gv, rr):
    """The jobs holding a claim in key order, into rr[:n, CSORT]; returns n."""
    n = gv[G_NCL]
    for a in range(n):
        c = rr[a, CLL]
        b = a
        while b > 0 and key_less(jf, c, rr[b - 1, CSORT]):
            rr[b, CSORT] = rr[b - 1, CSORT]
            b -= 1
        rr[b, CSORT] = c
    return n
