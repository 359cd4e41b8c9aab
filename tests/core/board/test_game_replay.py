"""Replay property: any interleaving of snapshots (with corrections, takebacks and
duplicates) and evaluations (in any order, stale ones included) that ends with the
same final move list and all evaluations gives the state of a clean replay."""

from __future__ import annotations

import zlib

import chess
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from livegain.core.board.registry import BoardRegistry
from livegain.core.board.updates import EvalRequest
from livegain.core.evaluation import Evaluation
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.core.snapshot import GameSnapshot, PlayerInfo
from livegain.publish import convert

ENGINE = "test"
W, B = PlayerInfo("White, A"), PlayerInfo("Black, B")


def ev_of(fen: str) -> Evaluation:
    return Evaluation(cp=zlib.crc32(fen.encode()) % 601 - 300, depth=6)


def clock_of(ply: int, uci: str) -> int:
    return 5400 - 7 * ply - zlib.crc32(uci.encode()) % 5


@st.composite
def line(draw: st.DrawFn, start: list[str], max_len: int) -> list[str]:
    """``start`` (UCI) extended by random legal moves up to ``max_len`` plies."""
    board = chess.Board()
    for u in start:
        board.push_uci(u)
    out = list(start)
    n = draw(st.integers(len(start), max(len(start), max_len)))
    while len(out) < n:
        legal = sorted(m.uci() for m in board.legal_moves)
        if not legal:
            break
        u = legal[draw(st.integers(0, len(legal) - 1))]
        board.push_uci(u)
        out.append(u)
    return out


def to_san(ucis: list[str]) -> list[str]:
    board = chess.Board()
    out = []
    for u in ucis:
        m = chess.Move.from_uci(u)
        out.append(board.san(m))
        board.push(m)
    return out


def snapshot(ucis: list[str], result: str, with_clocks: bool, san: bool) -> GameSnapshot:
    moves = to_san(ucis) if san else list(ucis)
    clocks = tuple(clock_of(k + 1, u) if with_clocks else None for k, u in enumerate(ucis))
    return GameSnapshot(
        "prop", W, B, moves=tuple(moves), clocks=clocks, result=result, round="1", board=1
    )


def finish(t: BoardRegistry) -> None:
    for _ in range(1000):
        reqs = t.pending()
        if not reqs:
            return
        for r in reqs:
            t.record_eval(r.board_id, r.ply, r.fen, ev_of(r.fen))
    raise AssertionError("evaluations never finished")


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_any_interleaving_equals_clean_replay(data: st.DataObject) -> None:
    final = data.draw(line([], 24), label="final")
    final_result = data.draw(st.sampled_from(["*", "1-0", "1/2-1/2"]), label="result")
    t = BoardRegistry(PAPER_ENGINE_RATING)
    held: list[EvalRequest] = []  # requests answered late (maybe stale by then)
    last: GameSnapshot | None = None
    steps = data.draw(st.integers(0, 10), label="steps")
    for _ in range(steps):
        action = data.draw(st.sampled_from(["snap", "snap", "dup", "eval", "late"]))
        if action == "snap":
            k = data.draw(st.integers(0, len(final)))
            wrong = data.draw(st.booleans())
            ucis = data.draw(line(final[:k], k + 6)) if wrong else final[:k]
            last = snapshot(
                ucis,
                data.draw(st.sampled_from(["*", "1-0", "0-1"])),
                data.draw(st.booleans()),
                data.draw(st.booleans()),
            )
            t.apply(last)
        elif action == "dup" and last is not None:
            assert t.apply(last).updates == ()
        elif action == "eval":
            reqs = t.pending()
            if reqs:
                picks = data.draw(st.lists(st.integers(0, len(reqs) - 1), max_size=6))
                for i in picks:
                    r = reqs[i]
                    t.record_eval(r.board_id, r.ply, r.fen, ev_of(r.fen))
        elif action == "late":
            held.extend(t.pending())
            for r in data.draw(st.lists(st.sampled_from(held), max_size=4)) if held else []:
                t.record_eval(r.board_id, r.ply, r.fen, ev_of(r.fen))
    final_snap = snapshot(final, final_result, True, data.draw(st.booleans()))
    t.apply(final_snap)
    for r in held:
        t.record_eval(r.board_id, r.ply, r.fen, ev_of(r.fen))
    finish(t)

    ref = BoardRegistry(PAPER_ENGINE_RATING)
    bid = ref.apply(final_snap).board_id
    assert bid is not None
    finish(ref)
    assert list(t.boards) == [bid]
    got, want = t.board(bid), ref.board(bid)
    assert got.state() == want.state()
    assert got.errors == want.errors == 0
    a = convert.board_state(got, engine=ENGINE).model_dump(exclude={"seq"})
    b = convert.board_state(want, engine=ENGINE).model_dump(exclude={"seq"})
    assert a == b
