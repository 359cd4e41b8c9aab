"""Per-game W/D/L and exact match odds, against brute-force enumeration."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from livegain.core.elo import expected_logistic
from livegain.core.odds import (
    GameOdds,
    MatchOdds,
    difference_distribution,
    game_probabilities,
    match_odds,
    match_odds_games,
)


def brute_force(
    game: GameOdds, games_left: int, score_a: float, score_b: float, current: GameOdds | None
) -> MatchOdds:
    """Enumerate all 3^n outcome sequences (independent of the DP implementation)."""
    a = d = b = 0.0
    per_game = [current if (current is not None and k == 0) else game for k in range(games_left)]
    for outcome in itertools.product((1.0, 0.5, 0.0), repeat=games_left):
        prob = 1.0
        sa, sb = score_a, score_b
        for g, o in zip(per_game, outcome, strict=True):
            prob *= g.win if o == 1.0 else g.draw if o == 0.5 else g.loss
            sa += o
            sb += 1.0 - o
        if sa > sb:
            a += prob
        elif sa == sb:
            d += prob
        else:
            b += prob
    return MatchOdds(a, d, b)


@st.composite
def game_odds(draw: st.DrawFn) -> GameOdds:
    w = draw(st.floats(0, 1))
    d = draw(st.floats(0, 1))
    lo = draw(st.floats(0, 1))
    total = w + d + lo
    if total == 0:
        return GameOdds(0.0, 1.0, 0.0)
    return GameOdds(w / total, d / total, lo / total)


def test_carlsen_caruana_per_game_seed_000() -> None:
    g = game_probabilities(2834.7 - 2832.3, 0.6)
    assert round(g.win, 3) == 0.203
    assert round(g.loss, 3) == 0.197
    assert g.draw == 0.6
    assert g.expected_score == pytest.approx(expected_logistic(2.4))


def test_carlsen_caruana_12_games_seed_000() -> None:
    """Seed 000's 42.4 % / 18.1 % / 39.5 %, from the correct multinomial."""
    g = game_probabilities(2834.7 - 2832.3, 0.6)
    m = match_odds(g, 12)
    assert (round(100 * m.a_wins, 1), round(100 * m.draw, 1), round(100 * m.b_wins, 1)) == (
        42.4,
        18.1,
        39.5,
    )


def test_multinomial_closed_form_matches() -> None:
    """Sum of n!/(w! d! l!) p^w q^d r^l over final outcomes, written out directly."""
    g = game_probabilities(50, 0.4)
    n = 9
    a = d = 0.0
    for w in range(n + 1):
        for lo in range(n - w + 1):
            dr = n - w - lo
            p = (
                math.factorial(n)
                / (math.factorial(w) * math.factorial(dr) * math.factorial(lo))
                * g.win**w
                * g.draw**dr
                * g.loss**lo
            )
            if w > lo:
                a += p
            elif w == lo:
                d += p
    m = match_odds(g, n)
    assert m.a_wins == pytest.approx(a, abs=1e-12)
    assert m.draw == pytest.approx(d, abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(
    game_odds(),
    st.integers(min_value=0, max_value=7),
    st.integers(min_value=0, max_value=8),
    st.integers(min_value=0, max_value=8),
    st.one_of(st.none(), game_odds()),
)
def test_match_odds_equal_brute_force(
    game: GameOdds, n: int, half_a: int, played: int, current: GameOdds | None
) -> None:
    score_a = min(half_a, 2 * played) / 2
    score_b = played - score_a
    if n == 0:
        current = None
    got = match_odds(game, n, score_a, score_b, current)
    want = brute_force(game, n, score_a, score_b, current)
    assert got.a_wins == pytest.approx(want.a_wins, abs=1e-12)
    assert got.draw == pytest.approx(want.draw, abs=1e-12)
    assert got.b_wins == pytest.approx(want.b_wins, abs=1e-12)
    assert got.a_wins + got.draw + got.b_wins == pytest.approx(1.0, abs=1e-12)


@given(
    st.floats(min_value=-800, max_value=800),
    st.floats(min_value=0, max_value=1),
    st.integers(min_value=1, max_value=30),
)
def test_odds_sum_to_one_and_swap(diff: float, draw_rate: float, n: int) -> None:
    g = game_probabilities(diff, draw_rate)
    assert g.win + g.draw + g.loss == pytest.approx(1.0)
    assert min(g.win, g.draw, g.loss) >= 0
    m = match_odds(g, n)
    assert m.a_wins + m.draw + m.b_wins == pytest.approx(1.0, abs=1e-9)
    swapped = match_odds(game_probabilities(-diff, draw_rate), n)
    assert swapped.a_wins == pytest.approx(m.b_wins, abs=1e-9)
    assert swapped.b_wins == pytest.approx(m.a_wins, abs=1e-9)


@given(st.floats(min_value=-600, max_value=600), st.floats(min_value=0, max_value=1))
def test_game_probabilities_keep_expected_score(diff: float, draw_rate: float) -> None:
    g = game_probabilities(diff, draw_rate)
    assert g.expected_score == pytest.approx(expected_logistic(diff), abs=1e-12)


def test_draw_rate_is_clamped_when_too_high() -> None:
    # E = 0.909 at +400: D/2 = 0.4 > 1 - E; draw rate lowered to 2*(1-E).
    g = game_probabilities(400, 0.8)
    e = expected_logistic(400)
    assert g.loss == 0.0
    assert g.draw == pytest.approx(2 * (1 - e))
    assert g.win == pytest.approx(e - g.draw / 2)
    assert g.expected_score == pytest.approx(e)


def test_more_games_favour_the_stronger_player() -> None:
    g = game_probabilities(100, 0.5)
    odds = [match_odds(g, n).a_wins for n in (1, 5, 25, 125)]
    assert odds == sorted(odds)


def test_decided_and_finished_matches() -> None:
    g = game_probabilities(0, 0.5)
    assert match_odds(g, 0, 6.5, 5.5) == MatchOdds(1.0, 0.0, 0.0)
    assert match_odds(g, 0, 6, 6) == MatchOdds(0.0, 1.0, 0.0)
    # Leading by 3 with 2 games left: A has won.
    assert match_odds(g, 2, 5, 2).a_wins == 1.0


def test_current_game_counts_as_one_of_the_games_left() -> None:
    g = game_probabilities(0, 0.6)
    current = GameOdds(0.7, 0.3, 0.0)
    got = match_odds(g, 3, 4.5, 5.5, current)
    want_a = (
        current.win * match_odds(g, 2, 5.5, 5.5).a_wins
        + current.draw * match_odds(g, 2, 5.0, 6.0).a_wins
        + current.loss * match_odds(g, 2, 4.5, 6.5).a_wins
    )
    assert got.a_wins == pytest.approx(want_a)


def test_difference_distribution_sums_to_one() -> None:
    offset, dist = difference_distribution(GameOdds(0.3, 0.4, 0.3), 10)
    assert offset == 10
    assert dist.size == 21
    assert float(dist.sum()) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "bad",
    [
        lambda: GameOdds(0.5, 0.5, 0.5),
        lambda: GameOdds(-0.1, 0.6, 0.5),
        lambda: game_probabilities(0, 1.5),
        lambda: match_odds(GameOdds(0.3, 0.4, 0.3), -1),
        lambda: match_odds(GameOdds(0.3, 0.4, 0.3), 0, current=GameOdds(1, 0, 0)),
        lambda: match_odds(GameOdds(0.3, 0.4, 0.3), 2, score_a=0.3),
    ],
)
def test_bad_input_raises(bad: object) -> None:
    with pytest.raises(ValueError):
        bad()  # type: ignore[operator]


def brute_force_games(games: list[GameOdds], score_a: float, score_b: float) -> MatchOdds:
    """Enumerate all 3^n outcome sequences of games with their own W/D/L."""
    a = d = b = 0.0
    for outcome in itertools.product((1.0, 0.5, 0.0), repeat=len(games)):
        prob = 1.0
        sa, sb = score_a, score_b
        for g, o in zip(games, outcome, strict=True):
            prob *= g.win if o == 1.0 else g.draw if o == 0.5 else g.loss
            sa += o
            sb += 1.0 - o
        if sa > sb:
            a += prob
        elif sa == sb:
            d += prob
        else:
            b += prob
    return MatchOdds(a, d, b)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(game_odds(), max_size=6),
    st.integers(0, 6).map(lambda x: x / 2),
    st.integers(0, 6).map(lambda x: x / 2),
)
def test_match_odds_games_equal_brute_force(
    games: list[GameOdds], score_a: float, score_b: float
) -> None:
    """Games with their own W/D/L (colours alternating under a White
    advantage): the exact DP equals the enumeration of all outcomes."""
    got = match_odds_games(games, score_a, score_b)
    want = brute_force_games(games, score_a, score_b)
    assert (got.a_wins, got.draw, got.b_wins) == pytest.approx(
        (want.a_wins, want.draw, want.b_wins), abs=1e-12
    )


def test_match_odds_games_with_every_game_alike_is_match_odds() -> None:
    g = game_probabilities(30.0, 0.55)
    current = GameOdds(0.4, 0.5, 0.1)
    got = match_odds_games([current] + [g] * 7, 2.5, 1.5)
    ref = match_odds(g, 8, 2.5, 1.5, current)
    assert (got.a_wins, got.draw, got.b_wins) == pytest.approx(
        (ref.a_wins, ref.draw, ref.b_wins), abs=1e-15
    )
    assert match_odds_games([], 3, 2) == MatchOdds(1.0, 0.0, 0.0)
