"""The player table of an event: per player, what his games of the event say.

For each player of an event's standings (docs/standings.md, "Player table"),
from his finished games on the event's boards:

* ``performance``: his results-based performance rating, FIDE's ``Ra + dp``
  (:func:`livegain.core.elo.performance_rating`, table 8.1(a)) over his
  games against rated opponents;
* ``rating_change``: his rating change by FIDE's rules,
  ``sum K * (S - E)`` (:func:`livegain.core.elo.rating_change`, the 400-point
  rule included) over the same games, with ``K``
  (:func:`livegain.core.elo.fide_k`) from his rating and what is known of him
  (:class:`PlayerFacts`, the ``[events.players]`` entries of the
  configuration): the rated games he had played before the event (fewer than
  30: K = 40; unknown: taken as 30 or more), his year of birth (a junior,
  under 2300, until the end of the year of his 18th birthday: K = 40),
  whether he ever reached 2400 (K = 10), or a K given outright; FIDE's
  ``K * n <= 700`` rule is applied to the event's ``n`` rated games. An
  unrated player, or one without a finished game against a rated opponent,
  has neither (None);
* ``accuracy``: his accuracy over the event, the plain mean of his games'
  accuracies (:func:`livegain.core.accuracy.mean_accuracy`, lichess's
  method per game), games in progress included.

The perceived rating and the form over the event are the standings rows'
(:mod:`livegain.core.event_table`). Pure: no I/O, no clock (the year a
junior's age is counted in is given).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from livegain.core.accuracy import PlayerAccuracy, mean_accuracy
from livegain.core.elo import fide_k, performance_rating, rating_change
from livegain.core.event_table import FINISHED, GameEntry, match_player
from livegain.core.snapshot import PlayerInfo, player_key

ESTABLISHED_GAMES = 30
"""FIDE: a player is new to the list (K = 40) until he has played this many rated games."""
JUNIOR_AGE = 18
"""FIDE: K = 40 until the end of the year of this birthday (rating under 2300)."""

_SCORES = {"1-0": (1.0, 0.0), "0-1": (0.0, 1.0), "1/2-1/2": (0.5, 0.5)}


@dataclass(frozen=True)
class PlayerFacts:
    """What is known of a player beyond the feed (an ``[events.players]`` entry)."""

    games: int | None = None
    """Rated games played before the event (None: unknown, taken as established)."""
    born: int | None = None
    """Year of birth (None: unknown, not a junior)."""
    ever_2400: bool = False
    """His published rating once reached 2400 (K = 10 for good)."""
    k: int | None = None
    """K given outright (wins over the rules)."""


NO_FACTS = PlayerFacts()


@dataclass(frozen=True)
class PlayerLine:
    """One player's figures over the event (see the module docstring)."""

    key: str
    rated_games: int
    """Finished games against rated opponents (those performance and rating change count)."""
    performance: float | None
    k: int | None
    rating_change: float | None
    accuracy: PlayerAccuracy


def k_factor(rating: float, facts: PlayerFacts, year: int | None, games_in_period: int) -> int:
    """FIDE's K for a player rated ``rating`` with ``facts``, in ``year``."""
    if facts.k is not None:
        return facts.k
    junior = facts.born is not None and year is not None and year - facts.born <= JUNIOR_AGE
    return fide_k(
        rating,
        games_played=ESTABLISHED_GAMES if facts.games is None else facts.games,
        junior=junior,
        ever_2400=facts.ever_2400,
        games_in_period=games_in_period,
    )


def player_line(
    key: str,
    rating: int | None,
    games: Iterable[tuple[int | None, float]],
    accuracies: Iterable[PlayerAccuracy],
    facts: PlayerFacts = NO_FACTS,
    year: int | None = None,
) -> PlayerLine:
    """A player's line from his finished games ``(opponent's rating, score)``
    and his games' accuracies."""
    rated = [(float(opp), s) for opp, s in games if opp]
    acc = mean_accuracy([a for a in accuracies if a.moves > 0])
    if not rated:
        return PlayerLine(key, 0, None, None, None, acc)
    opponents = [o for o, _ in rated]
    scores = [s for _, s in rated]
    perf = performance_rating(opponents, scores, "fide").rating
    if not rating:
        return PlayerLine(key, len(rated), perf, None, None, acc)
    k = k_factor(rating, facts, year, len(rated))
    change = rating_change(rating, opponents, scores, k).change
    return PlayerLine(key, len(rated), perf, k, change, acc)


def resolve_facts(
    configured: Mapping[str, PlayerFacts], players: Mapping[str, PlayerInfo]
) -> dict[str, PlayerFacts]:
    """Configured facts by player name (or FIDE id) -> by the key of the
    player it designates (:func:`livegain.core.event_table.match_player`);
    names that match nobody are left out."""
    out: dict[str, PlayerFacts] = {}
    for name, facts in configured.items():
        key = match_player(name, players)
        if key is not None:
            out[key] = facts
    return out


def player_table(
    entries: Iterable[GameEntry],
    ratings: Mapping[str, int | None],
    facts: Mapping[str, PlayerFacts] | None = None,
    year: int | None = None,
) -> dict[str, PlayerLine]:
    """Each player's line (key -> line) for the players of ``ratings`` (key ->
    his official rating, as the standings have it), from the event's boards
    ``entries``; ``facts`` by player key."""
    games: dict[str, list[tuple[int | None, float]]] = {k: [] for k in ratings}
    accs: dict[str, list[PlayerAccuracy]] = {k: [] for k in ratings}
    for g in entries:
        wk, bk = player_key(g.white), player_key(g.black)
        if wk == bk:
            continue
        if g.accuracy is not None:
            for key, acc in ((wk, g.accuracy.white), (bk, g.accuracy.black)):
                if key in accs:
                    accs[key].append(acc)
        if g.result not in FINISHED:
            continue
        ws, bs = _SCORES[g.result]
        if wk in games:
            games[wk].append((g.black.rating, ws))
        if bk in games:
            games[bk].append((g.white.rating, bs))
    known = facts or {}
    return {
        key: player_line(key, rating, games[key], accs[key], known.get(key, NO_FACTS), year)
        for key, rating in ratings.items()
    }
