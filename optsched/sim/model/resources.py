"""Free-GPU bookkeeping with fast placement (bit sets per free-GPU count), GPU identities, and
the other resources of the servers (:class:`FreeResources`).

:class:`FreeGPUs` keeps, for every count ``f``, the set of servers with exactly ``f`` free GPUs
as a Python integer used as a bit set. Finding "the fullest server that still fits" or "the
lowest-index server with at least ``g`` free GPUs" is then a few big-integer operations instead
of a scan over all servers, which matters on a 750-server cluster replaying a million jobs.

The placements are identical to :func:`optsched.core.placement.place` on the same free vector
(tested with hypothesis), so policies get the same behaviour as the offline heuristics.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from optsched.core.placement import PLACEMENT_RULES, place
from optsched.exceptions import InvalidOptionError, SimulationError, UnknownNameError


def lowest_bits(mask: int, g: int) -> int:
    took = 0
    for _ in range(g):
        if not mask:
            break
        low = mask & -mask
        took |= low
        mask ^= low
    return took


#: _LOWEST[mask][g]: the g lowest set bits of an 8-bit mask (GPU ids of servers of <= 8 GPUs).
_LOWEST = [[lowest_bits(m, g) for g in range(9)] for m in range(256)]


def _bits(mask: int):
    """Indices of the set bits of ``mask`` in increasing order."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


class FreeGPUs:
    """Free GPUs per server with O(max GPUs per server) placement queries.

    Parameters
    ----------
    capacity : sequence of int
        GPUs per server.
    whole_node : bool
        Tiresias' "yarn" placement (rule ``whole_node``): a job of at most one server's GPUs
        fits only on one server, a larger one only on servers with every GPU free.

    Examples
    --------
    >>> f = FreeGPUs([4, 4, 2])
    >>> f.place(2)            # consolidate: the fullest server that fits (server 2)
    {2: 2}
    >>> f.allocate({0: 3}); f.free_list, f.total_free, f.max_free
    ([1, 4, 2], 7, 4)
    >>> f.place(6)            # no single server fits: most free first
    {1: 4, 2: 2}
    """

    __slots__ = ("capacity", "free_list", "total_free", "_bucket", "_maxcap", "_n", "whole_free", "free_ids")

    whole_node = False

    def __new__(cls, capacity: Sequence[int] = (), *, whole_node: bool = False):
        # whole_node=True gives the subclass, so that the default path pays nothing for it
        if whole_node and cls is FreeGPUs:
            cls = WholeNodeGPUs
        return super().__new__(cls)

    def __init__(self, capacity: Sequence[int], *, whole_node: bool = False):
        self.capacity = [int(c) for c in capacity]
        self._n = len(self.capacity)
        self._maxcap = max(self.capacity) if self.capacity else 0
        self.free_list = list(self.capacity)
        self.total_free = sum(self.capacity)
        self._bucket = [0] * (self._maxcap + 1)
        for m, c in enumerate(self.capacity):
            self._bucket[c] |= 1 << m
        self.free_ids = [(1 << c) - 1 for c in self.capacity]  # per server: bit k set = GPU k free
        self.whole_free = self.total_free  # GPUs on servers with every GPU free (kept by WholeNodeGPUs)

    # -- queries ---------------------------------------------------------------------------
    @property
    def n_servers(self) -> int:
        return self._n

    @property
    def max_free(self) -> int:
        """Largest number of free GPUs on one server."""
        b = self._bucket
        for f in range(self._maxcap, 0, -1):
            if b[f]:
                return f
        return 0

    def fits(self, gpus: int, single_server: bool = False) -> bool:
        """Whether ``gpus`` GPUs (on one server if ``single_server``) are free now."""
        if single_server:
            b = self._bucket
            return any(b[f] for f in range(self._maxcap, gpus - 1, -1))
        return self.total_free >= gpus

    def fits_in(self, free: Sequence[int], gpus: int, single_server: bool = False) -> bool:
        """:meth:`fits` on another free vector (e.g. the free GPUs after some preemptions)."""
        if single_server:
            return max(free, default=0) >= gpus
        return sum(free) >= gpus

    def needs_layout(self, gpus: int, single_server: bool) -> bool:
        """Whether fitting ``gpus`` depends on where the free GPUs are, not only on how many."""
        return single_server

    def as_array(self) -> np.ndarray:
        return np.array(self.free_list, dtype=np.int64)

    # -- updates ---------------------------------------------------------------------------
    def _set(self, m: int, new: int) -> None:
        old = self.free_list[m]
        bit = 1 << m
        self._bucket[old] ^= bit
        self._bucket[new] |= bit
        self.free_list[m] = new

    def allocate(self, placement: Mapping[int, int]) -> None:
        """Take ``placement`` = {server: GPUs}; the caller has checked it fits."""
        fl = self.free_list
        b = self._bucket
        for m, g in placement.items():  # (_set inlined: this runs at every start)
            old = fl[m]
            bit = 1 << m
            b[old] ^= bit
            b[old - g] |= bit
            fl[m] = old - g
            self.total_free -= g

    def release(self, placement: Mapping[int, int]) -> None:
        fl = self.free_list
        b = self._bucket
        for m, g in placement.items():
            old = fl[m]
            bit = 1 << m
            b[old] ^= bit
            b[old + g] |= bit
            fl[m] = old + g
            self.total_free += g

    def take_ids(
        self, placement: Mapping[int, int], want: Mapping[int, Sequence[int]] | None = None, who: Any = "the job"
    ) -> dict[int, int]:
        """Take GPU ids for ``placement`` (already allocated by count): ``want`` = {server: ids}
        where the policy names them, else the lowest free ids. Returns {server: bit mask of ids}.

        Raises
        ------
        SimulationError
            If a wanted id repeats, does not exist, is not free, or the count does not match.
        """
        out: dict[int, int] = {}
        fid = self.free_ids
        if not want:  # the lowest free ids: cannot fail (the counts were checked against the free GPUs)
            if self._maxcap <= 8:
                for m, g in placement.items():
                    took = _LOWEST[fid[m]][g]
                    fid[m] ^= took
                    out[m] = took
                return out
            for m, g in placement.items():
                if g <= 0:
                    continue
                mask = fid[m]
                took = 0
                for _ in range(g):
                    low = mask & -mask
                    took |= low
                    mask ^= low
                fid[m] ^= took
                out[m] = took
            return out
        who = getattr(who, "label", who)
        if want:
            unknown = [m for m in want if m not in placement]
            if unknown:
                raise SimulationError(
                    f"The gpu_ids of {who} name server(s) {unknown}, which its placement "
                    f"{dict(placement)} does not use."
                )
        for m, g in placement.items():
            if g <= 0:
                continue
            mask = fid[m]
            ids = want.get(m) if want else None
            if ids is None:
                took = 0
                for _ in range(g):
                    low = mask & -mask
                    took |= low
                    mask ^= low
            else:
                ids = [int(x) for x in ids]
                took = 0
                for x in ids:
                    if not 0 <= x < self.capacity[m]:
                        raise SimulationError(
                            f"The gpu_ids of {who} name GPU {x} of server {m}, which has GPUs "
                            f"0..{self.capacity[m] - 1}."
                        )
                    took |= 1 << x
                if len(ids) != g or took.bit_count() != g:
                    raise SimulationError(
                        f"The gpu_ids of {who} on server {m} must be {g} distinct GPUs (its "
                        f"placement count); got {ids}."
                    )
                busy = took & ~mask
                if busy:
                    held = [k for k in range(self.capacity[m]) if busy >> k & 1]
                    raise SimulationError(
                        f"{who} asks for GPU(s) {held} of server {m}, which are not free; free "
                        f"there: {[k for k in range(self.capacity[m]) if mask >> k & 1]}."
                    )
            out[m] = took
        for m, took in out.items():  # commit only when every server's ids are valid
            fid[m] &= ~took
        return out

    def check(self, placement: object, gpus: int, single_server: bool, who: str) -> dict[int, int]:
        """Validate a placement a policy asked for; return it as a clean ``dict``.

        Raises
        ------
        SimulationError
            If it is not a mapping of valid server indices to positive GPU counts summing to
            ``gpus``, exceeds the free GPUs of a server, or spans servers for a single-server job.
        """
        if not isinstance(placement, Mapping) or not placement:
            raise SimulationError(
                f"The placement of {who} must be a non-empty mapping {{server index: GPUs}}; got {placement!r}. "
                f"Use sim.place(job) to get one."
            )
        out: dict[int, int] = {}
        total = 0
        fl = self.free_list
        for m, g in placement.items():
            if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not 0 <= m < self._n:
                raise SimulationError(f"The placement of {who} names server {m!r}; servers are 0..{self._n - 1}.")
            if isinstance(g, bool) or not isinstance(g, (int, np.integer)) or g <= 0:
                raise SimulationError(f"The placement of {who} gives server {m} {g!r} GPUs; give a positive integer.")
            m, g = int(m), int(g)
            if g > fl[m]:
                raise SimulationError(
                    f"The placement of {who} takes {g} GPUs on server {m}, which has {fl[m]} free "
                    f"(of {self.capacity[m]}): over capacity. Place it within the free GPUs."
                )
            out[m] = g
            total += g
        if total != gpus:
            raise SimulationError(
                f"The placement of {who} holds {total} GPUs; the job needs {gpus}. Give exactly {gpus}."
            )
        if single_server and len(out) > 1:
            raise SimulationError(
                f"{who} is single-server but its placement spans servers {sorted(out)}; put it on one server."
            )
        return out

    # -- placement -------------------------------------------------------------------------
    def place(
        self, gpus: int, rule: str = "consolidate", single_server: bool = False, rng: np.random.Generator | None = None
    ) -> dict[int, int] | None:
        """Same result as :func:`optsched.core.placement.place` on :attr:`free_list`."""
        if gpus <= 0:
            raise InvalidOptionError(f"A placement needs a positive GPU count; got {gpus}.")
        if rule == "random":
            return place(self.as_array(), gpus, rule="random", single_server=single_server, rng=rng)
        if rule == "whole_node":
            if gpus > self._maxcap:
                if self.total_free < gpus:
                    return None
                return place(self.as_array(), gpus, rule="whole_node", capacity=np.array(self.capacity))
            rule, single_server = "consolidate", True
        if rule not in PLACEMENT_RULES:
            raise UnknownNameError(f"Unknown placement rule {rule!r}; choose one of {list(PLACEMENT_RULES)}.")
        b = self._bucket
        top = self._maxcap
        if single_server or rule == "consolidate":
            if rule == "consolidate":  # fullest server that fits, lowest index among equals
                for f in range(gpus, top + 1):
                    if b[f]:
                        mask = b[f]
                        return {(mask & -mask).bit_length() - 1: gpus}
            elif rule == "first_fit":
                mask = 0
                for f in range(gpus, top + 1):
                    mask |= b[f]
                if mask:
                    return {(mask & -mask).bit_length() - 1: gpus}
            else:  # least_loaded: most free first
                for f in range(top, gpus - 1, -1):
                    if b[f]:
                        mask = b[f]
                        return {(mask & -mask).bit_length() - 1: gpus}
            if single_server:
                return None
        if self.total_free < gpus:
            return None
        out: dict[int, int] = {}
        need = gpus
        fl = self.free_list
        if rule == "first_fit":
            mask = 0
            for f in range(1, top + 1):
                mask |= b[f]
            for m in _bits(mask):
                take = fl[m] if fl[m] < need else need
                out[m] = take
                need -= take
                if need == 0:
                    break
            return out
        for f in range(top, 0, -1):  # most free first, lower index first among equals
            for m in _bits(b[f]):
                take = f if f < need else need
                out[m] = take
                need -= take
                if need == 0:
                    return dict(sorted(out.items()))
        return dict(sorted(out.items()))  # pragma: no cover - total_free guarantees a return above


class WholeNodeGPUs(FreeGPUs):
    """:class:`FreeGPUs` for the ``whole_node`` rule (Tiresias' "yarn" placement): a job of at most
    one server's GPUs fits only on one server, a larger one only on servers with every GPU free.
    ``FreeGPUs(capacity, whole_node=True)`` builds one."""

    __slots__ = ()
    whole_node = True

    def fits(self, gpus: int, single_server: bool = False) -> bool:
        if single_server or gpus <= self._maxcap:
            b = self._bucket
            return any(b[f] for f in range(self._maxcap, gpus - 1, -1))
        return self.whole_free >= gpus

    def fits_in(self, free: Sequence[int], gpus: int, single_server: bool = False) -> bool:
        if single_server or gpus <= self._maxcap:
            return max(free, default=0) >= gpus
        return sum(c for f, c in zip(free, self.capacity, strict=True) if f == c) >= gpus

    def needs_layout(self, gpus: int, single_server: bool) -> bool:
        return True

    def allocate(self, placement: Mapping[int, int]) -> None:
        fl = self.free_list
        for m, g in placement.items():
            self._set(m, fl[m] - g)
            self.total_free -= g

    def release(self, placement: Mapping[int, int]) -> None:
        fl = self.free_list
        for m, g in placement.items():
            self._set(m, fl[m] + g)
            self.total_free += g

    def _set(self, m: int, new: int) -> None:
        old = self.free_list[m]
        super()._set(m, new)
        c = self.capacity[m]
        self.whole_free += (new == c) * c - (old == c) * c


def ids_of(mask: int) -> tuple[int, ...]:
    """GPU ids of a bit mask (``0b1010`` -> ``(1, 3)``)."""
    return tuple(_bits(mask))


class FreeResources:
    """Free amounts of the resources other than GPUs, servers x resources (a NumPy array).

    Built by the simulator when a server declares resources (``Server.resources``) or a job
    declares demands (``Job.resources``). A job's use of a server is its explicit resource vector
    in the placement, else its declared demands shared over its servers in proportion to its GPUs
    (the verifier's rule, :func:`optsched.verify.feasibility.check_resources`).

    Examples
    --------
    >>> r = FreeResources(["cpu"], [[8.0], [0.0]])
    >>> r.allocate(r.check({0: {"cpu": 6}}, "job 0")); r.free.tolist()
    [[2.0], [0.0]]
    """

    __slots__ = ("names", "index", "capacity", "free")

    def __init__(self, names: Sequence[str], capacity: Any):
        self.names = tuple(names)
        self.index = {r: k for k, r in enumerate(self.names)}
        self.capacity = np.array(capacity, dtype=float).reshape(-1, len(self.names))
        self.free = self.capacity.copy()

    def share(
        self, demand: Mapping[str, float], placement: Mapping[int, int], gpus: int
    ) -> dict[int, dict[str, float]]:
        """A job's declared ``demand`` shared over ``placement`` in proportion to GPUs."""
        if not demand:
            return {}
        return {m: {r: a * g / max(1, gpus) for r, a in demand.items()} for m, g in placement.items() if g > 0}

    def check(self, usage: Mapping[int, Mapping[str, float]], who: str) -> dict[int, dict[str, float]]:
        """Validate ``usage`` = {server: {resource: amount}} against the free amounts; return it clean.

        Raises
        ------
        SimulationError
            Naming the job, server, resource, requested and free amounts.
        """
        out: dict[int, dict[str, float]] = {}
        n = len(self.capacity)
        for m, vec in usage.items():
            if not 0 <= m < n:
                raise SimulationError(f"The placement of {who} names server {m!r}; servers are 0..{n - 1}.")
            clean = {}
            for r, a in vec.items():
                a = float(a)
                if not (a >= 0 and math.isfinite(a)):
                    raise SimulationError(f"{who} asks for {a!r} of '{r}' on server {m}; give a finite amount >= 0.")
                k = self.index.get(r)
                have = float(self.free[m, k]) if k is not None else 0.0
                if a > have + 1e-9 * max(1.0, a):
                    raise SimulationError(
                        f"{who} asks for {a:g} of '{r}' on server {m}, which has {have:g} free"
                        + (f" (of {self.capacity[m, k]:g})" if k is not None else " (no server declares it)")
                        + ". Place it where the resource is free."
                    )
                if a > 0:
                    clean[r] = a
            if clean:
                out[m] = clean
        return out

    def fits(self, usage: Mapping[int, Mapping[str, float]]) -> bool:
        idx, free = self.index, self.free
        for m, vec in usage.items():
            for r, a in vec.items():
                k = idx.get(r)
                if k is None or a > free[m, k] + 1e-9 * max(1.0, a):
                    return False
        return True

    def allocate(self, usage: Mapping[int, Mapping[str, float]]) -> None:
        idx, free = self.index, self.free
        for m, vec in usage.items():
            for r, a in vec.items():
                free[m, idx[r]] -= a

    def release(self, usage: Mapping[int, Mapping[str, float]]) -> None:
        idx, free = self.index, self.free
        for m, vec in usage.items():
            for r, a in vec.items():
                free[m, idx[r]] += a
