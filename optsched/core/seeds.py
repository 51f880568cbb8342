"""Seeds: every randomized function takes ``seed: int | numpy.random.Generator | None``."""

from __future__ import annotations

import hashlib
import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np

from optsched.exceptions import InvalidOptionError

SeedLike = int | np.random.Generator | None
"""What a ``seed=`` argument takes: an int, a ``numpy.random.Generator``, or None (fresh entropy)."""


def as_generator(seed: SeedLike) -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` for ``seed``.

    An ``int`` gives a fresh PCG64 generator (same int, same stream); a ``Generator`` is used
    as is (shared state); ``None`` draws OS entropy (not reproducible).

    Examples
    --------
    >>> from optsched.core import as_generator
    >>> int(as_generator(7).integers(100)) == int(as_generator(7).integers(100))
    True
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        return np.random.default_rng()
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed >= 0:
        return np.random.default_rng(int(seed))
    raise InvalidOptionError(
        f"The 'seed' option must be a non-negative int, a numpy.random.Generator or None; got {seed!r}."
    )


def _id_text(job_id: Any) -> str:
    """A job id as the text its key is hashed from: ``7`` and ``np.int64(7)`` alike, ``'7'`` apart."""
    if isinstance(job_id, numbers.Integral) and not isinstance(job_id, bool):
        return f"i:{int(job_id)}"
    if isinstance(job_id, str):
        return f"s:{job_id}"
    return f"{type(job_id).__name__}:{job_id!r}"


def _base_seed(seed: SeedLike) -> int:
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed >= 0:
        return int(seed)
    return int(as_generator(seed).integers(2**63))  # a Generator (one draw from it) or None (entropy)


def job_keys(seed: SeedLike, ids: Iterable[Any], stream: str) -> np.ndarray:
    """One 64-bit key per job from (``seed``, the job's id, ``stream``): what a per-job draw is made from,
    so that a job's draw belongs to the job and not to its row (the same jobs in any order, or a
    subset of them, draw the same for each job). ``stream`` names the draw (``"lazer-model"``), so
    two enrichments never share their numbers. An int seed gives the same keys on every machine
    (BLAKE2b of the text); a Generator gives one draw of it as the seed.

    Examples
    --------
    >>> a = job_keys(3, ["a", "b"], "x")
    >>> b = job_keys(3, ["b", "a"], "x")
    >>> bool(a[0] == b[1] and a[1] == b[0]), bool(job_keys(4, ["a"], "x")[0] != a[0])
    (True, True)
    """
    base = _base_seed(seed)
    out = [
        int.from_bytes(hashlib.blake2b(f"{stream}\0{base}\0{_id_text(j)}".encode(), digest_size=8).digest(), "little")
        for j in ids
    ]
    return np.asarray(out, dtype=np.uint64)


def job_uniforms(seed: SeedLike, ids: Iterable[Any], stream: str) -> np.ndarray:
    """One number in [0, 1) per job, keyed by (``seed``, id, ``stream``) (:func:`job_keys`).

    >>> u = job_uniforms(0, [1, 2, 3], "x")
    >>> bool(((u >= 0) & (u < 1)).all()), bool(job_uniforms(0, [3], "x")[0] == u[2])
    (True, True)
    """
    return (job_keys(seed, ids, stream) >> np.uint64(11)).astype(np.float64) / float(2**53)


def job_generator(seed: SeedLike, job_id: Any, stream: str) -> np.random.Generator:
    """A Generator of the job's own, keyed by (``seed``, id, ``stream``) (:func:`job_keys`): for an
    enrichment that draws several numbers per job.

    >>> int(job_generator(0, "a", "x").integers(10**9)) == int(job_generator(0, "a", "x").integers(10**9))
    True
    """
    return np.random.default_rng(int(job_keys(seed, [job_id], stream)[0]))
