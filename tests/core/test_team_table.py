"""A team event's table from its boards (livegain.core.team_table): team tags
told apart from federations, the standings of the finished matches, and the
latest round's matches board by board with their exact chances."""

from __future__ import annotations

import dataclasses

import pytest

from livegain.core.event_table import GameEntry
from livegain.core.snapshot import PlayerInfo
from livegain.core.team_table import team_event, team_table


def entry(
    rnd: int,
    board: int,
    white_team: str,
    black_team: str,
    result: str,
    wdl: tuple[float, float, float] | None = None,
    plies: int = 40,
) -> GameEntry:
    return GameEntry(
        board_id=f"r{rnd}b{board}{white_team}",
        white=PlayerInfo(f"{white_team} {board}", rating=2500),
        black=PlayerInfo(f"{black_team} {board}", rating=2500),
        round=f"{rnd}.{board}",
        result=result,
        plies=plies,
        wdl=wdl,
        board=board,
        white_team=white_team,
        black_team=black_team,
    )


def test_federations_in_the_team_tags_are_not_a_team_event() -> None:
    swiss = [entry(1, 1, "ENG", "FRA", "1-0"), entry(1, 2, "ENG", "GER", "0-1")]
    assert team_event(swiss)[0] is False
    assert "meets several teams" in team_event(swiss)[1]
    assert team_event([entry(1, 1, "ENG", "ENG", "1-0")])[0] is False
    assert team_table(swiss) is None
    assert team_event([entry(1, 1, "A", "B", "1-0"), entry(1, 2, "B", "A", "1-0")])[0] is True


def test_the_latest_round_s_match_board_by_board() -> None:
    games = [
        # round 1, finished: A beats B 2.5-1.5
        entry(1, 1, "A", "B", "1-0"),
        entry(1, 2, "B", "A", "1/2-1/2"),
        entry(1, 3, "A", "B", "0-1"),
        entry(1, 4, "B", "A", "0-1"),
        # round 2: B against A again (a league's second leg), in progress
        entry(2, 1, "B", "A", "1-0"),  # B 1 - 0
        entry(2, 2, "A", "B", "1/2-1/2"),  # B 1.5 - 0.5
        entry(2, 3, "B", "A", "*", wdl=(500, 300, 200)),  # in progress, White's view
        entry(2, 4, "A", "B", "*", wdl=None, plies=0),  # not started: from the ratings
    ]
    table = team_table(games, draw_rate=0.4)
    assert table is not None and table.round == 2
    rows = {r.team: r for r in table.standings.rows}
    assert (rows["A"].match_points, rows["A"].game_points) == (2.0, 2.5)  # round 1 only
    (match,) = table.matches
    assert (match.a, match.b) == ("B", "A")
    assert [b.board for b in match.boards] == [1, 2, 3, 4]
    assert [b.a_white for b in match.boards] == [True, False, True, False]
    assert match.boards[2].wdl == pytest.approx((0.5, 0.3, 0.2)) and match.boards[2].live
    # equal ratings, draw rate 0.4: .3 / .4 / .3
    assert match.boards[3].wdl == pytest.approx((0.3, 0.4, 0.3)) and not match.boards[3].live
    # B (team A of the match) leads 1.5-0.5; board 3 B's view .5/.3/.2, board 4
    # (B has Black) .3/.4/.3: B loses the match only by losing both (.2 x .3),
    # draws it on a half point of the two (.3 x .3 + .2 x .4).
    assert match.odds.loss == pytest.approx(0.06)
    assert match.odds.draw == pytest.approx(0.09 + 0.08)
    assert match.odds.win == pytest.approx(1 - 0.06 - 0.17)
    assert (match.odds.score_a, match.odds.score_b) == (1.5, 0.5)


def test_a_match_s_first_team_has_white_on_its_first_board_whatever_the_order() -> None:
    games = [
        entry(1, 2, "B", "A", "1/2-1/2"),
        entry(1, 1, "A", "B", "1-0"),
    ]
    for order in (games, games[::-1]):
        table = team_table(order)
        assert table is not None
        (match,) = table.matches
        assert (match.a, match.b, [b.board for b in match.boards]) == ("A", "B", [1, 2])


def four_teams_round_one() -> list[GameEntry]:
    """Four teams of two boards, round 1 of a round robin: A-B over, C-D in progress."""
    return [
        entry(1, 1, "A", "B", "1-0"),
        entry(1, 2, "B", "A", "1/2-1/2"),
        entry(1, 3, "C", "D", "*", wdl=(0.5, 0.3, 0.2)),
        entry(1, 4, "D", "C", "*", wdl=None, plies=0),
    ]


def test_a_team_round_robin_s_odds_are_those_of_every_match_left() -> None:
    from livegain.core.event_table import EventRules
    from livegain.core.snapshot import player_key
    from livegain.core.standings import Result
    from livegain.core.team_odds import team_win_odds

    games = four_teams_round_one()
    rules = EventRules(format="round-robin", sims=4_000, seed=3, top_k=2)
    table = team_table(games, draw_rate=0.5, rules=rules)
    assert table is not None and table.odds is not None
    assert (table.sims, table.top_k, table.rounds) == (4_000, 2, 3)
    assert sum(c.p_first for c in table.odds.values()) == pytest.approx(1.0)
    assert sum(c.p_top for c in table.odds.values()) == pytest.approx(2.0)
    # the plumbing is exact: the same as team_win_odds on the same inputs
    key: dict[str, str] = {}
    team_of: dict[str, str] = {}
    for g in games:
        for p, team in ((g.white, g.white_team), (g.black, g.black_team)):
            key[p.name] = player_key(p)
            team_of[player_key(p)] = team or ""
    ratings = dict.fromkeys(team_of, 2500.0)
    direct = team_win_odds(
        team_of,
        ratings,
        [
            Result.game(key["A 1"], key["B 1"], "1-0", 1),
            Result.game(key["B 2"], key["A 2"], "1/2-1/2", 1),
        ],
        [(key["C 3"], key["D 3"], (0.5, 0.3, 0.2))],
        [(key["D 4"], key["C 4"])],
        round=1,
        rounds_total=3,
        schedule=[[("A", "C"), ("B", "D")], [("A", "D"), ("B", "C")]],
        boards=2,
        tiebreaks=[tb for tb in table.standings.tiebreaks if tb != "MP"],
        sims=4_000,
        seed=3,
        top_k=2,
        draw_rate=0.5,
    )
    assert {t: table.odds[t] for t in "ABCD"} == {t: direct[t] for t in "ABCD"}
    # a Swiss of teams needs its rounds
    swiss = team_table(games, rules=EventRules(format="swiss", sims=1_000))
    assert swiss is not None and swiss.odds is None and swiss.note is not None
    assert "rounds" in swiss.note


def test_no_team_odds_where_the_boards_cannot_give_them_and_the_table_says_why() -> None:
    from livegain.core.event_table import EventRules

    rules = EventRules(format="round-robin", sims=1_000)
    # a board of round 1 still without a result while round 2 is on
    games = [*four_teams_round_one(), entry(2, 1, "A", "C", "*", wdl=None, plies=0)]
    table = team_table(games, rules=rules)
    assert table is not None and table.odds is None and table.sims == 0
    assert table.note is not None and "Round 1 has boards without a result" in table.note
    # the standings and the latest round's match are there all the same
    assert table.round == 2 and len(table.matches) == 1
    # boards without round numbers
    bare = [dataclasses.replace(g, round=None) for g in four_teams_round_one()]
    table = team_table(bare, rules=rules)
    assert table is not None and table.odds is None
    assert table.note is not None and "no round numbers" in table.note
    # boards the simulation cannot read: one player on two teams' boards
    mixed = four_teams_round_one()
    mixed[1] = dataclasses.replace(mixed[1], black=mixed[2].white)
    table = team_table(mixed, rules=rules)
    assert table is not None and table.odds is None and table.rounds == 3
    assert table.note is not None and table.note.startswith("No odds of winning the event: ")
    # a Swiss of teams past its rounds
    table = team_table(
        [*games[:2], entry(4, 1, "A", "C", "1-0")], rules=EventRules("swiss", rounds=3)
    )
    assert table is not None and table.odds is None and table.rounds == 3
    assert table.note == "Round 4 is past the 3 rounds."


def test_a_forfeit_counts_as_the_result_it_stands_for() -> None:
    from livegain.core.event_table import EventRules

    games = four_teams_round_one()
    games[2] = entry(1, 3, "C", "D", "+/-")  # C wins board 3 by forfeit
    games[3] = entry(1, 4, "D", "C", "-/+")  # and board 4
    table = team_table(games, rules=EventRules(format="round-robin", sims=1_000, seed=1))
    assert table is not None and table.odds is not None and table.note is None
    rows = {r.team: r for r in table.standings.rows}
    assert (rows["C"].match_points, rows["C"].game_points) == (2.0, 2.0)
    assert table.odds["C"].p_first > table.odds["D"].p_first
