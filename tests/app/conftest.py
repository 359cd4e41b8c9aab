from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import chess
import pytest
from publish.helpers import toy_model
from websockets.asyncio.client import ClientConnection, connect

from livegain.app.service import Service
from livegain.config import Settings, load_settings
from livegain.engine.pool import EnginePool
from livegain.engine.search import SearchLimit
from livegain.feeds.base import PgnHttpFeedConfig
from livegain.feeds.mqtt import MqttFeed
from livegain.relay.replay import Replay

__all__ = [
    "DEPTH",
    "CountingEvaluator",
    "relayed_event",
    "running",
    "settings_for",
    "toy_model",
    "ws_url",
]

DEPTH = 6


def settings_for(tmp: Path, **over: Any) -> Settings:
    base: dict[str, Any] = {
        "server": {"host": "127.0.0.1", "port": 0},
        "engine": {"depth": DEPTH, "workers": 1, "rating": 2860.0},
        "data_dir": str(tmp / "data"),
        "log": {"level": "warning", "json": False},
    }
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            base[k] = {**base[k], **v}
        else:
            base[k] = v
    return load_settings(None, **base)


@pytest.fixture
async def pool(stockfish: str) -> AsyncIterator[EnginePool]:
    async with EnginePool(stockfish, workers=1, limit=SearchLimit(depth=DEPTH)) as p:
        yield p


@contextlib.asynccontextmanager
async def running(service: Service) -> AsyncIterator[Service]:
    stop = asyncio.Event()
    task = asyncio.create_task(service.run(stop))
    ready = asyncio.create_task(service.ready.wait())
    done, _ = await asyncio.wait({task, ready}, timeout=30, return_when=asyncio.FIRST_COMPLETED)
    if task in done:
        task.result()
    assert service.ready.is_set(), "service did not start in 30 s"
    try:
        yield service
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)


async def mqtt_subscribed(service: Service, wait: float = 20) -> None:
    """Until the service's MQTT feed has subscribed (from then on the broker
    keeps what is published to it: moves sent earlier may be lost)."""
    feed = next(f for f in service.feeds if isinstance(f, MqttFeed))
    await asyncio.wait_for(feed.subscribed.wait(), wait)


@contextlib.asynccontextmanager
async def relayed_event(
    tmp: Path, pool: EnginePool, pgn: str, events: Sequence[dict[str, Any]]
) -> AsyncIterator[tuple[Replay, Service, ClientConnection]]:
    """``pgn`` relayed as a polled PGN (the test reveals its moves), a service
    following it with the ``[[events]]`` entries ``events``, and one viewer
    subscribed to every event's standings (its ``hello`` read)."""
    replay = Replay.from_pgn(pgn, mode="pgn-http", seconds_per_move=1.0)
    await replay.start(autoplay=False)
    try:
        feed = PgnHttpFeedConfig(name="relay", url=replay.pgn_url, interval=0.2)
        settings = settings_for(tmp, feeds=[feed.model_dump()], events=list(events))
        service = Service(settings, evaluator=pool, perceived_model=toy_model())
        async with running(service), connect(ws_url(service)) as ws:
            assert json.loads(await ws.recv())["type"] == "hello"
            await ws.send(json.dumps({"type": "subscribe_standings", "events": "*"}))
            yield replay, service, ws
    finally:
        await replay.stop()


def ws_url(service: Service) -> str:
    return f"ws://127.0.0.1:{service.server.port}/ws"


class CountingEvaluator:
    """The real pool, recording every position it is asked to search."""

    def __init__(self, pool: EnginePool) -> None:
        self.pool = pool
        self.fens: list[str] = []

    async def evaluate(self, board: chess.Board, priority: int = 0) -> Any:
        self.fens.append(board.fen())
        return await self.pool.evaluate(board, priority)

    def describe(self) -> str:
        return self.pool.describe()

    @property
    def engine_key(self) -> str:
        return self.pool.engine_key
