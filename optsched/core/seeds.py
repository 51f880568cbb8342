"""Seeds: every randomized function takes ``seed: int | numpy.random.Generator | None``."""

from __future__ import annotations

import numbers

import numpy as np

from optsched.exceptions import InvalidOptionError

__all__ = ["as_generator", "SeedLike"]

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
