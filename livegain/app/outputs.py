"""Where what viewers see goes: the last steps of the publication chain
(:mod:`livegain.publish.publication`): the WebSocket/HTTP server, always,
and the MQTT publisher when it is enabled. Both get the same bytes: a
board's snapshot is serialised once (:class:`~livegain.publish.entry.BoardEntry`)
and each update once, where its publication is built.

What goes out besides the boards (each event's standings, the key moments)
is also handed to :attr:`Outputs.kept` (the store's record of what viewers
were shown, :mod:`livegain.app.shown`), and :meth:`Outputs.restore` serves
it again after a restart."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, assert_never

from livegain.publish.mqtt import MqttPublisher
from livegain.publish.publication import Kind, Publication
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

    def deliver(self, p: Publication, /) -> None:
        """Hand ``p`` to every output. A board's change goes out as its whole
        snapshot when the server does not have the board yet."""
        if p.kind is Kind.BOARD and not p.whole and not self.server.has_board(p.key):
            p = p.as_whole()
        self.server.deliver(p)
        if self.mqtt is not None:
            self.mqtt.deliver(p)
        if self.kept is not None:
            self._keep(self.kept, p)

    @staticmethod
    def _keep(kept: Kept, p: Publication) -> None:
        """What viewers were shown besides the boards, kept for a restart."""
        if p.kind is Kind.MOMENT:
            kept.moment(p.key, p.data)
        elif p.kind is Kind.STANDINGS:
            kept.standings(p.key, p.data)
        elif p.kind is Kind.REMOVAL:
            kept.remove(p.key)
        elif p.kind is Kind.BOARD or p.kind is Kind.BOARD_LIST:
            pass  # the boards come back from their own tables
        else:
            assert_never(p.kind)

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
