"""The restricted master LP of column generation (:func:`optsched.elastic.lp.column_generation`), in
two interchangeable forms: :class:`HighspyMaster` keeps one highspy model and appends each new column
(HiGHS re-solves from the previous basis), :class:`PyomoMaster` rebuilds the Pyomo LP of (8) on the
current columns at each solve. Both answer ``solve(time_limit) -> (ok, value, u, delta, x)``: the
duals of (8b) and of the capacity rows (t, h, r). Tested through ``tests/elastic/test_lp.py`` (both
masters give the same values).
"""

from __future__ import annotations

import warnings

import numpy as np

from optsched.core.result import Status
from optsched.elastic.formulation import ColumnSet, build_lp8
from optsched.elastic.gamma import Column
from optsched.elastic.model import ElasticInstance
from optsched.exceptions import SolverLimitWarning
from optsched.solvers import SolveOptions, solve_pyomo


class HighspyMaster:
    """The restricted master in highspy: rows (8b) for each job, then (8a) for each (t, h, r)."""

    def __init__(self, instance: ElasticInstance, T: int, options: SolveOptions) -> None:
        import highspy  # deferred: HiGHS loads only when a master is built

        self.hs = highspy
        self.instance, self.T = instance, T
        H, R, J = instance.H, instance.R, instance.n_jobs
        self.h = highspy.Highs()
        self.h.setOptionValue("output_flag", bool(options.verbose))
        self.h.setOptionValue("threads", int(options.threads or 1))
        self.h.setOptionValue("random_seed", int(options.seed))
        self.h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        n = J + T * H * R
        upper = np.concatenate([np.ones(J), np.tile(np.asarray(instance.C, dtype=float).reshape(-1), T)])
        self.h.addRows(
            n,
            np.full(n, -highspy.kHighsInf),
            upper,
            0,
            np.zeros(n, dtype=np.int32),
            np.zeros(0, dtype=np.int32),
            np.zeros(0),
        )
        self.n_cols = 0

    def row(self, t: int, h: int, r: int) -> int:
        inst = self.instance
        return inst.n_jobs + (t * inst.H + h) * inst.R + r

    def add(self, c: Column) -> None:
        idx, val = [c.j], [1.0]
        for h, vec in c.config.use:
            for r, f in enumerate(vec):
                if f > 0:
                    for t in range(c.start, c.end):
                        idx.append(self.row(t, h, r))
                        val.append(float(f))
        w = float(self.instance.jobs[c.j].weight)
        self.h.addCol(
            w, 0.0, self.hs.kHighsInf, len(idx), np.asarray(idx, dtype=np.int32), np.asarray(val, dtype=float)
        )
        self.n_cols += 1

    def solve(self, time_limit: float | None) -> tuple[bool, float, np.ndarray, np.ndarray, np.ndarray]:
        if time_limit is not None:
            self.h.setOptionValue("time_limit", max(0.01, float(time_limit)))
        self.h.run()
        ok = self.h.getModelStatus() == self.hs.HighsModelStatus.kOptimal
        sol = self.h.getSolution()
        dual = np.asarray(sol.row_dual, dtype=float)
        inst = self.instance
        u = dual[: inst.n_jobs].copy()
        delta = dual[inst.n_jobs :].reshape(self.T, inst.H, inst.R).copy()
        x = np.asarray(sol.col_value, dtype=float)
        return ok, float(self.h.getInfo().objective_function_value), u, delta, x


class PyomoMaster:
    """The restricted master rebuilt in Pyomo (build_lp8 on the current columns) at each solve."""

    def __init__(self, instance: ElasticInstance, T: int, options: SolveOptions) -> None:
        self.instance, self.T, self.options = instance, T, options
        self.cols: list[Column] = []

    def add(self, c: Column) -> None:
        self.cols.append(c)

    def solve(self, time_limit: float | None) -> tuple[bool, float, np.ndarray, np.ndarray, np.ndarray]:
        import pyomo.environ as pyo  # deferred: Pyomo is heavy

        inst = self.instance
        by_job: list[list[int]] = [[] for _ in range(inst.n_jobs)]
        rows: dict[tuple[int, int, int], list[tuple[int, float]]] = {}
        for k, c in enumerate(self.cols):
            by_job[c.j].append(k)
            for h, vec in c.config.use:
                for r, f in enumerate(vec):
                    if f > 0:
                        for t in range(c.start, c.end):
                            rows.setdefault((h, r, t), []).append((k, f))
        cs = ColumnSet(list(self.cols), by_job, rows, "max", self.T, False)
        m = build_lp8(inst, tau=self.T, cs=cs)
        m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        opts = self.options.replace(duals=True, time_limit=time_limit)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SolverLimitWarning)
            sr = solve_pyomo(m, "highs", opts)
        ok = sr.status == Status.OPTIMAL
        u = np.zeros(inst.n_jobs)
        delta = np.zeros((self.T, inst.H, inst.R))
        if ok:
            for j in m.at_most_one_schedule:
                u[j] = float(m.dual.get(m.at_most_one_schedule[j], 0.0))
            for h, r, t in m.ROWS:
                delta[t, h, r] = float(m.dual.get(m.capacity[h, r, t], 0.0))
        x = np.asarray([m.x[k].value or 0.0 for k in range(len(self.cols))], dtype=float)
        return ok, float(sr.objective or 0.0), u, delta, x
