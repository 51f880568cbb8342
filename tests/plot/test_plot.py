"""optsched.plot: Gantt and usage figures (Agg backend), and the usage numbers behind them
checked against the verifier's own usage profile."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import optsched
from optsched.core import Schedule
from optsched.plot import plot_schedule, plot_usage, usage_steps
from optsched.plot.files import png_text_size
from optsched.plot.occupancy import cluster_shape
from optsched.plot.style import (
    DPI,
    MIN_SHOWN_PT,
    NOTEBOOK_DPI,
    NOTEBOOK_WIDTH_PX,
    PAGE_WIDTH_PX,
    shown_scale,
    too_small,
)
from optsched.rigid import list_schedule
from optsched.verify import usage_profile
from tests.strategies import rigid_instances


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@settings(max_examples=25, deadline=None)
@given(rigid_instances(max_jobs=6))
def test_usage_steps_match_the_verifier_and_respect_capacity(inst):
    sched = list_schedule(inst, rule="wspt").schedule
    t, u = usage_steps(sched, inst.cluster.n_servers)
    vt, vu = usage_profile(inst, sched)
    for k, x in enumerate(t):  # the verifier's step value at every change point of ours
        i = np.searchsorted(vt, x, side="right") - 1
        ref = vu[i] if 0 <= i < len(vu) else np.zeros(inst.cluster.n_servers)
        assert np.allclose(u[k], ref), (x, u[k], ref)
    assert (u <= np.asarray(inst.cluster.gpus)[None, :]).all() and (u[-1] == 0).all()


@pytest.mark.parametrize("name", ["rigid-2x2-five", "rigid-3x2-single"])
def test_gantt_draws_one_bar_per_gpu_of_every_segment(name, tmp_path):
    inst = optsched.load_instance(optsched.toy_path(name))
    sched = list_schedule(inst).schedule
    ax = plot_schedule(sched, inst, title=name)
    bars = ax.collections
    assert len(bars) == sum(s.gpus for _, segs in sched.items() for s in segs)
    assert all(tuple(np.round(b.get_edgecolor()[0][:3], 3)) != (1.0, 0.0, 0.0) for b in bars)  # nothing over capacity
    assert [t.get_text() for t in ax.get_yticklabels()] == [f"server {i}" for i in range(inst.cluster.n_servers)]
    ax.figure.savefig(tmp_path / "g.png")
    assert (tmp_path / "g.png").stat().st_size > 1000


def test_over_capacity_is_drawn_red_not_hidden():
    from optsched.core import Cluster

    s = Schedule()
    s.add("a", 0, 2, {0: 2})
    s.add("b", 1, 3, {0: 1})  # a 2-GPU server holds 3 GPUs at t in [1, 2)
    ax = plot_schedule(s, Cluster.homogeneous(1, 2))
    reds = [b for b in ax.collections if tuple(np.round(b.get_edgecolor()[0][:3], 3)) == (1.0, 0.0, 0.0)]
    assert len(reds) == 1


def test_usage_plot_lines_capacities_and_file(tmp_path):
    inst = optsched.load_instance(optsched.toy_path("rigid-2x2-five"))
    r = optsched.solve(inst)
    fig, (a1, a2) = plt.subplots(2, 1)
    plot_schedule(r.schedule, inst, ax=a1)
    ax = plot_usage(r.schedule, inst, ax=a2, title="usage")
    steps = [ln for ln in ax.get_lines() if ln.get_label().startswith("server")]
    assert len(steps) == inst.cluster.n_servers
    assert max(max(ln.get_ydata()) for ln in steps) <= max(inst.cluster.gpus)
    fig.savefig(tmp_path / "u.svg")
    assert (tmp_path / "u.svg").read_text().startswith("<?xml")


def test_other_kinds_and_empty_schedule():
    from optsched.asrpt import toy_instance
    from optsched.asrpt.exact import best_heuristic

    inst = toy_instance()
    ax = plot_schedule(best_heuristic(inst), inst)
    assert len(ax.collections) > 0
    t, u = usage_steps(Schedule())
    assert len(t) == 0 and u.shape == (0, 1)
    plot_usage(Schedule())


@settings(max_examples=25, deadline=None)
@given(rigid_instances(max_jobs=6))
def test_cluster_shape_is_the_cluster_or_the_most_gpus_held(inst):
    sched = list_schedule(inst, rule="wspt").schedule
    assert cluster_shape(sched, inst) == (inst.cluster.n_servers, list(inst.cluster.gpus))
    assert cluster_shape(sched, inst.cluster) == (inst.cluster.n_servers, list(inst.cluster.gpus))
    n, cap = cluster_shape(sched, None)  # unknown cluster: nothing drawn is over capacity
    _, use = usage_steps(sched)
    assert n == use.shape[1] and cap == [max(1, int(x)) for x in use.max(axis=0)]
    assert all(c <= g for c, g in zip(cap, inst.cluster.gpus, strict=False))
    assert cluster_shape(Schedule(), None) == (1, [1])


#: Where optsched's pictures are shown: a file on a page of the site, a notebook's inline output.
SHOWN_AT = {
    "page": {"dpi": DPI, "column_px": PAGE_WIDTH_PX},
    "notebook": {"dpi": NOTEBOOK_DPI, "column_px": NOTEBOOK_WIDTH_PX},
}


@settings(max_examples=8, deadline=None)
@given(inst=rigid_instances(max_jobs=6), titled=st.booleans())
def test_every_plotting_function_shows_its_texts_at_9_points_or_more(inst, titled):
    """plot_schedule and plot_usage on their own figure, shown at a page's and a notebook's
    width: no tick, label, legend, title or job name below 9 pt (optsched.plot.style)."""
    sched = list_schedule(inst, rule="wspt").schedule
    for draw in (plot_schedule, plot_usage):
        ax = draw(sched, inst, title="a title" if titled else None)
        for where, shown in SHOWN_AT.items():
            assert too_small(ax.figure, **shown) == [], (draw.__name__, where)
        plt.close(ax.figure)


def test_the_gantt_file_of_verify_plot_shows_its_texts_at_9_points_or_more(tmp_path):
    """The picture ``optsched verify --plot`` writes, read back from the PNG as the gallery's
    build check reads it."""
    from optsched.commands._plot import write_gantt

    inst = optsched.load_instance(optsched.toy_path("rigid-2x2-five"))
    png = next(
        p for p in write_gantt(inst, list_schedule(inst).schedule, tmp_path / "g", title="t") if p.suffix == ".png"
    )
    size, dpi, width = png_text_size(png)
    assert size is not None and size * shown_scale(width / dpi, dpi=dpi) >= MIN_SHOWN_PT


def test_the_other_plotting_functions_show_their_texts_at_9_points_or_more_at_their_default_size():
    """SimResult.plot_cdf / plot_utilization and plot_rank_vs_n, on their own figure, shown inline
    in a notebook and as a file on a page."""
    import pandas as pd

    from optsched.core import Cluster, Job
    from optsched.experiments.sojourn import plot_rank_vs_n
    from optsched.sim import simulate

    jobs = [Job(id=str(i), arrival=float(i), work=10.0 + i, gpus=1 + i % 2) for i in range(8)]
    res = simulate(Cluster.homogeneous(2, 2), jobs, "srtf")
    ranks = pd.DataFrame(
        {"set": [1, 1, 5, 5], "N": [3, 6, 3, 6], "rank_ratio_mean": [1.1, 1.05, 1.2, 1.1]}
        | {"ci_lo": [1.05, 1.0, 1.1, 1.05], "ci_hi": [1.2, 1.1, 1.3, 1.2]}
    )
    for name, ax in (
        ("plot_cdf", res.plot_cdf()),
        ("plot_utilization", res.plot_utilization()),
        ("plot_rank_vs_n", plot_rank_vs_n(ranks)),
    ):
        for where, shown in SHOWN_AT.items():
            assert too_small(ax.figure, **shown) == [], (name, where)
        plt.close(ax.figure)
