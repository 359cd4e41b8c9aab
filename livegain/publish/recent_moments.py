"""The latest key moments, kept for the viewers who come later (sans-I/O).

A ``moment`` message (a blunder, a missed win, a turnaround, time trouble, a
game's end) is sent when it happens; a viewer who connects, or subscribes to
a board, afterwards would never see it. :class:`RecentMoments` keeps the
latest :data:`KEPT` of them across all boards, in the order they happened,
each as its serialised message (the very bytes every viewer gets):

- the hub (:mod:`livegain.publish.hub`) sends a client that subscribes to
  boards the kept moments of those boards, after their snapshots, and again
  with a lagging client's resync;
- the MQTT publisher (:mod:`livegain.publish.mqtt`) keeps them retained on
  ``{prefix}/moments`` (:meth:`RecentMoments.payload`: one message per
  line), from which a gateway (:mod:`livegain.publish.replica`) gets the
  moments that happened before it started, and each new one.

A moment already kept (the same bytes) is not kept again. A removed board's
moments are forgotten.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Container

KEPT = 50
"""Moments kept, across all boards (the oldest go first)."""


class RecentMoments:
    """The latest ``kept`` moments, as (board id, serialised ``moment`` message)."""

    def __init__(self, kept: int = KEPT) -> None:
        self._items: deque[tuple[str, bytes]] = deque(maxlen=kept)

    def __len__(self) -> int:
        return len(self._items)

    def add(self, board_id: str, data: bytes) -> bool:
        """Keep a moment; False (nothing kept) when it is kept already."""
        if any(d == data for _, d in self._items):
            return False
        self._items.append((board_id, data))
        return True

    def items(self) -> list[tuple[str, bytes]]:
        """Every kept moment, oldest first."""
        return list(self._items)

    def of(self, boards: Container[str]) -> list[tuple[str, bytes]]:
        """The kept moments of ``boards``, oldest first."""
        return [(b, d) for b, d in self._items if b in boards]

    def remove_board(self, board_id: str) -> bool:
        """Forget the board's moments; whether it had any."""
        kept = [(b, d) for b, d in self._items if b != board_id]
        if len(kept) == len(self._items):
            return False
        self._items.clear()
        self._items.extend(kept)
        return True

    def payload(self) -> bytes:
        """The kept moments as one MQTT payload: one message per line (a JSON
        message holds no raw newline)."""
        return b"\n".join(d for _, d in self._items)


def payload_lines(payload: bytes) -> list[bytes]:
    """The messages of a :meth:`RecentMoments.payload`."""
    return [line for line in payload.split(b"\n") if line.strip()]
