"""optsched.core.cluster: servers and clusters, their forms and errors."""

from __future__ import annotations

import pytest

from optsched.core import Cluster, Server
from optsched.core.units import gbit_per_s
from optsched.exceptions import InvalidInstanceError


def test_cluster_basics():
    c = Cluster.homogeneous(3, 4, bandwidth_inter=gbit_per_s(100))
    assert c.total_gpus == 12 and c.n_servers == 3 and c.max_server_gpus == 4
    assert c.bandwidth_inter == pytest.approx(12.5e9)
    assert list(c.gpus) == [4, 4, 4]


def test_empty_cluster_rejected():
    with pytest.raises(InvalidInstanceError, match="empty"):
        Cluster(())
    with pytest.raises(InvalidInstanceError, match="no GPU"):
        Cluster((Server(0),))


def test_compact_server_form():
    c = Cluster.from_dict({"servers": {"count": 3, "gpus": 8}})
    assert c.total_gpus == 24
