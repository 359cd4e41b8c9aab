"""The scheduler reads only the boards with positions waiting, in the order
the registry gives them (latest positions first, backfill interleaved), and
still finds a board that gains positions after all were evaluated; stopped,
it schedules nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import chess
import pytest

from livegain.app.runtime import Runtime
from livegain.app.scheduler import Scheduler
from livegain.app.stats import ServiceStats
from livegain.app.store_writes import StoreWrites
from livegain.core.board.registry import BoardRegistry
from livegain.core.board.updates import EvalRequest
from livegain.core.evaluation import Evaluation
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.core.snapshot import GameSnapshot, PlayerInfo

OPERA = ["e4", "e5", "Nf3", "d6", "d4", "Bg4", "dxe5", "Bxf3", "Qxf3", "dxe5", "Bc4", "Nf6"]


def snap(moves: list[str], board: int) -> GameSnapshot:
    return GameSnapshot(
        source="test",
        white=PlayerInfo(f"W{board}"),
        black=PlayerInfo(f"B{board}"),
        moves=tuple(moves),
        round="1",
        board=board,
        event="Paris 1858",
    )


class Recorder:
    """An engine that answers at once and notes what it was asked."""

    engine_key = "test"

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def evaluate(self, board: chess.Board, priority: int = 0) -> Evaluation:
        self.asked.append(board.fen())
        return Evaluation(cp=0, depth=1)

    def describe(self) -> str:
        return "test"


def scheduler(t: BoardRegistry, engine: Recorder, inflight: int) -> Scheduler:
    stats = ServiceStats()

    def record(bid: str, evals: Sequence[tuple[EvalRequest, Evaluation]]) -> None:
        t.record_evals(bid, [(req.ply, req.fen, ev) for req, ev in evals])

    s = Scheduler(stats, StoreWrites(stats), record)
    s.start(Runtime(registry=t, store=None, evaluator=engine, engine_key="test"), inflight)
    return s


async def drain(s: Scheduler) -> None:
    while s.inflight:
        await asyncio.gather(*s.inflight.values())
        s.schedule()


async def test_the_order_is_the_registrys_and_late_positions_are_found() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    for k, n in ((1, 7), (2, 3), (3, 0), (4, 12)):
        t.apply(snap(OPERA[:n], board=k))
    bids = list(t.boards)
    g = t.board(bids[3])
    t.record_eval(bids[3], 12, g.fen, Evaluation(cp=5))  # board 4's latest is known
    want = [(r.board_id, r.ply) for r in t.pending()]
    engine = Recorder()
    s = scheduler(t, engine, inflight=len(want))
    s.schedule()  # every pending position goes at once, in the registry's order
    assert [(k[0], k[1]) for k in s.inflight] == [
        (bids[0], 7),
        (bids[0], 0),
        (bids[1], 3),
        (bids[1], 0),
        (bids[2], 0),
        (bids[3], 0),
        *[(bid, ply) for bid, ply in want[6:]],
    ]
    assert sorted(k[:2] for k in s.inflight) == sorted(want)
    await drain(s)
    assert t.pending_count() == 0 and not s._waiting  # nothing left to read

    # A move on board 2 after everything was evaluated: only its position is asked for.
    asked = len(engine.asked)
    t.apply(snap(OPERA[:4], board=2))
    s.schedule()
    assert [k[:2] for k in s.inflight] == [(bids[1], 4)]
    await drain(s)
    assert engine.asked[asked:] == [t.board(bids[1]).fen]
    assert t.pending_count() == 0


async def test_a_full_engine_leaves_the_rest_waiting_for_the_next_turn() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    for k in (1, 2, 3):
        t.apply(snap(OPERA[:2], board=k))
    engine = Recorder()
    s = scheduler(t, engine, inflight=2)
    s.schedule()
    assert len(s.inflight) == 2
    await drain(s)
    assert t.pending_count() == 0 and len(engine.asked) == 9  # 3 positions per board


async def test_a_stopped_scheduler_cancels_its_searches_and_schedules_nothing() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    t.apply(snap(OPERA[:2], board=1))
    engine = Recorder()
    s = scheduler(t, engine, inflight=1)
    s.schedule()
    (task,) = s.inflight.values()
    s.stop()
    with pytest.raises(asyncio.CancelledError):
        await task
    s.schedule()
    assert not s.inflight and engine.asked == [] and t.pending_count() == 3
