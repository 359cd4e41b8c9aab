"""Which board a snapshot belongs to: the index keys a board is found under."""

from __future__ import annotations

from livegain.core.board.board import BoardGame
from livegain.core.board.identity import (
    UNKNOWN_NAMES,
    PlayerKey,
    is_known,
)

IndexKey = tuple[str, str | int]  # (kind, value): see board_keys


def side_keys(side: str, p: PlayerKey) -> list[IndexKey]:
    """The index keys of player ``p`` on ``side`` (``w``/``b``): their FIDE id and
    their name, or the one key of an unknown player. Two players that
    :func:`player_match` finds the same share one of these keys."""
    if not is_known(p):
        return [(side + "?", "")]
    fide, name = p
    keys: list[IndexKey] = []
    if fide:
        keys.append((side + "f", fide))
    if name not in UNKNOWN_NAMES:
        keys.append((side + "n", name))
    return keys


def board_keys(g: BoardGame) -> frozenset[IndexKey]:
    """Every key a snapshot may find board ``g`` under: its sources, its event
    group, its players and board numbers, as the board has them and as each
    source last named the game."""
    keys: set[IndexKey] = {("s", g.source)}
    keys.update(("s", src) for src in g.seen_as)
    if g.group is not None:
        keys.add(("g", g.group))
    names = [(g.white_key, g.black_key, g.board)]
    names.extend((w, b, board) for w, b, _, board in g.seen_as.values())
    for white, black, board in names:
        keys.update(side_keys("w", white))
        keys.update(side_keys("b", black))
        if board is not None:
            keys.add(("n", board))
    return frozenset(keys)


def indexed_names(g: BoardGame) -> tuple[object, ...]:
    """What of board ``g`` :func:`board_keys` reads, but for ``seen_as``."""
    return (g.white_key, g.black_key, g.board, g.group)
