"""The player table: performance, FIDE rating change with the K that what is known of
each player gives, accuracy over the event; checked against hand-computed cases."""

from __future__ import annotations

import pytest

from livegain.core.accuracy import GameAccuracy, PlayerAccuracy
from livegain.core.event_table import GameEntry
from livegain.core.players import (
    PlayerFacts,
    k_factor,
    player_line,
    player_table,
    resolve_facts,
)
from livegain.core.snapshot import PlayerInfo

# 2000 beats 1800 and 2200: Ra = 2000, p = 1.0, dp = +800 -> 2800. Expected scores
# 1/(1+10^(-200/400)) = 0.759747 and 0.240253 sum to exactly 1, so the change is K * 1.
TWO_WINS = [(1800, 1.0), (2200, 1.0)]


def test_two_wins_against_an_average_of_2000_perform_2800_and_gain_k() -> None:
    line = player_line("a", 2000, TWO_WINS, [])
    assert line.rated_games == 2
    assert line.performance == 2800.0
    assert line.k == 20
    assert line.rating_change == pytest.approx(20.0)


def test_a_draw_and_a_loss_hand_computed() -> None:
    # 2100 draws 2300 (E = 1/(1+10^(200/400)) = 0.240253) and loses to 1900
    # (E = 0.759747): S - E = 0.5 - 1.0 = -0.5, K = 20 -> -10.0; p = 0.25,
    # dp(0.25) = -dp(0.75) = -193, Ra = 2100 -> 1907.
    line = player_line("a", 2100, [(2300, 0.5), (1900, 0.0)], [])
    assert line.rating_change == pytest.approx(-10.0)
    assert line.performance == 1907.0


def test_the_400_point_rule_caps_the_difference() -> None:
    # 2000 beats 1400: counted as 400 points, E = 1/(1+10^-1) = 0.909091;
    # K = 20 -> 20 * 0.090909 = 1.82.
    line = player_line("a", 2000, [(1400, 1.0)], [])
    assert line.rating_change == pytest.approx(20 * (1 - 1 / 1.1))


@pytest.mark.parametrize(
    ("rating", "facts", "year", "n", "k"),
    [
        (2000, PlayerFacts(), 2026, 2, 20),  # nothing known: an established adult
        (2450, PlayerFacts(), 2026, 2, 10),  # 2400 and above
        (2300, PlayerFacts(ever_2400=True), 2026, 2, 10),
        (2000, PlayerFacts(games=12), 2026, 2, 40),  # new to the list
        (2000, PlayerFacts(games=30), 2026, 2, 20),
        (2000, PlayerFacts(born=2008), 2026, 2, 40),  # turns 18 this year: still junior
        (2000, PlayerFacts(born=2007), 2026, 2, 20),  # 19
        (2350, PlayerFacts(born=2012), 2026, 2, 20),  # junior, but 2300 or more
        (2000, PlayerFacts(born=2012), None, 2, 20),  # the year unknown: no age
        (2000, PlayerFacts(games=5), 2026, 18, 38),  # 40 * 18 > 700: 700 // 18
        (2000, PlayerFacts(k=10), 2026, 2, 10),  # given outright
    ],
)
def test_k_from_what_is_known(
    rating: int, facts: PlayerFacts, year: int | None, n: int, k: int
) -> None:
    assert k_factor(rating, facts, year, n) == k


def test_a_junior_gains_twice_as_much() -> None:
    line = player_line("a", 2000, TWO_WINS, [], PlayerFacts(born=2012), 2026)
    assert line.k == 40
    assert line.rating_change == pytest.approx(40.0)


def test_unrated_opponents_and_unrated_players() -> None:
    line = player_line("a", 2000, [(None, 1.0), (0, 1.0)], [])
    assert (line.rated_games, line.performance, line.k, line.rating_change) == (0, None, None, None)
    unrated = player_line("b", None, TWO_WINS, [])
    assert unrated.performance == 2800.0
    assert (unrated.k, unrated.rating_change) == (None, None)


def test_accuracy_over_the_event_is_the_mean_of_his_games() -> None:
    games = [
        PlayerAccuracy(90.0, 30, opening=95.0),
        PlayerAccuracy(70.0, 20),
        PlayerAccuracy(None, 0),
    ]
    line = player_line("a", 2000, [], games)
    assert line.accuracy.overall == 80.0
    assert line.accuracy.moves == 50
    assert line.accuracy.opening == 95.0


def entry(
    white: PlayerInfo, black: PlayerInfo, result: str, acc: tuple[float, float] | None = None
) -> GameEntry:
    accuracy = None
    if acc is not None:
        accuracy = GameAccuracy(PlayerAccuracy(acc[0], 20), PlayerAccuracy(acc[1], 20))
    return GameEntry(
        board_id=f"{white.name}-{black.name}",
        white=white,
        black=black,
        round="1",
        result=result,
        plies=40,
        accuracy=accuracy,
    )


def test_the_table_of_an_event() -> None:
    ann = PlayerInfo("Alpha, Ann", rating=2000, fide_id="100")
    bob = PlayerInfo("Beta, Bob", rating=1800)
    cid = PlayerInfo("Gamma, Cid", rating=2200)
    entries = [
        entry(ann, bob, "1-0", (92.0, 61.0)),
        entry(cid, ann, "0-1", (70.0, 88.0)),
        entry(bob, cid, "*", (80.0, 85.0)),  # in progress: its accuracy counts, not its result
    ]
    ratings = {"fide:100": 2000, "beta bob": 1800, "cid gamma": 2200}
    facts = resolve_facts(
        {"100": PlayerFacts(born=2012), "Beta": PlayerFacts(games=3)},
        {
            "fide:100": ann,
            "beta bob": bob,
            "cid gamma": cid,
        },
    )
    assert facts == {"fide:100": PlayerFacts(born=2012), "beta bob": PlayerFacts(games=3)}
    table = player_table(entries, ratings, facts, 2026)
    a = table["fide:100"]
    assert (a.performance, a.k, a.rating_change) == (2800.0, 40, pytest.approx(40.0))
    assert a.accuracy.overall == 90.0
    b = table["beta bob"]
    # lost to 2000: E = 1/(1+10^(200/400)) = 0.240253, K = 40 (3 games played)
    assert b.k == 40
    assert b.rating_change == pytest.approx(-40 / (1 + 10**0.5))
    assert b.performance == 1200.0  # p = 0: Ra - 800
    assert b.accuracy.overall == pytest.approx(70.5)
    c = table["cid gamma"]
    # 2200 lost to 2000: E = 1/(1+10^(-200/400)) = 0.759747, K = 20 -> -15.19
    assert (c.rated_games, c.k) == (1, 20)
    assert c.rating_change == pytest.approx(-20 / (1 + 10**-0.5))
    assert c.accuracy.overall == 77.5


def test_a_configured_name_that_matches_nobody_is_left_out() -> None:
    ann = PlayerInfo("Alpha, Ann", rating=2000)
    assert resolve_facts({"Nobody": PlayerFacts(k=10)}, {"alpha ann": ann}) == {}
