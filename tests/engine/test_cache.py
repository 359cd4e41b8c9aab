"""EvalCache: round trip, keys, persistence, bad files."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import chess
import pytest

from livegain.core.evaluation import Evaluation
from livegain.engine.cache import CacheError, EvalCache
from livegain.engine.pool import EnginePool
from livegain.engine.search import SearchLimit

from .conftest import FakeEngineFactory, fake_score, fake_searches

KEY = "Stockfish 15.1|depth 12|hash=16|threads=1|deterministic=1"
FEN = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
EV = Evaluation(
    cp=31, mate=None, wdl=(40, 955, 5), depth=12, nodes=23456, best="c7c5", pv=("c7c5", "g1f3")
)


def test_round_trip_and_counters(tmp_path: Path) -> None:
    with EvalCache(tmp_path / "c.sqlite") as cache:
        assert cache.get(KEY, FEN) is None
        cache.put(KEY, FEN, EV)
        assert cache.get(KEY, FEN) == EV
        assert cache.get(KEY.replace("depth 12", "depth 13"), FEN) is None
        assert cache.get(KEY, FEN.replace(" 0 1", " 0 2")) is None  # counters are part of it
        stats = cache.stats()
        assert (stats.hits, stats.misses, stats.writes, stats.rows) == (1, 3, 1, 1)


def test_mate_and_missing_wdl_round_trip(tmp_path: Path) -> None:
    mate = Evaluation(cp=-3900, mate=-3, wdl=None, depth=12, nodes=9, best=None, pv=())
    with EvalCache(tmp_path / "c.sqlite") as cache:
        cache.put(KEY, FEN, mate)
        assert cache.get(KEY, FEN) == mate


def test_survives_reopen_and_uses_wal(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with EvalCache(path) as cache:
        cache.put(KEY, FEN, EV)
    with EvalCache(path) as again:
        assert again.get(KEY, FEN) == EV
        assert len(again) == 1
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


async def test_async_calls(tmp_path: Path) -> None:
    with EvalCache(tmp_path / "c.sqlite") as cache:
        await cache.aput(KEY, FEN, EV)
        assert await cache.aget(KEY, FEN) == EV
        assert cache.hits == 1


def test_bad_files_are_clear_errors(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(CacheError, match=r"junk\.sqlite"):
        EvalCache(junk)
    with pytest.raises(CacheError, match="does not exist"):
        EvalCache(tmp_path / "no" / "such" / "dir.sqlite")
    cache = EvalCache(":memory:")
    cache.close()
    with pytest.raises(CacheError, match="closed"):
        cache.get(KEY, FEN)


async def test_a_hit_never_reaches_the_engine(
    tmp_path: Path, fake_engine: FakeEngineFactory
) -> None:
    # The scripted engine counts every `go` it receives, across processes.
    path = fake_engine()
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    cache_file = tmp_path / "c.sqlite"
    with EvalCache(cache_file) as cache:
        async with EnginePool(path, workers=1, limit=SearchLimit(depth=5), cache=cache) as pool:
            first = await pool.evaluate(board)
            assert await pool.evaluate(board) == first
    assert fake_searches(path) == 1
    with EvalCache(cache_file) as reopened:  # a restart: a new process, the same file
        async with EnginePool(path, workers=1, limit=SearchLimit(depth=5), cache=reopened) as pool:
            assert await pool.evaluate(board) == first
        assert reopened.hits == 1
    assert fake_searches(path) == 1


# -- the key: both move counters of the FEN, and every engine option -----------

QUIET = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")


def with_counters(board: chess.Board, halfmove: int, fullmove: int) -> chess.Board:
    b = board.copy()
    b.halfmove_clock, b.fullmove_number = halfmove, fullmove
    return b


def test_the_key_holds_both_move_counters(tmp_path: Path) -> None:
    with EvalCache(tmp_path / "c.sqlite") as cache:
        cache.put(KEY, FEN, EV)
        assert cache.get(KEY, FEN.replace(" 0 1", " 7 1")) is None  # halfmove clock only
        assert cache.get(KEY, FEN.replace(" 0 1", " 0 9")) is None  # fullmove number only
        assert cache.get(KEY, FEN) == EV


async def test_a_position_with_other_counters_is_searched_again(
    tmp_path: Path, fake_engine: FakeEngineFactory
) -> None:
    """Stockfish's score depends on the halfmove clock and its WDL on the game
    ply: the same placement with other counters is another search."""
    path = fake_engine()
    boards = [
        QUIET,
        with_counters(QUIET, 40, 3),  # halfmove clock differs
        with_counters(QUIET, 2, 30),  # fullmove number differs
    ]
    with EvalCache(tmp_path / "c.sqlite") as cache:
        async with EnginePool(path, workers=1, limit=SearchLimit(depth=5), cache=cache) as pool:
            for b in boards:
                await pool.evaluate(b)
            assert fake_searches(path) == 3
            assert pool.stats.cache_hits == 0
            for b in boards:  # each one is now in the cache, under its own counters
                await pool.evaluate(b)
            assert fake_searches(path) == 3
        assert len(cache) == 3


async def test_other_engine_options_are_another_key(
    tmp_path: Path, fake_engine: FakeEngineFactory
) -> None:
    """An evaluation made with other UCI options (e.g. a skill level) is never
    reused: two pools sharing one cache file, the same position."""
    path = fake_engine()
    cache_file = tmp_path / "c.sqlite"
    limit = SearchLimit(depth=5)
    with EvalCache(cache_file) as cache:
        async with EnginePool(path, workers=1, limit=limit, cache=cache) as plain:
            await plain.evaluate(QUIET)
        assert fake_searches(path) == 1
        weak = {"Skill Level": 3}
        async with EnginePool(path, workers=1, limit=limit, cache=cache, options=weak) as pool:
            await pool.evaluate(QUIET)
            assert pool.stats.cache_hits == 0
        assert fake_searches(path) == 2
        async with EnginePool(path, workers=1, limit=limit, cache=cache, options=weak) as again:
            await again.evaluate(QUIET)  # the same options: the cache answers
            assert again.stats.cache_hits == 1
        assert fake_searches(path) == 2
        other = {"Skill Level": 4}
        async with EnginePool(path, workers=1, limit=limit, cache=cache, options=other) as pool:
            await pool.evaluate(QUIET)
        assert fake_searches(path) == 3


class _StalledCache(EvalCache):
    """A cache whose disk stalls: every write waits until ``release`` is set."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.release = threading.Event()
        self.fail = False

    def put(self, engine: str, fen: str, ev: Evaluation) -> None:
        assert self.release.wait(30)
        if self.fail:
            raise sqlite3.OperationalError("disk I/O error")
        super().put(engine, fen, ev)


async def test_the_engine_does_not_wait_for_a_cache_write(
    fake_engine: FakeEngineFactory, tmp_path: Path
) -> None:
    # One worker, a stalled disk, two positions asked at once: the second is
    # searched and answered while the first one's write still waits, and every
    # row is on disk once the pool is closed.
    cache = _StalledCache(tmp_path / "evals.sqlite")
    boards = [chess.Board(), chess.Board("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1")]
    pool = EnginePool(fake_engine(), workers=1, limit=SearchLimit(depth=5), cache=cache)
    await pool.start()
    try:
        first, second = await asyncio.wait_for(
            asyncio.gather(*(pool.evaluate(b) for b in boards)), 10
        )
        assert pool.stats.searches == 2 and len(cache) == 0
    finally:
        cache.release.set()
        await pool.close()
    assert len(cache) == 2
    assert cache.get(pool.engine_key, boards[0].fen()) == first
    assert cache.get(pool.engine_key, boards[1].fen()) == second
    cache.close()


async def test_a_failed_cache_write_loses_no_result(
    fake_engine: FakeEngineFactory, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache = _StalledCache(tmp_path / "evals.sqlite")
    cache.fail = True
    cache.release.set()
    async with EnginePool(
        fake_engine(), workers=1, limit=SearchLimit(depth=5), cache=cache
    ) as pool:
        ev = await pool.evaluate(chess.Board())
    assert ev.cp == fake_score(chess.Board())
    assert "cannot store evaluation in the cache" in caplog.text
    assert "disk I/O error" in caplog.text
    assert len(cache) == 0
    cache.close()
