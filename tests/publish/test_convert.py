"""Core state -> wire schema: snapshots, summaries, and updates that a client can fold."""

from __future__ import annotations

import zlib

import chess
import pytest
from toy_human import BELOW, forward_model, toy_wdl_model

from livegain.core.board.registry import BoardRegistry
from livegain.core.board.updates import BoardUpdate
from livegain.core.evaluation import Evaluation
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.core.snapshot import GameSnapshot, PlayerInfo
from livegain.core.wdl import wdl_from_cp
from livegain.publish import convert, schema
from livegain.publish.entry import summary_of

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
    t = BoardRegistry(PAPER_ENGINE_RATING, model=toy_model() if calibrated else None)
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
    # the operator fixes the clock of an old move: it is sent again, and so is
    # the same player's next move, whose time spent it changes
    fixed = t.apply(snap(MOVES[:16], clocks=(None, None, 7133)))
    assert [(u.kind, u.ply.ply if u.ply else None) for u in fixed.updates] == [
        ("clock", 3),
        ("clock", 5),
    ]
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
    t = BoardRegistry(PAPER_ENGINE_RATING)
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
    # no TimeControl tag: the base is the first clocks' (2 h: classical, 5 min)
    assert state.clocks == schema.Clocks(
        white=7160, black=7150, running="white", time_trouble_below=300
    )
    # no base time for the first moves; then the clock's difference (no increment known)
    assert [m.spent for m in state.moves[:4]] == [None, None, 20, 20]
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
    t = BoardRegistry(PAPER_ENGINE_RATING)
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
    t = BoardRegistry(PAPER_ENGINE_RATING, model=toy_model())
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
        "scale",
        "label",
        "range_low",
        "range_high",
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
    assert set(point) == {"ply", "rating", "low", "high", "early", "form", "algorithm4"}
    assert set(point["algorithm4"]) == {"rating", "low", "high", "difference", "bounded"}
    a4 = game.scoring.perceived("white")
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
    t = BoardRegistry(PAPER_ENGINE_RATING)
    a = t.apply(snap([*MOVES[:3], "Qxf7#"]))
    assert a.board_id is not None
    state = convert.board_state(t.board(a.board_id), engine=ENGINE)
    assert state.errors == 1 and len(state.moves) == 3


@pytest.mark.parametrize(
    ("white_rating", "black_rating", "expected"),
    [
        (2400, 2800, (None, None)),  # both inside (the ends count as inside)
        (2900, 1800, ("extrapolated", BELOW)),  # above and below the range
        (None, 2100, (None, None)),  # White unrated: his estimate's own label
    ],
    ids=["inside", "outside", "unrated"],
)
def test_label_beside_every_number(
    white_rating: int | None,
    black_rating: int | None,
    expected: tuple[str | None, str | None],
) -> None:
    """Every player gets a number; ``label`` says when his official rating
    lies outside the model's validated range; the snapshot, the summary and
    the updates agree, and ``form`` carries the same label."""
    t = BoardRegistry(PAPER_ENGINE_RATING, model=forward_model())
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
        assert p.label == want and p.scale == "fide"
        assert (p.range_low, p.range_high) == (2000.0, 2800.0)
        assert getattr(summary, f"{color}_perceived") == p
        assert getattr(upd, f"{color}_perceived") == p
        c = game.scoring.calibrated(color)
        assert c is not None and p.rating == c.rating and not p.early
        form = getattr(state, f"{color}_form")
        if getattr(game, color).rating is None:
            assert form is None  # no official rating: no form
        else:
            assert form is not None and form.label == want
            assert getattr(upd, f"{color}_form") == form
            assert getattr(summary, f"{color}_form") == form


def test_form_on_the_wire_follows_the_moves() -> None:
    """``white_form``/``black_form``: the official rating moved by this game's
    moves, in snapshots, updates and trace points; null without a rating."""
    t = BoardRegistry(PAPER_ENGINE_RATING, model=forward_model())
    players = {
        "white": PlayerInfo("White, Player", rating=2500),
        "black": PlayerInfo("Black, Player"),
    }
    bid = t.apply(snap(MOVES[:12], **players)).board_id
    assert bid is not None
    ups: list[schema.Update] = []
    for r in t.pending():
        ups.extend(convert.update(u) for u in t.record_eval(r.board_id, r.ply, r.fen, ev_of(r.fen)))
    game = t.board(bid)
    state = convert.board_state(game, engine=ENGINE)
    form = game.scoring.form("white")
    assert form is not None and state.white_form is not None
    assert state.white_form.rating == form.rating != 2500.0
    assert state.white_form.low < form.rating < state.white_form.high
    assert state.black_form is None and state.black_perceived is not None
    assert ups[-1].white_form == state.white_form and ups[-1].black_form is None
    last = state.white_trace[-1]
    assert last.form is not None and last.form.rating == form.rating
    assert all(p.form is None for p in state.black_trace)
    # the updates' trace points are the snapshot's
    points = [p for u in ups for p in u.white_points]
    assert points == state.white_trace


def test_eval_carries_the_human_wdl_beside_the_engine_s() -> None:
    """With a human W/D/L model, ``wdl`` is the model's (from the evaluation,
    the ply, the side to move and the official ratings), ``engine_wdl`` the
    engine's own, ``wdl_model`` names the model; without one ``wdl`` stays the
    engine's and ``wdl_model`` is null."""
    wdl_model = toy_wdl_model()
    t = BoardRegistry(PAPER_ENGINE_RATING, wdl_model=wdl_model)
    bid = t.apply(snap(MOVES[:6])).board_id
    assert bid is not None
    ups: list[schema.Update] = []
    for r in t.pending():
        ev = ev_of(r.fen, wdl=True)
        ups.extend(convert.update(u) for u in t.record_eval(r.board_id, r.ply, r.fen, ev))
    game = t.board(bid)
    state = convert.board_state(game, engine=ENGINE)
    assert state.eval is not None and state.eval.wdl is not None
    ev = ev_of(game.fen, wdl=True)
    want = wdl_model.wdl(ev, 6, 2812.0, 2725.0, True)
    assert (state.eval.wdl.win, state.eval.wdl.draw, state.eval.wdl.loss) == want
    assert state.eval.engine_wdl == schema.Wdl(win=300, draw=500, loss=200)
    assert state.eval.wdl_model == "toy-human" and state.eval.wdl_fallback is False
    m3 = state.moves[2].eval
    assert m3 is not None and m3.wdl is not None and m3.wdl_model == "toy-human"
    ev3 = ev_of(game.fen_at(3), wdl=True)
    assert (m3.wdl.win, m3.wdl.draw, m3.wdl.loss) == wdl_model.wdl(ev3, 3, 2812.0, 2725.0, False)
    assert state.start_eval is not None and state.start_eval.wdl is not None
    prior = wdl_model.prior.wdl(2812.0, 2725.0)  # before any move: the ratings alone
    assert (state.start_eval.wdl.win, state.start_eval.wdl.draw) == prior[:2]
    assert ups[-1].eval == state.eval
    assert convert.board_summary(game).eval == state.eval
    # without a model: the engine's own W/D/L is shown, and named as no model
    plain = BoardRegistry(PAPER_ENGINE_RATING)
    pid = plain.apply(snap(MOVES[:6])).board_id
    assert pid is not None
    for r in plain.pending():
        plain.record_eval(r.board_id, r.ply, r.fen, ev_of(r.fen, wdl=True))
    other = convert.board_state(plain.board(pid), engine=ENGINE).eval
    assert other is not None and other.wdl_model is None
    assert other.wdl == other.engine_wdl == schema.Wdl(win=300, draw=500, loss=200)


@pytest.mark.parametrize("calibrated", [False, True])
def test_a_board_summary_read_from_the_game_is_the_summary_of_its_state(calibrated: bool) -> None:
    """The board list reads each line from the game (convert.board_summary),
    not from the whole state: the two give the same line."""
    t = BoardRegistry(PAPER_ENGINE_RATING, model=toy_model() if calibrated else None)
    bid = t.apply(snap(MOVES[:12])).board_id
    assert bid is not None
    for r in t.pending():
        t.record_eval(r.board_id, r.ply, r.fen, ev_of(r.fen, wdl=r.ply % 3 == 0))
    game = t.board(bid)
    state = convert.board_state(game, engine=ENGINE)
    assert convert.board_summary(game) == summary_of(state)
    t.apply(snap(MOVES, result="1-0"))
    state = convert.board_state(game, engine=ENGINE)
    assert convert.board_summary(game) == summary_of(state)
