"""What the service publishes, as one value, and the chain it goes through
(docs/service.md, "Publication").

A change of state (a board's moves, evaluations or players; a key moment;
an event's standings; a board leaving; the board list) becomes one
:class:`Publication`, built once where the state changes: its kind (a closed
set, :class:`Kind`), its key (the board's id, the event's name), its encoded
message (built once: the consumers all send the same bytes) and the time
from which viewers may see it (``at`` plus ``delay``).

It then passes through one chain of steps (each a :class:`Step` that hands
it, or what it makes of it, to the next): the broadcast delay holds it until
its time (:mod:`livegain.app.broadcast_delay`), and the outputs, last, send it to
viewers (:class:`~livegain.publish.server.LiveServer`: the WebSocket hub and
``/api``; :class:`~livegain.publish.mqtt.MqttPublisher`). A step that does
not read a kind's content passes it on as it is: a new kind of message
touches only the code that builds it and the consumers that read it.

The gateway's replica (:mod:`livegain.publish.replica`) reads the same
messages back from the MQTT topics (:mod:`livegain.mqtt.topics`), each kind
on its own topic, into publications of the same kinds, which the gateway's
server takes as the service's does (:meth:`LiveServer.deliver
<livegain.publish.server.LiveServer.deliver>`)."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Protocol

from livegain.publish.entry import BoardEntry
from livegain.publish.schema import Update


class Kind(enum.Enum):
    """The kinds of publication (docs/protocol/README.md names their messages)."""

    BOARD = "board"
    """A board changed: its ``update`` messages, or its whole ``snapshot``
    (a new board, new players, a reset)."""
    MOMENT = "moment"
    """A ``moment`` message (a key moment of a board's game)."""
    STANDINGS = "standings"
    """An event's ``standings`` message."""
    REMOVAL = "removal"
    """A board leaves the public view (a ``removed`` diff; its retained state cleared)."""
    BOARD_LIST = "boards"
    """The board list changed: the whole list (a ``boards`` message), for the
    outputs that keep it (MQTT, retained). Built from what viewers already
    see: it is never delayed again."""


@dataclass(frozen=True, slots=True)
class Publication:
    """One change viewers are to see; build it with the class methods.

    ``at``: when it was made (wall-clock seconds); viewers may see it
    ``delay`` seconds later (0: at once). ``data``: the message of a
    ``MOMENT`` or ``STANDINGS``. ``board`` (``BOARD``): the board after the
    change, its state and ``snapshot`` serialised once, when first needed;
    ``updates`` and ``encoded`` (``BOARD`` unless ``whole``): the ``update``
    messages and their bytes. ``page`` (``BOARD_LIST``): builds the ``boards``
    message, only for an output that needs it. ``at_once`` (``REMOVAL``): an
    operator's removal, which goes out now and takes what is held of the
    board with it."""

    kind: Kind
    key: str
    at: float
    delay: int = 0
    data: bytes = b""
    board: BoardEntry | None = None
    whole: bool = False
    updates: tuple[Update, ...] = ()
    encoded: tuple[bytes, ...] = field(default=(), repr=False)
    page: Callable[[], bytes] | None = field(default=None, repr=False)
    at_once: bool = False

    @property
    def shown_from(self) -> float:
        """The earliest time viewers may see it."""
        return self.at + self.delay

    @property
    def message(self) -> bytes:
        """The message of a kind that carries one (``data``; the board list's
        built now)."""
        return self.page() if self.page is not None else self.data

    @property
    def entry(self) -> BoardEntry:
        """The board after a ``BOARD`` publication."""
        if self.board is None:
            raise ValueError(f"a {self.kind.value} publication carries no board")
        return self.board

    @classmethod
    def board_change(
        cls,
        board_id: str,
        board: BoardEntry,
        updates: tuple[Update, ...] = (),
        *,
        whole: bool = False,
        at: float,
        delay: int = 0,
        encoded: tuple[bytes, ...] | None = None,
    ) -> Publication:
        """Board ``board_id`` changed: ``updates`` (each encoded here, once,
        unless ``encoded`` gives their bytes already: an update held by the
        broadcast delay) lead to ``board``; ``whole``: its subscribers get a
        snapshot instead."""
        if whole:
            updates, encoded = (), ()
        if encoded is None:
            encoded = tuple(u.model_dump_json().encode() for u in updates)
        elif len(encoded) != len(updates):
            raise ValueError(f"{len(updates)} updates, {len(encoded)} encoded")
        return cls(
            Kind.BOARD,
            board_id,
            at,
            delay,
            board=board,
            whole=whole,
            updates=updates,
            encoded=encoded,
        )

    def as_whole(self) -> Publication:
        """This board change sent as the board's whole snapshot."""
        return replace(self, whole=True, updates=(), encoded=())

    @classmethod
    def moment(cls, board_id: str, data: bytes, *, at: float, delay: int = 0) -> Publication:
        return cls(Kind.MOMENT, board_id, at, delay, data=data)

    @classmethod
    def standings(cls, event: str, data: bytes, *, at: float, delay: int = 0) -> Publication:
        return cls(Kind.STANDINGS, event, at, delay, data=data)

    @classmethod
    def removal(
        cls, board_id: str, *, at: float, delay: int = 0, at_once: bool = False
    ) -> Publication:
        return cls(Kind.REMOVAL, board_id, at, delay, at_once=at_once)

    @classmethod
    def board_list(cls, page: Callable[[], bytes], *, at: float) -> Publication:
        return cls(Kind.BOARD_LIST, "", at, page=page)


class Step(Protocol):
    """One step of the publication chain: takes each publication, and hands
    it (or what it makes of it, when) to the next step; the outputs are the
    last."""

    def deliver(self, publication: Publication, /) -> None: ...
