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

import numpy as np

from livegain.core.student import t_quantile


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
    ei: list[int] = []
    ej: list[int] = []
    ed: list[float] = []
    for i, j, d in differences:
        if i not in index or j not in index:
            raise ValueError(f"unknown player in pairing {i!r} - {j!r}")
        if i == j:
            raise ValueError(f"player {i!r} paired with himself")
        if not math.isfinite(d):
            raise ValueError(f"difference {i!r} - {j!r} is not finite")
        ei.append(index[i])
        ej.append(index[j])
        ed.append(float(d))
    known = [actual.get(p) for p in names]
    fit = _fit(len(names), ei, ej, ed, _actual_array(known), tol, max_iterations)
    r = fit.values.tolist()
    opponents: list[set[int]] = [set() for _ in names]
    for a, b in zip(ei, ej, strict=True):
        opponents[a].add(b)
        opponents[b].add(a)

    # step 4, per component
    out: dict[str, TournamentRating] = {}
    for c in range(fit.components):
        members = fit.members(c)
        centre = sum(r[k] for k in members) / len(members)
        rated = [k for k in members if known[k] is not None]
        isolated = len(members) == 1
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
                opponents=len(opponents[k]),
            )
    return TournamentFit(out, fit.iterations, fit.converged, fit.components)


def tournament_estimates(
    n: int,
    ei: Sequence[int] | np.ndarray,
    ej: Sequence[int] | np.ndarray,
    ed: Sequence[float] | np.ndarray,
    known: Sequence[float | None] | np.ndarray,
    tol: float = 1e-9,
    max_iterations: int = 200_000,
) -> np.ndarray:
    """The ``estimated`` ratings of :func:`perceived_tournament` for players
    ``0..n-1`` and differences ``(ei[e], ej[e], ed[e])`` (already checked),
    NaN where there is none; without building the per-player records (the
    jackknife of Algorithm 2 calls it once per group of games). ``known``: the
    actual ratings, None or NaN where unknown."""
    actual = _actual_array(known)
    fit = _fit(n, ei, ej, ed, actual, tol, max_iterations)
    r = fit.values
    labels = fit.labels
    rated = ~np.isnan(actual)
    n_comp = fit.components
    size = np.bincount(labels, minlength=n_comp)
    count = np.bincount(labels[rated], minlength=n_comp)
    sum_actual = np.bincount(labels[rated], weights=actual[rated], minlength=n_comp)
    sum_r = np.bincount(labels[rated], weights=r[rated], minlength=n_comp)
    anchored = (count > 0) & (size > 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        shift = np.where(anchored, sum_actual / count - sum_r / count, np.nan)
    return np.asarray(r + shift[labels], dtype=float)


def pairing_components(
    n: int, ei: Sequence[int] | np.ndarray, ej: Sequence[int] | np.ndarray
) -> np.ndarray:
    """The component of each of the players ``0..n-1`` in the graph of pairings
    ``(ei[e], ej[e])``, numbered in the order of their first player (as
    :attr:`TournamentRating.component`)."""
    return _component_labels(n, np.asarray(ei, dtype=np.int64), np.asarray(ej, dtype=np.int64))


#: Components with at most this many players are fitted by Gauss-Seidel from
#: the actual ratings, as the paper describes. Larger ones (thousands of
#: players who met a few others each, as on an online server: Gauss-Seidel
#: would need tens of thousands of sweeps over long chains of pairings) start
#: from the exact least-squares solution, which is the iteration's fixed
#: point, and Gauss-Seidel sweeps only if that is not within ``tol`` already.
GAUSS_SEIDEL_PLAYERS = 16


@dataclass
class _Fit:
    values: np.ndarray  # r'_i before the shift (a component's constant is arbitrary)
    labels: np.ndarray  # component of each player, numbered by first player
    order: np.ndarray  # players sorted by component (in order within one)
    starts: np.ndarray  # where each component begins in ``order`` (and the end)
    iterations: int
    converged: bool

    @property
    def components(self) -> int:
        return len(self.starts) - 1

    def members(self, c: int) -> list[int]:
        return [int(k) for k in self.order[self.starts[c] : self.starts[c + 1]]]


def _fit(
    n: int,
    ei: Sequence[int] | np.ndarray,
    ej: Sequence[int] | np.ndarray,
    ed: Sequence[float] | np.ndarray,
    actual: np.ndarray,
    tol: float,
    max_iterations: int,
) -> _Fit:
    """Steps 1-3 of Algorithm 2, one component at a time (a component's values
    depend only on its own players and differences, in their order)."""
    u = np.asarray(ei, dtype=np.int64)
    v = np.asarray(ej, dtype=np.int64)
    d = np.asarray(ed, dtype=float)
    labels = _component_labels(n, u, v)
    size = np.bincount(labels)
    n_comp = len(size)
    order = np.argsort(labels, kind="stable")
    starts = np.concatenate([[0], np.cumsum(size)]).astype(np.int64)

    # step 1: initialise with the actual rating (else the component's mean rating)
    rated = ~np.isnan(actual)
    total = np.bincount(labels[rated], weights=actual[rated], minlength=n_comp)
    count = np.bincount(labels[rated], minlength=n_comp)
    mean = np.divide(total, count, out=np.zeros(n_comp), where=count > 0)
    r = np.where(rated, actual, mean[labels]) if n else np.zeros(0)

    small = (size >= 2) & (size <= GAUSS_SEIDEL_PLAYERS)
    large = size > GAUSS_SEIDEL_PLAYERS
    edge_comp = labels[u]
    if large.any():
        nodes = np.flatnonzero(large[labels])
        sel = np.flatnonzero(large[edge_comp])
        local = np.full(n, -1, dtype=np.int64)
        local[nodes] = np.arange(len(nodes))
        exact = np.zeros(n)
        exact[nodes] = _least_squares(
            len(nodes), local[u[sel]], local[v[sel]], d[sel], labels[nodes]
        )
        # the constant of each component is free: keep its first player's start value
        first = order[starts[:-1]]
        offset = r[first] - exact[first]
        r[nodes] = exact[nodes] + offset[labels[nodes]]
        # a Gauss-Seidel fixed point within tol? (one Jacobi pass, vectorised)
        su, sv, sd = u[sel], v[sel], d[sel]
        pulled = np.bincount(su, weights=r[sv] + sd, minlength=n) + np.bincount(
            sv, weights=r[su] - sd, minlength=n
        )
        terms = np.bincount(su, minlength=n) + np.bincount(sv, minlength=n)
        change = np.zeros(n_comp)
        np.maximum.at(change, labels[nodes], np.abs(pulled[nodes] / terms[nodes] - r[nodes]))
        small |= large & (change > tol)
    iterations = 1
    converged = True
    if small.any():
        neighbours: dict[int, list[tuple[int, float]]] = {}
        for e in np.flatnonzero(small[edge_comp]).tolist():
            a, b, x = int(u[e]), int(v[e]), float(d[e])
            neighbours.setdefault(a, []).append((b, x))
            neighbours.setdefault(b, []).append((a, -x))
        values = r.tolist()
        for c in np.flatnonzero(small).tolist():
            members = [int(k) for k in order[starts[c] : starts[c + 1]]]
            done, ok = _gauss_seidel(members, neighbours, values, tol, max_iterations)
            iterations = max(iterations, done)
            converged = converged and ok
            r[members] = [values[k] for k in members]
    return _Fit(r, labels, order, starts, iterations, converged)


def _actual_array(known: Sequence[float | None] | np.ndarray) -> np.ndarray:
    if isinstance(known, np.ndarray):
        return np.asarray(known, dtype=float)
    return np.array([np.nan if x is None else float(x) for x in known], dtype=float)


def _gauss_seidel(
    members: Sequence[int],
    neighbours: Mapping[int, Sequence[tuple[int, float]]],
    r: list[float],
    tol: float,
    max_iterations: int,
) -> tuple[int, bool]:
    """Steps 2-3 on one component: minimise each e_i in turn until nothing
    changes by more than ``tol``. Returns (sweeps, converged)."""
    lists = [neighbours[k] for k in members]
    iterations = 0
    while iterations < max_iterations:
        iterations += 1
        change = 0.0
        for k, nb in zip(members, lists, strict=True):
            new = sum(r[j] + x for j, x in nb) / len(nb)
            change = max(change, abs(new - r[k]))
            r[k] = new
        if change <= tol:
            return iterations, True
    return iterations, False


def _component_labels(n: int, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Connected components of the pairing graph, numbered in the order of
    their first player.

    Hook and compress, vectorised: each pass hooks the root of every pairing's
    larger label under the smaller, then points every player at its root; a
    few passes for a tournament, a dozen for an online pool of thousands.
    """
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    root = np.arange(n, dtype=np.int64)
    while True:
        ru, rv = root[u], root[v]
        differ = ru != rv
        if not differ.any():
            break
        lo = np.minimum(ru[differ], rv[differ])
        hi = np.maximum(ru[differ], rv[differ])
        np.minimum.at(root, hi, lo)  # hi is a root: it hangs under a smaller label
        while True:  # compress: every player points at its root
            up = root[root]
            if np.array_equal(up, root):
                break
            root = up
    # roots are each component's smallest player: number them in that order
    _, raw = np.unique(root, return_inverse=True)
    return np.asarray(raw.ravel(), dtype=np.int64)


def _least_squares(
    n: int, u: np.ndarray, v: np.ndarray, d: np.ndarray, labels: np.ndarray
) -> np.ndarray:
    """The exact minimiser of ``sum_e (r[u_e] - r[v_e] - d_e)^2`` (each
    component's constant fixed arbitrarily; ``labels``: the components).

    Parallel differences are merged into one weighted term. Players with a
    single opponent left are eliminated (their term is then fitted exactly:
    ``r_leaf = r_opponent + b_leaf / w``, and their opponent's equation loses
    it), which on a pairing graph of many small events or an online pool leaves
    a small core (the players on cycles), solved by sparse LU with a minimum
    degree ordering; then the eliminated players are filled back in.
    """
    r = np.zeros(n)
    if n == 0 or len(u) == 0:
        return r
    lo = np.minimum(u, v)
    hi = np.maximum(u, v)
    oriented = np.where(u == lo, d, -d)  # difference of lo over hi
    keys, inverse = np.unique(lo * n + hi, return_inverse=True)
    inverse = inverse.ravel()
    w = np.bincount(inverse).astype(float)
    s = np.bincount(inverse, weights=oriented)
    a = keys // n
    b = keys % n
    m = len(keys)
    # normal equations: sum_j w_ij (r_i - r_j) = rhs_i
    rhs = np.bincount(a, weights=s, minlength=n) - np.bincount(b, weights=s, minlength=n)
    degree = np.bincount(a, minlength=n) + np.bincount(b, minlength=n)
    edge_ids = np.arange(m, dtype=np.int64)
    incident = np.zeros(n, dtype=np.int64)  # xor of the ids of a player's remaining terms
    np.bitwise_xor.at(incident, a, edge_ids)
    np.bitwise_xor.at(incident, b, edge_ids)
    alive = np.ones(m, dtype=bool)
    steps: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    leaves = np.flatnonzero(degree == 1)
    while leaves.size:
        e = incident[leaves]
        other = np.where(a[e] == leaves, b[e], a[e])
        # two players left facing each other: eliminate the later one only
        keep = (degree[other] != 1) | (leaves > other)
        leaves, e, other = leaves[keep], e[keep], other[keep]
        steps.append((leaves, other, rhs[leaves] / w[e]))
        np.add.at(rhs, other, rhs[leaves])
        alive[e] = False
        degree[leaves] = 0
        np.subtract.at(degree, other, 1)
        np.bitwise_xor.at(incident, other, e)
        candidates = np.unique(other)
        leaves = candidates[degree[candidates] == 1]
    core_edges = np.flatnonzero(alive)
    if core_edges.size:
        ca, cb, cw = a[core_edges], b[core_edges], w[core_edges]
        # what is left of a component is connected: fix its first player at 0
        in_core = degree > 0
        first = np.full(int(labels.max()) + 1, n, dtype=np.int64)
        np.minimum.at(first, labels[in_core], np.flatnonzero(in_core))
        grounded = np.zeros(n, dtype=bool)
        grounded[first[first < n]] = True
        unknown = np.flatnonzero(in_core & ~grounded)
        if unknown.size:
            pos = np.full(n, -1, dtype=np.int64)
            pos[unknown] = np.arange(unknown.size)
            pa, pb = pos[ca], pos[cb]
            diag = np.bincount(ca, weights=cw, minlength=n) + np.bincount(
                cb, weights=cw, minlength=n
            )
            both = (pa >= 0) & (pb >= 0)
            rows = np.concatenate([pos[unknown], pa[both], pb[both]])
            cols = np.concatenate([pos[unknown], pb[both], pa[both]])
            vals = np.concatenate([diag[unknown], -cw[both], -cw[both]])
            from scipy.sparse import csc_matrix
            from scipy.sparse.linalg import splu

            matrix = csc_matrix((vals, (rows, cols)), shape=(unknown.size, unknown.size))
            # symmetric positive definite: a symmetric ordering, no pivoting
            lu = splu(
                matrix,
                permc_spec="MMD_AT_PLUS_A",
                diag_pivot_thresh=0.0,
                options={"SymmetricMode": True},
            )
            target = rhs[unknown]
            x = lu.solve(target)
            x += lu.solve(target - matrix @ x)  # one step of iterative refinement
            r[unknown] = x
    for leaves, other, offset in reversed(steps):
        r[leaves] = r[other] + offset
    return r


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
    q = t_quantile(n - 1, 0.5 + level / 2.0)
    half = q * sd / math.sqrt(n)
    return EngineStrength(mean, mean - half, mean + half, n, values)
