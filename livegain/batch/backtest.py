"""Back-test of the tournament-win odds on a finished round robin.

After each round ``r`` (``r = 0`` before the first), the odds of winning the
event are computed from the results of rounds ``1..r`` and the players'
ratings, the games of later rounds being simulated
(:func:`livegain.core.tournament_odds.win_odds`, rating-only: no game is in
progress). The score of a forecast is the log-loss of the actual winner,
``-ln p(winner)``, against two naive forecasts: every player alike
(``ln n``), and every player not yet out of the running alike
(:func:`livegain.core.tournament_odds.contenders`).

Live odds in the middle of a round need the live W/D/L of the games in
progress: :func:`backtest_mid_round` takes them from the caller (the bench
evaluates each game of the round at one ply with the engine) and scores the
odds made with them against the rating-only odds at the same moment, when the
games in progress are drawn from the ratings alone.

Games not started are drawn from the two ratings: by seed 000's draw model
(``draw_rate``) or, with a ``prior``, by the ratings-only layer of the human
W/D/L model (:class:`livegain.core.human_wdl.RatingsPrior`, fitted on real
results: White's advantage, a draw rate by level and gap), which also decides
rating play-offs.

:func:`backtest_win_odds` and :func:`backtest_mid_round` are pure;
:func:`read_event` reads the PGN headers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from livegain.core.elo import Model
from livegain.core.events import official_rating
from livegain.core.standings import Result, Standings
from livegain.core.tournament_odds import (
    DEFAULT_DRAW_RATE,
    Playoff,
    RatingsWdl,
    contenders,
    win_odds,
)


@dataclass(frozen=True)
class EventGame:
    """One finished game of the event. Players are keys (FIDE id when known, else
    the name); ``names`` of :class:`Event` gives the names."""

    round: int
    white: str
    black: str
    result: str
    white_elo: float | None
    black_elo: float | None


@dataclass(frozen=True)
class Event:
    games: tuple[EventGame, ...]
    names: dict[str, str]


@dataclass(frozen=True)
class RoundOdds:
    """The forecast made after ``after_round`` rounds, for the actual winner."""

    after_round: int
    games_left: int
    p_winner: float
    stderr: float
    log_loss: float
    contenders: int
    contenders_log_loss: float
    favourite: str
    p_favourite: float


@dataclass(frozen=True)
class Backtest:
    winner: str
    players: int
    sims: int
    rounds: tuple[RoundOdds, ...]

    @property
    def uniform_log_loss(self) -> float:
        """``ln n``: every player alike."""
        return math.log(self.players)

    @property
    def mean_log_loss(self) -> float:
        return sum(r.log_loss for r in self.rounds) / len(self.rounds)

    @property
    def mean_contenders_log_loss(self) -> float:
        return sum(r.contenders_log_loss for r in self.rounds) / len(self.rounds)


def read_event(path: Path) -> Event:
    """The games of a PGN file, from its headers (Round ``"r.board"`` or ``"r"``,
    White, Black, Result, WhiteElo, BlackElo, WhiteFideId, BlackFideId)."""
    import chess.pgn

    games: list[EventGame] = []
    names: dict[str, str] = {}
    with path.open(encoding="utf-8", errors="replace") as handle:
        while (headers := chess.pgn.read_headers(handle)) is not None:
            keys = []
            for side in ("White", "Black"):
                name = headers.get(side, "?")
                fide = headers.get(f"{side}FideId", "").strip()
                key = fide if fide.isdigit() and fide != "0" else name
                names.setdefault(key, name)
                keys.append(key)
            games.append(
                EventGame(
                    round=int(headers.get("Round", "0").split(".")[0]),
                    white=keys[0],
                    black=keys[1],
                    result=headers.get("Result", "*"),
                    white_elo=_elo(headers.get("WhiteElo")),
                    black_elo=_elo(headers.get("BlackElo")),
                )
            )
    return Event(tuple(games), names)


def _elo(raw: str | None) -> float | None:
    rating = official_rating(raw)
    return None if rating is None else float(rating)


def _event_facts(
    games: Sequence[EventGame], order: tuple[str, ...]
) -> tuple[list[str], dict[str, float], list[Result], str]:
    """(players, first rating seen of each, every game's result, the single
    winner by the final standings with ``order``; ValueError when first is shared)."""
    players = sorted({g.white for g in games} | {g.black for g in games})
    ratings: dict[str, float] = {}
    for g in games:
        for key, elo in ((g.white, g.white_elo), (g.black, g.black_elo)):
            if elo is not None:
                ratings.setdefault(key, elo)
    results = [Result.game(g.white, g.black, g.result, g.round) for g in games]
    leaders = Standings.from_results(results, order, players).leaders()
    if len(leaders) != 1:
        raise ValueError(f"no single winner from the results: {', '.join(leaders)} share first")
    return players, ratings, results, leaders[0]


def backtest_win_odds(
    games: Sequence[EventGame],
    *,
    sims: int = 100_000,
    seed: int = 0,
    draw_rate: float = DEFAULT_DRAW_RATE,
    tiebreaks: Iterable[str] = (),
    playoff: Playoff = "rating",
    model: Model = "logistic",
    prior: RatingsWdl | None = None,
) -> Backtest:
    """Rating-only odds after each round ``0..R-1`` of a finished round robin,
    scored by the log-loss of the actual winner (the only player ranked first
    by the final standings with ``tiebreaks``; an error when several are).

    Defaults: no tie-break, a tie for first goes to a play-off (as at Wijk
    aan Zee), the project's default draw rate (0.5). A probability of 0
    would give an infinite log-loss; it is floored at ``0.5 / sims``.
    ``prior``: the games not started (and play-offs) from this ratings-only
    W/D/L model instead of ``draw_rate`` and ``model``.
    """
    order = tuple(tiebreaks)
    players, ratings, results, winner = _event_facts(games, order)
    last = max(g.round for g in games)
    floor = 0.5 / sims
    rows: list[RoundOdds] = []
    for r in range(last):
        finished = [res for res, g in zip(results, games, strict=True) if g.round <= r]
        left = [(g.white, g.black) for g in games if g.round > r]
        odds = win_odds(
            players,
            ratings,
            finished,
            (),
            left,
            sims=sims,
            seed=seed + r,
            tiebreaks=order,
            playoff=playoff,
            draw_rate=draw_rate,
            model=model,
            prior=prior,
        )
        favourite = max(players, key=lambda p: odds[p].p)
        alive = contenders(players, finished, left)
        p_naive = 1.0 / len(alive) if winner in alive else 0.0
        rows.append(
            RoundOdds(
                after_round=r,
                games_left=len(left),
                p_winner=odds[winner].p,
                stderr=odds[winner].stderr,
                log_loss=-math.log(max(odds[winner].p, floor)),
                contenders=len(alive),
                contenders_log_loss=-math.log(max(p_naive, floor)),
                favourite=favourite,
                p_favourite=odds[favourite].p,
            )
        )
    return Backtest(winner=winner, players=len(players), sims=sims, rounds=tuple(rows))


@dataclass(frozen=True)
class MidRound:
    """The forecast made in the middle of round ``round``: the actual winner's
    probability with the games in progress drawn from their live W/D/L, and
    with them drawn from the ratings alone (everything else the same)."""

    round: int
    in_progress: int
    finished_in_round: int
    p_live: float
    p_rating: float

    @property
    def log_loss_live(self) -> float:
        return -math.log(self.p_live) + 0.0  # no -0.0

    @property
    def log_loss_rating(self) -> float:
        return -math.log(self.p_rating) + 0.0


def backtest_mid_round(
    games: Sequence[EventGame],
    live: Mapping[int, tuple[float, float, float] | None],
    *,
    sims: int = 100_000,
    seed: int = 0,
    draw_rate: float = DEFAULT_DRAW_RATE,
    tiebreaks: Iterable[str] = (),
    playoff: Playoff = "rating",
    model: Model = "logistic",
    prior: RatingsWdl | None = None,
) -> tuple[str, tuple[MidRound, ...]]:
    """(winner, one :class:`MidRound` per round): in the middle of each round,
    the games of earlier rounds are finished, later rounds not started, and
    each game ``i`` of the round is in progress with ``live[i]`` (W/D/L, White's
    view, any positive scale), or already finished (``live[i]`` None: its
    result counts). Indexes are into ``games``. Probabilities are floored at
    ``0.5 / sims``. ``prior``: games not started (and, for the rating-only
    odds, the games in progress) from this ratings-only W/D/L model instead
    of ``draw_rate`` and ``model``."""
    order = tuple(tiebreaks)
    players, ratings, results, winner = _event_facts(games, order)
    floor = 0.5 / sims
    rows: list[MidRound] = []
    for rnd in sorted({g.round for g in games}):
        finished = [
            res
            for i, (res, g) in enumerate(zip(results, games, strict=True))
            if g.round < rnd or (g.round == rnd and live.get(i) is None)
        ]
        playing: list[tuple[EventGame, tuple[float, float, float]]] = []
        for i, g in enumerate(games):
            wdl = live.get(i)
            if g.round == rnd and wdl is not None:
                playing.append((g, wdl))
        later = [(g.white, g.black) for g in games if g.round > rnd]
        with_live = win_odds(
            players,
            ratings,
            finished,
            [(g.white, g.black, wdl) for g, wdl in playing],
            later,
            sims=sims,
            seed=seed + rnd,
            tiebreaks=order,
            playoff=playoff,
            draw_rate=draw_rate,
            model=model,
            prior=prior,
        )
        rating_only = win_odds(
            players,
            ratings,
            finished,
            (),
            [(g.white, g.black) for g, _ in playing] + later,
            sims=sims,
            seed=seed + rnd,
            tiebreaks=order,
            playoff=playoff,
            draw_rate=draw_rate,
            model=model,
            prior=prior,
        )
        in_round = sum(1 for g in games if g.round == rnd)
        rows.append(
            MidRound(
                round=rnd,
                in_progress=len(playing),
                finished_in_round=in_round - len(playing),
                p_live=max(with_live[winner].p, floor),
                p_rating=max(rating_only[winner].p, floor),
            )
        )
    return winner, tuple(rows)
