"""Odds of winning a team event (livegain.core.team_odds) against exact
enumeration: every outcome of every board left, each round left paired in its
branch (the schedule, or ``pair_round_batch`` with ``teams=True`` on match
points for a Swiss of teams), each match played board by board with the lineups by rating and
colours alternating by board, ranked with TeamStandings.from_matches (a
separate, plain implementation of the team tie-breaks)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import pytest

from livegain.core.odds import game_probabilities
from livegain.core.standings import Result
from livegain.core.swiss_batch import pair_round_batch
from livegain.core.swiss_odds import MIN_PRECISE
from livegain.core.swiss_pairing import Entrant
from livegain.core.team_match import MatchPoints
from livegain.core.team_odds import team_win_odds
from livegain.core.team_standings import TeamMatch, TeamStandings

OLYMPIAD_POINTS = MatchPoints()
OUTCOMES = ((1.0, 0), (0.5, 1), (0.0, 2))  # White's points, index in the W/D/L

Board = tuple[str, str, tuple[float, float, float]]  # White, Black, W/D/L


def _wdl(ratings: Mapping[str, float], w: str, b: str) -> tuple[float, float, float]:
    g = game_probabilities(ratings[w] - ratings[b], 0.5)
    return g.win, g.draw, g.loss


def exact(
    team_of: Mapping[str, str],
    ratings: Mapping[str, float],
    finished: Sequence[Result],
    current: Sequence[Board],
    rnd: int,
    rounds_total: int,
    schedule: Sequence[Sequence[tuple[str, str]]] | None,
    boards: int,
    tiebreaks: Sequence[str],
    top_k: int,
    points: MatchPoints,
) -> tuple[dict[str, float], dict[str, float]]:
    members: dict[str, list[str]] = {}
    for p, t in team_of.items():
        members.setdefault(t, []).append(p)
    lineup = {t: sorted(ps, key=lambda p: -ratings[p])[:boards] for t, ps in members.items()}
    teams = sorted(members, key=lambda t: -sum(ratings[p] for p in lineup[t]))
    first = dict.fromkeys(teams, 0.0)
    top = dict.fromkeys(teams, 0.0)

    def matches_of(games: list[tuple[int, str, str, float]]) -> list[TeamMatch]:
        """(round, white, black, white's points) -> matches, team a the first
        board's White team, in round order."""
        acc: dict[tuple[int, frozenset[str]], list[object]] = {}
        for r, w, b, x in games:
            tw, tb = team_of[w], team_of[b]
            key = (r, frozenset((tw, tb)))
            if key not in acc:
                acc[key] = [r, tw, tb, 0.0, 0.0, 0]
            m = acc[key]
            if m[1] == tw:
                m[3], m[4] = float(m[3]) + x, float(m[4]) + 1 - x  # type: ignore[arg-type]
            else:
                m[3], m[4] = float(m[3]) + 1 - x, float(m[4]) + x  # type: ignore[arg-type]
            m[5] = int(m[5]) + 1  # type: ignore[call-overload]
        out = [TeamMatch(*m) for m in acc.values()]  # type: ignore[arg-type]
        return sorted(out, key=lambda m: m.round)

    def leaf(games: list[tuple[int, str, str, float]], prob: float) -> None:
        st = TeamStandings.from_matches(matches_of(games), tiebreaks, points=points, teams=teams)
        by_rank: dict[int, list[str]] = {}
        for row in st.rows:
            by_rank.setdefault(row.rank, []).append(row.team)
        for rank, group in by_rank.items():
            for t in group:
                first[t] += prob * (rank == 1) / len(group)
                top[t] += prob * min(max(top_k - rank + 1, 0), len(group)) / len(group)

    def play(games: list[tuple[int, str, str, float]], left: list[Board], r: int, q: float) -> None:
        for combo in itertools.product(OUTCOMES, repeat=len(left)):
            p = q
            more = list(games)
            for (w, b, wdl), (x, k) in zip(left, combo, strict=True):
                p *= wdl[k]
                more.append((r, w, b, x))
            if p > 0:
                go(more, r, p)

    def go(games: list[tuple[int, str, str, float]], r: int, q: float) -> None:
        if r == rounds_total:
            leaf(games, q)
            return
        if schedule is not None:
            pairs = list(schedule[r - rnd])
        else:
            done = matches_of(games)
            mp = dict.fromkeys(teams, 0.0)
            colours = {t: ["-"] * r for t in teams}
            met = []
            for m in done:
                sa = (m.points_a > m.points_b) - (m.points_a < m.points_b)
                for t, s in ((m.a, sa), (m.b, -sa)):
                    mp[t] += points.win if s > 0 else points.draw if s == 0 else points.loss
                colours[m.a][m.round - 1] = "W"
                colours[m.b][m.round - 1] = "B"
                met.append((m.a, m.b))
            entrants = [Entrant(t, mp[t], "".join(colours[t])) for t in teams]
            pairs = list(pair_round_batch(entrants, met, teams=True).games)
        left: list[Board] = []
        for ta, tb in pairs:
            for k in range(boards):
                a, b = lineup[ta][k], lineup[tb][k]
                w, bl = (a, b) if k % 2 == 0 else (b, a)
                left.append((w, bl, _wdl(ratings, w, bl)))
        play(games, left, r + 1, q)

    base = [(r.round or 0, r.white, r.black or "", r.white_points) for r in finished]
    play(base, list(current), rnd, 1.0)
    return first, top


TEAMS = {
    "Alpha": {"A1": 2600.0, "A2": 2550.0, "A3": 2300.0},
    "Beta": {"B1": 2580.0, "B2": 2500.0},
    "Gamma": {"C1": 2450.0, "C2": 2480.0},
    "Delta": {"D1": 2400.0, "D2": 2350.0},
}
TEAM_OF = {p: t for t, ps in TEAMS.items() for p in ps}
RATINGS = {p: r for ps in TEAMS.values() for p, r in ps.items()}
ROUND1 = [
    Result.game("A1", "D1", "1-0", 1),
    Result.game("D2", "A2", "1/2-1/2", 1),
    Result.game("B1", "C2", "0-1", 1),
    Result.game("C1", "B2", "1/2-1/2", 1),
]


def check(
    finished: list[Result],
    live: list[tuple[str, str, tuple[float, float, float]]],
    upcoming: list[tuple[str, str]],
    rnd: int,
    rounds_total: int,
    schedule: Sequence[Sequence[tuple[str, str]]] | None,
    tiebreaks: Sequence[str],
    top_k: int,
    points: MatchPoints = OLYMPIAD_POINTS,
    sims: int = 20_000,
) -> None:
    current: list[Board] = list(live) + [(w, b, _wdl(RATINGS, w, b)) for w, b in upcoming]
    want_first, want_top = exact(
        TEAM_OF,
        RATINGS,
        finished,
        current,
        rnd,
        rounds_total,
        schedule,
        2,
        tiebreaks,
        top_k,
        points,
    )
    got = team_win_odds(
        TEAM_OF,
        RATINGS,
        finished,
        live,
        upcoming,
        round=rnd,
        rounds_total=rounds_total,
        schedule=schedule,
        boards=2,
        points=points,
        tiebreaks=tiebreaks,
        sims=sims,
        seed=11,
        top_k=top_k,
    )
    assert sum(want_first.values()) == pytest.approx(1.0)
    assert sum(c.p_first for c in got.values()) == pytest.approx(1.0)
    assert sum(c.p_top for c in got.values()) == pytest.approx(float(top_k))
    for t in TEAMS:
        c = got[t]
        assert abs(c.p_first - want_first[t]) <= 4 * c.se_first + 1e-9, (t, c, want_first[t])
        assert abs(c.p_top - want_top[t]) <= 4 * c.se_top + 1e-9, (t, c, want_top[t])


ROBIN = [[("Alpha", "Gamma"), ("Delta", "Beta")], [("Beta", "Alpha"), ("Gamma", "Delta")]]


@pytest.mark.parametrize(
    ("tiebreaks", "top_k"),
    [(("OSB", "GP", "BH-C1"), 1), (("GP", "DE", "MW"), 2), (("SB", "BH"), 2), ((), 1)],
)
def test_round_robin_of_four_teams_two_rounds_left(tiebreaks: tuple[str, ...], top_k: int) -> None:
    check(ROUND1, [], [], 1, 3, ROBIN, tiebreaks, top_k)


def test_swiss_of_teams_from_a_round_in_progress() -> None:
    finished = [Result.game("A1", "B1", "1/2-1/2", 1), Result.game("D1", "C1", "0-1", 1)]
    live = [("B2", "A2", (0.3, 0.4, 0.3))]
    check(finished, live, [("C2", "D2")], 1, 3, None, ("OSB", "GP", "BH-C1"), 2)


def test_match_points_three_one_zero() -> None:
    check(ROUND1, [], [], 1, 2, ROBIN[:1], ("GP",), 1, MatchPoints(3.0, 1.0, 0.0))


def test_last_round_worked_by_hand() -> None:
    """Two teams, a drawn first match; in the second Alpha won board 1 and
    board 2 (Beta's player White) stands at W/D/L 0.2 / 0.3 / 0.5. Alpha wins
    the match, and the event, unless White wins board 2 (0.2): then the match
    is drawn, both teams on 2 match points and 2 game points, and share first
    place: Alpha 0.8 + 0.2 / 2 = 0.9."""
    team_of = {"A1": "Alpha", "A2": "Alpha", "B1": "Beta", "B2": "Beta"}
    ratings = {"A1": 2600.0, "A2": 2500.0, "B1": 2590.0, "B2": 2510.0}
    finished = [
        Result.game("A1", "B1", "1/2-1/2", 1),
        Result.game("B2", "A2", "1/2-1/2", 1),
        Result.game("B1", "A1", "0-1", 2),
    ]
    kw = {"round": 2, "rounds_total": 2, "boards": 2, "tiebreaks": ("GP",), "seed": 1}
    got = team_win_odds(team_of, ratings, finished, [("B2", "A2", (0.2, 0.3, 0.5))], **kw)
    assert abs(got["Alpha"].p_first - 0.9) <= 4 * got["Alpha"].se_first
    assert got["Alpha"].p_first + got["Beta"].p_first == pytest.approx(1.0)
    sure = team_win_odds(team_of, ratings, finished, [("B2", "A2", (0.0, 0.6, 0.4))], **kw)
    assert sure["Alpha"] == (1.0, 0.0, 1.0, 0.0)


def test_checks() -> None:
    kw = {"round": 1, "rounds_total": 3, "boards": 2}
    with pytest.raises(ValueError, match="fewer than 3 players"):
        team_win_odds(TEAM_OF, RATINGS, **{**kw, "boards": 3})
    with pytest.raises(ValueError, match="unknown team tie-break"):
        team_win_odds(TEAM_OF, RATINGS, tiebreaks=("XYZ",), **kw)
    with pytest.raises(ValueError, match="plays two matches"):
        two = [Result.game("A1", "B1", "1-0", 1), Result.game("A2", "C1", "1-0", 1)]
        team_win_odds(TEAM_OF, RATINGS, two, **kw)
    with pytest.raises(ValueError, match="within team"):
        team_win_odds(TEAM_OF, RATINGS, [Result.game("A1", "A2", "1-0", 1)], **kw)
    with pytest.raises(ValueError, match="schedule has 1 rounds"):
        team_win_odds(TEAM_OF, RATINGS, schedule=ROBIN[:1], **kw)


def test_simulations_stop_once_every_chance_of_first_is_precise() -> None:
    """As for players: with a precision, the simulations of a Swiss of teams
    stop once it is met (no more than needed), and say how many ran."""
    kw = {"round": 1, "rounds_total": 3, "boards": 2, "seed": 5, "sims": 40_000}
    full = team_win_odds(TEAM_OF, RATINGS, ROUND1, **kw)
    assert full.sims == 40_000
    quick = team_win_odds(TEAM_OF, RATINGS, ROUND1, precision=0.005, **kw)
    assert MIN_PRECISE <= quick.sims < 40_000
    assert 0.9 * 0.005 < max(c.se_first for c in quick.values()) <= 0.005
