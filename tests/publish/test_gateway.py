"""The gateway's MQTT adapter against a real Mosquitto, in this process.

The service's messages are published by hand (states and updates built by
tests/publish/helpers.py); a real WebSocket client watches the gateway.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import aiomqtt
import pytest
from brokers import PrivateBroker, port_open
from websockets.asyncio.client import connect

from livegain.mqtt.address import parse_mqtt_url
from livegain.publish.gateway import Gateway
from livegain.publish.mqtt import MqttPublisher
from livegain.publish.schema import BoardState, Snapshot
from livegain.publish.server import LiveServer

from .helpers import board_state, moment_bytes, recv_json, update_for

pytestmark = [pytest.mark.broker, pytest.mark.timeout(60)]

PREFIX = "livegain/out"
BOARD = "t-r1-b1"


def state_at(seq: int) -> BoardState:
    return board_state(BOARD, plies=seq, seq=seq)


def snapshot(seq: int) -> bytes:
    return Snapshot(state=state_at(seq)).model_dump_json().encode()


def update(seq: int) -> bytes:
    return update_for(state_at(seq)).model_dump_json().encode()


@contextlib.asynccontextmanager
async def running(gateway: Gateway) -> AsyncIterator[asyncio.Task[None]]:
    task = asyncio.create_task(gateway.run())
    try:
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_listens_only_once_the_broker_has_answered(private_broker: PrivateBroker) -> None:
    async with aiomqtt.Client("127.0.0.1", private_broker.port) as service:
        await service.publish(f"{PREFIX}/{BOARD}/state", snapshot(2), qos=1, retain=True)
        await service.publish(f"{PREFIX}/status", b"online", qos=1, retain=True)
    private_broker.stop()
    server = LiveServer("127.0.0.1", 0)
    gateway = Gateway(server, parse_mqtt_url(private_broker.url), prefix=PREFIX)
    async with running(gateway):
        await asyncio.sleep(1.5)
        assert not gateway.listening.is_set(), "listening with nothing to serve"
        assert gateway.stats.failures >= 1
        private_broker.start()  # persistence: the retained messages are back
        await asyncio.wait_for(gateway.listening.wait(), 15)
        assert port_open("127.0.0.1", server.port)
        assert server.board_ids() == [BOARD]
        health = server.health()
        assert health["status"] == "ok" and health["broker"]["connected"] is True


async def test_a_lost_update_is_recovered_from_the_retained_state(
    private_broker: PrivateBroker,
) -> None:
    """The gateway misses an update and the state after it: the next update
    shows a gap, the gateway subscribes to the board's state again, the broker
    re-sends it, and the viewer gets that snapshot, then the update."""
    async with aiomqtt.Client("127.0.0.1", private_broker.port) as service:
        await service.publish(f"{PREFIX}/{BOARD}/state", snapshot(2), qos=1, retain=True)
        await service.publish(f"{PREFIX}/status", b"online", qos=1, retain=True)
        server = LiveServer("127.0.0.1", 0)
        gateway = Gateway(server, parse_mqtt_url(private_broker.url), prefix=PREFIX)
        lost: list[bytes] = []
        deliver = gateway._on_message

        def lossy(topic: str, payload: bytes) -> None:
            # lose update 3 and the state after it, once each (a network's doing)
            if payload in (update(3), snapshot(3)) and payload not in lost:
                lost.append(payload)
                return
            deliver(topic, payload)

        gateway._on_message = lossy  # type: ignore[method-assign]
        async with running(gateway):
            await asyncio.wait_for(gateway.listening.wait(), 15)
            async with connect(f"ws://127.0.0.1:{server.port}/ws", proxy=None) as ws:
                assert (await recv_json(ws))["type"] == "hello"
                await ws.send(json.dumps({"type": "subscribe", "boards": [BOARD]}))
                first = await recv_json(ws)
                assert first["type"] == "snapshot" and first["state"]["seq"] == 2
                await service.publish(f"{PREFIX}/{BOARD}/update", update(3), qos=1)
                await service.publish(f"{PREFIX}/{BOARD}/state", snapshot(3), qos=1, retain=True)
                await service.publish(f"{PREFIX}/{BOARD}/update", update(4), qos=1)
                got: list[dict[str, Any]] = [await recv_json(ws), await recv_json(ws)]
                assert len(lost) == 2
                assert [(m["type"], m.get("seq", m.get("state", {}).get("seq"))) for m in got] == [
                    ("snapshot", 3),
                    ("update", 4),
                ]
                assert got[0]["state"] == json.loads(snapshot(3))["state"]
                assert json.dumps(got[1], separators=(",", ":")) == update(4).decode()
            health = server.health()
        assert health["broker"]["resync_requests"] == 1
        assert health["replica"]["gaps"] == 1 and health["lag"]["boards_behind"] == 0


async def test_moments_reach_the_gateways_viewers_also_those_before_it_started(
    private_broker: PrivateBroker,
) -> None:
    """The service's MQTT publisher sends a board and a key moment before any
    gateway runs; a gateway started afterwards gives its viewers the moment
    after the board's snapshot (from the retained ``{prefix}/moments``), then
    each new one as it happens, byte for byte; a viewer who comes later gets them all."""
    pub = MqttPublisher(private_broker.url, PREFIX)
    publisher = asyncio.create_task(pub.run())
    try:
        pub.publish_state(BOARD, snapshot(2))
        pub.publish_moment(BOARD, moment_bytes(BOARD, 2))
        # the broker holds it retained before the gateway starts
        async with aiomqtt.Client("127.0.0.1", private_broker.port) as watcher:
            await watcher.subscribe(f"{PREFIX}/moments", qos=1)
            async with asyncio.timeout(15):
                async for message in watcher.messages:
                    if bytes(message.payload) == moment_bytes(BOARD, 2):  # type: ignore[arg-type]
                        break
        server = LiveServer("127.0.0.1", 0)
        gateway = Gateway(server, parse_mqtt_url(private_broker.url), prefix=PREFIX)
        async with running(gateway):
            await asyncio.wait_for(gateway.listening.wait(), 15)
            url = f"ws://127.0.0.1:{server.port}/ws"
            async with connect(url, proxy=None) as ws:
                assert (await recv_json(ws))["type"] == "hello"
                await ws.send(json.dumps({"type": "subscribe", "boards": [BOARD]}))
                assert (await recv_json(ws))["type"] == "snapshot"
                before = await ws.recv(decode=False)
                assert before == moment_bytes(BOARD, 2)
                # a new moment, live
                pub.publish_moment(BOARD, moment_bytes(BOARD, 3, "turnaround"))
                assert await asyncio.wait_for(ws.recv(decode=False), 10) == moment_bytes(
                    BOARD, 3, "turnaround"
                )
            async with connect(url, proxy=None) as late:
                assert (await recv_json(late))["type"] == "hello"
                await late.send(json.dumps({"type": "subscribe", "boards": "*"}))
                got = [await recv_json(late) for _ in range(3)]
                assert [(m["type"], m.get("ply")) for m in got] == [
                    ("snapshot", None),
                    ("moment", 2),
                    ("moment", 3),
                ]
    finally:
        publisher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await publisher
