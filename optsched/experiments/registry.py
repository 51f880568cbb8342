"""Paper reproductions registered by name (``optsched reproduce NAME``).

A reproduction is a function ``run(save, *, quick, seeds, progress) -> None`` that computes its
tables (each with the paper's numbers beside ours) and hands each one to ``save(name, df)`` as
soon as it is done, so a run that fails late keeps every finished table. ``quick`` is a
minute-long version (run by CI); ``seeds`` overrides the number of seeds where the experiment
has seeds (``None``: the reproduction's default).

A paper declares its reproductions in the ``register()`` of its ``plugin.py``, by the
``module:function`` that runs each (the module is imported only when the reproduction runs)::

    register_reproduction("sojourn-tables", "optsched.experiments.sojourn:reproduce",
                          description="Tables IV-XIV", paper="sojourn")

(:func:`optsched.core.plugins.register_reproduction`; this module's :func:`register_reproduction`
is the same and also takes the function itself). ``optsched reproduce NAME --out DIR`` writes each
table handed to ``save`` and, for a table that stands for one of the paper's figures or tables, its
picture (``name.png``, ``name.svg``) beside it: add the table's panels to
:data:`optsched.experiments.figures.FIGURES` (columns to draw, the paper's column, error bars).
Tested in ``tests/experiments/test_reproduce.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from optsched.core import plugins
from optsched.core.plugins import REPRODUCTIONS, ReproductionSpec
from optsched.exceptions import UnknownNameError

Reproduction = ReproductionSpec
"""A registered reproduction: ``name``, ``run`` (the function, its module imported when read),
``description``, ``paper``, ``quick_seconds`` (the class :class:`optsched.core.plugins.ReproductionSpec`).

Examples
--------
>>> r = get_reproduction("rarddls-sec7")
>>> isinstance(r, Reproduction), r.paper
(True, 'rarddls')
"""
#: name -> Reproduction: the registry itself (:func:`optsched.core.plugins.reproduction_specs` reads it).
_REPRO = REPRODUCTIONS


def register_reproduction(
    name: str,
    run: str | Callable[..., Any],
    *,
    description: str,
    paper: str,
    quick_seconds: float | None = None,
    seeds: bool = True,
) -> Reproduction:
    """Register the reproduction ``name``: ``run`` is ``"module:function"`` or the function itself
    (:func:`optsched.core.plugins.register_reproduction`).

    Examples
    --------
    >>> spec = register_reproduction("doc-tables", "optsched.experiments.sojourn:reproduce",
    ...                              description="the sojourn tables again", paper="sojourn")
    >>> get_reproduction("doc-tables").run.__name__
    'reproduce'
    >>> from optsched.core.plugins import forget_reproduction
    >>> _ = forget_reproduction("doc-tables")
    """
    return plugins.register_reproduction(
        name, run, description=description, paper=paper, quick_seconds=quick_seconds, seeds=seeds
    )


def reproductions() -> list[Reproduction]:
    """Every reproduction the paper packages declare, sorted by name (their modules are not imported).

    Examples
    --------
    >>> names = [r.name for r in reproductions()]
    >>> "sojourn-tables" in names, names == sorted(names)
    (True, True)
    """
    plugins.load_plugins()
    return sorted(plugins.reproduction_specs().values(), key=lambda r: r.name)


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
    plugins.load_plugins()
    specs = plugins.reproduction_specs()
    try:
        return specs[name]
    except KeyError:
        raise UnknownNameError(
            f"Unknown reproduction {name!r}; known: {sorted(specs)} (`optsched reproduce --list`)."
        ) from None
