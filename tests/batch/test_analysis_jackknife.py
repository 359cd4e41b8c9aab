"""Algorithm 2 and its jackknife at scale: the fast implementation (components
fitted on their own, large ones solved exactly, only the components a group of
games touches refitted) gives the straightforward implementation's results."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np
import pytest
from scipy.special import stdtrit

from livegain.batch.analysis import AnnotatedGame, analyze
from livegain.batch.game_analysis import GameReport
from livegain.batch.player_pool import PlayerReport
from livegain.batch.tournament_fit import _rating_differences, _Stack
from livegain.core.histogram import GainHistogram
from livegain.core.rating import rating_difference
from livegain.core.tournament import (
    GAUSS_SEIDEL_PLAYERS,
    pairing_components,
    perceived_tournament,
    tournament_estimates,
)


def reference_fit(
    players: Sequence[str],
    actual: Mapping[str, float | None],
    differences: Sequence[tuple[str, str, float]],
    tol: float = 1e-11,
) -> dict[str, float | None]:
    """Algorithm 2 as the paper states it: Gauss-Seidel over every player at
    once until nothing moves, then each component shifted by its rated players."""
    names = list(dict.fromkeys(players))
    index = {p: k for k, p in enumerate(names)}
    nb: list[list[tuple[int, float]]] = [[] for _ in names]
    for i, j, d in differences:
        nb[index[i]].append((index[j], d))
        nb[index[j]].append((index[i], -d))
    comp = [-1] * len(names)
    for start in range(len(names)):
        if comp[start] < 0:
            comp[start] = start
            stack = [start]
            while stack:
                k = stack.pop()
                for j, _ in nb[k]:
                    if comp[j] < 0:
                        comp[j] = start
                        stack.append(j)
    known = [actual.get(p) for p in names]
    r = [0.0] * len(names)
    for k in range(len(names)):
        values = [v for j, v in enumerate(known) if comp[j] == comp[k] and v is not None]
        r[k] = (
            float(known[k])
            if known[k] is not None
            else (sum(values) / len(values) if values else 0.0)
        )  # type: ignore[arg-type]
    while True:
        change = 0.0
        for k, links in enumerate(nb):
            if links:
                new = sum(r[j] + d for j, d in links) / len(links)
                change = max(change, abs(new - r[k]))
                r[k] = new
        if change <= tol:
            break
    out: dict[str, float | None] = {}
    for k, name in enumerate(names):
        members = [j for j in range(len(names)) if comp[j] == comp[k]]
        rated = [j for j in members if known[j] is not None]
        if not rated or len(members) == 1:
            out[name] = None
            continue
        shift = sum(float(known[j]) for j in rated) / len(rated) - sum(r[j] for j in rated) / len(
            rated
        )  # type: ignore[arg-type]
        out[name] = r[k] + shift
    return out


def reference_jackknife(
    reports: Sequence[GameReport], players: Sequence[PlayerReport], method: str
) -> dict[str, tuple[float, float]]:
    """The delete-a-group jackknife rerunning everything for every group."""
    names = [p.name for p in players]
    elos = {p.name: p.elo for p in players}
    counted = [r for r in reports if r.white.histogram.n or r.black.histogram.n]
    k = min(len(counted), 200)
    replicates: dict[str, list[float | None]] = {n: [] for n in names}
    for group in range(k):
        kept = [r for i, r in enumerate(counted) if i % k != group]
        hists: dict[str, GainHistogram] = {n: GainHistogram() for n in names}
        pair_hists: dict[tuple[str, str], tuple[GainHistogram, GainHistogram]] = {}
        order: list[tuple[str, str]] = []
        for rep in counted:  # pairs in first-met order, as the full file has them
            a, b = sorted((rep.white.name, rep.black.name))
            if (a, b) not in order:
                order.append((a, b))
        for rep in kept:
            hists[rep.white.name].merge(rep.white.histogram)
            hists[rep.black.name].merge(rep.black.histogram)
            a, b = sorted((rep.white.name, rep.black.name))
            ha, hb = pair_hists.setdefault((a, b), (GainHistogram(), GainHistogram()))
            ha.merge((rep.white if rep.white.name == a else rep.black).histogram)
            hb.merge((rep.black if rep.white.name == a else rep.white).histogram)
        edges = []
        for a, b in order:
            if (a, b) not in pair_hists:
                continue
            ha, hb = (hists[a], hists[b]) if method == "aggregate" else pair_hists[(a, b)]
            if ha.n and hb.n:
                edges.append((a, b, rating_difference(ha.expected_score(hb)).value))
        fit = reference_fit(names, elos, edges)
        for n in names:
            replicates[n].append(fit[n])
    q = float(stdtrit(k - 1, 0.975))
    out = {}
    for p in players:
        reps = replicates[p.name]
        if p.tournament is None or any(r is None for r in reps):
            continue
        values = [float(r) for r in reps if r is not None]
        mean = sum(values) / k
        se = math.sqrt((k - 1) / k * sum((r - mean) ** 2 for r in values))
        out[p.name] = (p.tournament - q * se, p.tournament + q * se)
    return out


def synthetic_game(
    rng: random.Random, white: str, black: str, elos: tuple[int | None, int | None]
) -> AnnotatedGame:
    plies = rng.randint(6, 40)
    scores = [rng.randint(-30, 30)]
    for _ in range(plies):
        step = rng.choice([0, 0, -rng.randint(1, 150), rng.randint(1, 40)])
        scores.append(max(-3900, min(3900, scores[-1] + step)))
    headers = {"White": white, "Black": black}
    for tag, elo in zip(("WhiteElo", "BlackElo"), elos, strict=True):
        if elo is not None:
            headers[tag] = str(elo)
    return AnnotatedGame(headers, ["e4"] * plies, ["e2e4"] * plies, scores)


def synthetic_event(seed: int) -> list[AnnotatedGame]:
    """One component larger than the Gauss-Seidel limit (a ring with chords,
    repeated pairings and players hanging off it by one game), pairs, triangles,
    an unrated component and players with a single game."""
    rng = random.Random(seed)
    elo = {f"P{k}": rng.randint(1200, 2400) for k in range(24)}
    big = list(elo)
    pairs = [(big[k], big[(k + 1) % len(big)]) for k in range(len(big))]
    pairs += [tuple(rng.sample(big, 2)) for _ in range(14)]  # type: ignore[misc]
    pairs += [(big[3], big[4]), (big[10], big[11])]  # met twice
    for k in range(6):
        leaf = f"L{k}"
        elo[leaf] = rng.randint(1200, 2400)
        pairs.append((leaf, rng.choice(big)))
    for k in range(6):
        a, b = f"S{k}a", f"S{k}b"
        elo[a], elo[b] = rng.randint(1200, 2400), rng.randint(1200, 2400)
        pairs += [(a, b)] * rng.randint(1, 3)
    for k in range(2):
        trio = [f"T{k}{x}" for x in "abc"]
        elo.update({t: rng.randint(1200, 2400) for t in trio})
        pairs += [(trio[0], trio[1]), (trio[1], trio[2]), (trio[2], trio[0]), (trio[0], trio[1])]
    pairs += [("U1", "U2"), ("U2", "U3"), ("U3", "U1")]  # no Elo at all
    rng.shuffle(pairs)
    return [
        synthetic_game(rng, a, b, (elo.get(a), elo.get(b)))
        if rng.random() < 0.5
        else synthetic_game(rng, b, a, (elo.get(b), elo.get(a)))
        for a, b in pairs
    ]


@pytest.mark.parametrize("pairing", ["aggregate", "pair"])
@pytest.mark.parametrize("seed", [1, 2])
def test_jackknife_matches_the_straightforward_one(
    pairing: Literal["aggregate", "pair"], seed: int
) -> None:
    games = synthetic_event(seed)
    report = analyze(games, 2860, pairing=pairing)
    assert report.tournament is not None
    sizes = np.bincount([r.component for r in report.tournament.fit.ratings.values()])
    assert sizes.max() > GAUSS_SEIDEL_PLAYERS  # the exact solver had its turn
    expected = reference_jackknife(report.games, report.players, pairing)
    got = {
        p.name: (p.tournament_low, p.tournament_high)
        for p in report.players
        if p.tournament_low is not None
    }
    assert set(got) == set(expected) and len(got) > 20
    for name, (lo, hi) in expected.items():
        assert got[name][0] == pytest.approx(lo, abs=1e-6)
        assert got[name][1] == pytest.approx(hi, abs=1e-6)
    # the full fit too
    edges = [(p.a, p.b, p.head_to_head.difference) for p in report.tournament.pairs]
    elos = {p.name: p.elo for p in report.players}
    reference = reference_fit([p.name for p in report.players], elos, edges)
    for p in report.players:
        if reference[p.name] is None:
            assert p.tournament is None
        else:
            assert p.tournament == pytest.approx(reference[p.name], abs=1e-6)


@pytest.mark.parametrize("seed", range(6))
def test_large_components_solved_exactly(seed: int) -> None:
    """Trees, cycles, repeated pairings, unrated and isolated players, in
    components on both sides of the Gauss-Seidel limit."""
    rng = random.Random(seed)
    n = rng.randint(30, 120)
    players = [f"P{k}" for k in range(n)]
    actual: dict[str, float | None] = {
        p: (rng.uniform(1000, 2500) if rng.random() < 0.8 else None) for p in players
    }
    block = [rng.randrange(rng.randint(1, 5)) for _ in players]
    edges: list[tuple[str, str, float]] = []
    for k in range(1, n):  # a random tree inside each block, then chords
        same = [j for j in range(k) if block[j] == block[k]]
        if same:
            edges.append((players[k], players[rng.choice(same)], rng.uniform(-300, 300)))
    for _ in range(rng.randint(0, n // 2)):
        i, j = rng.sample(range(n), 2)
        if block[i] == block[j]:
            edges.append((players[i], players[j], rng.uniform(-300, 300)))
    edges += [edges[0]] if edges else []
    fit = perceived_tournament(players, actual, edges, tol=1e-11)
    reference = reference_fit(players, actual, edges)
    assert fit.converged
    for p in players:
        got, want = fit.ratings[p].estimated, reference[p]
        assert (got is None) == (want is None)
        if got is not None:
            assert got == pytest.approx(want, abs=1e-6)
    index = {p: k for k, p in enumerate(players)}
    ei, ej = [index[i] for i, _, _ in edges], [index[j] for _, j, _ in edges]
    est = tournament_estimates(n, ei, ej, [d for *_, d in edges], [actual[p] for p in players])
    for p in players:
        want = fit.ratings[p].estimated
        assert math.isnan(est[index[p]]) if want is None else est[index[p]] == pytest.approx(want)
    labels = pairing_components(n, ei, ej)
    assert labels.tolist() == [fit.ratings[p].component for p in players]


def test_vectorised_expected_score_is_algorithm_1() -> None:
    rng = random.Random(3)
    hists = [
        GainHistogram.from_gains(
            rng.randint(-7800, 7800) if rng.random() < 0.02 else rng.randint(-300, 50)
            for _ in range(rng.randint(0, 60))
        )
        for _ in range(400)
    ]
    stack = _Stack(hists)
    xs = np.arange(0, 400, 2)
    ys = xs + 1
    got = _rating_differences(stack.u2(xs, stack, ys), stack.n[xs], stack.n[ys])
    for x, y, d in zip(xs.tolist(), ys.tolist(), got, strict=True):
        a, b = hists[x], hists[y]
        if a.n == 0 or b.n == 0:
            assert math.isnan(d)
        else:
            assert d == rating_difference(a.expected_score(b)).value  # the same float
    # 2U is bilinear: (A - Ga) over (B - Gb) from the whole histograms and the parts
    # taken out, as the jackknife computes it
    for _ in range(50):
        gains_a = [rng.randint(-400, 60) for _ in range(rng.randint(2, 80))]
        gains_b = [rng.randint(-400, 60) for _ in range(rng.randint(2, 80))]
        cut_a, cut_b = rng.randint(0, len(gains_a) - 1), rng.randint(0, len(gains_b) - 1)
        whole = _Stack([GainHistogram.from_gains(gains_a), GainHistogram.from_gains(gains_b)])
        parts = _Stack(
            [GainHistogram.from_gains(gains_a[:cut_a]), GainHistogram.from_gains(gains_b[:cut_b])]
        )
        x, y = np.array([0]), np.array([1])
        u2 = (
            whole.u2(x, whole, y)
            - parts.u2(x, whole, y)
            - (2.0 * len(gains_a) * cut_b - parts.u2(y, whole, x))
            + parts.u2(x, parts, y)
        )
        rest_a = GainHistogram.from_gains(gains_a[cut_a:])
        rest_b = GainHistogram.from_gains(gains_b[cut_b:])
        direct = _rating_differences(
            _Stack([rest_a, rest_b]).u2(x, _Stack([rest_a, rest_b]), y),
            np.array([rest_a.n]),
            np.array([rest_b.n]),
        )
        assert _rating_differences(u2, np.array([rest_a.n]), np.array([rest_b.n])) == direct
        assert direct[0] == rating_difference(rest_a.expected_score(rest_b)).value


def test_only_the_components_a_group_touches_are_refitted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """300 pairs of players, 2 games each: every group of games refits only its
    own few components, and recomputes d_ij only for its own pairs."""
    from livegain.batch import tournament_fit

    rng = random.Random(8)
    games = []
    for k in range(300):
        a, b = f"a{k}", f"b{k}"
        elos = (rng.randint(800, 2400), rng.randint(800, 2400))
        games += [synthetic_game(rng, a, b, elos), synthetic_game(rng, b, a, elos[::-1])]
    sizes: list[int] = []
    differences = 0

    def estimates(n: int, *args: object, **kwargs: object) -> np.ndarray:
        sizes.append(n)
        return tournament_estimates(n, *args, **kwargs)  # type: ignore[arg-type]

    def count(u2: np.ndarray, n: np.ndarray, m: np.ndarray) -> list[float]:
        nonlocal differences
        differences += len(u2)
        return _rating_differences(u2, n, m)

    monkeypatch.setattr(tournament_fit, "tournament_estimates", estimates)
    monkeypatch.setattr(tournament_fit, "_rating_differences", count)
    report = analyze(games, 2860)
    assert sizes[0] == 600 and len(sizes) == 201  # the full fit, then one per group
    assert max(sizes[1:]) <= 2 * 3  # 600 games in 200 groups: 3 games, 3 pairs at most
    assert differences <= 300 + 600  # each pair once, then once per game removed
    assert sum(p.tournament_low is not None for p in report.players) == 600
