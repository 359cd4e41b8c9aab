"""Junk on one MQTT topic, valid games on others, through a running service:
the valid boards complete, the junk is refused, reported and counted."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from brokers import PrivateBroker

from livegain.app.service import Service
from livegain.engine.pool import EnginePool
from livegain.feeds.mqtt_ingest import move_event
from livegain.mqtt.client import connect

from .conftest import mqtt_subscribed, running, settings_for
from .test_mqtt_resume import boards, random_game, until

pytestmark = [pytest.mark.engine, pytest.mark.broker, pytest.mark.timeout(120)]


def junk(rnd: random.Random, max_bytes: int) -> bytes:
    """A payload the ingest must refuse (each kind gives exactly one error)."""
    kind = rnd.randrange(6)
    if kind == 0:
        return bytes([0xFF, 0xFE]) + rnd.randbytes(rnd.randrange(1, 30))  # not UTF-8
    if kind == 1:
        return b"{" + rnd.randbytes(8).hex().encode()  # broken JSON
    if kind == 2:
        return b'{"ply": 1, "san": "e4"}'  # no seq
    if kind == 3:
        return b"{" + b" " * max_bytes + b"}"  # over the size cap
    if kind == 4:
        return f"hello {rnd.random()}".encode()  # neither JSON nor PGN
    return b'{"seq": "x"}'


async def test_junk_on_one_topic_valid_games_on_the_others(
    tmp_path: Path, pool: EnginePool, private_broker: PrivateBroker, prefix: str
) -> None:
    url = private_broker.url
    feed = {
        "type": "mqtt",
        "name": "ingest",
        "url": url,
        "topic": f"{prefix}/in/#",
        "max_bytes": 2048,
    }
    service = Service(settings_for(tmp_path, feeds=[feed]), evaluator=pool)
    rnd = random.Random(20240611)
    games = [random_game(seed, 30) for seed in (11, 12, 13)]
    sent_junk = 0
    async with running(service), connect(url) as pub:
        await mqtt_subscribed(service)
        for ply in range(1, 31):
            for i, game in enumerate(games):
                await pub.publish(
                    f"{prefix}/in/t/1/{i + 1}", move_event(ply, ply, game[ply - 1]), qos=1
                )
            for _ in range(10):
                await pub.publish(f"{prefix}/in/t/1/9", junk(rnd, 2048), qos=1)
                sent_junk += 1
        await until(lambda: sorted(b.plies for b in boards(service)) == [30, 30, 30], within=60)
        await until(lambda: service.stats.feed_errors["ingest"] >= sent_junk, within=20)
        health = service.health()
        assert health["feeds"]["ingest"]["errors"] == sent_junk == 300
        assert sorted(b.sans for b in boards(service)) == sorted(games)
        assert health["feeds"]["ingest"]["status"]["boards"] == 3  # junk made no board
