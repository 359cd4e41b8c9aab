"""One event's standings and tournament-win odds, from its boards.

The service groups its boards by event (the PGN ``Event`` tag) and hands each
group here as :class:`GameEntry` values (players, round, result, plies and
the live W/D/L of the current position), with the event's :class:`EventRules`
(the ``[[events]]`` entry of the configuration; none: standings only).
:func:`event_table` returns the standings rows, each with the chance of
finishing first and its Monte Carlo standard error, using
:mod:`livegain.core.standings` and :mod:`livegain.core.tournament_odds`.

Players are keyed by FIDE id when the feed gives one, else by their
normalised name (:func:`livegain.core.snapshot.player_key`). Names in the rules
(``points_before``, ``pairings``) are matched to the players on the boards:
the same normalised name, else the only player whose name contains every word
of it (``"Carlsen"`` is ``"Carlsen, Magnus"``); a name that matches nobody is a
player of its own.

Games:

* finished boards are results (``1-0``, ``0-1``, ``1/2-1/2``);
* boards with moves and no result are games in progress, simulated from their
  live W/D/L: the chances the board shows for its last evaluated position
  (the human W/D/L model's, :meth:`BoardGame.wdl_at`; from the ratings while
  none is known yet);
* boards without a move are games not started, simulated from the ratings:
  with the ratings-only layer of the boards' human W/D/L model (``prior``,
  :class:`livegain.core.human_wdl.RatingsPrior`: the same model their live
  chances start from), else with the draw model of
  :func:`livegain.core.odds.game_probabilities`;
* ``pairings`` of the rules not yet on a board are games not started too (a
  pairing with a round is on a board of that round; without one, on any board
  of the same two players);
* round robin without ``pairings``: every pair of the field that has met fewer
  than ``cycles`` times plays the games missing (colours do not matter to the
  model);
* with a scoring that has an Armageddon rule (Norway Chess), a board is an
  Armageddon when its ``GameType`` tag, its round or its event name says so
  (:func:`livegain.core.standings.names_armageddon`), or when it is the
  second board of the same two players in a round whose first is a finished
  classical draw. It is part of that classical pairing (no meeting of its
  own): finished, it settles the pairing's points; in progress or not
  started, it is simulated as such; a classical draw without its Armageddon
  on a board has one still to come.

Swiss events: later pairings depend on results, so only the games on the
boards (the current round) and ``pairings`` are simulated: the chances are of
leading the standings after the current round, and the table says so.

Knockout events (``format = "knockout"``): the standings rows count the
games' points and no tournament simulation runs (it would read the
mini-matches as a round robin): the chances of going through and of winning
the event are the knockout table's (:mod:`livegain.core.knockout_table`, the
message's ``knockout``), with the rules' ``knockout`` (stages, bracket order).

``scoring``: the points of a win, a draw and a loss for each colour
(:class:`livegain.core.scoring.Scoring`, default 1 / ½ / 0), for the
standings and the simulation alike; a table whose scoring is not the
standard one says so in its notes.

``points_before``: points from rounds the feed does not carry (a broadcast of
one round of a Swiss), in the event's points. They count as unplayed rounds
before the feed's first round (byes worth a win, one bye for what is left
below a win, then byes worth 0: with 1 / ½ / 0, full-point, half-point and
zero-point byes), so that the players' points and rounds are right; their
tie-breaks then treat those rounds as :mod:`livegain.core.standings` treats
unplayed rounds (a dummy opponent with the player's own points): only the
rounds in the feed have real opponents.

Each row also gives the player's calibrated ``perceived`` rating and his
``form`` (official rating updated by his moves) over all his games of the
event: each game's (moves, sum of move scores) combined by the boards'
perceived-rating model (:meth:`PerceivedModel.perceived`,
:meth:`PerceivedModel.form`), with the model's label of his rating.

Pure: no I/O, no clock; the simulation's randomness comes from ``seed``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from livegain.core.accuracy import GameAccuracy
from livegain.core.board.board import BoardGame
from livegain.core.human_wdl import RatingsPrior
from livegain.core.knockout import KnockoutRules
from livegain.core.ledger import official_rating
from livegain.core.perceived import CalibratedRating, PerceivedModel
from livegain.core.scoring import Scoring
from livegain.core.snapshot import PlayerInfo, normalise_name, player_key
from livegain.core.standings import (
    ALIASES,
    Result,
    Standings,
    classical_draw,
    names_armageddon,
    tiebreak_names,
)

if TYPE_CHECKING:  # the simulation (NumPy, SciPy) is imported when first used
    from livegain.core.tournament_odds import ArmageddonLeft, InProgress, Playoff

Format = Literal["round-robin", "swiss", "knockout"]

ROUND_ROBIN_TIEBREAKS = ("DE", "SB", "WIN")
SWISS_TIEBREAKS = ("BH-C1", "BH", "SB")
DEFAULT_SIMS = 100_000
SWISS_SIMS = 10_000
"""Simulations of a Swiss to its last round unless configured: a standard
error of at most 0.005 on any chance (sqrt(0.25 / 10,000))."""
PRECISION = 0.005
"""The standard error a Swiss simulated to its end stops at (before
:data:`SWISS_SIMS`, which gives it for any chance): the many rounds left of
a big Swiss cost seconds per thousand simulations."""
DEFAULT_DRAW_RATE = 0.5
"""As :data:`livegain.core.tournament_odds.DEFAULT_DRAW_RATE`."""
DEFAULT_RATING = 1500.0
"""The rating every player gets when no player of the event has one."""

FINISHED = ("1-0", "0-1", "1/2-1/2")
WDL_LOOKBACK = 16
"""Plies looked back for the last evaluated position of a game in progress."""

_SHORT = {tb: alias for alias, tb in ALIASES.items()}


@dataclass(frozen=True)
class Pairing:
    """A game to be played: by the players' names (as the feed spells them, or
    a part of them), in the given round when known."""

    white: str
    black: str
    round: int | None = None


@dataclass(frozen=True)
class EventRules:
    """How an event is ranked and simulated (an ``[[events]]`` entry).

    ``format`` None: the event is not configured: standings (points and
    ``tiebreaks``, default the Swiss ones) without odds. ``scoring``: the
    points of each result for each colour (default 1 / ½ / 0);
    ``points_before`` is in those points.
    """

    format: Format | None = None
    cycles: int = 1
    pairings: tuple[Pairing, ...] = ()
    tiebreaks: tuple[str, ...] | None = None
    playoff: Playoff = "share"
    draw_rate: float = DEFAULT_DRAW_RATE
    sims: int | None = None
    """Simulations (None: :data:`DEFAULT_SIMS`, a Swiss to its end :data:`SWISS_SIMS`)."""
    precision: float | None = PRECISION
    """A Swiss to its end (of players or teams): its simulations stop before
    ``sims`` once every chance of first place has a standard error this
    small (None: all ``sims`` are run)."""
    points_before: tuple[tuple[str, float], ...] = ()
    seed: int = 0
    scoring: Scoring = field(default_factory=Scoring.standard)
    knockout: KnockoutRules = field(default_factory=KnockoutRules)
    """A knockout's stages and bracket order (``format = "knockout"``)."""
    rounds: int | None = None
    """A Swiss's rounds in all: its odds are simulated to the last one (None: unknown)."""
    top_k: int = 3
    """A Swiss simulated to the end: the places counted as the top (prizes)."""

    def __post_init__(self) -> None:
        if self.cycles < 1:
            raise ValueError(f"cycles must be at least 1, got {self.cycles}")
        if self.rounds is not None and self.rounds < 1:
            raise ValueError(f"rounds must be at least 1, got {self.rounds}")
        if self.top_k < 1:
            raise ValueError(f"top_k must be at least 1, got {self.top_k}")
        standard = self.scoring.is_standard
        for name, pts in self.points_before:
            if standard and (pts < 0 or not math.isfinite(pts) or (2 * pts) != int(2 * pts)):
                raise ValueError(f"points_before of {name!r}: {pts} is not a multiple of 1/2")
            if not standard and not (pts >= 0 and math.isfinite(pts)):
                raise ValueError(f"points_before of {name!r}: {pts} is not a number from 0")
        tiebreak_names(self.order)  # unknown names: an error now

    @property
    def order(self) -> tuple[str, ...]:
        """The tie-breaks in force (the given ones, else the format's defaults)."""
        if self.tiebreaks is not None:
            return self.tiebreaks
        return ROUND_ROBIN_TIEBREAKS if self.format == "round-robin" else SWISS_TIEBREAKS


@dataclass(frozen=True)
class GameEntry:
    """What the table needs of one board (read from it on the service's loop)."""

    board_id: str
    white: PlayerInfo
    black: PlayerInfo
    round: str | None
    result: str
    plies: int
    wdl: tuple[float, float, float] | None = None
    """W/D/L of the last evaluated position, White's view (any positive scale)."""
    white_moves: tuple[int, int] = (0, 0)
    """White's (moves, sum of move scores in hundredths) for the perceived model."""
    black_moves: tuple[int, int] = (0, 0)
    model: PerceivedModel | None = None
    """The board's perceived-rating model (None: none)."""
    prior: RatingsPrior | None = None
    """The ratings-only layer of the board's human W/D/L model (None: none)."""
    accuracy: GameAccuracy | None = None
    """Both players' accuracies in the game (None: not known)."""
    board: int | None = None
    """The board's number in its round, when the feed gives one."""
    white_team: str | None = None
    """The ``WhiteTeam`` tag (a team event's team, or a federation in some files)."""
    black_team: str | None = None
    time_control: str | None = None
    """The ``TimeControl`` tag (a knockout game's stage, where it names one)."""
    armageddon: bool = False
    """The board says it is an Armageddon (its ``GameType`` tag, round or event)."""


@dataclass(frozen=True)
class TableRow:
    rank: int
    key: str
    name: str
    title: str | None
    federation: str | None
    rating: int | None
    fide_id: str | None
    points: float
    games: int
    tiebreaks: tuple[tuple[str, float | None], ...]
    """(short name, value) in the order of the tie-breaks."""
    win: float | None
    win_se: float | None
    live: bool
    perceived: CalibratedRating | None = None
    """The calibrated perceived rating over his games of the event."""
    form: CalibratedRating | None = None
    """His official rating updated by his moves over his games of the event."""
    model: PerceivedModel | None = None
    """The model of both (its scale, range and label)."""
    label: str | None = None
    """The model's label of his official rating (of his estimate when unrated)."""
    top: float | None = None
    """A Swiss simulated to the end: the chance of a place in the top ``top_k``."""
    top_se: float | None = None


@dataclass(frozen=True)
class EventTable:
    event: str
    format: Format | None
    round: int | None
    """The highest round number on the event's boards (None: none given)."""
    rounds: int | None
    """Rounds in all, when known (a round robin's: ``cycles`` x (n - 1), n even)."""
    tiebreaks: tuple[str, ...]
    playoff: Playoff | None
    rows: tuple[TableRow, ...]
    sims: int
    """Simulations behind ``win`` (0: no odds)."""
    finished: int
    live: int
    upcoming: int
    plies: int
    """Moves on the event's boards in all (it grows as the event goes on)."""
    notes: tuple[str, ...] = field(default=())
    top_k: int | None = None
    """The places of a row's ``top`` (None: no such chance, the odds are not to the end)."""

    @property
    def note(self) -> str | None:
        return " ".join(self.notes) or None


def entry_of(game: BoardGame) -> GameEntry:
    """What :func:`event_table` needs of a board: the W/D/L is the one the
    board shows for the current position, else for the last evaluated one
    within :data:`WDL_LOOKBACK` plies (a move that just arrived is not
    evaluated yet); each player's moves for the perceived model; the board's
    models."""
    wdl: tuple[float, float, float] | None = None
    if game.result == "*":
        for ply in range(game.plies, max(-1, game.plies - 1 - WDL_LOOKBACK), -1):
            shown = game.wdl_at(ply)
            if shown is not None:
                wdl = (float(shown[0]), float(shown[1]), float(shown[2]))
                break
    human = game.wdl_model
    return GameEntry(
        board_id=game.board_id,
        white=game.white,
        black=game.black,
        round=game.round,
        result=game.result,
        plies=game.plies,
        wdl=wdl,
        white_moves=game.scoring.profile_sum("white"),
        black_moves=game.scoring.profile_sum("black"),
        model=game.model,
        prior=None if human is None else human.prior,
        accuracy=game.accuracy(),
        board=game.board,
        white_team=_team(game.tags.get("WhiteTeam")),
        black_team=_team(game.tags.get("BlackTeam")),
        time_control=game.tags.get("TimeControl"),
        armageddon=names_armageddon(game.tags.get("GameType"), game.round, game.tags.get("Event")),
    )


def _team(tag: str | None) -> str | None:
    text = " ".join((tag or "").split())
    return text if text and text not in ("?", "-") else None


def _armageddon_boards(keyed: list[tuple[GameEntry, str, str, int | None]]) -> set[int]:
    """The indexes of the Armageddon boards: those that say so, and the second
    board of two players in a round whose other board is a finished classical
    draw (the first such draw in the boards' order is the classical game)."""
    out = {k for k, (g, _, _, _) in enumerate(keyed) if g.armageddon}
    groups: dict[tuple[frozenset[str], int], list[int]] = {}
    for k, (_, wk, bk, rnd) in enumerate(keyed):
        if k not in out and rnd is not None:
            groups.setdefault((frozenset((wk, bk)), rnd), []).append(k)
    for ks in groups.values():
        if len(ks) != 2:
            continue
        drawn = [k for k in ks if keyed[k][0].result == "1/2-1/2"]
        if drawn:
            out.add(ks[1] if drawn[0] == ks[0] else ks[0])
    return out


def round_number(text: str | None) -> int | None:
    """The round's number: ``"5"`` and ``"5.1"`` are 5; None when there is none."""
    if not text:
        return None
    m = re.match(r"\s*(\d+)", text)
    return int(m.group(1)) if m else None


def _known(p: PlayerInfo) -> bool:
    return bool(normalise_name(p.name)) and p.name.strip() not in ("?", "-")


class _Field:
    """The players: key -> the latest information about them; names -> keys."""

    def __init__(self) -> None:
        self.info: dict[str, PlayerInfo] = {}
        self._seen_round: dict[str, int] = {}

    def add(self, p: PlayerInfo, rnd: int) -> str:
        key = player_key(p)
        if rnd >= self._seen_round.get(key, -1):
            self.info[key] = p
            self._seen_round[key] = rnd
        return key

    def resolve(self, name: str) -> str:
        """The key of the player ``name`` designates; a new player when nobody matches."""
        found = match_player(name, self.info)
        if found is not None:
            return found
        key = normalise_name(name) or name
        self.info.setdefault(key, PlayerInfo(name=name))
        return key


def match_player(name: str, players: Mapping[str, PlayerInfo]) -> str | None:
    """The key (of ``players``: key -> player) of the player a configured
    ``name`` designates: a FIDE id, else the same normalised name, else the
    only player whose name contains every word of it; None when nobody (or
    more than one) matches."""
    want = normalise_name(name)
    if name.strip().isdigit():
        fide = f"fide:{name.strip().lstrip('0')}"
        if fide in players:
            return fide
    exact = [k for k, p in players.items() if normalise_name(p.name) == want]
    if len(exact) == 1:
        return exact[0]
    words = set(want.split())
    if words:
        part = [k for k, p in players.items() if words <= set(normalise_name(p.name).split())]
        if len(part) == 1:
            return part[0]
    return None


def field_ratings(players: Mapping[str, PlayerInfo]) -> tuple[dict[str, float], float, int]:
    """Every player's rating for the simulations: his own, else the field's mean
    (:data:`DEFAULT_RATING` when nobody is rated); with that mean and how many
    players have none."""
    known = [float(p.rating) for p in players.values() if p.rating]
    fill = sum(known) / len(known) if known else DEFAULT_RATING
    ratings = {k: float(p.rating) if p.rating else fill for k, p in players.items()}
    return ratings, fill, sum(1 for p in players.values() if not p.rating)


def _byes(key: str, points: float, rounds: int, scoring: Scoring) -> list[Result]:
    """``points`` carried in as byes over ``rounds`` rounds: byes worth a win
    (the smaller win of ``scoring``), one bye for what is left, byes worth 0
    for the other rounds (more byes than rounds when the points need them).
    Each bye is in its round (1, 2, ...) when they fit in ``rounds``, so that a
    Swiss can be simulated to its end from them; else in none."""
    win = scoring.bye_win
    full = int(points // win)
    rest = scoring.tidy(points - full * win)
    worth = [win] * full + ([rest] if rest > 0 else [])
    worth += [0.0] * max(0, rounds - len(worth))
    fits = len(worth) <= rounds
    return [Result.bye(key, w, k if fits else None) for k, w in enumerate(worth, 1)]


def _ratings_of(
    key: str, info: PlayerInfo, played: dict[str, list[tuple[PerceivedModel, tuple[int, int]]]]
) -> tuple[CalibratedRating | None, CalibratedRating | None, PerceivedModel | None, str | None]:
    """(perceived, form, model, label) of a player over his games: those of
    the model of his first game with one (a model combines only its own)."""
    games = played.get(key, [])
    if not games:
        return None, None, None, None
    model = games[0][0]
    sums = [g for m, g in games if m.name == model.name]
    rating = official_rating(info.rating)
    perceived = model.perceived(sums)
    form = model.form(sums, rating)
    shown = rating if rating is not None else (None if perceived is None else perceived.rating)
    return perceived, form, model, model.range_label(shown)


def event_table(
    event: str,
    games: Iterable[GameEntry],
    rules: EventRules,
    prior: RatingsPrior | None = None,
    *,
    teams: bool = False,
) -> EventTable:
    """The standings of ``event`` from its boards ``games``, with the odds of
    finishing first when ``rules`` has a format (see the module docstring).
    ``prior``: the ratings-only W/D/L of games not started (None: the first
    board's human W/D/L model's, else ``rules.draw_rate``). ``teams``: a team
    event (its teams are paired, not its players): the players' standings
    without odds (the teams' are :mod:`livegain.core.team_table`'s)."""
    boards = [g for g in games if _known(g.white) and _known(g.black)]
    if prior is None:
        prior = next((g.prior for g in boards if g.prior is not None), None)
    rounds_seen = [num for g in boards if (num := round_number(g.round)) is not None]
    people = _Field()
    keyed: list[tuple[GameEntry, str, str, int | None]] = []
    for g in boards:
        rnd = round_number(g.round)
        wk = people.add(g.white, rnd or 0)
        bk = people.add(g.black, rnd or 0)
        if wk != bk:
            keyed.append((g, wk, bk, rnd))
    notes: list[str] = []

    finished: list[Result] = []
    live: list[InProgress] = []
    upcoming: list[tuple[str, str]] = []
    playing: set[str] = set()
    met: Counter[frozenset[str]] = Counter()
    on_board: Counter[tuple[frozenset[str], int | None]] = Counter()
    plies = 0
    n_live = 0
    played: dict[str, list[tuple[PerceivedModel, tuple[int, int]]]] = {}
    rule = rules.scoring.armageddon
    armageddon = _armageddon_boards(keyed) if rule is not None else set()
    arm_boards: list[tuple[GameEntry, str, str, int | None]] = []
    for k, (g, wk, bk, rnd) in enumerate(keyed):
        plies += g.plies
        if g.model is not None:
            for key, moves in ((wk, g.white_moves), (bk, g.black_moves)):
                if moves[0] > 0:
                    played.setdefault(key, []).append((g.model, moves))
        if k in armageddon:
            arm_boards.append((g, wk, bk, rnd))
            continue
        pair = frozenset((wk, bk))
        met[pair] += 1
        on_board[(pair, rnd)] += 1
        if g.result in FINISHED:
            finished.append(Result.game(wk, bk, g.result, rnd))
        elif g.plies > 0:
            n_live += 1
            playing.update((wk, bk))
            if g.wdl is not None and sum(g.wdl) > 0:
                live.append((wk, bk, g.wdl))
            else:
                upcoming.append((wk, bk))
        else:
            upcoming.append((wk, bk))
    n_not_started = len(keyed) - len(arm_boards) - len(finished) - n_live
    # Armageddons: a finished one settles its classical draw, the others are left
    arms: list[ArmageddonLeft] = []
    arm_finished = 0
    taken = list(finished)  # the draws with an Armageddon on a board
    for g, wk, bk, rnd in arm_boards:
        k_draw = classical_draw(taken, wk, bk, rnd)
        if k_draw is None:
            notes.append(
                f"Armageddon {g.white.name} - {g.black.name}: no classical draw before it."
            )
            continue
        taken[k_draw] = taken[k_draw].with_armageddon(wk, "1-0")
        if g.result in FINISHED:
            arm_finished += 1
            finished[k_draw] = finished[k_draw].with_armageddon(wk, g.result)
        elif g.plies > 0:
            n_live += 1
            playing.update((wk, bk))
            arms.append((wk, bk, g.wdl if g.wdl is not None and sum(g.wdl) > 0 else None))
        else:
            n_not_started += 1
            arms.append((wk, bk, None))
    if rule is not None:  # a classical draw without its Armageddon on a board: one to come
        arms += [
            (r.white, r.black, None)
            for r, t in zip(finished, taken, strict=True)
            if r.black is not None and r.played and r.white_points == 0.5 and t.armageddon is None
        ]
    before_extra = len(upcoming)

    # pairings of the rules that no board shows yet
    unclaimed, unclaimed_slots = met.copy(), on_board.copy()
    for p in rules.pairings:
        wk, bk = people.resolve(p.white), people.resolve(p.black)
        if wk == bk:
            continue
        pair = frozenset((wk, bk))
        slot = (pair, p.round)
        if p.round is not None and unclaimed_slots[slot] > 0:
            unclaimed_slots[slot] -= 1
            continue
        if p.round is None and unclaimed[pair] > 0:
            unclaimed[pair] -= 1
            continue
        upcoming.append((wk, bk))

    carried = [(people.resolve(name), pts) for name, pts in rules.points_before]
    first_round = min(rounds_seen) if rounds_seen else None
    players = sorted(people.info)
    if rules.format == "round-robin" and not rules.pairings:
        # every board counts as a meeting, finished or not
        for i, a in enumerate(players):
            for b in players[i + 1 :]:
                upcoming.extend([(a, b)] * max(0, rules.cycles - met[frozenset((a, b))]))

    extra = len(upcoming) - before_extra  # games no board shows yet
    byes: list[Result] = []
    if carried:
        before = (first_round - 1) if first_round is not None else 0
        for key, pts in carried:
            byes.extend(_byes(key, pts, before, rules.scoring))
        notes.append(
            "Points from earlier rounds are carried in; tie-breaks count those rounds as unplayed."
        )

    if not rules.scoring.is_standard:
        notes.append(f"Scoring {rules.scoring.label()} (win/draw/loss).")
    order = tiebreak_names(rules.order)
    table = Standings.from_results([*byes, *finished], order, players, rules.scoring)
    n = len(players)
    rounds: int | None = None
    if rules.format == "round-robin" and n > 1:
        rounds = rules.cycles * (n - 1 if n % 2 == 0 else n)

    odds: dict[str, tuple[float, float]] = {}
    tops: dict[str, tuple[float, float]] = {}
    top_k: int | None = None
    sims = 0
    if teams and rules.format is not None:
        notes.insert(0, "A team event: the chances are the teams' (the team standings).")
    elif rules.format == "knockout":
        notes.insert(
            0,
            "Knockout: points over the games played; the chances of going through "
            "and of winning the event are in the bracket (knockout).",
        )
    elif rules.format is not None and n > 0:
        ratings, fill, missing = field_ratings(people.info)
        if missing:
            notes.append(
                f"{missing} player{'s' if missing > 1 else ''} without a rating "
                f"counted at {fill:.0f}."
            )
        current = max(rounds_seen) if rounds_seen else None
        to_end = _swiss_to_end(rules, current, [*byes, *finished], notes)
        if to_end is not None:
            from livegain.core.swiss_odds import swiss_win_odds

            sims = rules.sims or SWISS_SIMS
            swiss = swiss_win_odds(
                players,
                ratings,
                [*byes, *finished],
                live,
                upcoming,
                round=to_end[0],
                rounds_total=to_end[1],
                sims=sims,
                seed=rules.seed,
                top_k=min(rules.top_k, n),
                tiebreaks=order,
                draw_rate=rules.draw_rate,
                prior=prior,
                precision=rules.precision,
            )
            sims = swiss.sims
            odds = {k: (c.p_first, c.se_first) for k, c in swiss.items()}
            tops = {k: (c.p_top, c.se_top) for k, c in swiss.items()}
            top_k = min(rules.top_k, n)
            rounds = to_end[1]
        else:
            from livegain.core.tournament_odds import win_odds

            sims = rules.sims or DEFAULT_SIMS
            chances = win_odds(
                players,
                ratings,
                [*byes, *finished],
                live,
                upcoming,
                sims=sims,
                seed=rules.seed,
                tiebreaks=order,
                playoff=rules.playoff,
                draw_rate=rules.draw_rate,
                prior=prior,
                scoring=rules.scoring,
                armageddons=arms,
            )
            odds = {k: (c.p, c.stderr) for k, c in chances.items()}
        if rules.format == "swiss" and to_end is None:
            which = f"round {current}" if current is not None else "the current round"
            notes.insert(
                0,
                f"Swiss: only {which} is simulated; the chances are of leading "
                "after it, not of winning the event.",
            )
    else:
        notes.insert(0, "Standings only: the event has no [[events]] entry, so no odds.")

    rows: list[TableRow] = []
    for r in table.rows:
        info = people.info[r.player]
        chance = odds.get(r.player)
        top = tops.get(r.player)
        perceived, form, model, label = _ratings_of(r.player, info, played)
        rows.append(
            TableRow(
                rank=r.rank,
                key=r.player,
                name=info.name,
                title=info.title,
                federation=info.federation,
                rating=info.rating,
                fide_id=info.fide_id,
                points=r.points,
                games=r.rounds,
                tiebreaks=tuple((_SHORT[tb], v) for tb, v in zip(order, r.tiebreaks, strict=True)),
                win=None if chance is None else chance[0],
                win_se=None if chance is None else chance[1],
                live=r.player in playing,
                perceived=perceived,
                form=form,
                model=model,
                label=label,
                top=None if top is None else top[0],
                top_se=None if top is None else top[1],
            )
        )
    return EventTable(
        event=event,
        format=rules.format,
        round=max(rounds_seen) if rounds_seen else None,
        rounds=rounds,
        tiebreaks=tuple(_SHORT[tb] for tb in order),
        playoff=rules.playoff if rules.format not in (None, "knockout") else None,
        rows=tuple(rows),
        sims=sims,
        finished=len(finished) + arm_finished,
        live=n_live,
        upcoming=n_not_started + extra,
        plies=plies,
        notes=tuple(notes),
        top_k=top_k,
    )


def _swiss_to_end(
    rules: EventRules, current: int | None, results: list[Result], notes: list[str]
) -> tuple[int, int] | None:
    """(current round, rounds in all) when a Swiss is simulated to its last
    round, else None (with the reason in ``notes`` when it is not obvious):
    the rounds in all must be known, the boards must carry round numbers, and
    the scoring must be the standard one."""
    if rules.format != "swiss" or rules.rounds is None:
        return None
    if current is None or any(r.round is None for r in results):
        notes.append("The boards carry no round numbers: the Swiss is not simulated to its end.")
        return None
    if current > rules.rounds:
        notes.append(f"Round {current} is past the {rules.rounds} rounds configured.")
        return None
    if not rules.scoring.is_standard:
        notes.append("A Swiss with custom scoring is simulated for the current round only.")
        return None
    return current, rules.rounds
