"""Load and save times per job from a generic job table: what makes Lazer's policies (and every
other policy's preemptions) pay for a (re)start, on any trace (``optsched compare``).
Assumptions, each an option (formulations/lazer.md#from-a-trace):

* **Model** of each job, by :func:`resolve_model`: the ``model`` column's name when
  :class:`LoadSaveModel` knows it (a variant of :data:`PARAMETER_COUNTS` or a family of
  :data:`DEFAULT_VARIANT`, case and ``-``/``/``/``.`` aside); else *mapped* by a rule: a parameter
  count written in the name (``llama-70b``, ``bert-340m``), a common model of
  :data:`OTHER_MODELS` (``resnet50``, ``bert``, ``gpt2``), or a name that starts with a family
  (``vgg16`` -> VGG19's variant); else a family *drawn* uniformly among the seven of Sec. 3.1
  (:data:`FAMILIES`), as in the paper's testbed. Each job's draw is keyed by its id and the seed
  (:func:`optsched.core.seeds.job_uniforms`), so it belongs to the job and not to its row.
* **Times** from its parameter count, (L1)-(L2): save p = 12 n / beta, load l = base + p, with
  the defaults of :class:`LoadSaveModel` (beta = 125 MB/s, base 60 s).
"""

from __future__ import annotations

import math
import re
import warnings
from typing import Any

from optsched.core.compat import user_stacklevel
from optsched.core.seeds import SeedLike, job_uniforms
from optsched.exceptions import InvalidInstanceError, WorkloadWarning
from optsched.lazer.loadsave import DEFAULT_VARIANT, FAMILIES, LoadSaveModel

OTHER_MODELS: dict[str, float] = {
    "resnet18": 11_689_512,
    "resnet34": 21_797_672,
    "resnet50": 25_557_032,
    "resnet101": 44_549_160,
    "resnet152": 60_192_808,
    "bert": 110e6,
    "bert_base": 110e6,
    "bert_large": 340e6,
    "gpt2": 124_439_808,
    "gpt2_medium": 354_823_168,
    "gpt2_large": 774_030_080,
    "gpt2_xl": 1_557_611_200,
}
"""Parameter counts of common models outside Lazer's seven families, to which a name of the ``model``
column is *mapped* (ResNets: torchvision's weights metadata; BERT: Devlin et al. 2019, Sec. 3;
GPT-2: the Hugging Face checkpoints)."""

_SIZE = re.compile(r"(?:^|[_])(\d+(?:\.\d+)?)([bm])(?:$|[_])")


def _normal(name: str) -> str:
    return re.sub(r"[-/.\s]+", "_", name.strip().lower())


def resolve_model(name: Any, ls: LoadSaveModel) -> tuple[Any, float | None, str]:
    """How the model of one job is found: ``(name used, parameters, how)``; ``how`` is ``"column"``
    (known to ``ls``), ``"mapped"`` (by the rule of the module docstring; ``parameters`` given) or
    ``"drawn"`` (no usable name: the caller draws a family).

    Examples
    --------
    >>> ls = LoadSaveModel()
    >>> resolve_model("ViT-B/16", ls)[::2], resolve_model("llama-70b", ls)[1:], resolve_model("vgg16", ls)[::2]
    (('vit_b_16', 'column'), (70000000000.0, 'mapped'), ('vgg16', 'mapped'))
    >>> resolve_model("resnet50", ls)[1:], resolve_model(None, ls)[2]
    ((25557032, 'mapped'), 'drawn')
    """
    if name is None or (isinstance(name, float) and math.isnan(name)) or not str(name).strip():
        return name, None, "drawn"
    for cand in (name, _normal(str(name))):
        try:
            return cand, ls.n_params(cand), "column"
        except (InvalidInstanceError, TypeError):
            pass
    norm = _normal(str(name))
    m = _SIZE.search(norm)
    if m:
        return name, float(m.group(1)) * (1e9 if m.group(2) == "b" else 1e6), "mapped"
    if norm in OTHER_MODELS:
        return name, OTHER_MODELS[norm], "mapped"
    for fam in sorted(DEFAULT_VARIANT, key=len, reverse=True):  # longest first: ConvNeXt before a shorter one
        key = fam.lower().rstrip("0123456789")
        if norm.startswith(key):
            return name, ls.n_params(fam), "mapped"
    return name, None, "drawn"


def drawn_load_save(
    ids: Any, *, base: float = 60.0, model: LoadSaveModel | None = None, families=FAMILIES, seed: SeedLike = 0
) -> tuple[list[str], Any, Any]:
    """Each job's model family, load and save times (s) when the table names no model: the draw of
    :func:`with_load_save` (by ``job_id`` and ``seed``), on plain id lists, without pandas.

    Examples
    --------
    >>> names, load, save = drawn_load_save([0, 1], seed=0)
    >>> len(names), [round(float(x - y), 6) for x, y in zip(load, save)]
    (2, [60.0, 60.0])
    """
    import numpy as np

    fams = list(families)
    if not fams:
        raise InvalidInstanceError("'families' is empty; give at least one model family to draw from.")
    ls = model if model is not None else LoadSaveModel(base=base)
    pick = job_uniforms(seed, list(ids), "lazer-model")
    idx = np.minimum((pick * len(fams)).astype(np.int64), len(fams) - 1)
    per_fam = np.array([ls.save_seconds(f) for f in fams])
    save = per_fam[idx]
    return [fams[i] for i in idx], ls.base + save, save


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
    counts the names taken from the column, mapped and drawn (:func:`resolve_model`), with a
    :class:`~optsched.exceptions.WorkloadWarning` when a name of the column was mapped or unknown.
    A mapped job keeps its name in ``model``; a drawn one gets the family drawn, by its ``job_id``
    (else its row number) and ``seed``.

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
    given = table[model_column].tolist() if model_column in cols else [None] * len(table)
    ids = table["job_id"].tolist() if "job_id" in cols else list(range(len(table)))
    pick = job_uniforms(seed, ids, "lazer-model")  # each job's own draw: by id, not by row
    names, saves, how = [], [], {"column": 0, "mapped": 0, "drawn": 0}
    unknown: list[Any] = []
    mapped: dict[str, float] = {}
    for i, name in enumerate(given):
        used, n_params, kind = resolve_model(name, ls)
        if kind == "drawn":
            if name is not None and not (isinstance(name, float) and math.isnan(name)) and str(name).strip():
                unknown.append(name)
            used = fams[min(int(pick[i] * len(fams)), len(fams) - 1)]
            n_params = ls.n_params(used)
        elif kind == "mapped":
            mapped.setdefault(str(name), float(n_params))
        how[kind] += 1
        names.append(used)
        saves.append(ls.bytes_per_param * float(n_params) / ls.bandwidth)
    if unknown or how["mapped"]:
        warnings.warn(
            f"{how['mapped']:,} job(s) of the model column have a model outside Lazer's table, mapped by name "
            f"(a parameter count in the name, a common model, a family prefix; formulations/lazer.md#from-a-trace), "
            f"and {len(unknown):,} an unknown name, for which a family was drawn (e.g. {unknown[:3]}); their load "
            f"and save times follow from that."
            if unknown
            else f"{how['mapped']:,} job(s) have a model outside Lazer's table, mapped by name to a parameter count "
            f"(formulations/lazer.md#from-a-trace): "
            + ", ".join(f"{k} -> {v:,.0f}" for k, v in list(mapped.items())[:3])
            + ".",
            WorkloadWarning,
            stacklevel=user_stacklevel(),
        )
    out = table.copy()
    out["model"] = names
    out["save_time"] = saves
    out["load_time"] = [ls.base + p for p in saves]
    out.attrs["assumptions"] = {
        "models_from_column": how["column"],
        "models_mapped": how["mapped"],
        "models_drawn": how["drawn"],
        "unknown_model_names": len(unknown),
        "base_load_s": ls.base,
        "bytes_per_param": ls.bytes_per_param,
        "bandwidth": ls.bandwidth,
    }
    return out
