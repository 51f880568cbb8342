"""Tiresias and 2D-LAS decided on arrays once per slot: the same keys, pins and schedules as the
per-job rule (:meth:`key`, :meth:`pinned`, the entry-by-entry :meth:`_schedule_exact`)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched.elastic.policy_base import ElasticRate, to_sim
from optsched.elastic.policy_priority import Elastic2DLAS, ElasticTiresias
from optsched.sim import Simulator

from .strategies import drawn_instances

CLASSES = {"tiresias": ElasticTiresias, "2d-las": Elastic2DLAS}
DRAWN = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _run(inst, cls, load_slots: float):
    cl, jobs = to_sim(inst)
    pol = cls(inst)
    res = Simulator(
        cl,
        jobs,
        pol,
        rate_model=ElasticRate(),
        slot=1.0,
        record_log=False,
        load_time=lambda job, placement: load_slots if job.n_starts > 1 else 0.0,
    ).run()
    return res, pol


@DRAWN
@given(
    inst=drawn_instances(max_jobs=8, max_servers=3, max_arrival=4, n_worker_types=2, n_ps_types=2),
    name=st.sampled_from(sorted(CLASSES)),
    load_slots=st.sampled_from([0.0, 0.3, 0.6, 1.5]),
)
def test_bulk_keys_and_pins_are_the_per_job_ones_to_the_last_bit(inst, name, load_slots):
    """At every slot the keys and pins computed from the arrays equal :meth:`key` and :meth:`pinned`
    job by job, bit for bit (resume loads make 2D-LAS pin jobs)."""
    cls = CLASSES[name]
    seen = []

    def _keys_pins(self, sim, act, idx, attained, trains, rate, busy):
        keys, pins = cls._keys_pins(self, sim, act, idx, attained, trains, rate, busy)
        assert keys.tolist() == [self.key(j) for j in act]
        want = [bool(b) and self.pinned(sim, j) for j, b in zip(act, busy, strict=True)]
        assert (pins.tolist() if pins is not None else [False] * len(act)) == want
        seen.append(len(act))
        return keys, pins

    checked = type(f"Checked{cls.__name__}", (cls,), {"_keys_pins": _keys_pins})
    _, pol = _run(inst, checked, load_slots)
    assert pol._whole and seen  # drawn capacities and uses are whole numbers: the array path ran


@DRAWN
@given(
    inst=drawn_instances(max_jobs=8, max_servers=3, max_arrival=4, n_worker_types=2, n_ps_types=2),
    name=st.sampled_from(sorted(CLASSES)),
    load_slots=st.sampled_from([0.0, 0.3, 0.6, 1.5]),
)
def test_the_array_rule_gives_the_entry_by_entry_schedule(inst, name, load_slots):
    """The same starts (slot, shape, servers) and the same per-job completion times, exactly, as the
    entry-by-entry rule on the same instance."""
    cls = CLASSES[name]

    def on_start(self, sim):
        cls.on_start(self, sim)
        self._whole = False

    entrywise = type(f"Entrywise{cls.__name__}", (cls,), {"on_start": on_start})
    a, pa = _run(inst, cls, load_slots)
    b, pb = _run(inst, entrywise, load_slots)
    assert pa._whole and not pb._whole
    assert pa.starts == pb.starts
    fa, fb = a.jobs_frame(), b.jobs_frame()
    assert np.array_equal(fa["completion"].to_numpy(), fb["completion"].to_numpy(), equal_nan=True)
    assert fa.equals(fb)


def test_a_subclass_with_its_own_pin_is_decided_by_it():
    """A subclass's own :meth:`pinned` is asked job by job (the array form is 2D-LAS's own)."""
    from optsched.elastic import toy_instance

    asked = []

    class Never(Elastic2DLAS):
        def pinned(self, sim, job):
            asked.append(job.id)
            return False

    res, _ = _run(toy_instance(), Never, 0.6)
    assert asked and (res.jobs_frame()["status"] == "done").all()
