"""One board's own result: :meth:`BoardGame.apply`, ``offer`` and ``tick`` each
say what they did in one :class:`Applied`, which the registry passes on."""

from __future__ import annotations

from core.board.test_game import BLACK, OPERA, WHITE, snap
from core.board.test_game_sources import lcc, mirror
from livegain.core.board.board import BoardGame
from livegain.core.board.registry import BoardRegistry
from livegain.core.board.updates import Applied
from livegain.core.rating import PAPER_ENGINE_RATING


def test_a_board_says_what_a_snapshot_did() -> None:
    g = BoardGame("b1", "test", PAPER_ENGINE_RATING)
    a = g.apply(snap(OPERA[:3]))
    assert isinstance(a, Applied) and a.board_id == "b1"
    assert a.info_changed and not a.new_board and a.takeover is None
    assert [u.kind for u in a.updates] == ["move"] * 3 and a.errors == ()
    assert (g.white, g.black, g.plies) == (WHITE, BLACK, 3)
    # The same snapshot again changes nothing; a takeback drops a move.
    assert g.apply(snap(OPERA[:3])) == Applied("b1")
    a = g.apply(snap(OPERA[:2]))
    assert [(u.kind, u.truncate_to) for u in a.updates] == [("truncate", 2)]
    assert not a.info_changed and g.plies == 2
    # An unknown result is an error once, and the '*' it is taken as changes nothing.
    a = g.apply(snap(OPERA[:2], result="abandoned?"))
    assert a.updates == () and len(a.errors) == 1 and g.errors == 1
    (err,) = g.apply(snap(OPERA[:2], result="abandoned!")).errors
    assert err.message.startswith("unknown result")


def test_the_registry_passes_the_boards_result_on() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    first = t.apply(lcc(4, 0.0))
    assert first.new_board and first.info_changed and first.board_id is not None
    g = t.board(first.board_id)
    assert [u.seq for u in first.updates] == [1, 2, 3, 4] and g.seq == 4
    # A backup's snapshot ahead waits (nothing done), then a tick hands the board over.
    assert t.apply(mirror(6, 10.0)) == Applied(first.board_id)
    (taken,) = t.tick(40.0)
    assert taken.takeover == "mirror" and not taken.new_board
    assert [u.ply.ply for u in taken.updates if u.ply is not None] == [5, 6]
    assert g.source_active == "mirror" and g.tick(1e9) is None
