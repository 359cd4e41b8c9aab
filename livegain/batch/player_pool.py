"""A player's games pooled: running sums folded in game by game as they are
analysed, then his report over all of them (Algorithm 4 with its interval,
the calibrated perceived rating and form, the mean accuracy).

Only these sums are kept per player, never his games, so a file of any size
is pooled in memory that grows with its players, not its moves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from livegain.batch.game_analysis import PlayerGame
from livegain.core.accuracy import PlayerAccuracy, mean_accuracy
from livegain.core.histogram import GainHistogram
from livegain.core.perceived import CalibratedRating, PerceivedModel
from livegain.core.rating import (
    MIN_GAMES_FOR_BOOTSTRAP,
    PerceivedRating,
    bootstrap_p_interval,
    cluster_p_interval,
    perceived_from_p,
    wilson_interval,
)

IntervalMethod = Literal["cluster", "bootstrap"]


@dataclass
class PlayerReport:
    """All games of one player pooled."""

    name: str
    elo: float | None
    games: int
    histogram: GainHistogram
    perceived: PerceivedRating
    interval_method: str
    mean_gain: float | None
    tournament: float | None = None
    tournament_relative: float | None = None
    tournament_low: float | None = None
    tournament_high: float | None = None
    calibrated: CalibratedRating | None = None
    form: CalibratedRating | None = None
    #: the mean of his games' accuracies (:func:`~livegain.core.accuracy.mean_accuracy`)
    accuracy: PlayerAccuracy | None = None


@dataclass
class PlayerTotals:
    """One player's games folded in (:meth:`add`) in the order of the file."""

    name: str
    histogram: GainHistogram = field(default_factory=GainHistogram)
    games: int = 0
    elo_sum: int = 0
    elo_count: int = 0
    #: per game with a counted move: his score sum, his moves
    scores: list[float] = field(default_factory=list)
    moves: list[int] = field(default_factory=list)
    #: effective moves summed over his games with a counted move
    effective_moves: float = 0
    accuracies: list[PlayerAccuracy] = field(default_factory=list)
    #: per game: (classified moves, the sum of their scores in hundredths)
    classified: list[tuple[int, int]] = field(default_factory=list)

    def add(self, game: PlayerGame) -> None:
        """Fold in one of his games."""
        self.histogram.merge(game.histogram)
        self.games += 1
        if game.elo is not None:
            self.elo_sum += game.elo
            self.elo_count += 1
        if game.histogram.n > 0:
            self.scores.append(game.score_sum)
            self.moves.append(game.histogram.n)
            self.effective_moves += game.effective_moves
        if game.accuracy is not None:
            self.accuracies.append(game.accuracy)
        self.classified.append((len(game.move_classes), game.centi_sum))

    def report(
        self,
        engine_rating: float,
        engine: GainHistogram | None = None,
        *,
        interval: IntervalMethod = "cluster",
        bootstrap_samples: int = 2000,
        seed: int = 0,
    ) -> PlayerReport:
        """Algorithm 4 over all his moves, with the 95 % interval ``interval``
        chooses (:func:`livegain.batch.analysis.analyze`); Wilson's for a
        single game."""
        hist = self.histogram
        counted = len(self.scores)
        if hist.n == 0:
            perceived = perceived_from_p(0.5, 0, engine_rating)
            method = "none"
        else:
            p = hist.expected_score_vs_engine(engine)
            n_eff = self.effective_moves
            if interval == "cluster" and counted >= 2:
                ct = cluster_p_interval(self.scores, self.moves)
                wi = wilson_interval(p, n_eff)
                both = (min(ct[0], wi[0]), max(ct[1], wi[1]))
                perceived = perceived_from_p(p, hist.n, engine_rating, interval_p=both)
                method = "games-cluster"
            elif interval == "bootstrap" and counted >= MIN_GAMES_FOR_BOOTSTRAP:
                boot = bootstrap_p_interval(
                    self.scores, self.moves, samples=bootstrap_samples, seed=seed
                )
                perceived = perceived_from_p(p, hist.n, engine_rating, interval_p=boot)
                method = "bootstrap-games"
            else:
                perceived = perceived_from_p(p, hist.n, engine_rating, n_eff=n_eff)
                method = "wilson"
        return PlayerReport(
            name=self.name,
            elo=self.elo_sum / self.elo_count if self.elo_count else None,
            games=self.games,
            histogram=hist,
            perceived=perceived,
            interval_method=method,
            mean_gain=hist.mean() if hist.n else None,
            accuracy=mean_accuracy(self.accuracies),
        )

    def calibrate(self, player: PlayerReport, model: PerceivedModel) -> None:
        """His perceived rating and form over all his games of the file
        (:meth:`PerceivedModel.perceived`, :meth:`PerceivedModel.form`; a
        model without forward lines: the estimate over all his moves pooled)."""
        mine = self.classified
        pooled = model.perceived(mine)
        if pooled is None:
            pooled = model.estimate(sum(n for n, _ in mine), sum(c for _, c in mine))
        player.calibrated = pooled
        player.form = model.form(mine, player.elo)
