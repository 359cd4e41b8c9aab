"""Engine faults: crashes, hangs, bad binaries, and no process left behind."""

from __future__ import annotations

import asyncio
import os
import signal
import stat
from pathlib import Path

import chess
import chess.pgn
import pytest

from livegain.batch.engine_analysis import analyse_games
from livegain.engine.errors import EngineSearchError, EngineStartError, PoolClosedError
from livegain.engine.pool import EnginePool
from livegain.engine.search import SearchLimit

from .conftest import FakeEngineFactory, child_pids, fake_score, fake_searches
from .test_pool import direct_analysis

pytestmark = pytest.mark.timeout(120)

BOARD = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
#: A search taking longer is hung (the fake engine answers in milliseconds:
#: this leaves room for a loaded machine, and only the hung one waits it out).
HUNG_AFTER = 2.0


async def wait_gone(pids: set[int], within: float = 5.0) -> set[int]:
    """The pids of ``pids`` still children of this process after ``within`` s."""
    for _ in range(int(within / 0.05)):
        left = pids & child_pids()
        if not left:
            return left
        await asyncio.sleep(0.05)
    return pids & child_pids()


async def test_engine_dying_mid_search_is_replaced_and_position_retried(
    fake_engine: FakeEngineFactory,
) -> None:
    path = fake_engine("crash", on={1})
    async with EnginePool(path, workers=1, limit=SearchLimit(depth=5)) as pool:
        first_pid = pool.pids()[0]
        ev = await pool.evaluate(BOARD)
        assert ev.cp == fake_score(BOARD)
        assert pool.stats.crashes == 1 and pool.stats.restarts == 1
        assert pool.pids() != [first_pid]
        assert first_pid not in child_pids()
        # The replacement keeps serving.
        assert (await pool.evaluate(chess.Board())).cp == fake_score(chess.Board())
    assert fake_searches(path) == 3


async def test_engine_that_keeps_dying_gives_a_clear_error(
    fake_engine: FakeEngineFactory,
) -> None:
    path = fake_engine("crash")  # every search
    before = child_pids()
    async with EnginePool(path, workers=1, limit=SearchLimit(depth=5), max_retries=2) as pool:
        with pytest.raises(EngineSearchError) as err:
            await pool.evaluate(BOARD)
        assert BOARD.fen() in str(err.value)
        assert "after 3 attempts" in str(err.value)
        assert pool.stats.failures == 1 and pool.stats.crashes == 3
    assert fake_searches(path) == 3  # bounded: 1 try + 2 retries
    assert not await wait_gone(child_pids() - before)


async def test_hung_search_times_out_and_the_process_is_replaced(
    fake_engine: FakeEngineFactory,
) -> None:
    path = fake_engine("hang", on={1})
    limit = SearchLimit(depth=5)
    async with EnginePool(path, workers=1, limit=limit, search_timeout=HUNG_AFTER) as pool:
        hung = pool.pids()[0]
        ev = await pool.evaluate(BOARD)
        assert ev.cp == fake_score(BOARD)
        assert pool.stats.timeouts == 1 and pool.stats.restarts == 1
        assert not await wait_gone({hung})  # killed and reaped, not left hanging


@pytest.mark.engine
async def test_real_stockfish_killed_mid_search(stockfish: str) -> None:
    depth = 14
    async with EnginePool(stockfish, workers=1, limit=SearchLimit(depth=depth)) as pool:
        task = asyncio.create_task(pool.evaluate(BOARD))

        async def busy_pid(not_in: tuple[int, ...] = ()) -> int:
            for _ in range(20000):
                busy = [p for p in pool.busy_pids() if p not in not_in]
                if busy:
                    return busy[0]
                await asyncio.sleep(0.001)
            raise AssertionError("no search started")

        # First kill as soon as the search command starts (between ucinewgame/
        # isready and go), then, on the retry, once the search is under way.
        victims = [await busy_pid()]
        os.kill(victims[0], signal.SIGKILL)
        second = await busy_pid(not_in=(victims[0],))
        await asyncio.sleep(0.03)
        if not task.done() and second in pool.busy_pids():
            os.kill(second, signal.SIGKILL)
            victims.append(second)
        ev = await asyncio.wait_for(task, 60)
        assert pool.stats.crashes == len(victims) and pool.stats.restarts == len(victims)
        assert not set(victims) & set(pool.pids())
        assert not set(victims) & child_pids()
    assert ev == await direct_analysis(stockfish, BOARD, depth)


async def test_missing_binary_is_a_clear_error(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-engine")
    with pytest.raises(EngineStartError, match=r"no-such-engine.*no such file"):
        await EnginePool(missing, workers=1).start()
    with pytest.raises(EngineStartError, match="is a directory"):
        await EnginePool(str(tmp_path), workers=1).start()
    plain = tmp_path / "not-executable"
    plain.write_text("uciok\n")
    with pytest.raises(EngineStartError, match="not executable"):
        await EnginePool(str(plain), workers=1).start()
    with pytest.raises(EngineStartError, match="not found on PATH"):
        await EnginePool("no-such-engine-anywhere", workers=1).start()


async def test_non_uci_binaries_are_a_clear_error(fake_engine: FakeEngineFactory) -> None:
    before = child_pids()
    # /bin/cat echoes 'uci' back and never says 'uciok'.
    with pytest.raises(EngineStartError, match=r"/bin/cat.*not a UCI engine"):
        await EnginePool("/bin/cat", workers=2, start_timeout=1.0).start()
    # A program that prints garbage and exits.
    garbage = fake_engine("garbage")
    with pytest.raises(EngineStartError, match="fake-engine"):
        await EnginePool(garbage, workers=2, start_timeout=5.0).start()
    assert not await wait_gone(child_pids() - before)


async def test_no_process_left_after_close(stockfish: str) -> None:
    before = child_pids()
    pool = EnginePool(stockfish, workers=2, limit=SearchLimit(depth=6))
    await pool.start()
    pids = set(pool.pids())
    assert len(pids) == 2 and pids <= child_pids()
    await pool.evaluate(chess.Board())
    await pool.close()
    await pool.close()  # idempotent
    assert not pids & child_pids()
    assert child_pids() - before == set()
    with pytest.raises(PoolClosedError):
        await pool.evaluate(chess.Board())


async def test_no_process_left_after_cancellation(
    stockfish: str, tata_games: list[chess.pgn.Game]
) -> None:
    before = child_pids()
    pids: set[int] = set()
    started = asyncio.Event()

    async def run() -> None:
        async with EnginePool(stockfish, workers=2, limit=SearchLimit(depth=14)) as pool:
            pids.update(pool.pids())
            started.set()
            await analyse_games(tata_games, pool)

    task = asyncio.create_task(run())
    await asyncio.wait_for(started.wait(), 30)
    await asyncio.sleep(0.3)  # mid-batch, both engines searching
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(pids) == 2
    assert not pids & child_pids()
    assert child_pids() - before == set()


def test_fake_engine_script_is_executable(fake_engine: FakeEngineFactory) -> None:
    path = Path(fake_engine())
    assert path.stat().st_mode & stat.S_IXUSR


# -- batches (EnginePool.evaluate_many): the same guarantees -------------------

BATCH = [chess.Board()]
for _san in ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O", "Be7"]:
    BATCH.append(BATCH[-1].copy())
    BATCH[-1].push_san(_san)


def white_cp(board: chess.Board) -> int:
    """The scripted engine's score of ``board`` from White's side (as the pool gives it)."""
    return fake_score(board) if board.turn == chess.WHITE else -fake_score(board)


async def test_a_batch_survives_a_process_dying_mid_search(fake_engine: FakeEngineFactory) -> None:
    # one process: the scripted engine counts its searches in a file, which
    # two processes at once could both read past a number
    path = fake_engine("crash", on={3, 7})
    async with EnginePool(path, workers=1, limit=SearchLimit(depth=5)) as pool:
        evs = await pool.evaluate_many(BATCH)
        assert [e.cp for e in evs] == [white_cp(b) for b in BATCH]
        assert pool.stats.crashes == 2 and pool.stats.restarts == 2
        assert pool.stats.searches == len(BATCH)
    assert fake_searches(path) == len(BATCH) + 2  # each lost search once more, no other


async def test_a_batch_times_out_a_hung_search_and_goes_on(fake_engine: FakeEngineFactory) -> None:
    path = fake_engine("hang", on={2})
    limit = SearchLimit(depth=5)
    async with EnginePool(path, workers=1, limit=limit, search_timeout=HUNG_AFTER) as pool:
        hung = pool.pids()[0]
        evs = await pool.evaluate_many(BATCH)
        assert [e.cp for e in evs] == [white_cp(b) for b in BATCH]
        assert pool.stats.timeouts == 1 and pool.stats.restarts == 1
        assert not await wait_gone({hung})


async def test_a_batch_that_cannot_be_searched_is_a_clear_error(
    fake_engine: FakeEngineFactory,
) -> None:
    path = fake_engine("crash")  # every search
    async with EnginePool(path, workers=1, limit=SearchLimit(depth=5), max_retries=2) as pool:
        with pytest.raises(EngineSearchError) as err:
            await pool.evaluate_many(BATCH[:2])
        assert "after 3 attempts" in str(err.value)
        # the pool still answers afterwards (its worker is not stuck in the batch)
        with pytest.raises(EngineSearchError):
            await pool.evaluate(BOARD)


@pytest.mark.engine
async def test_real_stockfish_killed_mid_batch(
    stockfish: str, tata_games: list[chess.pgn.Game]
) -> None:
    from livegain.batch.engine_analysis import game_positions

    boards = game_positions(tata_games[0]).boards[:40]
    depth = 10
    async with EnginePool(stockfish, workers=2, limit=SearchLimit(depth=depth)) as pool:
        want = await asyncio.gather(*(pool.evaluate(b) for b in boards))
    async with EnginePool(stockfish, workers=2, limit=SearchLimit(depth=depth)) as pool:
        task = asyncio.create_task(pool.evaluate_many(boards))
        victims: list[int] = []
        while not victims and not task.done():
            await asyncio.sleep(0.05)
            busy = pool.busy_pids()
            if busy and pool.stats.searches == 0:
                os.kill(busy[0], signal.SIGKILL)
                victims.append(busy[0])
        got = await asyncio.wait_for(task, 90)
        assert victims and pool.stats.crashes == 1 and pool.stats.restarts == 1
        assert not set(victims) & child_pids()
    assert got == want  # nothing lost, nothing different, node counts included
