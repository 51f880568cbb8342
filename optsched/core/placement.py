"""Placement rules: choose GPUs per server for a job from the free GPUs per server.

Pure functions shared by heuristics, exact-model decoders and the simulator.

Rules
-----
``consolidate``
    Fewest servers: a single server if one fits (best fit: the fullest server that still fits),
    else take from the servers with the most free GPUs first.
``first_fit``
    Servers in index order; single-server jobs take the first server that fits, others fill
    servers in order.
``least_loaded``
    The servers with the most free GPUs first (spreads load).
``random``
    Servers in random order (needs ``rng``), filled in that order.
``whole_node``
    Tiresias' "yarn" placement: a job that fits on one server goes on one server (best fit, as
    ``consolidate``); a larger job takes whole free servers (servers with every GPU free, largest
    first, lower index among equals), the last of them possibly in part. Needs ``capacity``.
"""

from __future__ import annotations

import numpy as np

from optsched.exceptions import InvalidOptionError, UnknownNameError

PLACEMENT_RULES = ("consolidate", "first_fit", "least_loaded", "random", "whole_node")
"""The placement rules a policy or ``place`` accepts (docs/simulator.md describes each)."""


def check_placement(rule: str | None, *, option: str = "placement") -> str | None:
    """``rule`` if it is one of :data:`PLACEMENT_RULES` (or None: each policy's own), else
    :class:`InvalidOptionError` naming ``option`` (``--placement`` on the command line), the value
    and the rules: one check for the command line and Python.

    >>> check_placement("first_fit")
    'first_fit'
    """
    if rule is not None and rule not in PLACEMENT_RULES:
        raise InvalidOptionError(f"{option} {rule!r} is not a placement rule; choose one of {list(PLACEMENT_RULES)}.")
    return rule


def place(
    free: np.ndarray,
    gpus: int,
    *,
    rule: str = "consolidate",
    single_server: bool = False,
    rng: np.random.Generator | None = None,
    capacity: np.ndarray | None = None,
) -> dict[int, int] | None:
    """Return ``{server: GPUs}`` summing to ``gpus`` within ``free``, or ``None`` if it does not fit.

    Examples
    --------
    >>> import numpy as np
    >>> place(np.array([3, 4, 1]), 4)
    {1: 4}
    >>> place(np.array([3, 2, 1]), 4)
    {0: 3, 1: 1}
    >>> place(np.array([3, 2, 1]), 4, single_server=True) is None
    True
    >>> place(np.array([4, 3, 4]), 6, rule="whole_node", capacity=np.array([4, 4, 4]))  # whole servers 0 and 2
    {0: 4, 2: 2}
    >>> place(np.array([4, 3, 2]), 6, rule="whole_node", capacity=np.array([4, 4, 4])) is None
    True
    """
    free = np.asarray(free)
    if gpus <= 0:
        raise InvalidOptionError(f"A placement needs a positive GPU count; got {gpus}.")
    if rule not in PLACEMENT_RULES:
        raise UnknownNameError(f"Unknown placement rule {rule!r}; choose one of {list(PLACEMENT_RULES)}.")
    n = len(free)
    if rule == "whole_node":
        if capacity is None:
            raise InvalidOptionError("The 'whole_node' placement rule needs capacity= (GPUs per server).")
        capacity = np.asarray(capacity)
        if gpus <= int(capacity.max(initial=0)):
            single_server = True  # fits on one server: best fit on one server, as consolidate
            rule = "consolidate"
        else:
            whole: dict[int, int] = {}
            need = gpus
            for m in np.argsort(-capacity, kind="stable"):
                if free[m] == capacity[m] and free[m] > 0:
                    take = int(min(free[m], need))
                    whole[int(m)] = take
                    need -= take
                    if need == 0:
                        return dict(sorted(whole.items()))
            return None
    if rule == "random":
        if rng is None:
            raise InvalidOptionError("The 'random' placement rule needs rng= (a numpy Generator).")
        order = rng.permutation(n)
    elif rule == "first_fit":
        order = np.arange(n)
    else:  # most free first (stable: lower index first among equals)
        order = np.argsort(-free, kind="stable")
    if single_server or rule == "consolidate":
        fits = [m for m in order if free[m] >= gpus]
        if fits:
            if rule == "consolidate":  # best fit: the fullest server that still fits
                m = min(fits, key=lambda k: (free[k], k))
            else:
                m = fits[0]
            return {int(m): int(gpus)}
        if single_server:
            return None
    if int(free.sum()) < gpus:
        return None
    out: dict[int, int] = {}
    need = gpus
    for m in order:
        take = int(min(free[m], need))
        if take > 0:
            out[int(m)] = take
            need -= take
            if need == 0:
                break
    return dict(sorted(out.items()))
