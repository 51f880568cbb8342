"""The compiled kernel's state layout: what every array holds, column by column (no numba here).

State is a structure of arrays (:class:`State`), built by :mod:`optsched.sim.compiled.driver` and
changed in place by the numba functions of :mod:`.heaps`, :mod:`.gpus`, :mod:`.actions`,
:mod:`.claims`, :mod:`.rounds` and :mod:`.kernel`. Every array's columns are named by the constants
below; numba reads them as compile-time constants.

- ``jf`` / ``ji``: one row per job, its float and integer fields (arrival, work, key, progress,
  times, load and save seconds; GPUs, class, phase, version, placement, positions in the lists);
  ``ji[:, ORDER]`` lists the jobs by arrival;
- ``gv`` / ``fv``: scalars, the run's parameters and counters; from ``G_FCNT`` the count of servers
  per number of free GPUs;
- ``srv`` (one row per server: capacity, free GPUs, claimed free GPUs, GPUs being saved that
  nobody claims, scratch) and ``tree``, a segment tree of bit masks (bit f: a server below has f
  free GPUs) for placement queries in O(log servers);
- ``cl`` / ``qh``: one binary heap of waiting jobs per (GPU demand, single-server) class, keyed
  (value, arrival, position) as :class:`~optsched.sim.WaitQueue`;
- ``rh``: two max-heaps of running jobs (0: training, keyed as the policies' training heap; 1:
  loading, keyed by value), stale rows dropped lazily;
- ``rr``: per-GPU lists: the jobs holding GPUs, the victim search's scratch, the jobs holding a
  claim, the jobs saving;
- ``ce``: the entries of claims and of the GPUs being saved nobody claims, as linked lists in
  insertion order (the Python policy's dicts, whose order decides which GPUs a claim takes);
- ``ev``: a heap of events keyed (time, kind << 48 | sequence);
- growing buffers: ``pool`` (placements), ``segf`` / ``segi`` / ``holds`` (segments and the order of
  starts and releases, if recorded), ``stt`` / ``stg`` (GPUs in use over time), ``lgt`` / ``lgi``
  (the event log, if recorded).

Their order is declared once, :data:`ARRAYS` (with their types, :data:`ARRAY_TYPES`): the entry
point takes them all in it, and every numba function of the kernel takes the ones it uses as a
subsequence of it, then its scalars; a function of 10 or more parameters ends its docstring with
``IN:`` the arrays it only reads and ``OUT:`` those it changes in place, itself or through the
functions it calls (``tests/sim/test_kernel_layout.py`` checks both on the sources).
"""

from __future__ import annotations

from collections import namedtuple

from optsched.sim.model.state import PHASES, Phase
from optsched.sim.rules import P_ARRIVAL, P_LOADED, P_SAVED, P_STAGE, P_TIMER

# Event kinds (R3: the engine's priorities at equal times) are the Python engine's, from
# optsched.sim.rules; a phase's code is its position in optsched.sim.model.state.PHASES (the last,
# "failed", the kernel never sets). numba reads these module globals as compile-time constants, so
# their values are part of the entry points' cache key (:func:`sources_digest`).
EVENT_KINDS = (P_STAGE, P_SAVED, P_LOADED, P_ARRIVAL, P_TIMER)
PHASE_NAMES = tuple(p.value for p in PHASES)
PENDING, WAITING, LOADING, TRAINING, SAVING, DONE = (
    PHASES.index(p) for p in (Phase.PENDING, Phase.WAITING, Phase.LOADING, Phase.TRAINING, Phase.SAVING, Phase.DONE)
)
# policies (gv[G_KIND]), named K_ apart from the policy classes; K_PSRTF is periodic SRTF, K_LAZER
# Lazer's orchestrator, fixed deferral and completion handler (reading 4 of formulations/lazer.md;
# :mod:`.deferral`)
K_FIFO, K_SJF, K_SRTF, K_LAS, K_PSRTF, K_LAZER = 0, 1, 2, 3, 4, 5
KIND_CODES = {"fifo": K_FIFO, "sjf": K_SJF, "srtf": K_SRTF, "las": K_LAS, "srtf-periodic": K_PSRTF, "lazer": K_LAZER}
# placement rules
CONSOLIDATE, FIRST_FIT, LEAST_LOADED, WHOLE_NODE = 0, 1, 2, 3
RULE_CODES = {
    "consolidate": CONSOLIDATE,
    "first_fit": FIRST_FIT,
    "least_loaded": LEAST_LOADED,
    "whole_node": WHOLE_NODE,
}
SEQ_BITS = 48  # an event's key: kind << 48 | sequence (exact in a float64)
BIG = 1 << 62
MAX_BATCHES_AT_ONE_TIME = 100_000
MAX_GPUS_PER_SERVER = 62  # free-count bit masks in int64

# run_chunk's return codes
ST_END, ST_BUDGET, ST_ROOM, ST_LIMIT, ST_LIVELOCK, ST_INTERNAL = 0, 1, 2, 3, 4, 5
# an event handler's return codes (:mod:`.events`): nothing happened (a stale event), the event
# changed something (a round follows), an internal inconsistency
H_STALE, H_DONE, H_FAILED = 0, 1, 2

# jf columns (float64): what every decision reads (a row is one 64-byte cache line). HSTART: the
# start of the job's current hold of GPUs (its last start, the policies' ``_since``); TSTART: the
# start of its current phase (the engine's _phase_start, and _t while it trains; while it loads,
# its load ends at TSTART + LOAD_S); RBAD: its key in the running-job heap; LOAD_S: its load seconds.
ARR, WORK, QKEY, DONE_W, HSTART, TSTART, RBAD, LOAD_S = range(8)
N_JF = 8
# jc columns (float64): what the result reads, and the rest of a preemption's accounting; then
# Lazer's per-job state (integers, exact in a float64; -1: none): Z_OWN, the deferred job whose
# J_r holds it (DRQ); Z_NEXT, the next job of the batch's list of new jobs or of ended deferrals;
# Z_NNEXT, the next of the list of victims freed at once (queued at their notice); Z_VOF, the
# pending preemptor a saving victim frees GPUs for; Z_STATE, 1 deferred (DWQ), 2 a pending
# preemptor; Z_HELD / Z_NSAV, a pending preemptor's GPUs held by its saving victims, and their count
FIRST, COMP, TRAIN, LOST, SAVE_S, LOADT, SAVET, FUT, LAST_LOAD = range(9)
Z_OWN, Z_NEXT, Z_NNEXT, Z_VOF, Z_STATE, Z_HELD, Z_NSAV = range(9, 16)
N_JC = 16
# ji columns (int32; a row is 64 bytes, the hot fields first). CLF / CLP: heads of the job's claim
# lists (free GPUs, GPUs being saved), -1 without a claim; LEFT: head of the list of its GPUs being
# saved that nobody claims (while it saves); CLPOS / SAVPOS: its position in the claims list / the
# saving list of rr, or -1.
(
    GPUS,
    SINGLE,
    CLS,
    PHASE,
    VER,
    PLOFF,
    PLLEN,
    RUNPOS,
    NPRE,
    ORDER,
    NFUT,
    CLF,
    CLP,
    LEFT,
    CLPOS,
    SAVPOS,
) = range(16)
N_JI = 16
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
    G_RHN,  # training heap rows; G_RHN + 1: loading heap rows
    G_LHN,
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
    G_RESERVE,  # 0: "best", 1: "preemptor"
    G_FINISH,  # preempt_loading: 0 "abort", 1 "finish"
    G_LOG,  # keep the event log
    G_NLOG,
    G_NCL,  # jobs holding a claim
    G_NSAV,  # jobs saving (or losing a load) for a preemptor: the policy's _saving
    G_NRFREE,  # free GPUs claimed
    G_NUSAV,  # GPUs being saved that nobody claims
    G_CEFREE,  # head of the free list of ce
    G_PTICK,  # periodic SRTF: a tick fired in this batch
    G_KEEP_POOL,  # placements are kept (segments or log recorded): the pool is never compacted
    G_SKIPPED,  # LAS quantum ticks that changed no order, merged (counted as events, not run)
    G_Z_ALL,  # Lazer: secured="all" (1) or "released" (0)
    G_Z_RES,  # Lazer: free GPUs kept for pending preemptors (the policy's _reserved)
    G_Z_NPEND,  # Lazer: pending preemptors
    G_Z_NDWQ,  # Lazer: deferred jobs (DWQ)
    G_Z_COMPL,  # Lazer: completions in this batch
    G_Z_REL,  # Lazer: GPUs they released
    G_Z_NEWH,  # Lazer: the batch's new jobs (head, tail of a list through jc Z_NEXT)
    G_Z_NEWT,
    G_Z_ENDH,  # Lazer: the deferrals ended in this batch (head, tail; through jc Z_NEXT)
    G_Z_ENDT,
    G_Z_NOTH,  # Lazer: victims freed at once, queued at their notice (head, tail; jc Z_NNEXT)
    G_Z_NOTT,
) = range(63)
G_FCNT = 64
N_GV = 128  # servers have at most 62 GPUs (free-count bit masks in int64)
# fv (float64)
F_NOW, F_LAS_NEXT, F_RATE, F_QUANTUM, F_MAX_TIME, F_MAX_EVENTS, F_STOP, F_STALE, F_TICK_TIME, F_Z_X = range(10)
N_FV = 10  # F_Z_X: Lazer's fixed deferral X (seconds)
# srv columns (int64): capacity, free, whole-node order, placement scratch, victims' GPUs, claimed
# free GPUs (RFREE), GPUs being saved nobody claims (USAV), vector scratch (VEC, VEC2), a placement
# being built (PLM, PLG)
CAP, FREE, WNORD, TMPM, TMPG, EX, EXMARK, TOUCHED, RFREE, USAV, VEC, VEC2, PLM, PLG = range(14)
N_SRV = 14
# cl columns (int64): GPUs, single-server, heap offset, heap size, blocked in this round
CG, CSINGLE, COFF, CCNT, CBLOCK = range(5)
N_CL = 5
# rr columns (int64): jobs holding GPUs, victims, popped, victim dropped, jobs holding a claim,
# jobs saving, sorted scratch (the saving jobs in the order a claim takes them; the claimants)
RUNL, VICT, POPD, VDROP, CLL, SAVL, SORT, CSORT = range(8)
N_RR = 8
# ce columns (int64): next entry (-1: end), server, GPUs, source (a saving job's index for the GPUs
# it is saving, -1 for free GPUs)
CE_NEXT, CE_M, CE_N, CE_SRC = range(4)
N_CE = 4
# qh columns (float64): a waiting job's key (value, arrival, index); rh: a running job's (badness,
# arrival, index, version at its push). Keys live in the heaps, not behind job indices.
QK, QA, QJ = range(3)
HB, HA, HJ, HV = range(4)
TRAIN_HEAP, LOAD_HEAP = 0, 1
# ev columns (float64; the integers are exact): time, key, job or timer, version
ET, EK, EOBJ, EVER = range(4)
N_EV = 4
# segi columns (int32)
SJ, SOFF, SLEN = range(3)
# the event log: lgt (time), lgi (kind | job index or timer id << 4 | detail << 32; a start's detail
# is the offset of its placement in the pool, which only grows while the log is kept)
L_ARRIVAL, L_START, L_TRAIN, L_PREEMPT, L_FINISH_LOAD, L_SAVED, L_COMPLETE, L_TIMER = range(8)
LOG_KIND_BITS, LOG_JOB_BITS = 4, 28

ARRAYS = (
    "jf",
    "jc",
    "ji",
    "gv",
    "fv",
    "srv",
    "tree",
    "cl",
    "qh",
    "rh",
    "rr",
    "ce",
    "ev",
    "pool",
    "segf",
    "segi",
    "holds",
    "stt",
    "stg",
    "lgt",
    "lgi",
)
#: each array's element type and dimensions, in the order of :data:`ARRAYS`: the one signature of
#: the kernel's entry point (``kernel.RUN_SIGNATURE``); every kernel function takes the arrays it
#: uses in this order (a test checks the parameters of each)
ARRAY_TYPES = (
    ("float64", 2),  # jf
    ("float64", 2),  # jc
    ("int32", 2),  # ji
    ("int64", 1),  # gv
    ("float64", 1),  # fv
    ("int64", 2),  # srv
    ("int64", 1),  # tree
    ("int64", 2),  # cl
    ("float64", 2),  # qh
    ("float64", 3),  # rh
    ("int64", 2),  # rr
    ("int64", 2),  # ce
    ("float64", 2),  # ev
    ("int32", 2),  # pool
    ("float64", 2),  # segf
    ("int32", 2),  # segi
    ("int32", 1),  # holds
    ("float64", 1),  # stt
    ("int64", 1),  # stg
    ("float64", 1),  # lgt
    ("int64", 1),  # lgi
)
State = namedtuple("State", ARRAYS)


def room_needed(G: int) -> dict[str, int]:
    """Rows every growing buffer must have free before one more event time (bounds per event
    time: every GPU started at most twice and released at most three times, each start logging
    two rows, each preemption two; arrivals are counted apart)."""
    return {
        "ev": 5 * G + 16,
        "pool": 2 * G + 2,
        "stt": 2,
        "segi": 3 * G + 1,
        "holds": 5 * G + 2,
        "lgt": 12 * G + 16,
    }


#: the modules whose numba functions are compiled into the kernel's entry point (kernel.py)
KERNEL_MODULES = ("layout", "jit", "heaps", "gpus", "actions", "claims", "rounds", "deferral", "events")


def sources_digest() -> str:
    """sha256 (16 hex digits) of the sources of :data:`KERNEL_MODULES` and of the values of the
    constants they import from outside them (:data:`EVENT_KINDS`, :data:`PHASE_NAMES`). numba's
    cache keys a compiled function on its own file only, so the entry points' cache key holds this
    too (``kernel.SOURCES_DIGEST``): editing any of them compiles the entry points again."""
    import hashlib
    from importlib.resources import files

    h = hashlib.sha256()
    for name in KERNEL_MODULES:
        h.update(files("optsched.sim.compiled").joinpath(f"{name}.py").read_bytes())
    h.update(repr((EVENT_KINDS, PHASE_NAMES)).encode())  # the constants imported from outside
    return h.hexdigest()[:16]
