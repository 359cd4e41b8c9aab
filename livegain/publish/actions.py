"""What the hub asks its adapter to do (sans-I/O): send a message to clients,
close a connection, or take the whole board list (for retained copies)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

C = TypeVar("C", bound=Hashable)


@dataclass(frozen=True, slots=True, eq=False)
class Send(Generic[C]):
    """Write ``data`` (a serialised server message, JSON text) to each client."""

    clients: Sequence[C]
    data: bytes
    board_id: str | None = None
    """The board this message is about: not written to a client stale for it
    (:meth:`Hub.recipients`), nor to one above the soft backlog (report it
    with :meth:`Hub.lagging`)."""
    board_list: bool = False
    """A board-list message (``boards_diff``, a ``boards`` page): the same
    checks, the client being stale for the list. Messages with none of these
    (hello, pong, error) are always written."""
    standings: str | None = None
    """The event whose ``standings`` message this is: the same checks, the
    client being stale for that event's standings (the latest on resync)."""

    @property
    def checked(self) -> bool:
        """Whether the stale and backlog checks apply to this message."""
        return self.board_id is not None or self.board_list or self.standings is not None


@dataclass(frozen=True, slots=True)
class Close(Generic[C]):
    """Close ``client``'s connection: with ``code`` and ``reason``, or at once
    (``abort``: its write buffer is full, a close frame would wait behind it)."""

    client: C
    code: int
    reason: str
    abort: bool = False


@dataclass(frozen=True, slots=True)
class BoardsChanged:
    """The board list changed (a ``boards_diff`` went out): ``page()`` gives
    the whole list, a ``boards`` message with ``reset`` true (built only when
    called: at 2,000 boards it is a line per board)."""

    page: Callable[[], bytes]


Action = Send[C] | Close[C] | BoardsChanged
