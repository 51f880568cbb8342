"""The Sec. 7 reproduction's tables (quick form of two of them) and the Sec. 1 preset."""

from __future__ import annotations

from optsched.experiments.rarddls import run


def test_slowdown_preset_and_fig7():
    tabs = {}
    run(lambda name, df: tabs.__setitem__(name, df), quick=True, seeds=1, only=("slowdown", "fig7"))
    s = tabs["slowdown"].iloc[0]
    assert s["alone_one_server"] == 295 and s["four_spread"] == 675
    f7 = tabs["fig7"]
    assert list(f7["lambda"]) == [1, 2, 4, 8]
    assert f7["makespan_mean"].notna().all() and {"claim", "reproduced"} <= set(f7.columns)
