"""The calibrated perceived rating: what the audience sees.

Algorithm 4 (``core/rating.py``) compares each move with the engine's, so most
moves tie, the expected score stays near 1/2 and every player is pulled toward
the engine's rating. Measured on rated games that number is biased by hundreds
of points and its interval almost never holds the player's rating
(docs/validity.md). This module holds the estimate that replaces it on screen,
fitted on rated games and validated on games it was not fitted to.

The model, in two steps (docs/maths.md, "The calibrated perceived rating"):

1. **Every move gets a class** from three things known when it is played: the
   phase of the game (by ply), the mover's evaluation before the move (in
   bands, centipawns from the mover's side, clipped at +/-1000) and the
   centipawns it lost (``max(0, before - after)``, in bands). Each class ``c``
   carries a *move score* ``m_c`` in rating points, fitted by least squares so
   that the mean of a game's move scores predicts its player's rating.
2. **The mean move score ``s`` after ``n`` moves** is mapped to a rating by a
   line fitted for that number of moves, ``rating = a_n + b_n s``: after one
   move ``b_n`` is near 0 (one move says little, the estimate is the
   population's), after 30 moves it is near 1. The 95 % interval is the line's
   2.5 % and 97.5 % residual quantiles for that number of moves, measured on
   rated games, so it says how far ratings really fall from the estimate.

Two audience-facing estimates are read from the same mean move score ``s``
through a *forward* line per number of moves: for a player of true rating
``R`` the mean move score is ``alpha_n + beta_n R`` plus a residual of spread
``sigma_n(R) = sigma0_n + sigma1_n R`` (fitted on rated games the move scores
were not fitted to), whose standardised 2.5 % and 97.5 % quantiles are
``q_low``, ``q_high``:

- ``perceived`` (from the moves alone): its point is the population-shrunk
  line of step 2 above (with a model's opening table, the moves' evidence
  combined with the player's opening prior instead,
  :mod:`livegain.core.opening`); its 95 % interval is the *confidence belt* of the
  forward line, every
  ``R`` with ``q_low <= (s - alpha_n - beta_n R) / sigma_n(R) <= q_high``,
  so it holds a player's true rating 95 % of the time at every rating level,
  not only over the population;
- ``form`` (the official rating updated by the moves): the posterior of the
  player's performance in this game (Elo's per-game performance, prior
  ``N(rating, tau^2)`` with ``tau`` 200, seed 004) given ``u = (s -
  alpha_n)/beta_n``, whose variance beyond ``tau^2`` is the moves' noise.

No interval of ``perceived`` reaches below the scale's lowest rating (FIDE
1400, lichess 400) or above the highest any player has had, rounded up
(FIDE 2900, lichess 3300). A rating outside the fitted range is labelled:
``extrapolated`` above it (and the interval widened by the distance beyond
the range on both sides), and below it the model's ``below_label`` (``not
validated on FIDE games`` for a FIDE-scale model, whose data start at 2000).

Move scores are held as integers (hundredths of a point), so a running sum
adds and removes exactly and rollback is exact. Everything here is pure: the
fitted parameters come in as a :class:`PerceivedModel`
(``livegain.models.perceived.find_perceived_model`` reads the shipped ones).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from livegain.core.opening import OpeningPrior, OpeningTable

#: Evaluations are clipped to +/- this many centipawns before classing a move.
CLASS_CLIP_CP = 1000
#: Default band edges (see :class:`PerceivedModel`).
DEFAULT_PHASE_EDGES: tuple[int, ...] = (21, 61)
DEFAULT_EVAL_EDGES: tuple[int, ...] = (-500, -200, -50, 50, 200, 500)
DEFAULT_LOSS_EDGES: tuple[int, ...] = (1, 11, 31, 61, 101, 201, 401)
#: Default lower ends of the move-count bins (each bin has its own line).
DEFAULT_MOVE_BINS: tuple[int, ...] = (1, 2, 3, 4, 5, 7, 10, 13, 16, 21, 26, 31, 41, 51, 71)


@dataclass(frozen=True)
class MoveClasses:
    """How a move is classed: phase by ply, evaluation band, loss band.

    ``phase_edges``: a ply below the first edge is phase 0, and so on
    (``bisect_right``). ``eval_edges``: the mover's clipped evaluation before
    the move, ``bisect_left`` (so an evaluation equal to an edge falls in the
    lower band). ``loss_edges``: centipawns lost, ``bisect_right`` (0 lost is
    band 0 with the default edges).
    """

    phase_edges: tuple[int, ...] = DEFAULT_PHASE_EDGES
    eval_edges: tuple[int, ...] = DEFAULT_EVAL_EDGES
    loss_edges: tuple[int, ...] = DEFAULT_LOSS_EDGES
    clip_cp: int = CLASS_CLIP_CP

    @property
    def count(self) -> int:
        return (len(self.phase_edges) + 1) * (len(self.eval_edges) + 1) * (len(self.loss_edges) + 1)

    def of(self, ply: int, before: int, after: int) -> int:
        """The class of a move at ``ply`` (1-based) whose position went from
        ``before`` to ``after`` centipawns, both from the mover's side."""
        c = self.clip_cp
        b = max(-c, min(c, before))
        a = max(-c, min(c, after))
        loss = max(0, b - a)
        phase = bisect_right(self.phase_edges, ply)
        band = bisect_left(self.eval_edges, b)
        lost = bisect_right(self.loss_edges, loss)
        return (phase * (len(self.eval_edges) + 1) + band) * (len(self.loss_edges) + 1) + lost


@dataclass(frozen=True)
class MoveBin:
    """The line and residual quantiles for ``moves_from`` moves and more."""

    moves_from: int
    intercept: float
    slope: float
    q_low: float
    q_high: float


def scale_of_tags(tags: Mapping[str, str]) -> str:
    """The rating scale of a PGN's ``WhiteElo``/``BlackElo``: ``lichess`` for
    a game whose Site is a URL (a game played on a server: the nearer of the
    two fitted scales), else ``fide`` (over the board)."""
    site = tags.get("Site", "").strip()
    return "lichess" if site.startswith(("http://", "https://")) else "fide"


@dataclass(frozen=True)
class ForwardBin:
    """The forward curve for ``moves_from`` moves and more.

    The mean move score of a player of rating ``R`` is ``mean(R) = alpha +
    beta d + gamma d^2`` with ``d = R - center`` between ``low`` and ``high``
    (the fitted ratings' 1 % and 99 % quantiles), continued outside them by
    straight lines with the curve's slope at the ends (at least beta/4, so it
    always rises); the residual's standard deviation is ``sigma0 + sigma1 R``
    (held at its value at the ends outside them);
    ``q_low`` and ``q_high`` are the 2.5 % / 97.5 % quantiles of the residual
    divided by it.
    """

    moves_from: int
    alpha: float
    beta: float
    gamma: float
    center: float
    low: float
    high: float
    sigma0: float
    sigma1: float
    q_low: float
    q_high: float

    def _quadratic(self, rating: float) -> tuple[float, float]:
        d = rating - self.center
        return (
            self.alpha + self.beta * d + self.gamma * d * d,
            max(0.25 * self.beta, self.beta + 2.0 * self.gamma * d),
        )

    def mean(self, rating: float) -> float:
        edge = min(self.high, max(self.low, rating))
        value, slope = self._quadratic(edge)
        return value + slope * (rating - edge)

    def slope(self, rating: float) -> float:
        return self._quadratic(min(self.high, max(self.low, rating)))[1]

    def sigma(self, rating: float) -> float:
        """The residual's spread, constant outside the fitted ratings."""
        edge = min(self.high, max(self.low, rating))
        return max(1e-6, self.sigma0 + self.sigma1 * edge)

    def _gap(self, s: float, q: float, rating: float) -> float:
        """``s - mean(R) - q sigma(R)``: falls as ``R`` rises."""
        return s - self.mean(rating) - q * self.sigma(rating)

    def _solve(self, s: float, q: float, largest: bool = False) -> float:
        """The rating where ``s`` lies ``q`` spreads above the mean, in closed
        form: on the straight lines outside the fitted ratings, else a root
        of the quadratic between them (a few microseconds per solve). Where
        the gap ``s - mean(R) - q sigma(R)`` is not monotone (a spread that
        grows faster than the curve, after a move or two) the smallest such
        rating, or the ``largest``: the belt's ends."""
        low, high = self.low, self.high
        at_low, at_high = self._gap(s, q, low), self._gap(s, q, high)
        below = low + at_low / self._quadratic(low)[1] if at_low <= 0.0 else None
        above = high + at_high / self._quadratic(high)[1] if at_high >= 0.0 else None
        if not largest and below is not None:
            return below
        if largest and above is not None:
            return above
        # between: gamma d^2 + (beta + q sigma1) d + (alpha + q sigma0 + q sigma1 c - s) = 0
        a = self.gamma
        b = self.beta + q * self.sigma1
        c = self.alpha + q * self.sigma0 + q * self.sigma1 * self.center - s
        roots: list[float] = []
        if abs(a) < 1e-15:
            if b != 0.0:
                roots = [-c / b]
        else:
            disc = b * b - 4.0 * a * c
            if disc >= 0.0:
                root = math.sqrt(disc)
                roots = [(-b - root) / (2.0 * a), (-b + root) / (2.0 * a)]
        found = sorted(self.center + d for d in roots if low <= self.center + d <= high)
        if found:
            return found[-1] if largest else found[0]
        for other in (above, below):
            if other is not None:
                return other
        lo, hi = low, high  # no sign change found: bisection between the ends
        for _ in range(40):
            mid = 0.5 * (lo + hi)
            if self._gap(s, q, mid) > 0.0:
                lo = mid
            else:
                hi = mid
        return 0.5 * (lo + hi)

    def level(self, s: float) -> float:
        """The rating whose mean move score is ``s``."""
        return self._solve(s, 0.0)

    def belt(self, s: float) -> tuple[float, float]:
        """Every rating whose central 95 % of mean move scores holds ``s``."""
        return (self._solve(s, self.q_high), self._solve(s, self.q_low, largest=True))


#: Elo's standard deviation of one player's performance in one game (seed
#: 004): the prior spread of ``form`` around the official rating.
FORM_TAU = 200.0
#: z of a two-sided 95 % normal interval.
Z95 = 1.959964
#: The share of a game's evidence variance always left to the moves' noise.
_MIN_NOISE_SHARE = 0.1
EXTRAPOLATED = "extrapolated"
#: The lowest rating each scale has (FIDE's floor is 1400; lichess's ratings
#: start near 400) and the highest any player has had, rounded up (FIDE
#: 2882; lichess rapid about 3200): no interval of ``perceived`` (a rating,
#: not a performance) reaches beyond them.
SCALE_FLOOR: dict[str, float] = {"fide": 1400.0, "lichess": 400.0}
SCALE_CEILING: dict[str, float] = {"fide": 2900.0, "lichess": 3300.0}


def _within_scale(scale: str, low: float, high: float) -> tuple[float, float]:
    low = max(low, SCALE_FLOOR.get(scale, -math.inf))
    high = min(high, SCALE_CEILING.get(scale, math.inf))
    return (min(low, high), max(low, high))


@dataclass(frozen=True)
class Evidence:
    """What one game's moves say about a rating level: ``u`` (the forward
    line read backwards) with variance ``var``; ``belt`` the 95 % confidence
    belt (low, high) of the true rating."""

    u: float
    var: float
    belt: tuple[float, float]


@dataclass(frozen=True)
class PerceivedModel:
    """Fitted parameters of the calibrated estimate, with their provenance.

    ``move_scores[c]`` is the move score of class ``c`` in rating points;
    ``bins`` (sorted by ``moves_from``, the first from 1) the per-move-count
    lines; ``prior`` the rating before any move (the calibration games'
    median) with ``prior_low``/``prior_high`` its 2.5 % and 97.5 % quantiles;
    ``rating_low``/``rating_high`` the 1 % and 99 % quantiles of the ratings it
    was fitted to: the range where it is validated (a player rated outside it
    is measured on a scale that has few players like him);
    ``min_moves``: fewer moves than this are too few to show a number.
    """

    name: str
    classes: MoveClasses
    move_scores: tuple[float, ...]
    bins: tuple[MoveBin, ...]
    prior: float
    prior_low: float
    prior_high: float
    min_moves: int = 5
    rating_low: float | None = None
    rating_high: float | None = None
    provenance: dict[str, str] = field(default_factory=dict, compare=False)
    #: the forward lines (empty: a model fitted before them; no belt, no form)
    forward: tuple[ForwardBin, ...] = ()
    #: the rating scale: "fide" (over the board) or "lichess" (online)
    scale: str = "lichess"
    #: the population the point estimate shrinks to: mean and SD of the
    #: calibration ratings
    pop_mean: float | None = None
    pop_sd: float | None = None
    #: the label of a rating below the fitted range
    below_label: str = EXTRAPOLATED
    tau: float = FORM_TAU
    #: the opening table whose prior the point combines with the moves'
    #: evidence (None: the point is the move-count line's)
    opening: OpeningTable | None = field(default=None, compare=False)
    #: the move scores in hundredths of a point, and the bins' first move counts
    _centi: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _froms: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _forward_froms: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(self.move_scores) != self.classes.count:
            raise ValueError(
                f"model {self.name!r}: {len(self.move_scores)} move scores for "
                f"{self.classes.count} classes"
            )
        if not self.bins or self.bins[0].moves_from != 1:
            raise ValueError(f"model {self.name!r}: move-count bins must start at 1")
        froms = [b.moves_from for b in self.bins]
        if froms != sorted(set(froms)):
            raise ValueError(f"model {self.name!r}: move-count bins must increase")
        object.__setattr__(self, "_centi", tuple(round(m * 100) for m in self.move_scores))
        object.__setattr__(self, "_froms", tuple(froms))
        ffroms = [b.moves_from for b in self.forward]
        if self.forward and (ffroms[0] != 1 or ffroms != sorted(set(ffroms))):
            raise ValueError(f"model {self.name!r}: forward bins must start at 1 and increase")
        if any(b.beta <= 0 for b in self.forward):
            raise ValueError(f"model {self.name!r}: forward slopes must be positive")
        object.__setattr__(self, "_forward_froms", tuple(ffroms))

    def centi_score(self, move_class: int) -> int:
        """The move score of a class in hundredths of a point (an integer)."""
        return self._centi[move_class]

    def bin_for(self, moves: int) -> MoveBin:
        return self.bins[max(0, bisect_right(self._froms, moves) - 1)]

    def estimate(
        self, moves: int, centi_sum: int, opening: OpeningPrior | None = None
    ) -> CalibratedRating:
        """The estimate after ``moves`` moves whose move scores add up to
        ``centi_sum`` hundredths of a point.

        With an ``opening`` prior (:mod:`livegain.core.opening`) the point is
        the line's, moved from the population's centre toward the opening's
        by the prior's share of the precision against the moves' evidence
        (variance ``var``): ``line + w (opening - pop_mean)`` with ``w =
        (1/sd^2) / (1/sd^2 + 1/var)``. Were the line exactly the posterior
        under the population prior, this would be the posterior under the
        opening's; it keeps the line's calibration on rated games (which the
        evidence alone lacks, most where the evaluations are not those the
        model was fitted on). The interval is the same confidence belt, from
        the moves alone."""
        if moves <= 0:
            return CalibratedRating(
                self.prior, self.prior_low, self.prior_high, 0, True, None, self.name
            )
        s = centi_sum / (100.0 * moves)
        b = self.bin_for(moves)
        rating = b.intercept + b.slope * s
        low, high = rating + b.q_low, rating + b.q_high
        ev = self.evidence(moves, centi_sum)
        if ev is not None:
            if opening is not None and self.pop_mean is not None:
                w_prior, w_moves = 1.0 / opening.sd**2, 1.0 / ev.var
                rating += (opening.rating - self.pop_mean) * w_prior / (w_prior + w_moves)
            low, high = _within_scale(self.scale, *ev.belt)
            rating = min(high, max(low, rating))
        return CalibratedRating(
            rating=rating,
            low=low,
            high=high,
            moves=moves,
            early=moves < self.min_moves,
            score=s,
            model=self.name,
        )

    def evidence(self, moves: int, centi_sum: int, at: float | None = None) -> Evidence | None:
        """What ``moves`` moves with this sum of move scores say about a level
        (None before any move or without forward lines): ``u`` read off the
        forward curve, linearised at the rating ``at`` when given (``form``:
        the curve's slope and spread there), else at ``u`` itself."""
        if moves <= 0 or not self.forward:
            return None
        s = centi_sum / (100.0 * moves)
        f = self.forward[max(0, bisect_right(self._forward_froms, moves) - 1)]
        if at is None:
            u = f.level(s)
            return Evidence(u, (f.sigma(u) / f.slope(u)) ** 2, f.belt(s))
        slope = f.slope(at)
        return Evidence(at + (s - f.mean(at)) / slope, (f.sigma(at) / slope) ** 2, f.belt(s))

    def range_label(self, rating: float | None) -> str | None:
        """``extrapolated`` above the fitted range, the model's below-label
        under it, None inside it (or when unknown)."""
        if rating is None or self.rating_low is None or self.rating_high is None:
            return None
        if rating > self.rating_high:
            return EXTRAPOLATED
        if rating < self.rating_low:
            return self.below_label
        return None

    def _beyond(self, rating: float | None) -> float:
        if rating is None or self.rating_low is None or self.rating_high is None:
            return 0.0
        return max(0.0, rating - self.rating_high, self.rating_low - rating)

    def perceived(self, games: Sequence[tuple[int, int]]) -> CalibratedRating | None:
        """The perceived rating over several games (``(moves, centi_sum)``
        each; one game gives :meth:`estimate`): the games' evidence combined
        by inverse variance, its point shrunk to the population
        (``N(pop_mean, pop_sd^2)``), its interval the combined belt (normal).
        None without forward lines or moves."""
        played = [(m, c) for m, c in games if m > 0]
        if len(played) == 1:
            return self.estimate(*played[0])
        evs = [e for e in (self.evidence(m, c) for m, c in played) if e is not None]
        if not evs or self.pop_mean is None or self.pop_sd is None:
            return None
        precision = sum(1.0 / e.var for e in evs)
        mean = sum(e.u / e.var for e in evs) / precision
        half = Z95 / math.sqrt(precision)
        prior_precision = 1.0 / self.pop_sd**2
        point = (self.pop_mean * prior_precision + mean * precision) / (prior_precision + precision)
        low, high = _within_scale(self.scale, mean - half, mean + half)
        moves = sum(m for m, _c in played)
        return CalibratedRating(
            rating=min(high, max(low, point)),
            low=low,
            high=high,
            moves=moves,
            early=moves < self.min_moves,
            score=sum(c for _m, c in played) / (100.0 * moves),
            model=self.name,
        )

    def form(
        self, games: Sequence[tuple[int, int]], rating: float | None
    ) -> CalibratedRating | None:
        """The official ``rating`` updated by the moves of one or more games
        (``(moves, centi_sum)`` each): the posterior of the player's mean
        performance over them, prior ``N(rating, tau^2 / G)`` for ``G``
        games, with its 95 % interval; widened beyond the fitted range
        (:meth:`range_label`). None without a rating or forward lines."""
        if rating is None or not self.forward:
            return None
        played = [(m, c) for m, c in games if m > 0]
        prior_var = self.tau**2 / max(1, len(played))
        evs = [e for e in (self.evidence(m, c, rating) for m, c in played) if e is not None]
        if evs:
            precision = sum(1.0 / e.var for e in evs)
            mean = sum(e.u / e.var for e in evs) / precision
            total = 1.0 / precision
            noise = max(total - prior_var, _MIN_NOISE_SHARE * total)
            post_var = 1.0 / (1.0 / prior_var + 1.0 / noise)
            point = post_var * (rating / prior_var + mean / noise)
        else:
            post_var, point = prior_var, rating
        half = Z95 * math.sqrt(post_var) + self._beyond(rating)
        moves = sum(m for m, _c in played)
        return CalibratedRating(
            rating=point,
            low=point - half,
            high=point + half,
            moves=moves,
            early=moves < self.min_moves,
            score=sum(c for _m, c in played) / (100.0 * moves) if moves else None,
            model=self.name,
        )

    def covers(self, rating: float | None) -> bool | None:
        """Whether an official ``rating`` lies in the validated range (None
        when the rating or the range is unknown)."""
        if rating is None or self.rating_low is None or self.rating_high is None:
            return None
        return self.rating_low <= rating <= self.rating_high

    def estimate_moves(self, classes: Sequence[int]) -> CalibratedRating:
        """The estimate from a list of move classes."""
        return self.estimate(len(classes), sum(self.centi_score(c) for c in classes))


@dataclass(frozen=True)
class CalibratedRating:
    """The calibrated perceived rating with its 95 % interval.

    ``early`` is true while there are fewer moves than the model's
    ``min_moves``: the number is then little more than the population's
    median and should not be shown as a measurement. ``score`` is the mean
    move score (None before any move); ``model`` names the fitted model.
    """

    rating: float
    low: float
    high: float
    moves: int
    early: bool
    score: float | None
    model: str


class MoveProfile:
    """One player's moves in one game as classes, with an exact running sum.

    ``push``/``pop`` add and remove the last move; the sum of move scores is
    an integer, so any sequence of pushes and pops leaves the same state as
    pushing the remaining moves afresh.
    """

    __slots__ = ("_classes", "_sum", "model")

    def __init__(self, model: PerceivedModel) -> None:
        self.model = model
        self._classes: list[int] = []
        self._sum = 0

    def push(self, ply: int, before: int, after: int) -> int:
        """Add a move (mover's-side scores); returns its class."""
        c = self.model.classes.of(ply, before, after)
        self._classes.append(c)
        self._sum += self.model.centi_score(c)
        return c

    def pop(self) -> int:
        c = self._classes.pop()
        self._sum -= self.model.centi_score(c)
        return c

    @property
    def moves(self) -> int:
        return len(self._classes)

    @property
    def classes(self) -> list[int]:
        return list(self._classes)

    def estimate(self, opening: OpeningPrior | None = None) -> CalibratedRating:
        """The estimate so far (with the player's ``opening`` prior, if any)."""
        return self.model.estimate(len(self._classes), self._sum, opening)

    @property
    def centi_sum(self) -> int:
        """The sum of the move scores so far, in hundredths of a point."""
        return self._sum

    def form(self, rating: float | None) -> CalibratedRating | None:
        """``form`` for this game so far (None without a rating)."""
        return self.model.form([(len(self._classes), self._sum)], rating)

    def state(self) -> tuple[object, ...]:
        return (self.model.name, tuple(self._classes), self._sum)
