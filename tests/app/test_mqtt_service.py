"""The service with MQTT on both sides: ingest through a broker restart, publish to a broker."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path

import aiomqtt
import pytest
from brokers import PrivateBroker

from livegain.app.service import Service
from livegain.engine.pool import EnginePool
from livegain.feeds.mqtt_ingest import move_event

from .conftest import mqtt_subscribed, running, settings_for, ws_url
from .mirror import Mirror, fully_evaluated

pytestmark = [pytest.mark.engine, pytest.mark.broker]

SANS = [
    "e4",
    "e5",
    "Nf3",
    "Nc6",
    "Bb5",
    "a6",
    "Ba4",
    "Nf6",
    "O-O",
    "Be7",
    "Re1",
    "b5",
    "Bb3",
    "d6",
    "c3",
    "O-O",
]


async def publish_moves(port: int, topic: str, moves: range) -> None:
    """Publish JSON move events (QoS 1), retrying while the broker is away (bounded)."""
    for _ in range(100):
        try:
            async with aiomqtt.Client("127.0.0.1", port) as client:
                for ply in moves:
                    payload = move_event(
                        ply, ply, SANS[ply - 1], white="Alpha, Ann", black="Beta, Bob"
                    )
                    await client.publish(topic, payload, qos=1)
            return
        except aiomqtt.MqttError:
            await asyncio.sleep(0.2)
    raise TimeoutError("could not publish in 20 s")


async def test_broker_restart_mid_game_loses_no_ply(
    tmp_path: Path, pool: EnginePool, private_broker: PrivateBroker, prefix: str
) -> None:
    feed = {
        "type": "mqtt",
        "name": "ingest",
        "url": private_broker.url,
        "topic": f"{prefix}/in/#",
        "client_id": f"svc-{prefix[-10:]}",
        "session_expiry": 3600,
    }
    service = Service(settings_for(tmp_path, feeds=[feed]), evaluator=pool)
    topic = f"{prefix}/in/t1/1/1"
    async with running(service), Mirror(ws_url(service)) as mirror:
        await mqtt_subscribed(service)  # its session then persists
        await publish_moves(private_broker.port, topic, range(1, 7))
        await mirror.wait(lambda m: any(fully_evaluated(s, 6) for s in m.boards.values()))
        private_broker.stop()
        await asyncio.sleep(0.5)
        private_broker.start()
        # Moves published as soon as the broker is back, maybe before the
        # service has reconnected: the broker keeps them in our session.
        await publish_moves(private_broker.port, topic, range(7, 17))
        await mirror.wait(lambda m: any(fully_evaluated(s, 16) for s in m.boards.values()), wait=60)
        state = next(iter(mirror.boards.values()))
        assert [m["san"] for m in state["moves"]] == SANS
        assert service.stats.feed_errors["ingest"] >= 1  # the lost connection was reported


@contextlib.asynccontextmanager
async def collect(port: int, topics: list[str]) -> AsyncIterator[list[aiomqtt.Message]]:
    got: list[aiomqtt.Message] = []
    async with aiomqtt.Client("127.0.0.1", port) as client:
        for t in topics:
            await client.subscribe(t, qos=1)

        async def reader() -> None:
            async for msg in client.messages:
                got.append(msg)

        task = asyncio.create_task(reader())
        try:
            yield got
        finally:
            task.cancel()


async def test_service_publishes_state_and_updates(
    tmp_path: Path, pool: EnginePool, shared_broker: str, prefix: str
) -> None:
    pgn = tmp_path / "round.pgn"
    pgn.write_text(
        '[Event "T"]\n[Round "1.1"]\n[White "Alpha, Ann"]\n[Black "Beta, Bob"]\n'
        '[Result "*"]\n\n1. e4 e5 2. Nf3 Nc6 *\n'
    )
    feed = {"type": "file", "name": "arbiter", "path": str(pgn), "interval": 0.1}
    settings = settings_for(
        tmp_path,
        feeds=[feed],
        mqtt={"enabled": True, "url": shared_broker, "prefix": f"{prefix}/out"},
    )
    service = Service(settings, evaluator=pool)
    async with (
        collect(1883, [f"{prefix}/out/+/update"]) as updates,
        running(service),
        Mirror(ws_url(service)) as mirror,
    ):
        await mirror.wait(lambda m: any(fully_evaluated(s, 4) for s in m.boards.values()))
        ws_updates = [
            json.dumps(m, separators=(",", ":")) for m in mirror.messages if m["type"] == "update"
        ]
        assert service.mqtt is not None
        for _ in range(100):
            # The board list goes out debounced ([server] board_list_interval).
            listed = service.server.stats.board_list_diffs >= 1
            if len(updates) >= len(ws_updates) and listed and service.mqtt.pending == 0:
                break
            await asyncio.sleep(0.1)
        mqtt_bodies = [bytes(m.payload).decode() for m in updates]  # type: ignore[arg-type]
        # Byte for byte the WebSocket messages (the mirror re-serialises compactly).
        assert [json.loads(b) for b in mqtt_bodies[-len(ws_updates) :]] == [
            json.loads(w) for w in ws_updates
        ]
        board_id = next(iter(mirror.boards))
    # The retained state is the board's latest snapshot.
    async with collect(1883, [f"{prefix}/out/{board_id}/state", f"{prefix}/out/boards"]) as got:
        for _ in range(50):
            if len(got) >= 2:
                break
            await asyncio.sleep(0.1)
        by_topic = {m.topic.value: json.loads(bytes(m.payload)) for m in got}  # type: ignore[arg-type]
    state = by_topic[f"{prefix}/out/{board_id}/state"]
    assert state["type"] == "snapshot"
    assert len(state["state"]["moves"]) == 4
    assert by_topic[f"{prefix}/out/boards"]["boards"][0]["board_id"] == board_id
    async with aiomqtt.Client("127.0.0.1", 1883) as c:  # leave no retained messages behind
        for t in (f"{prefix}/out/{board_id}/state", f"{prefix}/out/boards", f"{prefix}/out/status"):
            await c.publish(t, b"", retain=True)


async def test_health_is_degraded_while_the_broker_is_unreachable(
    tmp_path: Path, pool: EnginePool
) -> None:
    from brokers import free_port

    settings = settings_for(
        tmp_path, mqtt={"enabled": True, "url": f"mqtt://127.0.0.1:{free_port()}"}
    )
    service = Service(settings, evaluator=pool)
    async with running(service):
        await asyncio.sleep(0.5)
        health = service.server.health()
        assert health["status"] == "degraded"
        assert "mqtt publisher not connected" in health["problems"]
        assert health["mqtt"]["connected"] is False
