"""The decorator of the compiled kernel's helpers: :func:`helper`.

A helper is a numba function compiled into the kernel's entry points, with four choices that
shorten the one-time compile:

- one compiled version per function: its arguments are typed without literal values and with
  signed integers widened to 64 bits (:class:`Helper`), so ``log_row(..., L_TIMER, obj, 0)`` and
  ``log_row(..., L_START, j, off)`` with ``j`` read from the int32 job rows share one version,
  where ``@njit`` compiles one per constant passed and per integer width (the kernel's 83
  functions had 138 compiled versions with ``@njit``); widening an integer is exact, so the
  results are the same to the last bit;
- no Python or C wrapper (``no_cpython_wrapper``, ``no_cfunc_wrapper``): only the entry points are
  called from Python;
- no machine code of its own (:class:`_LinkedOnly`): numba optimises every function it compiles,
  with the functions it calls linked in, and turns it into machine code, which would optimise and
  compile a helper's code again for every helper above it (about a third of the compile); a helper
  is kept as LLVM code for its callers, and LLVM optimises and compiles each entry point once, as a
  whole (no fast-math: the same floating-point operations, so the same results to the last bit);
- with ``NUMBA_DISABLE_JIT=1`` a helper is the Python function it is (for a debugger).

Tested through ``tests/sim/test_kernel_build.py``.
"""

from __future__ import annotations

from numba import types
from numba.core import compiler, config
from numba.core.codegen import JITCodeLibrary
from numba.core.registry import CPUDispatcher

_OPTIONS = {"nopython": True, "no_cpython_wrapper": True, "no_cfunc_wrapper": True}


def _plain(t):
    """The type a helper is compiled for when given ``t``: no literal value, 64-bit signed integers."""
    t = types.unliteral(t)
    if isinstance(t, types.Integer) and t.signed and t.bitwidth < 64:
        return types.int64
    return t


class _NoEnvironment:
    """The codegen as a helper's library shows it: its environment is not installed (a helper is
    never called from Python, and its code runs only inside an entry point, which sets its own)."""

    def __init__(self, codegen):
        self._codegen = codegen

    def set_env(self, env_name, env):
        pass

    def __getattr__(self, name):
        return getattr(self._codegen, name)


class _LinkedOnly(JITCodeLibrary):
    """A helper's LLVM code, kept to be linked into its callers: it is finalised without the
    module-level optimisation and without machine code (numba would optimise and generate each
    helper's whole call tree again for every helper above it); the entry point that links it is
    optimised and turned into machine code once, as a whole."""

    @property
    def codegen(self):
        return _NoEnvironment(self._codegen)

    def finalize(self):
        self._raise_if_finalized()
        seen = set()
        for library in self._linking_libraries:  # its callees, so that a caller links one module
            if library not in seen:
                seen.add(library)
                self._reload_init.update(library._reload_init)  # noqa: SLF001 - numba's own finalize, minus the code
                self._final_module.link_in(library._get_module_for_linking(), preserve=True)  # noqa: SLF001
        self._finalized = True

    def get_pointer_to_function(self, name):
        return 0  # no machine code of its own (and no Python wrapper to point to)


class _HelperCompiler(compiler.Compiler):
    """numba's pipeline, lowering a helper into a :class:`_LinkedOnly` library."""

    def compile_extra(self, func):
        if self.state.library is None:
            self.state.library = _LinkedOnly(self.state.targetctx.codegen(), func.__qualname__)
        return super().compile_extra(func)


class Helper(CPUDispatcher):
    """A numba dispatcher that compiles one version for every call whose argument types differ
    only in literal values or signed-integer widths (the caller converts its arguments)."""

    def get_call_template(self, args, kws):
        return super().get_call_template(tuple(_plain(a) for a in args), {k: _plain(v) for k, v in kws.items()})


def helper(fn=None, *, inline: bool = False):
    """``fn`` as a :class:`Helper` (``fn`` itself with ``NUMBA_DISABLE_JIT=1``). ``@helper(inline=True)``:
    numba copies its body into its caller's before typing it (the event handlers of :mod:`.events`,
    each called at one place of the loop: a call passing some 20 arrays costs about 100 ns, 13 % of
    an SRTF run; and the loop's constant hooks reach their branches, which numba then drops)."""
    if fn is None:
        return lambda f: helper(f, inline=inline)
    if config.DISABLE_JIT:
        return fn
    options = dict(_OPTIONS, inline="always") if inline else dict(_OPTIONS)
    return Helper(fn, targetoptions=options, pipeline_class=_HelperCompiler)
