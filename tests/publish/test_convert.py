"""Core state -> wire schema: snapshots, summaries, and updates that a client can fold."""

from __future__ import annotations

import dataclasses
import zlib

import chess
import pytest

from livegain.core.evaluation import Evaluation
from livegain.core.events import GameSnapshot, PlayerInfo
from livegain.core.game import BoardUpdate, Tournament
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.core.wdl import wdl_from_cp
from livegain.publish import convert, schema

from .helpers import toy_model

MOVES = [
    "d4",
    "Nf6",
    "c4",
    "e6",
    "Nc3",
    "Bb4",
    "e3",
    "O-O",
    "Bd3",
    "d5",
    "Nf3",
    "c5",
    "O-O",
    "Nc6",
    "a3",
    "Bxc3",
    "bxc3",
    "dxc4",
    "Bxc4",
    "Qc7",
]
ENGINE = "Stockfish 15.1 depth 8"


def ev_of(fen: str, wdl: bool = False) -> Evaluation:
    cp = zlib.crc32(fen.encode()) % 301 - 150
    board = chess.Board(fen)
    best = sorted(m.uci() for m in board.legal_moves)[0] if not board.is_game_over() else None
    return Evaluation(cp=cp, depth=8, best=best, wdl=(300, 500, 200) if wdl else None)


def snap(moves: list[str], **kw: object) -> GameSnapshot:
    args: dict[str, object] = {
        "source": "lcc",
        "white": PlayerInfo("Kasparov, Garry", title="GM", federation="RUS", rating=2812),
        "black": PlayerInfo("Karpov, Anatoly", title="GM", federation="RUS", rating=2725),
        "moves": tuple(moves),
        "clocks": tuple(7200 - 10 * k for k in range(len(moves))),
        "event": "World Championship",
        "round": "16",
        "board": 1,
    }
    args.update(kw)
    return GameSnapshot(**args)  # type: ignore[arg-type]


def fold(state: schema.BoardState, updates: list[schema.Update]) -> dict[str, object]:
    """What a client holds after applying ``updates`` to a snapshot, as the protocol says."""
    moves = list(state.moves)
    wt, bt = list(state.white_trace), list(state.black_trace)
    cur: dict[str, object] = {}
    seq = state.seq
    for u in updates:
        assert u.seq == seq + 1, "no gaps in seq"
        seq = u.seq
        if u.truncate_to is not None:
            moves = moves[: u.truncate_to]
            wt = [p for p in wt if p.ply <= u.truncate_to]
            bt = [p for p in bt if p.ply <= u.truncate_to]
        if u.ply is not None:
            if u.ply.ply <= len(moves):
                moves[u.ply.ply - 1] = u.ply
            else:
                assert u.ply.ply == len(moves) + 1
                moves.append(u.ply)
        wt += u.white_points
        bt += u.black_points
        cur = {
            "fen": u.fen,
            "eval": u.eval,
            "white_perceived": u.white_perceived,
            "black_perceived": u.black_perceived,
            "white_algorithm4": u.white_algorithm4,
            "black_algorithm4": u.black_algorithm4,
            "head_to_head": u.head_to_head,
            "clocks": u.clocks,
            "result": u.result,
            "status": u.status,
        }
    return {"moves": moves, "white_trace": wt, "black_trace": bt, "seq": seq, **cur}


def expect(state: schema.BoardState) -> dict[str, object]:
    return {
        k: getattr(state, k)
        for k in (
            "moves",
            "white_trace",
            "black_trace",
            "seq",
            "fen",
            "eval",
            "white_perceived",
            "black_perceived",
            "white_algorithm4",
            "black_algorithm4",
            "head_to_head",
            "clocks",
            "result",
            "status",
        )
    }


@pytest.mark.parametrize("calibrated", [False, True], ids=["algorithm4-only", "calibrated"])
def test_updates_folded_by_a_client_give_the_snapshot(calibrated: bool) -> None:
    t = Tournament(PAPER_ENGINE_RATING, model=toy_model() if calibrated else None)
    first = t.apply(snap(MOVES[:4]))
    bid = first.board_id
    assert bid is not None
    game = t.board(bid)
    start = convert.board_state(game, engine=ENGINE)
    core: list[BoardUpdate] = []

    def evaluate(pick: str) -> None:
        reqs = t.pending()
        chosen = reqs if pick == "all" else [r for r in reqs if r.priority == 0]
        for r in chosen:
            core.extend(t.record_eval(r.board_id, r.ply, r.fen, ev_of(r.fen)))

    evaluate("latest")
    core.extend(t.apply(snap(MOVES[:10])).updates)
    evaluate("latest")
    evaluate("all")
    core.extend(t.apply(snap(MOVES[:12])).updates)
    evaluate("latest")
    # a correction: 4...O-O rewritten as 4...Ne4, then the right moves again
    core.extend(t.apply(snap([*MOVES[:7], "Ne4", "Qc2"])).updates)
    evaluate("latest")
    core.extend(t.apply(snap(MOVES[:16], result="*")).updates)
    evaluate("all")
    # the operator fixes the clock of an old move
    fixed = t.apply(snap(MOVES[:16], clocks=(None, None, 7133)))
    assert [(u.kind, u.ply.ply if u.ply else None) for u in fixed.updates] == [("clock", 3)]
    core.extend(fixed.updates)
    core.extend(t.apply(snap(MOVES, result="1-0")).updates)
    evaluate("all")
    wire = [convert.update(u) for u in core]
    assert [u.seq for u in wire] == list(range(start.seq + 1, start.seq + 1 + len(wire)))
    final = convert.board_state(game, engine=ENGINE)
    assert fold(start, wire) == expect(final)
    assert any(u.truncate_to == 7 for u in wire)
    assert final.status == "finished" and final.result == "1-0"
    assert all(p.gain is not None and p.eval is not None for p in final.moves)
    assert final.white_algorithm4 is not None and final.white_algorithm4.moves == 10
    assert all(p.algorithm4 is not None for p in final.white_trace)
    if calibrated:
        assert final.white_perceived is not None and final.white_perceived.model == "toy"
        assert [p.early for p in final.black_trace] == [True] * 4 + [False] * 6
        assert all(p.rating is not None for p in final.black_trace)
    else:
        assert final.white_perceived is None
        assert all(p.rating is None and p.early for p in final.black_trace)


def test_board_state_fields() -> None:
    t = Tournament(PAPER_ENGINE_RATING)
    bid = t.apply(snap(MOVES[:6])).board_id
    assert bid is not None
    for r in t.pending():
        t.record_eval(r.board_id, r.ply, r.fen, ev_of(r.fen, wdl=r.ply == 6))
    game = t.board(bid)
    state = convert.board_state(game, engine=ENGINE)
    assert state.board_id == "lcc-r16-b1"
    assert (state.tournament, state.round, state.board) == ("World Championship", "16", 1)
    assert state.white.title == "GM" and state.black.rating == 2725
    assert state.start_fen is None and state.status == "live" and state.result == "*"
    assert state.engine == ENGINE and state.engine_rating == PAPER_ENGINE_RATING
    assert state.seq == game.seq and state.errors == 0
    assert [m.san for m in state.moves] == MOVES[:6]
    assert [m.color for m in state.moves[:2]] == ["white", "black"]
    assert state.moves[0].uci == "d2d4" and state.moves[0].clock == 7200
    assert state.clocks == schema.Clocks(white=7160, black=7150, running="white")
    # Engine WDL is passed through; otherwise the win-chance model fills it in.
    assert state.eval is not None and state.eval.wdl == schema.Wdl(win=300, draw=500, loss=200)
    m1 = state.moves[0].eval
    assert m1 is not None and m1.wdl is not None
    assert (m1.wdl.win, m1.wdl.draw, m1.wdl.loss) == wdl_from_cp(m1.cp)
    # Best moves are shown in SAN.
    board = chess.Board(game.fen_at(1))
    uci = sorted(m.uci() for m in board.legal_moves)[0]
    assert m1.best == board.san(chess.Move.from_uci(uci))
    assert len(state.white_trace) == 3 and len(state.black_trace) == 3
    assert state.white_algorithm4 is not None and state.white_algorithm4.moves == 3
    assert state.white_perceived is None  # no calibrated model given
    assert state.head_to_head is not None
    assert state.head_to_head.white_expected + state.head_to_head.black_expected == 1.0
    # Round trip through JSON, as the server sends it.
    again = schema.Snapshot.model_validate_json(schema.Snapshot(state=state).model_dump_json())
    assert again.state == state


def test_summary_and_custom_start() -> None:
    t = Tournament(PAPER_ENGINE_RATING)
    fen = "8/8/4k3/8/8/3K4/4P3/8 w - - 0 1"
    bid = t.apply(snap(["e4", "Kd6"], initial_fen=fen, clocks=())).board_id
    assert bid is not None
    game = t.board(bid)
    summary = convert.board_summary(game)
    assert summary.plies == 2 and summary.eval is None and summary.white_perceived is None
    assert summary.white_algorithm4 is None
    state = convert.board_state(game, engine=ENGINE)
    assert state.start_fen == fen and state.clocks.white is None
    assert convert.best_san("e2e5", fen) is None  # not legal there: dropped, no crash
    assert convert.best_san(None, fen) is None


def test_wire_json_of_both_ratings() -> None:
    """The JSON a client gets: `perceived` (calibrated) beside `algorithm4`."""
    t = Tournament(PAPER_ENGINE_RATING, model=toy_model())
    bid = t.apply(snap(MOVES[:12])).board_id
    assert bid is not None
    core: list[BoardUpdate] = []
    for r in t.pending():
        core.extend(t.record_eval(r.board_id, r.ply, r.fen, ev_of(r.fen)))
    game = t.board(bid)
    state = convert.board_state(game, engine=ENGINE).model_dump(mode="json")
    assert set(state["white_perceived"]) == {
        "rating",
        "low",
        "high",
        "moves",
        "early",
        "model",
        "range_low",
        "range_high",
        "in_range",
    }
    assert set(state["white_algorithm4"]) == {
        "rating",
        "low",
        "high",
        "difference",
        "expected",
        "moves",
        "bounded",
    }
    point = state["white_trace"][-1]
    assert set(point) == {"ply", "rating", "low", "high", "early", "algorithm4"}
    assert set(point["algorithm4"]) == {"rating", "low", "high", "difference", "bounded"}
    a4 = game.perceived("white")
    assert a4 is not None and point["algorithm4"]["rating"] == a4.rating
    assert state["white_perceived"]["rating"] == point["rating"]
    upd = convert.update(core[-1]).model_dump(mode="json")
    for key in ("white_perceived", "black_perceived", "white_algorithm4", "black_algorithm4"):
        assert upd[key] == state[key]
    assert upd["white_points"] + upd["black_points"] == [state["black_trace"][-1]]
    summary = convert.board_summary(game).model_dump(mode="json")
    assert summary["black_perceived"] == state["black_perceived"]
    assert summary["black_algorithm4"] == state["black_algorithm4"]


def test_error_count_reaches_the_wire() -> None:
    t = Tournament(PAPER_ENGINE_RATING)
    a = t.apply(snap([*MOVES[:3], "Qxf7#"]))
    assert a.board_id is not None
    state = convert.board_state(t.board(a.board_id), engine=ENGINE)
    assert state.errors == 1 and len(state.moves) == 3


@pytest.mark.parametrize(
    ("ranged", "white_rating", "black_rating", "expected"),
    [
        (True, 1800, 2440, (True, True)),  # both inside (the ends count as inside)
        (True, 2812, 839, (False, False)),  # above and below the range
        (True, None, 2100, (None, True)),  # White unrated
        (False, 2812, 1800, (None, None)),  # a model without a range (an old file)
    ],
    ids=["inside", "outside", "unrated", "no-range"],
)
def test_in_range_from_the_official_rating(
    ranged: bool,
    white_rating: int | None,
    black_rating: int | None,
    expected: tuple[bool | None, bool | None],
) -> None:
    """``in_range`` says whether the player's official rating lies in the model's
    validated range; the snapshot, the summary and the updates agree on it."""
    model = dataclasses.replace(toy_model(), rating_low=840.0, rating_high=2440.0)
    t = Tournament(PAPER_ENGINE_RATING, model=model if ranged else toy_model())
    players = {
        "white": PlayerInfo("White, Player", rating=white_rating),
        "black": PlayerInfo("Black, Player", rating=black_rating),
    }
    bid = t.apply(snap(MOVES[:12], **players)).board_id
    assert bid is not None
    core: list[BoardUpdate] = []
    for r in t.pending():
        core.extend(t.record_eval(r.board_id, r.ply, r.fen, ev_of(r.fen)))
    game = t.board(bid)
    state = convert.board_state(game, engine=ENGINE)
    summary = convert.board_summary(game)
    upd = convert.update(core[-1])
    for color, want in zip(("white", "black"), expected, strict=True):
        p = getattr(state, f"{color}_perceived")
        assert p is not None
        assert p.in_range is want
        if ranged:
            assert (p.range_low, p.range_high) == (840.0, 2440.0)
        else:
            assert p.range_low is None and p.range_high is None
        assert getattr(summary, f"{color}_perceived") == p
        assert getattr(upd, f"{color}_perceived") == p
        # the estimate itself is still sent: the overlay decides what to show
        c = game.calibrated(color)
        assert c is not None and p.rating == c.rating and not p.early
