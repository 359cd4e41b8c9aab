"""What feeds hand to the core: snapshots of games as a feed last saw them.

Every feed (PGN over HTTP, LiveChess Cloud JSON, MQTT, a watched file, a
replay) turns what it reads into :class:`GameSnapshot` values. The core's game
state machine matches snapshots to boards and works out what changed
(new moves, corrections, takebacks, results).

:func:`player_key` is how a player is told apart across games and sources:
the FIDE id when there is one, else the normalised name.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass, field

__all__ = [
    "RATING_RANGE",
    "GameSnapshot",
    "PlayerInfo",
    "normalise_name",
    "official_rating",
    "player_key",
]

#: Official ratings (Elo) a source may give; anything else is no rating.
RATING_RANGE = (1, 3999)


@dataclass(frozen=True)
class PlayerInfo:
    name: str
    title: str | None = None
    federation: str | None = None
    rating: int | None = None
    fide_id: str | None = None


def official_rating(value: object) -> int | None:
    """A player's rating as a source gives it (a PGN tag ``"2750"``, a JSON
    number): a whole number in :data:`RATING_RANGE`, else None. ``"-"``,
    ``"?"``, ``"0"``, ``"2750.5"``, ``"1e999"``, ``10**400``, NaN and ``True``
    are no rating; the text is never converted beyond four digits."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        n = value
    elif isinstance(value, str):
        text = value.strip()
        if not (0 < len(text) <= 4 and text.isascii() and text.isdigit()):
            return None
        n = int(text)
    else:
        return None
    return n if RATING_RANGE[0] <= n <= RATING_RANGE[1] else None


@functools.lru_cache(maxsize=8192)  # the same names come in every poll
def normalise_name(name: str) -> str:
    """A name as players are compared: accents, case, punctuation and word order
    ignored (``"Carlsen,  Magnus"`` = ``"magnus carlsen"`` = ``"carlsen magnus"``)."""
    text = unicodedata.normalize("NFKD", name)
    text = "".join(c for c in text if not unicodedata.combining(c)).casefold()
    return " ".join(sorted(re.sub(r"[^\w]+", " ", text).split()))


def fide_id_of(p: PlayerInfo) -> str:
    """The player's FIDE id without spaces or leading zeros; ``""`` when there is none."""
    raw = (p.fide_id or "").strip()
    if raw.isascii() and raw.isdigit():
        raw = raw.lstrip("0")
    return raw


def player_key(p: PlayerInfo) -> str:
    """One string per player: ``"fide:1503014"`` when the FIDE id is known, else the
    normalised name (:func:`normalise_name`). Name variants with the same FIDE id
    (``"Praggnanandhaa, R"``, ``"Rameshbabu Praggnanandhaa"``) are one player."""
    fide = fide_id_of(p)
    return f"fide:{fide}" if fide else normalise_name(p.name)


@dataclass(frozen=True)
class GameSnapshot:
    """One game as a feed saw it at one poll (or one MQTT message).

    ``moves`` are SAN (or UCI) strings from the start position (or ``initial_fen``).
    ``clocks`` has one entry per move: seconds left for the mover after that
    move, or None where the feed gave none. ``result`` is one of
    ``1-0``, ``0-1``, ``1/2-1/2``, ``*``.

    A feed that meets an illegal move followed by more moves keeps the legal
    prefix in ``moves`` and may pass the rest on, as it came, in
    ``after_illegal`` (from the illegal move on). ``fens`` has, per ply of
    ``moves + after_illegal``, the position after that ply as the feed reports
    it (a FEN, or its piece placement only), or None: the core uses it to go on
    from a move it cannot play (an illegal move that stood over the board).

    Sources: ``group`` names the event a feed carries when several feeds carry
    the same one (the same game from two sources is one board); ``priority``
    orders them (0 first); ``takeover_after`` is how many seconds this source
    waits, while it shows more than the board, before it takes the board over
    from a source that no longer moves it on. ``received_at`` is when the
    snapshot arrived (seconds on the service's monotonic clock; not compared).
    """

    source: str
    white: PlayerInfo
    black: PlayerInfo
    moves: tuple[str, ...] = ()
    clocks: tuple[int | None, ...] = ()
    result: str = "*"
    game_id: str | None = None
    event: str | None = None
    round: str | None = None
    board: int | None = None
    initial_fen: str | None = None
    tags: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    clock_white: int | None = None
    clock_black: int | None = None
    after_illegal: tuple[str, ...] = ()
    fens: tuple[str | None, ...] = ()
    group: str | None = None
    priority: int = 0
    takeover_after: float | None = None
    received_at: float | None = field(default=None, compare=False)

    @property
    def tokens(self) -> tuple[str, ...]:
        """``moves`` then ``after_illegal``: every move the feed saw, in order."""
        return self.moves + self.after_illegal if self.after_illegal else self.moves
