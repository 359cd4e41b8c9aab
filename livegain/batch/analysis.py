"""A file's games analysed one by one into a report (``livegain analyze``):
Algorithms 1 and 4 per game, each player's games pooled, Algorithm 2 over
the event.

:class:`FileAnalysis` takes the games as they come and hands each game's
report back at once; what the players' and the event's figures need is kept
as running sums (:class:`~livegain.batch.player_pool.PlayerTotals`) and each
game's two histograms of gain (:class:`~livegain.batch.tournament_fit.Meeting`),
so that a file of any size is analysed without holding its games or their
reports. :func:`analyze` is the whole report at once. docs/analyze.md
documents the JSON keys and docs/maths.md the methods.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from livegain.batch.annotated import AnnotatedGame as AnnotatedGame
from livegain.batch.game_analysis import GameReport, WdlChooser, analyze_game
from livegain.batch.player_pool import IntervalMethod, PlayerReport, PlayerTotals
from livegain.batch.report_json import report_head_json, report_json
from livegain.batch.tournament_fit import (
    Meeting,
    PairMethod,
    Side,
    TournamentReport,
    tournament_report,
)
from livegain.core.histogram import GainHistogram
from livegain.core.human_wdl import CLASSICAL_OTB
from livegain.core.perceived import PerceivedModel


@dataclass
class AnalysisReport:
    engine_rating: float
    engine_model: str
    games: list[GameReport]
    players: list[PlayerReport]
    tournament: TournamentReport | None
    skipped: list[str] = field(default_factory=list)
    engine_name: str | None = None
    model: PerceivedModel | None = None

    def to_json(self) -> dict[str, Any]:
        return report_json(self)

    def player(self, name: str) -> PlayerReport:
        for p in self.players:
            if p.name == name:
                return p
        raise KeyError(name)


class FileAnalysis:
    """Algorithms 1-4 over a file's games, fed as they are read (:meth:`add`
    or :meth:`analyse`); :meth:`report` once they are all in. The options
    are :func:`analyze`'s."""

    def __init__(
        self,
        engine_rating: float,
        engine: GainHistogram | None = None,
        *,
        pairing: PairMethod = "aggregate",
        interval: IntervalMethod = "cluster",
        bootstrap_samples: int = 2000,
        seed: int = 0,
        engine_name: str | None = None,
        model: PerceivedModel | None = None,
        wdl: WdlChooser | None = None,
    ) -> None:
        self.engine_rating = engine_rating
        self.engine = engine
        self.pairing: PairMethod = pairing
        self.interval: IntervalMethod = interval
        self.bootstrap_samples = bootstrap_samples
        self.seed = seed
        self.engine_name = engine_name
        self.model = model
        self.wdl = wdl
        self.engine_model = (
            "single peak at 0" if engine is None else f"histogram of {engine.n} gains"
        )
        #: games analysed so far
        self.games = 0
        self._players: dict[str, PlayerTotals] = {}
        self._meetings: list[Meeting] = []

    def head_json(self) -> dict[str, Any]:
        """The report's JSON keys before its games (engine, calibration)."""
        return report_head_json(self.engine_rating, self.engine_model, self.engine_name, self.model)

    def add(self, game: AnnotatedGame) -> GameReport:
        """Analyse one more game (numbered by its ``game_number``, else by its
        place), fold it into the players' and the event's figures, and return
        its report."""
        self.games += 1
        kind, wdl_model = self.wdl(game.headers) if self.wdl is not None else (CLASSICAL_OTB, None)
        rep = analyze_game(
            game,
            self.engine_rating,
            self.engine,
            number=int(game.extra.get("game_number", self.games)),
            model=self.model,
            wdl_model=wdl_model,
            kind=kind,
        )
        for side in (rep.white, rep.black):
            totals = self._players.get(side.name)
            if totals is None:
                totals = self._players[side.name] = PlayerTotals(side.name)
            totals.add(side)
        self._meetings.append(
            Meeting(
                Side(rep.white.name, rep.white.histogram),
                Side(rep.black.name, rep.black.histogram),
            )
        )
        return rep

    def analyse(self, games: Iterable[AnnotatedGame]) -> Iterator[GameReport]:
        """:meth:`add` each game, handing back its report."""
        for game in games:
            yield self.add(game)

    def report(self, games: list[GameReport] | None = None) -> AnalysisReport:
        """Per player (all games pooled) and per tournament, once every game is
        in; ``games``: the games' reports kept for it (none by default)."""
        players = [
            totals.report(
                self.engine_rating,
                self.engine,
                interval=self.interval,
                bootstrap_samples=self.bootstrap_samples,
                seed=self.seed,
            )
            for totals in self._players.values()
        ]
        # best first; players without a counted move (forfeits only) last
        players.sort(key=lambda p: (p.perceived.moves == 0, -p.perceived.rating))
        if self.model is not None:
            for p in players:
                self._players[p.name].calibrate(p, self.model)
        tournament = (
            tournament_report(self._meetings, players, self.pairing) if len(players) >= 2 else None
        )
        return AnalysisReport(
            engine_rating=self.engine_rating,
            engine_model=self.engine_model,
            games=[] if games is None else games,
            players=players,
            tournament=tournament,
            engine_name=self.engine_name,
            model=self.model,
        )


def analyze(
    games: Iterable[AnnotatedGame],
    engine_rating: float,
    engine: GainHistogram | None = None,
    *,
    pairing: PairMethod = "aggregate",
    interval: IntervalMethod = "cluster",
    bootstrap_samples: int = 2000,
    seed: int = 0,
    engine_name: str | None = None,
    model: PerceivedModel | None = None,
    wdl: WdlChooser | None = None,
) -> AnalysisReport:
    """Per game, per player (all games pooled) and per tournament.

    With a ``model``, every player-game and player also gets the calibrated
    perceived rating and form (a player's over all his games:
    :meth:`PerceivedModel.perceived` and :meth:`PerceivedModel.form`).
    ``wdl`` picks each game's kind and human W/D/L model from its tags
    (None: classical over the board, today's W/D/L).

    ``pairing`` chooses the d_ij fed to Algorithm 2: ``"aggregate"`` (seed 002
    Table 1: Algorithm 1 between the two players' whole-event histograms, for
    each pair that met) or ``"pair"`` (Table 3: Algorithm 1 between the
    histograms of the pair's own games only).

    ``interval`` chooses the 95 % interval of a player's aggregate over several
    games: ``"cluster"`` (the union of a cluster-robust t-interval over games
    and the Wilson interval over the summed effective sizes) or
    ``"bootstrap"`` (percentile bootstrap over games, ``seed``; from 5 games).
    A single game always uses the Wilson interval. docs/maths.md compares them.
    :class:`FileAnalysis` does the same without keeping the games' reports.
    """
    run = FileAnalysis(
        engine_rating,
        engine,
        pairing=pairing,
        interval=interval,
        bootstrap_samples=bootstrap_samples,
        seed=seed,
        engine_name=engine_name,
        model=model,
        wdl=wdl,
    )
    return run.report(list(run.analyse(games)))
