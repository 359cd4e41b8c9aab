"""An event's format as its source tells it: round robin or Swiss, and why.

Pure rules, each a function of what a source gives (docs/watch.md, "What is
read from where"):

* :func:`format_from_text`: a format written out, as a Lichess tournament's
  ``info.format`` (``"10-player round robin"``, ``"9-round Swiss"``,
  ``"Double round robin"``, ``"Knockout"``);
* :func:`format_from_counts`: the number of rounds against the number of
  players (a LiveChess Cloud tournament lists its rounds; its first round's
  pairings give the players): a round robin has ``n - 1`` rounds for ``n``
  players (``n`` when ``n`` is odd), twice that for a double one; anything
  else with more players than rounds is a Swiss;
* :func:`format_from_round_names`: a knockout when a round's name speaks of
  its tie-breaks (``"Round 3 Tiebreaks"``, ``"Tie-break games"``). An
  Armageddon alone does not make a knockout: Norway Chess plays one after
  each drawn classical game of its round robin;
* :func:`format_from_pairings`: a knockout from the games' ``Round`` tags and
  players: tags ``"R.G"`` whose second number is the game of a mini-match
  (several pairs of round R carry the same ``"R.1"``, where a round robin or
  a Swiss numbers its boards ``"R.B"``, one pair each), each player meeting
  one opponent in a round, some pair playing more than one game in a round
  (game 2 has started), and no pair meeting in two rounds. Until a second
  game of a match is on the boards, a knockout looks like any other event
  (configure it: ``[[events]] format = "knockout"``).

Each gives an :class:`EventFormat` with the reason, shown on ``/healthz``;
None when it cannot tell (the standings are then those of a Swiss: no games
beyond the boards are simulated).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

FormatName = Literal["round-robin", "swiss", "knockout"]

_ROUND_ROBIN = re.compile(r"round[\s-]*robin|all[\s-]*play[\s-]*all|\brr\b", re.IGNORECASE)
_DOUBLE = re.compile(r"double|2[\s-]*cycles?|two[\s-]*cycles?", re.IGNORECASE)
_SWISS = re.compile(r"swiss", re.IGNORECASE)
_KNOCKOUT = re.compile(r"knock[\s-]*out|\bk\.?o\.?\b|elimination|bracket", re.IGNORECASE)
_TEAM = re.compile(r"\bteams?\b|olympiad", re.IGNORECASE)
_TIEBREAK = re.compile(r"tie[\s-]*breaks?", re.IGNORECASE)
_ROUND_GAME = re.compile(r"\s*(\d+)\.(\d+)\s*$")


@dataclass(frozen=True)
class EventFormat:
    """A format read from a source: its name (how its games, or its team
    matches, are paired), cycles (a round robin's), why, and whether the source
    says it is a team event (the teams are paired, not the players)."""

    format: FormatName
    cycles: int = 1
    why: str = ""
    teams: bool = False


def format_from_text(text: str | None) -> EventFormat | None:
    """The format a written description names (None: it names none)."""
    if not text:
        return None
    said = f"the source says {text.strip()[:80]!r}"
    if _KNOCKOUT.search(text):
        return EventFormat("knockout", why=said)
    teams = bool(_TEAM.search(text))  # "4-team round robin": the teams play all-play-all
    if _ROUND_ROBIN.search(text):
        return EventFormat("round-robin", 2 if _DOUBLE.search(text) else 1, said, teams)
    if _SWISS.search(text) or teams:  # a team event without its system: the Olympiad's Swiss
        return EventFormat("swiss", why=said, teams=teams)
    return None


def format_from_counts(rounds: int, players: int) -> EventFormat | None:
    """The format the numbers of rounds and players point to (None: unknown)."""
    if rounds < 1 or players < 2:
        return None
    single = players - 1 if players % 2 == 0 else players
    counted = f"{rounds} rounds for {players} players"
    if rounds == single:
        return EventFormat("round-robin", 1, f"{counted}: a round robin")
    if rounds == 2 * single:
        return EventFormat("round-robin", 2, f"{counted}: a double round robin")
    if players > rounds + 1:
        return EventFormat("swiss", 1, f"{counted}: a Swiss")
    return None


def format_from_round_names(names: Iterable[str | None]) -> EventFormat | None:
    """A knockout when a round's name speaks of tie-breaks (None: no such name)."""
    for name in names:
        if name and _TIEBREAK.search(name):
            return EventFormat("knockout", why=f"a round is named {name.strip()[:80]!r}")
    return None


def format_from_pairings(games: Iterable[tuple[str | None, str, str]]) -> EventFormat | None:
    """A knockout from its games' (``Round`` tag, White, Black) (players by any
    key that is one per player), by the rule of the module docstring; None
    when the games do not show one."""
    pairs_of_tag: dict[tuple[int, int], set[frozenset[str]]] = defaultdict(set)
    opponents: dict[tuple[int, str], set[str]] = defaultdict(set)
    games_of_pair: dict[tuple[int, frozenset[str]], set[int]] = defaultdict(set)
    rounds_of_pair: dict[frozenset[str], set[int]] = defaultdict(set)
    for tag, white, black in games:
        m = _ROUND_GAME.match(tag or "")
        if m is None or white == black:
            continue
        rnd, game = int(m.group(1)), int(m.group(2))
        pair = frozenset((white, black))
        pairs_of_tag[(rnd, game)].add(pair)
        opponents[(rnd, white)].add(black)
        opponents[(rnd, black)].add(white)
        games_of_pair[(rnd, pair)].add(game)
        rounds_of_pair[pair].add(rnd)
    if not pairs_of_tag:
        return None
    if any(len(v) > 1 for v in opponents.values()):
        return None  # a player meets several opponents in a round
    if any(len(v) > 1 for v in rounds_of_pair.values()):
        return None  # a pair meets again in another round
    if not any(len(v) > 1 for v in pairs_of_tag.values()):
        return None  # each tag one pair: board numbers
    repeated = [(rnd, len(g)) for (rnd, _), g in games_of_pair.items() if len(g) > 1]
    if not repeated:
        return None
    return EventFormat(
        "knockout",
        why=f"Round tags R.G: in round {repeated[0][0]} a pair plays {repeated[0][1]} games, "
        "each player one opponent a round",
    )
