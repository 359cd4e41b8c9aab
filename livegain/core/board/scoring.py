"""A board's running score: the ledger (:mod:`livegain.core.ledger`) over the
contiguous evaluated prefix of its game, which gains count, and what is read
off it (both perceived ratings, head-to-head, form and accuracy), each kept
until the ledger changes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from livegain.core.accuracy import (
    NO_ACCURACY,
    AccuracyTally,
    GameAccuracy,
    phases_from_fens,
)
from livegain.core.board.updates import Color
from livegain.core.histogram import GainHistogram
from livegain.core.ledger import GameLedger, LedgerPly, TracePoint
from livegain.core.perceived import CalibratedRating, PerceivedModel
from livegain.core.rating import HeadToHead, PerceivedRating


@dataclass(frozen=True)
class Ratings:
    """What the ledger says of both players now (None: the player has not moved)."""

    white: PerceivedRating | None
    black: PerceivedRating | None
    head_to_head: HeadToHead | None
    white_calibrated: CalibratedRating | None
    black_calibrated: CalibratedRating | None
    white_form: CalibratedRating | None
    black_form: CalibratedRating | None


class BoardScoring:
    """The ledger of one board's game from its start position (ply 0), so that
    its first ply is the board's ply 1: plies count from the first move of the
    move list, as in ``livegain analyze`` (whose figures the live ones must equal)."""

    def __init__(
        self,
        engine_rating: float,
        engine: GainHistogram | None,
        model: PerceivedModel | None,
        first_mover_is_white: bool,
        white_rating: float | None,
        black_rating: float | None,
        standard_start: bool = False,
    ) -> None:
        # the board's ledger starts at its ply 1: an opening has no move before it
        self.ledger = GameLedger(
            engine_rating,
            engine,
            first_mover_is_white=first_mover_is_white,
            model=model,
            first_ply=1,
            white_rating=white_rating,
            black_rating=black_rating,
            opening_moves=() if standard_start else None,
        )
        self.model = model
        self.plies = -1  # the evaluated prefix in the ledger; -1: start score not set
        self.version = 0  # bumped on every change of the ledger
        self.gains: list[int] = []  # the ledger's, mirrored (reading them copies them)
        self.uncounted: set[int] = set()  # plies whose gain is not counted
        self._ratings: tuple[int, Ratings] | None = None
        self._accuracy: tuple[int, GameAccuracy] | None = None
        self._tally: AccuracyTally | None = None  # None: built again from the ledger

    def start(self, cp: int) -> None:
        """The start position's score: the prefix is ply 0."""
        self.ledger.set_start(cp)
        self.plies = 0
        self._tally = None
        self.version += 1

    def push(self, score: int, counted: bool, move: str | None = None) -> LedgerPly:
        """The next ply's score (``counted``: its gain counts for its mover;
        ``move``: the ply in UCI, which the opening prior reads)."""
        lp = self.ledger.push(score, counted=counted, move=move)
        self.gains.append(lp.gain)
        self.plies += 1
        if not counted:
            self.uncounted.add(self.plies)
        self.version += 1
        return lp

    def truncate(self, plies: int) -> None:
        """The game was cut back to ``plies`` plies: so is the prefix (exact rollback)."""
        self.uncounted = {k for k in self.uncounted if k <= plies}
        if self.plies > plies:
            self._tally = None
            self.ledger.truncate(plies)
            del self.gains[plies:]
            self.plies = plies
            self.version += 1

    def set_ratings(self, white: float | None, black: float | None) -> None:
        """The players' official ratings changed (form reads them)."""
        if self.ledger.set_ratings(white, black):
            self.version += 1

    def ratings(self) -> Ratings:
        """Both perceived ratings (Algorithm 4 and calibrated), head-to-head and
        form, worked out again only when the ledger changed."""
        if self._ratings is None or self._ratings[0] != self.version:
            led = self.ledger
            white, black = led.white.n > 0, led.black.n > 0
            value = Ratings(
                led.perceived("white") if white else None,
                led.perceived("black") if black else None,
                led.head_to_head() if white and black else None,
                led.calibrated("white") if white else None,
                led.calibrated("black") if black else None,
                led.form("white") if white else None,
                led.form("black") if black else None,
            )
            self._ratings = (self.version, value)
        return self._ratings[1]

    def accuracy(self, fen_at: Callable[[int], str]) -> GameAccuracy:
        """Both players' accuracies (lichess's method, :mod:`livegain.core.accuracy`)
        over the prefix, overall and by phase (``fen_at``: the game's positions);
        a running tally takes the plies added since it was last read, and a
        rollback starts it again from the ledger's scores."""
        if self._accuracy is None or self._accuracy[0] != self.version:
            n = max(self.plies, 0)
            if n == 0:
                value = GameAccuracy(NO_ACCURACY, NO_ACCURACY)
            else:
                scores = self.ledger.scores
                tally = self._tally
                if tally is None or tally.plies > n:
                    tally = self._tally = AccuracyTally(scores[0], self.ledger.first_mover_is_white)
                new = range(tally.plies + 1, n + 1)
                phases = phases_from_fens([fen_at(k - 1) for k in new], first_ply=new.start)
                for k, phase in zip(new, phases, strict=True):
                    tally.push(scores[k], phase, k not in self.uncounted)
                value = tally.result()
            self._accuracy = (self.version, value)
        return self._accuracy[1]

    # -- what the players' numbers are now -----------------------------------

    def perceived(self, color: Color) -> PerceivedRating | None:
        """Algorithm 4 over the prefix; None before the player's first move."""
        r = self.ratings()
        return r.white if color == "white" else r.black

    def calibrated(self, color: Color) -> CalibratedRating | None:
        """The calibrated estimate over the prefix; None without a model or
        before the player's first move."""
        r = self.ratings()
        return r.white_calibrated if color == "white" else r.black_calibrated

    def form(self, color: Color) -> CalibratedRating | None:
        """The player's official rating updated by his moves over the prefix;
        None without a rating, without a model with forward curves, or before
        his first move."""
        r = self.ratings()
        return r.white_form if color == "white" else r.black_form

    def head_to_head(self) -> HeadToHead | None:
        """Algorithm 1, White against Black; None until both have moved."""
        return self.ratings().head_to_head

    def trace(self, color: Color) -> list[TracePoint]:
        return self.ledger.trace(color)

    def profile_sum(self, color: Color) -> tuple[int, int]:
        """(moves, sum of move scores in hundredths) of the player's calibrated
        profile in this game: what a model combines over several games."""
        return self.ledger.profile_sum(color)

    @property
    def rating_range(self) -> tuple[float, float] | None:
        """The ratings the calibrated model was fitted to and validated on
        (its ``rating_low``, ``rating_high``); None without a model or a range."""
        m = self.model
        if m is None or m.rating_low is None or m.rating_high is None:
            return None
        return (m.rating_low, m.rating_high)

    @property
    def scale(self) -> str | None:
        """The calibrated model's rating scale ("fide", "lichess"); None without one."""
        return self.model.scale if self.model is not None else None

    def label(self, color: Color) -> str | None:
        """What to show beside the player's calibrated numbers: the model's
        :meth:`~livegain.core.perceived.PerceivedModel.range_label` of his
        official rating (of his estimate when he has none): None inside the
        fitted range, ``extrapolated`` above it, the model's below-label under it."""
        m = self.model
        if m is None:
            return None
        rating = self.ledger.rating(color)
        if rating is None:
            c = self.calibrated(color)
            rating = None if c is None else c.rating
        return m.range_label(rating)
