"""Tournament-win odds: the simulation against exact enumeration, the draw model,
live W/D/L, play-off rules, reproducibility."""

from __future__ import annotations

import itertools
import math

import pytest

from livegain.core.elo import expected_logistic
from livegain.core.scoring import Scoring, SidePoints
from livegain.core.standings import Result
from livegain.core.tournament_odds import (
    Playoff,
    WinChance,
    contenders,
    exact_win_odds,
    win_odds,
)

G = Result.game

PLAYERS = ["A", "B", "C", "D", "E", "F"]
RATINGS = {"A": 2780.0, "B": 2750.0, "C": 2720.0, "D": 2700.0, "E": 2690.0, "F": 2650.0}
# A 6-player round robin (15 games): 8 finished, 2 in progress, 5 not started
PAIRS = list(itertools.combinations(PLAYERS, 2))
FINISHED = [
    G("A", "B", "1/2-1/2"),
    G("C", "D", "1-0"),
    G("E", "F", "0-1"),
    G("A", "C", "0-1"),
    G("B", "E", "1-0"),
    G("D", "F", "1/2-1/2"),
    G("A", "D", "1-0"),
    G("B", "F", "1/2-1/2"),
]
IN_PROGRESS = [("C", "E", (450, 400, 150)), ("A", "F", (0.2, 0.5, 0.3))]
_started = {frozenset((r.white, r.black)) for r in FINISHED} | {
    frozenset((w, b)) for w, b, _ in IN_PROGRESS
}
UPCOMING = [(w, b) for w, b in PAIRS if frozenset((w, b)) not in _started]


def assert_close(mc: dict[str, WinChance], exact: dict[str, float], sims: int) -> None:
    """Within 4 standard errors (the estimated one; for a rare event that may not
    have happened at all, the one the exact probability implies)."""
    assert set(mc) == set(exact)
    for p, (prob, se) in mc.items():
        if exact[p] in (0.0, 1.0):
            assert prob == exact[p] and se == 0.0, p
        else:
            expected_se = math.sqrt(exact[p] * (1.0 - exact[p]) / sims)
            assert abs(prob - exact[p]) <= 4.0 * max(se, expected_se), (p, prob, se, exact[p])
    assert sum(x.p for x in mc.values()) == pytest.approx(1.0)
    assert sum(exact.values()) == pytest.approx(1.0)


def test_schedule_fixture() -> None:
    assert len(UPCOMING) == 5
    assert len(FINISHED) + len(IN_PROGRESS) + len(UPCOMING) == 15


@pytest.mark.parametrize("playoff", ["share", "rating"])
@pytest.mark.parametrize(
    "tiebreaks",
    [(), ("DE",), ("DE", "SB", "WIN"), ("WON", "BH-C1", "DE"), ("SB", "BH")],
)
def test_simulation_matches_exact_enumeration(tiebreaks: tuple[str, ...], playoff: Playoff) -> None:
    exact = exact_win_odds(
        PLAYERS, RATINGS, FINISHED, IN_PROGRESS, UPCOMING, tiebreaks=tiebreaks, playoff=playoff
    )
    mc = win_odds(
        PLAYERS,
        RATINGS,
        FINISHED,
        IN_PROGRESS,
        UPCOMING,
        sims=60_000,
        seed=7,
        tiebreaks=tiebreaks,
        playoff=playoff,
    )
    assert_close(mc, exact, 60_000)


NORWAY = Scoring.symmetric(3, 1)
# Lichess customScoring: Black gets more for a draw
BLACK_DRAW = Scoring.from_lichess(
    {"white": {"win": 3, "draw": 1}, "black": {"win": 3, "draw": 1.5}}
)
# asymmetric wins too, and a loss worth something
LOPSIDED = Scoring(SidePoints(2, 1, 0.5), SidePoints(3, 2, 0))


@pytest.mark.parametrize("scoring", [NORWAY, BLACK_DRAW, LOPSIDED], ids=["3-1-0", "black", "lop"])
@pytest.mark.parametrize(
    ("tiebreaks", "playoff"),
    [((), "share"), (("DE", "SB", "WIN"), "share"), (("WON", "BH-C1", "DE"), "rating")],
)
def test_simulation_matches_exact_enumeration_with_custom_scoring(
    scoring: Scoring, tiebreaks: tuple[str, ...], playoff: Playoff
) -> None:
    exact = exact_win_odds(
        PLAYERS,
        RATINGS,
        FINISHED,
        IN_PROGRESS,
        UPCOMING,
        tiebreaks=tiebreaks,
        playoff=playoff,
        scoring=scoring,
    )
    mc = win_odds(
        PLAYERS,
        RATINGS,
        FINISHED,
        IN_PROGRESS,
        UPCOMING,
        sims=60_000,
        seed=8,
        tiebreaks=tiebreaks,
        playoff=playoff,
        scoring=scoring,
    )
    assert_close(mc, exact, 60_000)
    # the scoring changes the odds (the same games, 1 / 1/2 / 0)
    plain = exact_win_odds(
        PLAYERS, RATINGS, FINISHED, IN_PROGRESS, UPCOMING, tiebreaks=tiebreaks, playoff=playoff
    )
    assert max(abs(exact[p] - plain[p]) for p in PLAYERS) > 0.01


def test_scoring_that_only_scales_the_points_changes_nothing() -> None:
    # 2 / 1 / 0 doubles every total: the same simulations rank alike (the
    # general code path against the standard one), and exactly so
    args = (PLAYERS, RATINGS, FINISHED, IN_PROGRESS, UPCOMING)
    tbs = ("DE", "SB", "WIN", "BH")
    double = Scoring.symmetric(2, 1)
    assert win_odds(*args, sims=30_000, seed=3, tiebreaks=tbs, scoring=double) == win_odds(
        *args, sims=30_000, seed=3, tiebreaks=tbs
    )
    assert win_odds(*args, sims=1_000, seed=3, scoring=Scoring.standard()) == win_odds(
        *args, sims=1_000, seed=3
    )
    assert exact_win_odds(*args, tiebreaks=tbs, scoring=double) == pytest.approx(
        exact_win_odds(*args, tiebreaks=tbs)
    )


def test_scoring_not_exact_in_binary() -> None:
    # draws worth 0.1: totals are rounded so that equal ones tie, in the
    # simulation as in the standings
    tenths = Scoring.symmetric(1, 0.1)
    args = (PLAYERS, RATINGS, FINISHED, IN_PROGRESS, UPCOMING)
    tbs = ("DE", "SB", "WIN")
    exact = exact_win_odds(*args, tiebreaks=tbs, scoring=tenths)
    mc = win_odds(*args, sims=60_000, seed=11, tiebreaks=tbs, scoring=tenths)
    assert_close(mc, exact, 60_000)


# A Swiss after 3 rounds (byes, a forfeit; A and D never met, nor C and E),
# round 4 under way: A-D in progress, C-E not started, B has a bye.
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
    Result.bye("B", 1.0, 4),
]


@pytest.mark.parametrize(
    "tiebreaks", [("BH-C1", "SB", "WON"), ("DE", "WIN", "BH"), ("WIN", "DE", "SB")]
)
def test_swiss_round_matches_exact_enumeration(tiebreaks: tuple[str, ...]) -> None:
    players = ["A", "B", "C", "D", "E"]
    ratings = {"A": 2600.0, "B": 2500.0, "C": 2550.0, "D": 2620.0, "E": 2450.0}
    live = [("A", "D", (300, 500, 200))]
    upcoming = [("C", "E")]
    exact = exact_win_odds(players, ratings, SWISS, live, upcoming, tiebreaks=tiebreaks)
    mc = win_odds(players, ratings, SWISS, live, upcoming, sims=40_000, seed=3, tiebreaks=tiebreaks)
    assert_close(mc, exact, 40_000)
    # leading after round 4 needs 3 points at least: C and E cannot (at most 3, behind A/D)
    assert exact["B"] == 0.0
    # with 3 / 1 / 0 the byes keep their value (1, a draw's): byes, a forfeit
    # and players who never met, scored with the custom points
    args = (players, ratings, SWISS, live, upcoming)
    exact = exact_win_odds(*args, tiebreaks=tiebreaks, scoring=NORWAY)
    mc = win_odds(*args, sims=40_000, seed=3, tiebreaks=tiebreaks, scoring=NORWAY)
    assert_close(mc, exact, 40_000)


# A Swiss after 3 rounds: A, B, C on 2 points; A beat B and C, B and C never met.
#   R1: A-B 1-0, C-D 1-0, E-F 1/2;  R2: C-A 0-1, B-E 1-0, D-F 1/2;  R3: E-A 1-0, B-D 1-0, C-F 1-0
# Round 4: A-D in progress, B-F and C-E not started.
SWISS_DE = [
    G("A", "B", "1-0", 1),
    G("C", "D", "1-0", 1),
    G("E", "F", "1/2-1/2", 1),
    G("C", "A", "0-1", 2),
    G("B", "E", "1-0", 2),
    G("D", "F", "1/2-1/2", 2),
    G("E", "A", "1-0", 3),
    G("B", "D", "1-0", 3),
    G("C", "F", "1-0", 3),
]


@pytest.mark.parametrize("tiebreaks", [("DE",), ("DE", "SB"), ("WIN", "DE")])
def test_swiss_direct_encounter_among_players_who_did_not_all_meet(
    tiebreaks: tuple[str, ...],
) -> None:
    players = ["A", "B", "C", "D", "E", "F"]
    ratings = {"A": 2600.0, "B": 2600.0, "C": 2600.0, "D": 2400.0, "E": 2450.0, "F": 2400.0}
    live = [("A", "D", (500, 400, 100))]
    upcoming = [("B", "F"), ("C", "E")]
    exact = exact_win_odds(players, ratings, SWISS_DE, live, upcoming, tiebreaks=tiebreaks)
    mc = win_odds(
        players, ratings, SWISS_DE, live, upcoming, sims=40_000, seed=4, tiebreaks=tiebreaks
    )
    assert_close(mc, exact, 40_000)
    # A, B, C level after round 4: A, who beat both, is ahead; B and C (never met)
    # stay level. Without the direct encounter A would only share.
    plain = exact_win_odds(players, ratings, SWISS_DE, live, upcoming, tiebreaks=())
    assert exact["A"] > plain["A"] + 0.1


# Another Swiss after 3 rounds: A, B, C on 2 points; A beat B, C met neither.
#   R1: A-B 1-0, C-D 1-0, E-F 1/2;  R2: A-E 1-0, B-D 1-0, C-F 1-0;  R3: D-A 1-0, B-F 1-0, E-C 1-0
# Round 4: C has a bye (3 points), A-F in progress, B-E not started.
SWISS_UNMET = [
    G("A", "B", "1-0", 1),
    G("C", "D", "1-0", 1),
    G("E", "F", "1/2-1/2", 1),
    G("A", "E", "1-0", 2),
    G("B", "D", "1-0", 2),
    G("C", "F", "1-0", 2),
    G("D", "A", "1-0", 3),
    G("B", "F", "1-0", 3),
    G("E", "C", "1-0", 3),
    Result.bye("C", 1.0, 4),
]


def test_swiss_direct_encounter_does_not_rank_on_games_not_played() -> None:
    # A, B, C level on 3: A beat B, but C could still have beaten A: nobody is
    # separated, the three share (C is in every tie for first).
    players = ["A", "B", "C", "D", "E", "F"]
    ratings = {"A": 2600.0, "B": 2600.0, "C": 2600.0, "D": 2400.0, "E": 2400.0, "F": 2400.0}
    live = [("A", "F", (600, 300, 100))]
    upcoming = [("B", "E")]
    exact = exact_win_odds(players, ratings, SWISS_UNMET, live, upcoming, tiebreaks=("DE",))
    plain = exact_win_odds(players, ratings, SWISS_UNMET, live, upcoming, tiebreaks=())
    assert exact == pytest.approx(plain)
    mc = win_odds(
        players, ratings, SWISS_UNMET, live, upcoming, sims=40_000, seed=6, tiebreaks=("DE",)
    )
    assert_close(mc, exact, 40_000)


def test_games_not_started_use_the_draw_model_not_the_expected_score() -> None:
    # A (0.5) is half a point behind B (1) and they meet in the last game: A
    # finishes first only by winning it, W = E - D/2 (seed 000), not E.
    players = ["A", "B", "C"]
    ratings = {"A": 2800.0, "B": 2700.0, "C": 2700.0}
    finished = [G("A", "C", "1/2-1/2"), G("B", "C", "1-0")]
    left = [("A", "B")]
    e = expected_logistic(100.0)
    exact = exact_win_odds(players, ratings, finished, (), left, tiebreaks=(), draw_rate=0.5)
    assert exact["A"] == pytest.approx(e - 0.25)
    assert exact["B"] == pytest.approx(1.0 - exact["A"])
    mc = win_odds(players, ratings, finished, (), left, sims=50_000, seed=1, draw_rate=0.5)
    assert abs(mc["A"].p - (e - 0.25)) < 4 * mc["A"].stderr
    # a higher draw rate lowers A's chance by half the extra draws
    more = exact_win_odds(players, ratings, finished, (), left, tiebreaks=(), draw_rate=0.7)
    assert more["A"] == pytest.approx(e - 0.35)


def test_live_wdl_moves_the_odds_in_its_direction() -> None:
    # the game C-E, in progress, with the live W/D/L instead of the ratings
    rating_only = exact_win_odds(PLAYERS, RATINGS, FINISHED, [], [*UPCOMING, ("C", "E")])
    c_winning = exact_win_odds(PLAYERS, RATINGS, FINISHED, [("C", "E", (950, 50, 0))], UPCOMING)
    c_losing = exact_win_odds(PLAYERS, RATINGS, FINISHED, [("C", "E", (0, 100, 900))], UPCOMING)
    assert c_winning["C"] > rating_only["C"] + 0.05
    assert c_losing["C"] < rating_only["C"] - 0.05
    assert c_losing["E"] > rating_only["E"]
    # the simulation agrees, and a decided live W/D/L (1000/0/0) is a finished win
    mc = win_odds(
        PLAYERS, RATINGS, FINISHED, [("C", "E", (950, 50, 0))], UPCOMING, sims=40_000, seed=5
    )
    assert_close(mc, c_winning, 40_000)
    won = exact_win_odds(PLAYERS, RATINGS, FINISHED, [("C", "E", (1000, 0, 0))], UPCOMING)
    finished = exact_win_odds(PLAYERS, RATINGS, [*FINISHED, G("C", "E", "1-0")], [], UPCOMING)
    assert won == pytest.approx(finished)


def test_playoff_rules_for_a_tie_left_after_the_tiebreaks() -> None:
    # all games over, A and B level on everything
    players = ["A", "B", "C"]
    ratings = {"A": 2800.0, "B": 2700.0, "C": 2600.0}
    finished = [G("A", "B", "1/2-1/2"), G("A", "C", "1-0"), G("B", "C", "1-0")]
    share = win_odds(players, ratings, finished, sims=1000, seed=0)
    assert share == {"A": (0.5, 0.0), "B": (0.5, 0.0), "C": (0.0, 0.0)}
    # play-off from the ratings: one decisive game, A wins with W / (W + L)
    e = expected_logistic(100.0)
    w, lo = e - 0.25, 1.0 - e - 0.25
    exact = exact_win_odds(players, ratings, finished, playoff="rating")
    assert exact["A"] == pytest.approx(w / (w + lo))
    mc = win_odds(players, ratings, finished, sims=50_000, seed=0, playoff="rating")
    assert_close(mc, exact, 50_000)
    # a tiebreak that separates them leaves nothing to the play-off
    # (SB: A 1/2*1.5 + 1*0 = 0.75, B 1/2*1.5 + 1*0 = 0.75; wins equal; none separate)
    assert exact_win_odds(players, ratings, finished, tiebreaks=("SB", "WIN"))["A"] == 0.5


def test_three_way_playoff() -> None:
    players = ["A", "B", "C"]
    cycle = [G("A", "B", "1-0"), G("B", "C", "1-0"), G("C", "A", "1-0")]
    equal = dict.fromkeys(players, 2700.0)
    exact = exact_win_odds(players, equal, cycle, playoff="rating")
    assert exact == pytest.approx(dict.fromkeys(players, 1 / 3))
    ratings = {"A": 2800.0, "B": 2700.0, "C": 2600.0}
    exact = exact_win_odds(players, ratings, cycle, playoff="rating")
    assert exact["A"] > exact["B"] > exact["C"] > 0
    mc = win_odds(players, ratings, cycle, sims=60_000, seed=2, playoff="rating")
    assert_close(mc, exact, 60_000)
    assert exact_win_odds(players, ratings, cycle) == pytest.approx(dict.fromkeys(players, 1 / 3))


def test_seeded_runs_are_reproducible() -> None:
    args = (PLAYERS, RATINGS, FINISHED, IN_PROGRESS, UPCOMING)
    a = win_odds(*args, sims=30_000, seed=42)
    b = win_odds(*args, sims=30_000, seed=42)
    c = win_odds(*args, sims=30_000, seed=43)
    assert a == b
    assert a != c
    # more simulations than one batch: still reproducible, error shrinks as 1/sqrt(n)
    d = win_odds(*args, sims=45_000, seed=42, playoff="rating")
    assert d == win_odds(*args, sims=45_000, seed=42, playoff="rating")
    big = win_odds(*args, sims=120_000, seed=1)
    for p in PLAYERS:
        if a[p].stderr:
            assert big[p].stderr == pytest.approx(a[p].stderr * math.sqrt(30 / 120), rel=0.15)


def test_stderr_is_the_binomial_one_without_shared_ties() -> None:
    mc = win_odds(
        PLAYERS, RATINGS, FINISHED, IN_PROGRESS, UPCOMING, sims=20_000, seed=9, playoff="rating"
    )
    for prob, se in mc.values():
        assert se == pytest.approx(math.sqrt(prob * (1 - prob) / (20_000 - 1)), rel=1e-9, abs=1e-15)


def test_inputs_are_checked() -> None:
    with pytest.raises(ValueError, match="not in the players: Z"):
        win_odds(PLAYERS, RATINGS, upcoming=[("A", "Z")])
    with pytest.raises(ValueError, match="no rating for: F"):
        win_odds(PLAYERS, {k: v for k, v in RATINGS.items() if k != "F"}, upcoming=[("A", "F")])
    with pytest.raises(ValueError, match="W/D/L"):
        win_odds(PLAYERS, RATINGS, in_progress=[("A", "B", (0, 0, 0))])
    with pytest.raises(ValueError, match="playoff"):
        win_odds(PLAYERS, RATINGS, playoff="coin")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown tie-break"):
        win_odds(PLAYERS, RATINGS, tiebreaks=("koya",))
    with pytest.raises(ValueError, match="at most"):
        exact_win_odds(PLAYERS, RATINGS, upcoming=PAIRS)


def test_contenders() -> None:
    alive = contenders(PLAYERS, FINISHED, [(w, b) for w, b, _ in IN_PROGRESS] + UPCOMING)
    assert alive == PLAYERS
    done = [G("A", "B", "1-0"), G("A", "C", "1-0"), G("B", "C", "1/2-1/2")]
    # A 2, B 0.5, C 0.5: B can reach 2.5 in two games, C only 1.5
    assert contenders(["A", "B", "C"], done, [("B", "C"), ("A", "B")]) == ["A", "B"]
    assert contenders(["A", "B", "C"], done, []) == ["A"]
    # 3/1/0: A 6, B 1, C 1; B can reach 7 in two games, C only 4
    assert contenders(["A", "B", "C"], done, [("B", "C"), ("A", "B")], NORWAY) == ["A", "B"]
    # a game left is worth the larger win: C reaches 1 + 6 with Black's wins worth 6
    big_black = Scoring(SidePoints(3, 1), SidePoints(6, 1))
    assert contenders(["A", "B", "C"], done, [("B", "C")], big_black) == ["A", "B", "C"]
