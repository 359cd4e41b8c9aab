"""A board's running score: the ledger (:mod:`livegain.core.ledger`) over the
contiguous evaluated prefix of its game, which gains count, and what is read
off it (both perceived ratings, head-to-head, form and accuracy), each kept
until the ledger changes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from livegain.core.accuracy import NO_ACCURACY, GameAccuracy, game_accuracy, phases_from_fens
from livegain.core.histogram import GainHistogram
from livegain.core.ledger import GameLedger, LedgerPly
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
    ) -> None:
        self.ledger = GameLedger(
            engine_rating,
            engine,
            first_mover_is_white=first_mover_is_white,
            model=model,
            first_ply=1,
            white_rating=white_rating,
            black_rating=black_rating,
        )
        self.plies = -1  # the evaluated prefix in the ledger; -1: start score not set
        self.version = 0  # bumped on every change of the ledger
        self.gains: list[int] = []  # the ledger's, mirrored (reading them copies them)
        self.uncounted: set[int] = set()  # plies whose gain is not counted
        self._ratings: tuple[int, Ratings] | None = None
        self._accuracy: tuple[int, GameAccuracy] | None = None

    def start(self, cp: int) -> None:
        """The start position's score: the prefix is ply 0."""
        self.ledger.set_start(cp)
        self.plies = 0
        self.version += 1

    def push(self, score: int, counted: bool) -> LedgerPly:
        """The next ply's score (``counted``: its gain counts for its mover)."""
        lp = self.ledger.push(score, counted=counted)
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
        worked out again from the ledger's scores when they change."""
        if self._accuracy is None or self._accuracy[0] != self.version:
            n = max(self.plies, 0)
            if n == 0:
                value = GameAccuracy(NO_ACCURACY, NO_ACCURACY)
            else:
                value = game_accuracy(
                    self.ledger.scores[: n + 1],
                    self.ledger.first_mover_is_white,
                    phases_from_fens([fen_at(k) for k in range(n)]),
                    self.uncounted,
                )
            self._accuracy = (self.version, value)
        return self._accuracy[1]
