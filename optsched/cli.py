"""The ``optsched`` command line.

Exit codes: 0 ok; 1 infeasible, no solution, or a check failed; 2 bad input (file, field,
option, unknown name); 130 interrupted (Ctrl-C; commands write what they finished first).
Errors are one clear line on stderr, never a traceback from deep inside a library
(``OPTSCHED_DEBUG=1`` shows it).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from optsched.commands import COMMANDS
from optsched.commands._common import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, plain_text
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
    from optsched import __version__

    p = _Parser(
        prog="optsched",
        description="Exact optimization and paper algorithms for scheduling "
        "distributed deep-learning jobs on GPU clusters.",
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


def main(argv: list[str] | None = None) -> int:
    import warnings

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version (0) or a usage error (2, message already printed)
        return e.code if isinstance(e.code, int) else EXIT_BAD_INPUT
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_BAD_INPUT
    old_show = warnings.showwarning
    warnings.showwarning = _show_warning
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
        print("optsched: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # output piped into `head` and friends: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    finally:
        warnings.showwarning = old_show


def _report(e: BaseException) -> None:
    if os.environ.get("OPTSCHED_DEBUG"):
        import traceback

        traceback.print_exception(e)
    print(f"optsched: error: {e}", file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
