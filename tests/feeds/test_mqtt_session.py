"""Client ids: each ingest has its own by default, kept in its data directory so
that the broker's persistent session (QoS 1 messages kept while we are away)
survives our restart; a second instance does not take the session over."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from livegain.feeds.base import MqttFeedConfig, RestorableFeed
from livegain.feeds.mqtt import MqttFeed
from livegain.feeds.mqtt_ingest import move_event
from livegain.mqtt.client import connect

from .conftest import PrivateBroker, RecordingSink, cancel, run_feed

pytestmark = [pytest.mark.broker, pytest.mark.timeout(60)]

GAME = ["d4", "Nf6", "c4", "e6", "Nc3", "Bb4", "e3", "O-O", "Bd3", "d5", "Nf3", "c5"]


def service_feed(url: str, topic: str, data_dir: Path) -> MqttFeed:
    """A feed as the service builds it: default client id, restored from its data_dir."""
    feed = MqttFeed(MqttFeedConfig(url=url, topic=topic, session_expiry=120))
    assert isinstance(feed, RestorableFeed)  # the service restores it before run()
    feed.restore([], data_dir)
    return feed


async def test_two_instances_with_default_ids_do_not_take_each_other_over(
    private_broker: PrivateBroker, unique: str, tmp_path: Path
) -> None:
    url, topic = private_broker.url, f"in/{unique}/1/1"
    feeds = [service_feed(url, f"in/{unique}/#", tmp_path / name) for name in ("a", "b")]
    sinks = [RecordingSink(), RecordingSink()]
    tasks = [await run_feed(f, s) for f, s in zip(feeds, sinks, strict=True)]
    try:
        for f in feeds:
            await asyncio.wait_for(f.subscribed.wait(), 10)
        async with connect(url) as pub:
            for ply, san in enumerate(GAME, start=1):
                await pub.publish(topic, move_event(ply, ply, san), qos=1)
                await asyncio.sleep(0.1)  # over a second: room for takeovers to show
        for s in sinks:
            await s.wait_for(lambda s=s: bool(s.snapshots) and s.snapshots[-1].moves == tuple(GAME))
        assert feeds[0].client_id != feeds[1].client_id
        # neither was ever disconnected by the other: one connection each, no errors
        assert [f.connections for f in feeds] == [1, 1]
        assert sinks[0].errors == [] and sinks[1].errors == []
    finally:
        for t in tasks:
            await cancel(t)


async def test_the_generated_id_is_kept_with_the_data_and_the_session_with_it(
    private_broker: PrivateBroker, unique: str, tmp_path: Path, sink: RecordingSink
) -> None:
    url, topic = private_broker.url, f"in/{unique}/1/1"
    data_dir = tmp_path / "data"
    first = service_feed(url, f"in/{unique}/#", data_dir)
    assert first.client_id is not None and first.client_id.startswith("livegain-ingest-")
    task = await run_feed(first, sink)
    async with connect(url) as pub:
        try:
            await asyncio.wait_for(first.subscribed.wait(), 10)
            for ply in range(1, 5):
                await pub.publish(topic, move_event(ply, ply, GAME[ply - 1]), qos=1)
            await sink.wait_for(
                lambda: len(sink.snapshots[-1].moves) == 4 if sink.snapshots else False
            )
        finally:
            await cancel(task)
        for ply in range(5, 9):  # while no instance runs: the broker keeps them for the session
            await pub.publish(topic, move_event(ply, ply, GAME[ply - 1]), qos=1)
    stored = [sink.snapshots[-1]]  # what the service's store holds
    second = MqttFeed(MqttFeedConfig(url=url, topic=f"in/{unique}/#", session_expiry=120))
    second.restore(stored, data_dir)
    assert second.client_id == first.client_id
    task = await run_feed(second, sink)
    try:
        await sink.wait_for(lambda: sink.snapshots[-1].moves == tuple(GAME[:8]))
        assert sink.errors == []
    finally:
        await cancel(task)
    # a configured id wins over the generated one
    third = MqttFeed(MqttFeedConfig(url=url, client_id="my-ingest"))
    third.restore([], data_dir)
    assert third.client_id == "my-ingest"


async def _read_packet(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    first = (await reader.readexactly(1))[0]
    length, shift = 0, 0
    while True:
        byte = (await reader.readexactly(1))[0]
        length |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            break
    return first >> 4, await reader.readexactly(length)


async def test_a_session_taken_over_is_named_counted_and_reconnected(sink: RecordingSink) -> None:
    """A broker that ends the connection with MQTT 5 reason 0x8E (another client
    connected with this id: Mosquitto 2.0.15 and later send it; the 2.0.11 here
    only closes the socket, so a scripted broker sends it): the feed says so,
    counts it in its status, and reconnects."""
    connects = 0

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connects
        try:
            kind, _ = await _read_packet(reader)
            assert kind == 1  # CONNECT
            connects += 1
            writer.write(bytes([0x20, 3, 0, 0, 0]))  # CONNACK: accepted, no properties
            kind, body = await _read_packet(reader)
            assert kind == 8  # SUBSCRIBE
            writer.write(bytes([0x90, 4]) + body[:2] + bytes([0, 1]))  # SUBACK QoS 1
            await writer.drain()
            if connects == 1:
                await asyncio.sleep(0.2)
                writer.write(bytes([0xE0, 2, 0x8E, 0]))  # DISCONNECT: session taken over
                await writer.drain()
                writer.close()
                return
            while await reader.read(1024):  # the second connection stays
                pass
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    feed = MqttFeed(
        MqttFeedConfig(url=f"mqtt://127.0.0.1:{port}", topic="in/#"), reconnect_delays=(0.05,)
    )
    task = await run_feed(feed, sink)
    try:
        await sink.wait_for(lambda: feed.connections == 2 and feed.connected)
        assert feed.taken_over == 1
        assert feed.status()["sessions_taken_over"] == 1
        assert [e[2] for e in sink.errors if "session taken over" in e[2]], sink.error_text()
        assert "client_id" not in feed.status()
    finally:
        await cancel(task)
        server.close()
