"""A --dask address where no Dask scheduler answers is named as such at once (exit 2), whatever is
there: nothing, a web server (the Dask dashboard), a service that closes the connection, or one
that answers other bytes (which Dask's client read as a message size: "out of memory"). Every
server here is a plain local TCP server on 127.0.0.1."""

from __future__ import annotations

import http.server
import socket
import threading

import pytest

from optsched.cli import main
from optsched.exceptions import InvalidOptionError
from optsched.experiments.compare.executors import check_dask_scheduler

SMALL = ["compare", "--trace", "synthetic", "--jobs", "40", "--servers", "2", "--max-duration", "3600"]


class _Server:
    """A loopback TCP server whose each connection gets ``answer`` (bytes, then close) or is closed at once."""

    def __init__(self, answer: bytes | None) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.address = f"tcp://127.0.0.1:{self.sock.getsockname()[1]}"
        self.answer = answer
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                if self.answer:
                    conn.sendall(self.answer)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def http_server():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"tcp://127.0.0.1:{srv.server_address[1]}"
    srv.server_close()  # not shutdown(): it waits forever for a serve_forever that has not begun yet


def test_a_web_server_is_not_a_dask_scheduler(http_server, capsys):
    code = main([*SMALL, "--dask", http_server])
    err = capsys.readouterr().err
    assert code == 2
    assert f"No Dask scheduler at --dask {http_server!r}" in err and "said nothing" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "answer, why",
    [
        (None, "closed the connection"),
        (b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", "not Dask's handshake"),
        (b"\xff" * 64, "not Dask's handshake"),  # a "size" of 2**64 - 1: Dask's client would try to allocate it
    ],
)
def test_a_service_that_closes_or_answers_other_bytes_is_not_a_dask_scheduler(answer, why, capsys):
    srv = _Server(answer)
    try:
        with pytest.raises(InvalidOptionError, match="No Dask scheduler at") as e:
            check_dask_scheduler(srv.address, timeout=30)
        assert why in str(e.value)
        assert main([*SMALL, "--dask", srv.address]) == 2
        assert why in capsys.readouterr().err
    finally:
        srv.close()


def test_a_closed_port_and_a_malformed_address_are_named():
    s = socket.create_server(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    with pytest.raises(InvalidOptionError, match=r"No Dask scheduler at .*refused"):
        check_dask_scheduler(f"tcp://127.0.0.1:{port}")
    for bad in ("tcp://127.0.0.1", "127.0.0.1:99999", "tcp://:8786"):
        with pytest.raises(InvalidOptionError, match="host:port"):
            check_dask_scheduler(bad)


def test_the_sweep_checks_its_scheduler_address_the_same_way(http_server, monkeypatch):
    from optsched.experiments import sweep as sweep_mod

    monkeypatch.setattr(sweep_mod, "check_dask_scheduler", lambda a: check_dask_scheduler(a, timeout=0.5))
    with pytest.raises(InvalidOptionError, match="No Dask scheduler at"):
        sweep_mod.sweep(dict, [{"n": 1}], executor="dask", scheduler_address=http_server, progress=False)


def test_a_dask_scheduler_passes_the_check():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=0, processes=False, protocol="tcp", host="127.0.0.1", dashboard_address=None
    )
    try:
        check_dask_scheduler(cluster.scheduler_address)  # no error
    finally:
        cluster.close()
