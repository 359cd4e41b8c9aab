"""MQTT over TLS with a private CA and client certificates: the ingest feed and
the publisher against a real Mosquitto TLS listener (certificates made by trustme)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import aiomqtt
import pytest
import trustme
from brokers import BrokerTls, PrivateBroker

from livegain.config import MqttPublishConfig
from livegain.feeds.base import MqttFeedConfig
from livegain.feeds.mqtt import MqttFeed
from livegain.feeds.mqtt_ingest import move_event
from livegain.mqtt.address import parse_mqtt_url
from livegain.mqtt.client import connect
from livegain.publish.mqtt import MqttPublisher

from .conftest import RecordingSink, cancel, run_feed

pytestmark = [pytest.mark.broker, pytest.mark.timeout(60)]


@dataclass
class Pki:
    ca: Path
    client_cert: Path
    client_key: Path
    stranger_cert: Path  # a client certificate from another CA
    stranger_key: Path


@pytest.fixture
def tls_broker(
    private_broker: PrivateBroker, tmp_path: Path
) -> Iterator[tuple[PrivateBroker, Pki]]:
    """A Mosquitto with a TLS listener that demands a client certificate from our CA.

    Built on ``private_broker`` (its fixture says whether Mosquitto is there);
    that broker is stopped and a TLS-enabled one started in its place.
    """
    ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1", "localhost")
    client = ca.issue_cert("livegain-client.example")
    other = trustme.CA().issue_cert("intruder.example")
    d = tmp_path / "pki"
    d.mkdir()
    ca.cert_pem.write_to_path(str(d / "ca.pem"))
    server.cert_chain_pems[0].write_to_path(str(d / "server.pem"))
    server.private_key_pem.write_to_path(str(d / "server.key"))
    client.cert_chain_pems[0].write_to_path(str(d / "client.pem"))
    client.private_key_pem.write_to_path(str(d / "client.key"))
    other.cert_chain_pems[0].write_to_path(str(d / "other.pem"))
    other.private_key_pem.write_to_path(str(d / "other.key"))
    private_broker.stop()
    broker = PrivateBroker(
        tmp_path / "tls-broker", BrokerTls(d / "ca.pem", d / "server.pem", d / "server.key")
    )
    broker.start()
    try:
        yield (
            broker,
            Pki(d / "ca.pem", d / "client.pem", d / "client.key", d / "other.pem", d / "other.key"),
        )
    finally:
        broker.stop()


async def test_feed_reads_moves_over_tls_with_a_client_certificate(
    tls_broker: tuple[PrivateBroker, Pki], sink: RecordingSink, unique: str
) -> None:
    broker, pki = tls_broker
    files = {
        "ca_file": str(pki.ca),
        "cert_file": str(pki.client_cert),
        "key_file": str(pki.client_key),
    }
    cfg = MqttFeedConfig(
        url=broker.tls_url, topic=f"tls/{unique}/#", client_id=f"lg-tls-{unique}", **files
    )
    feed = MqttFeed(cfg)
    task = await run_feed(feed, sink)
    try:
        await asyncio.wait_for(feed.subscribed.wait(), 10)
        addr = parse_mqtt_url(broker.tls_url, **files)
        async with connect(addr) as pub:
            for ply, san in enumerate(["e4", "e5", "Nf3"], start=1):
                await pub.publish(f"tls/{unique}/1/1", move_event(ply, ply, san), qos=1)
        await sink.wait_for(lambda: bool(sink.snapshots) and len(sink.snapshots[-1].moves) == 3)
        assert sink.snapshots[-1].moves == ("e4", "e5", "Nf3")
        assert feed.status()["broker"] == f"mqtts://127.0.0.1:{broker.tls_port}"
    finally:
        await cancel(task)


async def test_tls_refuses_a_client_without_our_certificate(
    tls_broker: tuple[PrivateBroker, Pki], sink: RecordingSink
) -> None:
    broker, pki = tls_broker
    # no client certificate: the broker demands one
    bare = parse_mqtt_url(broker.tls_url, ca_file=str(pki.ca))
    with pytest.raises(aiomqtt.MqttError):
        async with connect(bare, timeout=3):
            pass
    # a certificate from another CA
    cfg = MqttFeedConfig(
        url=broker.tls_url,
        client_id="lg-tls-stranger",
        ca_file=str(pki.ca),
        cert_file=str(pki.stranger_cert),
        key_file=str(pki.stranger_key),
    )
    feed = MqttFeed(cfg, reconnect_delays=(0.1,))
    task = await run_feed(feed, sink)
    try:
        # TLS 1.3: the broker's alert comes after the handshake, so the refused
        # connection ends in the connect timeout (10 s)
        await sink.wait_for(lambda: len(sink.errors) >= 1, within=30)
    finally:
        await cancel(task)
    assert feed.connections == 0
    assert all("broker connection" in e[2] for e in sink.errors)
    # and the broker is not trusted without our CA (system CAs do not know it)
    with pytest.raises(aiomqtt.MqttError):
        addr = parse_mqtt_url(
            broker.tls_url, cert_file=str(pki.client_cert), key_file=str(pki.client_key)
        )
        async with connect(addr, timeout=3):
            pass


async def test_unreadable_tls_file_is_reported_naming_it(
    sink: RecordingSink, tmp_path: Path
) -> None:
    missing = tmp_path / "nope.pem"
    feed = MqttFeed(
        MqttFeedConfig(url="mqtts://127.0.0.1:1", client_id="lg-x", ca_file=str(missing)),
        reconnect_delays=(0.05,),
    )
    task = await run_feed(feed, sink)
    try:
        await sink.wait_for(lambda: len(sink.errors) >= 1)
    finally:
        await cancel(task)
    assert "broker settings" in sink.errors[0][2] and str(missing) in sink.errors[0][2]


async def test_publisher_publishes_over_tls(
    tls_broker: tuple[PrivateBroker, Pki], unique: str
) -> None:
    broker, pki = tls_broker
    files = {
        "ca_file": str(pki.ca),
        "cert_file": str(pki.client_cert),
        "key_file": str(pki.client_key),
    }
    cfg = MqttPublishConfig(enabled=True, url=broker.tls_url, prefix=f"out/{unique}", **files)
    publisher = MqttPublisher.from_config(cfg)
    assert publisher.broker.tls and publisher.client_id.startswith("livegain-pub-")
    addr = parse_mqtt_url(broker.tls_url, **files)
    body = json.dumps({"type": "snapshot", "state": {"board_id": "b1"}}).encode()
    async with connect(addr) as sub:
        await sub.subscribe(f"out/{unique}/b1/state", qos=1)
        runner = asyncio.create_task(publisher.run())
        try:
            publisher.publish_state("b1", body)
            async with asyncio.timeout(15):
                async for msg in sub.messages:
                    assert msg.payload == body
                    break
            assert publisher.stats.connected and publisher.stats.failures == 0
        finally:
            runner.cancel()
            await asyncio.gather(runner, return_exceptions=True)
        await sub.publish(f"out/{unique}/b1/state", b"", retain=True)
