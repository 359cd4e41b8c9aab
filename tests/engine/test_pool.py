"""EnginePool with a real Stockfish: determinism, priorities, finished positions, cache."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import chess
import chess.engine
import chess.pgn
import pytest

from livegain.batch.engine_analysis import analyse_games, game_positions
from livegain.core.evaluation import Evaluation, white_score
from livegain.engine.cache import EvalCache
from livegain.engine.pool import EnginePool
from livegain.engine.search import SearchLimit, evaluation_from_info

pytestmark = [pytest.mark.engine, pytest.mark.timeout(120)]

DEPTH = 8


async def direct_analysis(stockfish: str, board: chess.Board, depth: int) -> Evaluation:
    """One engine, driven directly: the reference a pool result must equal."""
    _transport, engine = await chess.engine.popen_uci(stockfish)
    try:
        await engine.configure({"Threads": 1, "Hash": 16, "UCI_ShowWDL": True})
        info = await engine.analyse(
            chess.Board(board.fen()), chess.engine.Limit(depth=depth), game=object()
        )
        return evaluation_from_info(info, board)
    finally:
        await engine.quit()


def some_positions(game: chess.pgn.Game, every: int = 7) -> list[chess.Board]:
    return game_positions(game).boards[::every]


async def test_pool_scores_equal_direct_analysis(
    stockfish: str, tata_games: list[chess.pgn.Game]
) -> None:
    boards = some_positions(tata_games[0])[:8]
    async with EnginePool(stockfish, workers=2, limit=SearchLimit(depth=DEPTH)) as pool:
        # Warm the processes up on other positions first: results must not depend
        # on what a process searched before.
        await asyncio.gather(*(pool.evaluate(b) for b in some_positions(tata_games[1])[:4]))
        got = await asyncio.gather(*(pool.evaluate(b) for b in boards))
    assert pool.engine_name.startswith("Stockfish")
    for board, ev in zip(boards, got, strict=True):
        ref = await direct_analysis(stockfish, board, DEPTH)
        assert ev == ref, board.fen()
        assert ev.depth == DEPTH
        assert ev.wdl is not None and sum(ev.wdl) == 1000
        assert ev.best == ev.pv[0]
        assert chess.Move.from_uci(ev.best) in board.legal_moves


async def test_one_and_two_workers_give_identical_scores(
    stockfish: str, tata_games: list[chess.pgn.Game]
) -> None:
    games = tata_games[:2]
    limit = SearchLimit(depth=DEPTH)
    async with EnginePool(stockfish, workers=1, limit=limit) as pool1:
        one = await analyse_games(games, pool1)
    async with EnginePool(stockfish, workers=2, limit=limit) as pool2:
        two = await analyse_games(games, pool2)
    assert [g.scores for g in one] == [g.scores for g in two]
    assert [g.evaluations for g in one] == [g.evaluations for g in two]
    for g in one:
        assert len(g.scores) == len(g.sans) + 1
        assert g.evaluations is not None and len(g.evaluations) == len(g.scores)


async def test_priority_lower_value_served_first(stockfish: str) -> None:
    # One worker: the queue order is the service order. The first position
    # occupies the worker; then ten backfill positions (priority 5) are queued
    # before one urgent position (priority 0), which must be served next.
    board = chess.Board()
    boards = []
    for move in ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6", "e1g1", "f8e7"]:
        board.push_uci(move)
        boards.append(board.copy(stack=False))
    order: list[str] = []
    async with EnginePool(stockfish, workers=1, limit=SearchLimit(depth=6)) as pool:

        async def ask(b: chess.Board, prio: int, tag: str) -> None:
            await pool.evaluate(b, priority=prio)
            order.append(tag)

        first = asyncio.create_task(ask(chess.Board(), 5, "first"))
        await asyncio.sleep(0)
        backfill = [asyncio.create_task(ask(b, 5, f"b{i}")) for i, b in enumerate(boards)]
        await asyncio.sleep(0)
        urgent = asyncio.create_task(
            ask(chess.Board("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"), 0, "urgent")
        )
        await asyncio.gather(first, urgent, *backfill)
    assert order[:2] == ["first", "urgent"]
    assert order[2:] == [f"b{i}" for i in range(10)]  # FIFO within a priority


async def test_finished_positions_need_no_engine(stockfish: str) -> None:
    mated_white = chess.Board()
    for m in ["f2f3", "e7e5", "g2g4", "d8h4"]:
        mated_white.push_uci(m)
    mated_black = chess.Board("r1bqkb1r/pppp1Qpp/2n2n2/4p3/2B1P3/8/PPPP1PPP/RNB1K1NR b KQkq - 0 4")
    stalemate = chess.Board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")
    bare_kings = chess.Board("8/8/4k3/8/8/4K3/8/8 w - - 0 1")
    async with EnginePool(stockfish, workers=1, limit=SearchLimit(depth=6)) as pool:
        assert (await pool.evaluate(mated_white)).cp == -3900
        assert (await pool.evaluate(mated_black)).cp == 3900
        assert (await pool.evaluate(stalemate)).cp == 0
        assert (await pool.evaluate(bare_kings)).cp == 0
        assert pool.stats.searches == 0
        assert pool.stats.terminal == 4
        # A mate the engine finds is clipped to +/-3900 with the mate kept.
        mate_in_one = chess.Board("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")
        ev = await pool.evaluate(mate_in_one)
        assert ev.mate == 1 and ev.cp == white_score(mate=1) == 3900
        with pytest.raises(ValueError, match="invalid position"):
            await pool.evaluate(chess.Board("8/8/8/8/8/8/8/4K3 w - - 0 1"))


async def test_same_position_in_flight_is_searched_once(stockfish: str) -> None:
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    async with EnginePool(stockfish, workers=2, limit=SearchLimit(depth=DEPTH)) as pool:
        results = await asyncio.gather(*(pool.evaluate(board.copy()) for _ in range(5)))
    assert len(set(results)) == 1
    assert pool.stats.searches == 1
    assert pool.stats.shared == 4


async def test_cache_hit_skips_the_engine_and_survives_reopen(
    stockfish: str, tmp_path: Path, tata_games: list[chess.pgn.Game]
) -> None:
    path = tmp_path / "evals.sqlite"
    boards = some_positions(tata_games[0], every=9)
    unique = len({b.fen() for b in boards})
    limit = SearchLimit(depth=DEPTH)
    cache = EvalCache(path)
    async with EnginePool(stockfish, workers=2, limit=limit, cache=cache) as pool:
        first = [await pool.evaluate(b) for b in boards]
        assert pool.stats.searches == unique
        again = [await pool.evaluate(b) for b in boards]
        assert pool.stats.searches == unique  # no engine call the second time
        assert pool.stats.cache_hits == len(boards)
    cache.close()
    assert again == first

    reopened = EvalCache(path)
    assert len(reopened) == unique
    async with EnginePool(stockfish, workers=1, limit=limit, cache=reopened) as pool:
        third = [await pool.evaluate(b) for b in boards]
        assert pool.stats.searches == 0
    assert third == first

    # Another limit is another key: never answered from depth-8 rows.
    async with EnginePool(stockfish, workers=1, limit=SearchLimit(depth=6), cache=reopened) as p6:
        await p6.evaluate(boards[1])
        assert p6.stats.searches == 1 and p6.stats.cache_hits == 0
    reopened.close()


async def test_describe_and_engine_key(stockfish: str) -> None:
    async with EnginePool(stockfish, workers=1, limit=SearchLimit(depth=7), hash_mb=8) as pool:
        assert pool.describe() == f"{pool.engine_name} depth 7"
        assert pool.engine_key == f"{pool.engine_name}|depth 7|hash=8|threads=1|deterministic=1"
        assert len(pool.pids()) == 1
    assert SearchLimit.of(nodes=5000).describe() == "nodes 5000"
    assert SearchLimit.of().describe() == "depth 12"
    with pytest.raises(ValueError):
        SearchLimit(depth=None, nodes=None)


async def test_non_deterministic_mode_keeps_the_hash_and_its_own_cache_key(
    stockfish: str, tata_games: list[chess.pgn.Game]
) -> None:
    boards = game_positions(tata_games[0]).boards[10:16]
    limit = SearchLimit(depth=DEPTH)
    async with EnginePool(stockfish, workers=1, limit=limit, deterministic=False) as pool:
        evs = [await pool.evaluate(b) for b in boards]
        assert pool.engine_key.endswith("deterministic=0")
    assert all(e.depth == DEPTH and e.best is not None for e in evs)
    async with EnginePool(stockfish, workers=1, limit=limit) as det:
        assert det.engine_key.endswith("deterministic=1")
        # The first position of a fresh process is searched alike in both modes.
        assert await det.evaluate(boards[0]) == evs[0]


async def test_black_to_move_and_mates_equal_direct_analysis(stockfish: str) -> None:
    # White's view of scores, mates and WDL when Black is to move, against
    # python-chess's own parse of the same search.
    boards = [
        chess.Board("3r2k1/8/8/8/8/8/5PPP/6K1 w - - 0 1"),  # White to move, Black better
        chess.Board("3r2k1/8/8/8/8/8/5PPP/6K1 b - - 0 1"),  # Black mates in one
        chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 3 3"),
        chess.Board(),
    ]
    async with EnginePool(stockfish, workers=2, limit=SearchLimit(depth=DEPTH)) as pool:
        got = await asyncio.gather(*(pool.evaluate(b) for b in boards))
    for board, ev in zip(boards, got, strict=True):
        assert ev == await direct_analysis(stockfish, board, DEPTH), board.fen()
    assert got[1].mate == -1 and got[1].cp == -3900 and got[1].wdl == (0, 0, 1000)


async def test_a_batch_gives_what_evaluate_gives(
    stockfish: str, tata_games: list[chess.pgn.Game], tmp_path: Path
) -> None:
    boards = some_positions(tata_games[0], every=3)[:12]
    boards += boards[:3]  # positions reached twice: searched once
    mate = chess.Board("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1")  # checkmated: no engine
    boards.append(mate)
    limit = SearchLimit(depth=DEPTH)
    async with EnginePool(stockfish, workers=2, limit=limit) as pool:
        want = await asyncio.gather(*(pool.evaluate(b) for b in boards))
    cache = EvalCache(tmp_path / "c.sqlite")
    try:
        async with EnginePool(stockfish, workers=2, limit=limit, cache=cache) as pool:
            seen: list[int] = []
            got = await pool.evaluate_many(boards, on_progress=seen.append)
            assert got == want  # scores, WDL, depth, nodes, PV: to the node
            assert pool.stats.searches == 12 and pool.stats.shared == 3
            assert pool.stats.terminal == 1
            assert seen and seen[-1] == len(boards)
            # the same batch again: every position from the cache
            again = await pool.evaluate_many(boards)
            assert again == want and pool.stats.searches == 12 and pool.stats.cache_hits == 15
    finally:
        cache.close()


def distinct_positions(count: int, seed: int = 11) -> list[chess.Board]:
    """``count`` distinct middlegame-like positions: random legal games from
    the start, a position every few plies."""
    import random

    rng = random.Random(seed)
    out: dict[str, chess.Board] = {}
    while len(out) < count:
        board = chess.Board()
        for ply in range(60):
            moves = list(board.legal_moves)
            if not moves or board.is_game_over():
                break
            board.push(rng.choice(moves))
            if ply % 5 == 4 and not board.is_game_over():
                out.setdefault(board.fen(), board.copy(stack=False))
    return list(out.values())[:count]


async def test_a_stopped_batch_keeps_what_it_searched(stockfish: str, tmp_path: Path) -> None:
    """A long run stopped part-way (Ctrl-C cancels it) leaves every position it
    had searched in the cache, and the run started again searches only the rest."""
    path = tmp_path / "evals.sqlite"
    boards = distinct_positions(40)
    limit = SearchLimit(depth=14)
    some_done = asyncio.Event()

    def progress(n: int) -> None:
        if n >= 3:
            some_done.set()

    cache = EvalCache(path)
    async with EnginePool(stockfish, workers=1, limit=limit, cache=cache) as pool:
        run = asyncio.create_task(pool.evaluate_many(boards, on_progress=progress))
        await some_done.wait()
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
    cache.close()

    reopened = EvalCache(path)
    kept = len(reopened)
    assert 3 <= kept < len(boards)
    async with EnginePool(stockfish, workers=1, limit=limit, cache=reopened) as pool:
        again = await pool.evaluate_many(boards)
        assert pool.stats.cache_hits == kept
        assert pool.stats.searches == len(boards) - kept
    reopened.close()
    assert len(again) == len(boards)


async def test_a_long_batch_writes_to_the_cache_as_it_goes(stockfish: str, tmp_path: Path) -> None:
    """While a batch runs, what it has searched is already in the file (a run
    killed outright keeps it): another reader sees rows before the batch ends."""
    import sqlite3

    path = tmp_path / "evals.sqlite"
    boards = distinct_positions(40)
    cache = EvalCache(path)
    seen_while_running = 0
    async with EnginePool(
        stockfish, workers=1, limit=SearchLimit(depth=14), cache=cache, keep_every_s=0.0
    ) as pool:
        run = asyncio.create_task(pool.evaluate_many(boards))
        while not run.done():
            with contextlib.closing(sqlite3.connect(path)) as reader:
                rows = reader.execute("SELECT COUNT(*) FROM evals").fetchone()[0]
            if rows and not run.done():
                seen_while_running = rows
                break
            await asyncio.sleep(0.05)
        await run
    cache.close()
    assert seen_while_running > 0
