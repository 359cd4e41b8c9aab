"""Positions drawn by rule (threefold repetition in the game, the 50-move rule,
insufficient material) are scored a draw from the game's history: no engine
request, cp 0, WDL (0, 1000, 0), marked with the rule; live boards and batch
analysis mark the same positions."""

from __future__ import annotations

import io

import chess
import chess.pgn
from hypothesis import given, settings
from hypothesis import strategies as st

from livegain.batch.analysis import AnnotatedGame, analyze
from livegain.batch.engine_analysis import game_positions
from livegain.core.board.board import BoardGame
from livegain.core.board.registry import BoardRegistry
from livegain.core.evaluation import (
    DRAW_WDL,
    Evaluation,
    draw_rule,
    gains,
    repetitions,
    rule_evaluation,
)
from livegain.core.rating import PAPER_ENGINE_RATING

from .test_game import clean_replay, evaluate_all, fens_of, score_of, snap

DANCE = ["Nf3", "Nf6", "Ng1", "Ng8"] * 2  # the start position for the third time
FIFTY = "8/5p2/4k3/8/8/4K3/8/7R w - - 99 80"  # the next quiet move is the 100th ply
BISHOP = "4k3/8/8/8/8/8/3r4/2B1K3 w - - 0 1"  # Kxd2 leaves K+B against K


def requested(t: BoardRegistry) -> set[int]:
    return {r.ply for r in t.pending()}


def board_of(t: BoardRegistry, moves: list[str], **kw: object) -> BoardGame:
    a = t.apply(snap(moves, **kw))
    assert a.board_id is not None and a.errors == ()
    return t.board(a.board_id)


def is_rule_draw(ev: Evaluation | None, rule: str) -> bool:
    if ev is None:
        return False
    return (ev.cp, ev.wdl, getattr(ev, "rule", None), ev.nodes) == (0, DRAW_WDL, rule, 0)


# -- threefold repetition -------------------------------------------------------


def test_threefold_repetition_is_a_draw_without_the_engine() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    g = board_of(t, [*DANCE, "e4"])
    assert is_rule_draw(g.eval_at(8), "threefold-repetition")
    # Twice is not three times: the start position and ply 4 go to the engine.
    assert requested(t) == set(range(10)) - {8}
    assert g.eval_at(4) is None


def test_threefold_repetition_as_the_current_position() -> None:
    """Moves one snapshot at a time: the third occurrence is scored on arrival."""
    t = BoardRegistry(PAPER_ENGINE_RATING)
    for n in range(1, len(DANCE) + 1):
        g = board_of(t, DANCE[:n])
        evaluate_all(t)
    assert is_rule_draw(g.current_eval, "threefold-repetition")
    assert g.evaluated_plies == 8
    assert g.result == "*"  # a claim is the arbiter's business: the game goes on


def test_gains_around_a_repetition_are_measured_from_the_draw() -> None:
    """The move into the third occurrence gives up its side's score (gain
    ``-s_7`` for Black's Ng8, scored 0); the next move starts from 0."""
    moves = [*DANCE, "e4", "e5"]
    t = BoardRegistry(PAPER_ENGINE_RATING)
    g = board_of(t, moves)
    evaluate_all(t)
    fens = fens_of(moves)
    scores = [score_of(f) for f in fens]
    scores[8] = 0
    assert [m.gain for m in g.moves()] == gains(scores)
    assert g.moves()[7].gain == score_of(fens[7])  # Black: -(0 - s_7)
    assert g.moves()[8].gain == score_of(fens[9])  # White: s_9 - 0
    # The same figures as batch analysis of the same scores.
    report = analyze(
        [AnnotatedGame(headers={}, sans=moves, ucis=g.ucis, scores=scores)], PAPER_ENGINE_RATING
    )
    pg = report.games[0]
    white, black = g.scoring.perceived("white"), g.scoring.perceived("black")
    assert white is not None and black is not None
    assert (white.rating, black.rating) == (pg.white.perceived.rating, pg.black.perceived.rating)


def test_takebacks_keep_the_repetition_right() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    g = board_of(t, DANCE)
    evaluate_all(t)
    # Ng8 taken back and Nc6 played instead: a new position, for the engine.
    g = board_of(t, [*DANCE[:7], "Nc6"])
    assert g.eval_at(8) is None and requested(t) == {8}
    evaluate_all(t)
    # Back to Ng8: the third occurrence again.
    g = board_of(t, DANCE)
    assert is_rule_draw(g.eval_at(8), "threefold-repetition") and requested(t) == set()
    # An earlier correction (3.Nc3 for 3.Ng1) removes an occurrence: ply 8 is
    # the start position only twice now.
    corrected = ["Nf3", "Nf6", "Nc3", "Ng8", "Nb1", "Nf6", "Ng1", "Ng8"]
    g = board_of(t, corrected)
    assert g.eval_at(8) is None and 8 in requested(t)
    evaluate_all(t)
    ref, ref_bid = clean_replay(snap(corrected))
    assert g.state() == ref.board(ref_bid).state()


# -- the 50-move rule -------------------------------------------------------------


def test_fifty_move_rule_from_the_hundredth_quiet_ply() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    g = board_of(t, ["Rh2", "Kd6", "Rh6+", "f6"], initial_fen=FIFTY)
    assert g.eval_at(0) is None  # 99 plies: not yet
    for ply in (1, 2, 3):
        assert is_rule_draw(g.eval_at(ply), "fifty-moves"), ply
    # The pawn move starts the count again: the engine judges ply 4.
    assert g.eval_at(4) is None and requested(t) == {0, 4}
    evaluate_all(t)
    assert [m.gain for m in g.moves()][:3] == [-score_of(FIFTY), 0, 0]
    # Checkmate on the 100th quiet ply wins: the mate comes first.
    g = board_of(t, ["Ra8#"], initial_fen="7k/8/6K1/8/8/8/8/R7 w - - 99 80", board=2)
    ev = g.current_eval
    assert ev is not None and (ev.cp, ev.rule) == (3900, "checkmate") and g.result == "1-0"


def test_a_start_position_past_fifty_moves_is_a_draw() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    g = board_of(t, ["Rh2"], initial_fen=FIFTY.replace(" 99 80", " 100 80"))
    assert is_rule_draw(g.eval_at(0), "fifty-moves") and requested(t) == set()


# -- insufficient material ----------------------------------------------------------


def test_insufficient_material_after_a_capture_and_on() -> None:
    """K+B against K: every position from the capture on is a draw, those that
    play went on from included (not only the current one)."""
    t = BoardRegistry(PAPER_ENGINE_RATING)
    g = board_of(t, ["Kxd2", "Ke7", "Ke3"], initial_fen=BISHOP)
    for ply in (1, 2, 3):
        assert is_rule_draw(g.eval_at(ply), "insufficient-material"), ply
    assert requested(t) == {0}
    evaluate_all(t)
    assert [m.gain for m in g.moves()] == [-score_of(BISHOP), 0, 0]


# -- the rule itself -------------------------------------------------------------------


def shuffle_line(start: chess.Board, picks: list[int]) -> list[chess.Move]:
    """A line of non-capturing king and rook moves picked from the first few
    legal ones: positions repeat often."""
    b = start.copy()
    out: list[chess.Move] = []
    for pick in picks:
        legal = sorted((m for m in b.legal_moves if not b.is_capture(m)), key=lambda m: m.uci())
        if not legal:
            break
        out.append(legal[pick % min(len(legal), 3)])
        b.push(out[-1])
    return out


START = chess.Board("4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1")


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 2), min_size=1, max_size=80))
def test_repetitions_agree_with_python_chess(picks: list[int]) -> None:
    """Counted over FENs (as the live board keeps them) the same as
    python-chess counts over a move stack; live boards and batch analysis mark
    the same positions with the same rule."""
    moves = shuffle_line(START, picks)
    b = START.copy()
    fens = [b.fen()]
    for ply, move in enumerate(moves, start=1):
        b.push(move)
        fens.append(b.fen())
        n = repetitions(fens.__getitem__, ply)
        assert (n >= 3, n >= 5) == (b.is_repetition(3), b.is_repetition(5))
        assert rule_evaluation(b) == rule_evaluation(b.copy(stack=False), n)
    game = chess.pgn.Game.from_board(b)
    batch = game_positions(game).ruled
    t = BoardRegistry(PAPER_ENGINE_RATING)
    g = board_of(t, [m.uci() for m in moves], initial_fen=START.fen())
    assert [g.eval_at(k) for k in range(len(moves) + 1)] == batch


def test_draw_rule_precedence_and_clocks() -> None:
    b = chess.Board(FIFTY)
    assert draw_rule(b) is None
    assert draw_rule(b, 3) == "threefold-repetition"
    assert draw_rule(b, 5) == "fivefold-repetition"
    b.halfmove_clock = 100
    assert draw_rule(b) == "fifty-moves"
    b.halfmove_clock = 150
    assert draw_rule(b, 3) == "seventyfive-moves"
    assert draw_rule(chess.Board(BISHOP.replace("3r4", "8"))) == "insufficient-material"


def test_batch_positions_of_a_pgn_game() -> None:
    pgn = f'[FEN "{FIFTY}"]\n[SetUp "1"]\n\n1. Rh2 Kd6 2. Rh6+ f6 *\n'
    game = chess.pgn.read_game(io.StringIO(pgn))
    assert game is not None
    ruled = game_positions(game).ruled
    assert [None if r is None else r.rule for r in ruled] == [
        None,
        "fifty-moves",
        "fifty-moves",
        "fifty-moves",
        None,
    ]
