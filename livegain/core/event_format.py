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
  else with more players than rounds is a Swiss.

Each gives an :class:`EventFormat` with the reason, shown on ``/healthz``;
None when it cannot tell (the standings are then those of a Swiss: no games
beyond the boards are simulated).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

FormatName = Literal["round-robin", "swiss", "knockout", "team"]

_ROUND_ROBIN = re.compile(r"round[\s-]*robin|all[\s-]*play[\s-]*all|\brr\b", re.IGNORECASE)
_DOUBLE = re.compile(r"double|2[\s-]*cycles?|two[\s-]*cycles?", re.IGNORECASE)
_SWISS = re.compile(r"swiss", re.IGNORECASE)
_KNOCKOUT = re.compile(r"knock[\s-]*out|\bk\.?o\.?\b|elimination|bracket", re.IGNORECASE)
_TEAM = re.compile(r"\bteams?\b|olympiad", re.IGNORECASE)


@dataclass(frozen=True)
class EventFormat:
    """A format read from a source: its name, cycles (a round robin's), and why."""

    format: FormatName
    cycles: int = 1
    why: str = ""


def format_from_text(text: str | None) -> EventFormat | None:
    """The format a written description names (None: it names none)."""
    if not text:
        return None
    said = f"the source says {text.strip()[:80]!r}"
    if _KNOCKOUT.search(text):
        return EventFormat("knockout", why=said)
    if _ROUND_ROBIN.search(text):
        return EventFormat("round-robin", 2 if _DOUBLE.search(text) else 1, said)
    if _SWISS.search(text):
        return EventFormat("team" if _TEAM.search(text) else "swiss", why=said)
    if _TEAM.search(text):
        return EventFormat("team", why=said)
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
