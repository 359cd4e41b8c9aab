from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import chess
import pytest
from publish.helpers import toy_model

from livegain.app.service import Service
from livegain.config import Settings, load_settings
from livegain.engine.pool import EnginePool
from livegain.engine.search import SearchLimit

__all__ = [
    "DEPTH",
    "CountingEvaluator",
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
