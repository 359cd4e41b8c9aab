"""The live game state machine: matching, corrections, results, clocks, DGT signals, evaluations."""

from __future__ import annotations

import zlib

import chess
import pytest
from toy_models import toy_model

from livegain.core.board.identity import board_slug
from livegain.core.board.registry import BoardRegistry
from livegain.core.board.results import dgt_signal_result
from livegain.core.board.updates import BoardUpdate, Color
from livegain.core.evaluation import Evaluation, gains
from livegain.core.ledger import GameLedger
from livegain.core.perceived import PerceivedModel
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.core.snapshot import GameSnapshot, PlayerInfo
from livegain.publish import convert, schema

OPERA = [
    "e4",
    "e5",
    "Nf3",
    "d6",
    "d4",
    "Bg4",
    "dxe5",
    "Bxf3",
    "Qxf3",
    "dxe5",
    "Bc4",
    "Nf6",
    "Qb3",
    "Qe7",
    "Nc3",
    "c6",
    "Bg5",
    "b5",
    "Nxb5",
    "cxb5",
    "Bxb5+",
    "Nbd7",
    "O-O-O",
    "Rd8",
    "Rxd7",
    "Rxd7",
    "Rd1",
    "Qe6",
    "Bxd7+",
    "Nxd7",
    "Qb8+",
    "Nxb8",
    "Rd8#",
]
WHITE = PlayerInfo("Morphy, Paul", rating=2690)
BLACK = PlayerInfo("Duke Karl / Count Isouard", rating=2100)
ENGINE = "Stockfish test depth 6"


MODEL = toy_model()
COLORS: tuple[Color, ...] = ("white", "black")


def score_of(fen: str) -> int:
    """A deterministic stand-in score for a position (the core never sees an engine)."""
    return zlib.crc32(fen.encode()) % 401 - 200


def ev_of(fen: str) -> Evaluation:
    return Evaluation(cp=score_of(fen), depth=6, best=None)


def snap(moves: list[str] | tuple[str, ...], **kw: object) -> GameSnapshot:
    args: dict[str, object] = {
        "source": "test",
        "white": WHITE,
        "black": BLACK,
        "moves": tuple(moves),
        "round": "1",
        "board": 1,
        "event": "Paris 1858",
    }
    args.update(kw)
    return GameSnapshot(**args)  # type: ignore[arg-type]


def evaluate_all(t: BoardRegistry, limit: int = 10_000) -> list[BoardUpdate]:
    out: list[BoardUpdate] = []
    for _ in range(limit):
        reqs = t.pending()
        if not reqs:
            return out
        r = reqs[0]
        out.extend(t.record_eval(r.board_id, r.ply, r.fen, ev_of(r.fen)))
    raise AssertionError("evaluations never finished")


def state_json(t: BoardRegistry, board_id: str) -> dict[str, object]:
    state = convert.board_state(t.board(board_id), engine=ENGINE)
    return state.model_dump(mode="json", exclude={"seq"})


def clean_replay(
    final: GameSnapshot, model: PerceivedModel | None = None
) -> tuple[BoardRegistry, str]:
    t = BoardRegistry(PAPER_ENGINE_RATING, model=model)
    bid = t.apply(final).board_id
    assert bid is not None
    evaluate_all(t)
    return t, bid


def fens_of(moves: list[str], start: str = chess.STARTING_FEN) -> list[str]:
    b = chess.Board(start)
    out = [b.fen()]
    for m in moves:
        b.push_san(m)
        out.append(b.fen())
    return out


# -- moves and evaluations -----------------------------------------------------


def test_new_board_gets_moves_and_requests_latest_first() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    a = t.apply(snap(OPERA[:6]))
    assert a.new_board and a.board_id == "test-r1-b1"
    assert [u.kind for u in a.updates] == ["move"] * 6
    assert [u.seq for u in a.updates] == [1, 2, 3, 4, 5, 6]
    assert [u.ply.ply for u in a.updates if u.ply] == [1, 2, 3, 4, 5, 6]
    reqs = t.pending()
    assert [(r.ply, r.priority) for r in reqs] == [
        (6, 0),
        (0, 1),
        (1, 2),
        (2, 3),
        (3, 4),
        (4, 5),
        (5, 6),
    ]
    assert [r.fen for r in reqs] == [fens_of(OPERA[:6])[k] for k in (6, 0, 1, 2, 3, 4, 5)]
    assert reqs[0].board().fen() == reqs[0].fen


def test_gains_and_perceived_follow_the_ledger() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    bid = t.apply(snap(OPERA[:20])).board_id
    assert bid is not None
    evaluate_all(t)
    g = t.board(bid)
    scores = [score_of(f) for f in fens_of(OPERA[:20])]
    assert [p.gain for p in g.moves()] == gains(scores)
    ledger = GameLedger(PAPER_ENGINE_RATING)
    ledger.set_start(scores[0])
    for s in scores[1:]:
        ledger.push(s)
    assert g.scoring.perceived("white") == ledger.perceived("white")
    assert g.scoring.perceived("black") == ledger.perceived("black")
    assert g.scoring.trace("black") == ledger.black_trace
    assert g.scoring.head_to_head() == ledger.head_to_head()


def test_calibrated_beside_algorithm4_follows_the_ledger() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING, model=MODEL)
    bid = t.apply(snap(OPERA[:20])).board_id
    assert bid is not None
    ups = evaluate_all(t)
    g = t.board(bid)
    scores = [score_of(f) for f in fens_of(OPERA[:20])]
    ledger = GameLedger(PAPER_ENGINE_RATING, model=MODEL, first_ply=1)
    ledger.set_start(scores[0])
    for sc in scores[1:]:
        ledger.push(sc)
    for color in COLORS:
        assert g.scoring.perceived(color) == ledger.perceived(color)  # Algorithm 4, unchanged
        assert g.scoring.calibrated(color) == ledger.calibrated(color)
        assert g.scoring.trace(color) == ledger.trace(color)
    # The calibrated estimate by hand: each move's class, from the mover's side.
    classes: dict[str, list[int]] = {"white": [], "black": []}
    for ply in range(1, 21):
        sign = 1 if ply % 2 else -1
        c = MODEL.classes.of(ply, sign * scores[ply - 1], sign * scores[ply])
        classes["white" if ply % 2 else "black"].append(c)
    assert g.scoring.calibrated("white") == MODEL.estimate_moves(classes["white"])
    assert g.scoring.calibrated("black") == MODEL.estimate_moves(classes["black"])
    # "Too early" for each player's first four moves, a measurement from the fifth.
    for color in COLORS:
        early = [tp.calibrated.early for tp in g.scoring.trace(color) if tp.calibrated is not None]
        assert early == [True] * 4 + [False] * 6
    # Every ply update carries both ratings of both players, as they stood then.
    plies = [u for u in ups if u.kind == "ply"]
    assert len(plies) == 20
    last = plies[-1]
    assert last.white_calibrated == g.scoring.calibrated("white")
    assert last.black_perceived == g.scoring.perceived("black")
    first_black = next(u for u in plies if u.black_points)
    assert first_black.black_points[0].calibrated == MODEL.estimate_moves(classes["black"][:1])
    # On the wire: the calibrated estimate is `perceived`, Algorithm 4 `algorithm4`.
    state = convert.board_state(g, engine=ENGINE)
    white_c, white_a4 = ledger.calibrated("white"), ledger.perceived("white")
    assert white_c is not None
    assert state.white_perceived == schema.Perceived(
        rating=white_c.rating,
        low=white_c.low,
        high=white_c.high,
        moves=10,
        early=False,
        model="toy",
    )
    assert state.white_algorithm4 == schema.Algorithm4(
        rating=white_a4.rating,
        low=white_a4.low,
        high=white_a4.high,
        difference=white_a4.difference,
        expected=white_a4.expected,
        moves=10,
        bounded=white_a4.bounded,
    )
    first = state.black_trace[0]
    tp = ledger.black_trace[0]
    assert tp.calibrated is not None and first.early
    assert (first.ply, first.rating, first.low, first.high) == (
        2,
        tp.calibrated.rating,
        tp.calibrated.low,
        tp.calibrated.high,
    )
    assert first.algorithm4 == schema.TraceAlgorithm4(
        rating=tp.perceived.rating,
        low=tp.perceived.low,
        high=tp.perceived.high,
        difference=tp.perceived.difference,
        bounded=tp.perceived.bounded,
    )
    summary = convert.board_summary(g)
    assert summary.black_perceived == state.black_perceived
    assert summary.black_algorithm4 == state.black_algorithm4


def test_without_a_model_only_algorithm4() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    bid = t.apply(snap(OPERA[:6])).board_id
    assert bid is not None
    evaluate_all(t)
    g = t.board(bid)
    assert g.scoring.calibrated("white") is None and g.scoring.perceived("white") is not None
    state = convert.board_state(g, engine=ENGINE)
    assert state.white_perceived is None and state.white_algorithm4 is not None
    point = state.white_trace[-1]
    assert (point.rating, point.low, point.high, point.early) == (None, None, None, True)
    assert point.algorithm4.rating == state.white_algorithm4.rating


def test_latest_eval_first_then_backfill_advances_contiguous_prefix() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    bid = t.apply(snap(OPERA[:4])).board_id
    assert bid is not None
    fens = fens_of(OPERA[:4])
    ups = t.record_eval(bid, 4, fens[4], ev_of(fens[4]))
    assert [u.kind for u in ups] == ["eval"]
    assert ups[0].eval == ev_of(fens[4]) and ups[0].ply is not None and ups[0].ply.gain is None
    g = t.board(bid)
    assert g.current_eval == ev_of(fens[4]) and g.evaluated_plies == 0  # a count: never -1
    assert t.record_eval(bid, 0, fens[0], ev_of(fens[0])) == []
    assert [u.kind for u in t.record_eval(bid, 2, fens[2], ev_of(fens[2]))] == ["eval"]
    ups = t.record_eval(bid, 1, fens[1], ev_of(fens[1]))
    assert [(u.kind, u.ply.ply if u.ply else None) for u in ups] == [("ply", 1), ("ply", 2)]
    assert ups[0].white_points and not ups[0].black_points
    assert ups[1].black_points and not ups[1].white_points
    ups = t.record_eval(bid, 3, fens[3], ev_of(fens[3]))
    assert [u.ply.ply for u in ups if u.ply] == [3, 4]
    assert g.evaluated_plies == 4
    assert t.pending() == []


def test_duplicate_evaluation_and_unknown_board_are_ignored() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    bid = t.apply(snap(OPERA[:2])).board_id
    assert bid is not None
    evaluate_all(t)
    fen = fens_of(OPERA[:2])[2]
    assert t.record_eval(bid, 2, fen, Evaluation(cp=999)) == []
    assert t.board(bid).current_eval == ev_of(fen)
    assert t.record_eval("nope", 0, fen, Evaluation(cp=1)) == []
    assert t.record_eval(bid, 7, fen, Evaluation(cp=1)) == []


def test_checkmate_is_scored_without_the_engine_and_ends_the_game() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    bid = t.apply(snap(OPERA)).board_id
    assert bid is not None
    g = t.board(bid)
    assert g.result == "1-0" and g.status == "finished"
    assert g.current_eval is not None and g.current_eval.cp == 3900
    assert all(r.ply != len(OPERA) for r in t.pending())
    evaluate_all(t)
    assert g.evaluated_plies == len(OPERA)
    assert g.clocks.running is None


# -- corrections, duplicates, resets ---------------------------------------------


def test_correction_mid_game_equals_clean_replay() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    wrong = [*OPERA[:10], "Nc3", "Nf6", "Bc4", "Nc6"]
    first = t.apply(snap(wrong))
    bid = first.board_id
    assert bid is not None and first.errors == ()
    evaluate_all(t)
    final = snap(OPERA[:24])
    a = t.apply(final)
    assert a.updates[0].kind == "truncate" and a.updates[0].truncate_to == 10
    assert [u.ply.ply for u in a.updates[1:] if u.ply] == list(range(11, 25))
    g = t.board(bid)
    assert g.evaluated_plies == 10 and g.ledger.plies == 10
    evaluate_all(t)
    ref, ref_bid = clean_replay(final)
    assert ref_bid == bid
    assert state_json(t, bid) == state_json(ref, ref_bid)
    assert g.state() == ref.board(ref_bid).state()


def test_calibrated_ratings_roll_back_exactly() -> None:
    """Takebacks and corrections leave the calibrated estimate and its trace
    as a clean replay of the final moves would."""
    t = BoardRegistry(PAPER_ENGINE_RATING, model=MODEL)
    bid = t.apply(snap(OPERA[:16])).board_id
    assert bid is not None
    evaluate_all(t)
    g = t.board(bid)
    before = g.scoring.calibrated("white")
    # Take back to ply 9 (White has played five moves, Black four).
    a = t.apply(snap(OPERA[:9]))
    assert [(u.kind, u.truncate_to) for u in a.updates] == [("truncate", 9)]
    truncate = a.updates[0]
    ref, _ = clean_replay(snap(OPERA[:9]), MODEL)
    r = ref.board(bid)
    assert truncate.white_calibrated == r.scoring.calibrated("white") != before
    assert truncate.black_calibrated == r.scoring.calibrated("black")
    black = g.scoring.calibrated("black")
    assert black is not None and black.early and black.moves == 4
    assert g.scoring.trace("white") == r.scoring.trace("white") and g.scoring.trace(
        "black"
    ) == r.scoring.trace("black")
    assert state_json(t, bid) == state_json(ref, bid)
    assert g.state() == r.state()
    # Other moves from there on (a correction), then back to the real game.
    t.apply(snap([*OPERA[:9], "Nc6", "Bb5", "a6"]))
    evaluate_all(t)
    t.apply(snap(OPERA[:20]))
    evaluate_all(t)
    ref, _ = clean_replay(snap(OPERA[:20]), MODEL)
    assert state_json(t, bid) == state_json(ref, bid)
    assert g.state() == ref.board(bid).state()
    # Back to the start: no rating at all.
    t.apply(snap([]))
    assert g.scoring.calibrated("white") is None and g.scoring.calibrated("black") is None
    assert convert.board_state(g, engine=ENGINE).white_trace == []


def test_takeback_of_last_moves() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    bid = t.apply(snap(OPERA[:12])).board_id
    assert bid is not None
    evaluate_all(t)
    a = t.apply(snap(OPERA[:9]))
    assert [(u.kind, u.truncate_to) for u in a.updates] == [("truncate", 9)]
    ref, _ = clean_replay(snap(OPERA[:9]))
    assert state_json(t, bid) == state_json(ref, bid)


def test_duplicate_delivery_is_a_no_op() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    s = snap(OPERA[:16], clocks=tuple(range(5400, 5384, -1)))
    bid = t.apply(s).board_id
    assert bid is not None
    evaluate_all(t)
    before = state_json(t, bid)
    seq = t.board(bid).seq
    a = t.apply(s)
    assert a.updates == () and a.errors == () and not a.new_board and not a.info_changed
    assert t.board(bid).seq == seq
    assert state_json(t, bid) == before
    # The same moves written differently (check marks, UCI) are the same moves.
    ucis = t.board(bid).ucis
    assert t.apply(snap(ucis, clocks=s.clocks)).updates == ()


def test_reset_board_to_empty() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    bid = t.apply(snap(OPERA[:8])).board_id
    assert bid is not None
    evaluate_all(t)
    a = t.apply(snap([]))
    assert [(u.kind, u.truncate_to) for u in a.updates] == [("truncate", 0)]
    g = t.board(bid)
    assert g.plies == 0 and g.fen == chess.STARTING_FEN
    assert g.scoring.perceived("white") is None and g.scoring.trace("white") == []
    assert g.ledger.plies == 0
    # The start position is still the same: its evaluation is kept.
    assert g.start_eval is not None and t.pending() == []


def test_game_restarted_under_the_same_game_id() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    bid = t.apply(snap(OPERA[:8], game_id="g-1")).board_id
    assert bid is not None
    evaluate_all(t)
    # Same players, same GameId, a different game from move 1: a takeback to ply 0.
    a = t.apply(snap(["d4", "d5", "c4"], game_id="g-1"))
    assert a.board_id == bid
    assert a.updates[0].kind == "truncate" and a.updates[0].truncate_to == 0
    assert t.board(bid).sans == ["d4", "d5", "c4"]


def test_game_id_reused_for_a_new_game_keeps_the_board() -> None:
    # One file reused for game after game (TCEC style): the same GameId, new players.
    t = BoardRegistry(PAPER_ENGINE_RATING)
    bid = t.apply(snap(OPERA[:8], game_id="g-1")).board_id
    assert bid is not None
    evaluate_all(t)
    other_w, other_b = PlayerInfo("Stockfish"), PlayerInfo("Leela")
    a = t.apply(snap(["d4", "d5", "c4"], game_id="g-1", white=other_w, black=other_b))
    assert a.board_id == bid and a.info_changed
    assert a.updates[0].kind == "truncate" and a.updates[0].truncate_to == 0
    g = t.board(bid)
    assert g.white == other_w and g.sans == ["d4", "d5", "c4"] and g.ledger.plies == 0


def test_positional_game_ids_reordered_like_livechess_cloud() -> None:
    # LiveChess Cloud numbers games by pairing index: after a reorder the ids move.
    t = BoardRegistry(PAPER_ENGINE_RATING)
    ab = dict(white=PlayerInfo("A"), black=PlayerInfo("B"))
    cd = dict(white=PlayerInfo("C"), black=PlayerInfo("D"))
    first_ab = t.apply(snap(["e4"], game_id="lcc:t:1:1", board=1, **ab)).board_id
    first_cd = t.apply(snap(["d4"], game_id="lcc:t:1:2", board=2, **cd)).board_id
    assert first_ab is not None and first_cd is not None
    a = t.apply(snap(["d4", "d5"], game_id="lcc:t:1:1", board=1, **cd))
    b = t.apply(snap(["e4", "e5"], game_id="lcc:t:1:2", board=2, **ab))
    assert (a.board_id, b.board_id) == (first_cd, first_ab)
    assert [u.kind for u in a.updates + b.updates] == ["move", "move"]
    # and back again
    a = t.apply(snap(["d4", "d5", "c4"], game_id="lcc:t:1:2", board=2, **cd))
    b = t.apply(snap(["e4", "e5", "Nf3"], game_id="lcc:t:1:1", board=1, **ab))
    assert (a.board_id, b.board_id) == (first_cd, first_ab) and len(t.boards) == 2
    assert t.board(first_ab).sans == ["e4", "e5", "Nf3"]


def test_new_start_position_resets_everything() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    bid = t.apply(snap(OPERA[:4])).board_id
    assert bid is not None
    evaluate_all(t)
    fen = "4k3/8/8/8/8/8/4P3/4K3 b - - 0 1"
    a = t.apply(snap(["Kd7", "e4"], initial_fen=fen))
    assert a.updates[0].truncate_to == 0
    g = t.board(bid)
    assert g.start_fen == fen and g.custom_start and g.start_eval is None
    assert g.ledger.first_mover_is_white is False
    evaluate_all(t)
    assert [p.color for p in g.moves()] == ["black", "white"]
    ref, _ = clean_replay(snap(["Kd7", "e4"], initial_fen=fen))
    assert state_json(t, bid) == state_json(ref, bid)


def test_chess960_start_position() -> None:
    fen = "1r3k1r/pppppppp/8/8/8/8/PPPPPPPP/1R3K1R w HBhb - 0 1"
    t = BoardRegistry(PAPER_ENGINE_RATING)
    moves = ["g3", "g6", "O-O"]
    bid = t.apply(snap(moves, initial_fen=fen, tags=(("Variant", "Chess960"),))).board_id
    assert bid is not None
    g = t.board(bid)
    assert g.chess960 and g.sans == moves
    assert g.ucis[-1] == "f1h1"  # king takes own rook: Chess960 castling
    assert all(r.chess960 for r in t.pending())
    evaluate_all(t)
    state = convert.board_state(g, engine=ENGINE)
    assert state.start_fen is not None and state.moves[-1].san == "O-O"


# -- results, clocks ---------------------------------------------------------------


def test_result_changes() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    bid = t.apply(snap(OPERA[:10])).board_id
    assert bid is not None
    a = t.apply(snap(OPERA[:10], result="1-0"))
    assert [(u.kind, u.result, u.status) for u in a.updates] == [("result", "1-0", "finished")]
    a = t.apply(snap(OPERA[:10], result="1/2-1/2"))
    assert [(u.kind, u.result) for u in a.updates] == [("result", "1/2-1/2")]
    a = t.apply(snap(OPERA[:10], result="*"))
    assert [(u.kind, u.status) for u in a.updates] == [("result", "live")]
    # A new move and a result in one poll: the move carries the result.
    a = t.apply(snap(OPERA[:11], result="0-1"))
    assert [(u.kind, u.result) for u in a.updates] == [("move", "0-1")]
    assert t.board(bid).errors == 0


def test_unknown_result_is_an_error_and_counts_as_unfinished() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    a = t.apply(snap(OPERA[:2], result="white resigned"))
    assert a.board_id is not None
    assert len(a.errors) == 1 and "white resigned" in a.errors[0].message
    assert t.board(a.board_id).result == "*" and t.board(a.board_id).errors == 1
    # The next polls say the same: not counted again; a fixed result clears it.
    assert t.apply(snap(OPERA[:3], result="white resigned")).errors == ()
    assert t.apply(snap(OPERA[:3], result="1-0")).errors == ()
    assert len(t.apply(snap(OPERA[:3], result="white resigned")).errors) == 1


def test_lost_clocks_keep_last_known_and_keep_moves() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    bid = t.apply(snap(OPERA[:4], clocks=(5400, 5398, 5350, 5301))).board_id
    assert bid is not None
    g = t.board(bid)
    assert (g.clocks.white, g.clocks.black, g.clocks.running) == (5350, 5301, "white")
    a = t.apply(snap(OPERA[:6], clocks=(None, None, None, None, None)))
    assert [u.kind for u in a.updates] == ["move", "move"]
    assert [p.clock for p in g.moves()] == [5400, 5398, 5350, 5301, None, None]
    assert (g.clocks.white, g.clocks.black) == (5350, 5301)
    a = t.apply(snap(OPERA[:6], clocks=(), clock_white=5000))
    assert [u.kind for u in a.updates] == ["clock"] and a.updates[0].clocks.white == 5000
    assert g.clocks.black == 5301


# -- matching ------------------------------------------------------------------------


def test_boards_reordered_between_polls_stay_matched() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    p = [PlayerInfo(n) for n in ("Carlsen", "Giri", "Firouzja", "Rapport")]
    a1 = t.apply(snap(["e4"], white=p[0], black=p[1], board=1))
    a2 = t.apply(snap(["d4"], white=p[2], black=p[3], board=2))
    # Next poll: the file lists the boards the other way round, numbers swapped too.
    b2 = t.apply(snap(["d4", "Nf6"], white=p[2], black=p[3], board=1))
    b1 = t.apply(snap(["e4", "c5"], white=p[0], black=p[1], board=2))
    assert (b1.board_id, b2.board_id) == (a1.board_id, a2.board_id)
    assert [u.kind for u in b1.updates + b2.updates] == ["move", "move"]
    assert len(t.boards) == 2
    assert t.board(a2.board_id or "").board == 1


def test_round_and_board_from_round_tag() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    a = t.apply(snap(["e4"], round="3.5", board=None))
    assert a.board_id == "test-r3-b5"
    g = t.board(a.board_id)
    assert (g.round, g.board) == ("3", 5)
    assert t.apply(snap(["e4", "e5"], round="3", board=5)).board_id == a.board_id


def test_matching_by_game_id_before_players() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    a = t.apply(snap(["e4"], game_id="abc123"))
    b = t.apply(snap(["d4"], game_id="xyz789"))  # same players, same round: another game
    assert a.board_id == "test-gabc123" and b.board_id == "test-gxyz789"
    # Names corrected by the operator: the GameId still finds the board.
    c = t.apply(snap(["e4", "e5"], game_id="abc123", white=PlayerInfo("Morphy, P.")))
    assert c.board_id == a.board_id and c.info_changed


def test_matching_by_round_and_players_uses_fide_ids() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    w = PlayerInfo("Carlsen, Magnus", fide_id="1503014")
    b = PlayerInfo("Caruana, Fabiano", fide_id="2020009")
    a = t.apply(snap(["e4"], white=w, black=b, board=None))
    # Spelled differently by another poll, same FIDE ids: same game.
    w2 = PlayerInfo("Magnus Carlsen", fide_id="1503014")
    assert t.apply(snap(["e4", "e5"], white=w2, black=b, board=None)).board_id == a.board_id
    # Same names, other round: another game.
    assert t.apply(snap(["e4"], white=w, black=b, round="2", board=None)).board_id != a.board_id
    # Colours swapped: another game.
    assert t.apply(snap(["e4"], white=b, black=w, board=None)).board_id != a.board_id
    assert a.board_id == "test-r1-carlsen-caruana"


def test_player_entered_late_keeps_the_board() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    a = t.apply(snap(["e4"], black=PlayerInfo("?")))
    b = t.apply(snap(["e4", "e5"]))
    assert a.board_id == b.board_id and b.info_changed


def test_name_normalisation() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    a = t.apply(snap(["e4"], white=PlayerInfo("Firouzja,  Alireza"), board=None))
    b = t.apply(snap(["e4"], white=PlayerInfo("firouzja, alireza"), board=None))
    assert a.board_id == b.board_id


def test_unidentifiable_game_is_reported_not_guessed() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    unknown = PlayerInfo("?")
    a = t.apply(snap(["e4"], white=unknown, black=unknown, board=None))
    assert a.board_id is None and len(a.errors) == 1 and not t.boards
    assert t.unmatched == 1 and "GameId" in str(t.errors[0])
    # With a board number it is one board.
    a = t.apply(snap(["e4"], white=unknown, black=unknown, board=4))
    b = t.apply(snap(["e4", "e5"], white=unknown, black=unknown, board=4))
    assert a.board_id == b.board_id == "test-r1-b4"


def test_board_slug() -> None:
    assert board_slug("Tata Steel Masters 2022!") == "tata-steel-masters-2022"
    assert board_slug("Ĺubojević") == "lubojevic"
    assert board_slug("///") == "x"


# -- bad input, DGT signals ------------------------------------------------------------


def test_illegal_move_keeps_legal_prefix_while_other_board_carries_on() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    other = dict(white=PlayerInfo("A"), black=PlayerInfo("B"), board=2)
    bad = t.apply(snap([*OPERA[:4], "Qxh7", "Nc6"]))
    assert bad.board_id is not None
    g = t.board(bad.board_id)
    assert g.sans == OPERA[:4]
    assert len(bad.errors) == 1
    err = bad.errors[0]
    assert (err.board_id, err.ply, err.san) == (bad.board_id, 5, "Qxh7")
    assert "illegal move" in err.message and "test-r1-b1 ply 5" in str(err)
    ok = t.apply(snap(["d4", "d5"], **other))
    evaluate_all(t)
    # The same bad poll again is not a second error; the other board moves on.
    assert t.apply(snap([*OPERA[:4], "Qxh7", "Nc6"])).errors == ()
    assert t.apply(snap(["d4", "d5", "c4"], **other)).updates[0].kind == "move"
    assert g.errors == 1 and t.board(ok.board_id or "").errors == 0
    assert list(g.last_errors) == [err]
    # Fixed by the operator: the board continues.
    fixed = t.apply(snap(OPERA[:6]))
    assert [u.kind for u in fixed.updates] == ["move", "move"] and fixed.errors == ()


def test_garbage_tokens_and_bad_fen_are_errors() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    a = t.apply(snap(["e4", "", "Nf3"]))
    assert a.board_id is not None and len(a.errors) == 1 and a.errors[0].ply == 2
    a = t.apply(snap(["e4"], white=PlayerInfo("C"), board=3, initial_fen="not a fen"))
    assert a.board_id is not None and "bad initial FEN" in a.errors[0].message
    assert t.board(a.board_id).plies == 0


@pytest.mark.parametrize(
    ("tail", "result"),
    [
        (["Kd5", "Ke4"], "1-0"),  # both on light squares
        (["Kd4", "Ke5"], "0-1"),  # both on dark squares
        (["Kd4", "Kd5"], "1/2-1/2"),  # one of each
        (["e8d4", "e1e5"], "0-1"),  # written as UCI
    ],
)
def test_dgt_kings_in_the_centre_signals_the_result(tail: list[str], result: str) -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    moves = OPERA[:6]  # Black to move
    a = t.apply(snap([*moves, *tail]))
    assert a.board_id is not None
    g = t.board(a.board_id)
    assert a.errors == () and g.errors == 0
    assert g.sans == moves and g.result == result and g.status == "finished"
    assert g.signal_result == result
    # The feed's own result wins over the signal.
    t.apply(snap([*moves, *tail], result="1/2-1/2" if result != "1/2-1/2" else "1-0"))
    assert g.result != result


def test_king_move_to_centre_that_is_no_signal_is_an_error() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    a = t.apply(snap([*OPERA[:6], "Kd4"]))  # only one king in the centre
    assert len(a.errors) == 1 and a.errors[0].san == "Kd4"
    board = chess.Board()
    assert dgt_signal_result(board, ["Kd4", "Ke5", "Kd5"]) is None
    assert dgt_signal_result(board, ["Qd4", "Ke5"]) is None


# -- staleness ------------------------------------------------------------------------


def test_stale_evaluation_after_correction_is_ignored() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    bid = t.apply(snap(OPERA[:6])).board_id
    assert bid is not None
    old = {r.ply: r for r in t.pending()}
    t.apply(snap([*OPERA[:3], "Nc6", "d4"]))
    assert t.record_eval(bid, 4, old[4].fen, Evaluation(cp=777)) == []
    assert t.record_eval(bid, 5, old[5].fen, Evaluation(cp=777)) == []
    g = t.board(bid)
    assert g.eval_at(4) is None and g.eval_at(5) is None
    new = {r.ply: r for r in t.pending()}
    assert new[5].priority == 0 and new[5].fen != old[5].fen
    # Positions before the divergence are still the same: their answers count.
    assert t.record_eval(bid, 2, old[2].fen, ev_of(old[2].fen)) != []
    evaluate_all(t)
    assert all(p.eval is None or p.eval.cp != 777 for p in g.moves())
    ref, _ = clean_replay(snap([*OPERA[:3], "Nc6", "d4"]))
    assert state_json(t, bid) == state_json(ref, bid)


def test_pending_interleaves_boards() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    a = t.apply(snap(OPERA[:3])).board_id
    b = t.apply(snap(["d4"], white=PlayerInfo("A"), black=PlayerInfo("B"), board=2)).board_id
    got = [(r.board_id, r.ply, r.priority) for r in t.pending()]
    assert got[:2] == [(a, 3, 0), (b, 1, 0)]
    assert got[2:4] == [(a, 0, 1), (b, 0, 1)]
    assert len(t.pending(limit=3)) == 3


def test_empty_game_asks_for_the_start_position() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    a = t.apply(snap([]))
    assert a.board_id is not None and a.new_board and a.updates == ()
    reqs = t.pending()
    assert [(r.ply, r.priority, r.fen) for r in reqs] == [(0, 0, chess.STARTING_FEN)]
    ups = t.record_eval(a.board_id, 0, chess.STARTING_FEN, Evaluation(cp=20))
    assert [(u.kind, u.ply, u.eval) for u in ups] == [("eval", None, Evaluation(cp=20))]
    state = convert.board_state(t.board(a.board_id), engine=ENGINE)
    assert state.moves == [] and state.eval is not None and state.eval.cp == 20
    assert state.start_eval == state.eval and state.white_perceived is None


def test_dead_position_is_scored_without_the_engine() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    a = t.apply(snap([], initial_fen="8/8/4k3/8/8/3K4/8/8 w - - 0 1"))
    assert a.board_id is not None and t.pending() == []
    g = t.board(a.board_id)
    assert g.current_eval is not None and g.current_eval.cp == 0
    assert g.result == "*"  # a dead position is the feed's (or arbiter's) to score


def test_backfill_passes_over_nothing_when_evaluations_land_while_it_is_read() -> None:
    """The scheduler records evaluations (from the store) while it reads the
    backfill: every position still missing must come out of the same scan.
    (Ranks counted afresh per turn skipped a board's ply 1 once its ply 0 was
    recorded mid-scan, and with nothing in flight the board stalled.)"""
    t = BoardRegistry(engine_rating=PAPER_ENGINE_RATING)
    for board in range(1, 6):
        t.apply(snap(["e4", "e5", "Nf3"], board=board, white=PlayerInfo(f"W{board}")))
    for g in t.boards.values():  # every latest position already known
        t.record_eval(g.board_id, g.plies, g.fen, ev_of(g.fen))
    seen: list[tuple[str, int]] = []
    for req in t.iter_backfill():
        seen.append((req.board_id, req.ply))
        t.record_eval(req.board_id, req.ply, req.fen, ev_of(req.fen))
    assert sorted(seen) == sorted((bid, ply) for bid in t.boards for ply in range(3))
    assert t.pending_count() == 0
