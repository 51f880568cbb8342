"""The compiled kernel's free GPUs (numba): counts per server, bit masks, placements.

Free GPUs per server live in ``srv[:, FREE]``; ``gv[G_FCNT + f]`` counts the servers with f free
GPUs and ``tree`` is a segment tree of bit masks (bit f of a node: a server below it has f free
GPUs), so "the fullest server that fits" or "the lowest-index server with at least g free" costs
O(log servers) (:class:`~optsched.sim.model.resources.FreeGPUs` does the same with Python integers).

Two placement functions, with the results of :func:`optsched.core.placement.place`:
:func:`place_tree` on the free GPUs (the engine's ``sim.place``), and :func:`place_vec` on any
vector of GPUs per server in a column of ``srv`` (what the preemptive policies do when GPUs are
claimed: the free GPUs nobody claims, or those plus GPUs being saved). Both write the placement
to ``srv[:k, TMPM]`` / ``srv[:k, TMPG]`` sorted by server and return k (0: it does not fit).
"""

from __future__ import annotations

import numpy as np

from optsched.sim.compiled.jit import helper
from optsched.sim.compiled.layout import (
    CAP,
    CONSOLIDATE,
    FIRST_FIT,
    FREE,
    G_FCNT,
    G_MAXCAP,
    G_NRFREE,
    G_NUSAV,
    G_P,
    G_RULE,
    G_S,
    G_TOTFREE,
    G_WHOLEFREE,
    RFREE,
    TMPG,
    TMPM,
    USAV,
    VEC,
    WHOLE_NODE,
    WNORD,
)


@helper
def set_free(gv, srv, tree, m, new):
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
    while i >= 1:  # up to the first node whose mask does not change (nor do those above it)
        v = tree[2 * i] | tree[2 * i + 1]
        if tree[i] == v:
            break
        tree[i] = v
        i >>= 1


@helper
def find_server(tree, p, lo, bits):
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


@helper
def max_free(gv):
    for f in range(gv[G_MAXCAP], 0, -1):
        if gv[G_FCNT + f] > 0:
            return f
    return 0


@helper
def needs_layout(gv, single):
    """FreeGPUs.needs_layout: whether fitting depends on where the GPUs are, not only how many."""
    return single or gv[G_RULE] == WHOLE_NODE


@helper
def fits_free(gv, g, single):
    """FreeGPUs.fits on the free GPUs (WholeNodeGPUs.fits under whole_node)."""
    if gv[G_RULE] == WHOLE_NODE:
        if single or g <= gv[G_MAXCAP]:
            return max_free(gv) >= g
        return gv[G_WHOLEFREE] >= g
    if single:
        return max_free(gv) >= g
    return gv[G_TOTFREE] >= g


@helper
def fits_vec(gv, srv, col, g, single):
    """FreeGPUs.fits_in on the vector in column ``col`` of srv."""
    S = gv[G_S]
    if gv[G_RULE] == WHOLE_NODE and not single and g > gv[G_MAXCAP]:
        tot = 0
        for m in range(S):
            if srv[m, col] == srv[m, CAP]:
                tot += srv[m, CAP]
        return tot >= g
    if single or gv[G_RULE] == WHOLE_NODE:
        for m in range(S):  # noqa: SIM110 (numba: no generator in any())
            if srv[m, col] >= g:
                return True
        return False
    tot = 0
    for m in range(S):
        tot += srv[m, col]
    return tot >= g


@helper
def avail_vec(gv, srv, soon):
    """The policy's _vector into srv VEC: free GPUs nobody claims (``soon``: plus the GPUs being
    saved that nobody claims)."""
    S = gv[G_S]
    for m in range(S):
        v = srv[m, FREE] - srv[m, RFREE]
        if soon:
            v += srv[m, USAV]
        srv[m, VEC] = v


@helper
def sort_tmp(srv, k):
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


@helper
def _whole(gv, srv, col, g):
    """The whole_node rule for a job larger than a server: whole free servers, largest first."""
    k = 0
    need = g
    for q in range(gv[G_S]):
        m = srv[q, WNORD]
        f = srv[m, col]
        if f == srv[m, CAP] and f > 0:
            take = f if f < need else need
            srv[k, TMPM] = m
            srv[k, TMPG] = take
            k += 1
            need -= take
            if need == 0:
                sort_tmp(srv, k)
                return k
    return 0


@helper
def place_tree(gv, srv, tree, g, single):
    """FreeGPUs.place with the policy's rule on the free GPUs."""
    rule = gv[G_RULE]
    top = gv[G_MAXCAP]
    p = gv[G_P]
    if rule == WHOLE_NODE:
        if g > top:
            if gv[G_TOTFREE] < g:
                return 0
            return _whole(gv, srv, FREE, g)
        rule = CONSOLIDATE
        single = True
    if single or rule == CONSOLIDATE:
        m = -1
        if rule == CONSOLIDATE:  # the fullest server that fits, lowest index among equals
            for f in range(g, top + 1):
                if gv[G_FCNT + f] > 0:
                    m = find_server(tree, p, 0, np.int64(1) << f)
                    break
        elif rule == FIRST_FIT:
            if g <= top:
                m = find_server(tree, p, 0, ((np.int64(1) << (top + 1)) - 1) ^ ((np.int64(1) << g) - 1))
        else:  # least_loaded: most free first
            for f in range(top, g - 1, -1):
                if gv[G_FCNT + f] > 0:
                    m = find_server(tree, p, 0, np.int64(1) << f)
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
        m = find_server(tree, p, 0, bits)
        while m >= 0:
            f = srv[m, FREE]
            take = f if f < need else need
            srv[k, TMPM] = m
            srv[k, TMPG] = take
            k += 1
            need -= take
            if need == 0:
                return k
            m = find_server(tree, p, m + 1, bits)
        return 0  # unreachable: total_free >= g
    for f in range(top, 0, -1):  # most free first, lower index first among equals
        if gv[G_FCNT + f] == 0:
            continue
        bit = np.int64(1) << f
        m = find_server(tree, p, 0, bit)
        while m >= 0:
            take = f if f < need else need
            srv[k, TMPM] = m
            srv[k, TMPG] = take
            k += 1
            need -= take
            if need == 0:
                sort_tmp(srv, k)
                return k
            m = find_server(tree, p, m + 1, bit)
    return 0  # unreachable


@helper
def place_vec(gv, srv, col, g, single):
    """optsched.core.placement.place(srv[:, col], g, rule=the policy's, single_server=single,
    capacity=srv[:, CAP]) (O(servers))."""
    rule = gv[G_RULE]
    S = gv[G_S]
    top = gv[G_MAXCAP]
    if rule == WHOLE_NODE:
        if g > top:
            return _whole(gv, srv, col, g)
        rule = CONSOLIDATE
        single = True
    if single or rule == CONSOLIDATE:
        best = -1
        for m in range(S):
            v = srv[m, col]
            if v < g:
                continue
            if rule == FIRST_FIT:
                best = m
                break
            if rule == CONSOLIDATE:  # best fit: the fullest that fits, lowest index among equals
                if best < 0 or v < srv[best, col]:
                    best = m
            elif best < 0 or v > srv[best, col]:  # least_loaded: most free, lowest index
                best = m
        if best >= 0:
            srv[0, TMPM] = best
            srv[0, TMPG] = g
            return 1
        if single:
            return 0
    tot = 0
    for m in range(S):
        tot += srv[m, col]
    if tot < g:
        return 0
    k = 0
    need = g
    if rule == FIRST_FIT:
        for m in range(S):
            v = srv[m, col]
            if v > 0:
                take = v if v < need else need
                srv[k, TMPM] = m
                srv[k, TMPG] = take
                k += 1
                need -= take
                if need == 0:
                    return k
        return 0  # unreachable
    for f in range(top, 0, -1):  # most first, lower index first among equals
        for m in range(S):
            if srv[m, col] == f:
                take = f if f < need else need
                srv[k, TMPM] = m
                srv[k, TMPG] = take
                k += 1
                need -= take
                if need == 0:
                    sort_tmp(srv, k)
                    return k
    return 0  # unreachable


@helper
def fits_avail(gv, srv, g, single, soon):
    """The policy's _fits(job, soon) with claims: the free GPUs nobody claims (``soon``: plus the
    GPUs being saved nobody claims), by count or, where the layout matters, on the vector."""
    if not needs_layout(gv, single):
        tot = gv[G_TOTFREE] - gv[G_NRFREE]
        if soon:
            tot += gv[G_NUSAV]
        return tot >= g
    if gv[G_NRFREE] == 0 and not (soon and gv[G_NUSAV] > 0):
        return fits_free(gv, g, single)
    avail_vec(gv, srv, soon)
    return fits_vec(gv, srv, VEC, g, single)
