"""Paper 001's baselines (Sec. 7) as policies on optsched's one discrete-event simulator.

Conversion (:func:`to_sim`): an :class:`~optsched.elastic.model.ElasticInstance` becomes a core
:class:`~optsched.core.Cluster` whose servers carry the elastic resources (``Server.resources``,
checked by the engine's :class:`~optsched.sim.FreeResources` at every start), and one sim job per
elastic job, arriving at a_j, whose work is the slot count d of the configuration the policy runs
it with (1 simulator second = 1 slot; the engine runs in slotted mode, ``slot=1``, so decisions
are made at slot boundaries and a job completes at a boundary). The engine's GPU count is not an
elastic resource here: each sim job holds one *token* GPU on the first server it uses (every
server has as many tokens as there are jobs, so tokens never bind); the elastic resources, the
GPU among them, are the resource vectors of the placement ``{server: {"gpus": token, r: amount}}``
(a PS-only server is a vector without a worker).

A job runs with a *shape* (:class:`Shape`: worker type m, PS type p, q, N workers, d slots); the
servers are chosen when it starts (:func:`find_placement`): q = 1 puts N workers and one PS on one
server, q = 0 puts the PSs (s = max(1, ceil((N - g) b_m / B_p)), (2i)) with g < N workers on one
server (the most workers there first, so the fewest PSs, then the lowest index) and the other
workers on the servers with the most room (RAR q = 0: at least two servers),
so every start is a schedule of the restricted Gamma_j (``formulations/elastic.md#gamma``).

The *ideal configuration* of job j (:func:`ideal_config`, Sec. 7 "the same as that in the ideal
case", i.e. the most expedited single-job training) is the configuration of the restricted
Gamma_j with the least duration d on the empty cluster, ties by the least total use
d * sum_h sum_r f_jh^r, then by Gamma_j's order. Every baseline uses its worker and PS types; FIFO
draws the worker count, DRF computes it; AntMan-, Tiresias-like and 2D-LAS run the whole ideal
shape (m, p, q, N, d).

Policies (registered in the simulator's policy registry; each takes ``instance=``):

* ``elastic-fifo`` (:class:`ElasticFIFO`, non-preemptive): strict arrival order (a job that does
  not fit blocks the later ones), N drawn uniformly in [1, 30] and capped at D_j (seeded).
* ``elastic-drf`` (:class:`ElasticDRF`, non-preemptive): at each slot boundary the waiting jobs
  share the free resources by progressive filling of worker bundles (a worker of the ideal type
  plus its PS share) in order of least dominant share, each up to its ideal N; jobs given at least
  one worker start with that N.
* ``elastic-antman`` (:class:`ElasticAntMan`): guarantee jobs (every job on arrival) start in
  strict arrival order, preempting opportunistic jobs if that makes room; a guarantee job that has
  waited ``demote_after`` slots (default: its own ideal duration d_j) becomes opportunistic;
  opportunistic jobs backfill the free resources and are preempted for guarantee jobs.
* ``elastic-tiresias`` (:class:`ElasticTiresias`, preemptive): smallest remaining slots x size first.
* ``elastic-2d-las`` (:class:`Elastic2DLAS`, preemptive): least attained slots x size first.
* ``elastic-online`` (:class:`ElasticOnline`): A_online's rounds released at tau_i, each job started
  at its planned slot on its planned servers (the paper's algorithm on the same simulator).

Preemptive policies re-decide at every slot boundary (a periodic timer: the slotted engine calls
``schedule`` only at boundaries where an event happens).

The *size* of a job is sum_r (its ideal per-slot use of r) / (the cluster's total r).

Preemption overhead: by default none: a job is preempted only at a slot boundary and keeps the
slots it trained (progress in whole slots), and it may resume on other servers. With
``overhead="checkpoint"`` each resume after a preemption first loads for the time to save and
load the model, 2 * 8 pi_j / b_m ms (:func:`optsched.elastic.constants.transfer_ms`), in slots; in
slotted mode that costs the job up to one more slot at its end. See
``formulations/elastic.md#baselines``.

The code: :mod:`optsched.elastic.shapes` (shapes and placement), :mod:`optsched.elastic.policy_base`
(the simulator's input and the policies' base), :mod:`optsched.elastic.policy_baselines`,
:mod:`optsched.elastic.policy_priority` (Tiresias, 2D-LAS) and :mod:`optsched.elastic.policy_online`;
every name is importable from here.
"""

from __future__ import annotations

from optsched.elastic.policy_base import ElasticPolicy
from optsched.elastic.policy_baselines import ElasticAntMan, ElasticDRF, ElasticFIFO
from optsched.elastic.policy_online import ElasticOnline
from optsched.elastic.policy_priority import Elastic2DLAS, ElasticTiresias

POLICY_CLASSES: dict[str, type[ElasticPolicy]] = {
    "fifo": ElasticFIFO,
    "drf": ElasticDRF,
    "antman": ElasticAntMan,
    "tiresias": ElasticTiresias,
    "2d-las": Elastic2DLAS,
    "online": ElasticOnline,
}
