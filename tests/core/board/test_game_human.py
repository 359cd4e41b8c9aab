"""What a board shows people: the human W/D/L beside the engine's, and each
player's form (official rating updated by his moves) beside his perceived rating."""

from __future__ import annotations

import zlib

from toy_human import forward_model, toy_wdl_model

from livegain.core.board.registry import BoardRegistry
from livegain.core.board.updates import BoardModels
from livegain.core.evaluation import Evaluation
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.core.snapshot import GameSnapshot, PlayerInfo
from livegain.core.wdl import engine_wdl, position_wdl
from livegain.publish import convert

MOVES = ["e4", "e5", "Nf3", "d6", "d4", "Bg4", "dxe5", "Bxf3", "Qxf3", "dxe5", "Bc4", "Nf6"]
MOVES += ["Qb3", "Qe7", "Nc3", "c6", "Bg5", "b5", "Nxb5", "cxb5", "Bxb5+", "Nbd7"]
WHITE = PlayerInfo("Morphy, Paul", rating=2450)
BLACK = PlayerInfo("Isouard, Count", rating=2100)
FMODEL = forward_model()
HUMAN = toy_wdl_model()


def ev_of(fen: str) -> Evaluation:
    cp = zlib.crc32(fen.encode()) % 401 - 200
    return Evaluation(cp=cp, depth=6, best=None, wdl=(100 + cp // 2, 600, 300 - cp // 2))


def snap(moves: list[str], **kw: object) -> GameSnapshot:
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


def evaluate_all(t: BoardRegistry) -> None:
    while reqs := t.pending():
        r = reqs[0]
        t.record_eval(r.board_id, r.ply, r.fen, ev_of(r.fen))


def board(moves: list[str], **kw: object) -> tuple[BoardRegistry, str]:
    t = BoardRegistry(PAPER_ENGINE_RATING, model=FMODEL, wdl_model=HUMAN)
    bid = t.apply(snap(moves, **kw)).board_id
    assert bid is not None
    evaluate_all(t)
    return t, bid


def test_form_is_null_without_a_rating_and_moves_with_the_moves() -> None:
    t, bid = board(MOVES[:6], black=PlayerInfo("Isouard, Count"))
    g = t.board(bid)
    assert g.scoring.form("black") is None  # no official rating: no form
    assert g.scoring.calibrated("black") is not None  # but a perceived rating
    early = g.scoring.form("white")
    assert early is not None and early.moves == 3
    t.apply(snap(MOVES[:20], black=PlayerInfo("Isouard, Count")))
    evaluate_all(t)
    later = g.scoring.form("white")
    assert later is not None and later.moves == 10
    assert later.rating != early.rating
    assert later.high - later.low < early.high - early.low  # more moves, narrower
    # O(1): form is the profile's running sum through the model
    moves, centi = g.scoring.profile_sum("white")
    assert FMODEL.form([(moves, centi)], 2450.0) == later
    assert g.scoring.trace("white")[-1].form == later


def test_rollback_restores_form_exactly() -> None:
    t, bid = board(MOVES[:20])
    g = t.board(bid)
    before = g.scoring.form("white")
    a = t.apply(snap(MOVES[:9]))
    assert [(u.kind, u.truncate_to) for u in a.updates] == [("truncate", 9)]
    ref, _ = board(MOVES[:9])
    r = ref.board(bid)
    assert a.updates[0].white_form == r.scoring.form("white") != before
    assert a.updates[0].black_form == r.scoring.form("black")
    assert g.scoring.trace("white") == r.scoring.trace("white") and g.scoring.trace(
        "black"
    ) == r.scoring.trace("black")
    assert g.state() == r.state()
    # a correction, then the real game again: as a clean replay
    t.apply(snap([*MOVES[:9], "Nc6", "Bb5", "a6"]))
    evaluate_all(t)
    t.apply(snap(MOVES[:20]))
    evaluate_all(t)
    ref, _ = board(MOVES[:20])
    assert g.state() == ref.board(bid).state()
    assert g.scoring.form("white") == before
    mine = convert.board_state(g, engine="e").model_dump(exclude={"seq"})
    assert mine == convert.board_state(ref.board(bid), engine="e").model_dump(exclude={"seq"})


def test_a_rating_that_arrives_late_gives_the_trace_its_forms() -> None:
    t, bid = board(MOVES[:12], white=PlayerInfo("Morphy, Paul"))
    g = t.board(bid)
    assert g.scoring.form("white") is None and all(p.form is None for p in g.scoring.trace("white"))
    a = t.apply(snap(MOVES[:12]))
    assert a.info_changed
    ref, _ = board(MOVES[:12])
    assert g.scoring.trace("white") == ref.board(bid).scoring.trace("white")
    assert g.scoring.form("white") == ref.board(bid).scoring.form("white") is not None


def test_shown_wdl_is_the_human_model_s_and_the_engine_s_stays_beside() -> None:
    t, bid = board(MOVES[:10])
    g = t.board(bid)
    for ply in range(0, 11):
        ev = g.eval_at(ply)
        assert ev is not None
        white_to_move = g.fen_at(ply).split()[1] == "w"
        assert g.wdl_at(ply) == HUMAN.wdl(ev, ply, 2450.0, 2100.0, white_to_move)
        assert g.engine_wdl_at(ply) == engine_wdl(ev) == position_wdl(ev)
    assert g.current_wdl == g.wdl_at(10) and g.start_wdl == HUMAN.prior.wdl(2450.0, 2100.0)
    info = g.moves()[4]
    assert info.wdl == g.wdl_at(5) and info.engine_wdl == g.engine_wdl_at(5)
    # without a model: as before, the engine's own
    plain = BoardRegistry(PAPER_ENGINE_RATING)
    pid = plain.apply(snap(MOVES[:10])).board_id
    assert pid is not None
    evaluate_all(plain)
    p = plain.board(pid)
    assert p.current_wdl == p.engine_wdl_at(10) == position_wdl(p.eval_at(10) or ev_of(""))
    assert p.wdl_model is None


def test_engine_wdl_is_none_when_the_engine_gives_none() -> None:
    assert engine_wdl(Evaluation(cp=30, depth=6)) is None
    assert engine_wdl(Evaluation(cp=30, depth=6, wdl=(1, 1, 0))) == (500, 500, 0)


def test_models_chosen_per_board_from_the_snapshot() -> None:
    """``choose_models`` picks each board's models from its snapshots; a tag
    that changes the choice switches the board, its ledger rebuilt as a
    clean board with those models would have it."""
    rapid = toy_wdl_model("online-rapid", "toy-rapid")

    def choose(s: GameSnapshot) -> BoardModels:
        tc = dict(s.tags).get("TimeControl")
        if tc == "600+5":
            return BoardModels(None, rapid, wdl_fallback=False, wdl_why="rapid")
        return BoardModels(FMODEL, HUMAN, wdl_fallback=tc is None, wdl_why="classical")

    t = BoardRegistry(PAPER_ENGINE_RATING, choose_models=choose)
    bid = t.apply(snap(MOVES[:8])).board_id
    assert bid is not None
    evaluate_all(t)
    g = t.board(bid)
    assert g.wdl_model is HUMAN and g.wdl_fallback and g.model is FMODEL
    assert g.scoring.calibrated("white") is not None
    a = t.apply(snap(MOVES[:8], tags=(("TimeControl", "600+5"),)))
    assert a.info_changed
    assert g.wdl_model is rapid and not g.wdl_fallback and g.model is None
    assert g.scoring.calibrated("white") is None and g.scoring.perceived("white") is not None
    ev = g.eval_at(8)
    assert ev is not None and g.current_wdl == rapid.wdl(ev, 8, 2450.0, 2100.0, True)
    t.apply(snap(MOVES[:8], tags=(("TimeControl", "5400+30"),)))
    ref, _ = board(MOVES[:8], tags=(("TimeControl", "5400+30"),))
    assert g.state() == ref.board(bid).state()
    assert g.wdl_model is HUMAN and not g.wdl_fallback
