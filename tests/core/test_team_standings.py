"""Team standings (livegain.core.team_standings): a hand-worked case of every
tie-break, and the official podiums of two Olympiads found from their games."""

from __future__ import annotations

import gzip
import io

import chess.pgn
import pytest
from conftest import SHARED, need

from livegain.core.team_match import MatchPoints
from livegain.core.team_standings import TeamGame, TeamStandings, team_matches

OLYMPIADS = SHARED / "data" / "events" / "team"


def match(rnd: int, white: str, black: str, *results: str) -> list[TeamGame]:
    """A match's boards, colours alternating (board 1: ``white`` has White)."""
    return [
        TeamGame(rnd, white, black, r) if i % 2 == 0 else TeamGame(rnd, black, white, _flip(r))
        for i, r in enumerate(results)
    ]


def _flip(result: str) -> str:
    return {"1-0": "0-1", "0-1": "1-0"}.get(result, result)


# Four teams, a round robin on 2 boards (results from the first-named team's view):
#   r1: A 2-0 B,   C 1-1 D
#   r2: A 1-1 C,   B 1.5-0.5 D
#   r3: A 0.5-1.5 D,  B 1-1 C
GAMES = [
    *match(1, "A", "B", "1-0", "1-0"),
    *match(1, "C", "D", "1-0", "0-1"),
    *match(2, "A", "C", "1/2-1/2", "1/2-1/2"),
    *match(2, "B", "D", "1-0", "1/2-1/2"),
    *match(3, "A", "D", "1/2-1/2", "0-1"),
    *match(3, "B", "C", "1-0", "0-1"),
]


def test_matches_are_grouped_by_round_and_teams() -> None:
    ms = team_matches(GAMES)
    assert [(m.round, m.a, m.b, m.points_a, m.points_b, m.boards) for m in ms] == [
        (1, "A", "B", 2.0, 0.0, 2),
        (1, "C", "D", 1.0, 1.0, 2),
        (2, "A", "C", 1.0, 1.0, 2),
        (2, "B", "D", 1.5, 0.5, 2),
        (3, "A", "D", 0.5, 1.5, 2),
        (3, "B", "C", 1.0, 1.0, 2),
    ]
    in_progress = team_matches([*GAMES, TeamGame(4, "A", "B", "*")])
    assert in_progress[-1].unfinished == 1 and not in_progress[-1].finished


def test_every_tie_break_worked_by_hand() -> None:
    # MP: A 2+1+0, B 0+2+1, C 1+1+1, D 1+0+2: 3 each. GP: A 3.5, B 2.5, C 3, D 3.
    # OSB: every opponent has 3 MP; the one dropped is the first met with the
    # fewest: A keeps C (1) and D (0.5): 3 x 1.5 = 4.5; C keeps A and B: 6; D
    # keeps B (0.5) and A (1.5): 6; B keeps D (1.5) and C (1): 7.5.
    # BH 9 each, BH-C1 6 each; MW: A 1, B 1, C 0, D 1; SB (on match points) 9 each.
    st = TeamStandings.from_matches(team_matches(GAMES), ("GP", "OSB", "BH", "BH-C1", "MW", "SB"))
    rows = {r.team: r for r in st.rows}
    assert [(r.rank, r.team) for r in st.rows] == [(1, "A"), (2, "D"), (3, "C"), (4, "B")]
    assert rows["A"].match_points == 3.0 and rows["A"].game_points == 3.5
    assert (rows["A"].won, rows["A"].drawn, rows["A"].lost) == (1, 1, 1)
    assert rows["A"].tiebreaks == (3.5, 4.5, 9.0, 6.0, 1.0, 9.0)
    assert rows["C"].tiebreaks == (3.0, 6.0, 9.0, 6.0, 0.0, 9.0)
    assert rows["D"].tiebreaks == (3.0, 6.0, 9.0, 6.0, 1.0, 9.0)
    assert rows["B"].tiebreaks == (2.5, 7.5, 9.0, 6.0, 1.0, 9.0)
    # Without matches won, C and D are equal on everything: they share a rank.
    st2 = TeamStandings.from_matches(team_matches(GAMES), ("GP", "OSB"))
    assert [(r.rank, r.team) for r in st2.rows] == [(1, "A"), (2, "C"), (2, "D"), (4, "B")]
    # 3/1/0 match points
    st3 = TeamStandings.from_matches(team_matches(GAMES), ("GP",), points=MatchPoints(3, 1, 0))
    assert {r.team: r.match_points for r in st3.rows} == {"A": 4.0, "B": 4.0, "C": 3.0, "D": 4.0}


def test_direct_encounter_among_the_tied_teams() -> None:
    # Game points primary: A, B on 2.5 each... B beat A: B first on DE.
    games = [
        *match(1, "A", "B", "0-1", "1/2-1/2"),  # B wins the match 1.5-0.5
        *match(1, "C", "D", "1/2-1/2", "1/2-1/2"),
        *match(2, "A", "C", "1-0", "1-0"),
        *match(2, "B", "D", "1/2-1/2", "1/2-1/2"),
    ]
    st = TeamStandings.from_matches(team_matches(games), ("DE",), primary="GP")
    assert [(r.team, r.game_points, r.tiebreaks) for r in st.rows[:2]] == [
        ("B", 2.5, (2.0,)),
        ("A", 2.5, (0.0,)),
    ]
    with pytest.raises(ValueError, match="unknown team tie-break"):
        TeamStandings.from_matches([], ("XYZ",))


def olympiad(name: str) -> TeamStandings:
    path = OLYMPIADS / name
    need(path.exists(), f"{path} not present (the shared data beside the checkout)")
    games = []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        stream = io.StringIO(fh.read())
    while (h := chess.pgn.read_headers(stream)) is not None:
        rnd = int(h["Round"].split(".")[0])
        games.append(TeamGame(rnd, h["WhiteTeam"], h["BlackTeam"], h["Result"]))
    return TeamStandings.from_matches(team_matches(games))


def test_the_olympiad_2018_podium_three_teams_on_18_match_points() -> None:
    st = olympiad("olympiad-2018-open.pgn.gz")
    top = [(r.rank, r.team, r.match_points) for r in st.rows[:3]]
    assert top == [(1, "China", 18.0), (2, "United States", 18.0), (3, "Russia", 18.0)]


def test_the_olympiad_2022_podium() -> None:
    st = olympiad("olympiad-2022-open.pgn.gz")
    top = [(r.rank, r.team, r.match_points) for r in st.rows[:3]]
    assert top == [(1, "Uzbekistan", 19.0), (2, "Armenia", 19.0), (3, "India II", 18.0)]
