"""The decorator of the compiled kernel's helpers: :func:`helper`.

A helper is a numba function compiled into the kernel's entry points, with three choices that
shorten the one-time compile:

- one compiled version per function: its arguments are typed without literal values and with
  signed integers widened to 64 bits (:class:`Helper`), so ``log_row(..., L_TIMER, obj, 0)`` and
  ``log_row(..., L_START, j, off)`` with ``j`` read from the int32 job rows share one version,
  where ``@njit`` compiles one per constant passed and per integer width (the kernel's 83
  functions had 138 compiled versions with ``@njit``); widening an integer is exact, so the
  results are the same to the last bit;
- no Python or C wrapper (``no_cpython_wrapper``, ``no_cfunc_wrapper``): only the entry points are
  called from Python;
- with ``NUMBA_DISABLE_JIT=1`` a helper is the Python function it is (for a debugger).

Tested through ``tests/sim/test_kernel_build.py``.
"""

from __future__ import annotations

from numba import types
from numba.core import config
from numba.core.registry import CPUDispatcher

_OPTIONS = {"nopython": True, "no_cpython_wrapper": True, "no_cfunc_wrapper": True}


def _plain(t):
    """The type a helper is compiled for when given ``t``: no literal value, 64-bit signed integers."""
    t = types.unliteral(t)
    if isinstance(t, types.Integer) and t.signed and t.bitwidth < 64:
        return types.int64
    return t


class Helper(CPUDispatcher):
    """A numba dispatcher that compiles one version for every call whose argument types differ
    only in literal values or signed-integer widths (the caller converts its arguments)."""

    def get_call_template(self, args, kws):
        return super().get_call_template(tuple(_plain(a) for a in args), {k: _plain(v) for k, v in kws.items()})


def helper(fn=None, *, inline: bool = False):
    """``fn`` as a :class:`Helper` (``fn`` itself with ``NUMBA_DISABLE_JIT=1``). ``@helper(inline=True)``:
    numba copies its body into its caller's (the event handlers of :mod:`.events`, each called at
    one place of the loop: a call passing some 20 arrays costs about 100 ns, 13 % of an SRTF run)."""
    if fn is None:
        return lambda f: helper(f, inline=inline)
    if config.DISABLE_JIT:
        return fn
    return Helper(fn, targetoptions=dict(_OPTIONS, inline="always") if inline else dict(_OPTIONS))
