"""Item 10's real-trace path: PAI 2020 tables in their official (headerless CSV) format ->
optsched.traces.load_pai -> the A-SRPT reproduction's instance builder -> every policy, verified."""

from __future__ import annotations

import numpy as np

from optsched.experiments.asrpt.repro import build_instance, run_policies
from optsched.traces import load_pai


def _write_pai(tmp_path, n=60, seed=0):
    rng = np.random.default_rng(seed)
    jobs, tasks, groups = [], [], []
    t = 1_700_000.0
    for i in range(n):
        job, inst = f"job{i:04d}", f"inst{i:04d}"
        user, group = f"u{i % 5}", f"g{i % 7}"
        gpus = int(rng.choice([1, 1, 1, 2, 4]))
        t += float(rng.exponential(30.0))
        dur = float(rng.integers(60, 600))
        jobs.append(f"{job},{inst},{user},Terminated,{t},{t + 5 + dur}")
        tasks.append(f"{job},worker,{gpus},Terminated,{t + 5},{t + 5 + dur},600.0,29.3,100.0,V100")
        groups.append(f"{inst},{user},V100,{group},bert")
    for name, rows in (("pai_job_table.csv", jobs), ("pai_task_table.csv", tasks), ("pai_group_tag_table.csv", groups)):
        (tmp_path / name).write_text("\n".join(rows) + "\n")
    return [tmp_path / n for n in ("pai_job_table.csv", "pai_task_table.csv", "pai_group_tag_table.csv")]


def test_pai_tables_to_asrpt_policies(tmp_path):
    jp, tp, gp = _write_pai(tmp_path)
    table = load_pai(jp, tp, gp)
    assert len(table) == 60 and table["group"].notna().all()
    inst, eps = build_instance(table, n_servers=2, gpus=4, seed=0)
    assert inst.n_jobs == 12  # the last 20 % are scheduled, the first 80 % train the predictor
    assert np.isfinite(eps) and eps >= 0
    res = run_policies(inst, tau=1.0)
    assert "A-SRPT" in res and len(res) >= 2
    assert all(np.isfinite(v) and v > 0 for v in res.values())
    # and the A-SRPT run on this trace-built instance passes the independent verifier
    from optsched.asrpt.policy import simulate_asrpt
    from optsched.verify import verify

    rep = verify(inst, simulate_asrpt(inst, tau=1.0).schedule())
    assert rep.ok, rep.summary()
