"""Limits on what one game and one tournament may hold, and the correction of
the last evaluated ply (a fixed case of what the property tests find by chance)."""

from __future__ import annotations

from livegain.core.board.registry import BoardRegistry
from livegain.core.evaluation import Evaluation
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.core.snapshot import PlayerInfo

from .test_game import MODEL, OPERA, clean_replay, ev_of, evaluate_all, fens_of, snap, state_json

# -- correcting the last evaluated ply ------------------------------------------------


def test_correcting_the_last_evaluated_ply() -> None:
    """Every ply is evaluated; then the feed replaces the last one. Its old
    evaluation must go, the ledger must drop that ply, the new position must be
    asked for first, and once evaluated the board equals a clean replay."""
    t = BoardRegistry(PAPER_ENGINE_RATING, model=MODEL)
    bid = t.apply(snap(OPERA[:12])).board_id
    assert bid is not None
    evaluate_all(t)
    g = t.board(bid)
    assert g.evaluated_plies == 12 and g.ledger.plies == 12
    old_fen = g.fen
    old_eval = g.current_eval
    assert old_eval is not None
    before = g.scoring.calibrated("black")

    corrected = [*OPERA[:11], "Nc6"]  # ply 12 was 6...Nf6
    a = t.apply(snap(corrected))
    assert [(u.kind, u.truncate_to) for u in a.updates] == [("truncate", 11), ("move", None)]
    move = a.updates[1]
    assert move.ply is not None and move.ply.ply == 12 and move.ply.san == "Nc6"
    assert move.ply.eval is None and move.ply.gain is None and move.eval is None
    new_fen = fens_of(corrected)[-1]
    assert g.fen == new_fen != old_fen
    # The stale evaluation is gone; the ledger holds the 11 plies that stay.
    assert g.eval_at(12) is None and g.current_eval is None
    assert g.evaluated_plies == 11 and g.ledger.plies == 11 and len(g.ledger.gains) == 11
    assert len(g.scoring.trace("black")) == 5
    ref11, _ = clean_replay(snap(OPERA[:11]), MODEL)
    assert g.scoring.calibrated("black") == ref11.board(bid).scoring.calibrated("black") != before
    # The new position is asked for, first; the old one is not.
    reqs = t.pending()
    assert [(r.board_id, r.ply, r.fen, r.priority) for r in reqs] == [(bid, 12, new_fen, 0)]
    # A late answer for the replaced position changes nothing.
    assert t.record_eval(bid, 12, old_fen, old_eval) == []
    assert g.current_eval is None and g.evaluated_plies == 11
    # Evaluated again: exactly what a clean replay of the corrected game gives.
    ups = evaluate_all(t)
    assert [u.kind for u in ups] == ["ply"]
    assert ups[0].ply is not None and ups[0].ply.gain is not None
    ref, ref_bid = clean_replay(snap(corrected), MODEL)
    assert state_json(t, bid) == state_json(ref, ref_bid)
    assert g.state() == ref.board(ref_bid).state()


# -- limits ---------------------------------------------------------------------------


def test_game_longer_than_max_plies_is_refused() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING, max_plies=10)
    a = t.apply(snap(OPERA[:11]))
    assert a.board_id is None and a.updates == () and t.boards == {}
    (err,) = a.errors
    assert err.source == "test" and "11 plies" in err.message and "max_plies" in err.message
    assert "Morphy, Paul - Duke Karl / Count Isouard" in err.message and "board 1" in err.message
    assert t.refused == 1 and list(t.errors) == [err]
    # A board that exists keeps what it had; the refusal is counted on it.
    bid = t.apply(snap(OPERA[:8])).board_id
    assert bid is not None
    evaluate_all(t)
    g = t.board(bid)
    before = state_json(t, bid)
    a = t.apply(snap(OPERA[:12]))
    assert a.board_id == bid and a.updates == () and len(a.errors) == 1
    assert g.plies == 8 and g.errors == 1
    assert state_json(t, bid) == {**before, "errors": 1}
    assert t.refused == 2 and t.pending() == []
    # Within the limit again: it goes on from where it was.
    a = t.apply(snap(OPERA[:10]))
    assert [u.ply.ply for u in a.updates if u.ply] == [9, 10] and g.plies == 10


def test_board_beyond_max_boards_is_refused() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING, max_boards=2)
    ids = [
        t.apply(snap(OPERA[:2], board=k, white=PlayerInfo(f"W{k}"), black=PlayerInfo(f"B{k}")))
        for k in (1, 2, 3)
    ]
    assert ids[0].board_id and ids[1].board_id and ids[2].board_id is None
    (err,) = ids[2].errors
    assert "max_boards" in err.message and "'W3 - B3'" in err.message and "board 3" in err.message
    assert len(t.boards) == 2 and t.refused == 1
    # The boards already there still take moves.
    a = t.apply(snap(OPERA[:4], board=2, white=PlayerInfo("W2"), black=PlayerInfo("B2")))
    assert a.board_id == ids[1].board_id and len(a.updates) == 2 and a.errors == ()


def test_default_limits_are_generous() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    moves = ["Nf3", "Nf6", "Ng1", "Ng8"] * 250  # 1000 plies: the default limit
    a = t.apply(snap(moves))
    assert a.board_id is not None and a.errors == () and t.board(a.board_id).plies == 1000
    assert t.apply(snap([*moves, "e4"])).errors != ()


# -- pending positions, read lazily ------------------------------------------------------


def test_pending_read_lazily_equals_the_full_list() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    for k, n in ((1, 7), (2, 3), (3, 0), (4, 12)):
        w, b = PlayerInfo(f"W{k}"), PlayerInfo(f"B{k}")
        t.apply(snap(OPERA[:n], board=k, white=w, black=b))
    bids = list(t.boards)
    g = t.board(bids[3])
    t.record_eval(bids[3], 12, g.fen, ev_of(g.fen))  # board 4's latest is known
    full = t.pending()
    keys = [(r.board_id, r.ply, r.priority) for r in full]
    # Latest positions first (board order), then the backfill interleaved by rank.
    assert keys[:3] == [(bids[0], 7, 0), (bids[1], 3, 0), (bids[2], 0, 0)]
    assert keys[3:6] == [(bids[0], 0, 1), (bids[1], 0, 1), (bids[3], 0, 1)]
    assert [r.priority for r in full] == sorted(r.priority for r in full)
    assert list(t.iter_pending()) == full == [*t.iter_latest(), *t.iter_backfill()]
    assert t.pending(limit=4) == full[:4]
    assert t.pending_count() == len(full) == 8 + 4 + 1 + 12
    # Evaluations change what is pending; the cached view follows.
    r = full[0]
    t.record_eval(r.board_id, r.ply, r.fen, Evaluation(cp=10))
    assert t.pending_count() == len(t.pending()) == len(full) - 1
    assert r not in t.pending()


def test_take_changed_names_boards_that_gained_positions() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    a = t.apply(snap(OPERA[:4])).board_id
    b = t.apply(snap(["d4"], board=2, white=PlayerInfo("A"), black=PlayerInfo("B"))).board_id
    assert t.take_changed() == [a, b] and t.take_changed() == []
    evaluate_all(t)
    assert t.take_changed() == []  # evaluations add no position
    t.apply(snap(OPERA[:4]))  # the same again: nothing
    assert t.take_changed() == []
    t.apply(snap(OPERA[:5]))
    assert t.take_changed() == [a]
