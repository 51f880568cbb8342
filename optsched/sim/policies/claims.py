"""Claims (R6-R10 of ``formulations/lazer.md``, :mod:`optsched.sim.rules`): the GPUs a waiting job
is promised by the preemptive round, and the GPUs available to a job under them.

A claim (:class:`_Claim`) holds, per server, free GPUs and GPUs still being saved by preempted jobs
(or whose load is being lost) for one waiting job; a claimed GPU is never given to another job.
:class:`Claims` is the bookkeeping the preemptive policies (:mod:`.preemptive`) build on: the
claimed and the being-saved GPUs per server, the fit of a job in what it may use, making, ending
and starting on a claim.

Tested in ``tests/sim/test_rules.py`` and ``tests/sim/test_preemption_invariants.py``.
"""

from __future__ import annotations

from abc import ABCMeta, abstractmethod
from typing import Any

import numpy as np

from optsched.core.placement import place
from optsched.exceptions import SimulationError
from optsched.sim.model.state import SimJob
from optsched.sim.policy import Policy
from optsched.sim.rules import available, soon_available


class _Claim:
    """GPUs promised to one waiting job (rule R6 of ``formulations/lazer.md``): ``free`` ({server: GPUs}
    free now) and ``pending`` ({index of a job saving: {server: GPUs}}, free when its save ends)."""

    __slots__ = ("job", "free", "pending")

    def __init__(self, job: SimJob):
        self.job = job
        self.free: dict[int, int] = {}
        self.pending: dict[int, dict[int, int]] = {}


class Claims(Policy, metaclass=ABCMeta):
    """The claims of a preemptive policy: ``_claims`` (waiting job index -> its :class:`_Claim`),
    the free GPUs claimed per server (``_rfree``, ``_nrfree`` in all), and the GPUs being saved
    that nobody claims (``_saving``: job saving -> {server: GPUs}; ``_usav``, ``_nusav`` in all).
    A round with none of them takes the baselines' fast path (free-GPU buckets, no vectors).

    A subclass gives the key (:meth:`_wait_key`, R4), the waiting ``queue`` and :meth:`_start`
    (start a job and track it as running)."""

    @abstractmethod
    def _wait_key(self, job: SimJob) -> Any:
        """A waiting job's key ``(value, arrival, index)`` (R4; its value compares with the running
        jobs' values)."""

    @abstractmethod
    def _start(self, sim: Any, job: SimJob, placement: dict[int, int] | None = None) -> None:
        """Start ``job`` on ``placement`` (None: the placement rule) and track it as running."""

    def _reset_claims(self, n_servers: int) -> None:
        """No claim and nothing being saved (a run's start)."""
        self._claims: dict[int, _Claim] = {}  # waiting job index -> its claim (R6)
        self._rfree = [0] * n_servers  # free GPUs claimed, per server
        self._nrfree = 0
        self._saving: dict[int, dict[int, int]] = {}  # job saving -> its GPUs nobody claims, per server
        self._usav = [0] * n_servers  # GPUs being saved that nobody claims, per server
        self._nusav = 0

    def _save_ended(self, left: dict[int, int], index: int) -> None:
        """The save (or lost load) of job ``index`` ended: its GPUs (``left`` of them unclaimed) are
        free; the ones a claim holds stay claimed, as free GPUs of that claim."""
        usav = self._usav
        for m, g in left.items():
            usav[m] -= g
            self._nusav -= g
        rfree = self._rfree
        for cl in self._claims.values():
            part = cl.pending.pop(index, None)
            if part:
                for m, g in part.items():
                    cl.free[m] = cl.free.get(m, 0) + g
                    rfree[m] += g
                    self._nrfree += g

    # the GPUs a job may use (R6) ------------------------------------------------------------------------
    def _vector(self, sim, soon: bool, extra: dict[int, int] | None = None) -> list[int]:
        """Free GPUs nobody claims per server, the GPUs available (R6; ``soon``: plus GPUs being saved
        nobody claims; ``extra``: plus the GPUs of chosen victims)."""
        rf = self._rfree
        vec = [f - r for f, r in zip(sim.free_gpus, rf, strict=True)] if self._nrfree else list(sim.free_gpus)
        if soon and self._nusav:
            for m, g in enumerate(self._usav):
                vec[m] += g
        if extra:
            for m, g in extra.items():
                vec[m] += g
        return vec

    def _fits(self, sim, job, soon: bool = False, extra: dict[int, int] | None = None, n_extra: int = 0) -> bool:
        """Whether ``job`` fits in the GPUs available to it (R6, R8; ``soon``/``extra`` as :meth:`_vector`)."""
        free = sim.free
        g = job.gpus
        if not free.needs_layout(g, job.single_server):
            room = (
                soon_available(free.total_free, self._nrfree, self._nusav)
                if soon
                else available(free.total_free, self._nrfree)
            )
            return room + n_extra >= g
        if not self._nrfree and not extra and not (soon and self._nusav):
            return free.fits(g, job.single_server)
        return free.fits_in(self._vector(sim, soon, extra), g, job.single_server)

    def _placement(self, sim, job, vec: list[int]) -> dict[int, int] | None:
        """A placement of ``job`` within ``vec`` by the policy's rule."""
        cap = np.asarray(sim.free.capacity) if self.placement == "whole_node" else None
        return place(
            np.asarray(vec), job.gpus, rule=self.placement, single_server=job.single_server, rng=sim.rng, capacity=cap
        )

    def _try_start(self, sim, job) -> bool:
        """R8: start ``job`` in the free GPUs nobody claims if it fits there (its other resources too)."""
        if not self._fits(sim, job):
            return False
        pl = None if not self._nrfree else self._placement(sim, job, self._vector(sim, False))
        if sim.res is not None and job.resources:
            if pl is None:
                pl = sim.place(job)
            if pl is None or not sim.res.fits(sim.res.share(job.resources, pl, job.gpus)):
                return False
        self._start(sim, job, pl)
        return True

    # claims ------------------------------------------------------------------------------------------
    def _claim(self, sim, job, victims=()) -> None:
        """Claim GPUs (R6) for waiting ``job`` (R10/R11): its victims' GPUs being saved first, then other GPUs
        being saved that nobody claims, then free ones nobody claims; on the servers the placement
        rule picks when the layout matters (single-server jobs, whole-node)."""
        g = job.gpus
        soon = self._vector(sim, True)
        if sim.free.needs_layout(g, job.single_server):
            room = self._placement(sim, job, soon)
        else:
            room = dict(enumerate(soon))
        if room is None:  # pragma: no cover - the callers checked that it fits
            raise SimulationError(f"Internal error: no room to claim for {job.label} at t={sim.now:g}.")
        cl = _Claim(job)
        need = g
        order = [v.index for v in victims if v.index in self._saving]
        order += sorted(i for i in self._saving if i not in set(order))
        for i in order:  # GPUs being saved
            left = self._saving[i]
            for m in list(left):
                take = min(left[m], room.get(m, 0), need)
                if take <= 0:
                    continue
                left[m] -= take
                if not left[m]:
                    del left[m]
                room[m] -= take
                need -= take
                self._usav[m] -= take
                self._nusav -= take
                cl.pending.setdefault(i, {})[m] = take
                if not need:
                    break
            if not need:
                break
        if need:  # then free GPUs nobody claims
            fl, rf = sim.free_gpus, self._rfree
            for m in sorted(room):
                take = min(fl[m] - rf[m], room[m], need)
                if take <= 0:
                    continue
                cl.free[m] = take
                rf[m] += take
                self._nrfree += take
                need -= take
                if not need:
                    break
        if need:  # pragma: no cover
            raise SimulationError(f"Internal error: {job.label} claimed {g - need} of {g} GPUs at t={sim.now:g}.")
        self._claims[job.index] = cl

    def _drop_claims(self) -> None:
        """R7 (``reserve="best"``): every claim ends; its jobs wait in the queue again."""
        for cl in list(self._claims.values()):
            self._release_claim(cl)
            self.queue.push(cl.job, self._wait_key(cl.job))

    def _release_claim(self, cl: _Claim) -> None:
        """End a claim: its free GPUs are nobody's, its GPUs still being saved become unclaimed."""
        del self._claims[cl.job.index]
        rf, usav = self._rfree, self._usav
        for m, g in cl.free.items():
            rf[m] -= g
            self._nrfree -= g
        for i, part in cl.pending.items():
            left = self._saving[i]
            for m, g in part.items():
                left[m] = left.get(m, 0) + g
                usav[m] += g
                self._nusav += g

    def _try_start_claimant(self, sim, cl: _Claim) -> bool:
        """R8 for a job holding a claim: it starts if it fits in its claimed free GPUs plus the free GPUs
        nobody claims, on its claimed GPUs first; its claim ends."""
        job = cl.job
        g = job.gpus
        own = sum(cl.free.values())
        free = sim.free
        if not free.needs_layout(g, job.single_server):
            if available(free.total_free, self._nrfree, own) < g:
                return False
            self._release_claim(cl)
            pl = {m: k for m, k in cl.free.items() if k}
            if own < g:
                vec = self._vector(sim, False)
                for m, k in pl.items():
                    vec[m] -= k
                rest = place(np.asarray(vec), g - own, rule=self.placement, rng=sim.rng)
                for m, k in rest.items():
                    pl[m] = pl.get(m, 0) + k
        else:
            vec = self._vector(sim, False)
            for m, k in cl.free.items():
                vec[m] += k
            if not free.fits_in(vec, g, job.single_server):
                return False
            self._release_claim(cl)
            m0 = max(cl.free, key=cl.free.get) if own else None  # its claim's server, if it fits there
            pl = {m0: g} if m0 is not None and vec[m0] >= g else self._placement(sim, job, vec)
        self._start(sim, job, pl)
        return True

    def _start_claimants(self, sim) -> None:
        """R8 for the jobs holding a claim only, in key order; the others wait for it (R9; periodic SRTF
        between ticks)."""
        for cl in sorted(self._claims.values(), key=lambda cl: self._wait_key(cl.job)):
            self._try_start_claimant(sim, cl)
