"""One game from several sources of one event group is one board, driven by one source.

The preferred source (lowest ``priority``) drives the board; another source of
the group takes over when it has shown more (or a conflicting list) for
``takeover_after`` seconds while the driving source changed nothing. Time is
passed in (``now``, or the snapshot's ``received_at``): the core has no clock.
"""

from __future__ import annotations

from dataclasses import replace

from core.board.test_game import ENGINE, OPERA, evaluate_all
from livegain.core.board.registry import BoardRegistry
from livegain.core.board.updates import Applied, BoardUpdate
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.core.snapshot import GameSnapshot, PlayerInfo
from livegain.publish import convert

# The same players as two relays spell them, with the same FIDE ids.
LCC_WHITE = PlayerInfo("Morphy, Paul", fide_id="100")
LCC_BLACK = PlayerInfo("Duke Karl / Count Isouard", fide_id="200")
PGN_WHITE = PlayerInfo("Paul Morphy", fide_id="100", rating=2690)
PGN_BLACK = PlayerInfo("Isouard, Count", fide_id="200")


def lcc(n: int, at: float | None = None, **kw: object) -> GameSnapshot:
    """The preferred source: LiveChess Cloud, round 1 board 3, its own game id."""
    args: dict[str, object] = dict(
        source="lcc",
        white=LCC_WHITE,
        black=LCC_BLACK,
        moves=tuple(OPERA[:n]),
        game_id="lcc:t:1:3",
        round="1",
        board=3,
        group="paris",
        priority=0,
        received_at=at,
    )
    args.update(kw)
    return GameSnapshot(**args)  # type: ignore[arg-type]


def mirror(n: int, at: float | None = None, **kw: object) -> GameSnapshot:
    """The backup: a PGN mirror of the same event, other names, numbering and id."""
    args: dict[str, object] = dict(
        source="mirror",
        white=PGN_WHITE,
        black=PGN_BLACK,
        moves=tuple(OPERA[:n]),
        game_id="8812",
        round="1.7",
        group="paris",
        priority=1,
        takeover_after=30.0,
        received_at=at,
    )
    args.update(kw)
    return GameSnapshot(**args)  # type: ignore[arg-type]


def state(t: BoardRegistry, bid: str) -> dict[str, object]:
    s = convert.board_state(t.board(bid), engine=ENGINE).model_dump(mode="json")
    for key in ("board_id", "seq", "errors"):
        s.pop(key)
    return s


def plies_shown(updates: list[BoardUpdate]) -> list[int]:
    return [u.ply.ply for u in updates if u.kind == "move" and u.ply is not None]


def test_the_same_game_from_two_sources_is_one_board() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    a = t.apply(lcc(6, 0.0))
    b = t.apply(mirror(6, 1.0))
    assert a.board_id is not None and b.board_id == a.board_id
    assert len(t.boards) == 1 and not b.new_board and b.updates == ()
    g = t.board(a.board_id)
    assert g.source_active == "lcc" and g.sans == OPERA[:6]
    assert [s.source for s in g.source_status()] == ["lcc", "mirror"]
    # Outside the group (or without one), the same game stays a board of its own.
    other = t.apply(mirror(6, 2.0, source="elsewhere", group=None))
    assert other.new_board and len(t.boards) == 2


def test_a_backup_ahead_waits_then_takes_over_with_every_ply_once() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    shown: list[BoardUpdate] = []
    first = t.apply(lcc(10, 0.0))
    bid = first.board_id
    assert bid is not None
    shown += first.updates
    shown += evaluate_all(t)
    # The mirror is ahead, but the preferred source moved just now: the board waits.
    held = t.apply(mirror(14, 5.0))
    assert held.updates == () and held.takeover is None and held.errors == ()
    g = t.board(bid)
    assert g.plies == 10 and g.source_active == "lcc"
    assert t.tick(34.9) == []  # 29.9 s: not yet
    # The preferred source stays silent; the mirror's next move, 30 s after it went
    # ahead, takes the board over: the moves it has that the board lacks, once each.
    taken = t.apply(mirror(16, 35.0))
    assert taken.takeover == "mirror" and g.source_active == "mirror" and g.takeovers == 1
    shown += taken.updates
    assert [u.kind for u in taken.updates] == ["move"] * 6  # no truncate: nothing rolled back
    shown += evaluate_all(t)
    assert plies_shown(shown) == list(range(1, 17))
    assert g.sans == OPERA[:16]
    # Exactly what one source delivering the final game gives (names from the mirror).
    clean = BoardRegistry(PAPER_ENGINE_RATING)
    cid = clean.apply(mirror(16, group=None)).board_id
    assert cid is not None
    evaluate_all(clean)
    assert state(t, bid) == state(clean, cid)


def test_tick_hands_over_without_waiting_for_the_next_move() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    bid = t.apply(lcc(8, 0.0)).board_id
    assert bid is not None
    t.apply(mirror(9, 100.0))
    assert t.tick(129.0) == []
    (applied,) = t.tick(130.0)
    assert isinstance(applied, Applied) and applied.board_id == bid
    assert applied.takeover == "mirror" and plies_shown(list(applied.updates)) == [9]
    assert t.board(bid).plies == 9
    assert t.tick(200.0) == []  # nothing left to hand over


def test_a_driving_source_that_keeps_moving_is_not_replaced() -> None:
    """A mirror that polls faster is ahead now and then; each time the preferred
    source catches up, the wait starts again."""
    t = BoardRegistry(PAPER_ENGINE_RATING)
    bid = t.apply(lcc(4, 0.0)).board_id
    assert bid is not None
    for n in range(5, 20):
        now = 40.0 * n
        t.apply(mirror(n, now))  # the mirror sees each move first...
        t.apply(lcc(n, now + 20.0))  # ...the preferred source 20 s later
        assert t.tick(now + 29.0) == []
    g = t.board(bid)
    assert g.source_active == "lcc" and g.takeovers == 0 and g.plies == 19


def test_preferred_source_takes_the_board_back_when_it_is_not_behind() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    bid = t.apply(lcc(6, 0.0)).board_id
    assert bid is not None
    t.apply(mirror(10, 10.0))
    assert t.apply(mirror(12, 40.0)).takeover == "mirror"
    g = t.board(bid)
    # Back, but behind the board: it does not drive (that would take moves back).
    behind = t.apply(lcc(8, 41.0))
    assert behind.takeover is None and behind.updates == () and g.plies == 12
    # Caught up: the preferred source drives again; the moves are not shown twice.
    back = t.apply(lcc(13, 42.0))
    assert back.takeover == "lcc" and g.source_active == "lcc"
    assert plies_shown(list(back.updates)) == [13]
    assert g.sans == OPERA[:13] and g.takeovers == 2


def test_a_preferred_source_arriving_later_drives_at_once() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    b = t.apply(mirror(6, 0.0))
    assert b.board_id is not None and t.board(b.board_id).source_active == "mirror"
    a = t.apply(lcc(6, 1.0))
    assert a.board_id == b.board_id and a.takeover == "lcc"
    assert a.updates == ()  # the same moves: nothing to show again


def test_a_conflicting_backup_is_an_error_and_does_not_rewrite_the_board() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    bid = t.apply(lcc(10, 0.0)).board_id
    assert bid is not None
    wrong = [*OPERA[:8], "Bc4", "Qe7"]  # Bc4 was played at ply 11, not 9
    c = t.apply(mirror(0, 5.0, moves=tuple(wrong)))
    g = t.board(bid)
    assert c.updates == () and g.sans == OPERA[:10] and g.source_active == "lcc"
    (err,) = c.errors
    assert (err.board_id, err.source, err.ply, err.san) == (bid, "mirror", 9, "Bc4")
    assert "conflicts" in err.message and g.conflicts == 1 and g.errors == 1
    # The same conflict again is not counted again, nor is it while the board moves on.
    assert t.apply(mirror(0, 6.0, moves=(*wrong, "Qxf3"))).errors == ()
    t.apply(lcc(11, 20.0))
    assert g.conflicts == 1 and g.sans == OPERA[:11]
    # The preferred source then stops moving: after takeover_after the list it
    # conflicted with is taken as a correction (rolled back to the common prefix).
    assert t.tick(49.0) == []
    (taken,) = t.tick(50.0)
    assert taken.takeover == "mirror"
    assert taken.updates[0].kind == "truncate" and taken.updates[0].truncate_to == 8
    assert g.sans == [*wrong, "Qxf3"]


def test_a_conflicting_preferred_source_is_a_correction() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    bid = t.apply(mirror(10, 0.0)).board_id
    assert bid is not None
    fixed = (*OPERA[:6], "Nc3", "Nf6")
    a = t.apply(lcc(0, 1.0, moves=fixed))
    assert a.takeover == "lcc" and a.errors == ()
    assert a.updates[0].kind == "truncate" and a.updates[0].truncate_to == 6
    assert t.board(bid).sans == list(fixed)


def test_a_result_only_the_backup_has_counts_as_ahead() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    bid = t.apply(lcc(len(OPERA), 0.0)).board_id
    assert bid is not None
    g = t.board(bid)
    t.apply(lcc(len(OPERA), 1.0, result="*"))
    t.apply(mirror(len(OPERA), 2.0, result="1-0"))
    assert g.feed_result == "*" and [s.relation for s in g.source_status()] == ["same", "ahead"]
    (taken,) = t.tick(32.0)
    assert taken.takeover == "mirror" and g.feed_result == "1-0"


def test_without_time_no_takeover_happens_by_waiting() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    bid = t.apply(lcc(6)).board_id
    assert bid is not None
    t.apply(mirror(9))
    t.apply(mirror(10))
    assert t.tick(1e9) == [] and t.board(bid).source_active == "lcc"
    # An explicit `now` is used when the snapshots carry none.
    t.apply(mirror(11), now=100.0)
    assert t.apply(mirror(12), now=130.0).takeover == "mirror"


def test_the_backups_own_takeover_delay_counts() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    bid = t.apply(lcc(6, 0.0)).board_id
    assert bid is not None
    quick = replace(mirror(8, 10.0), takeover_after=2.0)
    t.apply(quick)
    assert t.tick(11.9) == [] and t.tick(12.0)[0].takeover == "mirror"


def test_boards_of_one_group_stay_apart_by_players() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    a = t.apply(lcc(4, 0.0))
    other = dict(
        white=PlayerInfo("Anderssen, Adolf", fide_id="300"),
        black=PlayerInfo("Kieseritzky, Lionel", fide_id="400"),
    )
    b = t.apply(lcc(4, 0.0, game_id="lcc:t:1:4", board=4, **other))
    c = t.apply(mirror(4, 1.0, game_id="9000", round="1.8", **other))
    assert len({a.board_id, b.board_id}) == 2 and c.board_id == b.board_id
    assert t.apply(mirror(4, 1.0)).board_id == a.board_id
