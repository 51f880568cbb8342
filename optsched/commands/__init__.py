"""Subcommands of the ``optsched`` CLI, one module each.

A module exposes ``add_parser(subparsers)``, which adds its parser and sets
``func(args) -> int`` (the exit code) with ``parser.set_defaults(func=...)``.
To add a command, add a module here and its name to :data:`COMMANDS`.
"""

from optsched.commands._common import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, plain_text

__all__ = ["COMMANDS", "EXIT_OK", "EXIT_FAILED", "EXIT_BAD_INPUT", "plain_text"]

COMMANDS = ("info", "instances", "solve", "verify", "demo", "simulate", "compare", "reproduce", "data")
