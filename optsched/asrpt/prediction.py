"""Iteration predictors of Sec. IV-C-3: random forest on (group id, user id), mean, median, perfect.

A predictor is fitted on a *history* of finished jobs (rows ``(group, user, iterations)``) and
predicts ñ_i for a new job; a job whose group was never seen is predicted 0 ("we predict 0
iterations for unseen jobs"), except by the perfect predictor. Retraining on a schedule (hourly /
daily in the paper) is the caller's loop: ``fit`` again on the grown history.

Examples
--------
>>> hist = [("a", "u1", 100), ("a", "u1", 120), ("b", "u2", 10)]
>>> p = IterationPredictor("median").fit(hist)
>>> p.predict([("a", "u1"), ("b", "u2"), ("c", "u1")]).tolist()
[110, 10, 0]
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

import numpy as np

from optsched.exceptions import InvalidOptionError

KINDS = ("rf", "mean", "median", "perfect")


class IterationPredictor:
    """Predict training iterations from (group id, user id).

    Parameters
    ----------
    kind : {"rf", "mean", "median", "perfect"}
        ``rf``: scikit-learn ``RandomForestRegressor(n_estimators=100, criterion="squared_error")`` on
        ordinal codes of group and user (the paper's model); ``mean`` / ``median``: of the group's
        history; ``perfect``: the actual iterations (A-SRPT-Perfect; pass them to ``predict``).
    n_estimators : int
        Trees of the forest (paper: 100).
    max_samples : float, optional
        Bootstrap fraction per tree (``0.3`` cuts the 700k-row fit from ~150 s to ~50 s on 2 cores).
    seed : int or None

    References
    ----------
    Luo et al., Sec. IV-C-3 and Fig. 9; L. Breiman, Random Forests (2001).
    """

    def __init__(
        self,
        kind: str = "rf",
        *,
        n_estimators: int = 100,
        max_samples: float | None = None,
        seed: int | None = 0,
        n_jobs: int = 1,
    ):
        if kind not in KINDS:
            raise InvalidOptionError(f"The 'kind' of an IterationPredictor must be one of {KINDS}; got {kind!r}.")
        self.kind = kind
        self.n_estimators = n_estimators
        self.max_samples = max_samples
        self.seed = seed
        self.n_jobs = n_jobs

    def fit(self, history: Iterable[Sequence]) -> IterationPredictor:
        """``history``: rows ``(group, user, iterations)`` of finished jobs."""
        rows = [tuple(r) for r in history]
        for k, r in enumerate(rows):
            if len(r) != 3 or not (isinstance(r[2], (int, np.integer, float)) and r[2] >= 0):
                raise InvalidOptionError(f"History row {k} must be (group, user, iterations >= 0); got {r!r}.")
        self.groups_ = {}
        self.users_ = {}
        by_group: dict = defaultdict(list)
        for g, u, n in rows:
            self.groups_.setdefault(g, len(self.groups_))
            self.users_.setdefault(u, len(self.users_))
            by_group[g].append(float(n))
        self.by_group_ = {g: np.asarray(v) for g, v in by_group.items()}
        self.model_ = None
        if self.kind == "rf" and rows:
            from sklearn.ensemble import RandomForestRegressor

            X = np.array([[self.groups_[g], self.users_[u]] for g, u, _ in rows], dtype=float)
            y = np.array([n for _, _, n in rows], dtype=float)
            self.model_ = RandomForestRegressor(
                n_estimators=self.n_estimators,
                criterion="squared_error",
                max_samples=self.max_samples,
                random_state=self.seed,
                n_jobs=self.n_jobs,
            ).fit(X, y)
        return self

    def predict(self, jobs: Iterable[Sequence], actual: Sequence[int] | None = None) -> np.ndarray:
        """ñ for rows ``(group, user)``; unseen groups get 0. ``actual`` is required by ``perfect``."""
        keys = [tuple(j)[:2] for j in jobs]
        if self.kind == "perfect":
            if actual is None:
                raise InvalidOptionError(
                    "The perfect predictor needs the actual iterations: predict(jobs, actual=...)."
                )
            return np.asarray(actual, dtype=np.int64)
        if not hasattr(self, "groups_"):
            raise InvalidOptionError("Call fit(history) before predict().")
        out = np.zeros(len(keys), dtype=np.int64)
        seen = [k for k, (g, _) in enumerate(keys) if g in self.groups_]
        if not seen:
            return out
        if self.kind == "rf":
            X = np.array([[self.groups_[keys[k][0]], self.users_.get(keys[k][1], -1)] for k in seen], dtype=float)
            out[seen] = np.rint(self.model_.predict(X)).astype(np.int64)
        else:
            f = np.mean if self.kind == "mean" else np.median
            for k in seen:
                out[k] = int(np.rint(f(self.by_group_[keys[k][0]])))
        return out


def average_prediction_error(actual: Sequence[float], predicted: Sequence[float]) -> float:
    """eps_bar = (1/I) sum_i |n_i - ñ_i| (eq. 9).

    >>> average_prediction_error([10, 20], [12, 20])
    1.0
    """
    a, p = np.asarray(actual, float), np.asarray(predicted, float)
    return float(np.abs(a - p).mean()) if len(a) else 0.0


def with_predictions(instance, predictor: IterationPredictor):
    """A copy of ``instance`` whose jobs carry ``predicted_iterations`` from ``predictor`` (fitted)."""
    jobs = instance.jobs
    pred = predictor.predict([(j.group, j.user) for j in jobs], actual=[j.iterations for j in jobs])
    return instance.replace(jobs=tuple(j.replace(predicted_iterations=int(p)) for j, p in zip(jobs, pred, strict=True)))
