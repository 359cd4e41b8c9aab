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

Across formats (``bench/events_backtest.py``): :func:`event_results` (an
event's results, Armageddons attached to their classical draws),
:func:`estimated_ratings` (unrated players from the first round's board
order), and the scores of a forecast of the winner: :func:`winner_log_loss`,
:func:`brier`, :func:`leader_forecast`, :func:`reachable_forecast`,
:func:`reliability`. Team events: :func:`team_winners` (the final team
standings' first) and :func:`team_lineups` (each team's players and a rating
for each). Knockouts: :func:`knockout_boards` (the boards as they stood
before a game of a round), :func:`knockout_winner` and
:func:`higher_rated_forecast` ("the higher-rated player wins each match").
"""

from __future__ import annotations

import gzip
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from livegain.core.bracket import Tie, bracket
from livegain.core.elo import Model
from livegain.core.event_table import GameEntry
from livegain.core.knockout import BracketOrder
from livegain.core.knockout_table import KnockoutTable
from livegain.core.scoring import STANDARD, Scoring
from livegain.core.snapshot import PlayerInfo, official_rating
from livegain.core.standings import Result, Standings, attach_armageddons, names_armageddon
from livegain.core.team_match import MatchPoints
from livegain.core.team_standings import (
    OLYMPIAD_TIEBREAKS,
    TeamGame,
    TeamMatch,
    TeamStandings,
    team_matches,
)
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
    armageddon: bool = False
    """An Armageddon after a classical draw (``GameType`` tag, or the round's
    or event's name: :func:`livegain.core.standings.names_armageddon`)."""
    board: int | None = None
    """The board number (the ``b`` of a Round ``"r.b"``), when given."""
    white_team: str | None = None
    """The ``WhiteTeam`` tag (a team event's team), when given."""
    black_team: str | None = None


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
    """The games of a PGN file (gzipped when its name ends in ``.gz``), from
    its headers (Round ``"r.board"`` or ``"r"``, White, Black, Result,
    WhiteElo, BlackElo, WhiteFideId, BlackFideId, WhiteTeam, BlackTeam;
    GameType, Round and Event for an Armageddon)."""
    import chess.pgn

    games: list[EventGame] = []
    names: dict[str, str] = {}
    gz = path.suffix == ".gz"
    with (
        gzip.open(path, "rt", encoding="utf-8", errors="replace")
        if gz
        else path.open(encoding="utf-8", errors="replace")
    ) as handle:
        while (headers := chess.pgn.read_headers(handle)) is not None:
            keys = []
            for side in ("White", "Black"):
                name = headers.get(side, "?")
                fide = headers.get(f"{side}FideId", "").strip()
                key = fide if fide.isdigit() and fide != "0" else name
                names.setdefault(key, name)
                keys.append(key)
            round_tag = headers.get("Round", "0")
            parts = round_tag.split(".")
            games.append(
                EventGame(
                    round=int(parts[0]),
                    white=keys[0],
                    black=keys[1],
                    result=headers.get("Result", "*"),
                    white_elo=_elo(headers.get("WhiteElo")),
                    black_elo=_elo(headers.get("BlackElo")),
                    armageddon=names_armageddon(
                        headers.get("GameType"), round_tag, headers.get("Event")
                    ),
                    board=int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None,
                    white_team=headers.get("WhiteTeam") or None,
                    black_team=headers.get("BlackTeam") or None,
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


# --- across formats: bench/events_backtest.py --------------------------------

LOG_LOSS_FLOOR = 1e-3
"""A forecast's probability of the actual winner is floored at this for the
log-loss (a forecast that gave him 0, such as "the leader wins" when he was
not leading, scores ``-ln 0.001 = 6.9`` instead of infinity)."""

RELIABILITY_BINS = (0.0, 0.01, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0)
"""Edges of the forecast bins of :func:`reliability` (the last bin includes 1)."""


def event_results(games: Sequence[EventGame], scoring: Scoring = STANDARD) -> list[Result]:
    """Every game's result with its round; with an Armageddon rule in
    ``scoring``, each Armageddon attached to the classical draw it follows
    (:func:`livegain.core.standings.attach_armageddons`) instead of a game of
    its own."""
    classical = [
        Result.game(g.white, g.black, g.result, g.round)
        for g in games
        if not (g.armageddon and scoring.armageddon is not None)
    ]
    if scoring.armageddon is None:
        return classical
    arms = [Result.game(g.white, g.black, g.result, g.round) for g in games if g.armageddon]
    return attach_armageddons(classical, arms)


@dataclass(frozen=True)
class RatingEstimate:
    """Every player's rating for the simulation, and how it was found."""

    ratings: dict[str, float]
    from_file: int
    """Players with a rating in the file."""
    interpolated: tuple[str, ...]
    """Unrated players of round 1, rated by their place in its board order."""
    default: tuple[str, ...]
    """Unrated players not in round 1 (or with no rated player to interpolate
    from), rated at the median of the others."""


def estimated_ratings(games: Sequence[EventGame]) -> RatingEstimate:
    """Ratings for every player: the file's (the first seen), else estimated.

    An unrated player of round 1 gets his **pairing number** from the board
    order of round 1 (a Swiss pairs number k with number k + B on board k of
    B boards; of the two players of a board, the higher rated is number k,
    White when neither is rated), and a rating interpolated linearly in
    pairing number between the nearest rated players above and below him (the
    nearest one at either end of the list). Players with no game in round 1,
    or all players when round 1 has no rated player, get the median of the
    ratings so far. The boards of round 1 are in ``board`` order when the
    file gives it, else in file order.
    """
    rated: dict[str, float] = {}
    for g in games:
        for key, elo in ((g.white, g.white_elo), (g.black, g.black_elo)):
            if elo is not None:
                rated.setdefault(key, elo)
    players = sorted({g.white for g in games} | {g.black for g in games})
    first = min((g.round for g in games), default=0)
    boards = [g for g in games if g.round == first and not g.armageddon]
    if any(g.board is not None for g in boards):
        boards.sort(key=lambda g: (g.board is None, g.board or 0))
    top: list[str] = []
    bottom: list[str] = []
    for g in boards:
        w, b = rated.get(g.white), rated.get(g.black)
        black_higher = b is not None and (w is None or b > w)
        hi, lo = (g.black, g.white) if black_higher else (g.white, g.black)
        top.append(hi)
        bottom.append(lo)
    order = [*top, *bottom]
    ratings = dict(rated)
    interpolated: list[str] = []
    known = [(k, rated[p]) for k, p in enumerate(order) if p in rated]
    if known:
        for k, p in enumerate(order):
            if p in ratings:
                continue
            above = [(i, r) for i, r in known if i < k]
            below = [(i, r) for i, r in known if i > k]
            if above and below:
                (i0, r0), (i1, r1) = above[-1], below[0]
                ratings[p] = r0 + (r1 - r0) * (k - i0) / (i1 - i0)
            else:
                ratings[p] = (above[-1] if above else below[0])[1]
            interpolated.append(p)
    fill = _median(list(ratings.values())) if ratings else 1500.0
    default = [p for p in players if p not in ratings]
    for p in default:
        ratings[p] = fill
    return RatingEstimate(ratings, len(rated), tuple(interpolated), tuple(default))


def _median(values: list[float]) -> float:
    xs = sorted(values)
    mid = len(xs) // 2
    return xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2


def winner_log_loss(forecast: Mapping[str, float], winners: Sequence[str]) -> float:
    """``-ln p``, ``p`` the forecast's probability of the actual winner (of the
    players sharing first, their sum), floored at :data:`LOG_LOSS_FLOOR`."""
    p = sum(forecast.get(w, 0.0) for w in winners)
    return -math.log(max(p, LOG_LOSS_FLOOR)) + 0.0


def outcome_shares(players: Iterable[str], winners: Sequence[str]) -> dict[str, float]:
    """What happened: 1/k for each of the k players sharing first, else 0."""
    return {p: (1.0 / len(winners) if p in winners else 0.0) for p in players}


def brier(forecast: Mapping[str, float], winners: Sequence[str]) -> float:
    """The Brier score of a forecast over all players:
    ``sum (p_i - o_i)^2``, ``o_i`` from :func:`outcome_shares` (0 is perfect, 2 the worst)."""
    observed = outcome_shares(forecast, winners)
    return sum((forecast[p] - observed[p]) ** 2 for p in forecast)


def leader_forecast(points: Mapping[str, float]) -> dict[str, float]:
    """ "The leader wins": the players on the most points share 1 (before any
    result, everyone)."""
    top = max(points.values())
    leaders = [p for p, x in points.items() if x == top]
    return {p: (1.0 / len(leaders) if x == top else 0.0) for p, x in points.items()}


def reachable_forecast(points: Mapping[str, float], most_left: float) -> dict[str, float]:
    """Every player who can still reach the leader's points (his points plus
    ``most_left``, the most the rounds left can give, at least the leader's)
    alike, the others 0."""
    top = max(points.values())
    alive = [p for p, x in points.items() if x + most_left >= top]
    return {p: (1.0 / len(alive) if p in alive else 0.0) for p in points}


@dataclass(frozen=True)
class ReliabilityBin:
    low: float
    high: float
    count: int
    mean_forecast: float
    observed: float
    """Mean of :func:`outcome_shares` over the bin's (player, forecast) pairs."""


def reliability(
    pairs: Iterable[tuple[float, float]], edges: Sequence[float] = RELIABILITY_BINS
) -> list[ReliabilityBin]:
    """Forecast bins of (p_first, observed share) pairs: per bin the count, the
    mean forecast and the observed frequency of winning. A forecast of 1 falls
    in the last bin."""
    n = len(edges) - 1
    sums = [[0, 0.0, 0.0] for _ in range(n)]
    for p, o in pairs:
        k = next((i for i in range(n) if p < edges[i + 1]), n - 1)
        sums[k][0] += 1
        sums[k][1] += p
        sums[k][2] += o
    return [
        ReliabilityBin(
            edges[i],
            edges[i + 1],
            int(c),
            s_p / c if c else math.nan,
            s_o / c if c else math.nan,
        )
        for i, (c, s_p, s_o) in enumerate(sums)
    ]


# --- team events ---------------------------------------------------------------


def _teams(g: EventGame) -> tuple[str, str]:
    if not g.white_team or not g.black_team:
        raise ValueError(f"round {g.round}: {g.white} - {g.black} has no WhiteTeam/BlackTeam tag")
    return g.white_team, g.black_team


def event_team_matches(games: Iterable[EventGame]) -> list[TeamMatch]:
    """The team matches the games make (:func:`livegain.core.team_standings.team_matches`)."""
    return team_matches(TeamGame(g.round, *_teams(g), g.result) for g in games)


def team_winners(
    games: Sequence[EventGame],
    tiebreaks: Sequence[str] = OLYMPIAD_TIEBREAKS,
    points: MatchPoints | None = None,
) -> list[str]:
    """The teams ranked first by the final team standings of the games (match
    points, then ``tiebreaks``: by default the Olympiad's); several when they
    are equal on everything."""
    st = TeamStandings.from_matches(event_team_matches(games), tiebreaks, points=points)
    return [row.team for row in st.rows if row.rank == 1]


@dataclass(frozen=True)
class TeamLineups:
    """Every player of a team event with his team and a rating, and how the
    ratings were found."""

    team_of: dict[str, str]
    """Player (and stand-in) -> team."""
    ratings: dict[str, float]
    from_file: int
    """Players with a rating in the file."""
    from_team: tuple[str, ...]
    """Unrated players rated at the mean of their team's rated players."""
    default: tuple[str, ...]
    """Unrated players of a team without a rated player: the median of the file's ratings."""
    stand_ins: tuple[str, ...]
    """Players added to a team with fewer than ``boards`` players in the file."""


def team_lineups(games: Sequence[EventGame], boards: int = 4) -> TeamLineups:
    """Each team's players, those with a game in the file, each with a rating:
    the file's (the first seen); else the mean of his team's players rated in
    the file; else (no rated team-mate) the median of the file's ratings
    (1500 when there is none). A team with fewer than ``boards`` players gets
    stand-ins (``"<team> (stand-in k)"``) at its players' mean rating, so
    that it fields a full lineup in the rounds simulated. ValueError for a
    game without teams or a player in two teams."""
    team_of: dict[str, str] = {}
    rated: dict[str, float] = {}
    for g in games:
        for key, team, elo in zip(
            (g.white, g.black), _teams(g), (g.white_elo, g.black_elo), strict=True
        ):
            if team_of.setdefault(key, team) != team:
                raise ValueError(f"{key} plays for {team_of[key]!r} and {team!r}")
            if elo is not None:
                rated.setdefault(key, elo)
    members: dict[str, list[str]] = {}
    for p, team in sorted(team_of.items()):
        members.setdefault(team, []).append(p)
    fill = _median(list(rated.values())) if rated else 1500.0
    ratings = dict(rated)
    from_team: list[str] = []
    default: list[str] = []
    for ps in members.values():
        known = [rated[p] for p in ps if p in rated]
        for p in ps:
            if p in rated:
                continue
            if known:
                ratings[p] = sum(known) / len(known)
                from_team.append(p)
            else:
                ratings[p] = fill
                default.append(p)
    stand_ins: list[str] = []
    for team, ps in members.items():
        mean = sum(ratings[p] for p in ps) / len(ps)
        for k in range(len(ps) + 1, boards + 1):
            name = f"{team} (stand-in {k})"
            team_of[name] = team
            ratings[name] = mean
            stand_ins.append(name)
    return TeamLineups(
        team_of, ratings, len(rated), tuple(from_team), tuple(default), tuple(stand_ins)
    )


# --- knockouts -----------------------------------------------------------------


def knockout_boards(
    games: Sequence[EventGame],
    names: Mapping[str, str],
    before: tuple[int, int] | None = None,
) -> list[GameEntry]:
    """A knockout file's games (Round ``"R.G"``: ``board`` is the game's
    number in its mini-match) as the boards that
    :func:`livegain.core.knockout_table.knockout_table` reads, ratings from
    the file. ``before`` (R, G): the boards as they stood before game G of
    round R: every game of the rounds before R and round R's games numbered
    below G, finished, and game G of each of round R's matches, on its board
    and not started (its colours known, its chances from the ratings); later
    games are not shown. ValueError for a game without a game number."""
    out: list[GameEntry] = []
    for i, g in enumerate(games):
        if g.board is None:
            raise ValueError(f"round {g.round}: {g.white} - {g.black} has no game number (R.G)")
        result = g.result
        if before is not None:
            rnd, game = before
            if (g.round, g.board) >= (rnd, game):
                if (g.round, g.board) != (rnd, game):
                    continue
                result = "*"
        out.append(
            GameEntry(
                board_id=str(i),
                white=_player(g.white, names, g.white_elo),
                black=_player(g.black, names, g.black_elo),
                round=f"{g.round}.{g.board}",
                result=result,
                plies=0,
            )
        )
    return out


def _player(key: str, names: Mapping[str, str], elo: float | None) -> PlayerInfo:
    return PlayerInfo(
        names.get(key, key),
        rating=None if elo is None else round(elo),
        fide_id=key if key.isdigit() else None,
    )


def knockout_winner(table: KnockoutTable) -> str:
    """The key of a finished knockout's winner: the bracket's one player left,
    with chance 1. ValueError while it is not over."""
    rows = table.bracket.rows
    if len(rows) != 1 or rows[0].win != 1.0:
        left = ", ".join(table.names.get(r.player, r.player) for r in rows)
        raise ValueError(f"the knockout is not over: {left} still in")
    return rows[0].player


def higher_rated_forecast(table: KnockoutTable, order: BracketOrder) -> dict[str, float]:
    """ "The higher-rated player wins each match": the matches decided on the
    boards as they were, every other match (on the boards or to come, by the
    bracket ``order``) won by its higher-rated player (equal ratings: each
    1/2; a player without a rating at the mean of the rated ones). Per player
    still in: his chance of winning the event (1 for the highest rated left,
    unless ratings are equal)."""
    rated = [r for r in table.ratings.values() if r is not None]
    mean = sum(rated) / len(rated) if rated else 0.0
    rating = {k: float(r) if r is not None else mean for k, r in table.ratings.items()}

    def beat(p: str, q: str, _round: int) -> float:
        return 1.0 if rating[p] > rating[q] else 0.0 if rating[p] < rating[q] else 0.5

    rounds = sorted({m.round for m in table.matches})
    ties = [
        [
            Tie(m.a, m.b, m.through_a if m.winner is not None else beat(m.a, m.b, r))
            for m in table.matches
            if m.round == r
        ]
        for r in rounds
    ]
    tree = bracket(ties, beat, first_round=rounds[0], order=order)
    return {row.player: row.win for row in tree.rows}
