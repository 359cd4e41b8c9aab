"""An illegal move that stood over the board: the game goes on from the position the board reports.

Arbiters sometimes let an illegal move stand. A board then goes on from the
position after it when that position is known: reported by the feed
(``GameSnapshot.fens``, what LiveChess Cloud / DGT boards give), or the move as
played when it is pseudo-legal (a king left in check) and the game visibly went
on. The ply is marked and counted once as an error; the gain across it is not
counted. Without a position the board stops before the move, marked.
"""

from __future__ import annotations

import chess

from core.board.test_game import OPERA, ev_of, evaluate_all, score_of
from livegain.core.board.registry import BoardRegistry
from livegain.core.ledger import GameLedger
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.core.snapshot import GameSnapshot, PlayerInfo

WHITE = PlayerInfo("White, W")
BLACK = PlayerInfo("Black, B")
# 5.Nc3?? ignores the check from Qh4: pseudo-legal, illegal; the arbiter let it stand.
KING_LEFT_IN_CHECK = ["e4", "e5", "f4", "Qh4+", "Nc3", "Nc6", "g3", "Qe7", "Nf3", "d6"]


def snap(moves: list[str] | tuple[str, ...], **kw: object) -> GameSnapshot:
    args: dict[str, object] = dict(
        source="lcc", white=WHITE, black=BLACK, moves=tuple(moves), round="1", board=1
    )
    args.update(kw)
    return GameSnapshot(**args)  # type: ignore[arg-type]


def knight_jump() -> tuple[list[str], str, list[str]]:
    """1.e4 e5 2.Nf3 Nc6 3."Nd5": the f3 knight put on d5 (no knight move); then 3...Nf6."""
    b = chess.Board()
    for m in [*OPERA[:2], "Nf3", "Nc6"]:
        b.push_san(m)
    b.remove_piece_at(chess.F3)
    b.set_piece_at(chess.D5, chess.Piece(chess.KNIGHT, chess.WHITE))
    return ["e4", "e5", "Nf3", "Nc6"], b.board_fen(), ["Nd5", "Nf6", "Nxf6+"]


def test_the_reported_position_after_an_illegal_move_is_where_the_game_goes_on() -> None:
    before, placement, after = knight_jump()
    t = BoardRegistry(PAPER_ENGINE_RATING)
    # The move as it happens: the last one, with the position the board reports.
    a = t.apply(snap([*before, after[0]], fens=(None, None, None, None, placement)))
    assert a.board_id is not None
    g = t.board(a.board_id)
    assert g.plies == 5 and g.fen.split()[0] == placement and g.fen.split()[1] == "b"
    (err,) = a.errors
    assert (err.board_id, err.ply, err.san) == (a.board_id, 5, "Nd5")
    assert "illegal move stood over the board" in err.message
    assert "position the feed reports" in err.message
    (mark,) = g.illegal_plies
    assert (mark.ply, mark.san, mark.stood, mark.how) == (5, "Nd5", True, "reported")
    assert g.irregular and g.moves()[-1].uci == "f3d5"  # the squares overlays highlight
    # Next polls carry only the current position: the board remembers ply 5's.
    b = t.apply(snap([*before, *after]))
    assert b.errors == () and g.sans == [*before, *after] and g.errors == 1
    updates = evaluate_all(t)
    gains = [p.gain for p in g.moves()]
    assert gains[4] is None  # not counted across the illegal move
    fens = [g.fen_at(k) for k in range(g.plies + 1)]
    s = [score_of(f) for f in fens]
    # Every other ply: the mover's change of score, from the position he faced.
    want = [(s[k] - s[k - 1]) * (1 if k % 2 else -1) for k in range(1, 8)]
    assert [x for i, x in enumerate(gains) if i != 4] == [w for i, w in enumerate(want) if i != 4]
    # The illegal ply gives no trace point; the others do.
    assert [p.ply for p in g.scoring.trace("white")] == [1, 3, 7]
    assert [p.ply for p in g.scoring.trace("black")] == [2, 4, 6]
    assert any(u.kind == "ply" and u.ply is not None and u.ply.ply == 5 for u in updates)


def test_a_placement_only_fen_keeps_the_game_alternating() -> None:
    before, placement, after = knight_jump()
    t = BoardRegistry(PAPER_ENGINE_RATING)
    # A FEN that says White is to move again: the list alternates, Black moves next.
    full = f"{placement} w KQkq - 0 3"
    a = t.apply(snap([*before, *after], fens=(None,) * 4 + (full,)))
    assert a.board_id is not None
    g = t.board(a.board_id)
    assert g.sans == [*before, *after]
    assert g.fen_at(5).split()[1] == "b"


def test_a_king_left_in_check_goes_on_as_played_without_its_position_evaluated() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    moves = KING_LEFT_IN_CHECK
    # The move as it happens: alone at the end, it cannot be told from a typo yet.
    a = t.apply(snap(moves[:5]))
    assert a.board_id is not None
    g = t.board(a.board_id)
    assert g.plies == 4 and a.errors[0].ply == 5 and not g.irregular
    assert g.illegal_plies[0].stood is False and g.illegal_plies[0].after == 0
    # The next move shows the game went on from it (a PGN feed gives no FEN).
    b = t.apply(snap(moves[:6]))
    assert g.plies == 6 and g.irregular
    (err,) = b.errors
    assert (err.ply, err.san) == (5, "Nc3") and "the move as played" in err.message
    assert "not evaluated" in err.message
    t.apply(snap(moves))
    asked: list[int] = []
    for _ in range(100):
        reqs = t.pending()
        if not reqs:
            break
        asked.append(reqs[0].ply)
        assert chess.Board(reqs[0].fen).is_valid()  # never an illegal position to the engine
        t.record_eval(reqs[0].board_id, reqs[0].ply, reqs[0].fen, ev_of(reqs[0].fen))
    assert sorted(asked) == [k for k in range(len(moves) + 1) if k != 5]
    gains = [p.gain for p in g.moves()]
    # Ply 5 (the illegal move) and ply 6 (played from an illegal position): not counted.
    assert gains[4] is None and gains[5] is None
    assert all(x is not None for i, x in enumerate(gains) if i not in (4, 5))
    assert g.evaluated_plies == len(moves)
    assert g.ledger.white.n == 4 and g.ledger.black.n == 4  # 5 plies each, one not counted
    white = g.scoring.perceived("white")
    assert white is not None and white.moves == 4


def test_without_a_position_the_board_stops_before_the_move_and_is_marked() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    # 3.Qxh7: no queen move at all. The feed kept the legal prefix, passed the rest on.
    a = t.apply(snap(OPERA[:4], after_illegal=("Qxh7", "Nc6", "Bc4", "Nf6")))
    assert a.board_id is not None
    g = t.board(a.board_id)
    assert g.sans == OPERA[:4] and g.irregular
    (err,) = a.errors
    assert (err.ply, err.san) == (5, "Qxh7")
    assert "went on for 3 more moves" in err.message
    (mark,) = g.illegal_plies
    assert (mark.ply, mark.stood, mark.after) == (5, False, 3)
    # Counted once while the feed keeps sending it, however long the game goes on.
    assert t.apply(snap(OPERA[:4], after_illegal=("Qxh7", "Nc6", "Bc4", "Nf6", "d3"))).errors == ()
    assert g.errors == 1
    # Another poll (or source) that reports the position after it: the board goes on.
    b = chess.Board()
    for m in OPERA[:4]:
        b.push_san(m)
    b.remove_piece_at(chess.D1)
    b.set_piece_at(chess.H7, chess.Piece(chess.QUEEN, chess.WHITE))
    c = t.apply(
        snap(
            OPERA[:4],
            after_illegal=("Qxh7", "Nc6", "Bc4", "Nf6", "d3"),
            fens=(None,) * 4 + (b.board_fen(),),
        )
    )
    assert g.plies == 9 and [u.kind for u in c.updates].count("move") == 5
    assert [m.stood for m in g.illegal_plies] == [True]


def test_an_illegal_last_move_still_stops_the_board_as_before() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    a = t.apply(snap([*OPERA[:4], "Qxh7"]))
    assert a.board_id is not None
    g = t.board(a.board_id)
    assert g.sans == OPERA[:4] and not g.irregular and len(a.errors) == 1
    assert "stood" not in a.errors[0].message


def test_correcting_the_illegal_move_away_equals_a_clean_game() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    bid = t.apply(snap(KING_LEFT_IN_CHECK)).board_id
    assert bid is not None
    evaluate_all(t)
    fixed = ["e4", "e5", "f4", "Qh4+", "g3", "Qe7"]
    t.apply(snap(fixed))
    evaluate_all(t)
    clean = BoardRegistry(PAPER_ENGINE_RATING)
    cid = clean.apply(snap(fixed)).board_id
    assert cid is not None
    evaluate_all(clean)
    g, c = t.board(bid), clean.board(cid)
    assert not g.irregular and g.illegal_plies == ()
    assert g.ledger == c.ledger and [p.gain for p in g.moves()] == [p.gain for p in c.moves()]


def test_ledger_plies_not_counted_roll_back_exactly() -> None:
    led = GameLedger(PAPER_ENGINE_RATING)
    led.set_start(20)
    for cp in (30, -10):
        led.push(cp)
    before = led.state()
    skipped = led.push(400, counted=False)
    assert skipped.gain == 0 and led.white.n == 1 and led.black.n == 1
    led.push(380)  # Black's move is judged from the position after the skipped ply
    assert led.gains[-1] == 20 and led.black.n == 2
    led.truncate(2)
    assert led.state() == before
