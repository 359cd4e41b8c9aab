"""Where what viewers see goes: the WebSocket/HTTP server, always, and the
MQTT publisher when it is enabled. Both get the same bytes: a board's
snapshot is serialised once (:class:`~livegain.publish.entry.BoardEntry`) and
an update once, by the server, whose bytes the publisher sends on.

What goes out besides the boards (each event's standings, the key moments)
is also handed to :attr:`Outputs.kept` (the store's record of what viewers
were shown, :mod:`livegain.app.shown`), and :meth:`Outputs.restore` serves
it again after a restart."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from livegain.publish import schema
from livegain.publish.entry import BoardEntry
from livegain.publish.mqtt import MqttPublisher
from livegain.publish.server import LiveServer


class Kept(Protocol):
    """Where what viewers were shown besides the boards is kept (for a restart)."""

    def standings(self, event: str, data: bytes) -> None: ...

    def moment(self, board_id: str, data: bytes) -> None: ...

    def remove(self, board_id: str) -> None: ...


class Outputs:
    """The service's outputs (``mqtt``: None while MQTT is off; ``kept``:
    None while nothing is kept)."""

    def __init__(self, server: LiveServer, mqtt: MqttPublisher | None = None) -> None:
        self.server = server
        self.mqtt = mqtt
        self.kept: Kept | None = None

    def board(
        self,
        bid: str,
        entry: BoardEntry,
        updates: Iterable[schema.Update] = (),
        *,
        whole: bool = False,
    ) -> None:
        """Board ``bid``'s ``updates`` to its subscribers, or its whole snapshot
        when ``whole`` (or the server does not have it yet); its state (built
        only if needed) retained on MQTT."""
        if whole or not self.server.has_board(bid):
            self.server.set_board(entry)
        else:
            for u in updates:
                data = self.server.publish(u, entry)
                if self.mqtt is not None:
                    self.mqtt.publish_update(bid, data)
        if self.mqtt is not None:
            self.mqtt.publish_state(bid, entry.snapshot_bytes)

    def moment(self, board_id: str, data: bytes) -> None:
        """A ``moment`` message: the board's subscribers get it as its updates,
        later ones after its snapshot."""
        self.server.publish_moment(board_id, data)
        if self.mqtt is not None:
            self.mqtt.publish_moment(board_id, data)
        if self.kept is not None:
            self.kept.moment(board_id, data)

    def standings(self, event: str, data: bytes) -> None:
        """An event's ``standings`` message (subscribers, ``/api/standings``, retained)."""
        self.server.publish_standings(event, data)
        if self.mqtt is not None:
            self.mqtt.publish_standings(event, data)
        if self.kept is not None:
            self.kept.standings(event, data)

    def restore(
        self, standings: Sequence[tuple[str, bytes]], moments: Sequence[tuple[str, bytes]]
    ) -> None:
        """What viewers had before a restart, served again before anyone can
        connect: each event's ``standings`` message (``/api/standings``,
        subscribers, retained) and the kept moments (oldest first: for the
        clients that subscribe to their boards, and retained on MQTT, not
        sent again one by one)."""
        for event, data in standings:
            self.server.publish_standings(event, data)
            if self.mqtt is not None:
                self.mqtt.publish_standings(event, data)
        for board_id, data in moments:
            self.server.publish_moment(board_id, data)
        if self.mqtt is not None:
            self.mqtt.restore_moments(moments)

    def board_list(self, page: Callable[[], bytes]) -> None:
        """The board list changed: the whole list (``page()``, built only
        here, when there is a broker) is retained on MQTT."""
        if self.mqtt is not None:
            self.mqtt.publish_boards(page())

    def remove(self, board_id: str) -> bool:
        """The board leaves (its viewers get a ``removed`` diff); True when the server had it."""
        found = self.server.remove_board(board_id)
        if self.mqtt is not None:
            self.mqtt.remove_board(board_id)
        if self.kept is not None:
            self.kept.remove(board_id)
        return found
