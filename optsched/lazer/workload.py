"""Load and save times per job from a generic job table: what makes Lazer's policies (and every
other policy's preemptions) pay for a (re)start, on any trace (``optsched compare``).
Assumptions, each an option (formulations/lazer.md#from-a-trace):

* **Model** of each job: the ``model`` column's name when :class:`LoadSaveModel` knows it (a variant
  of :data:`PARAMETER_COUNTS` or a family of :data:`DEFAULT_VARIANT`), else a family drawn
  uniformly among the seven of Sec. 3.1 (:data:`FAMILIES`), as in the paper's testbed.
* **Times** from its parameter count, (L1)-(L2): save p = 12 n / beta, load l = base + p, with
  the defaults of :class:`LoadSaveModel` (beta = 125 MB/s, base 60 s).
"""

from __future__ import annotations

from typing import Any

from optsched.core.seeds import SeedLike, as_generator
from optsched.exceptions import InvalidInstanceError
from optsched.lazer.loadsave import FAMILIES, LoadSaveModel

__all__ = ["with_load_save"]


def with_load_save(
    table: Any,
    *,
    model_column: str = "model",
    base: float = 60.0,
    model: LoadSaveModel | None = None,
    families=FAMILIES,
    seed: SeedLike = 0,
):
    """A copy of ``table`` with ``model`` (the name used), ``load_time`` and ``save_time`` (s).

    ``model=`` replaces the :class:`LoadSaveModel` built from ``base``; ``df.attrs["assumptions"]``
    counts the names taken from the column and drawn.

    Raises
    ------
    InvalidInstanceError
        No ``arrival`` column (not a job table), or an empty ``families``.

    Examples
    --------
    >>> import pandas as pd
    >>> t = with_load_save(pd.DataFrame({"arrival": [0.0], "gpus": [1], "duration": [5.0], "model": ["vgg19"]}))
    >>> t["model"][0], round(float(t["save_time"][0]), 3), round(float(t["load_time"][0]), 3)
    ('vgg19', 13.792, 73.792)
    """
    cols = list(getattr(table, "columns", ()))
    if "arrival" not in cols:
        raise InvalidInstanceError(f"The job table has no 'arrival' column (columns: {cols}).")
    fams = list(families)
    if not fams:
        raise InvalidInstanceError("'families' is empty; give at least one model family to draw from.")
    ls = model if model is not None else LoadSaveModel(base=base)
    rng = as_generator(seed)
    given = table[model_column].tolist() if model_column in cols else [None] * len(table)
    names, n_col = [], 0
    for name in given:
        try:
            ok = name is not None and ls.n_params(name) >= 0
        except (InvalidInstanceError, TypeError):
            ok = False
        if ok:
            names.append(name)
            n_col += 1
        else:
            names.append(fams[int(rng.integers(len(fams)))])
    out = table.copy()
    out["model"] = names
    out["save_time"] = [ls.save_seconds(m) for m in names]
    out["load_time"] = [ls.load_seconds(m) for m in names]
    out.attrs["assumptions"] = {
        "models_from_column": n_col,
        "models_drawn": len(names) - n_col,
        "base_load_s": ls.base,
        "bytes_per_param": ls.bytes_per_param,
        "bandwidth": ls.bandwidth,
    }
    return out
