"""Who plays a game and where: player keys, when two players are the same,
round and board numbers, board slugs and how a game is named in messages."""

from __future__ import annotations

import re
import unicodedata

from livegain.core.snapshot import (
    GameSnapshot,
    PlayerInfo,
    fide_id_of,
    normalise_name,
)

UNKNOWN_NAMES = frozenset({"", "?", "nn", "n n", "unknown", "bye", "tbd", "-"})

PlayerKey = tuple[str, str]  # (FIDE id or "", normalised name)
Identity = tuple[PlayerKey, PlayerKey, str | None, int | None]  # players, round, board


def player_key_pair(p: PlayerInfo) -> PlayerKey:
    """Both halves of a player's identity; :func:`player_key` is the one-string form."""
    return (fide_id_of(p), normalise_name(p.name))


def is_known(p: PlayerInfo | PlayerKey) -> bool:
    fide, name = player_key_pair(p) if isinstance(p, PlayerInfo) else p
    return bool(fide) or name not in UNKNOWN_NAMES


def same_player(a: PlayerKey, b: PlayerKey) -> bool:
    if a[0] and b[0]:
        return a[0] == b[0]
    return a[1] == b[1] and a[1] not in UNKNOWN_NAMES


def player_match(a: PlayerKey, b: PlayerKey) -> int:
    """2: the same known player; 1: one of them unknown (not yet entered); 0: different."""
    if not is_known(a) or not is_known(b):
        return 1
    return 2 if same_player(a, b) else 0


def board_slug(text: str, limit: int = 40) -> str:
    """Lowercase ASCII letters, digits and single ``-``; at most ``limit`` chars."""
    t = unicodedata.normalize("NFKD", text)
    t = t.encode("ascii", "ignore").decode("ascii").lower()
    t = re.sub(r"[^a-z0-9]+", "-", t).strip("-")
    return t[:limit].strip("-") or "x"


def surname(p: PlayerInfo) -> str:
    name = p.name.strip()
    if "," in name:
        return name.split(",", 1)[0]
    parts = name.split()
    return parts[-1] if parts else "nn"


def identity(snap: GameSnapshot) -> Identity:
    """How a snapshot names its game: both players' keys, round and board number."""
    rnd, board = round_board(snap)
    return (player_key_pair(snap.white), player_key_pair(snap.black), rnd, board)


def positive_number(text: str | None) -> int | None:
    """A positive whole number written in ASCII digits (at most 12), else None.
    (``"²".isdigit()`` is true, but no feed means a number by it.)"""
    if text is None:
        return None
    v = text.strip()
    if not _digits(v):
        return None
    n = int(v)
    return n if n > 0 else None


def split_round(round_text: str | None, board: int | None) -> tuple[str | None, int | None]:
    """A round as feeds write it -> (round, board): ``"3.5"`` and ``"R1.5"`` are
    round ``3`` / ``R1``, board 5 (``"3.0"``: round 3, no board); a board number
    given apart wins for the board. ``""``, ``"?"`` and ``"-"`` are no round. A
    round with anything but digits after its dot (``"3.²"``, ``"1.2.3"``) stays
    whole, with no board from it."""
    rnd = round_text.strip() if round_text else None
    if rnd in ("", "?", "-"):
        rnd = None
    if rnd is not None:
        head, sep, tail = rnd.partition(".")
        if sep and head.strip() and _digits(tail):
            rnd = head.strip()
            if board is None:
                board = positive_number(tail)
    return rnd, board


def _digits(text: str) -> bool:
    return 0 < len(text) <= 12 and text.isascii() and text.isdigit()


def round_board(snap: GameSnapshot) -> tuple[str | None, int | None]:
    """The round and board number a snapshot names its game by (:func:`split_round`)."""
    return split_round(snap.round, snap.board)


def describe_snapshot(snap: GameSnapshot) -> str:
    """How refusals name a game: ``'Carlsen - Giri' (round 3, board 5, GameId 12)``."""
    where = f"{snap.white.name.strip() or '?'} - {snap.black.name.strip() or '?'}"
    extra = []
    if snap.round:
        extra.append(f"round {snap.round}")
    if snap.board is not None:
        extra.append(f"board {snap.board}")
    if snap.game_id:
        extra.append(f"GameId {snap.game_id}")
    return repr(where[:120]) + (f" ({', '.join(extra)})" if extra else "")
