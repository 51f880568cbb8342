"""The ``optsched`` command line.

Exit codes: 0 ok; 1 infeasible, no solution, a check failed, or the run failed (out of memory, a
full disk); 2 bad input (file, field, option, unknown name, an --out folder in use); 130, 143,
129 stopped by a signal (Ctrl-C = SIGINT, SIGTERM, SIGHUP: 128 + its number; each command writes
what it finished first). Errors are one clear line on stderr, never a traceback from deep inside
a library (``OPTSCHED_DEBUG=1`` shows it).

Tested in ``tests/cli/test_cli.py``, ``tests/cli/test_faults.py`` and
``tests/cli/test_interrupt.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
import traceback
import warnings

from optsched import __version__
from optsched.commands import COMMANDS, EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, plain_text
from optsched.exceptions import (
    DataNotFoundError,
    InfeasibleError,
    InternalError,
    InvalidInstanceError,
    InvalidOptionError,
    InvalidScheduleError,
    ModelTooLargeError,
    OptschedError,
    SolverUnavailableError,
    TraceFormatError,
    UnknownNameError,
    WriteError,
    cut_message,
)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):  # subcommands pass their docstring: show it without reST markup
        for key in ("description", "epilog"):
            kwargs[key] = plain_text(kwargs.get(key))
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # argparse exits 2 on bad usage: keep that, shorter text
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"optsched: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="optsched",
        description="Exact optimization and paper algorithms for scheduling "
        "distributed deep-learning jobs on GPU clusters.",
        epilog="Exit codes: 0 ok; 1 infeasible, no solution, a failed check, or a run that failed (out of "
        "memory, a full disk); 2 bad input; 130, 143, 129 stopped by Ctrl-C, SIGTERM or SIGHUP (what "
        "finished is written first).",
    )
    p.add_argument("--version", action="version", version=f"optsched {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        try:
            mod = importlib.import_module(f"optsched.commands.{name}")
        except ModuleNotFoundError as e:
            if e.name == f"optsched.commands.{name}":
                continue
            raise
        mod.add_parser(sub)
    return p


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings as one line on stderr (no source line), as the CLI promises."""
    print(f"optsched: warning: {message}", file=sys.stderr)


def _starting(signum: int, frame) -> None:
    """SIGTERM and SIGHUP while the command line starts (before the command's own handling)."""
    raise _Stopped(signum)


class _Stopped(KeyboardInterrupt):
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _tolerant_streams() -> None:
    """A terminal that cannot show a character (``PYTHONIOENCODING=ascii``, ``LANG=C``) gets an
    escape (``\\xe9``) instead of a ``UnicodeEncodeError`` in the middle of the output."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError):  # replaced by a test, or closed
            stream.reconfigure(errors="backslashreplace")


def main(argv: list[str] | None = None) -> int:
    _tolerant_streams()
    early: dict[int, object] = {}
    try:
        for name in ("SIGTERM", "SIGHUP"):  # as Ctrl-C from the start: a word and 128 + the signal
            if hasattr(signal, name):
                s = getattr(signal, name)
                if signal.getsignal(s) != signal.SIG_IGN:  # one the caller ignores (nohup) stays ignored
                    early[s] = signal.signal(s, _starting)
    except ValueError:  # not the main thread: signals keep their behaviour
        early = {}
    try:
        code = _main(argv)
        if argv is None:
            _exit_if_a_solver_was_left(code)
        return code
    except KeyboardInterrupt as e:  # while starting (the command itself answers a signal with what it did)
        signum = getattr(e, "signum", signal.SIGINT)
        what = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
        print(f"optsched: interrupted ({what}).", file=sys.stderr)
        return 128 + int(signum)
    finally:
        if argv is None and early:  # the process ends now: a late Ctrl-C must not turn its exit code into a kill
            for s in (signal.SIGINT, *early):
                signal.signal(s, signal.SIG_IGN)
        else:  # called from Python (a test, a script): give the signals back
            for s, h in early.items():
                signal.signal(s, h if h is not None else signal.SIG_DFL)


def _exit_if_a_solver_was_left(code: int) -> None:
    """A solver stopped by a signal in a phase it cannot be stopped in (HiGHS's presolve, root LP)
    was left running in its thread once the results were written: end the process now, without
    waiting for it."""
    interrupt = sys.modules.get("optsched.solvers.interrupt")
    if interrupt is not None and interrupt.abandoned():
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version (0) or a usage error (2, message already printed)
        return e.code if isinstance(e.code, int) else EXIT_BAD_INPUT
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_BAD_INPUT
    from optsched.solvers import interrupt  # after parsing: --help imports nothing heavy

    old_show = warnings.showwarning
    warnings.showwarning = _show_warning
    try:
        with interrupt.handle_signals():  # SIGTERM and SIGHUP are Ctrl-C for every command
            try:
                code = _run(args)
            finally:
                # deferred: ``optsched --help`` loads no NumPy (``optsched.core`` does)
                from optsched.core.output import release_out_dirs

                release_out_dirs()
            if interrupt.received() is not None and code in (EXIT_OK, EXIT_FAILED):
                # the signal came while the results were written (that was finished first)
                print(
                    f"optsched: interrupted ({interrupt.described()}) after the results were written.",
                    file=sys.stderr,
                )
                code = interrupt.exit_code()
            return code
    finally:
        warnings.showwarning = old_show


def _run(args) -> int:
    """The command, with every error it can end with turned into one line and an exit code."""
    # deferred: ``optsched --help`` loads no NumPy (``optsched.core`` does)
    from optsched.solvers import interrupt

    try:
        return int(args.func(args))
    except (
        InvalidInstanceError,
        InvalidScheduleError,
        InvalidOptionError,
        UnknownNameError,
        TraceFormatError,
        ModelTooLargeError,
        DataNotFoundError,
    ) as e:
        _report(e)
        return EXIT_BAD_INPUT
    except WriteError as e:  # a full disk, memory running out while writing: the run failed
        _report(e)
        return EXIT_FAILED
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError) as e:
        _report(e)
        return EXIT_BAD_INPUT
    except SolverUnavailableError as e:
        _report(e)
        return EXIT_BAD_INPUT
    except (InfeasibleError, InternalError, OptschedError) as e:
        _report(e)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print(f"optsched: interrupted ({interrupt.described()}).", file=sys.stderr)
        return interrupt.exit_code()
    except BrokenPipeError:  # output piped into `head` and friends: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except MemoryError as e:
        _report(
            e,
            "Out of memory: the run needs more than this machine gives it. Use a smaller workload "
            "(fewer jobs: --jobs N) or a machine with more memory.",
        )
        return EXIT_FAILED
    except RecursionError as e:
        _report(e, "An input nests lists or objects too deeply to be read; check that it is the right file.")
        return EXIT_BAD_INPUT
    except OSError as e:  # the system refused something (a full disk outside a result file, too many files)
        _report(e, f"{e.strerror or e}{f' ({e.filename})' if e.filename else ''}; check the disk and the paths.")
        return EXIT_FAILED
    except Exception as e:
        if interrupt.received() is None:
            raise  # a bug: the traceback is what a report needs
        if os.environ.get("OPTSCHED_DEBUG"):
            traceback.print_exception(e)
        print(f"optsched: interrupted ({interrupt.described()}) inside a library call.", file=sys.stderr)
        return interrupt.exit_code()


def _report(e: BaseException, message: str | None = None) -> None:
    if os.environ.get("OPTSCHED_DEBUG"):
        traceback.print_exception(e)
    print(f"optsched: error: {cut_message(str(e) if message is None else message)}", file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
