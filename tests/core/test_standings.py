"""Standings and FIDE tie-breaks, on small tournaments worked out by hand."""

from __future__ import annotations

import math

import pytest

from livegain.core.scoring import Scoring
from livegain.core.standings import Result, Standings, tiebreak_names

G = Result.game


def ranks(st: Standings) -> dict[str, int]:
    return {r.player: r.rank for r in st.rows}


# A 5-player round robin (10 games):
#   A-B 1/2, A-C 1/2, A-D 1/2, A-E 1-0        A 2.5 (1 win)
#   B-C 1-0, B-D 0-1, B-E 1-0                 B 2.5 (2 wins)
#   C-D 1/2, C-E 1-0, D-E 0-1                 C 2, D 2, E 1
# A and B drew each other (direct encounter 1/2 each) and have the same
# Sonneborn-Berger: A = 1/2*2.5 + 1/2*2 + 1/2*2 + 1*1 = 4.25,
# B = 1/2*2.5 + 1*2 + 0*2 + 1*1 = 4.25; B has more wins.
# C and D drew each other; SB C = 1/2*2.5 + 0*2.5 + 1/2*2 + 1*1 = 3.25,
# SB D = 1/2*2.5 + 1*2.5 + 1/2*2 + 0*1 = 4.75; E only beat D: SB 2.
RR5 = [
    G("A", "B", "1/2-1/2"),
    G("A", "C", "1/2-1/2"),
    G("A", "D", "1/2-1/2"),
    G("A", "E", "1-0"),
    G("B", "C", "1-0"),
    G("B", "D", "0-1"),
    G("B", "E", "1-0"),
    G("C", "D", "1/2-1/2"),
    G("C", "E", "1-0"),
    G("D", "E", "0-1"),
]


def test_points_and_tiebreak_values_round_robin() -> None:
    st = Standings.from_results(RR5, ("DE", "SB", "WIN", "BH", "BH-C1"))
    assert st.tiebreaks == (
        "direct_encounter",
        "sonneborn_berger",
        "wins",
        "buchholz",
        "buchholz_cut1",
    )
    points = {r.player: r.points for r in st.rows}
    assert points == {"A": 2.5, "B": 2.5, "C": 2.0, "D": 2.0, "E": 1.0}
    assert [st.value(p, "SB") for p in "ABCDE"] == [4.25, 4.25, 3.25, 4.75, 2.0]
    assert [st.value(p, "WIN") for p in "ABCDE"] == [1, 2, 1, 1, 1]
    # complete round robin: Buchholz = all points (10) minus one's own
    assert [st.value(p, "BH") for p in "ABCDE"] == [7.5, 7.5, 8.0, 8.0, 9.0]
    # cut-1 drops the weakest opponent: E (1) for A..D, C or D (2) for E
    assert [st.value(p, "BH-C1") for p in "ABCDE"] == [6.5, 6.5, 7.0, 7.0, 7.0]
    # the direct encounter is shown for players tied when it was applied
    assert [st.value(p, "DE") for p in "ABCDE"] == [0.5, 0.5, 0.5, 0.5, None]
    assert all(r.rounds == 4 for r in st.rows)


def test_sonneborn_berger_and_wins_break_ties() -> None:
    # A-B: DE level, SB level, wins decide (B). C-D: DE level, SB decides (D).
    st = Standings.from_results(RR5, ("DE", "SB", "WIN"))
    assert [r.player for r in st.rows] == ["B", "A", "D", "C", "E"]
    assert [r.rank for r in st.rows] == [1, 2, 3, 4, 5]
    assert st.leaders() == ["B"]


def test_ties_share_a_rank_when_every_tiebreak_is_equal() -> None:
    # wins only: A-B split (2 > 1), C and D both have 1 win: they share 3rd, E is 5th
    assert ranks(Standings.from_results(RR5, ("WIN",))) == {"B": 1, "A": 2, "C": 3, "D": 3, "E": 5}
    # no tie-break at all: competition ranking 1, 1, 3, 3, 5
    assert ranks(Standings.from_results(RR5, ())) == {"A": 1, "B": 1, "C": 3, "D": 3, "E": 5}
    shared = Standings.from_results(RR5, ("DE", "BH"))
    assert shared.leaders() == ["A", "B"]


# A 4-player round robin: A-B 1/2, A-C 1-0, A-D 0-1, B-C 1-0, B-D 1/2, C-D 1-0.
# B 2, A 1.5, D 1.5, C 1. A and D have one win each; D beat A.
RR4 = [
    G("A", "B", "1/2-1/2"),
    G("A", "C", "1-0"),
    G("A", "D", "0-1"),
    G("B", "C", "1-0"),
    G("B", "D", "1/2-1/2"),
    G("C", "D", "1-0"),
]


def test_direct_encounter_decides_where_wins_cannot() -> None:
    assert ranks(Standings.from_results(RR4, ("WIN",))) == {"B": 1, "A": 2, "D": 2, "C": 4}
    st = Standings.from_results(RR4, ("WIN", "DE"))
    assert [r.player for r in st.rows] == ["B", "D", "A", "C"]
    assert [r.rank for r in st.rows] == [1, 2, 3, 4]
    assert st.value("D", "DE") == 1.0
    assert st.value("A", "DE") == 0.0
    # SB agrees here: D = 1*1.5 + 1/2*2 = 2.5, A = 1/2*2 + 1*1 = 2
    st = Standings.from_results(RR4, ("SB",))
    assert (st.value("D", "SB"), st.value("A", "SB")) == (2.5, 2.0)


def test_direct_encounter_within_a_three_way_tie() -> None:
    # A, B, C on 2.5: among themselves A-B 1/2, A-C 1-0, B-C 1/2 (A 1.5, B 1, C 0.5);
    # against D and E: A 0 and 1, B 1/2 and 1, C 1 and 1; D-E 0-1 (D 1.5, E 1)
    games = [
        G("A", "B", "1/2-1/2"),
        G("A", "C", "1-0"),
        G("B", "C", "1/2-1/2"),
        G("D", "A", "1-0"),
        G("A", "E", "1-0"),
        G("B", "D", "1/2-1/2"),
        G("E", "B", "0-1"),
        G("C", "D", "1-0"),
        G("C", "E", "1-0"),
        G("D", "E", "0-1"),
    ]
    st = Standings.from_results(games, ("DE",))
    assert {r.player: r.points for r in st.rows} == {"A": 2.5, "B": 2.5, "C": 2.5, "D": 1.5, "E": 1}
    assert [r.player for r in st.rows] == ["A", "B", "C", "D", "E"]
    assert [r.rank for r in st.rows] == [1, 2, 3, 4, 5]
    assert [st.value(p, "DE") for p in "ABCDE"] == [1.5, 1.0, 0.5, None, None]
    # within a cycle (each beat one of the others) the direct encounter is level
    cycle = [G("A", "B", "1-0"), G("B", "C", "1-0"), G("C", "A", "1-0")]
    st = Standings.from_results(cycle, ("DE",))
    assert st.leaders() == ["A", "B", "C"]
    assert [st.value(p, "DE") for p in "ABC"] == [1.0, 1.0, 1.0]


def test_direct_encounter_when_not_all_tied_players_met() -> None:
    # A, B, C on 2 points. A beat B and C; B and C never met: A is ahead
    # whatever B-C would have given, B and C stay tied.
    games = [
        G("A", "B", "1-0"),
        G("C", "A", "0-1"),
        G("X", "A", "1-0"),
        G("Y", "A", "1-0"),
        G("B", "X", "1-0"),
        G("B", "Z", "1-0"),
        G("C", "Y", "1-0"),
        G("Z", "C", "0-1"),
    ]
    st = Standings.from_results(games, ("DE",))
    assert {r.player: r.points for r in st.rows if r.points == 2.0} == {"A": 2, "B": 2, "C": 2}
    assert ranks(st) == {"A": 1, "B": 2, "C": 2, "X": 4, "Y": 4, "Z": 6}
    # A beat B but never met C: C could still catch A, so nobody is separated
    games = [
        G("A", "B", "1-0"),
        G("A", "Z", "1-0"),
        G("X", "A", "1-0"),
        G("Y", "A", "1-0"),
        G("B", "X", "1-0"),
        G("B", "Z", "1-0"),
        G("C", "Y", "1-0"),
        G("Z", "C", "0-1"),
    ]
    st = Standings.from_results(games, ("DE", "WIN"))
    assert st.leaders() == ["A", "B", "C"]
    assert (st.value("A", "DE"), st.value("B", "DE"), st.value("C", "DE")) == (1.0, 0.0, 0.0)


# A 5-player Swiss, 3 rounds, one bye a round and a forfeit:
#   R1: A-B 1-0, C-D 1/2, E bye (1)
#   R2: A-C 1/2, E-B 1-0, D bye (1)
#   R3: E-A 0-1, B-D -/+ (D wins by forfeit), C bye (1)
# A 2.5, D 2.5 (one game played), C 2, E 2, B 0.
SWISS = [
    G("A", "B", "1-0", 1),
    G("C", "D", "1/2-1/2", 1),
    Result.bye("E", 1.0, 1),
    G("A", "C", "1/2-1/2", 2),
    G("E", "B", "1-0", 2),
    Result.bye("D", 1.0, 2),
    G("E", "A", "0-1", 3),
    G("B", "D", "-/+", 3),
    Result.bye("C", 1.0, 3),
]


def test_swiss_unplayed_rounds() -> None:
    st = Standings.from_results(SWISS, ("BH", "BH-C1", "SB", "WIN", "WON"))
    assert {r.player: r.points for r in st.rows} == {"A": 2.5, "D": 2.5, "C": 2, "E": 2, "B": 0}
    # Buchholz: opponents' points, an unplayed round counts the player's own points
    #   A: B 0 + C 2 + E 2 = 4;  D: C 2 + 2 unplayed x 2.5 = 7;  C: A 2.5 + D 2.5 + 2 = 7
    #   E: B 0 + A 2.5 + 2 = 4.5;  B: A 2.5 + E 2 + 0 (own points, forfeit) = 4.5
    assert [st.value(p, "BH") for p in "ADCEB"] == [4, 7, 7, 4.5, 4.5]
    # cut-1 drops an unplayed round first, else the weakest opponent
    assert [st.value(p, "BH-C1") for p in "ADCEB"] == [4, 4.5, 5, 2.5, 4.5]
    # SB: played games, plus own points x points of each unplayed round
    #   A: 1*0 + 1/2*2 + 1*2 = 3;  D: 1/2*2 + (1 + 1)*2.5 = 6;  C: 1/2*2.5 + 1/2*2.5 + 1*2 = 4.5
    #   E: 1*0 + 0 + 1*2 = 2;  B: 0
    assert [st.value(p, "SB") for p in "ADCEB"] == [3, 6, 4.5, 2, 0]
    # WIN counts a full-point bye and a forfeit win; WON only games won on the board
    assert [st.value(p, "WIN") for p in "ADCEB"] == [2, 2, 1, 2, 0]
    assert [st.value(p, "WON") for p in "ADCEB"] == [2, 0, 0, 1, 0]
    assert all(r.rounds == 3 for r in st.rows)


def test_swiss_rankings_depend_on_the_tiebreak_order() -> None:
    assert ranks(Standings.from_results(SWISS, ("BH",))) == {"D": 1, "A": 2, "C": 3, "E": 4, "B": 5}
    assert ranks(Standings.from_results(SWISS, ("WON",))) == {
        "A": 1,
        "D": 2,
        "E": 3,
        "C": 4,
        "B": 5,
    }
    # WIN: A and D level (2 each), C and E split (E 2 > C 1); A and D never met
    assert ranks(Standings.from_results(SWISS, ("WIN", "DE"))) == {
        "A": 1,
        "D": 1,
        "E": 3,
        "C": 4,
        "B": 5,
    }


def test_players_without_results_are_listed() -> None:
    st = Standings.from_results([G("A", "B", "1-0")], (), players=["A", "B", "C"])
    assert [(r.player, r.points, r.rank, r.rounds) for r in st.rows] == [
        ("A", 1.0, 1, 1),
        ("B", 0.0, 2, 1),
        ("C", 0.0, 2, 0),
    ]


def test_results_and_names_are_checked() -> None:
    assert G("A", "B", "½-½") == Result("A", "B", 0.5, 0.5)
    assert G("A", "B", "+/-") == Result("A", "B", 1.0, 0.0, played=False)
    assert G("A", "B", "-/-") == Result("A", "B", 0.0, 0.0, played=False)
    for bad in ("*", "2-0", ""):
        with pytest.raises(ValueError, match="not a finished result"):
            G("A", "B", bad)
    with pytest.raises(ValueError, match="himself"):
        G("A", "A", "1-0")
    with pytest.raises(ValueError, match="1 point in all"):
        Result("A", "B", 1.0, 1.0)
    with pytest.raises(ValueError, match=r"0, 0\.5 or 1"):
        Result("A", "B", 0.7, 0.3)
    assert tiebreak_names(["de", "SB", "buchholz_cut1"]) == (
        "direct_encounter",
        "sonneborn_berger",
        "buchholz_cut1",
    )
    with pytest.raises(ValueError, match="unknown tie-break"):
        tiebreak_names(["koya"])
    with pytest.raises(ValueError, match="twice"):
        tiebreak_names(["SB", "sonneborn_berger"])


# ---- custom scoring ----------------------------------------------------------
#
# A 4-player round robin, White first: A-B 1-0, A-C 1/2, A-D 0-1, B-C 1-0,
# B-D 1/2, C-D 1/2. With 1 / 1/2 / 0: D 2, A 1.5, B 1.5, C 1, and A and B are
# level on Sonneborn-Berger too (A = 1*1.5 + 1/2*1 = 2, B = 1*1 + 1/2*2 = 2).
RR4_SCORED = [
    G("A", "B", "1-0"),
    G("A", "C", "1/2-1/2"),
    G("A", "D", "0-1"),
    G("B", "C", "1-0"),
    G("B", "D", "1/2-1/2"),
    G("C", "D", "1/2-1/2"),
]


def test_three_one_zero_round_robin() -> None:
    # 3/1/0: A W D L = 4, B L W D = 4, C D L D = 2, D W D D = 5 (15 in all:
    # 3 decisive games x 3 + 3 draws x 2)
    norway = Scoring.symmetric(3, 1)
    st = Standings.from_results(RR4_SCORED, ("SB", "DE", "WIN", "BH"), scoring=norway)
    assert {r.player: r.points for r in st.rows} == {"D": 5, "A": 4, "B": 4, "C": 2}
    # SB = opponent's points x own game points (1, 1/2, 0):
    #   A: B 4 x 1 + C 2 x 1/2 + D 5 x 0 = 5;   B: A 4 x 0 + C 2 x 1 + D 5 x 1/2 = 4.5
    #   C: A 4 x 1/2 + B 4 x 0 + D 5 x 1/2 = 4.5;   D: A 4 x 1 + B 4 x 1/2 + C 2 x 1/2 = 7
    assert [st.value(p, "SB") for p in "ABCD"] == [5, 4.5, 4.5, 7]
    # the tie on points is broken by SB, which the standard scoring could not do
    assert [r.player for r in st.rows] == ["D", "A", "B", "C"]
    assert [r.rank for r in st.rows] == [1, 2, 3, 4]
    # the direct encounter was not needed (A and B split by SB): not shown
    assert [st.value(p, "DE") for p in "ABCD"] == [None, None, None, None]
    assert [st.value(p, "WIN") for p in "ABCD"] == [1, 1, 0, 1]
    # complete round robin: Buchholz = all points (15) minus one's own
    assert [st.value(p, "BH") for p in "ABCD"] == [11, 11, 13, 10]
    # direct encounter in the event's points: A beat B, 3 to 0
    de = Standings.from_results(RR4_SCORED, ("DE",), scoring=norway)
    assert (de.value("A", "DE"), de.value("B", "DE")) == (3.0, 0.0)
    assert [r.player for r in de.rows] == ["D", "A", "B", "C"]
    # the standard scoring on the same games: A and B level on points and SB
    plain = Standings.from_results(RR4_SCORED, ("SB",))
    assert {r.player: r.points for r in plain.rows} == {"D": 2, "A": 1.5, "B": 1.5, "C": 1}
    assert ranks(plain) == {"D": 1, "A": 2, "B": 2, "C": 4}


def test_asymmetric_scoring_black_gets_more_for_a_draw() -> None:
    # Lichess customScoring: White 3 / 1 / 0, Black 3 / 1.5 / 0
    doc = {"white": {"win": 3, "draw": 1}, "black": {"win": 3, "draw": 1.5}}
    asym = Scoring.from_lichess(doc)
    st = Standings.from_results(RR4_SCORED, ("SB",), scoring=asym)
    # A (White in all three): 3 + 1 + 0 = 4;  B: 0 (Black) + 3 + 1 (White's draw) = 4
    # C: 1.5 (Black's draw) + 0 + 1 (White's draw) = 2.5;  D: 3 + 1.5 + 1.5 = 6
    assert {r.player: r.points for r in st.rows} == {"D": 6, "A": 4, "B": 4, "C": 2.5}
    # SB: A = B 4 x 1 + C 2.5 x 1/2 = 5.25;  B = C 2.5 x 1 + D 6 x 1/2 = 5.5:
    # B ahead here, A ahead with 3/1/0 (above)
    #     C = A 4 x 1/2 + D 6 x 1/2 = 5;  D = A 4 x 1 + B 4 x 1/2 + C 2.5 x 1/2 = 7.25
    assert [st.value(p, "SB") for p in "ABCD"] == [5.25, 5.5, 5, 7.25]
    assert [r.player for r in st.rows] == ["D", "B", "A", "C"]
    # the direct encounter (A beat B) puts A ahead whatever the scoring
    de = Standings.from_results(RR4_SCORED, ("DE",), scoring=asym)
    assert [r.player for r in de.rows] == ["D", "A", "B", "C"]


def test_custom_scoring_unplayed_rounds_and_byes() -> None:
    # the 5-player Swiss above with 3/1/0: games and forfeits scored 3/1/0,
    # byes keep their value (1: worth a draw here, not a win)
    norway = Scoring.symmetric(3, 1)
    st = Standings.from_results(SWISS, ("BH", "SB", "WIN", "WON", "DE"), scoring=norway)
    # A: 3 + 1 + 3 = 7;  D: 1 + 1 (bye) + 3 (forfeit win) = 5;  C: 1 + 1 + 1 (bye) = 3
    # E: 1 (bye) + 3 + 0 = 4;  B: 0
    assert {r.player: r.points for r in st.rows} == {"A": 7, "D": 5, "E": 4, "C": 3, "B": 0}
    # BH (an unplayed round counts the player's own points):
    #   A: B 0 + C 3 + E 4 = 7;  D: C 3 + 2 unplayed x 5 = 13;  E: own 4 + B 0 + A 7 = 11
    #   C: D 5 + A 7 + own 3 = 15;  B: A 7 + E 4 + own 0 = 11
    assert [st.value(p, "BH") for p in "ADECB"] == [7, 13, 11, 15, 11]
    # SB: A: B 0 x 1 + C 3 x 1/2 + E 4 x 1 = 5.5
    #     D: C 3 x 1/2 + own 5 x (1/2 for the bye worth a draw + 1 for the forfeit win) = 9
    #     E: own 4 x 1/2 (bye) + B 0 x 1 + A 7 x 0 = 2
    #     C: A 7 x 1/2 + D 5 x 1/2 + own 3 x 1/2 (bye) = 7.5;  B: 0
    assert [st.value(p, "SB") for p in "ADECB"] == [5.5, 9, 2, 7.5, 0]
    # WIN: a forfeit win counts, a bye worth a draw does not
    assert [st.value(p, "WIN") for p in "ADECB"] == [2, 1, 1, 0, 0]
    assert [st.value(p, "WON") for p in "ADECB"] == [2, 0, 1, 0, 0]
    # a bye worth a win counts as one, for WIN and as a full game point for SB
    won_bye = Standings.from_results(
        [Result.bye("A", 3.0), G("A", "B", "1/2-1/2")], ("WIN", "SB"), scoring=norway
    )
    assert won_bye.value("A", "WIN") == 1
    assert won_bye.value("A", "SB") == 4 * 1 + 1 * 0.5  # own 4 x 1 + B 1 x 1/2
    assert won_bye.row("A").points == 4.0


def test_direct_encounter_reach_uses_the_larger_win() -> None:
    # A, B, C on 3 with 3/1/0; A beat B (3 to 0), C met neither: C could still
    # score 3 against A (and against B), so A is not separated (with a reach
    # of 1 point a game he would be: 3 > 2)
    norway = Scoring.symmetric(3, 1)
    games = [G("A", "B", "1-0"), G("B", "Y", "1-0"), G("C", "Z", "1-0")]
    st = Standings.from_results(games, ("DE",), scoring=norway)
    assert {r.player: r.points for r in st.rows if r.points == 3} == {"A": 3, "B": 3, "C": 3}
    assert st.leaders() == ["A", "B", "C"]
    assert [st.value(p, "DE") for p in "ABC"] == [3.0, 0.0, 0.0]


def test_standard_scoring_is_the_default() -> None:
    for games, tbs in ((RR5, ("DE", "SB", "WIN", "BH", "BH-C1")), (SWISS, ("BH", "SB", "WON"))):
        assert Standings.from_results(games, tbs, scoring=Scoring.standard()) == (
            Standings.from_results(games, tbs)
        )
    # scoring 2 / 1 / 0 doubles every value and ranks alike
    double = Standings.from_results(RR5, ("DE", "SB", "WIN", "BH"), scoring=Scoring.symmetric(2, 1))
    plain = Standings.from_results(RR5, ("DE", "SB", "WIN", "BH"))
    assert [r.player for r in double.rows] == [r.player for r in plain.rows]
    assert [r.points for r in double.rows] == [2 * r.points for r in plain.rows]
    assert double.value("A", "SB") == 2 * (plain.value("A", "SB") or 0)


def test_totals_that_are_not_exact_in_binary_still_tie() -> None:
    # draws worth 0.1: 1 + 0.1 + 0.1 and 0.1 + 0.1 + 1 differ in the last bit
    # when added in that order; they are rounded, so A and B tie on points
    tenths = Scoring.symmetric(1, 0.1)
    games = [
        G("A", "X", "1-0"),
        G("A", "Y", "1/2-1/2"),
        G("A", "Z", "1/2-1/2"),
        G("B", "X", "1/2-1/2"),
        G("B", "Y", "1/2-1/2"),
        G("B", "Z", "1-0"),
    ]
    assert 1 + 0.1 + 0.1 != 0.1 + 0.1 + 1
    st = Standings.from_results(games, (), scoring=tenths)
    assert (st.row("A").points, st.row("B").points) == (1.2, 1.2)
    assert st.leaders() == ["A", "B"]


def test_bye_values() -> None:
    assert Result.bye("A", 3.0).white_points == 3.0
    for bad in (-1.0, math.nan):
        with pytest.raises(ValueError, match="bye is worth"):
            Result.bye("A", bad)
