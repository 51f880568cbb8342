"""Paper reproductions registered by name (``optsched reproduce NAME``).

A reproduction is a function ``run(save, *, quick, seeds, progress) -> None`` that computes its
tables (each with the paper's numbers beside ours) and hands each one to ``save(name, df)`` as
soon as it is done, so a run that fails late keeps every finished table. ``quick`` is a
minute-long version (run by CI); ``seeds`` overrides the number of seeds where the experiment
has seeds (``None``: the reproduction's default).

Register one in a module of :mod:`optsched.experiments` with::

    register_reproduction("sojourn-tables", run, description="Tables IV-XIV", paper="sojourn")

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

MODULES = (
    "optsched.experiments.sojourn",
    "optsched.experiments.asrpt_table2",
    "optsched.experiments.asrpt_repro",
    "optsched.experiments.asrpt_paper",
    "optsched.experiments.rarddls",
    "optsched.experiments.elastic",
    "optsched.experiments.lazer",
)
"""Modules that register reproductions when imported (a module missing from the installation is skipped)."""

_REPRO: dict[str, Reproduction] = {}


@dataclass(frozen=True)
class Reproduction:
    """A registered reproduction: what ``optsched reproduce NAME`` runs.

    Attributes
    ----------
    name : str
        The name given to ``optsched reproduce``.
    run : callable
        ``run(save, *, quick, seeds, progress)``; hands each finished table to ``save(name, df)``.
    description : str
        What it reproduces (the paper's tables and figures).
    paper : str
        The key of the paper package (``asrpt``, ``elastic``, ``rarddls``, ``sojourn``, ``lazer``).
    quick_seconds : float or None
        Rough wall time of ``--quick`` on 2 cores.

    Examples
    --------
    >>> r = get_reproduction("sojourn-tables")
    >>> r.paper, callable(r.run)
    ('sojourn', True)
    """

    name: str
    run: Callable[..., Any]
    description: str
    paper: str
    quick_seconds: float | None = None  # rough wall time of --quick on 2 cores


def register_reproduction(
    name: str, run: Callable[..., Any], *, description: str, paper: str, quick_seconds: float | None = None
) -> None:
    """Register ``run`` under ``name`` (a later registration under the same name replaces it).

    Parameters
    ----------
    name : str
        The name for ``optsched reproduce NAME`` and :func:`get_reproduction`.
    run : callable
        ``run(save, *, quick, seeds, progress) -> None`` (see the module docstring).
    description, paper : str
        Shown by ``optsched reproduce --list``; ``paper`` is the key of the paper package.
    quick_seconds : float, optional
        Rough wall time of ``--quick`` on 2 cores.

    Examples
    --------
    >>> def run(save, *, quick=False, seeds=None, progress=True):
    ...     import pandas as pd
    ...     save("table-1", pd.DataFrame({"ours": [1.0], "paper": [1.0]}))
    >>> register_reproduction("example-tables", run, description="Table 1", paper="rigid")
    >>> tables = {}
    >>> get_reproduction("example-tables").run(tables.__setitem__)
    >>> tables["table-1"]["ours"].tolist()
    [1.0]
    >>> _ = _REPRO.pop("example-tables")  # leave the registry as it was
    """
    _REPRO[name] = Reproduction(name, run, description, paper, quick_seconds)


def _load() -> None:
    for mod in MODULES:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as e:
            if e.name != mod:
                raise


def reproductions() -> list[Reproduction]:
    """Every registered reproduction, sorted by name (the modules of :data:`MODULES` are imported first).

    Examples
    --------
    >>> names = [r.name for r in reproductions()]
    >>> "sojourn-tables" in names, names == sorted(names)
    (True, True)
    """
    _load()
    return sorted(_REPRO.values(), key=lambda r: r.name)


def get_reproduction(name: str) -> Reproduction:
    """The reproduction registered under ``name``.

    Raises
    ------
    UnknownNameError
        No reproduction has that name; the message lists the known ones.

    Examples
    --------
    >>> get_reproduction("rarddls-sec7").paper
    'rarddls'
    >>> get_reproduction("fig-99")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    optsched.exceptions.UnknownNameError: Unknown reproduction 'fig-99'; known: [...] (`optsched reproduce --list`).
    """
    _load()
    try:
        return _REPRO[name]
    except KeyError:
        raise UnknownNameError(
            f"Unknown reproduction {name!r}; known: {sorted(_REPRO)} (`optsched reproduce --list`)."
        ) from None
