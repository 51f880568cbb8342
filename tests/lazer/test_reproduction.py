"""The reproduction's quick run (slow: ~40 s)."""

import pytest


@pytest.mark.slow
def test_quick_reproduction_tables():
    from optsched.experiments.lazer.study import run

    tabs = {}
    run(lambda name, df: tabs.__setitem__(name, df), quick=True)
    assert {"table2_512", "table2", "fig3", "deferral", "testbed", "fig8e", "base_sweep"} <= set(tabs)
    assert tabs["table2"]["ours_w95_le_jct95"].all()  # (1): W <= JCT for every job, so for P95 too
    assert not tabs["table2"]["paper_w95_le_jct95"].all()  # the printed Table 2 violates it
    t2 = tabs["table2"].set_index("policy")
    assert t2.loc["Muri (360 s)", "futile_p95"] == 0 and t2.loc["Optimus (600 s)", "futile_p95"] == 0


def test_paper_table2_has_16_of_18_inconsistent_cells():
    from optsched.experiments.lazer.study import PAPER_TABLE2

    bad = sum(w[1] > j[1] for tr in PAPER_TABLE2.values() for j, w in zip(tr["jct"], tr["waiting"], strict=True))
    assert bad == 16
    ok_in_seconds = all(
        w[1] / 60 <= j[1] for tr in PAPER_TABLE2.values() for j, w in zip(tr["jct"], tr["waiting"], strict=True)
    )
    assert ok_in_seconds
