"""A mutation check: plausible one-line bugs planted in a copy of optsched, each run against a small
chosen subset of the tests of its area; a mutant is *killed* when that subset fails.

The list :data:`MUTANTS` covers the simulator's rules (R1-R12 of ``formulations/lazer.md``, Python
engine), the verifier (``optsched.verify``), the bounds of each paper and each paper's policy. Every
mutant names the line it changes (``old`` must occur exactly once in its file, so a refactoring
that moves the line shows up as an error, not as a silent survivor). A mutant known to survive says
why in ``note`` (an equivalent mutant, or what no test can see).

How it runs: the worktree's ``optsched/`` (and ``tests/``, or the ``tests/`` of the git ref given
with ``--tests-ref``) are copied into a temporary folder, never edited in place; each mutant is
applied to the copy, its tests run there in a fresh process (``PYTHONPATH`` = the copy,
``OPTSCHED_NO_KERNEL=1``: the Python engine, as the compiled kernel would compile again in a new
folder; hypothesis profile ``ci``: derandomized, so a score is reproducible), and the line is put
back. Before the mutants, each subset of tests must pass on the unmutated copy.

Usage::

    python -m benchmarks.mutation                      # every mutant, the worktree's tests
    python -m benchmarks.mutation --tests-ref main     # the same code, the tests of git ref main
    python -m benchmarks.mutation --only sim-r5-ties-preempt verify-release-tolerance
    python -m benchmarks.mutation --list
    python -m benchmarks.mutation --json benchmarks/results/mutation.json

One test process at a time; a killed mutant costs 5-80 s, a survivor its whole subset (about a
minute). The whole list took 32 minutes on a loaded 2-core machine when 11 of 39 survived, 5 to 8
minutes per area once all but one were killed; ``--area`` runs one area. Tested in
``tests/test_mutation.py`` (the list's lines exist; one mutant killed, slow).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The tests run for each area (a small, fast subset that covers its code).
AREA_TESTS: dict[str, tuple[str, ...]] = {
    "sim": (
        "tests/sim/test_rules.py",
        "tests/sim/test_preemption_repros.py",
        "tests/sim/test_futile.py",
        "tests/sim/test_slotted.py",
        "tests/sim/test_policies.py",
        "tests/sim/test_differential.py",
    ),
    "verify": (
        "tests/verify/test_feasibility.py",
        "tests/verify/test_common_checks.py",
        "tests/verify/test_common_suite.py",
        "tests/verify/test_suite_checks.py",
        "tests/core/test_limits.py",
    ),
    "bounds": (
        "tests/rigid/test_bounds.py",
        "tests/asrpt/test_bounds.py",
        "tests/rarddls/test_bounds.py",
        "tests/sojourn/test_bounds.py",
        "tests/elastic/test_primal_dual.py",
    ),
    "policies": (
        "tests/rigid/test_heuristics.py",
        "tests/elastic/test_baselines.py",
        "tests/elastic/test_primal_dual.py",  # A_online / A_maxweight, the paper's own policy
        "tests/asrpt/test_policy.py",
        "tests/rarddls/test_sjfbco.py",
        "tests/sojourn/test_policies.py",
        "tests/lazer/test_policy.py",
    ),
}


@dataclass(frozen=True)
class Mutant:
    """One planted bug: ``old`` (exactly once in ``path``) becomes ``new``; ``tests`` overrides the
    area's subset; ``note`` says why it survives, when it is known to."""

    name: str
    area: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...] = ()
    note: str = ""


_ENGINE = "optsched/sim/actions.py"
_PRE = "optsched/sim/policies/preemptive.py"
_FEAS = "optsched/verify/feasibility.py"

MUTANTS: list[Mutant] = [
    # -- the simulator's rules (Python engine) --------------------------------------------------------
    Mutant("sim-r1-first-start-overwritten", "sim", _ENGINE, "if j.first_start is None:", "if True:"),
    Mutant("sim-r1-tiny-load-skipped", "sim", _ENGINE, "        if load > 0:\n", "        if load > 1:\n"),
    Mutant(
        "sim-r1-stage-end-times-rate",
        "sim",
        _ENGINE,
        "t = j._t + (j.stages[j.stage] - j._done) / j.rate",
        "t = j._t + (j.stages[j.stage] - j._done) * j.rate",
    ),
    Mutant(
        "sim-r2-finish-load-not-futile",
        "sim",
        _ENGINE,
        "j.n_futile += 1\n            j.n_preemptions",
        "j.n_futile += 0\n            j.n_preemptions",
    ),
    Mutant(
        "sim-r3-timers-before-arrivals",
        "sim",
        "optsched/sim/rules.py",
        "P_STAGE, P_SAVED, P_LOADED, P_ARRIVAL, P_TIMER = 0, 1, 2, 3, 4",
        "P_STAGE, P_SAVED, P_LOADED, P_ARRIVAL, P_TIMER = 0, 1, 2, 4, 3",
    ),
    Mutant(
        "sim-r4-srtf-latest-arrival-first",
        "sim",
        _PRE,
        "return (job.remaining(), job.arrival, job.index)",
        "return (job.remaining(), -job.arrival, job.index)",
    ),
    Mutant(
        "sim-r4-las-gpu-weight-inverted",
        "sim",
        "optsched/sim/rules.py",
        "return attained * gpus if gpu_weighted else attained",
        "return attained * gpus if not gpu_weighted else attained",
    ),
    Mutant(
        "sim-r5-ties-preempt",
        "sim",
        _PRE,
        "if e is None or not (bound < run_value(sim, e[4])):",
        "if e is None or not (bound <= run_value(sim, e[4])):",
    ),
    Mutant(
        "sim-r5-started-now-is-a-victim",
        "sim",
        _PRE,
        "if since.get(v.index) == now:",
        "if since.get(v.index) == now and False:",
        note=(
            "equivalent in the Python engine as far as we can tell: a round takes waiting jobs best first, so a "
            "job it started is never strictly worse than a later candidate; a follow-up round at the same time "
            "only adds GPUs that were already counted as soon-available, so a candidate that could not make room "
            "before cannot now; 4,500 random workloads (python -m tests.sim.test_differential 1500 7 "
            "srtf,srtf-periodic,lazer) show no difference from the reference simulator with it planted"
        ),
    ),
    Mutant(
        "sim-r6-soon-ignores-claims",
        "sim",
        "optsched/sim/rules.py",
        "return free - claimed + saving",
        "return free + saving",
    ),
    Mutant(
        "sim-r6-available-ignores-claims",
        "sim",
        "optsched/sim/rules.py",
        "return free - claimed + own",
        "return free + own",
    ),
    Mutant(
        "sim-r7-claims-not-requeued",
        "sim",
        "optsched/sim/policies/claims.py",
        "            self.queue.push(cl.job, self._wait_key(cl.job))\n",
        "            pass\n",
    ),
    Mutant(
        "sim-r11-one-victim-too-many",
        "sim",
        _PRE,
        "if n_extra - v.gpus >= need:",
        "if n_extra - v.gpus > need:",
    ),
    Mutant(
        "sim-r12-no-backfill-ignored",
        "sim",
        "optsched/sim/policies/baselines.py",
        "strict = not self.backfill",
        "strict = False",
    ),
    Mutant(
        "sim-slot-boundary-rounds-up",
        "sim",
        _ENGINE,
        "k = math.ceil(t / self.slot - 1e-9)",
        "k = math.ceil(t / self.slot + 1e-9)",
    ),
    # -- the verifier -------------------------------------------------------------------------------------
    Mutant("verify-release-tolerance", "verify", _FEAS, "if s < j.arrival - TOL:", "if s < j.arrival - 1.0:"),
    Mutant("verify-demand-fewer-gpus-pass", "verify", _FEAS, "if seg.gpus != j.gpus:", "if seg.gpus > j.gpus:"),
    Mutant(
        "verify-single-server-spans-two",
        "verify",
        _FEAS,
        "if j.single_server and sum(1 for g in seg.placement.values() if g > 0) > 1:",
        "if j.single_server and sum(1 for g in seg.placement.values() if g > 0) > 2:",
    ),
    Mutant("verify-overlap-from-start", "verify", _FEAS, "if b.start < a.end - TOL:", "if b.start < a.start - TOL:"),
    Mutant(
        "verify-capacity-one-gpu-over",
        "verify",
        _FEAS,
        "over: list[int] = list(np.nonzero(use[:, m] > cap[m] + TOL)[0])",
        "over: list[int] = list(np.nonzero(use[:, m] > cap[m] + 1)[0])",
    ),
    Mutant(
        "verify-work-short-runs-pass",
        "verify",
        _FEAS,
        "if abs(done - j.work) > TOL * max(1.0, j.work):",
        "if done - j.work > TOL * max(1.0, j.work):",
    ),
    Mutant(
        "verify-claimed-objective-trusted",
        "verify",
        "optsched/verify/core.py",
        "if claimed is not None and not math.isclose(value, float(claimed), rel_tol=rtol, abs_tol=atol):",
        "if claimed is not None and not math.isclose(value, float(claimed), rel_tol=0.5, abs_tol=atol):",
    ),
    # -- the bounds ---------------------------------------------------------------------------------------
    Mutant(
        "bounds-rigid-area-full-p",
        "bounds",
        "optsched/rigid/bounds.py",
        "mean_busy = sum(w[j] * (busy[j] / q[j] + p[j] / 2) for j in range(n))",
        "mean_busy = sum(w[j] * (busy[j] / q[j] + p[j]) for j in range(n))",
    ),
    Mutant(
        "bounds-rigid-trivial-double-p",
        "bounds",
        "optsched/rigid/bounds.py",
        "trivial = sum(w[j] * (r[j] + p[j]) for j in range(n))",
        "trivial = sum(w[j] * (r[j] + 2 * p[j]) for j in range(n))",
    ),
    Mutant(
        "bounds-asrpt-srpt-by-index",
        "bounds",
        "optsched/asrpt/bounds.py",
        "j = min(active, key=lambda i: (rem[i], i))",
        "j = min(active, key=lambda i: (i, rem[i]))",
    ),
    Mutant(
        "bounds-asrpt-lemma3-sign",
        "bounds",
        "optsched/asrpt/bounds.py",
        "return opt_a1(b) + b.I * b.g_max * b.a_max * b.eps / b.G",
        "return opt_a1(b) - b.I * b.g_max * b.a_max * b.eps / b.G",
    ),
    Mutant(
        "bounds-rarddls-theta-times-u",
        "bounds",
        "optsched/rarddls/sjfbco.py",
        "sum(j.gpus * j.rho_hat for j in instance.jobs) / instance.N) / u",
        "sum(j.gpus * j.rho_hat for j in instance.jobs) / instance.N) * u",
    ),
    Mutant(
        "bounds-sojourn-pairwise-max",
        "bounds",
        "optsched/sojourn/bounds.py",
        "return float(pc.d.sum() + np.minimum(pc.c[iu], pc.c.T[iu]).sum())",
        "return float(pc.d.sum() + np.maximum(pc.c[iu], pc.c.T[iu]).sum())",
    ),
    Mutant(
        "bounds-elastic-ratio-upper-dropped",
        "bounds",
        "optsched/elastic/bounds.py",
        '"holds": bool(ratios) and min(ratios) >= 1 - 1e-12 and max(ratios) <= F + 1e-12,',
        '"holds": bool(ratios) and min(ratios) >= 1 - 1e-12,',
    ),
    # -- each paper's policy ------------------------------------------------------------------------------
    Mutant(
        "policy-rigid-random-ignores-seed",
        "policies",
        "optsched/rigid/heuristics.py",
        "        rng = as_generator(seed)\n        jobs = [jobs[i]",
        "        rng = as_generator(0)\n        jobs = [jobs[i]",
    ),
    Mutant(
        "policy-rigid-wspt-ignores-gpus",
        "policies",
        "optsched/rigid/heuristics.py",
        "jobs.sort(key=lambda j: (-j.weight / (j.gpus * j.work), j.arrival, str(j.id)))",
        "jobs.sort(key=lambda j: (-j.weight / j.work, j.arrival, str(j.id)))",
    ),
    Mutant(
        "policy-elastic-first-start-charged",
        "policies",
        "optsched/elastic/policy_base.py",
        "if job.n_starts <= 1:",
        "if job.n_starts < 1:",
    ),
    Mutant(
        "policy-elastic-prices-linear",
        "policies",
        "optsched/elastic/prices.py",
        "self.delta[sl, h, :] = lam**frac - 1.0",
        "self.delta[sl, h, :] = lam * frac - 1.0",
    ),
    Mutant(
        "policy-asrpt-wait-budget-inverted",
        "policies",
        "optsched/asrpt/online.py",
        "budget = self.tau * g_i / self.G * info.pred * info.a_min",
        "budget = self.tau * self.G / g_i * info.pred * info.a_min",
    ),
    Mutant(
        "policy-rarddls-largest-first",
        "policies",
        "optsched/rarddls/sjfbco.py",
        "    order = sorted(range(instance.n_jobs), key=lambda j: (instance.jobs[j].gpus, j))\n",
        "    order = sorted(range(instance.n_jobs), key=lambda j: (-instance.jobs[j].gpus, j))\n",
    ),
    Mutant(
        "policy-sojourn-rank-descending",
        "policies",
        "optsched/sojourn/policies.py",
        "    keys = [j.rank for j in instance.jobs]\n",
        "    keys = [-j.rank for j in instance.jobs]\n",
    ),
    Mutant(
        "policy-lazer-pstar-min",
        "policies",
        "optsched/lazer/policy.py",
        "p_star = max((sim.save_time(v) for v in victims), default=0.0)",
        "p_star = min((sim.save_time(v) for v in victims), default=0.0)",
    ),
    Mutant(
        "policy-lazer-victims-shortest-first",
        "policies",
        "optsched/lazer/policy.py",
        "cands.append((-rem, -r.arrival, -r.index, r))",
        "cands.append((rem, -r.arrival, -r.index, r))",
    ),
    Mutant(
        "policy-lazer-l3-window-open",
        "policies",
        "optsched/lazer/deferral.py",
        "    while i < n and times[i] <= hi:\n",
        "    while i < n and times[i] < hi:\n",
    ),
]


def check_list(root: Path = ROOT) -> list[str]:
    """Problems of :data:`MUTANTS` against the sources under ``root``: a line not found exactly
    once, an unknown area, a duplicate name, a test file that does not exist."""
    out = []
    names = Counter(m.name for m in MUTANTS)
    out += [f"{n}: the name appears {k} times" for n, k in names.items() if k > 1]
    for m in MUTANTS:
        if m.area not in AREA_TESTS:
            out.append(f"{m.name}: unknown area {m.area!r}")
        text = (root / m.path).read_text()
        if text.count(m.old) != 1:
            out.append(f"{m.name}: {m.old!r} occurs {text.count(m.old)} times in {m.path}")
        out += [f"{m.name}: no test file {t}" for t in m.tests if not (root / t.split("::")[0]).exists()]
    for area, tests in AREA_TESTS.items():
        out += [f"area {area}: no test file {t}" for t in tests if not (root / t.split("::")[0]).exists()]
    return out


def _copy_tree(dest: Path, tests_ref: str | None) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis")
    shutil.copytree(ROOT / "optsched", dest / "optsched", ignore=ignore)
    shutil.copy2(ROOT / "pyproject.toml", dest / "pyproject.toml")
    for folder in ("docs", "formulations"):  # some tests check the code against these pages
        shutil.copytree(ROOT / folder, dest / folder, ignore=ignore)
    if tests_ref is None:
        shutil.copytree(ROOT / "tests", dest / "tests", ignore=ignore)
        return
    blob = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", tests_ref, "tests"], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        tar.extractall(dest, filter="data")


def _pytest(dest: Path, tests: tuple[str, ...], timeout: float) -> tuple[str, float, str]:
    """Run ``tests`` in the copy: ("passed" | "failed" | "timeout", seconds, last output lines)."""
    env = {
        **os.environ,
        "PYTHONPATH": str(dest),
        "OPTSCHED_NO_KERNEL": "1",
        "HYPOTHESIS_PROFILE": "ci",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    env.pop("CI", None)
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-n", "0", "-p", "no:cacheprovider", "-m", "not slow", *tests]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=dest, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.perf_counter() - t0, ""
    tail = "\n".join((p.stdout + p.stderr).strip().splitlines()[-3:])
    # 0: all passed; 5: nothing collected (e.g. every test deselected) counts as passed
    return ("passed" if p.returncode in (0, 5) else "failed"), time.perf_counter() - t0, tail


def run(mutants: list[Mutant], *, tests_ref: str | None, timeout: float, log=print) -> dict:
    """Apply each mutant to a copy and run its tests; a summary dict (per area and per mutant)."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="optsched-mutation-") as tmp:
        dest = Path(tmp)
        _copy_tree(dest, tests_ref)
        for tests in dict.fromkeys(m.tests or AREA_TESTS[m.area] for m in mutants):  # each subset once
            status, secs, tail = _pytest(dest, tests, timeout * 2)
            log(f"[baseline] {' '.join(tests)}: {status} in {secs:.0f} s")
            if status != "passed":
                raise SystemExit(f"The tests {list(tests)} do not pass on the unmutated copy:\n{tail}")
        for m in mutants:
            f = dest / m.path
            original = f.read_text()
            if original.count(m.old) != 1:
                raise SystemExit(f"Mutant {m.name}: {m.old!r} occurs {original.count(m.old)} times in {m.path}.")
            f.write_text(original.replace(m.old, m.new))
            try:
                status, secs, tail = _pytest(dest, m.tests or AREA_TESTS[m.area], timeout)
            finally:
                f.write_text(original)
            killed = status != "passed"
            rows.append({**asdict(m), "killed": killed, "status": status, "seconds": round(secs, 1), "tail": tail})
            log(f"{'killed  ' if killed else 'SURVIVED'} {m.area:9s} {m.name} ({status}, {secs:.0f} s)")
    areas = {}
    for area in sorted({r["area"] for r in rows}):
        rs = [r for r in rows if r["area"] == area]
        areas[area] = {"killed": sum(r["killed"] for r in rs), "total": len(rs)}
    return {
        "tests_ref": tests_ref or "worktree",
        "areas": areas,
        "killed": sum(r["killed"] for r in rows),
        "total": len(rows),
        "mutants": rows,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.mutation", description=__doc__.split("\n\n")[0])
    ap.add_argument("--tests-ref", help="run the tests of this git ref (e.g. main) instead of the worktree's")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="run only these mutants")
    ap.add_argument("--area", choices=sorted(AREA_TESTS), help="run only this area's mutants")
    ap.add_argument("--timeout", type=float, default=240.0, help="seconds per mutant (a timeout counts as killed)")
    ap.add_argument("--list", action="store_true", help="list the mutants and check their lines exist")
    ap.add_argument("--json", type=Path, help="write the summary here")
    a = ap.parse_args(argv)
    problems = check_list()
    if a.list or problems:
        for m in MUTANTS:
            print(f"{m.area:9s} {m.name:40s} {m.path}" + (f"  [{m.note}]" if m.note else ""))
        for p in problems:
            print("PROBLEM:", p)
        return 1 if problems else 0
    chosen = [m for m in MUTANTS if (not a.only or m.name in a.only) and (not a.area or m.area == a.area)]
    unknown = set(a.only or ()) - {m.name for m in MUTANTS}
    if unknown:
        print(f"Unknown mutant(s) {sorted(unknown)}; see --list.", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    out = run(chosen, tests_ref=a.tests_ref, timeout=a.timeout)
    out["seconds"] = round(time.perf_counter() - t0, 1)
    print(f"\nkilled / mutants per area ({'tests of ' + a.tests_ref if a.tests_ref else 'worktree tests'}):")
    for area, s in out["areas"].items():
        print(f"  {area:9s} {s['killed']:3d} / {s['total']}")
    print(f"  {'all':9s} {out['killed']:3d} / {out['total']}   ({out['seconds']:.0f} s)")
    for r in out["mutants"]:
        if not r["killed"]:
            print(f"  survived: {r['name']}" + (f" -- {r['note']}" if r["note"] else " -- no reason recorded"))
    if a.json:
        a.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
