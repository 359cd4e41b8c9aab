"""Odds of winning a Swiss (livegain.core.swiss_odds) against exact enumeration:
every outcome of every game left, each later round paired in each branch with
the pairing the simulation uses (``pair_round`` for ``pairing="dutch"``,
``pair_round_batch`` for ``"batch"``), ranked with Standings.from_results."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection, Mapping, Sequence

import pytest

from livegain.core.odds import game_probabilities
from livegain.core.standings import Result, Standings
from livegain.core.swiss_batch import pair_round_batch
from livegain.core.swiss_odds import MIN_PRECISE, PAIRERS, Pairer, swiss_win_odds
from livegain.core.swiss_pairing import Entrant, Pairing, pair_round

PAIR_ROUND: dict[str, Callable[[Sequence[Entrant], Collection[tuple[str, str]]], Pairing]] = {
    "dutch": pair_round,
    "batch": pair_round_batch,
}
OUTCOMES = (("1-0", 0), ("1/2-1/2", 1), ("0-1", 2))


def _wdl(ratings: Mapping[str, float], w: str, b: str) -> tuple[float, float, float]:
    g = game_probabilities(ratings[w] - ratings[b], 0.5)
    return g.win, g.draw, g.loss


def exact(
    players: Sequence[str],
    ratings: Mapping[str, float],
    finished: list[Result],
    current: list[tuple[str, str, tuple[float, float, float]]],
    rnd: int,
    rounds_total: int,
    tiebreaks: Sequence[str],
    top_k: int,
    pairing: Pairer,
) -> tuple[dict[str, float], dict[str, float]]:
    initial = sorted(players, key=lambda p: -ratings[p])
    first = dict.fromkeys(players, 0.0)
    top = dict.fromkeys(players, 0.0)

    def leaf(results: list[Result], prob: float) -> None:
        st = Standings.from_results(results, tiebreaks, initial)
        by_rank: dict[int, list[str]] = {}
        for row in st.rows:
            by_rank.setdefault(row.rank, []).append(row.player)
        for rank, group in by_rank.items():
            for p in group:
                first[p] += prob * (rank == 1) / len(group)
                top[p] += prob * min(max(top_k - rank + 1, 0), len(group)) / len(group)

    def play(
        results: list[Result],
        games: list[tuple[str, str, tuple[float, float, float]]],
        r: int,
        prob: float,
    ) -> None:
        for combo in itertools.product(OUTCOMES, repeat=len(games)):
            q = prob
            more = list(results)
            for (w, b, wdl), (code, k) in zip(games, combo, strict=True):
                q *= wdl[k]
                more.append(Result.game(w, b, code, r))
            if q > 0:
                go(more, r, q)

    def go(results: list[Result], r: int, prob: float) -> None:
        if r == rounds_total:
            leaf(results, prob)
            return
        points = dict.fromkeys(initial, 0.0)
        colours = {p: ["-"] * r for p in initial}
        byes = set()
        met = []
        for x in results:
            points[x.white] += x.white_points
            if x.black is None:
                byes.add(x.white)
                continue
            points[x.black] += x.black_points
            met.append((x.white, x.black))
            assert x.round is not None
            colours[x.white][x.round - 1] = "W"
            colours[x.black][x.round - 1] = "B"
        entrants = [Entrant(p, points[p], "".join(colours[p]), p in byes) for p in initial]
        pairing = PAIR_ROUND[pairer](entrants, met)
        more = list(results)
        if pairing.bye is not None:
            more.append(Result.bye(pairing.bye, 1.0, r + 1))
        play(more, [(w, b, _wdl(ratings, w, b)) for w, b in pairing.games], r + 1, prob)

    pairer = pairing
    play(finished, current, rnd, 1.0)
    return first, top


def check(
    players: Sequence[str],
    ratings: Mapping[str, float],
    finished: list[Result],
    live: list[tuple[str, str, tuple[float, float, float]]],
    upcoming: list[tuple[str, str]],
    rnd: int,
    rounds_total: int,
    tiebreaks: Sequence[str],
    top_k: int,
    pairing: Pairer,
    sims: int = 20_000,
) -> None:
    current = live + [(w, b, _wdl(ratings, w, b)) for w, b in upcoming]
    want_first, want_top = exact(
        players, ratings, finished, current, rnd, rounds_total, tiebreaks, top_k, pairing
    )
    got = swiss_win_odds(
        players,
        ratings,
        finished,
        live,
        upcoming,
        round=rnd,
        rounds_total=rounds_total,
        sims=sims,
        seed=7,
        top_k=top_k,
        tiebreaks=tiebreaks,
        pairing=pairing,
    )
    assert sum(c.p_first for c in got.values()) == pytest.approx(1.0)
    assert sum(c.p_top for c in got.values()) == pytest.approx(float(top_k))
    assert sum(want_first.values()) == pytest.approx(1.0)
    for p in players:
        c = got[p]
        assert abs(c.p_first - want_first[p]) <= 4 * c.se_first + 1e-9, (p, c, want_first[p])
        assert abs(c.p_top - want_top[p]) <= 4 * c.se_top + 1e-9, (p, c, want_top[p])


SIX = ["A", "B", "C", "D", "E", "F"]
SIX_RATINGS = dict(zip(SIX, [2450.0, 2400.0, 2380.0, 2300.0, 2250.0, 2200.0], strict=True))
ROUND1 = [
    Result.game("A", "D", "1/2-1/2", 1),
    Result.game("E", "B", "1-0", 1),
    Result.game("C", "F", "1-0", 1),
]


@pytest.mark.parametrize(
    ("tiebreaks", "top_k"),
    [
        (("buchholz_cut1", "buchholz", "sonneborn_berger"), 2),
        (("wins", "won"), 1),
        (("direct_encounter", "buchholz"), 3),
        ((), 2),
    ],
)
@pytest.mark.parametrize("pairing", PAIRERS)
def test_six_players_three_rounds_from_round_two(
    tiebreaks: tuple[str, ...], top_k: int, pairing: Pairer
) -> None:
    live = [("C", "E", (0.6, 0.3, 0.1))]
    up = [("B", "A"), ("D", "F")]
    check(SIX, SIX_RATINGS, ROUND1, live, up, 2, 3, tiebreaks, top_k, pairing)


@pytest.mark.parametrize("pairing", PAIRERS)
def test_five_players_with_byes(pairing: Pairer) -> None:
    five = SIX[:5]
    ratings = {p: SIX_RATINGS[p] for p in five}
    finished = [
        Result.game("A", "C", "1-0", 1),
        Result.game("D", "B", "1/2-1/2", 1),
        Result.bye("E", 1.0, 1),
        Result.bye("C", 1.0, 2),  # this round's bye
    ]
    up = [("E", "A"), ("B", "D")]
    check(five, ratings, finished, [], up, 2, 3, ("BH-C1", "SB"), 2, pairing)


def test_from_the_last_round_is_the_current_round_only() -> None:
    finished = [*ROUND1, Result.game("B", "A", "0-1", 2), Result.game("D", "F", "1-0", 2)]
    check(SIX, SIX_RATINGS, finished, [], [("C", "E")], 2, 2, ("BH",), 1, "batch")


def test_same_seed_same_numbers_and_checks() -> None:
    kw = {"round": 2, "rounds_total": 3, "sims": 500, "seed": 3}
    a = swiss_win_odds(SIX, SIX_RATINGS, ROUND1, (), [("B", "A"), ("D", "F"), ("C", "E")], **kw)
    b = swiss_win_odds(SIX, SIX_RATINGS, ROUND1, (), [("B", "A"), ("D", "F"), ("C", "E")], **kw)
    assert a == b
    with pytest.raises(ValueError, match="round"):
        swiss_win_odds(SIX, SIX_RATINGS, [Result.game("A", "B", "1-0")], round=2, rounds_total=3)
    with pytest.raises(ValueError, match="no rating"):
        swiss_win_odds(SIX, {"A": 2000.0}, round=1, rounds_total=3)
    with pytest.raises(ValueError, match="top_k"):
        swiss_win_odds(SIX, SIX_RATINGS, round=1, rounds_total=3, top_k=7)


def test_simulations_stop_once_every_chance_of_first_is_precise() -> None:
    """With a precision, the simulations stop once every chance of first
    place has that standard error or less (and say how many ran): a tighter
    one takes more; without one, all of them run."""
    up = [("B", "A"), ("D", "F"), ("C", "E")]
    kw = {"round": 2, "rounds_total": 3, "seed": 1, "sims": 40_000}
    full = swiss_win_odds(SIX, SIX_RATINGS, ROUND1, (), up, **kw)
    assert full.sims == 40_000
    runs = {
        p: swiss_win_odds(SIX, SIX_RATINGS, ROUND1, (), up, precision=p, **kw)
        for p in (0.01, 0.005)
    }
    for precision, odds in runs.items():
        assert MIN_PRECISE <= odds.sims < 40_000
        assert max(c.se_first for c in odds.values()) <= precision
        # no more than needed: the standard error falls as one over the root of the simulations
        assert max(c.se_first for c in odds.values()) > 0.9 * precision
    assert runs[0.005].sims > 3 * runs[0.01].sims
