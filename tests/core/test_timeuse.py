"""Time use: time controls, the time a move took, time trouble, and the
time-trouble moment on a replayed game."""

from __future__ import annotations

from livegain.core.board.registry import BoardRegistry
from livegain.core.moments import MomentTracker, is_time_trouble
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.core.snapshot import GameSnapshot, PlayerInfo
from livegain.core.timeuse import (
    Period,
    in_time_trouble,
    parse_time_control,
    spent_seconds,
    time_class,
    trouble_threshold,
)


def test_time_controls_are_read_from_the_tag() -> None:
    tc = parse_time_control("5400+30")
    assert tc is not None and tc.periods == (Period(5400, 30, None),)
    fide = parse_time_control("40/5400+30:1800+30")
    assert fide is not None
    assert fide.periods == (Period(5400, 30, 40), Period(1800, 30, None))
    assert fide.period_of(40) == (0, Period(5400, 30, 40))
    assert fide.period_of(41)[0] == 1
    assert fide.added_after(40) == 1800 and fide.added_after(39) == 0
    for unknown in (None, "", "-", "?", "*60", "abc", "0+0"):
        assert parse_time_control(unknown) is None


def test_classes_and_thresholds() -> None:
    assert time_class(5400, 30) == "classical"
    assert time_class(900, 10) == "rapid"  # 15+10: 25 min for 60 moves
    assert time_class(180, 2) == "blitz"  # 3+2: 5 min
    assert time_class(3000, 10) == "classical"  # 50+10: 60 min
    assert trouble_threshold(parse_time_control("5400+30")) == 300
    assert trouble_threshold(parse_time_control("40/5400+30:1800+30")) == 300
    assert trouble_threshold(parse_time_control("900+10")) == 60
    assert trouble_threshold(parse_time_control("180+2")) == 18
    assert trouble_threshold(parse_time_control("60+0")) == 10  # at least 10 s
    # unknown time control: the base is the larger first-move clock
    assert trouble_threshold(None, (5410, 5395)) == 300
    assert trouble_threshold(None, (None, 170)) == 17
    assert trouble_threshold(None, ()) is None
    assert in_time_trouble(299, 300) and not in_time_trouble(300, 300)
    assert not in_time_trouble(None, 300) and not in_time_trouble(5, None)


def test_spent_by_hand() -> None:
    tc = parse_time_control("5400+30")
    assert spent_seconds(tc, 1, 5399, None) == 31  # 5400 + 30 - 5399
    assert spent_seconds(tc, 2, 5300, 5399) == 129  # 5399 + 30 - 5300
    assert spent_seconds(tc, 2, 5440, 5399) == 0  # never below 0
    assert spent_seconds(tc, 2, None, 5399) is None
    assert spent_seconds(tc, 3, 5300, None) is None
    assert spent_seconds(None, 1, 5399, None) is None  # no base time
    assert spent_seconds(None, 2, 5300, 5399) == 99  # no increment known
    fide = parse_time_control("40/5400+30:1800+30")
    # move 40 completes the first period: 30 minutes are added
    assert spent_seconds(fide, 40, 1900, 200) == 200 + 30 + 1800 - 1900
    assert spent_seconds(fide, 41, 1800, 1900) == 130


def test_is_time_trouble_holds_once_on_crossing() -> None:
    assert is_time_trouble(301, 299, 300)
    assert is_time_trouble(None, 299, 300)
    assert not is_time_trouble(299, 250, 300)  # already in it
    assert not is_time_trouble(400, 301, 300)
    assert not is_time_trouble(400, 200, None)


MOVES = ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6"]


def _snap(n: int, clocks: list[int]) -> GameSnapshot:
    return GameSnapshot(
        source="test",
        white=PlayerInfo("White, A"),
        black=PlayerInfo("Black, B"),
        moves=tuple(MOVES[:n]),
        clocks=tuple(clocks[:n]),
        round="1",
        board=1,
        event="Clock Open",
        tags=(("TimeControl", "5400+30"),),
    )


CLOCKS = [5399, 5405, 5000, 4000, 400, 290, 250, 100]


def test_a_game_spends_and_falls_into_time_trouble() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    tracker = MomentTracker()
    applied = t.apply(_snap(4, CLOCKS))
    assert applied.board_id is not None
    game = t.board(applied.board_id)
    assert [p.spent for p in game.moves()] == [31, 25, 429, 1435]
    assert game.clocks.time_trouble_below == 300
    assert not game.clocks.white_time_trouble and not game.clocks.black_time_trouble
    assert tracker.observe(game, applied.updates) == []
    applied = t.apply(_snap(6, CLOCKS))
    moments = tracker.observe(game, applied.updates)
    assert [(m.kind, m.ply, m.color, m.move, m.clock) for m in moments] == [
        ("time-trouble", 6, "black", "a6", 290)
    ]
    assert game.clocks.black_time_trouble and not game.clocks.white_time_trouble
    applied = t.apply(_snap(8, CLOCKS))
    moments = tracker.observe(game, applied.updates)
    # White falls under 5 minutes; Black, already in it, makes no second moment
    assert [(m.kind, m.ply, m.color) for m in moments] == [("time-trouble", 7, "white")]
    assert game.clocks.white_time_trouble and game.clocks.black_time_trouble
