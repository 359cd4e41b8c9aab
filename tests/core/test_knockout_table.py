"""A knockout from its boards (livegain.core.knockout_table) and how its
format is told (livegain.core.event_format), against cases worked by hand.

The ratings-only model of these cases: equal ratings, White scores 0.6 with
draws 0.4, so White wins 0.4, draws 0.4, loses 0.2 in every game not started."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import chess.pgn
import pytest

from livegain.core.event_format import format_from_pairings, format_from_round_names
from livegain.core.event_table import EventRules, GameEntry, event_table
from livegain.core.human_wdl import RatingsPrior
from livegain.core.knockout import KnockoutRules, StageRule
from livegain.core.knockout_table import knockout_table
from livegain.core.snapshot import PlayerInfo

PRIOR = RatingsPrior(
    kind="classical-otb",
    white_advantage=400 * math.log10(1.5),  # E = 0.6 between equals
    scale=400.0,
    draw_intercept=math.log(0.4 / 0.6),  # D = 0.4
    draw_level=0.0,
    draw_gap=0.0,
    draw_rate=0.4,
)
STAGES = (
    StageRule("classical", 2),
    StageRule("rapid", 2),
    StageRule("Armageddon", 1, armageddon=True),
)
RULES = EventRules(format="knockout", knockout=KnockoutRules(stages=STAGES))
KNOCKOUT = Path(__file__).parents[2].parent / "shared" / "data" / "events" / "knockout"


def board(
    rnd: str,
    white: str,
    black: str,
    result: str,
    plies: int = 40,
    wdl: tuple[float, float, float] | None = None,
    tc: str | None = None,
) -> GameEntry:
    return GameEntry(
        board_id=f"{rnd}-{white}-{black}",
        white=PlayerInfo(white, rating=2600),
        black=PlayerInfo(black, rating=2600),
        round=rnd,
        result=result,
        plies=plies,
        wdl=wdl,
        time_control=tc,
    )


def test_a_mini_match_in_its_rapid_tie_break() -> None:
    # classical 1-1 (each won with White), rapid game 3 drawn, game 4 going on
    # with Bob White: shown W/D/L 600/300/100, so Ann (a) wins 0.1, draws 0.3.
    games = [
        board("1.1", "Ann", "Bob", "1-0"),
        board("1.2", "Bob", "Ann", "1-0"),
        board("1.3", "Ann", "Bob", "1/2-1/2"),
        board("1.4", "Bob", "Ann", "*", wdl=(600, 300, 100)),
    ]
    t = knockout_table(games, RULES, priors={"classical-otb": PRIOR})
    assert t is not None and t.why.startswith("as configured")
    (m,) = t.matches
    assert (m.a_name, m.b_name, m.stage, m.live, m.winner) == ("Ann", "Bob", "rapid", True, None)
    assert [(s.name, s.played, s.score_a, s.score_b) for s in m.stages] == [
        ("classical", 2, 1.0, 1.0),
        ("rapid", 1, 0.5, 0.5),
    ]
    # Ann through: she wins game 4 (0.1), or it is drawn (0.3) and she wins the
    # Armageddon, its colours by lot: with White she must win (0.4), with
    # Black a draw will do (0.2 + 0.4): 0.5 in all.
    assert m.through_a == pytest.approx(0.1 + 0.3 * 0.5)
    assert m.reach == (("Armageddon", pytest.approx(0.3)),)
    live = next(g for g in m.games if g.live)
    assert (live.game, live.a_white, live.wdl) == (4, False, pytest.approx((0.6, 0.3, 0.1)))


def test_games_not_on_the_boards_yet_and_a_stage_told_by_its_time_control() -> None:
    # game 1 drawn, game 2 not on a board yet: Ann has Black in it (0.2 win,
    # 0.4 draw); level after it, the rapid stage (lot) and the Armageddon.
    games = [board("1.1", "Ann", "Bob", "1/2-1/2")]
    (m,) = knockout_table(games, RULES, priors={"classical-otb": PRIOR}).matches  # type: ignore[union-attr]
    extra = [g for g in m.games if not g.on_board]
    assert [(g.game, g.white, g.a_white, g.wdl) for g in extra] == [
        (2, "Bob", False, pytest.approx((0.4, 0.4, 0.2)))
    ]
    # a two-game stage from the start, by lot: Ann ahead = 0.4*(0.2+0.4) + 0.4*0.2
    # = 0.32 either way round, level 0.4*0.4 + 0.4*0.4 + 0.2*0.2 = 0.36
    ahead, level = 0.32, 0.36
    arm = 0.5
    want = 0.2 + 0.4 * (ahead + level * arm)
    assert m.through_a == pytest.approx(want)
    # a game numbered 3 whose TimeControl is the rapid stage's is of that stage
    tc_stages = (StageRule("classical", 2), StageRule("rapid", 2, time_control="600+10"))
    rules = EventRules(format="knockout", knockout=KnockoutRules(stages=tc_stages))
    games = [
        board("1.1", "Ann", "Bob", "1/2-1/2"),
        board("1.5", "Bob", "Ann", "1-0", tc="600 + 10"),
    ]
    (m,) = knockout_table(games, rules, priors={"classical-otb": PRIOR}).matches  # type: ignore[union-attr]
    assert [s.name for s in m.stages] == ["classical", "rapid"]
    assert m.stages[1].score_b == 1.0


def test_decided_matches() -> None:
    prior = {"classical-otb": PRIOR}
    # a classical win; a board of game 3 made early changes nothing
    games = [
        board("1.1", "Ann", "Bob", "1-0"),
        board("1.2", "Bob", "Ann", "1/2-1/2"),
        board("1.3", "Ann", "Bob", "*", plies=0),
    ]
    (m,) = knockout_table(games, RULES, priors=prior).matches  # type: ignore[union-attr]
    assert (m.winner, m.stage, m.through_a, m.reach) == ("ann", "classical", 1.0, ())
    # an Armageddon drawn: Black goes through
    games = [
        board("1.1", "Ann", "Bob", "1/2-1/2"),
        board("1.2", "Bob", "Ann", "1/2-1/2"),
        board("1.3", "Ann", "Bob", "1/2-1/2"),
        board("1.4", "Bob", "Ann", "1/2-1/2"),
        board("1.5", "Ann", "Bob", "1/2-1/2"),
    ]
    (m,) = knockout_table(games, RULES, priors=prior).matches  # type: ignore[union-attr]
    assert (m.winner, m.stage, m.through_a) == ("bob", "Armageddon", 0.0)


def test_a_four_player_knockout_bracket() -> None:
    # semi-final 1 decided for Ann; semi-final 2 in the rapid game of the
    # first test (Cy a, through 0.25); the final between equals: each side
    # wins it with 1/2 (colours by lot).
    games = [
        board("1.1", "Ann", "Bob", "1-0"),
        board("1.2", "Bob", "Ann", "1/2-1/2"),
        board("1.1", "Cy", "Dan", "1-0"),
        board("1.2", "Dan", "Cy", "1-0"),
        board("1.3", "Cy", "Dan", "1/2-1/2"),
        board("1.4", "Dan", "Cy", "*", wdl=(600, 300, 100)),
    ]
    t = knockout_table(games, RULES, priors={"classical-otb": PRIOR})
    assert t is not None and t.round == 1
    assert [(m.a_name, m.b_name) for m in t.current] == [("Ann", "Bob"), ("Cy", "Dan")]
    wins = {t.names[r.player]: r.win for r in t.bracket.rows}
    assert wins == pytest.approx({"Ann": 0.5, "Cy": 0.25 * 0.5, "Dan": 0.75 * 0.5})
    assert t.bracket.rounds == (1, 2)


def test_standings_of_a_knockout_run_no_tournament_simulation() -> None:
    games = [board("1.1", "Ann", "Bob", "1-0"), board("1.2", "Bob", "Ann", "*", plies=0)]
    table = event_table("KO", games, RULES)
    assert table.format == "knockout" and table.sims == 0 and table.playoff is None
    assert all(r.win is None for r in table.rows)
    assert table.note is not None and "Knockout" in table.note


def test_the_boards_tell_a_knockout() -> None:
    games = [
        board("1.1", "Ann", "Bob", "1-0"),
        board("1.1", "Cy", "Dan", "1-0"),
        board("1.2", "Bob", "Ann", "*"),
    ]
    t = knockout_table(games, EventRules(), priors={"classical-otb": PRIOR})
    assert t is not None and "R.G" in t.why
    # game 1 only: it could be any event; a Swiss's boards (R.B) never are
    assert knockout_table(games[:2], EventRules()) is None
    swiss = [board("1.1", "Ann", "Bob", "1-0"), board("1.2", "Cy", "Dan", "1-0")]
    assert knockout_table(swiss, EventRules()) is None
    # configured as a round robin: never read as a knockout
    assert knockout_table(games, EventRules(format="round-robin")) is None


def test_format_rules() -> None:
    ko = [("1.1", "a", "b"), ("1.1", "c", "d"), ("1.2", "b", "a"), ("1.2", "d", "c")]
    assert format_from_pairings(ko) is not None
    # Norway Chess: a classical game and an Armageddon of one pair, Round "1"
    norway = [("1", "a", "b"), ("1", "a", "b"), ("1", "c", "d")]
    assert format_from_pairings(norway) is None
    # a player meeting two opponents in a round; a pair meeting in two rounds
    assert format_from_pairings([*ko, ("1.3", "a", "c")]) is None
    assert format_from_pairings([*ko, ("2.1", "a", "b")]) is None
    assert format_from_round_names(["Round 1", "Round 1 Tiebreaks"]) is not None
    assert format_from_round_names(["Round 1", "Round 1 Armageddon"]) is None


def _headers(path: Path) -> Iterator[chess.pgn.Headers]:
    with path.open(encoding="utf-8") as fh:
        while (h := chess.pgn.read_headers(fh)) is not None:
            yield h


def _entries(path: Path) -> list[GameEntry]:
    out = []
    for i, h in enumerate(_headers(path)):
        ratings = [int(h[t]) if h.get(t, "").isdigit() else None for t in ("WhiteElo", "BlackElo")]
        out.append(
            GameEntry(
                board_id=str(i),
                white=PlayerInfo(h["White"], rating=ratings[0]),
                black=PlayerInfo(h["Black"], rating=ratings[1]),
                round=h["Round"],
                result=h["Result"],
                plies=60,
            )
        )
    return out


@pytest.mark.parametrize(
    ("name", "winner"), [("world-cup-2011.pgn", "Svidler"), ("world-cup-2013.pgn", "Kramnik")]
)
def test_the_world_cups(name: str, winner: str) -> None:
    path = KNOCKOUT / name
    if not path.exists():
        pytest.skip(f"{path} absent")
    games = _entries(path)
    final = (StageRule("classical", 4), *KnockoutRules().stages[1:])
    rules = EventRules(format="knockout", knockout=KnockoutRules(round_stages=((7, final),)))
    t = knockout_table(games, rules, priors={"classical-otb": PRIOR})
    assert t is not None
    # every match of the file is decided, and its winner is in the next round
    assert all(m.winner is not None for m in t.matches)
    players = {r: {p for m in t.matches if m.round == r for p in (m.a, m.b)} for r in range(1, 8)}
    for m in t.matches:
        if m.round < 6:
            assert m.winner in players[m.round + 1]
    (row,) = t.bracket.rows
    assert winner in t.names[row.player] and row.win == 1.0
    assert t.bracket.order == "folded"  # boards in seeding order
    assert len(t.bracket.place_matches) == (1 if name.endswith("2011.pgn") else 0)
    # the boards alone tell it is a knockout
    assert knockout_table(games, EventRules()) is not None
    # after round 1: 64 players in, their chances summing to 1
    after = knockout_table(
        [g for g in games if g.round and g.round.startswith("1.")], rules, priors={}
    )
    assert after is not None and len(after.bracket.rows) == 64
    assert sum(r.win for r in after.bracket.rows) == pytest.approx(1.0)
