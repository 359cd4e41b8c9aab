"""Tournament-level estimates (seed 002, Algorithms 2 and 3).

Algorithm 2: given rating differences d_ij between players who met, find
perceived ratings r'_i minimising ``e_i = sum_j (r'_i - r'_j - d_ij)^2`` for
every player, iterating (Gauss-Seidel: ``r'_i <- mean_j (r'_j + d_ij)``) until
no rating changes by more than ``tol``, then shift so that the mean perceived
rating equals the mean actual rating.

Sparse pairings (knockouts) work as they are. The pairing graph may fall apart
into components that never met, directly or through others: the differences
say nothing about one component relative to another, so each component is
shifted on its own, by its own rated players (mean of their perceived ratings
= mean of their actual ratings). Players without an actual rating take part in
the fit and get a perceived rating from their component's shift; a component
without any rated player is left unanchored (``estimated`` is None, only the
``relative`` values, centred on 0, are known). A player who met nobody has no
estimate.

Algorithm 3: the engine's strength ``r_e = mean_i (r_i - d_i)`` over players
with a known rating, d_i the player's difference to the engine, with a
t-interval over players.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from scipy.special import stdtrit


@dataclass(frozen=True)
class TournamentRating:
    """Algorithm 2 result for one player."""

    player: str
    actual: float | None
    estimated: float | None
    relative: float
    component: int
    anchored: bool
    opponents: int


@dataclass(frozen=True)
class TournamentFit:
    ratings: dict[str, TournamentRating]
    iterations: int
    converged: bool
    components: int


def perceived_tournament(
    players: Sequence[str],
    actual: Mapping[str, float | None],
    differences: Iterable[tuple[str, str, float]],
    tol: float = 1e-9,
    max_iterations: int = 200_000,
) -> TournamentFit:
    """Algorithm 2.

    ``differences`` holds ``(i, j, d_ij)``: the estimated rating difference of
    i over j in one pairing (d_ji = -d_ij is implied). A pair may appear more
    than once (each is one term of the squared error).
    """
    names = list(dict.fromkeys(players))
    index = {p: k for k, p in enumerate(names)}
    neighbours: list[list[tuple[int, float]]] = [[] for _ in names]
    for i, j, d in differences:
        if i not in index or j not in index:
            raise ValueError(f"unknown player in pairing {i!r} - {j!r}")
        if i == j:
            raise ValueError(f"player {i!r} paired with himself")
        if not math.isfinite(d):
            raise ValueError(f"difference {i!r} - {j!r} is not finite")
        a, b = index[i], index[j]
        neighbours[a].append((b, float(d)))
        neighbours[b].append((a, -float(d)))

    comp = _components(neighbours)
    n_comp = max(comp, default=-1) + 1
    known = {k: actual.get(p) for k, p in enumerate(names)}

    # step 1: initialise with the actual rating (else the component's mean rating)
    comp_mean: list[float] = []
    for c in range(n_comp):
        values = [v for k, v in known.items() if comp[k] == c and v is not None]
        comp_mean.append(sum(values) / len(values) if values else 0.0)
    r = [float(v) if (v := known[k]) is not None else comp_mean[comp[k]] for k in range(len(names))]

    # steps 2-3: minimise each e_i in turn until nothing changes
    iterations = 0
    converged = False
    while iterations < max_iterations:
        iterations += 1
        change = 0.0
        for k, nb in enumerate(neighbours):
            if not nb:
                continue
            new = sum(r[j] + d for j, d in nb) / len(nb)
            change = max(change, abs(new - r[k]))
            r[k] = new
        if change <= tol:
            converged = True
            break

    # step 4, per component
    out: dict[str, TournamentRating] = {}
    for c in range(n_comp):
        members = [k for k in range(len(names)) if comp[k] == c]
        centre = sum(r[k] for k in members) / len(members)
        rated = [k for k in members if known[k] is not None]
        isolated = len(members) == 1 and not neighbours[members[0]]
        shift: float | None = None
        if rated and not isolated:
            shift = sum(float(known[k] or 0.0) for k in rated) / len(rated) - sum(
                r[k] for k in rated
            ) / len(rated)
        for k in members:
            out[names[k]] = TournamentRating(
                player=names[k],
                actual=known[k],
                estimated=None if shift is None else r[k] + shift,
                relative=r[k] - centre,
                component=c,
                anchored=shift is not None,
                opponents=len({j for j, _ in neighbours[k]}),
            )
    return TournamentFit(out, iterations, converged, n_comp)


def _components(neighbours: Sequence[Sequence[tuple[int, float]]]) -> list[int]:
    comp = [-1] * len(neighbours)
    c = 0
    for start in range(len(neighbours)):
        if comp[start] >= 0:
            continue
        stack = [start]
        comp[start] = c
        while stack:
            k = stack.pop()
            for j, _ in neighbours[k]:
                if comp[j] < 0:
                    comp[j] = c
                    stack.append(j)
        c += 1
    return comp


@dataclass(frozen=True)
class EngineStrength:
    """Algorithm 3: r_e = mean(r_i - d_i), with a 95 % t-interval over players.

    ``low``/``high`` are None with fewer than two players.
    """

    rating: float
    low: float | None
    high: float | None
    players: int
    values: tuple[float, ...]


def engine_strength(pairs: Iterable[tuple[float, float]], level: float = 0.95) -> EngineStrength:
    """Algorithm 3 from ``(r_i, d_i)`` pairs (rating, difference to the engine).

    The interval treats players as independent draws: ``mean +/- t_{n-1} s /
    sqrt(n)``. Pass perceived ratings r'_i instead of r_i for the paper's r'_e.
    """
    values = tuple(float(r) - float(d) for r, d in pairs)
    if not values:
        raise ValueError("engine strength needs at least one player with a rating")
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return EngineStrength(mean, None, None, n, values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    q = float(stdtrit(n - 1, 0.5 + level / 2.0))
    half = q * sd / math.sqrt(n)
    return EngineStrength(mean, mean - half, mean + half, n, values)
