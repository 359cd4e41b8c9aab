"""Algorithms 2 and 3."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from livegain.core.tournament import engine_strength, perceived_tournament


def lstsq_solution(players: list[str], edges: list[tuple[str, str, float]]) -> np.ndarray:
    idx = {p: k for k, p in enumerate(players)}
    a = np.zeros((len(edges), len(players)))
    b = np.zeros(len(edges))
    for row, (i, j, d) in enumerate(edges):
        a[row, idx[i]] = 1.0
        a[row, idx[j]] = -1.0
        b[row] = d
    sol, *_ = np.linalg.lstsq(a, b, rcond=None)
    return np.asarray(sol - sol.mean())


@st.composite
def tournaments(
    draw: st.DrawFn,
) -> tuple[list[str], dict[str, float | None], list[tuple[str, str, float]]]:
    n = draw(st.integers(2, 8))
    players = [f"P{k}" for k in range(n)]
    ratings: dict[str, float | None] = {
        p: draw(st.floats(1500, 2900, allow_nan=False)) for p in players
    }
    pairs = draw(
        st.lists(
            st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(lambda t: t[0] != t[1]),
            min_size=1,
            max_size=20,
        )
    )
    edges = [(players[i], players[j], draw(st.floats(-300, 300))) for i, j in pairs]
    return players, ratings, edges


@settings(max_examples=40, deadline=None)
@given(tournaments(), st.floats(-1000, 1000))
def test_shift_invariance(
    t: tuple[list[str], dict[str, float | None], list[tuple[str, str, float]]], c: float
) -> None:
    players, ratings, edges = t
    base = perceived_tournament(players, ratings, edges, tol=1e-11)
    shifted = perceived_tournament(
        players,
        {p: (v + c if v is not None else None) for p, v in ratings.items()},
        edges,
        tol=1e-11,
    )
    for p in players:
        a, b = base.ratings[p].estimated, shifted.ratings[p].estimated
        if a is None:
            assert b is None
        else:
            assert b is not None
            assert b == pytest.approx(a + c, abs=1e-5)


@settings(max_examples=40, deadline=None)
@given(tournaments())
def test_matches_least_squares_on_each_component(
    t: tuple[list[str], dict[str, float | None], list[tuple[str, str, float]]],
) -> None:
    players, ratings, edges = t
    fit = perceived_tournament(players, ratings, edges, tol=1e-11)
    assert fit.converged
    for c in range(fit.components):
        members = [p for p in players if fit.ratings[p].component == c]
        if len(members) < 2:
            continue
        sub = [e for e in edges if e[0] in members]
        expected = lstsq_solution(members, sub)
        got = np.array([fit.ratings[p].relative for p in members])
        assert np.allclose(got, expected, atol=1e-5)
        est = [fit.ratings[p].estimated for p in members]
        mean_actual = np.mean([ratings[p] for p in members])
        assert np.mean(est) == pytest.approx(mean_actual, abs=1e-6)


# London Chess Classic 2011, seed 002 Table 1: Elo, d_ij (row over column), estimated strength
LONDON = [
    "Kramnik",
    "Carlsen",
    "Nakamura",
    "McShane",
    "Anand",
    "Aronian",
    "Short",
    "Howell",
    "Adams",
]
LONDON_ELO = [2800, 2826, 2758, 2671, 2811, 2802, 2698, 2633, 2734]
LONDON_D = [
    [0, 15, 57, 51, 28, 43, 50, 63, 67],
    [-15, 0, 40, 37, 11, 26, 36, 46, 51],
    [-57, -40, 0, -3, -27, -17, -4, 4, 12],
    [-51, -37, 3, 0, -24, -13, -1, 8, 14],
    [-28, -11, 27, 24, 0, 13, 23, 32, 39],
    [-43, -26, 17, 13, -13, 0, 12, 22, 29],
    [-50, -36, 4, 1, -23, -12, 0, 9, 15],
    [-63, -46, -4, -8, -32, -22, -9, 0, 8],
    [-67, -51, -12, -14, -39, -29, -15, -8, 0],
]
LONDON_ESTIMATED = [2790, 2774, 2734, 2737, 2762, 2750, 2738, 2729, 2722]


def test_london_2011_table1() -> None:
    edges = [
        (LONDON[i], LONDON[j], float(LONDON_D[i][j])) for i in range(9) for j in range(9) if i != j
    ]
    fit = perceived_tournament(LONDON, dict(zip(LONDON, LONDON_ELO, strict=True)), edges)
    assert fit.converged and fit.components == 1
    for name, paper in zip(LONDON, LONDON_ESTIMATED, strict=True):
        est = fit.ratings[name].estimated
        assert est is not None
        assert abs(est - paper) <= 1.0, (name, est, paper)


def test_table_is_antisymmetric() -> None:
    for i in range(9):
        for j in range(9):
            assert LONDON_D[i][j] == -LONDON_D[j][i]


# Candidates 2011, seed 002 Table 3 (knockout: a tree of pairings)
CANDIDATES_ELO = {
    "Gelfand": 2733, "Grischuk": 2747, "Aronian": 2808, "Kamsky": 2732,
    "Mamedyarov": 2772, "Topalov": 2775, "Kramnik": 2785, "Radjabov": 2744,
}  # fmt: skip
CANDIDATES_D = [
    ("Gelfand", "Grischuk", 12), ("Gelfand", "Kamsky", 32), ("Gelfand", "Mamedyarov", 34),
    ("Grischuk", "Aronian", 5), ("Grischuk", "Kramnik", 43), ("Kamsky", "Topalov", 12),
    ("Kramnik", "Radjabov", 7),
]  # fmt: skip
CANDIDATES_ESTIMATED = {
    "Gelfand": 2793, "Grischuk": 2783, "Aronian": 2778, "Kamsky": 2760,
    "Mamedyarov": 2759, "Topalov": 2748, "Kramnik": 2740, "Radjabov": 2733,
}  # fmt: skip


def test_candidates_2011_table3() -> None:
    """A tree fits the rounded d_ij exactly; Table 3's own column differs from its
    d_ij by up to 2 points (e.g. Gelfand - Grischuk 10 vs d = +12), so +/-2."""
    edges = [(i, j, float(d)) for i, j, d in CANDIDATES_D]
    fit = perceived_tournament(list(CANDIDATES_ELO), dict(CANDIDATES_ELO), edges)
    for name, paper in CANDIDATES_ESTIMATED.items():
        est = fit.ratings[name].estimated
        assert est is not None and abs(est - paper) <= 2.0, (name, est, paper)
    order = sorted(CANDIDATES_ELO, key=lambda p: -(fit.ratings[p].estimated or 0))
    assert order == list(CANDIDATES_ESTIMATED)


def test_components_unrated_and_isolated() -> None:
    players = ["A", "B", "C", "D", "E", "F"]
    actual: dict[str, float | None] = {"A": 2000, "B": None, "C": None, "D": None, "E": 1800}
    edges = [("A", "B", 50.0), ("C", "D", 20.0)]
    fit = perceived_tournament(players, actual, edges)
    assert fit.components == 4
    a, b = fit.ratings["A"], fit.ratings["B"]
    # one rated player anchors his component: A keeps his rating, B is 50 below
    assert a.estimated == pytest.approx(2000) and b.estimated == pytest.approx(1950)
    c, d = fit.ratings["C"], fit.ratings["D"]
    assert not c.anchored and c.estimated is None
    assert c.relative - d.relative == pytest.approx(20)
    assert fit.ratings["E"].estimated is None and fit.ratings["E"].opponents == 0
    assert fit.ratings["F"].estimated is None
    with pytest.raises(ValueError):
        perceived_tournament(players, actual, [("A", "Z", 1.0)])


# London 2011, seed 002 Table 4: r_i, d_i; r'_i from Table 1
def test_engine_strength_table4() -> None:
    d = [-69, -74, -132, -119, -93, -120, -116, -145, -136]
    by_elo = engine_strength(zip(LONDON_ELO, d, strict=True))
    assert round(by_elo.rating) == 2860
    assert by_elo.low is not None and by_elo.high is not None
    assert by_elo.low < 2860 < by_elo.high
    assert by_elo.values[0] == 2869
    by_estimate = engine_strength(zip(LONDON_ESTIMATED, d, strict=True))
    assert round(by_estimate.rating) == 2860
    # r'_i - d_i are far less spread than r_i - d_i (Table 4): a narrower interval
    assert by_estimate.high - by_estimate.low < by_elo.high - by_elo.low  # type: ignore[operator]
    single = engine_strength([(2800, -50)])
    assert single.rating == 2850 and single.low is None
    with pytest.raises(ValueError):
        engine_strength([])
