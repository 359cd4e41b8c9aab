"""A board's clocks on their own (:class:`GameClocks`): each ply's clock as feeds
send it, and the clocks now."""

from __future__ import annotations

from livegain.core.board.clocks import GameClocks
from livegain.core.snapshot import GameSnapshot, PlayerInfo
from livegain.core.timeuse import parse_time_control


def snap(clocks: tuple[int | None, ...], **kw: int | None) -> GameSnapshot:
    moves = ("e4", "e5", "Nf3", "Nc6", "Bb5", "a6")[: len(clocks)]
    return GameSnapshot(
        "test", PlayerInfo("White"), PlayerInfo("Black"), moves=moves, clocks=clocks, **kw
    )


def played(clocks: GameClocks, s: GameSnapshot, plies: int) -> None:
    for _ in range(plies):
        clocks.played(len(clocks.times()) % 2 == 0, s)  # White moves first


def test_each_move_takes_its_clock_and_the_clocks_now_follow_it() -> None:
    c = GameClocks()
    played(c, snap((5400, 5390, 5300)), 3)
    assert c.times() == (5400, 5390, 5300)
    assert (c.white, c.black) == (5300, 5390)
    # The feed's own clock beats the last move's.
    played(c, snap((5400, 5390, 5300, None), clock_black=5000), 1)
    assert (c.at(4), c.white, c.black) == (None, 5300, 5390)
    c.settle(snap((5400, 5390, 5300, None), clock_black=5000))
    assert (c.white, c.black) == (5300, 5000)


def test_a_clock_no_longer_sent_is_kept_and_a_late_one_is_merged() -> None:
    c = GameClocks()
    played(c, snap((5400, None, 5300, 5280)), 4)
    assert c.merge_kept(4, snap((None, None, None, None))) == []
    assert c.times() == (5400, None, 5300, 5280)
    # A clock for ply 2 arrives late; ply 4's is corrected; only kept plies merge.
    assert c.merge_kept(3, snap((5400, 5395, 5300, 5270))) == [2]
    assert c.times() == (5400, 5395, 5300, 5280)


def test_truncated_moves_take_their_clocks_with_them() -> None:
    c = GameClocks()
    played(c, snap((5400, 5390, 5300, 5200)), 4)
    c.truncate(2)
    assert c.times() == (5400, 5390) and (c.white, c.black) == (None, None)
    c.settle(snap((5400, 5390)))
    assert (c.white, c.black) == (5400, 5390)
    # A new start position: no move has a clock, the clocks now stay.
    c.clear()
    assert c.times() == () and (c.white, c.black) == (5400, 5390)


def test_time_spent_and_time_trouble_read_the_plies_clocks() -> None:
    c = GameClocks()
    played(c, snap((5400, 5390, 5100, 5390, 5130)), 5)
    tc = parse_time_control("5400+30")
    assert c.spent(tc, 3) == 5400 + 30 - 5100
    assert c.spent(tc, 5) == 5100 + 30 - 5130
    assert c.spent(tc, 0) is None and c.spent(tc, 6) is None
    assert c.trouble_below(None) == c.trouble_below(parse_time_control("5400"))
    assert GameClocks().trouble_below(None) is None
