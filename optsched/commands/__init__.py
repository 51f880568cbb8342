"""Subcommands of the ``optsched`` CLI, one module each.

A module exposes ``add_parser(subparsers)``, which adds its parser and sets
``func(args) -> int`` (the exit code) with ``parser.set_defaults(func=...)``.
To add a command, add a module here and its name to :data:`COMMANDS`.
"""

# what the CLI's entry point needs of the shared helpers (explicit re-exports)
from optsched.commands._common import EXIT_BAD_INPUT as EXIT_BAD_INPUT
from optsched.commands._common import EXIT_FAILED as EXIT_FAILED
from optsched.commands._common import EXIT_OK as EXIT_OK
from optsched.commands._common import plain_text as plain_text

COMMANDS = ("info", "instances", "solve", "verify", "demo", "simulate", "compare", "reproduce", "data")
