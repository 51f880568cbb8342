"""Write ``tests/sim/data/regression.json``: seeded workloads and, for FIFO, SJF, SRTF and LAS
under every placement rule, each job's completion time and preemption count.

Run only when a change of decisions is intended (and say why in the commit):
``python -m tests.sim.make_regression_fixture``. ``test_regression.py`` checks the engine against it.
"""

from __future__ import annotations

import json
from pathlib import Path

from optsched.core import Cluster
from optsched.traces import synthetic_workload

PATH = Path(__file__).parent / "data" / "regression.json"
POLICIES = ["fifo", "sjf", "srtf", "las"]
RULES = ["consolidate", "first_fit", "least_loaded", "random", "whole_node"]
CASES = [dict(seed=0, servers=4, gpus=4, n=150, load=1.2), dict(seed=1, servers=6, gpus=8, n=150, load=1.0)]
OPTIONS = {"las": {"quantum": 600.0}}


def workloads():
    for c in CASES:
        cl = Cluster.homogeneous(c["servers"], c["gpus"])
        df = synthetic_workload(
            c["n"], cluster_gpus=cl.total_gpus, load=c["load"], max_duration=6 * 3600.0, seed=c["seed"]
        )
        yield (
            c,
            {
                "arrival": df["arrival"].tolist(),
                "gpus": df["gpus"].astype(int).tolist(),
                "work": df["duration"].tolist(),
            },
        )


def run(case, jobs, policy, rule):
    import pandas as pd

    from optsched.sim import Simulator, get_policy

    cl = Cluster.homogeneous(case["servers"], case["gpus"])
    res = Simulator(
        cl,
        pd.DataFrame(jobs),
        get_policy(policy, placement=rule, **OPTIONS.get(policy, {})),
        seed=case["seed"],
        record_log=False,
    ).run()
    cols = res.job_columns()
    return {
        "completion": [float(x) for x in cols["completion"]],
        "n_preemptions": [int(x) for x in cols["n_preemptions"]],
    }


def main() -> None:
    out = []
    for case, jobs in workloads():
        runs = {f"{p}/{r}": run(case, jobs, p, r) for p in POLICIES for r in RULES}
        out.append({"case": case, "jobs": jobs, "runs": runs})
    PATH.write_text(json.dumps({"about": __doc__.split("\n")[0], "cases": out}, separators=(",", ":")))
    print(f"wrote {PATH} ({PATH.stat().st_size / 1e3:.0f} kB)")


if __name__ == "__main__":
    main()
