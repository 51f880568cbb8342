"""Load and pause-and-save times of the seven models of Lazer's Sec. 3.1 (the paper gives none).

``p = b * n_params / beta`` and ``l = base + b * n_params / beta`` (formulations/lazer.md (L1)-(L2)),
with ``b = 12`` bytes per parameter (fp32 weights + two Adam moments), ``beta = 125 MB/s`` (a
1 Gbit/s network file system) and ``base`` = 60 s by default (swept over {5, 30, 60, 120}).

:class:`LoadSaveModel` gives functions ``(job, placement) -> seconds`` that read
``job.attrs["model"]``, usable as the simulator's ``load_time`` / ``save_time``::

    ls = LoadSaveModel(base=60)
    Simulator(cluster, jobs, policy, load_time=ls.load_time, save_time=ls.save_time)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from optsched.exceptions import InvalidInstanceError, InvalidOptionError

BYTES_PER_PARAM = 12.0
"""fp32 weights (4 B) + Adam's two moments (4 B each): what a resumable checkpoint holds."""

BANDWIDTH = 125e6
"""Bytes per second to and from storage: 1 Gbit/s (the testbed's NFS; its speed is not given)."""

BASE_LOAD_SWEEP = (5.0, 30.0, 60.0, 120.0)

_TV = "torchvision.models weights metadata num_params (torchvision 0.15+)"
_CONFORMER = "Peng et al., Conformer: Local Features Coupling Global Representations, ICCV 2021, Table 1"
_TNT = "Han et al., Transformer in Transformer, NeurIPS 2021, Table 3"

PARAMETER_COUNTS: dict[str, float] = {
    "convnext_tiny": 28_589_128,
    "convnext_small": 50_223_688,
    "convnext_base": 88_591_464,
    "convnext_large": 197_767_336,
    "efficientnet_b0": 5_288_548,
    "efficientnet_b4": 19_341_616,
    "efficientnet_b7": 66_347_960,
    "vgg19": 143_667_240,
    "vgg19_bn": 143_678_248,
    "vit_b_16": 86_567_656,
    "vit_l_16": 304_326_632,
    "vit_h_14": 632_045_800,
    "swin_t": 28_288_354,
    "swin_s": 49_606_258,
    "swin_b": 87_768_224,
    "conformer_ti": 23.5e6,
    "conformer_s": 37.7e6,
    "conformer_b": 83.3e6,
    "tnt_s": 23.8e6,
    "tnt_b": 65.6e6,
}
"""Parameter counts of named variants (variant -> parameters)."""

SOURCES: dict[str, str] = {
    v: (_CONFORMER if v.startswith("conformer") else _TNT if v.startswith("tnt") else _TV) for v in PARAMETER_COUNTS
}
"""Where each count comes from."""

FAMILIES = ("ConvNeXt", "EfficientNet", "VGG19", "ViT", "Swin", "Conformer", "TNT")
"""The seven model families of Sec. 3.1, assigned uniformly to jobs."""

DEFAULT_VARIANT: dict[str, str] = {
    "ConvNeXt": "convnext_base",
    "EfficientNet": "efficientnet_b4",
    "VGG19": "vgg19",
    "ViT": "vit_b_16",
    "Swin": "swin_b",
    "Conformer": "conformer_b",
    "TNT": "tnt_b",
}
"""A family name alone means this variant (base size: mean p over the seven = 7.9 s, Sec. 3.2's ~8 s)."""


def _seconds(value: Any, name: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = float("nan")
    if isinstance(value, bool) or not (v >= 0 and math.isfinite(v)):
        raise InvalidOptionError(f"The '{name}' option must be a finite number >= 0; got {value!r}.")
    return v


class LoadSaveModel:
    """Load and save seconds per model, from parameter counts (formulations/lazer.md (L1)-(L2)).

    Parameters
    ----------
    base : float
        Fixed part of every load, seconds (>= 0; default 60).
    bytes_per_param : float
        Bytes moved per parameter (> 0; default 12).
    bandwidth : float
        Bytes per second (> 0; default 125e6).
    counts : mapping name -> parameters, optional
        Replaces (not extends) :data:`PARAMETER_COUNTS`; family names of :data:`DEFAULT_VARIANT`
        still resolve when their variant is in it.
    attr : str
        The ``job.attrs`` key holding the model name (default ``"model"``).

    Raises
    ------
    InvalidOptionError
        A negative, NaN or infinite ``base``, or a non-positive bandwidth or bytes per parameter.
    InvalidInstanceError
        A count that is negative, NaN or infinite; at run time, a job whose model has no entry.

    Examples
    --------
    >>> ls = LoadSaveModel(base=60)
    >>> round(ls.save_seconds("ViT"), 3), round(ls.load_seconds("vit_b_16"), 3)
    (8.31, 68.31)
    """

    def __init__(
        self,
        *,
        base: float = 60.0,
        bytes_per_param: float = BYTES_PER_PARAM,
        bandwidth: float = BANDWIDTH,
        counts: Mapping[str, float] | None = None,
        attr: str = "model",
    ):
        self.base = _seconds(base, "base")
        self.bytes_per_param = _seconds(bytes_per_param, "bytes_per_param")
        self.bandwidth = _seconds(bandwidth, "bandwidth")
        if self.bandwidth <= 0 or self.bytes_per_param <= 0:
            raise InvalidOptionError(
                f"'bandwidth' and 'bytes_per_param' must be > 0; got {bandwidth!r} and {bytes_per_param!r}."
            )
        table = dict(PARAMETER_COUNTS if counts is None else counts)
        for name, n in table.items():
            try:
                v = float(n)
            except (TypeError, ValueError):
                v = float("nan")
            if isinstance(n, bool) or not (v >= 0 and math.isfinite(v)):
                raise InvalidInstanceError(
                    f"The parameter count of model {name!r} must be a finite number >= 0; "
                    f"got {n!r}. Fix the 'counts' table."
                )
            table[name] = v
        self.counts = table
        self.attr = attr
        self._save: dict[Any, float] = {}

    def n_params(self, model: Any) -> float:
        """Parameters of ``model`` (a variant, or a family name meaning its default variant)."""
        name = DEFAULT_VARIANT.get(model, model) if model not in self.counts else model
        if name not in self.counts:
            raise InvalidInstanceError(
                f"Model {model!r} has no load/save entry; use one of {sorted(self.counts)} or a family "
                f"{list(DEFAULT_VARIANT)}, or pass counts={{{model!r}: n_params}} to LoadSaveModel."
            )
        return self.counts[name]

    def save_seconds(self, model: Any) -> float:
        """p = b n / beta (L1)."""
        v = self._save.get(model)
        if v is None:
            v = self._save[model] = self.bytes_per_param * self.n_params(model) / self.bandwidth
        return v

    def load_seconds(self, model: Any) -> float:
        """l = base + b n / beta (L2)."""
        return self.base + self.save_seconds(model)

    def _model_of(self, job: Any) -> Any:
        attrs = getattr(job, "attrs", None) or {}
        if self.attr not in attrs:
            raise InvalidInstanceError(
                f"{getattr(job, 'label', job)!r} has no {self.attr!r} attribute, so its load/save time is unknown; "
                f"add a '{self.attr}' column to the job table (e.g. synthetic_workload(models=FAMILIES))."
            )
        return attrs[self.attr]

    def load_time(self, job: Any, placement: Any = None) -> float:
        """Seconds ``job`` loads before each (re)start: the simulator's ``load_time``."""
        return self.load_seconds(self._model_of(job))

    def save_time(self, job: Any, placement: Any = None) -> float:
        """Seconds ``job`` pauses and saves after a preemption: the simulator's ``save_time``."""
        return self.save_seconds(self._model_of(job))

    def __repr__(self) -> str:
        return (
            f"LoadSaveModel(base={self.base:g}, bytes_per_param={self.bytes_per_param:g}, "
            f"bandwidth={self.bandwidth:g}, {len(self.counts)} models)"
        )
