"""The decorator of the compiled kernel's helpers: :func:`helper`.

A helper is a plain Python function that numba compiles into the kernel's entry points
(:func:`numba.extending.register_jitable`), with two choices that shorten the one-time compile:

- its arguments are typed without literal values first: ``log_row(..., L_TIMER, obj, 0)`` and
  ``log_row(..., L_START, j, off)`` share one compiled version, where ``@njit`` compiles one per
  constant passed (the kernel's 83 functions had 138 compiled versions with ``@njit``);
- it has no Python or C wrapper (``no_cpython_wrapper``, ``no_cfunc_wrapper``): only the entry
  points are called from Python.

With ``NUMBA_DISABLE_JIT=1`` a helper runs as the Python function it is. Tested through
``tests/sim/test_kernel_build.py``.
"""

from __future__ import annotations

from numba.extending import register_jitable

__all__ = ["helper"]


def helper(fn):
    """Compile ``fn`` into the jitted functions that call it (one version per non-literal
    argument types, without Python wrappers); ``fn`` itself is returned unchanged."""
    return register_jitable(no_cpython_wrapper=True, no_cfunc_wrapper=True)(fn)
