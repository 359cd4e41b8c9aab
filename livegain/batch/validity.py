"""Fitting and validating the calibrated perceived rating on rated games.

One place for the batch work behind the number the audience sees:

* :func:`split_part` puts every game in the *calibration* part or the
  *held-out* part, by a hash of its identity (deterministic, no list to keep);
* :func:`fit_model` fits a :class:`~livegain.core.perceived.PerceivedModel`
  on player-games of the calibration part;
* :func:`validate` measures a model, and Algorithm 4 beside it, on player-games
  it was not fitted to: error, bias, rank correlation, interval coverage and
  width, overall, by 200-point rating bin and by number of moves.

The method is documented in docs/maths.md; the figures, with the commands
that made them, in docs/validity.md.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeVar

import numpy as np
import numpy.typing as npt
from scipy.stats import spearmanr

from livegain.batch.annotated import AnnotatedGame
from livegain.batch.game_analysis import analyze_game, game_move_classes
from livegain.core.perceived import (
    DEFAULT_MOVE_BINS,
    EXTRAPOLATED,
    CalibratedRating,
    ForwardBin,
    MoveBin,
    MoveClasses,
    PerceivedModel,
)

Part = Literal["calibration", "held-out"]
FloatArray = npt.NDArray[np.float64]
#: Folds of the cross-fit: the lines of each player-game are fitted on move
#: scores fitted without it.
CROSS_FOLDS = 5

#: Share of games held out (hash buckets 0..2 of 10).
HELD_OUT_BUCKETS = 3
#: Ridge penalty of the move-score fit (relative to each class's share of moves).
DEFAULT_RIDGE = 1.0
#: Prefixes longer than this are not drawn for the per-bin lines.
MAX_PREFIX = 200
#: Rating bins of the reports.
BIN_WIDTH = 200


def game_key(headers: dict[str, str]) -> str:
    """What identifies a game's group for the split.

    A game with a URL as its Site (lichess's game page) is its own group. A
    game over the board is split with its whole event (Event and Site), never
    alone: players and events recur across games, so a held-out event is one
    none of whose games was fitted on. Without either tag: players, date and
    round."""
    site = headers.get("Site", "").strip()
    event = headers.get("Event", "").strip()
    if site.startswith(("http://", "https://")):
        return site
    if site not in ("", "?", "-") or event not in ("", "?", "-"):
        return f"{event}|{site}"
    keys = ("White", "Black", "Date", "Round", "Event")
    return "|".join(headers.get(k, "?") for k in keys)


def player_game_key(headers: Mapping[str, str], white: bool) -> str:
    """One player in one game, the same whichever reader of the file asks
    (a bench writing a per-player-game figure, another reading it): the
    game's split group, its players and round, and the side."""
    names = "|".join(headers.get(k, "?") for k in ("White", "Black", "Date", "Round"))
    return f"{game_key(dict(headers))}|{names}|{'w' if white else 'b'}"


def _digest(headers: dict[str, str]) -> str:
    return hashlib.sha1(game_key(headers).encode("utf-8")).hexdigest()


def split_group(headers: dict[str, str]) -> int:
    """The game's split group as a number (a lichess game, an event over the
    board): the first digits of the SHA-1 of :func:`game_key`."""
    return int(_digest(headers)[:8], 16)


def cross_fold(group: int) -> int:
    """The cross-fit fold of a split group (independent of the split: the
    split reads the group's last decimal digit, the folds the others)."""
    return (group // 10) % CROSS_FOLDS


def split_part(headers: dict[str, str]) -> Part:
    """``held-out`` for 30 % of games (by a SHA-1 of :func:`game_key`), else
    ``calibration``."""
    return "held-out" if split_group(headers) % 10 < HELD_OUT_BUCKETS else "calibration"


G = TypeVar("G")


def sample_order(headers: dict[str, str]) -> str:
    """A key that orders games pseudo-randomly (other digits of the same
    SHA-1): the first N games in this order are a fixed random sample."""
    return _digest(headers)[8:]


def sampled(games: list[G], n: int | None, tags: Callable[[G], dict[str, str]]) -> list[G]:
    """The first ``n`` of ``games`` in :func:`sample_order` (``tags``: a
    game's headers), kept in their own order; all of them when ``n`` is None
    or not below their number (``livegain validate --games``)."""
    if n is None or n >= len(games):
        return games
    keep = {id(g) for g in sorted(games, key=lambda g: sample_order(tags(g)))[:n]}
    return [g for g in games if id(g) in keep]


@dataclass(frozen=True)
class PlayerMoves:
    """One player in one game: rating and the classes of his counted moves."""

    rating: float
    classes: list[int]
    game: int
    color: str
    #: the game's split group as a number (its event over the board): the
    #: cross-fit's folds keep a group together
    group: int = 0


def player_moves(games: Iterable[AnnotatedGame], classes: MoveClasses) -> list[PlayerMoves]:
    """Every rated player-game with at least one counted move."""
    out: list[PlayerMoves] = []
    for k, game in enumerate(games):
        per_side = game_move_classes(game, classes)
        for color, elo in (("white", game.white_elo), ("black", game.black_elo)):
            moves = per_side[color]
            if elo is not None and moves:
                group = split_group(game.headers)
                out.append(PlayerMoves(float(elo), moves, k, color, group))
    return out


def fit_model(
    rows: Sequence[PlayerMoves],
    name: str,
    classes: MoveClasses | None = None,
    *,
    ridge: float = DEFAULT_RIDGE,
    bins: Sequence[int] = DEFAULT_MOVE_BINS,
    min_moves: int = 5,
    seed: int = 0,
    provenance: dict[str, str] | None = None,
    base: PerceivedModel | None = None,
    scale: str = "lichess",
) -> PerceivedModel:
    """Fit the two steps of the model (docs/maths.md).

    1. Move scores: ``y_i ~ sum_c f_ic m_c`` with ``f_ic`` the share of player
       i's moves in class c, by ridge regression toward the median rating (the
       penalty on class c is ``ridge`` times its share of all moves, so rare
       classes stay near the median).
    2. For each move-count bin, every player-game that reached the bin's first
       move count contributes one prefix, of a length drawn uniformly in the
       bin (or the whole game if shorter); the line ``y ~ a + b s`` is fitted by
       least squares and its residuals' 2.5 % and 97.5 % quantiles become the
       interval. Deterministic for a given ``seed``.

    With each bin's prefixes the *forward* line is fitted too, ``s ~ alpha +
    beta * rating`` (least squares), with its residuals' standard deviation
    and 2.5 % / 97.5 % quantiles: the confidence belt of ``perceived`` and the
    likelihood of ``form`` (docs/maths.md). ``scale``: "fide" or "lichess",
    the rating scale of the games (a FIDE-scale model labels ratings below its
    range "not validated on FIDE games").

    With a ``base`` model, step 1 is skipped: its move classes and scores are
    kept and only the lines and intervals are refitted on ``rows`` (for an
    evaluation source with fewer rated games, e.g. an engine at a depth).
    """
    if base is not None:
        classes = base.classes
    classes = classes or MoveClasses()
    if len(rows) < 50:
        raise ValueError(f"need at least 50 rated player-games to fit, got {len(rows)}")
    k = classes.count
    y = np.array([r.rating for r in rows], dtype=float)
    prior = float(np.median(y))
    if base is not None:
        centi = np.array([base.centi_score(c) for c in range(k)], dtype=float)
        row_centi = [centi] * len(rows)
    else:
        shares = np.zeros((len(rows), k))
        for i, r in enumerate(rows):
            shares[i] = np.bincount(r.classes, minlength=k) / len(r.classes)
        centi = _move_scores(shares, y, prior, ridge)
        # out of fold: each player-game's lines see scores fitted without its game
        fold = np.array([cross_fold(r.group) for r in rows])
        by_fold = [
            _move_scores(shares[fold != j], y[fold != j], prior, ridge) for j in range(CROSS_FOLDS)
        ]
        row_centi = [by_fold[f] for f in fold]

    rng = np.random.default_rng(seed)
    edges = [*bins, math.inf]
    fitted: list[MoveBin] = []
    forward: list[ForwardBin] = []
    for j, lo in enumerate(bins):
        hi = min(edges[j + 1] - 1, MAX_PREFIX)
        xs: list[float] = []
        ys: list[float] = []
        # the forward curve also sees every game that ended in the bin, whole:
        # a game over after 25 moves is not like the first 25 moves of a long
        # one (it often ends in a blunder), and the belt must hold for both
        ends: list[float] = []
        end_ratings: list[float] = []
        for i, r in enumerate(rows):
            n = len(r.classes)
            if n < lo:
                continue
            length = min(n, int(rng.integers(lo, int(max(lo, hi)) + 1)))
            xs.append(float(row_centi[i][r.classes[:length]].sum()) / (100.0 * length))
            ys.append(r.rating)
            if n <= hi and length < n:
                ends.append(float(row_centi[i][r.classes].sum()) / (100.0 * n))
                end_ratings.append(r.rating)
        if len(xs) < 30:  # too few games this long: reuse the previous bin's line
            prev = fitted[-1]
            fitted.append(MoveBin(lo, prev.intercept, prev.slope, prev.q_low, prev.q_high))
            forward.append(replace(forward[-1], moves_from=lo))
            continue
        x = np.array(xs)
        yy = np.array(ys)
        slope, intercept = np.polyfit(x, yy, 1) if np.ptp(x) > 0 else (0.0, float(yy.mean()))
        forward.append(
            _forward_bin(lo, np.array(xs), np.array(ys), np.array(ends), np.array(end_ratings))
        )
        resid = yy - (intercept + slope * x)
        q_low, q_high = np.quantile(resid, [0.025, 0.975])
        fitted.append(
            MoveBin(
                lo,
                round(float(intercept), 2),
                round(float(slope), 5),
                round(float(q_low), 1),
                round(float(q_high), 1),
            )
        )
    q_lo, q_hi = np.quantile(y, [0.025, 0.975])
    r_lo, r_hi = np.quantile(y, [0.01, 0.99])
    return PerceivedModel(
        name=name,
        classes=classes,
        move_scores=tuple(float(c) / 100.0 for c in centi),
        bins=tuple(fitted),
        prior=round(prior, 1),
        prior_low=round(float(q_lo), 1),
        prior_high=round(float(q_hi), 1),
        min_moves=min_moves,
        rating_low=round(float(r_lo), 1),
        rating_high=round(float(r_hi), 1),
        provenance=dict(provenance or {}),
        forward=tuple(forward),
        scale=scale,
        pop_mean=round(float(y.mean()), 1),
        pop_sd=round(float(y.std()), 1),
        below_label="not validated on FIDE games" if scale == "fide" else EXTRAPOLATED,
    )


def _move_scores(shares: FloatArray, y: FloatArray, prior: float, ridge: float) -> FloatArray:
    """Step 1's move scores (hundredths of a point), by ridge regression."""
    k = shares.shape[1]
    weight = shares.sum(axis=0) / shares.sum()
    lhs = shares.T @ shares + ridge * np.diag(weight) + 1e-6 * np.eye(k)
    scores = prior + np.linalg.solve(lhs, shares.T @ (y - prior))
    return np.asarray(np.round(scores * 100.0), dtype=float)


def _forward_bin(
    moves_from: int,
    s: FloatArray,
    rating: FloatArray,
    end_s: FloatArray | None = None,
    end_rating: FloatArray | None = None,
) -> ForwardBin:
    """The forward curve ``s ~ alpha + beta d + gamma d^2`` (``d``: rating
    minus the mean rating) by least squares, its residual spread ``sigma0 +
    sigma1 rating`` (a line through the absolute residuals, times
    sqrt(pi/2)), and the standardised residuals' 2.5 % and 97.5 % quantiles.

    ``end_s``/``end_rating``: games that ended in the bin, whole. They join
    the curve's fit, and the quantiles are the wider of the prefixes' and
    theirs (with 30 or more of them): the belt must hold live and at the end."""
    if end_s is not None and end_rating is not None and len(end_s):
        all_s, all_rating = np.concatenate([s, end_s]), np.concatenate([rating, end_rating])
    else:
        all_s, all_rating = s, rating
    center = float(all_rating.mean())
    low, high = (float(x) for x in np.quantile(all_rating, [0.01, 0.99]))
    gamma, beta, alpha = np.polyfit(all_rating - center, all_s, 2)
    beta = max(float(beta), 1e-4)
    f = ForwardBin(
        moves_from, float(alpha), beta, float(gamma), center, low, high, 0.0, 0.0, 0.0, 0.0
    )

    def residuals(xs: FloatArray, rs: FloatArray) -> FloatArray:
        return np.asarray(xs - np.array([f.mean(r) for r in rs]), dtype=float)

    resid = residuals(all_s, all_rating)
    k1, k0 = np.polyfit(all_rating, np.abs(resid), 1)
    scale = math.sqrt(math.pi / 2.0)
    sigma0, sigma1 = float(k0) * scale, float(k1) * scale
    if (sigma0 + sigma1 * all_rating).min() <= 0.25 * float(np.abs(resid).mean()) * scale:
        sigma0, sigma1 = float(np.abs(resid).mean()) * scale, 0.0

    def standardised(xs: FloatArray, rs: FloatArray) -> FloatArray:
        return residuals(xs, rs) / (sigma0 + sigma1 * rs)

    q_low, q_high = np.quantile(standardised(s, rating), [0.025, 0.975])
    if end_s is not None and end_rating is not None and len(end_s) >= 30:
        e_low, e_high = np.quantile(standardised(end_s, end_rating), [0.025, 0.975])
        q_low, q_high = min(q_low, e_low), max(q_high, e_high)
    return ForwardBin(
        moves_from,
        round(float(alpha), 3),
        round(beta, 6),
        round(float(gamma), 10),
        round(center, 1),
        round(low, 1),
        round(high, 1),
        round(sigma0, 4),
        round(sigma1, 7),
        round(float(q_low), 4),
        round(float(q_high), 4),
    )


# ---------------------------------------------------------------------------
# validation


@dataclass(frozen=True)
class Estimate:
    """One estimator's value and 95 % interval for one player-game."""

    rating: float
    low: float
    high: float


@dataclass(frozen=True)
class ValidityRow:
    """One player-game: the truth and the estimators (``perceived`` from the
    moves alone, ``form`` the official rating updated by them, Algorithm 4);
    ``live[n]``: the three after the player's first n moves. ``event``,
    ``player``, ``centi``, ``opponent`` and ``score`` serve the per-event
    figures."""

    rating: float
    moves: int
    perceived: Estimate
    algorithm4: Estimate
    early: bool
    live: dict[int, tuple[Estimate, Estimate, Estimate]] = field(
        default_factory=dict, compare=False
    )
    form: Estimate | None = None
    event: str = ""
    player: str = ""
    centi: int = 0
    opponent: float | None = None
    score: float | None = None


@dataclass(frozen=True)
class Figures:
    """The figures of one estimator over a set of player-games."""

    count: int
    mae: float
    bias: float
    spearman: float | None
    coverage: float
    width: float
    baseline_mae: float

    @property
    def mae_ratio(self) -> float:
        return self.mae / self.baseline_mae if self.baseline_mae > 0 else math.nan

    def to_json(self) -> dict[str, Any]:
        def r(x: float | None, d: int = 1) -> float | None:
            return None if x is None or math.isnan(x) else round(x, d)

        return {
            "count": self.count,
            "mae": r(self.mae),
            "baseline_mae": r(self.baseline_mae),
            "mae_ratio": r(self.mae_ratio, 3),
            "bias": r(self.bias),
            "spearman": r(self.spearman, 3),
            "coverage": r(self.coverage, 4),
            "median_width": r(self.width),
        }


@dataclass
class ValidityReport:
    """Both estimators, overall, by rating bin and by number of moves."""

    baseline: float
    rows: list[ValidityRow]
    overall: dict[str, Figures] = field(default_factory=dict)
    by_rating: list[tuple[int, dict[str, Figures]]] = field(default_factory=list)
    by_moves: list[tuple[int, dict[str, Figures]]] = field(default_factory=list)
    live: list[tuple[int, dict[str, Figures]]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "baseline": round(self.baseline, 1),
            "player_games": len(self.rows),
            "overall": {k: v.to_json() for k, v in self.overall.items()},
            "by_rating": [
                {"from": lo, **{k: v.to_json() for k, v in f.items()}} for lo, f in self.by_rating
            ],
            "by_moves": [
                {"from": lo, **{k: v.to_json() for k, v in f.items()}} for lo, f in self.by_moves
            ],
            "live": [{"after": n, **{k: v.to_json() for k, v in f.items()}} for n, f in self.live],
        }


ESTIMATORS: tuple[str, ...] = ("perceived", "form", "algorithm4")


def figures(rows: Sequence[ValidityRow], which: str, baseline: float) -> Figures:
    """Error, bias, Spearman, coverage and median width of one estimator."""
    rows = [r for r in rows if getattr(r, which) is not None]
    truth = np.array([r.rating for r in rows], dtype=float)
    est = [getattr(r, which) for r in rows]
    if not rows:
        return Figures(0, math.nan, math.nan, None, math.nan, math.nan, math.nan)
    value = np.array([e.rating for e in est], dtype=float)
    low = np.array([e.low for e in est], dtype=float)
    high = np.array([e.high for e in est], dtype=float)
    rho: float | None = None
    if len(rows) >= 3 and np.ptp(value) > 0 and np.ptp(truth) > 0:
        rho = float(spearmanr(value, truth).statistic)
    return Figures(
        count=len(rows),
        mae=float(np.abs(value - truth).mean()),
        bias=float((value - truth).mean()),
        spearman=rho,
        coverage=float(((low <= truth) & (truth <= high)).mean()),
        width=float(np.median(high - low)),
        baseline_mae=float(np.abs(baseline - truth).mean()),
    )


MOVE_BINS_REPORT: tuple[int, ...] = (1, 5, 10, 15, 20, 30, 40, 60)


#: Live checkpoints: both estimators after this many of the player's moves.
LIVE_CHECKPOINTS: tuple[int, ...] = (1, 2, 3, 5, 10, 15, 20, 30, 40)


def validity_rows(
    games: Iterable[AnnotatedGame],
    model: PerceivedModel,
    engine_rating: float,
    on_game: Callable[[], None] | None = None,
) -> list[ValidityRow]:
    """Both estimators at the end of each rated player-game, and after the
    first n moves for each live checkpoint the player reached (what the
    overlay showed at that moment)."""
    rows: list[ValidityRow] = []
    for game in games:
        report = analyze_game(game, engine_rating, model=model)
        result = _SCORES.get(game.headers.get("Result", "*"))
        event = game_key(game.headers)
        for pg, opp, side in (
            (report.white, game.black_elo, 0),
            (report.black, game.white_elo, 1),
        ):
            cal = pg.calibrated
            if pg.elo is None or cal is None or cal.moves == 0:
                continue
            a4 = pg.perceived
            live: dict[int, tuple[Estimate, Estimate, Estimate]] = {}
            for n in LIVE_CHECKPOINTS:
                if n <= len(pg.trace):
                    point = pg.trace[n - 1]
                    c = point.calibrated
                    p = point.perceived
                    if c is not None:
                        f = _form(model, c, float(pg.elo))
                        live[n] = (
                            Estimate(c.rating, c.low, c.high),
                            Estimate(p.rating, p.low, p.high),
                            f or Estimate(math.nan, math.nan, math.nan),
                        )
            rows.append(
                ValidityRow(
                    rating=float(pg.elo),
                    moves=cal.moves,
                    perceived=Estimate(cal.rating, cal.low, cal.high),
                    algorithm4=Estimate(a4.rating, a4.low, a4.high),
                    early=cal.early,
                    live=live,
                    form=_form(model, cal, float(pg.elo)),
                    event=event,
                    player=pg.name,
                    centi=_centi(cal),
                    opponent=None if opp is None else float(opp),
                    score=None if result is None else result[side],
                )
            )
        if on_game is not None:
            on_game()
    return rows


def _centi(c: CalibratedRating) -> int:
    """The sum of move scores (hundredths of a point) behind an estimate."""
    return round((c.score or 0.0) * 100.0 * c.moves)


def _form(model: PerceivedModel, c: CalibratedRating, rating: float) -> Estimate | None:
    f = model.form([(c.moves, _centi(c))], rating)
    return None if f is None else Estimate(f.rating, f.low, f.high)


def validate(rows: list[ValidityRow], baseline: float) -> ValidityReport:
    """Figures of both estimators against ``baseline`` (a constant guess: the
    calibration part's median rating)."""
    if not rows:
        raise ValueError("no rated player-game with moves to validate")
    report = ValidityReport(baseline=baseline, rows=rows)
    report.overall = {w: figures(rows, w, baseline) for w in ESTIMATORS}
    lows = sorted({int(r.rating // BIN_WIDTH) * BIN_WIDTH for r in rows})
    for lo in lows:
        sel = [r for r in rows if lo <= r.rating < lo + BIN_WIDTH]
        report.by_rating.append((lo, {w: figures(sel, w, baseline) for w in ESTIMATORS}))
    edges = [*MOVE_BINS_REPORT, math.inf]
    for j, lo in enumerate(MOVE_BINS_REPORT):
        sel = [r for r in rows if lo <= r.moves < edges[j + 1]]
        if sel:
            report.by_moves.append((lo, {w: figures(sel, w, baseline) for w in ESTIMATORS}))
    for n in LIVE_CHECKPOINTS:
        at = [
            ValidityRow(
                r.rating,
                n,
                r.live[n][0],
                r.live[n][1],
                n < 5,
                form=None if math.isnan(r.live[n][2].rating) else r.live[n][2],
            )
            for r in rows
            if n in r.live
        ]
        if at:
            report.live.append((n, {w: figures(at, w, baseline) for w in ESTIMATORS}))
    return report


def write_plots(report: ValidityReport, directory: str, title: str) -> list[str]:
    """Three PNG plots (matplotlib): estimate against rating, coverage by
    rating bin, interval width against moves played. Returns the paths."""
    from pathlib import Path

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    rows = report.rows
    truth = np.array([r.rating for r in rows])
    paths: list[str] = []

    def save(fig: Any, name: str) -> None:
        fig.tight_layout()
        fig.savefig(out / name, dpi=110)
        plt.close(fig)
        paths.append(str(out / name))

    colours = {"perceived": "#1f77b4", "form": "#2ca02c", "algorithm4": "#d62728"}
    labels = {
        "perceived": "perceived (moves alone)",
        "form": "form (rating + moves)",
        "algorithm4": "Algorithm 4 (paper)",
    }

    fig, axes = plt.subplots(1, 3, figsize=(15, 5), sharey=True)
    for ax, which in zip(axes, ESTIMATORS, strict=True):
        est = np.array([getattr(r, which).rating if getattr(r, which) else np.nan for r in rows])
        ax.scatter(truth, est, s=3, alpha=0.25, color=colours[which], linewidths=0)
        lo, hi = float(truth.min()), float(truth.max())
        ax.plot([lo, hi], [lo, hi], color="black", lw=1, label="estimate = rating")
        f = report.overall[which]
        ax.set_title(
            f"{labels[which]}\nMAE {f.mae:.0f} (median guess {f.baseline_mae:.0f}), "
            f"bias {f.bias:+.0f}, Spearman {f.spearman or 0:.2f}",
            fontsize=9,
        )
        ax.set_xlabel("player's rating")
        ax.legend(loc="upper left", fontsize=8)
    axes[0].set_ylabel("perceived rating at the end of the game")
    fig.suptitle(f"{title}: estimate against rating ({len(rows)} player-games)", fontsize=10)
    save(fig, "estimate-vs-rating.png")

    fig, ax = plt.subplots(figsize=(8, 4.5))
    xs = [lo + BIN_WIDTH / 2 for lo, _ in report.by_rating]
    for which in ESTIMATORS:
        ys = [f[which].coverage * 100 for _, f in report.by_rating]
        ax.plot(xs, ys, marker="o", color=colours[which], label=labels[which])
    ax.axhline(95, color="black", lw=1, ls="--", label="95 %")
    ax.set_ylim(-2, 102)
    ax.set_xlabel("player's rating (200-point bins)")
    ax.set_ylabel("95 % interval contains the rating (%)")
    ax.set_title(f"{title}: coverage by rating bin", fontsize=10)
    ax.legend(fontsize=8)
    save(fig, "coverage-by-rating.png")

    fig, ax = plt.subplots(figsize=(8, 4.5))
    moves = np.array([r.moves for r in rows])
    for which in ("perceived", "algorithm4"):
        width = np.array([getattr(r, which).high - getattr(r, which).low for r in rows])
        ax.scatter(moves, width, s=3, alpha=0.2, color=colours[which], linewidths=0)
        top = int(moves.max())
        centres = [m for m in range(1, top + 1) if (moves == m).sum() >= 20]
        med = [float(np.median(width[moves == m])) for m in centres]
        ax.plot(centres, med, color=colours[which], lw=2, label=f"{labels[which]}: median")
    ax.set_xlabel("moves played by the player")
    ax.set_ylabel("width of the 95 % interval (rating points)")
    ax.set_title(f"{title}: interval width against moves played", fontsize=10)
    ax.legend(fontsize=8)
    save(fig, "width-vs-moves.png")
    return paths


_SCORES = {"1-0": (1.0, 0.0), "0-1": (0.0, 1.0), "1/2-1/2": (0.5, 0.5)}


# ---------------------------------------------------------------------------
# per player over an event: form and perceived against the results


@dataclass(frozen=True)
class PlayerEvent:
    """One player over his games of one event (those present in the file)."""

    event: str
    player: str
    rating: float
    games: int
    performance: float
    perceived: Estimate
    form: Estimate
    #: the model's label for his rating (None inside the fitted range)
    label: str | None = None
    #: the mean official rating of the event's rated players (all of them)
    event_rating: float = 0.0


@dataclass(frozen=True)
class EventPart:
    """``form`` against the official rating over the player-events of the
    events whose mean rating lies in ``[low, high)``."""

    low: float
    high: float
    player_events: int
    events: int
    mae_rating: float
    mae_form: float
    improvement: float
    improvement_low: float
    improvement_high: float

    def to_json(self) -> dict[str, Any]:
        return {
            "event_rating": [self.low, None if math.isinf(self.high) else self.high],
            "player_events": self.player_events,
            "events": self.events,
            "mae_rating_vs_performance": round(self.mae_rating, 1),
            "mae_form_vs_performance": round(self.mae_form, 1),
            "improvement": round(self.improvement, 1),
            "improvement_90": [round(self.improvement_low, 1), round(self.improvement_high, 1)],
        }


@dataclass
class PlayerEventReport:
    """``form`` and ``perceived`` per player-event against the results-based
    performance, beside the official rating: over every player-event
    (``overall``) and by the events' mean rating (:data:`EVENT_RATING_EDGES`)."""

    players: list[PlayerEvent]
    overall: EventPart
    mae_perceived: float
    form_holds_performance: float
    perceived_holds_performance: float
    by_event_rating: list[EventPart] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        def r(x: float, d: int = 1) -> float:
            return round(x, d)

        whole = self.overall.to_json()
        return {
            "player_events": len(self.players),
            "by_event_rating": [part.to_json() for part in self.by_event_rating],
            "mae_rating_vs_performance": whole["mae_rating_vs_performance"],
            "mae_form_vs_performance": whole["mae_form_vs_performance"],
            "mae_perceived_vs_performance": r(self.mae_perceived),
            "improvement": whole["improvement"],
            "improvement_90": whole["improvement_90"],
            "form_interval_holds_performance": r(self.form_holds_performance, 3),
            "perceived_interval_holds_performance": r(self.perceived_holds_performance, 3),
            "players": [
                {
                    "event": p.event,
                    "player": p.player,
                    "rating": p.rating,
                    "games": p.games,
                    "label": p.label,
                    "event_rating": r(p.event_rating),
                    "performance": r(p.performance),
                    "perceived": {
                        "rating": r(p.perceived.rating),
                        "low": r(p.perceived.low),
                        "high": r(p.perceived.high),
                    },
                    "form": {
                        "rating": r(p.form.rating),
                        "low": r(p.form.low),
                        "high": r(p.form.high),
                    },
                }
                for p in self.players
            ],
        }


#: Fewest games of a player in an event for the per-event figures.
MIN_EVENT_GAMES = 7
#: Bootstrap draws of the improvement's interval.
BOOTSTRAP_DRAWS = 4000
#: Where the events are split by their players' mean rating: elite events
#: (2600 and up) apart, where the official rating is hardest to beat.
EVENT_RATING_EDGES = (2600.0,)


def event_part(
    players: Sequence[PlayerEvent], seed: int, low: float = -math.inf, high: float = math.inf
) -> EventPart:
    """``form`` against the official rating over the ``players`` (at least
    one): how much closer ``form`` is to the results-based performance than
    the rating is (mean absolute difference), with its bootstrap 90 %
    interval over player-events; ``low``/``high`` the events' mean ratings
    the part stands for (the whole scale by default)."""
    ratings = np.array([p.rating for p in players])
    forms = np.array([p.form.rating for p in players])
    perfs = np.array([p.performance for p in players])
    gain = np.abs(ratings - perfs) - np.abs(forms - perfs)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(gain), size=(BOOTSTRAP_DRAWS, len(gain)))
    g_low, g_high = np.quantile(gain[draws].mean(axis=1), [0.05, 0.95])
    return EventPart(
        low=0.0 if math.isinf(low) else low,
        high=high,
        player_events=len(players),
        events=len({p.event for p in players}),
        mae_rating=float(np.abs(ratings - perfs).mean()),
        mae_form=float(np.abs(forms - perfs).mean()),
        improvement=float(gain.mean()),
        improvement_low=float(g_low),
        improvement_high=float(g_high),
    )


def _event_parts(out: Sequence[PlayerEvent], seed: int) -> list[EventPart]:
    edges = (-math.inf, *EVENT_RATING_EDGES, math.inf)
    parts = []
    for low, high in itertools.pairwise(edges):
        sub = [p for p in out if low <= p.event_rating < high]
        if sub:
            parts.append(event_part(sub, seed, low, high))
    return parts


def player_events(
    rows: Sequence[ValidityRow],
    model: PerceivedModel,
    min_games: int = MIN_EVENT_GAMES,
    seed: int = 0,
) -> PlayerEventReport:
    """Each player with ``min_games`` or more rated, finished games in one
    event (Event and Site): his ``form`` and ``perceived`` over all those
    games, his FIDE performance from their results (seed 003), and how much
    closer ``form`` is to that performance than his official rating is (mean
    absolute difference), with a bootstrap 90 % interval over player-events."""
    from livegain.core.elo import performance_rating

    groups: dict[tuple[str, str], list[ValidityRow]] = {}
    field_ratings: dict[str, dict[str, float]] = {}  # event -> player -> rating
    for r in rows:
        field_ratings.setdefault(r.event, {})[r.player] = r.rating
        if r.opponent is not None and r.score is not None:
            groups.setdefault((r.event, r.player), []).append(r)
    out: list[PlayerEvent] = []
    for (event, player), rs in sorted(groups.items()):
        if len(rs) < min_games:
            continue
        rating = rs[0].rating
        games = [(r.moves, r.centi) for r in rs]
        form = model.form(games, rating)
        perceived = model.perceived(games)
        if form is None or perceived is None:
            continue
        perf = performance_rating(
            [r.opponent for r in rs if r.opponent is not None],
            [r.score for r in rs if r.score is not None],
        ).rating
        out.append(
            PlayerEvent(
                event,
                player,
                rating,
                len(rs),
                perf,
                Estimate(perceived.rating, perceived.low, perceived.high),
                Estimate(form.rating, form.low, form.high),
                model.range_label(rating),
                statistics.fmean(field_ratings[event].values()),
            )
        )
    if not out:
        raise ValueError(f"no player with {min_games} or more rated games in one event")
    perfs = np.array([p.performance for p in out])
    perceiveds = np.array([p.perceived.rating for p in out])
    return PlayerEventReport(
        players=out,
        overall=event_part(out, seed),
        mae_perceived=float(np.abs(perceiveds - perfs).mean()),
        form_holds_performance=float(
            np.mean([p.form.low <= p.performance <= p.form.high for p in out])
        ),
        perceived_holds_performance=float(
            np.mean([p.perceived.low <= p.performance <= p.perceived.high for p in out])
        ),
        by_event_rating=_event_parts(out, seed),
    )
