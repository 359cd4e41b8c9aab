"""Engine workers over MQTT with TLS, end to end: a Mosquitto TLS listener that
requires client certificates (made by trustme), `livegain worker` processes and
`livegain analyze --broker mqtts://...` with the CA and client certificate
options; the report equals the local one. A worker without a client
certificate is refused by the broker and says so."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme
from brokers import BrokerTls, PrivateBroker

from .test_remote_workers import REPO, _analyze_json, workers

pytestmark = [pytest.mark.engine, pytest.mark.broker, pytest.mark.slow]


@pytest.fixture
def tls_broker(
    private_broker: PrivateBroker, tmp_path: Path
) -> Iterator[tuple[PrivateBroker, Path]]:
    """A broker with a TLS listener requiring client certificates; the PKI's folder."""
    ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1", "localhost")
    client = ca.issue_cert("engine-worker.example")
    d = tmp_path / "pki"
    d.mkdir()
    ca.cert_pem.write_to_path(str(d / "ca.pem"))
    server.cert_chain_pems[0].write_to_path(str(d / "server.pem"))
    server.private_key_pem.write_to_path(str(d / "server.key"))
    client.cert_chain_pems[0].write_to_path(str(d / "client.pem"))
    client.private_key_pem.write_to_path(str(d / "client.key"))
    private_broker.stop()
    broker = PrivateBroker(
        tmp_path / "tls-broker",
        BrokerTls(d / "ca.pem", d / "server.pem", d / "server.key", require_certificate=True),
    )
    broker.start()
    try:
        yield broker, d
    finally:
        broker.stop()


def tls_args(pki: Path) -> tuple[str, ...]:
    return (
        "--ca-file",
        str(pki / "ca.pem"),
        "--cert-file",
        str(pki / "client.pem"),
        "--key-file",
        str(pki / "client.key"),
    )


async def test_workers_and_analyze_over_mqtts_give_the_local_report(
    stockfish: str, tls_broker: tuple[PrivateBroker, Path], tmp_path: Path
) -> None:
    broker, pki = tls_broker
    local_json = await asyncio.to_thread(_analyze_json, "--engine", stockfish)
    with workers(tmp_path, broker.tls_url) as w:
        w.start("tls-1", depth=8, engine=stockfish, extra=tls_args(pki))
        w.start("tls-2", depth=8, engine=stockfish, extra=tls_args(pki))
        remote_json = await asyncio.to_thread(
            _analyze_json, "--broker", broker.tls_url, *tls_args(pki)
        )
        assert w.procs["tls-1"].poll() is None and w.procs["tls-2"].poll() is None
    assert remote_json == local_json


def test_a_worker_without_a_client_certificate_is_refused(
    stockfish: str, tls_broker: tuple[PrivateBroker, Path]
) -> None:
    broker, pki = tls_broker
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "livegain.cli",
            "analyze",
            str(REPO / "livegain" / "data" / "game_of_the_century.pgn"),
            "--depth",
            "8",
            "--broker",
            broker.tls_url,
            "--ca-file",
            str(pki / "ca.pem"),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert out.returncode != 0
    assert "engine workers" in out.stderr or "broker" in out.stderr.lower(), out.stderr
    assert "Traceback" not in out.stderr
