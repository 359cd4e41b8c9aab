"""Where what viewers see goes: the WebSocket/HTTP server, always, and the
MQTT publisher when it is enabled. Both get the same bytes: a board's
snapshot is serialised once (:class:`~livegain.publish.entry.BoardEntry`) and
an update once, by the server, whose bytes the publisher sends on."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from livegain.publish import schema
from livegain.publish.entry import BoardEntry
from livegain.publish.mqtt import MqttPublisher
from livegain.publish.server import LiveServer


class Outputs:
    """The service's outputs (``mqtt``: None while MQTT is off)."""

    def __init__(self, server: LiveServer, mqtt: MqttPublisher | None = None) -> None:
        self.server = server
        self.mqtt = mqtt

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

    def standings(self, event: str, data: bytes) -> None:
        """An event's ``standings`` message (subscribers, ``/api/standings``, retained)."""
        self.server.publish_standings(event, data)
        if self.mqtt is not None:
            self.mqtt.publish_standings(event, data)

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
        return found
