"""Board removal through the whole service: by the operator (HTTP DELETE) and
by expiry; the board leaves the game registry, the store and the viewers' list."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from app.conftest import running as service_running
from websockets.asyncio.client import connect

from livegain.app.service import Service
from livegain.config import load_settings
from livegain.core.snapshot import GameSnapshot, PlayerInfo
from livegain.engine.pool import EnginePool
from livegain.engine.search import SearchLimit

from .helpers import list_settled, recv_until, toy_model
from .test_board_list import request

pytestmark = pytest.mark.engine

TOKEN = "operator-token-0123456789"


@contextlib.asynccontextmanager
async def running(tmp_path: Path, stockfish: str, **server: object) -> AsyncIterator[Service]:
    settings = load_settings(
        None,
        server={"host": "127.0.0.1", "port": 0, "board_list_interval": 0.05, **server},
        engine={"depth": 4, "workers": 1, "rating": 2860.0},
        data_dir=str(tmp_path / "data"),
        log={"level": "warning", "json": False},
    )
    async with EnginePool(stockfish, workers=1, limit=SearchLimit(depth=4)) as pool:
        service = Service(settings, evaluator=pool, perceived_model=toy_model())
        async with service_running(service):
            yield service


def snap(white: str, black: str, board: int, moves: tuple[str, ...] = ()) -> GameSnapshot:
    return GameSnapshot(
        source="feed",
        white=PlayerInfo(white),
        black=PlayerInfo(black),
        moves=moves,
        round="1",
        board=board,
    )


async def test_operator_removes_a_junk_board_everywhere(tmp_path: Path, stockfish: str) -> None:
    async with running(tmp_path, stockfish, admin_token=TOKEN) as service:
        service.on_snapshot(snap("Junk", "Junk", 99))
        service.on_snapshot(snap("Real, A", "Real, B", 1, ("e4",)))
        assert service.registry is not None and service.store is not None
        junk = next(b for b, g in service.registry.boards.items() if g.board == 99)
        port = service.server.port
        # listed (a board gone before its diff is never listed)
        async with asyncio.timeout(10):
            while not service.server.has_board(junk):  # noqa: ASYNC110
                await asyncio.sleep(0.01)
        await list_settled(service.server)
        async with connect(f"ws://127.0.0.1:{port}/ws") as ws:
            await recv_until(ws, "hello")
            st, _, _ = await request(port, "DELETE", f"/api/boards/{junk}", f"Bearer {TOKEN}")
            assert st == 200
            diff = await recv_until(ws, "boards_diff")
            while junk not in diff["removed"]:
                diff = await recv_until(ws, "boards_diff")
        assert junk not in service.registry.boards
        assert junk not in [b for b, _ in service.store.load_snapshots()]
        assert not service.server.has_board(junk)
        assert len(service.registry.boards) == 1


async def test_boards_without_moves_expire(tmp_path: Path, stockfish: str) -> None:
    async with running(tmp_path, stockfish, board_expiry=0.4) as service:
        service.on_snapshot(snap("Junk", "Junk", 99))
        service.on_snapshot(snap("Done, A", "Done, B", 2, ("e4", "e5")))
        assert service.registry is not None and service.store is not None
        finished = GameSnapshot(
            source="feed",
            white=PlayerInfo("Done, A"),
            black=PlayerInfo("Done, B"),
            moves=("e4", "e5"),
            result="1-0",
            round="1",
            board=2,
        )
        service.on_snapshot(finished)
        async with asyncio.timeout(10):
            while len(service.registry.boards) != 1:  # noqa: ASYNC110
                await asyncio.sleep(0.05)
        (left,) = service.registry.boards.values()
        assert left.board == 2  # a finished game stays
        assert [b for b, _ in service.store.load_snapshots()] == [left.board_id]
        assert service.server.board_ids() == [left.board_id]
