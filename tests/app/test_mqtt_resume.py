"""The service's MQTT ingest across restarts: of the service (boards resume from
the store) and of the broker (boards that lost moves are healed, or marked stale)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiomqtt
import chess
import pytest
from brokers import PrivateBroker

from livegain.app.service import Service
from livegain.core.board.board import BoardGame
from livegain.engine.pool import EnginePool
from livegain.feeds.mqtt_ingest import move_event
from livegain.mqtt.client import connect

from .conftest import mqtt_subscribed, running, settings_for

pytestmark = [pytest.mark.engine, pytest.mark.broker, pytest.mark.timeout(120)]

GAME = ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O", "Be7", "Re1", "b5", "Bb3"]


def boards(service: Service) -> list[BoardGame]:
    assert service.registry is not None
    return list(service.registry.boards.values())


async def until(check: Callable[[], bool], within: float = 30.0) -> None:
    for _ in range(int(within / 0.05)):
        if check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"condition not met in {within} s")


def feed_cfg(url: str, prefix: str, **kw: Any) -> dict[str, Any]:
    # the client id is left to its default: generated, kept in the data dir
    return {"type": "mqtt", "name": "ingest", "url": url, "topic": f"{prefix}/in/#", **kw}


async def test_restart_then_ply_11_continues_the_board(
    tmp_path: Path, pool: EnginePool, private_broker: PrivateBroker, prefix: str
) -> None:
    url, topic = private_broker.url, f"{prefix}/in/t1/1/1"
    settings = settings_for(tmp_path, feeds=[feed_cfg(url, prefix)])
    async with connect(url) as pub:
        first = Service(settings, evaluator=pool)
        async with running(first):
            await mqtt_subscribed(first)  # its session then persists
            await pub.publish(topic, move_event(1, white="Alpha, Ann", black="Beta, Bob"), qos=1)
            for ply in range(1, 11):
                await pub.publish(topic, move_event(ply + 1, ply, GAME[ply - 1]), qos=1)
            await until(lambda: [b.plies for b in boards(first)] == [10])
        # ply 11 while the service is away: the broker keeps it for our session
        await pub.publish(topic, move_event(12, 11, GAME[10]), qos=1)
        second = Service(settings, evaluator=pool)
        async with running(second):
            await pub.publish(topic, move_event(13, 12, GAME[11]), qos=1)
            await until(lambda: [b.plies for b in boards(second)] == [12])
            await asyncio.sleep(0.3)  # nothing else comes to undo it
            (board,) = boards(second)
            assert board.sans == GAME[:12]
            assert (board.white.name, board.black.name) == ("Alpha, Ann", "Beta, Bob")
            assert second.stats.restored_boards == 1
            assert second.stats.feed_errors.get("ingest", 0) == 0


def random_game(seed: int, plies: int) -> list[str]:
    rnd = random.Random(seed)
    board, out = chess.Board(), []
    while len(out) < plies and not board.is_game_over():
        move = rnd.choice(sorted(board.legal_moves, key=lambda m: m.uci()))
        out.append(board.san(move))
        board.push(move)
    return out


def pgn_so_far(sans: list[str]) -> str:
    text = " ".join(f"{i // 2 + 1}. {s}" if i % 2 == 0 else s for i, s in enumerate(sans))
    return f'[White "W"]\n[Black "B"]\n[Result "*"]\n\n{text} *\n'


class LossyRelay:
    """Publishes six boards' moves as JSON events, QoS 1, and drops whatever it
    cannot publish while the broker is away (it does not retry); when
    ``answer`` is on it answers resync requests with the board's PGN so far."""

    def __init__(self, url: str, prefix: str, games: list[list[str]], answer: bool) -> None:
        self.url, self.prefix, self.games, self.answer = url, prefix, games, answer
        self.sent = [0] * len(games)  # plies revealed per board
        self.seq = [0] * len(games)
        self.lost = 0
        self.answered = 0
        self.client: aiomqtt.Client | None = None

    def topic(self, i: int) -> str:
        return f"{self.prefix}/in/t1/1/{i + 1}"

    async def _publish(self, topic: str, payload: bytes) -> bool:
        try:
            if self.client is None:
                client = connect(self.url, timeout=2)
                await client.__aenter__()
                self.client = client
                if self.answer:
                    await client.subscribe("livegain/resync/t1/1/+", qos=1)
                    self._answering = asyncio.create_task(self._answer(client))
            await self.client.publish(topic, payload, qos=1, timeout=2)
            return True
        except aiomqtt.MqttError:
            if self.client is not None:
                with contextlib.suppress(Exception):
                    await self.client.__aexit__(None, None, None)
            self.client = None
            return False

    async def step(self) -> None:
        for i, game in enumerate(self.games):
            if self.sent[i] >= len(game):
                continue
            self.sent[i] += 1
            self.seq[i] += 1
            ply = self.sent[i]
            ok = await self._publish(self.topic(i), move_event(self.seq[i], ply, game[ply - 1]))
            self.lost += not ok

    async def _answer(self, client: aiomqtt.Client) -> None:
        with contextlib.suppress(aiomqtt.MqttError):
            async for msg in client.messages:
                request = json.loads(bytes(msg.payload))  # type: ignore[arg-type]
                i = int(request["topic"].rsplit("/", 1)[1]) - 1
                pgn = pgn_so_far(self.games[i][: self.sent[i]])
                await client.publish(self.topic(i), pgn.encode(), qos=1)
                self.answered += 1

    async def close(self) -> None:
        if self.client is not None:
            with contextlib.suppress(Exception):
                await self.client.__aexit__(None, None, None)


@contextlib.asynccontextmanager
async def relay_for(url: str, prefix: str, answer: bool) -> AsyncIterator[LossyRelay]:
    games = [random_game(seed, 40 + 4 * seed) for seed in range(6)]
    relay = LossyRelay(url, prefix, games, answer)
    try:
        yield relay
    finally:
        await relay.close()


async def play_through_a_broker_restart(broker: PrivateBroker, relay: LossyRelay) -> None:
    """Publish, restart the broker for 2 s mid-game (the relay loses what falls
    in it), publish the rest."""
    for _ in range(15):
        await relay.step()
        await asyncio.sleep(0.02)
    await asyncio.to_thread(broker.stop)
    for _ in range(10):  # 2 s without a broker: these plies are lost
        await relay.step()
        await asyncio.sleep(0.2)
    await asyncio.to_thread(broker.start)
    while any(s < len(g) for s, g in zip(relay.sent, relay.games, strict=True)):
        await relay.step()
        await asyncio.sleep(0.02)
    assert relay.lost > 0


async def test_broker_restart_mid_stream_every_board_reaches_its_last_ply(
    tmp_path: Path, pool: EnginePool, private_broker: PrivateBroker, prefix: str
) -> None:
    url = private_broker.url
    settings = settings_for(tmp_path, feeds=[feed_cfg(url, prefix, gap_timeout=1.0)])
    service = Service(settings, evaluator=pool)
    async with running(service), relay_for(url, prefix, answer=True) as relay:
        await mqtt_subscribed(service)
        await play_through_a_broker_restart(private_broker, relay)
        want = {len(g) for g in relay.games}
        await until(
            lambda: {b.plies for b in boards(service)} == want and len(boards(service)) == 6,
            within=60,
        )
        for b in boards(service):
            assert b.sans == next(g for g in relay.games if len(g) == b.plies)
        status = service.health()["feeds"]["ingest"]["status"]
        assert status["stale_boards"] == {} and status["healed"] >= 1
        assert status["resync_requests"] >= 1 and relay.answered >= 1


async def test_a_board_that_cannot_heal_is_marked_stale_in_health(
    tmp_path: Path, pool: EnginePool, private_broker: PrivateBroker, prefix: str
) -> None:
    url = private_broker.url
    settings = settings_for(tmp_path, feeds=[feed_cfg(url, prefix, gap_timeout=1.0)])
    service = Service(settings, evaluator=pool)
    async with running(service), relay_for(url, prefix, answer=False) as relay:
        await mqtt_subscribed(service)
        await play_through_a_broker_restart(private_broker, relay)

        def stale() -> dict[str, str]:
            return dict(
                service.health()["feeds"]["ingest"].get("status", {}).get("stale_boards", {})
            )

        await until(lambda: len(stale()) == 6, within=30)
        health = service.health()
        assert health["status"] == "degraded"
        assert any("6 stale boards" in p for p in health["problems"])
        assert health["feeds"]["ingest"]["status"]["stale_marked"] == 6
        assert service.stats.feed_errors["ingest"] > 6  # each lost move is reported too
