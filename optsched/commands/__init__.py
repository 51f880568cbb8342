"""Subcommands of the ``optsched`` CLI, one module each.

A module exposes ``add_parser(subparsers)``, which adds its parser and sets
``func(args) -> int`` (the exit code) with ``parser.set_defaults(func=...)``.
To add a command, add a module here and its name to :data:`COMMANDS`.
"""

COMMANDS = ("info", "instances", "solve", "verify", "demo", "simulate", "compare", "reproduce", "data")
