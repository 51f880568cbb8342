"""One training job of the elastic model (Sec. 3, Table 1), validated at construction. Tested
through ``tests/elastic/test_model.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from optsched.core.limits import MAX_AMOUNT, MAX_COUNT, MAX_SLOTS, MAX_WEIGHT, hint
from optsched.core.validation import check_int, check_number
from optsched.elastic.constants import KIND, MAX_CHUNKS, MAX_MS
from optsched.exceptions import InvalidInstanceError


@dataclass(frozen=True)
class ElasticJob:
    """One training job (Sec. 3, Table 1).

    Parameters
    ----------
    id : int or str
    epochs, chunks, minibatches : int
        E_j, D_j (data chunks; at most D_j workers), K_j (mini-batches per chunk), all >= 1.
    v : sequence of float
        v_jm, milliseconds per mini-batch on a type-m worker, one per worker type, > 0.
    update : float or sequence of float
        U_j^p per PS type (PS architecture) or U_j (RAR), milliseconds, >= 0.
    grad_mb : float
        pi_j, MB of gradients per worker per mini-batch, >= 0.
    arrival : int
        a_j, slot, >= 0.
    weight : float
        w_j > 0.

    Examples
    --------
    >>> ElasticJob(0, epochs=1, chunks=1, minibatches=100_000, v=[15.0], update=[0.0], grad_mb=1.0).work
    100000
    """

    id: int | str
    epochs: int
    chunks: int
    minibatches: int
    v: tuple[float, ...]
    update: float | tuple[float, ...]
    grad_mb: float
    arrival: int = 0
    weight: float = 1.0

    def __post_init__(self) -> None:
        if isinstance(self.id, bool) or not isinstance(self.id, (int, str)):
            raise InvalidInstanceError(f"The 'id' field of a job must be an integer or a string; got {self.id!r}.")
        o = self.label
        for f, hi, unit in (
            ("epochs", MAX_COUNT, "E_j"),
            ("chunks", MAX_CHUNKS, "D_j, data chunks = most workers"),
            ("minibatches", MAX_COUNT, "K_j"),
        ):
            object.__setattr__(self, f, check_int(getattr(self, f), f, o, lo=1, hi=hi, hint=hint(unit)))
        object.__setattr__(
            self, "arrival", check_int(self.arrival, "arrival", o, lo=0, hi=MAX_SLOTS[KIND], hint=hint("a_j, slot"))
        )
        object.__setattr__(
            self, "weight", check_number(self.weight, "weight", o, lo=0.0, lo_open=True, hi=MAX_WEIGHT, hint=" (w_j)")
        )
        object.__setattr__(
            self, "grad_mb", check_number(self.grad_mb, "grad_mb", o, lo=0.0, hi=MAX_AMOUNT, hint=hint("pi_j, MB"))
        )
        if isinstance(self.v, (str, bytes)) or not isinstance(self.v, Iterable):
            raise InvalidInstanceError(
                f"The 'v' field of {o} must be a list of ms per mini-batch, one per worker type; got {self.v!r}."
            )
        object.__setattr__(
            self,
            "v",
            tuple(
                check_number(x, f"v[{k}]", o, lo=0.0, lo_open=True, hi=MAX_MS, hint=hint("v_jm, ms per mini-batch"))
                for k, x in enumerate(self.v)
            ),
        )
        if isinstance(self.update, (str, bytes)):
            raise InvalidInstanceError(
                f"The 'update' field of {o} must be a number (RAR, U_j) or a list (PS, U_j^p "
                f"per PS type), in ms; got {self.update!r}."
            )
        if isinstance(self.update, Iterable):
            object.__setattr__(
                self,
                "update",
                tuple(
                    check_number(x, f"update[{k}]", o, lo=0.0, hi=MAX_MS, hint=hint("U_j^p, ms"))
                    for k, x in enumerate(self.update)
                ),
            )
        else:
            object.__setattr__(
                self, "update", check_number(self.update, "update", o, lo=0.0, hi=MAX_MS, hint=hint("U_j, ms"))
            )

    @property
    def label(self) -> str:
        return f"job {self.id!r}" if isinstance(self.id, str) else f"job {self.id}"

    @property
    def work(self) -> int:
        """E_j D_j K_j, the mini-batches to train."""
        return self.epochs * self.chunks * self.minibatches

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id,
            "arrival": self.arrival,
            "weight": self.weight,
            "epochs": self.epochs,
            "chunks": self.chunks,
            "minibatches": self.minibatches,
            "v": list(self.v),
            "update": list(self.update) if isinstance(self.update, tuple) else self.update,
            "grad_mb": self.grad_mb,
        }
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], index: int | None = None) -> ElasticJob:
        owner = f"job at index {index}" if index is not None else "job"
        if not isinstance(d, Mapping):
            raise InvalidInstanceError(f"The {owner} must be an object; got {d!r}.")
        need = ("id", "epochs", "chunks", "minibatches", "v", "update", "grad_mb")
        for key in need:
            if key not in d:
                raise InvalidInstanceError(
                    f"The {owner} has no '{key}' field; every elastic job needs {', '.join(need)}."
                )
        unknown = set(d) - set(need) - {"arrival", "weight"}
        if unknown:
            raise InvalidInstanceError(
                f"The {owner} has unknown field(s) {sorted(unknown)}; allowed: {', '.join(need)}, arrival, weight."
            )
        return cls(**dict(d))
