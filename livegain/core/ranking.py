"""Maximum-likelihood ranking from head-to-head results (seed 001, Swygert 2014).

Model (seed 001, section 3.1, after the reparametrisation ``gamma_i = beta*theta_i``):
for a game between players i and j, with ``delta = gamma_i - gamma_j``,

    P(i wins)  = exp(alpha + delta) / Z
    P(j wins)  = exp(alpha - delta) / Z
    P(draw)    = 1 / Z,        Z = 1 + exp(alpha + delta) + exp(alpha - delta).

``alpha`` sets the draw rate (alpha < 0: many draws). The log-likelihood of a
pair with ``w`` wins of i, ``d`` draws and ``l`` wins of j is

    w*(alpha + delta) + l*(alpha - delta) - (w + d + l)*log Z,

concave in (alpha, gamma) (log Z is a log-sum-exp of affine functions). The
gammas are identified only up to a common shift; as the thesis suggests we fix
their mean (to 0). The fit maximises the log-likelihood with analytic gradient
and Hessian (scipy ``trust-exact`` on alpha and gamma_1..gamma_{M-1} with
gamma_M = 0, then centred), and checks the result: gradient ~ 0 and Hessian
negative definite on the identified parameters. Standard errors come from the
observed information matrix (minus the Hessian) at the optimum, transformed to
the mean-zero constraint.

A maximum exists only if the results tie every player to every other in both
directions (a player who never drew or won against the rest has gamma = -inf),
and if there are both draws and decisive games (else alpha = +/-inf); such
inputs raise :class:`RankingError` with a reason.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.optimize import minimize

from livegain.core.errors import LivegainError

Vector = npt.NDArray[np.float64]
TIE_TOLERANCE = 1e-6
"""Gammas closer than this share a rank."""
Matrix = npt.NDArray[np.float64]


class RankingError(LivegainError, ValueError):
    """The results cannot be fitted (empty, disconnected, or a maximum at infinity)."""


@dataclass(frozen=True)
class PairResult:
    """Games between two players: wins of ``player_a``, draws, wins of ``player_b``."""

    player_a: str
    player_b: str
    wins_a: int
    draws: int
    wins_b: int

    def __post_init__(self) -> None:
        if self.player_a == self.player_b:
            raise ValueError(f"a player cannot play themself: {self.player_a!r}")
        for name in ("wins_a", "draws", "wins_b"):
            v = getattr(self, name)
            if v < 0:
                raise ValueError(f"{name} must be >= 0, got {v}")

    @property
    def games(self) -> int:
        return self.wins_a + self.draws + self.wins_b


def tally_results(games: Iterable[tuple[str, str, str]]) -> tuple[list[PairResult], int]:
    """Pairwise results from (white, black, result) triples.

    ``result`` is ``1-0``, ``0-1`` or ``1/2-1/2``; anything else (``*``,
    unfinished) is skipped and counted. Returns (results, skipped).
    """
    table: dict[tuple[str, str], list[int]] = {}
    skipped = 0
    for white, black, result in games:
        if result not in ("1-0", "0-1", "1/2-1/2") or white == black:
            skipped += 1
            continue
        a, b = sorted((white, black))
        row = table.setdefault((a, b), [0, 0, 0])
        if result == "1/2-1/2":
            row[1] += 1
        elif (result == "1-0") == (white == a):
            row[0] += 1
        else:
            row[2] += 1
    results = [PairResult(a, b, w, d, lo) for (a, b), (w, d, lo) in sorted(table.items())]
    return results, skipped


@dataclass(frozen=True)
class PlayerEstimate:
    name: str
    gamma: float
    se: float
    rank: int
    games: int
    wins: int
    draws: int
    losses: int


@dataclass(frozen=True)
class RankingFit:
    alpha: float
    alpha_se: float
    players: tuple[PlayerEstimate, ...]
    """In rank order (highest gamma first)."""
    log_likelihood: float
    gradient_norm: float
    """Euclidean norm of the score vector at the optimum."""
    max_hessian_eigenvalue: float
    """Largest eigenvalue of the Hessian on the identified parameters (< 0 at a maximum)."""
    iterations: int
    covariance: Matrix
    """Covariance of (alpha, gamma_1..gamma_M) in ``names`` order, mean-zero gammas."""
    names: tuple[str, ...]

    def gamma(self, name: str) -> float:
        for p in self.players:
            if p.name == name:
                return p.gamma
        raise KeyError(name)


@dataclass(frozen=True)
class _Data:
    names: tuple[str, ...]
    i: npt.NDArray[np.intp]
    j: npt.NDArray[np.intp]
    w: Vector
    d: Vector
    lo: Vector


def _prepare(results: Sequence[PairResult]) -> _Data:
    merged: dict[tuple[str, str], list[int]] = {}
    for r in results:
        if r.games == 0:
            continue
        if r.player_a <= r.player_b:
            key, vals = (r.player_a, r.player_b), (r.wins_a, r.draws, r.wins_b)
        else:
            key, vals = (r.player_b, r.player_a), (r.wins_b, r.draws, r.wins_a)
        row = merged.setdefault(key, [0, 0, 0])
        for k in range(3):
            row[k] += vals[k]
    if not merged:
        raise RankingError("no games in the results")
    names = tuple(sorted({n for key in merged for n in key}))
    if len(names) < 2:
        raise RankingError("need at least two players")
    index = {n: k for k, n in enumerate(names)}
    keys = sorted(merged)
    data = _Data(
        names=names,
        i=np.array([index[a] for a, _ in keys], dtype=np.intp),
        j=np.array([index[b] for _, b in keys], dtype=np.intp),
        w=np.array([merged[k][0] for k in keys], dtype=np.float64),
        d=np.array([merged[k][1] for k in keys], dtype=np.float64),
        lo=np.array([merged[k][2] for k in keys], dtype=np.float64),
    )
    _check_estimable(data)
    return data


def _reach(m: int, edges: list[list[int]], start: int) -> set[int]:
    seen = {start}
    stack = [start]
    while stack:
        u = stack.pop()
        for v in edges[u]:
            if v not in seen:
                seen.add(v)
                stack.append(v)
    return seen


def _check_estimable(data: _Data) -> None:
    m = len(data.names)
    # Edge u -> v when u scored at least half a point against v (won or drew).
    fwd: list[list[int]] = [[] for _ in range(m)]
    back: list[list[int]] = [[] for _ in range(m)]
    undirected: list[list[int]] = [[] for _ in range(m)]
    for i, j, w, d, lo in zip(data.i, data.j, data.w, data.d, data.lo, strict=True):
        a, b = int(i), int(j)
        undirected[a].append(b)
        undirected[b].append(a)
        if w + d > 0:
            fwd[a].append(b)
            back[b].append(a)
        if lo + d > 0:
            fwd[b].append(a)
            back[a].append(b)
    connected = _reach(m, undirected, 0)
    if len(connected) < m:
        apart = sorted(data.names[k] for k in range(m) if k not in connected)
        raise RankingError(
            "the results split into groups that never met; cannot compare "
            f"{', '.join(apart)} with the others"
        )
    if len(_reach(m, fwd, 0)) < m or len(_reach(m, back, 0)) < m:
        for k in range(m):
            if not fwd[k]:
                raise RankingError(
                    f"{data.names[k]} lost every game: their strength has no finite estimate"
                )
            if not back[k]:
                raise RankingError(
                    f"{data.names[k]} won every game: their strength has no finite estimate"
                )
        raise RankingError(
            "some players only lost to the rest (no wins or draws back): "
            "strengths have no finite estimate"
        )
    draws = float(data.d.sum())
    decisive = float(data.w.sum() + data.lo.sum())
    if draws == 0:
        raise RankingError("no drawn games: the draw parameter alpha has no finite estimate")
    if decisive == 0:
        raise RankingError("every game was drawn: the draw parameter alpha has no finite estimate")


def _pair_terms(data: _Data, alpha: float, gamma: Vector) -> tuple[Vector, Vector, Vector, Vector]:
    """Per pair: delta, p (i wins), q (j wins), log Z."""
    delta = gamma[data.i] - gamma[data.j]
    u = alpha + delta
    v = alpha - delta
    top = np.maximum(np.maximum(u, v), 0.0)
    eu, ev, e0 = np.exp(u - top), np.exp(v - top), np.exp(-top)
    z = e0 + eu + ev
    log_z = top + np.log(z)
    return delta, eu / z, ev / z, log_z


def log_likelihood(results: Sequence[PairResult], alpha: float, gammas: dict[str, float]) -> float:
    """Log-likelihood of the thesis model at given parameters."""
    data = _prepare(results)
    gamma = np.array([gammas[n] for n in data.names], dtype=np.float64)
    return _loglik(data, alpha, gamma)


def _loglik(data: _Data, alpha: float, gamma: Vector) -> float:
    delta, _, _, log_z = _pair_terms(data, alpha, gamma)
    n = data.w + data.d + data.lo
    ll = data.w * (alpha + delta) + data.lo * (alpha - delta) - n * log_z
    return float(ll.sum())


def _grad_hess(data: _Data, alpha: float, gamma: Vector) -> tuple[Vector, Matrix]:
    """Gradient and Hessian of the log-likelihood in (alpha, gamma_1..gamma_M)."""
    m = gamma.size
    _, p, q, _ = _pair_terms(data, alpha, gamma)
    n = data.w + data.d + data.lo
    r = 1.0 - p - q
    g_alpha = data.w + data.lo - n * (p + q)
    g_delta = data.w - data.lo - n * (p - q)
    h_aa = -n * (p + q) * r
    h_ad = -n * (p - q) * r
    h_dd = -n * ((p + q) - (p - q) ** 2)
    grad = np.zeros(m + 1)
    hess = np.zeros((m + 1, m + 1))
    grad[0] = g_alpha.sum()
    hess[0, 0] = h_aa.sum()
    ii = data.i + 1
    jj = data.j + 1
    np.add.at(grad, ii, g_delta)
    np.add.at(grad, jj, -g_delta)
    row0 = hess[0]
    np.add.at(row0, ii, h_ad)
    np.add.at(row0, jj, -h_ad)
    np.add.at(hess, (ii, ii), h_dd)
    np.add.at(hess, (jj, jj), h_dd)
    np.add.at(hess, (ii, jj), -h_dd)
    np.add.at(hess, (jj, ii), -h_dd)
    hess[1:, 0] = hess[0, 1:]
    return grad, hess


def _basis(m: int) -> Matrix:
    """Map (alpha, gamma_1..gamma_{M-1}) -> (alpha, gamma_1..gamma_M) with gamma_M = 0."""
    t = np.zeros((m + 1, m))
    t[:m, :m] = np.eye(m)
    return t


def fit_ranking(
    results: Sequence[PairResult], *, alpha: float | None = None, gtol: float = 1e-8
) -> RankingFit:
    """Maximum-likelihood alpha and gammas (mean zero) with standard errors.

    ``alpha``: if given, alpha is held fixed at that value (profile
    likelihood; its standard error is reported as 0).
    """
    data = _prepare(results)
    m = len(data.names)
    t = _basis(m) if alpha is None else _basis(m)[:, 1:]
    offset = np.zeros(m + 1)
    if alpha is not None:
        offset[0] = alpha

    def unpack(x: Vector) -> tuple[float, Vector]:
        full = t @ x + offset
        return float(full[0]), full[1:]

    def restrict(grad: Vector, hess: Matrix) -> tuple[Vector, Matrix]:
        return t.T @ grad, t.T @ hess @ t

    def fun(x: Vector) -> float:
        a, gm = unpack(x)
        return -_loglik(data, a, gm)

    def jac(x: Vector) -> Vector:
        a, gm = unpack(x)
        g, _ = restrict(*_grad_hess(data, a, gm))
        return -g

    def hess(x: Vector) -> Matrix:
        a, gm = unpack(x)
        _, h = restrict(*_grad_hess(data, a, gm))
        return -h

    x0 = np.zeros(t.shape[1])
    try:
        res = minimize(fun, x0, jac=jac, hess=hess, method="trust-exact", options={"gtol": gtol})
    except np.linalg.LinAlgError as exc:  # counts so lopsided that the Hessian is singular
        raise RankingError(f"the maximisation failed ({exc})") from None
    a_hat, g_ref = unpack(np.asarray(res.x, dtype=np.float64))
    grad_full, hess_full = _grad_hess(data, a_hat, g_ref)
    g_red, h_red = restrict(grad_full, hess_full)
    eig = np.linalg.eigvalsh(h_red)
    grad_norm = float(np.linalg.norm(g_red))
    total_games = float((data.w + data.d + data.lo).sum())
    if not np.all(np.isfinite(res.x)) or grad_norm > 1e-6 * max(1.0, total_games):
        raise RankingError(f"the maximisation did not converge (gradient norm {grad_norm:.3g})")
    max_eig = float(eig.max())
    if max_eig >= 0:
        raise RankingError("the optimum is not a strict maximum (Hessian not negative definite)")
    # Covariance in the reference parametrisation (gamma_M = 0), then centre the gammas.
    try:
        cov_ref = t @ np.linalg.inv(-h_red) @ t.T
    except np.linalg.LinAlgError as exc:
        raise RankingError(f"no standard errors ({exc})") from None
    centre = np.eye(m + 1)
    centre[1:, 1:] -= 1.0 / m
    cov = centre @ cov_ref @ centre.T
    gamma = g_ref - g_ref.mean()
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    order = sorted(range(m), key=lambda k: (-gamma[k], data.names[k]))
    # Competition ranking (1, 2, 2, 4): equal points in a round robin give equal gammas.
    rank_of = {
        k: 1 + sum(1 for o in range(m) if gamma[o] > gamma[k] + TIE_TOLERANCE) for k in order
    }
    wins = np.zeros(m)
    draws = np.zeros(m)
    losses = np.zeros(m)
    np.add.at(wins, data.i, data.w)
    np.add.at(wins, data.j, data.lo)
    np.add.at(losses, data.i, data.lo)
    np.add.at(losses, data.j, data.w)
    np.add.at(draws, data.i, data.d)
    np.add.at(draws, data.j, data.d)
    players = tuple(
        PlayerEstimate(
            name=data.names[k],
            gamma=float(gamma[k]),
            se=float(se[k + 1]),
            rank=rank_of[k],
            games=int(wins[k] + draws[k] + losses[k]),
            wins=int(wins[k]),
            draws=int(draws[k]),
            losses=int(losses[k]),
        )
        for k in order
    )
    return RankingFit(
        alpha=a_hat,
        alpha_se=float(se[0]),
        players=players,
        log_likelihood=_loglik(data, a_hat, g_ref),
        gradient_norm=grad_norm,
        max_hessian_eigenvalue=max_eig,
        iterations=int(res.nit),
        covariance=cov,
        names=data.names,
    )


def expected_outcomes(alpha: float, gamma_i: float, gamma_j: float) -> tuple[float, float, float]:
    """(P(i wins), P(draw), P(j wins)) under the thesis model."""
    u = alpha + gamma_i - gamma_j
    v = alpha - gamma_i + gamma_j
    top = max(u, v, 0.0)
    eu, ev, e0 = math.exp(u - top), math.exp(v - top), math.exp(-top)
    z = eu + ev + e0
    return eu / z, e0 / z, ev / z
