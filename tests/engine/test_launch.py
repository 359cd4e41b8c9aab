"""Engine processes launched ahead of their pool (livegain.engine.launch)."""

from __future__ import annotations

import asyncio
import os

import chess
import pytest

from livegain.engine.errors import EngineStartError
from livegain.engine.launch import Launched, spawn
from livegain.engine.pool import EnginePool
from livegain.engine.search import SearchLimit

from .conftest import FakeEngineFactory, child_pids

pytestmark = [pytest.mark.engine, pytest.mark.timeout(60)]

BOARDS = [
    chess.Board(),
    chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"),
]


async def test_the_pool_adopts_launched_processes_and_answers_the_same(stockfish: str) -> None:
    limit = SearchLimit(depth=8)
    with Launched(stockfish, 2) as launched:
        pids = set(launched.pids)
        async with EnginePool(stockfish, workers=2, limit=limit, launched=launched) as pool:
            assert len(launched) == 0
            assert {e.pid for e in pool._engines if e is not None} == pids
            adopted = await pool.evaluate_many(BOARDS)
    async with EnginePool(stockfish, workers=2, limit=limit) as pool:
        started = await pool.evaluate_many(BOARDS)
    assert adopted == started
    assert not child_pids() & pids


async def test_processes_no_pool_took_are_killed_and_reaped(stockfish: str) -> None:
    with Launched(stockfish, 3) as launched:
        pids = set(launched.pids)
        assert len(pids) == 3
        async with EnginePool(stockfish, workers=1, limit=SearchLimit(depth=4), launched=launched):
            assert len(launched) == 2
    assert not child_pids() & pids  # neither running nor a zombie


async def test_another_engine_path_is_not_adopted(
    stockfish: str, fake_engine: FakeEngineFactory
) -> None:
    fake = fake_engine()
    with Launched(stockfish, 1) as launched:
        async with EnginePool(
            fake, workers=1, limit=SearchLimit(depth=4), launched=launched
        ) as pool:
            assert pool.engine_name == "FakeEngine 1.0"
            assert len(launched) == 1


async def test_a_missing_engine_launches_nothing_and_the_pool_says_why() -> None:
    with Launched("/nonexistent/engine", 2) as launched:
        assert len(launched) == 0
        pool = EnginePool("/nonexistent/engine", workers=2, launched=launched)
        with pytest.raises(EngineStartError, match="no such file"):
            await pool.start()
        await pool.close()


async def test_a_launched_process_that_is_no_engine_fails_the_start_cleanly(
    fake_engine: FakeEngineFactory,
) -> None:
    garbage = fake_engine("garbage")
    with Launched(garbage, 1) as launched:
        pid = launched.pids[0]
        pool = EnginePool(garbage, workers=1, launched=launched, start_timeout=5)
        with pytest.raises(EngineStartError):
            await pool.start()
        await pool.close()
    await asyncio.sleep(0)
    assert pid not in child_pids()


def test_an_engine_spawned_nice_runs_below_this_process(stockfish: str) -> None:
    proc = spawn(stockfish, nice=3)
    try:
        theirs = os.getpriority(os.PRIO_PROCESS, proc.pid)
        assert theirs == min(19, os.getpriority(os.PRIO_PROCESS, 0) + 3)
    finally:
        proc.kill()
        proc.wait()
