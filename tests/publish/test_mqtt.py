"""The MQTT publisher against real Mosquitto brokers."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator

import aiomqtt
import pytest
from brokers import PrivateBroker

from livegain.mqtt.address import parse_mqtt_url
from livegain.mqtt.topics import topic_safe
from livegain.publish.mqtt import MqttPublisher
from livegain.publish.schema import Snapshot

from .helpers import board_state, update_for

pytestmark = pytest.mark.broker


@contextlib.asynccontextmanager
async def running(pub: MqttPublisher) -> AsyncIterator[MqttPublisher]:
    task = asyncio.create_task(pub.run())
    try:
        yield pub
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def wait_for(cond: object, wait: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + wait
    while not cond():  # type: ignore[operator]
        if loop.time() > end:
            raise TimeoutError("condition not met")
        await asyncio.sleep(0.02)


def test_parse_url_and_topics() -> None:
    b = parse_mqtt_url("mqtt://user:p%40ss@broker.example:1884")
    assert (b.host, b.port, b.username, b.password) == ("broker.example", 1884, "user", "p@ss")
    assert parse_mqtt_url("mqtt://127.0.0.1").port == 1883
    with pytest.raises(ValueError, match="mqtt://"):
        parse_mqtt_url("http://x")
    assert topic_safe("r1/b+2#") == "r1_b_2_"


async def test_state_retained_and_updates_in_order(shared_broker: str, prefix: str) -> None:
    pub = MqttPublisher(shared_broker, prefix)
    states = [board_state("r1.b1", plies=n, seq=n) for n in range(1, 6)]
    async with running(pub):
        async with aiomqtt.Client("127.0.0.1", 1883) as sub:
            await sub.subscribe(f"{prefix}/+/update", qos=1)
            await asyncio.sleep(0.1)
            sent = []
            for s in states:
                data = update_for(s).model_dump_json().encode()
                sent.append(data)
                pub.publish_update(s.board_id, data)
                pub.publish_state(s.board_id, Snapshot(state=s).model_dump_json().encode())
            got = []
            async with asyncio.timeout(10):
                async for msg in sub.messages:
                    got.append(bytes(msg.payload))  # type: ignore[arg-type]
                    if len(got) == len(sent):
                        break
            assert got == sent  # byte-for-byte, in order
        await wait_for(lambda: pub.pending == 0)
        # A late subscriber gets the latest state at once (retained).
        async with aiomqtt.Client("127.0.0.1", 1883) as late:
            await late.subscribe(f"{prefix}/r1.b1/state", qos=1)
            async with asyncio.timeout(10):
                msg = await anext(aiter(late.messages))
            assert msg.retain
            assert json.loads(bytes(msg.payload))["state"]["seq"] == 5  # type: ignore[arg-type]
            await late.subscribe(f"{prefix}/status", qos=1)
            async with asyncio.timeout(10):
                status = await anext(aiter(late.messages))
            assert status.payload == b"online"
    # Clean up retained topics of this test.
    async with aiomqtt.Client("127.0.0.1", 1883) as c:
        await c.publish(f"{prefix}/r1.b1/state", b"", retain=True)
        await c.publish(f"{prefix}/status", b"", retain=True)


async def test_broker_restart_loses_no_update(private_broker: PrivateBroker, prefix: str) -> None:
    """Updates published while the broker is down arrive after it comes back."""
    pub = MqttPublisher(private_broker.url, prefix, backoff_max=0.5)
    received: list[int] = []

    async def subscriber() -> None:
        # A persistent session: the broker keeps our QoS 1 messages across restarts.
        while True:
            try:
                async with aiomqtt.Client(
                    "127.0.0.1",
                    private_broker.port,
                    identifier=f"sub-{prefix[-10:]}",
                    clean_session=False,
                ) as sub:
                    await sub.subscribe(f"{prefix}/+/update", qos=1)
                    async for msg in sub.messages:
                        seq = json.loads(bytes(msg.payload))["seq"]  # type: ignore[arg-type]
                        if seq not in received:
                            received.append(seq)
            except aiomqtt.MqttError:
                await asyncio.sleep(0.2)

    sub_task = asyncio.create_task(subscriber())
    try:
        async with running(pub):
            await wait_for(lambda: pub.stats.connected)
            await asyncio.sleep(0.3)
            for n in range(1, 6):
                s = board_state("b1", plies=n, seq=n)
                pub.publish_update("b1", update_for(s).model_dump_json().encode())
            await wait_for(lambda: received == [1, 2, 3, 4, 5])
            private_broker.stop()
            await wait_for(lambda: not pub.stats.connected)
            for n in range(6, 11):
                s = board_state("b1", plies=n, seq=n)
                pub.publish_update("b1", update_for(s).model_dump_json().encode())
                pub.publish_state("b1", Snapshot(state=s).model_dump_json().encode())
            assert pub.pending > 0
            private_broker.start()
            await wait_for(lambda: received == list(range(1, 11)), wait=20)
            assert pub.stats.connects >= 2
            assert pub.stats.dropped == 0
    finally:
        sub_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sub_task


async def test_a_removed_board_leaves_no_retained_state(shared_broker: str, prefix: str) -> None:
    pub = MqttPublisher(shared_broker, prefix)
    state = board_state("r1.b9", plies=3, seq=3)
    async with running(pub):
        pub.publish_state(state.board_id, Snapshot(state=state).model_dump_json().encode())
        await wait_for(lambda: pub.pending == 0)
        pub.remove_board(state.board_id)
        await wait_for(lambda: pub.pending == 0)
    async with aiomqtt.Client("127.0.0.1", 1883) as late:
        await late.subscribe(f"{prefix}/r1.b9/state", qos=1)
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(1.0):
                await anext(aiter(late.messages))
        await late.publish(f"{prefix}/status", b"", retain=True)


async def test_standings_retained_per_event_latest_only(shared_broker: str, prefix: str) -> None:
    pub = MqttPublisher(shared_broker, prefix)
    assert pub.topics.standings("Open A/B") == f"{prefix}/standings/Open A_B"
    async with running(pub):
        for version in (1, 2, 3):
            pub.publish_standings("Open A/B", json.dumps({"version": version}).encode())
        pub.publish_standings("Masters", b'{"version": 7}')
        await wait_for(lambda: pub.pending == 0)
        async with aiomqtt.Client("127.0.0.1", 1883) as late:
            await late.subscribe(f"{prefix}/standings/+", qos=1)
            got: dict[str, int] = {}
            async with asyncio.timeout(10):
                async for msg in late.messages:
                    assert msg.retain
                    got[str(msg.topic)] = json.loads(bytes(msg.payload))["version"]  # type: ignore[arg-type]
                    if len(got) == 2:
                        break
    assert got == {f"{prefix}/standings/Open A_B": 3, f"{prefix}/standings/Masters": 7}
