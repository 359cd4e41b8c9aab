"""MQTT publisher: retained per-board state and per-ply updates.

Topics (``prefix`` defaults to ``livegain/out``; board ids are made topic-safe
by replacing ``/``, ``+``, ``#`` and control characters with ``_``):

- ``{prefix}/{board_id}/state``: the ``snapshot`` message of the board
  (``{"type": "snapshot", "state": BoardState}``), retained, QoS 1: a
  subscriber that arrives late gets the whole board at once;
- ``{prefix}/{board_id}/update``: every ``update`` message, QoS 1, not retained;
- ``{prefix}/{board_id}/moment``: each ``moment`` message (a key moment of
  the game), QoS 1, not retained;
- ``{prefix}/moments``: the latest moments across all boards
  (:mod:`livegain.publish.recent_moments`, the last 50; one ``moment`` message per
  line, oldest first), retained: what a gateway started later shows its
  viewers;
- ``{prefix}/boards``: the ``boards`` message (list of boards), retained;
- ``{prefix}/standings/{event}``: each event's latest ``standings`` message,
  retained (the event name made topic-safe as board ids are);
- ``{prefix}/status``: ``online`` (retained) while connected, ``offline`` via
  the broker's last will when the service vanishes.

Bodies are byte-for-byte the WebSocket messages: the service hands this
publisher and its WebSocket server the same publications side by side
(:meth:`MqttPublisher.deliver`; each update serialised once; a board's state as the shared
:class:`~livegain.publish.entry.BoardEntry`'s ``snapshot`` bytes, built when
first needed), and gateways serve viewers from these topics. Publishing
never blocks the caller: messages go to a bounded queue drained by
:meth:`MqttPublisher.run`, which reconnects with exponential back-off (0.5 s
doubling to 30 s, from 0.5 s again after a connection). States are coalesced
(only the latest state of a board is sent); if the broker is away so long
that the update queue overflows, the oldest updates are dropped and counted;
the retained state published on reconnect carries the whole board.

The client id defaults to ``livegain-pub-{host}-{random}`` (no two instances
share one; the session is not persistent: states are published again on each
connect). TLS, a private CA, client certificates and credentials apart from
the URL come from the ``[mqtt]`` section (:meth:`MqttPublisher.from_config`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, assert_never

import aiomqtt
import structlog

from livegain.mqtt.address import BrokerAddress, parse_mqtt_url
from livegain.mqtt.client import connect, unique_client_id
from livegain.mqtt.reconnect import keep_connected
from livegain.mqtt.topics import OutputTopics
from livegain.publish.publication import Kind, Publication
from livegain.publish.recent_moments import RecentMoments

if TYPE_CHECKING:
    from livegain.config import MqttPublishConfig

log = structlog.get_logger("livegain.publish.mqtt")


@dataclass
class MqttStats:
    connected: bool = False
    connects: int = 0
    failures: int = 0
    published: int = 0
    dropped: int = 0
    last_error: str | None = None


class MqttPublisher:
    """Publish board states and updates to an MQTT broker, reconnecting forever."""

    def __init__(
        self,
        url: str = "mqtt://127.0.0.1:1883",
        prefix: str = "livegain/out",
        *,
        client_id: str | None = None,
        qos: int = 1,
        max_queue: int = 10_000,
        backoff_max: float = 30.0,
        broker: BrokerAddress | None = None,
    ) -> None:
        """``broker``, when given, wins over ``url`` (credentials and TLS files)."""
        self.broker = broker or parse_mqtt_url(url)
        self.prefix = prefix.rstrip("/")
        self.topics = OutputTopics(self.prefix)
        """Where each message goes (:mod:`livegain.mqtt.topics`)."""
        self.client_id = client_id or unique_client_id("pub")
        self.qos = qos
        self.max_queue = max_queue
        self.backoff_max = backoff_max
        self.stats = MqttStats()
        self._states: dict[str, bytes | Callable[[], bytes]] = {}
        self._dirty_states: dict[str, None] = {}  # ordered set
        self._boards: bytes | None = None
        self._boards_dirty = False
        self._standings: dict[str, bytes] = {}
        self._dirty_standings: dict[str, None] = {}  # ordered set
        self._updates: deque[tuple[str, bytes]] = deque()
        self._queued: dict[str, int] = {}  # updates in _updates, per board
        self._moments: deque[tuple[str, bytes]] = deque()
        self._recent = RecentMoments()
        self._recent_dirty = False
        self._wake = asyncio.Event()

    @classmethod
    def from_config(cls, cfg: MqttPublishConfig) -> MqttPublisher:
        """The publisher a ``[mqtt]`` section describes (ValueError if its URL or files are bad)."""
        return cls(cfg.url, cfg.prefix, client_id=cfg.client_id, qos=cfg.qos, broker=cfg.broker())

    # ---------------------------------------------------------- producers

    def deliver(self, p: Publication, /) -> None:
        """The last step of the publication chain (beside the WebSocket
        server): ``p`` to its topics, the bytes it carries."""
        if p.kind is Kind.BOARD:
            for data in p.encoded:
                self.publish_update(p.key, data)
            self.publish_state(p.key, p.entry.snapshot_bytes)
        elif p.kind is Kind.MOMENT:
            self.publish_moment(p.key, p.data)
        elif p.kind is Kind.STANDINGS:
            self.publish_standings(p.key, p.data)
        elif p.kind is Kind.REMOVAL:
            self.remove_board(p.key)
        elif p.kind is Kind.BOARD_LIST:
            self.publish_boards(p.message)
        else:
            assert_never(p.kind)

    def publish_state(self, board_id: str, snapshot: bytes | Callable[[], bytes]) -> None:
        """Queue the board's snapshot message (retained; only the latest is kept).

        ``snapshot`` may be a function building the message: it is called only
        when the state is actually sent (states are coalesced).
        """
        self._states[board_id] = snapshot
        self._dirty_states[board_id] = None
        self._wake.set()

    def remove_board(self, board_id: str) -> None:
        """Clear the board's retained state on the broker (an empty retained
        message deletes it), so that no late subscriber sees a removed board."""
        self._states[board_id] = b""
        self._dirty_states[board_id] = None
        if self._recent.remove_board(board_id):
            self._recent_dirty = True
        self._wake.set()

    def publish_update(self, board_id: str, update: bytes) -> None:
        """Queue one update message."""
        if len(self._updates) >= self.max_queue:
            self._pop_update()
            self.stats.dropped += 1
        self._updates.append((board_id, update))
        self._queued[board_id] = self._queued.get(board_id, 0) + 1
        self._wake.set()

    def _pop_update(self) -> None:
        board_id, _ = self._updates.popleft()
        left = self._queued[board_id] - 1
        if left:
            self._queued[board_id] = left
        else:
            del self._queued[board_id]

    def publish_moment(self, board_id: str, moment: bytes) -> None:
        """Queue one ``moment`` message (not retained; the oldest dropped past
        ``max_queue``), and the latest moments (retained) after it."""
        if len(self._moments) >= self.max_queue:
            self._moments.popleft()
            self.stats.dropped += 1
        self._moments.append((board_id, moment))
        if self._recent.add(board_id, moment):
            self._recent_dirty = True
        self._wake.set()

    def restore_moments(self, moments: Iterable[tuple[str, bytes]]) -> None:
        """Take back the latest moments viewers had before a restart, (board
        id, message) oldest first: retained on ``{prefix}/moments`` again with
        the next ones, not sent again one by one."""
        for board_id, moment in moments:
            if self._recent.add(board_id, moment):
                self._recent_dirty = True
        self._wake.set()

    def publish_boards(self, boards: bytes) -> None:
        self._boards = boards
        self._boards_dirty = True
        self._wake.set()

    def publish_standings(self, event: str, standings: bytes) -> None:
        """Queue an event's ``standings`` message (retained; only the latest is kept)."""
        self._standings[event] = standings
        self._dirty_standings[event] = None
        self._wake.set()

    @property
    def pending(self) -> int:
        return (
            len(self._updates)
            + len(self._moments)
            + int(self._recent_dirty)
            + len(self._dirty_states)
            + int(self._boards_dirty)
            + len(self._dirty_standings)
        )

    # ------------------------------------------------------------- runner

    async def run(self) -> None:
        """Connect, publish, reconnect with back-off; runs until cancelled."""
        await keep_connected(
            self._session,
            self.stats,
            most=self.backoff_max,
            log=log,
            event="mqtt_publish_disconnected",
            broker=str(self.broker),
        )

    async def _session(self) -> None:
        will = aiomqtt.Will(self.topics.status, b"offline", qos=1, retain=True)
        async with connect(self.broker, self.client_id, will=will) as client:
            self.stats.connected = True
            self.stats.connects += 1
            log.info("mqtt_publish_connected", broker=str(self.broker))
            await client.publish(self.topics.status, b"online", qos=1, retain=True)
            # Every retained state again: the broker may have lost them.
            for board_id in self._states:
                self._dirty_states[board_id] = None
            if self._boards is not None:
                self._boards_dirty = True
            for event in self._standings:
                self._dirty_standings[event] = None
            if len(self._recent):
                self._recent_dirty = True
            publisher = asyncio.create_task(self._publish_loop(client))
            watcher = asyncio.create_task(self._watch(client))
            try:
                done, _ = await asyncio.wait(
                    {publisher, watcher}, return_when=asyncio.FIRST_COMPLETED
                )
            except asyncio.CancelledError:
                publisher.cancel()
                watcher.cancel()
                # A clean stop: the will is not sent, so say it ourselves.
                with contextlib.suppress(Exception):
                    await client.publish(
                        self.topics.status, b"offline", qos=1, retain=True, timeout=1.0
                    )
                raise
            for task in (publisher, watcher):
                if task not in done:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
                        await task
            for task in done:
                task.result()  # re-raise the MqttError that ended the session

    async def _watch(self, client: aiomqtt.Client) -> None:
        """Notice a lost connection even while idle (the iterator raises MqttError)."""
        async for _ in client.messages:
            pass
        raise aiomqtt.MqttError("connection closed")

    async def _publish_loop(self, client: aiomqtt.Client) -> None:
        while True:
            await self._drain(client)
            self._wake.clear()
            if self.pending:
                continue
            await self._wake.wait()

    async def _drain(self, client: aiomqtt.Client) -> None:
        while self.pending:
            if self._boards_dirty and self._boards is not None:
                await client.publish(self.topics.boards, self._boards, qos=self.qos, retain=True)
                self._boards_dirty = False
                self.stats.published += 1
            if self._updates:
                board_id, data = self._updates[0]
                await client.publish(self.topics.update(board_id), data, qos=self.qos)
                # Only dequeue once the broker acknowledged it (QoS 1).
                if self._updates and self._updates[0][1] is data:
                    self._pop_update()
                self.stats.published += 1
                # The board's state follows its updates.
                if board_id in self._dirty_states and board_id not in self._queued:
                    await self._send_state(client, board_id)
                continue
            if self._moments:
                board_id, data = self._moments[0]
                await client.publish(self.topics.moment(board_id), data, qos=self.qos)
                if self._moments and self._moments[0][1] is data:
                    self._moments.popleft()
                self.stats.published += 1
                continue
            if self._recent_dirty:
                self._recent_dirty = False
                payload = self._recent.payload()
                try:
                    await client.publish(self.topics.moments, payload, qos=self.qos, retain=True)
                except BaseException:
                    self._recent_dirty = True  # sent again on the next connection
                    raise
                self.stats.published += 1
                continue
            if self._dirty_states:
                board_id = next(iter(self._dirty_states))
                await self._send_state(client, board_id)
                continue
            if self._dirty_standings:
                event = next(iter(self._dirty_standings))
                data = self._standings[event]
                await client.publish(self.topics.standings(event), data, qos=self.qos, retain=True)
                if self._standings.get(event) is data:
                    self._dirty_standings.pop(event, None)
                self.stats.published += 1

    async def _send_state(self, client: aiomqtt.Client, board_id: str) -> None:
        entry = self._states[board_id]
        data = entry if isinstance(entry, bytes) else entry()
        self._states[board_id] = data
        await client.publish(self.topics.state(board_id), data, qos=self.qos, retain=True)
        if self._states.get(board_id) is data:
            self._dirty_states.pop(board_id, None)
            if not data:  # a removed board's state is cleared: nothing left to resend
                del self._states[board_id]
        self.stats.published += 1
