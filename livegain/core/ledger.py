"""One game's scores, gains, histograms and perceived-rating traces, incrementally.

:class:`GameLedger` is fed the evaluation ``s_0`` of the start position
(:meth:`GameLedger.set_start`) and then ``s_k`` after each ply, in order
(:meth:`GameLedger.push`). Each push computes the mover's gain, adds it to that
player's histogram and appends a point to his perceived-rating trace (the
paper's Figure 6). :meth:`GameLedger.pop` and :meth:`GameLedger.truncate`
roll back exactly: after ``truncate(k)`` the ledger equals a fresh ledger fed
``s_0 .. s_k``. All state is integer, so rollback is exact, not approximate.

With a calibrated model each side also has its ``form``: the player's official
rating (:meth:`GameLedger.set_ratings`, from the feed) updated by this game's
moves (:meth:`livegain.core.perceived.MoveProfile.form`), read off the
profile's running integer sum, so it too is O(1) per move and rolls back
exactly. A rating that changes mid-game recomputes the forms of the trace.

Per update the cost is O(1) for the engine's single peak (O(k_e) for a general
engine histogram with k_e bins), independent of the length of the game.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from livegain.core.evaluation import clip
from livegain.core.histogram import GainHistogram
from livegain.core.opening import OpeningPrior
from livegain.core.perceived import CalibratedRating, MoveProfile, PerceivedModel
from livegain.core.rating import (
    HeadToHead,
    PerceivedRating,
    effective_moves,
    head_to_head,
    lag1_from_sums,
    perceived_from_p,
)

Color = Literal["white", "black"]


def color_name(color: bool | str) -> Color:
    """'white'/'black' from a python-chess colour (True = white) or a name."""
    if isinstance(color, bool):
        return "white" if color else "black"
    name = color.lower()
    if name in ("white", "w"):
        return "white"
    if name in ("black", "b"):
        return "black"
    raise ValueError(f"unknown colour {color!r}")


def official_rating(rating: float | None) -> float | None:
    """An official rating as ``form`` takes it: None when unknown (a feed's 0 too)."""
    return float(rating) if rating is not None and rating > 0 else None


@dataclass(frozen=True)
class TracePoint:
    """The mover's ratings right after ``ply`` (1-based): ``perceived`` is
    Algorithm 4's, ``calibrated`` the calibrated estimate (None without a model)
    and ``form`` his official rating updated by his moves so far (None without
    a model with forward curves or without an official rating)."""

    ply: int
    perceived: PerceivedRating
    calibrated: CalibratedRating | None = None
    form: CalibratedRating | None = None


@dataclass(frozen=True)
class LedgerPly:
    """What one pushed ply did."""

    ply: int
    mover: Color
    score_before: int
    score_after: int
    gain: int
    perceived: PerceivedRating
    calibrated: CalibratedRating | None = None
    form: CalibratedRating | None = None

    @property
    def white(self) -> bool:
        return self.mover == "white"


class _Side:
    """One player's histogram, per-move scores (scaled to integers) and trace."""

    __slots__ = ("hist", "lag", "profile", "rating", "s1", "s2", "scores", "trace")

    def __init__(self, model: PerceivedModel | None) -> None:
        self.rating: float | None = None  # the official rating (None: unknown)
        self.hist = GainHistogram()
        self.profile = MoveProfile(model) if model is not None else None
        self.scores: list[int] = []
        self.s1 = 0
        self.s2 = 0
        self.lag = 0
        self.trace: list[TracePoint] = []

    def add(self, g: int, x: int) -> None:
        self.hist.add(g)
        if self.scores:
            self.lag += self.scores[-1] * x
        self.scores.append(x)
        self.s1 += x
        self.s2 += x * x

    def remove(self, g: int) -> None:
        self.hist.remove(g)
        x = self.scores.pop()
        if self.scores:
            self.lag -= self.scores[-1] * x
        self.s1 -= x
        self.s2 -= x * x
        self.trace.pop()
        if self.profile is not None:
            self.profile.pop()

    def form(self) -> CalibratedRating | None:
        return self.profile.form(self.rating) if self.profile is not None else None

    def set_rating(self, rating: float | None) -> bool:
        """Set the official rating; the trace's forms follow (True: it changed)."""
        if rating == self.rating:
            return False
        self.rating = rating
        profile = self.profile
        if profile is not None:
            model, total = profile.model, 0
            for i, c in enumerate(profile.classes):
                total += model.centi_score(c)
                form = model.form([(i + 1, total)], rating)
                self.trace[i] = replace(self.trace[i], form=form)
        return True

    def state(self) -> tuple[object, ...]:
        profile = self.profile.state() if self.profile is not None else None
        return (
            self.rating,
            self.hist.counts(),
            tuple(self.scores),
            self.s1,
            self.s2,
            self.lag,
            self.trace,
            profile,
        )


class GameLedger:
    """Scores ``s_0..s_n`` of one game and everything derived from them.

    With a ``model`` (:class:`~livegain.core.perceived.PerceivedModel`) each
    side also gets the calibrated perceived rating, move by move.
    ``first_ply`` is the game's ply number of the ledger's first ply (a
    ledger started after an unevaluated first move starts at 2); the
    calibrated model classes moves by the game's ply. ``white_rating`` and
    ``black_rating``: the players' official ratings, for ``form``
    (:meth:`set_ratings` changes them). ``opening_moves``: the game starts
    from the standard position and these are its moves (UCI) before the
    ledger's first ply (empty when the ledger starts at ply 1): with the
    moves pushed by :meth:`push` they make the opening whose prior a model
    with an opening table (:mod:`livegain.core.opening`) combines with the
    moves' evidence; None (a game from another position): no opening.
    """

    def __init__(
        self,
        engine_rating: float,
        engine: GainHistogram | None = None,
        first_mover_is_white: bool = True,
        model: PerceivedModel | None = None,
        first_ply: int = 1,
        white_rating: float | None = None,
        black_rating: float | None = None,
        opening_moves: Sequence[str] | None = None,
    ) -> None:
        if engine is not None and engine.n == 0:
            raise ValueError("engine histogram is empty")
        if first_ply < 1:
            raise ValueError("plies are numbered from 1")
        self.engine_rating = float(engine_rating)
        self.engine = engine.copy() if engine is not None else None
        self.first_mover_is_white = first_mover_is_white
        self.model = model
        self.first_ply = first_ply
        self._scores: list[int] = []
        self._gains: list[int] = []
        self._uncounted: set[int] = set()  # plies pushed with counted=False
        # the opening's moves (UCI, None: not known), while an opening table reads them
        self._opening = model.opening if model is not None and opening_moves is not None else None
        if opening_moves is not None and len(opening_moves) != first_ply - 1:
            raise ValueError(
                f"{len(opening_moves)} opening moves for a ledger starting at ply {first_ply}"
            )
        self._before: tuple[str, ...] = tuple(opening_moves or ())
        self._moves: list[str | None] = []
        # the priors read, by side and number of known moves (a prefix of the
        # opening: valid until a pop shortens the moves below it)
        self._priors: dict[tuple[Color, int], OpeningPrior] = {}
        self._sides: dict[Color, _Side] = {"white": _Side(model), "black": _Side(model)}
        self._sides["white"].rating = official_rating(white_rating)
        self._sides["black"].rating = official_rating(black_rating)
        # per-move score x against the engine is x/denom
        self._denom = 2 if self.engine is None else 2 * self.engine.n

    # -- feeding ------------------------------------------------------------
    def set_start(self, score: int) -> None:
        """Set ``s_0``, the start position's score; only before any ply."""
        if self._gains:
            raise ValueError("set_start() after plies were pushed; truncate(0) first")
        self._scores = [clip(score)]

    @property
    def start_known(self) -> bool:
        return bool(self._scores)

    def mover_of(self, ply: int) -> Color:
        """Who plays ply ``ply`` (1-based)."""
        if ply < 1:
            raise ValueError("plies are numbered from 1")
        white = self.first_mover_is_white == (ply % 2 == 1)
        return "white" if white else "black"

    def push(self, score_after: int, *, counted: bool = True, move: str | None = None) -> LedgerPly:
        """Add the next ply, whose resulting position scored ``score_after``;
        ``move`` is the ply's move in UCI (the opening prior reads it; None:
        unknown, and the opening is read up to the ply before).

        ``counted=False``: a ply whose gain means nothing (an illegal move that
        stood over the board): it moves the reference score on, and adds
        nothing to the mover's histogram, scores or trace (its gain reads 0)."""
        if not self._scores:
            raise ValueError("the start position's score is not set")
        before = self._scores[-1]
        after = clip(score_after)
        ply = len(self._gains) + 1
        mover = self.mover_of(ply)
        delta = after - before
        g = delta if mover == "white" else -delta
        side = self._sides[mover]
        if self._opening is not None and len(self._before) + len(self._moves) < self._opening.plies:
            self._moves.append(move)
        if not counted:
            self._uncounted.add(ply)
            self._scores.append(after)
            self._gains.append(0)
            return LedgerPly(ply, mover, before, after, 0, self._perceived(side), None)
        side.add(g, self._score2(g))
        calibrated = form = None
        if side.profile is not None:
            sign = 1 if mover == "white" else -1
            side.profile.push(self.first_ply + ply - 1, sign * before, sign * after)
            calibrated = side.profile.estimate(self._opening_prior(mover))
            form = side.form()
        self._scores.append(after)
        self._gains.append(g)
        perceived = self._perceived(side)
        side.trace.append(TracePoint(ply, perceived, calibrated, form))
        return LedgerPly(ply, mover, before, after, g, perceived, calibrated, form)

    def pop(self) -> LedgerPly:
        """Undo the last ply; returns what it had been."""
        if not self._gains:
            raise ValueError("no ply to pop")
        ply = len(self._gains)
        mover = self.mover_of(ply)
        side = self._sides[mover]
        if len(self._moves) >= ply:
            del self._moves[ply - 1 :]
            self._priors = {k: v for k, v in self._priors.items() if k[1] <= len(self._moves)}
        if ply in self._uncounted:
            self._uncounted.discard(ply)
            self._gains.pop()
            after = self._scores.pop()
            return LedgerPly(ply, mover, self._scores[-1], after, 0, self._perceived(side), None)
        last = side.trace[-1]
        g = self._gains.pop()
        after = self._scores.pop()
        side.remove(g)
        return LedgerPly(
            ply, mover, self._scores[-1], after, g, last.perceived, last.calibrated, last.form
        )

    def truncate(self, plies: int) -> None:
        """Keep the first ``plies`` plies (0 keeps only the start score)."""
        if plies < 0 or plies > len(self._gains):
            raise ValueError(f"cannot truncate {len(self._gains)} plies to {plies}")
        while len(self._gains) > plies:
            self.pop()

    def clear(self) -> None:
        """Forget everything, the start score included."""
        self.truncate(0)
        self._scores = []

    # -- views ---------------------------------------------------------------
    @property
    def plies(self) -> int:
        return len(self._gains)

    @property
    def scores(self) -> list[int]:
        return list(self._scores)

    @property
    def gains(self) -> list[int]:
        return list(self._gains)

    @property
    def white(self) -> GainHistogram:
        return self._sides["white"].hist

    @property
    def black(self) -> GainHistogram:
        return self._sides["black"].hist

    def histogram(self, color: bool | str) -> GainHistogram:
        return self._sides[color_name(color)].hist

    @property
    def white_trace(self) -> list[TracePoint]:
        return list(self._sides["white"].trace)

    @property
    def black_trace(self) -> list[TracePoint]:
        return list(self._sides["black"].trace)

    def trace(self, color: bool | str) -> list[TracePoint]:
        return list(self._sides[color_name(color)].trace)

    def perceived(self, color: bool | str) -> PerceivedRating:
        """The player's current perceived rating (Algorithm 4)."""
        return self._perceived(self._sides[color_name(color)])

    def calibrated(self, color: bool | str) -> CalibratedRating | None:
        """The player's calibrated perceived rating (None without a model)."""
        name = color_name(color)
        profile = self._sides[name].profile
        return profile.estimate(self._opening_prior(name)) if profile is not None else None

    def form(self, color: bool | str) -> CalibratedRating | None:
        """The player's official rating updated by his moves so far (None
        without a model with forward curves or without a rating)."""
        return self._sides[color_name(color)].form()

    def rating(self, color: bool | str) -> float | None:
        """The official rating ``form`` starts from (None: unknown)."""
        return self._sides[color_name(color)].rating

    def set_ratings(self, white: float | None, black: float | None) -> bool:
        """The players' official ratings (None or 0: unknown); the forms of the
        traces follow. True when either changed."""
        w = self._sides["white"].set_rating(official_rating(white))
        b = self._sides["black"].set_rating(official_rating(black))
        return w or b

    def profile_sum(self, color: bool | str) -> tuple[int, int]:
        """(moves, sum of move scores in hundredths of a point) of the
        player's calibrated profile: what the perceived model combines over
        several games; (0, 0) without a model."""
        profile = self._sides[color_name(color)].profile
        return (profile.moves, profile.centi_sum) if profile is not None else (0, 0)

    def move_classes(self, color: bool | str) -> list[int]:
        """The classes of the player's moves (empty without a model)."""
        profile = self._sides[color_name(color)].profile
        return profile.classes if profile is not None else []

    def score_sum(self, color: bool | str) -> tuple[int, int]:
        """(sum of per-move scores scaled by ``denom``, denom) of one player."""
        return self._sides[color_name(color)].s1, self._denom

    def effective_moves(self, color: bool | str) -> float:
        side = self._sides[color_name(color)]
        return self._n_eff(side)

    def head_to_head(self) -> HeadToHead:
        """Algorithm 1, White against Black."""
        return head_to_head(self.white, self.black)

    def state(self) -> tuple[object, ...]:
        """Everything the ledger holds, for equality checks."""
        return (
            self.engine_rating,
            self.first_mover_is_white,
            self.first_ply,
            tuple(self._scores),
            tuple(self._gains),
            tuple(sorted(self._uncounted)),
            self._before,
            tuple(self._moves),
            self._sides["white"].state(),
            self._sides["black"].state(),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GameLedger):
            return NotImplemented
        return self.state() == other.state() and self.engine == other.engine

    __hash__ = None  # type: ignore[assignment]

    # -- internals -------------------------------------------------------------
    def _opening_prior(self, color: Color) -> OpeningPrior | None:
        """The opening prior of ``color``'s player from the moves known so
        far (None without an opening table)."""
        if self._opening is None:
            return None
        n = self._moves.index(None) if None in self._moves else len(self._moves)
        found = self._priors.get((color, n))
        if found is None:
            known = [*self._before, *(m for m in self._moves[:n] if m is not None)]
            found = self._opening.prior(color == "white", True, known)
            self._priors[(color, n)] = found
        return found

    def _score2(self, g: int) -> int:
        if self.engine is None:
            return 2 if g > 0 else (1 if g == 0 else 0)
        return self.engine.placement2(g)

    def _n_eff(self, side: _Side) -> float:
        n = len(side.scores)
        if n == 0:
            return 0.0
        rho = lag1_from_sums(
            n,
            float(side.s1),
            float(side.s2),
            float(side.lag),
            float(side.scores[0]),
            float(side.scores[-1]),
        )
        return effective_moves(n, rho)

    def _perceived(self, side: _Side) -> PerceivedRating:
        n = len(side.scores)
        if n == 0:
            return perceived_from_p(0.5, 0, self.engine_rating)
        p = side.s1 / (n * self._denom)
        return perceived_from_p(p, n, self.engine_rating, n_eff=self._n_eff(side))
