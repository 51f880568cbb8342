"""Paper reproductions registered by name (``optsched reproduce NAME``).

A reproduction is a function ``run(save, *, quick, seeds, progress) -> None`` that computes its
tables (each with the paper's numbers beside ours) and hands each one to ``save(name, df)`` as
soon as it is done, so a run that fails late keeps every finished table. ``quick`` is a
minute-long version (run by CI); ``seeds`` overrides the number of seeds where the experiment
has seeds (``None``: the reproduction's default).

Register one in a module of :mod:`optsched.experiments` with::

    register_reproduction("sojourn-tables", run, description="Tables IV-XIV of paper 003", paper="sojourn")

and add the module to :data:`MODULES`. ``optsched reproduce NAME --out DIR`` writes each table
handed to ``save`` and, for a table that stands for one of the paper's figures or tables, its
picture (``name.png``, ``name.svg``) beside it: add the table's panels to
:data:`optsched.experiments.figures.FIGURES` (columns to draw, the paper's column, error bars).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from optsched.exceptions import UnknownNameError

__all__ = ["Reproduction", "register_reproduction", "get_reproduction", "reproductions", "MODULES"]

#: Modules that register reproductions when imported (missing ones are skipped).
MODULES = (
    "optsched.experiments.sojourn",
    "optsched.experiments.asrpt_table2",
    "optsched.experiments.asrpt_repro",
    "optsched.experiments.asrpt_paper",
    "optsched.experiments.rarddls",
    "optsched.experiments.elastic",
    "optsched.experiments.lazer",
)

_REPRO: dict[str, Reproduction] = {}


@dataclass(frozen=True)
class Reproduction:
    name: str
    run: Callable[..., Any]
    description: str
    paper: str
    quick_seconds: float | None = None  # rough wall time of --quick on 2 cores


def register_reproduction(
    name: str, run: Callable[..., Any], *, description: str, paper: str, quick_seconds: float | None = None
) -> None:
    _REPRO[name] = Reproduction(name, run, description, paper, quick_seconds)


def _load() -> None:
    for mod in MODULES:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as e:
            if e.name != mod:
                raise


def reproductions() -> list[Reproduction]:
    _load()
    return sorted(_REPRO.values(), key=lambda r: r.name)


def get_reproduction(name: str) -> Reproduction:
    _load()
    try:
        return _REPRO[name]
    except KeyError:
        raise UnknownNameError(
            f"Unknown reproduction {name!r}; known: {sorted(_REPRO)} (`optsched reproduce --list`)."
        ) from None
