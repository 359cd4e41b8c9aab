"""The service store's evaluation key: the whole FEN (both move counters) and
the engine key (name, limit and every UCI option). A stored evaluation is
never reused for another position or another engine set-up."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import chess
import pytest

from livegain.app.service import STORE_FILE, Service
from livegain.app.store import Store
from livegain.core.evaluation import Evaluation
from livegain.core.snapshot import GameSnapshot, PlayerInfo
from livegain.engine.pool import EnginePool
from livegain.engine.search import SearchLimit

from .conftest import DEPTH, CountingEvaluator, running, settings_for

KEY = "Stockfish 15.1|depth 12|hash=16|threads=1|deterministic=1"
FEN = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
EV = Evaluation(cp=31, mate=None, wdl=(40, 955, 5), depth=12, nodes=2, best="c7c5", pv=("c7c5",))


def test_the_store_key_is_the_whole_fen_and_the_engine_key(tmp_path: Path) -> None:
    store = Store(tmp_path / STORE_FILE)
    try:
        store.save_eval(KEY, FEN, EV)
        assert store.get_eval(KEY, FEN) == EV
        assert store.get_eval(KEY, FEN.replace(" 0 1", " 9 1")) is None  # halfmove clock
        assert store.get_eval(KEY, FEN.replace(" 0 1", " 0 5")) is None  # fullmove number
        assert store.get_eval(KEY + "|Skill Level=3", FEN) is None  # another option
    finally:
        store.close()


async def wait_until(cond: Callable[[], bool]) -> None:
    """Poll ``cond`` (the service's own state) every 20 ms, for at most 60 s."""
    async with asyncio.timeout(60):
        while True:
            if cond():
                return
            await asyncio.sleep(0.02)


def game(*moves: str) -> GameSnapshot:
    return GameSnapshot(
        source="arbiter",
        white=PlayerInfo("Alpha, Ann"),
        black=PlayerInfo("Beta, Bob"),
        moves=moves,
        round="1",
        board=1,
    )


def fens(*moves: str) -> list[str]:
    board = chess.Board()
    out = [board.fen()]
    for san in moves:
        board.push_san(san)
        out.append(board.fen())
    return out


async def play(service: Service, snap: GameSnapshot) -> None:
    async with running(service):
        service.on_snapshot(snap)
        assert service.registry is not None

        def done() -> bool:
            assert service.registry is not None
            g = next(iter(service.registry.boards.values()))
            return g.plies == len(snap.moves) and g.evaluated_plies == g.plies

        await wait_until(done)


@pytest.mark.engine
async def test_a_restart_searches_what_the_store_cannot_answer(
    tmp_path: Path, stockfish: str
) -> None:
    """The knights go out and back: after 2. Ng1 Ng8 the placement is the start
    position's, with other move counters. The store must not answer it with
    the start position's evaluation; nor answer an engine with other options."""
    limit = SearchLimit(depth=DEPTH)
    moves = ("Nf3", "Nf6", "Ng1", "Ng8")
    all_fens = fens(*moves)
    assert all_fens[4].split()[:4] == all_fens[0].split()[:4]  # same placement, other counters
    async with EnginePool(stockfish, workers=1, limit=limit) as pool:
        first = CountingEvaluator(pool)
        await play(Service(settings_for(tmp_path), evaluator=first), game("Nf3"))
        assert sorted(first.fens) == sorted(all_fens[:2])

        again = CountingEvaluator(
            pool
        )  # a restart, the same engine: the store answers what it knows
        service = Service(settings_for(tmp_path), evaluator=again)
        await play(service, game(*moves))
        assert sorted(again.fens) == sorted(all_fens[2:])  # ply 4 included
        assert service.stats.restored_evals == 2

    weaker = {"Skill Level": 5}
    async with EnginePool(stockfish, workers=1, limit=limit, options=weaker) as pool:
        other = CountingEvaluator(pool)  # other options: nothing in the store is theirs
        service = Service(settings_for(tmp_path), evaluator=other)
        await play(service, game(*moves))
        assert sorted(other.fens) == sorted(all_fens)
        assert service.stats.store_hits == 0 and service.stats.restored_evals == 0
