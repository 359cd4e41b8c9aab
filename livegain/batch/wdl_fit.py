"""Fitting the human win/draw/loss model (``livegain.core.human_wdl``) on
rated games with known results, and measuring it on held-out games.

Both steps are maximum likelihood of the game's result (1-0, 1/2, 0-1):

1. the ratings-only prior of a kind of game: White's advantage ``A`` and the
   draw logistic ``d0, d1, d2``, from every rated game of the calibration part;
2. the live knots: at each knot ply the coefficients ``a, b, e, f, g``, fitted
   jointly over every evaluated position (plies 1-200) of the calibration
   part's games, each position's coefficients interpolated between its two
   knots exactly as the live model does. Once with the ratings and once with
   the ratings taken as unknown.

The vectorised log-likelihood here mirrors ``HumanWdlModel.probabilities``;
tests/core/test_human_wdl.py holds the two equal.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.optimize import minimize

from livegain.core.human_wdl import (
    IDENTITY_KNOT,
    HumanWdlModel,
    Knot,
    RatingsPrior,
    features,
)

FloatArray = npt.NDArray[np.float64]

#: Knot plies of the live model (ply 0 is the fixed identity knot).
DEFAULT_KNOT_PLIES: tuple[int, ...] = (0, 10, 20, 30, 40, 50, 60, 80, 100, 130, 160)
#: Penalty on the squared change of coefficients from one knot to the next
#: (keeps sparse late knots near their neighbours).
SMOOTHING = 1e-3
#: The plies the validation checks (and the win%-curve's draw share is fitted at).
CHECK_PLIES: tuple[int, ...] = (20, 40, 60, 80, 100)
#: Positions used per game for the knots: plies 1 .. MAX_PLY.
MAX_PLY = 200


@dataclass(frozen=True)
class RatedResult:
    """One game for the prior: ratings (None: unknown) and White's score."""

    white: float | None
    black: float | None
    score: float


@dataclass(frozen=True)
class ScoredGame:
    """One game for the knots: ratings, White's score and its evaluations in
    pawns (White's view) after plies 0..n (``pawns[k]``: after ply k; NaN where
    unknown)."""

    white: float | None
    black: float | None
    score: float
    pawns: Sequence[float]
    first_mover_is_white: bool = True


def _outcome(score: float) -> int:
    """0: White won, 1: draw, 2: Black won."""
    return 0 if score > 0.75 else (2 if score < 0.25 else 1)


def fit_prior(
    games: Sequence[RatedResult], kind: str, provenance: dict[str, str] | None = None
) -> RatingsPrior:
    """The ratings-only prior of a kind of game, by maximum likelihood."""
    rated = [g for g in games if g.white is not None and g.black is not None]
    if len(rated) < 200:
        raise ValueError(
            f"need at least 200 rated games with results to fit a prior, got {len(rated)}"
        )
    draw_rate = float(np.mean([_outcome(g.score) == 1 for g in games]))
    white = np.array([g.white for g in rated], dtype=float)
    black = np.array([g.black for g in rated], dtype=float)
    y = np.array([_outcome(g.score) for g in rated])
    level = ((white + black) / 2.0 - 2000.0) / 400.0
    gap = np.abs(white - black) / 400.0

    def probabilities(p: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        # RatingsPrior.probabilities, vectorised
        e = 1.0 / (1.0 + 10.0 ** (-(white - black + p[0]) / p[4]))
        d = 1.0 / (1.0 + np.exp(-(p[1] + p[2] * level + p[3] * gap)))
        d = np.minimum(d, 2.0 * np.minimum(e, 1.0 - e) * 0.999)
        return e - d / 2.0, d, 1.0 - e - d / 2.0

    def nll(p: FloatArray) -> float:
        w, d, lo = probabilities(p)
        probs = np.choose(y, [w, d, lo])
        return float(-np.mean(np.log(np.clip(probs, 1e-9, 1.0))))

    start = np.array([30.0, math.log(draw_rate / (1 - draw_rate)), 0.0, 0.0, 400.0])
    res = minimize(
        nll, start, method="Nelder-Mead", options={"xatol": 1e-4, "fatol": 1e-8, "maxiter": 4000}
    )
    p = res.x
    return RatingsPrior(
        kind=kind,
        white_advantage=round(float(p[0]), 2),
        scale=round(float(p[4]), 2),
        draw_intercept=round(float(p[1]), 5),
        draw_level=round(float(p[2]), 5),
        draw_gap=round(float(p[3]), 5),
        draw_rate=round(draw_rate, 5),
        provenance=dict(provenance or {}),
    )


@dataclass
class _Rows:
    mu0: FloatArray
    eta0: FloatArray
    u: FloatArray
    v: FloatArray
    s: FloatArray
    y: npt.NDArray[np.int64]
    lo: npt.NDArray[np.int64]
    t: FloatArray


def _softplus(z: FloatArray) -> FloatArray:
    return np.logaddexp(0.0, z)


def _sigmoid(z: FloatArray) -> FloatArray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def _rows(
    games: Sequence[ScoredGame], prior: RatingsPrior, plies: Sequence[int], rated: bool, step: int
) -> _Rows:
    from livegain.core.human_wdl import softplus_inverse

    mu0s: list[float] = []
    eta0s: list[float] = []
    us: list[float] = []
    vs: list[float] = []
    ss: list[float] = []
    ys: list[int] = []
    pl: list[int] = []
    for g in games:
        w, b = (g.white, g.black) if rated else (None, None)
        if rated and (w is None or b is None):
            continue
        mu0, theta0 = prior.logits(w, b)
        eta0 = softplus_inverse(theta0)
        outcome = _outcome(g.score)
        for ply in range(1, min(len(g.pawns) - 1, MAX_PLY) + 1, step):
            v = g.pawns[ply]
            if math.isnan(v):
                continue
            mu0s.append(mu0)
            eta0s.append(eta0)
            fu, fv = features(v)
            us.append(fu)
            vs.append(fv)
            ss.append(1.0 if (ply % 2 == 0) == g.first_mover_is_white else -1.0)
            ys.append(outcome)
            pl.append(ply)
    p = np.array(pl, dtype=float)
    knots = np.array(plies, dtype=float)
    lo = np.clip(np.searchsorted(knots, p, side="right") - 1, 0, len(knots) - 1)
    last = lo >= len(knots) - 1
    lo = np.where(last, len(knots) - 2, lo)
    t = np.where(
        last, 1.0, (p - knots[lo]) / (knots[np.minimum(lo + 1, len(knots) - 1)] - knots[lo])
    )
    return _Rows(
        np.array(mu0s),
        np.array(eta0s),
        np.array(us),
        np.array(vs),
        np.array(ss),
        np.array(ys),
        lo.astype(np.int64),
        t,
    )


def _predict(c: FloatArray, rows: _Rows) -> tuple[FloatArray, FloatArray, FloatArray]:
    """``HumanWdlModel.probabilities`` for every row at once: (W, L, eta)
    with the knots' coefficients ``c`` (one row per knot, columns a b c e f g
    h m) interpolated at each row's ply."""
    c0, c1 = c[rows.lo], c[rows.lo + 1]
    co = c0 + rows.t[:, None] * (c1 - c0)
    a, b, cc, e, f, g, h, m = co.T
    mu = a * rows.mu0 + b * rows.u + cc * rows.v + m * rows.s
    eta = e * rows.eta0 + f + g * np.abs(rows.u) + h * np.abs(rows.v)
    theta = _softplus(eta)
    return _sigmoid(mu - theta), _sigmoid(-mu - theta), eta


def _fit_knots(rows: _Rows, plies: Sequence[int]) -> tuple[Knot, ...]:
    """The knots (after the fixed identity at ply 0) by maximum likelihood."""
    k = len(plies)
    ident = np.array([getattr(IDENTITY_KNOT, f) for f in "abcefghm"])
    au, av = np.abs(rows.u), np.abs(rows.v)
    width = len(ident)
    n = len(rows.y)

    def unpack(v: FloatArray) -> FloatArray:
        return np.vstack([ident, v.reshape(k - 1, width)])

    def nll(v: FloatArray) -> tuple[float, FloatArray]:
        c = unpack(v)
        t = rows.t[:, None]
        pw, pl, eta = _predict(c, rows)
        pd = np.clip(1.0 - pw - pl, 1e-12, 1.0)
        is_w, _is_d, is_l = rows.y == 0, rows.y == 1, rows.y == 2
        ll = np.where(
            is_w,
            np.log(np.clip(pw, 1e-12, 1)),
            np.where(is_l, np.log(np.clip(pl, 1e-12, 1)), np.log(pd)),
        )
        qw, ql = pw * (1 - pw), pl * (1 - pl)
        dmu = np.where(is_w, 1 - pw, np.where(is_l, -(1 - pl), -(qw - ql) / pd))
        dtheta = np.where(is_w, -(1 - pw), np.where(is_l, -(1 - pl), (qw + ql) / pd))
        deta = dtheta * _sigmoid(eta)
        # d/d coefficients at the row, then spread to its two knots
        dco = np.stack(
            [
                dmu * rows.mu0,
                dmu * rows.u,
                dmu * rows.v,
                deta * rows.eta0,
                deta,
                deta * au,
                deta * av,
                dmu * rows.s,
            ],
            axis=1,
        )
        grad = np.zeros((k, width))
        np.add.at(grad, rows.lo, dco * (1 - t))
        np.add.at(grad, rows.lo + 1, dco * t)
        diff = np.diff(c, axis=0)
        penalty = SMOOTHING * float((diff[1:] ** 2).sum())
        dpen = np.zeros_like(c)
        dpen[1:-1] -= 2 * diff[1:]
        dpen[2:] += 2 * diff[1:]
        total = -grad / n + SMOOTHING * dpen
        return float(-ll.sum() / n) + penalty, total[1:].ravel()

    start = np.tile(np.array([1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]), k - 1)
    res = minimize(nll, start, jac=True, method="L-BFGS-B", options={"maxiter": 2000})
    c = unpack(res.x)
    return (
        IDENTITY_KNOT,
        *tuple(Knot(int(plies[i]), *(round(float(z), 5) for z in c[i])) for i in range(1, k)),
    )


def fit_curve_draw_share(games: Sequence[ScoredGame], plies: Sequence[int]) -> float:
    """The draw share of the win%-curve baseline (``core.wdl.wdl_from_cp``)
    that fits these games' results best at these plies (maximum likelihood
    over a grid of 0.01)."""
    from livegain.core.wdl import win_percent

    es: list[float] = []
    ys: list[int] = []
    for g in games:
        for ply in plies:
            if ply < len(g.pawns) and not math.isnan(g.pawns[ply]):
                es.append(win_percent(round(g.pawns[ply] * 100)) / 100.0)
                ys.append(_outcome(g.score))
    if not es:
        raise ValueError("no evaluated position at the plies of the draw share")
    e = np.array(es)
    y = np.array(ys)
    best, best_share = math.inf, 0.0
    for share in np.arange(0.0, 1.0001, 0.01):
        d = share * (1.0 - np.abs(2.0 * e - 1.0))
        probs = np.choose(y, [e - d / 2.0, d, 1.0 - e - d / 2.0])
        nll = float(-np.log(np.clip(probs, 1e-6, 1.0)).mean())
        if nll < best:
            best, best_share = nll, float(share)
    return round(best_share, 2)


def fit_model(
    games: Sequence[ScoredGame],
    prior: RatingsPrior,
    name: str,
    evals: str,
    *,
    plies: Sequence[int] = DEFAULT_KNOT_PLIES,
    step: int = 1,
    provenance: dict[str, str] | None = None,
) -> HumanWdlModel:
    """The live model of one evaluation source on the prior of its kind."""
    if len(games) < 100:
        raise ValueError(f"need at least 100 evaluated games with results to fit, got {len(games)}")
    knots = _fit_knots(_rows(games, prior, plies, True, step), plies)
    unrated = _fit_knots(_rows(games, prior, plies, False, step), plies)
    return HumanWdlModel(
        name=name,
        evals=evals,
        prior=prior,
        knots=knots,
        unrated_knots=unrated,
        provenance=dict(provenance or {}),
        curve_draw_share=fit_curve_draw_share(games, CHECK_PLIES),
    )
