"""What feeds hand to the core: snapshots of games as a feed last saw them.

Every feed (PGN over HTTP, LiveChess Cloud JSON, MQTT, a watched file, a
replay) turns what it reads into :class:`GameSnapshot` values. The core's game
state machine matches snapshots to boards and works out what changed
(new moves, corrections, takebacks, results).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class PlayerInfo:
    name: str
    title: str | None = None
    federation: str | None = None
    rating: int | None = None
    fide_id: str | None = None


@dataclass(frozen=True)
class GameSnapshot:
    """One game as a feed saw it at one poll (or one MQTT message).

    ``moves`` are SAN (or UCI) strings from the start position (or ``initial_fen``).
    ``clocks`` has one entry per move: seconds left for the mover after that
    move, or None where the feed gave none. ``result`` is one of
    ``1-0``, ``0-1``, ``1/2-1/2``, ``*``.
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
