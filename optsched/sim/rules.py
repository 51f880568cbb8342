"""The simulator's rules R1-R12, named once: what they say, the small pure functions that state
them in code, and the functions that carry each rule in each engine.

The rules are decided, with the reason for each, in ``formulations/lazer.md#simulator-rules``;
:data:`RULES` states each in one sentence (the table of ``docs/simulator.md`` quotes these
sentences; a test keeps the two equal) and names where it lives: ``python``, the functions of the
Python engine and its policies (``module:qualified name``), and ``compiled``, the functions of the
compiled kernel (``module:function`` under :mod:`optsched.sim.compiled`). A test resolves every
name (the compiled ones by parsing the kernel's source, without importing numba) and checks that
every rule has a carrier in the Python engine. Every rule has a compiled carrier too: the kernel
runs load and save times, so claims (R6, R7, R9, R10) live in ``compiled/claims.py``.

The functions below take and return plain numbers (no simulator objects), so the compiled engine
may compile them as they are. The Python engine calls them, except in its victim search, where
:func:`outranks` and :func:`started_now` are written inline (``<``, ``==``) with a comment naming
them: there a call per running job looked at cost 1.7 % of a LAS replay's instructions
(``philly-1k-las``, valgrind).
"""

from __future__ import annotations

from dataclasses import dataclass

# -- R3: the order of events at one time (lower first; ties by insertion) ---------------------------
P_STAGE, P_SAVED, P_LOADED, P_ARRIVAL, P_TIMER = 0, 1, 2, 3, 4


# -- R4: the key -------------------------------------------------------------------------------------
def las_value(attained: float, gpus: int, gpu_weighted: bool) -> float:
    """R4 for LAS: a job's value is its attained service (work done), times its GPUs with
    ``gpu_weighted`` (Tiresias' 2D-LAS). SRTF's value is the remaining work
    (:meth:`~optsched.sim.SimJob.remaining`). The key is ``(value, arrival, input position)``.

    >>> las_value(30.0, 4, False), las_value(30.0, 4, True)
    (30.0, 120.0)
    """
    return attained * gpus if gpu_weighted else attained


# -- R5: strictly worse --------------------------------------------------------------------------------
def outranks(value: float, than: float) -> bool:
    """R5: a job of value ``value`` may preempt a running job of value ``than`` only if it is
    strictly better (lower): equal values never preempt (the rest of the key breaks ties for
    the order, never for a preemption).

    >>> outranks(3.0, 5.0), outranks(5.0, 5.0)
    (True, False)
    """
    return value < than


def started_now(started: float | None, now: float) -> bool:
    """R5: a job started at this very time (``started == now``) is never a victim: no job is
    taken back in the round that started it.

    >>> started_now(10.0, 10.0), started_now(4.0, 10.0), started_now(None, 10.0)
    (True, False, False)
    """
    return started == now


# -- R6: the GPUs available to a job --------------------------------------------------------------------
def available(free: int, claimed: int, own: int = 0) -> int:
    """R6: GPUs available to a waiting job: the ``free`` GPUs less those ``claimed`` (free GPUs
    promised to waiting jobs), plus its ``own`` claimed free GPUs.

    >>> available(8, 3), available(8, 3, own=2)
    (5, 7)
    """
    return free - claimed + own


def soon_available(free: int, claimed: int, saving: int) -> int:
    """R6: GPUs soon available: :func:`available` plus the GPUs being ``saving`` (by preempted jobs,
    or a load being lost) that nobody claims.

    >>> soon_available(8, 3, 2)
    7
    """
    return free - claimed + saving


# -- the rules and their carriers ------------------------------------------------------------------------
_ENGINE = "optsched.sim.engine:PythonEngine"
_ACTIONS = "optsched.sim.actions:EngineActions"
_QUEUE = "optsched.sim.policies.baselines:_QueuePolicy"
_ROUND = "optsched.sim.policies.preemptive:Preemptive"
_CLAIMS = "optsched.sim.policies.claims:Claims"
_PERIODIC = "optsched.sim.policies.periodic:PeriodicSRTF"


@dataclass(frozen=True)
class Rule:
    """One rule: its number, a short name, its statement (one sentence), and the functions that
    carry it in the Python engine (``python``) and in the compiled kernel (``compiled``).

    Examples
    --------
    >>> RULES[5].name, RULES[5].compiled
    ('strictly worse', ('rounds:make_room', 'rounds:r5_started_now'))
    """

    number: int
    name: str
    statement: str
    python: tuple[str, ...]
    compiled: tuple[str, ...] = ()

    @property
    def anchor(self) -> str:
        """Its label, ``"R5"``."""
        return f"R{self.number}"


RULES: dict[int, Rule] = {
    r.number: r
    for r in (
        Rule(
            1,
            "phases",
            "A job waits, loads (holding its GPUs), trains, and after a preemption saves (holding its "
            "GPUs) before it waits again; every start loads first, and with no load time it trains at once.",
            (
                "optsched.sim.model.state:Phase",
                f"{_ACTIONS}._launch",
                f"{_ACTIONS}._begin_training",
                f"{_ENGINE}._load_end",
            ),
            ("actions:launch", "actions:begin_training", "actions:load_end", "actions:complete"),
        ),
        Rule(
            2,
            "preemption",
            "A job preempted after training since its last load saves on its GPUs, which are free when "
            "the save ends; a job preempted while loading, or before any training after its load, saves "
            "nothing and that load is futile (preempt_loading='abort': GPUs free at once; 'finish': "
            "at the load's end).",
            (
                f"{_ACTIONS}.preempt",
                f"{_ACTIONS}._stop",
                f"{_ACTIONS}._after_stop",
                f"{_ACTIONS}._release_after_save",
                f"{_ENGINE}._save_end",
            ),
            ("actions:preempt", "actions:release_after_save"),
        ),
        Rule(
            3,
            "events and rounds",
            "Events at one time are handled as stage ends, save ends, load ends, arrivals (input order), "
            "timers; then the policy's round runs once, only if one of them was a real event, and again "
            "if its decisions made events at that time.",
            (f"{_ENGINE}._run",),
            ("kernel:_run", "heaps:_ev_less", "events:schedule"),
        ),
        Rule(
            4,
            "key",
            "Jobs are ranked by (value, arrival, input position), lower first, the value being the "
            "remaining work (SRTF) or the attained service (LAS); the same key ranks waiting and running jobs.",
            (
                "optsched.sim.policies.preemptive:SRTF._wait_key",
                "optsched.sim.policies.las:LAS._wait_key",
                f"{_ROUND}._worst",
                f"{_ROUND}._push_running",
            ),
            ("actions:wait_value", "actions:run_value", "heaps:qless", "heaps:_rworse"),
        ),
        Rule(
            5,
            "strictly worse",
            "A job may preempt only running jobs of a strictly larger value (ties never preempt), and "
            "never a job started at this very time.",
            (f"{_ROUND}._make_room", f"{_ROUND}._round"),
            ("rounds:make_room", "rounds:r5_started_now"),
        ),
        Rule(
            6,
            "claims",
            "A claim holds GPUs per server (free, being saved, or a load being lost) for one waiting job; "
            "a claimed GPU is never given to another job.",
            ("optsched.sim.policies.claims:_Claim", f"{_CLAIMS}._claim", f"{_CLAIMS}._vector", f"{_CLAIMS}._fits"),
            ("claims:claim", "claims:add_saving", "claims:saved"),
        ),
        Rule(
            7,
            "reserve modes",
            "With reserve='best' every round drops all claims and makes them again in key order; with "
            "reserve='preemptor' a claim lasts until its job starts.",
            (f"{_CLAIMS}._drop_claims", f"{_ROUND}.schedule"),
            ("claims:drop_claims", "claims:release_claim"),
        ),
        Rule(
            8,
            "start",
            "A waiting job that fits in the free GPUs no other job claims starts there, on its own "
            "claimed GPUs first, and its claim ends.",
            (
                f"{_CLAIMS}._try_start",
                f"{_CLAIMS}._try_start_claimant",
                f"{_ROUND}._round",
                f"{_ROUND}._fill_fast",
                f"{_QUEUE}.schedule",
            ),
            ("rounds:preemptive_round", "rounds:fill", "claims:try_start", "claims:try_start_claimant"),
        ),
        Rule(
            9,
            "wait for a claim",
            "Else a job holding a claim waits for it: it neither claims more nor preempts.",
            (f"{_ROUND}._round", f"{_CLAIMS}._start_claimants", f"{_PERIODIC}.schedule"),
            ("rounds:preemptive_round", "rounds:start_claimants"),
        ),
        Rule(
            10,
            "claim soon-free GPUs",
            "Else a job that fits once the unclaimed GPUs being saved are free claims them (being saved "
            "first, then free ones) and waits.",
            (f"{_ROUND}._round", f"{_CLAIMS}._claim"),
            ("rounds:preemptive_round", "claims:claim"),
        ),
        Rule(
            11,
            "preempt",
            "Else, where preemption is allowed, strictly worse running jobs are taken worst first until "
            "the job would fit, those not needed are dropped best first, the rest are preempted, and the "
            "job claims their GPUs (or starts at once if they are free).",
            (f"{_ROUND}._make_room",),
            ("rounds:make_room",),
        ),
        Rule(
            12,
            "pass over",
            "Else the job waits without a claim; with backfill the round goes on to the next job, "
            "without it the round ends.",
            (f"{_ROUND}._round", f"{_ROUND}._fill_fast", f"{_QUEUE}.schedule"),
            ("rounds:preemptive_round", "rounds:fill", "rounds:_pop_best"),
        ),
    )
}
"""R1-R12 by number."""
