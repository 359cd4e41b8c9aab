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

Move scores are held as integers (hundredths of a point), so a running sum
adds and removes exactly and rollback is exact. Everything here is pure: the
fitted parameters come in as a :class:`PerceivedModel`
(``livegain.calibration.find_perceived_model`` reads the shipped ones).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field

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
    #: the move scores in hundredths of a point, and the bins' first move counts
    _centi: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _froms: tuple[int, ...] = field(init=False, repr=False, compare=False)

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

    def centi_score(self, move_class: int) -> int:
        """The move score of a class in hundredths of a point (an integer)."""
        return self._centi[move_class]

    def bin_for(self, moves: int) -> MoveBin:
        return self.bins[max(0, bisect_right(self._froms, moves) - 1)]

    def estimate(self, moves: int, centi_sum: int) -> CalibratedRating:
        """The estimate after ``moves`` moves whose move scores add up to
        ``centi_sum`` hundredths of a point."""
        if moves <= 0:
            return CalibratedRating(
                self.prior, self.prior_low, self.prior_high, 0, True, None, self.name
            )
        s = centi_sum / (100.0 * moves)
        b = self.bin_for(moves)
        rating = b.intercept + b.slope * s
        return CalibratedRating(
            rating=rating,
            low=rating + b.q_low,
            high=rating + b.q_high,
            moves=moves,
            early=moves < self.min_moves,
            score=s,
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

    def estimate(self) -> CalibratedRating:
        return self.model.estimate(len(self._classes), self._sum)

    def state(self) -> tuple[object, ...]:
        return (self.model.name, tuple(self._classes), self._sum)
