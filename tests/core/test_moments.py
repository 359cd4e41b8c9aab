"""Key moments: the named predicates, and a replayed blunder yields a moment."""

from __future__ import annotations

import chess
import pytest

from livegain.core.board.registry import BoardRegistry
from livegain.core.board.updates import BoardUpdate
from livegain.core.evaluation import Evaluation
from livegain.core.moments import (
    MomentTracker,
    expected_score,
    is_blunder,
    is_engine_move,
    is_game_end,
    is_missed_win,
    is_turnaround,
    move_kind,
    san_of,
)
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.core.snapshot import GameSnapshot, PlayerInfo

# Black's 3...Nf6?? allows 4.Qxf7#.
MOVES = ["e4", "e5", "Qh5", "Nc6", "Bc4", "Nf6", "Qxf7#"]
# (cp, mate, best UCI) of the position after each ply (0: the start).
EVALS = [
    (20, None, "e2e4"),
    (30, None, "e7e5"),
    (25, None, "g1f3"),
    (0, None, "b8c6"),
    (10, None, "f1c4"),
    (20, None, "g7g6"),
    (3900, 1, "h5f7"),
]


def test_predicates_at_their_thresholds() -> None:
    assert expected_score((500, 0, 500)) == 0.5
    assert expected_score((200, 600, 200)) == 0.5
    assert expected_score((1000, 0, 0)) == 1.0
    assert is_blunder(0.5, 0.35) and not is_blunder(0.5, 0.36)
    assert is_missed_win(0.75, 0.59) and not is_missed_win(0.74, 0.2)
    assert not is_missed_win(0.9, 0.6)
    assert is_turnaround(0.6, 0.4) and not is_turnaround(0.59, 0.1)
    assert is_game_end("*", "1-0") and is_game_end("*", "1/2-1/2")
    assert not is_game_end("*", "*") and not is_game_end(None, "1-0")
    assert not is_game_end("1-0", "1-0")
    # the first predicate that holds names the moment
    assert move_kind(0.65, 0.30) == "turnaround"
    assert move_kind(0.90, 0.55) == "missed-win"
    assert move_kind(0.50, 0.30) == "blunder"
    assert move_kind(0.50, 0.45) is None
    assert move_kind(0.30, 0.90) is None  # a move that gains is no moment
    assert san_of("g7g6", chess.Board().fen()) is None
    assert san_of("g1f3", chess.Board().fen()) == "Nf3"


def _snap(moves: list[str], result: str = "*") -> GameSnapshot:
    return GameSnapshot(
        source="test",
        white=PlayerInfo("White, A"),
        black=PlayerInfo("Black, B"),
        moves=tuple(moves),
        round="1",
        board=1,
        event="Moments Open",
        result=result,
    )


def _evaluate(
    t: BoardRegistry, evals: list[tuple[int, int | None, str]] = EVALS
) -> list[BoardUpdate]:
    fens = [chess.Board().fen()]
    b = chess.Board()
    for m in MOVES:
        b.push_san(m)
        fens.append(b.fen())
    by_fen = {
        fen: Evaluation(cp=cp, mate=mate, best=best)
        for fen, (cp, mate, best) in zip(fens, evals, strict=False)
    }
    out: list[BoardUpdate] = []
    for _ in range(100):
        reqs = t.pending()
        if not reqs:
            return out
        r = reqs[0]
        out.extend(t.record_eval(r.board_id, r.ply, r.fen, by_fen[r.fen]))
    raise AssertionError("evaluations never finished")


def test_a_replayed_blunder_yields_a_moment_and_the_end_another() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    tracker = MomentTracker()
    applied = t.apply(_snap(MOVES[:6]))
    bid = applied.board_id
    assert bid is not None
    game = t.board(bid)
    assert tracker.observe(game, applied.updates) == []
    moments = tracker.observe(game, _evaluate(t))
    assert [(m.kind, m.ply, m.move, m.color, m.best) for m in moments] == [
        ("blunder", 6, "Nf6", "black", "g6")
    ]
    m = moments[0]
    assert m.before == pytest.approx(expected_score(game.wdl_at(5) or (0, 0, 0)), abs=1e-3)
    assert m.after == 1.0 and m.swing == pytest.approx(1.0 - (m.before or 0.0), abs=1e-3)
    # seen once: the same updates again make nothing
    assert tracker.observe(game, []) == []
    applied = t.apply(_snap(MOVES, "1-0"))
    moments = tracker.observe(game, [*applied.updates, *_evaluate(t)])
    assert [(m.kind, m.ply, m.move, m.result) for m in moments] == [("game-end", 7, "Qxf7#", "1-0")]


def test_a_takeback_forgets_the_moment() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    tracker = MomentTracker()
    applied = t.apply(_snap(MOVES[:6]))
    assert applied.board_id is not None
    game = t.board(applied.board_id)
    tracker.observe(game, applied.updates)
    assert len(tracker.observe(game, _evaluate(t))) == 1
    applied = t.apply(_snap(MOVES[:5]))
    assert tracker.observe(game, applied.updates) == []
    applied = t.apply(_snap(MOVES[:6]))
    again = tracker.observe(game, [*applied.updates, *_evaluate(t)])
    assert [(m.kind, m.ply) for m in again] == [("blunder", 6)]


def test_the_engines_own_move_is_never_a_mistake() -> None:
    """A depth-limited search can see more after a move than before it: the
    same blunder-sized drop after the move the engine itself preferred is no
    moment."""
    assert is_engine_move("g7g6", "g7g6") and not is_engine_move("g8f6", "g7g6")
    assert not is_engine_move("g8f6", None)
    t = BoardRegistry(PAPER_ENGINE_RATING)
    tracker = MomentTracker()
    applied = t.apply(_snap(MOVES[:6]))
    bid = applied.board_id
    assert bid is not None
    game = t.board(bid)
    tracker.observe(game, applied.updates)
    # the engine named 3...Nf6 itself, then saw the mate after it
    evals = list(EVALS)
    evals[5] = (20, None, "g8f6")
    assert tracker.observe(game, _evaluate(t, evals)) == []
