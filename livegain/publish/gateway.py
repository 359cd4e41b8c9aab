"""A gateway: viewers served from the service's MQTT output, not from the service.

``livegain gateway --broker mqtt://HOST:1883 --port P`` runs one. It
subscribes to what the service publishes (:mod:`livegain.publish.mqtt`),
rebuilds the boards from it (:class:`~livegain.publish.replica.Replica`) and
drives its own :class:`~livegain.publish.server.LiveServer`: the same pages,
the same ``/ws`` protocol, the same bytes as the service's own server, so a
viewer cannot tell which one it is connected to. Any number of gateways can
run side by side (on one port with ``reuse_port``, or on many machines behind
a TCP load balancer): each holds its own viewers, and the service publishes
once to the broker whatever their number.

Flow:

- at start the gateway subscribes to ``{prefix}/+/state``, ``{prefix}/+/update``,
  ``{prefix}/boards``, ``{prefix}/moments`` (the service's latest key moments)
  and, last, ``{prefix}/status``: the broker sends every
  board's retained state, then the retained status, which marks the end of
  them (without one, ``sync_timeout`` seconds do). Only then does the gateway
  start listening, with every board, in the service's order: not before the
  broker has answered once;
- each update is applied in ``seq`` order and sent to the viewers as the
  service sent it; a gap in ``seq`` makes the gateway subscribe to that
  board's state topic again (the broker re-sends the retained state), every
  ``resync_retry`` seconds until the gap is closed; the viewers of that board
  get a fresh snapshot, never a silent gap;
- the broker connection is kept with back-off (0.5 s doubling to
  ``backoff_max``); after a reconnect every board is resynced from the
  retained states (boards whose state was cleared meanwhile are removed);
- ``/healthz`` adds ``broker`` (connected, connects, failures), ``service``
  (its MQTT status), ``lag`` (seconds since the last MQTT message, updates
  seen but not applied yet, boards waiting for a resync) and ``replica``
  (counters); ``degraded`` while the broker is away or the service offline.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import asdict, dataclass
from typing import Any

import aiomqtt
import structlog

from livegain.mqtt.address import BrokerAddress
from livegain.mqtt.client import connect, instance_name, payload_bytes, unique_client_id
from livegain.mqtt.reconnect import keep_connected
from livegain.publish.replica import Action, Replica, Resync
from livegain.publish.server import LiveServer

log = structlog.get_logger("livegain.publish.gateway")


@dataclass
class GatewayStats:
    connected: bool = False
    connects: int = 0
    failures: int = 0
    last_error: str | None = None
    messages: int = 0
    last_message_at: float | None = None
    """``time.monotonic()`` of the last MQTT message."""
    resync_requests: int = 0
    """Subscriptions made again to a board's state topic to close a gap."""


class Gateway:
    """Feed ``server`` from the service's MQTT output on ``broker``."""

    def __init__(
        self,
        server: LiveServer,
        broker: BrokerAddress,
        *,
        prefix: str = "livegain/out",
        client_id: str | None = None,
        sync_timeout: float = 5.0,
        resync_retry: float = 5.0,
        backoff_max: float = 10.0,
    ) -> None:
        self.server = server
        self.broker = broker
        self.client_id = client_id or unique_client_id("gateway")
        # what /healthz shows to tell gateways apart: never the client id
        self.instance = instance_name("gateway")
        self.replica = Replica(prefix)
        self.sync_timeout = sync_timeout
        """Seconds the retained states may take to come (at start and after a reconnect)."""
        self.resync_retry = resync_retry
        """Seconds before a board still behind a gap asks for its state again."""
        self.backoff_max = backoff_max
        self.stats = GatewayStats()
        self.synced = asyncio.Event()
        """Set once the first retained states have all come."""
        self.live = False
        """The server has the boards (the actions now reach it)."""
        self.listening = asyncio.Event()
        """Set once the server listens."""
        self._asked: dict[str, float] = {}
        """Board state topics subscribed to again, and when."""
        self._wake = asyncio.Event()
        self._sync_deadline = 0.0
        server.health_extra = self.health

    # ------------------------------------------------------------ running

    async def run(self) -> None:
        """Sync, listen, and follow the broker until cancelled; then close the server.

        The server listens only once the broker has answered and its retained
        states have come: a gateway that cannot reach the broker has nothing
        to serve, and a load balancer's health check passes it over.
        """
        mqtt = asyncio.create_task(self._mqtt_loop(), name="gateway-mqtt")
        try:
            synced = asyncio.create_task(self.synced.wait())
            done, _ = await asyncio.wait({synced, mqtt}, return_when=asyncio.FIRST_COMPLETED)
            synced.cancel()
            if mqtt in done:
                mqtt.result()  # it only ends by raising
            self._go_live()
            await self.server.start()
            self.listening.set()
            log.info(
                "gateway_started",
                url=self.server.url,
                broker=str(self.broker),
                prefix=self.replica.prefix,
                boards=len(self.replica.board_ids()),
            )
            await mqtt
        finally:
            mqtt.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await mqtt
            await self.server.close()

    def _go_live(self) -> None:
        self.live = True
        for state in self.replica.ordered():
            self.server.set_board(state)
        for board_id, data in self.replica.moments.items():  # kept for late viewers
            self.server.publish_moment(board_id, data)

    async def _mqtt_loop(self) -> None:
        await keep_connected(
            self._session,
            self.stats,
            most=self.backoff_max,
            log=log,
            event="gateway_broker_disconnected",
            broker=str(self.broker),
        )

    async def _session(self) -> None:
        async with connect(self.broker, self.client_id, keepalive=15) as client:
            self.stats.connected = True
            self.stats.connects += 1
            log.info("gateway_broker_connected", broker=str(self.broker))
            self.replica.begin_resync()
            self._asked.clear()
            self._sync_deadline = time.monotonic() + self.sync_timeout
            states, updates, boards, status = self.replica.subscriptions()
            # QoS 0: the session is not persistent (a reconnect resyncs from the
            # retained states), so QoS 1 would only add an acknowledgement per
            # message, and the broker's in-flight window.
            await client.subscribe([(states, 0), (updates, 0)])
            await client.subscribe(boards, qos=0)
            await client.subscribe(self.replica.topics.standings_filter, qos=0)
            await client.subscribe(self.replica.topics.moments, qos=0)
            # Last: its retained message comes after every retained state.
            await client.subscribe(status, qos=0)
            ticker = asyncio.create_task(self._ticker(client), name="gateway-resync")
            try:
                async for message in client.messages:
                    self._on_message(str(message.topic), payload_bytes(message))
                    if ticker.done():
                        ticker.result()
            finally:
                ticker.cancel()
                with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
                    await ticker
            raise aiomqtt.MqttError("connection closed")

    def _on_message(self, topic: str, payload: bytes) -> None:
        self.stats.messages += 1
        self.stats.last_message_at = time.monotonic()
        self._act(self.replica.feed(topic, payload))
        if topic == self.replica.topics.status and self.replica.resyncing_all:
            self._end_sync()

    def _end_sync(self) -> None:
        self._act(self.replica.end_resync())
        self.synced.set()

    def _act(self, actions: list[Action]) -> None:
        """The replica's publications to the server, as the service's go to its
        own (:meth:`LiveServer.deliver`); a resync to the ticker."""
        for action in actions:
            if isinstance(action, Resync):
                self._wake.set()
            elif self.live:  # else the replica keeps it: the server gets every board at start
                self.server.deliver(action)

    async def _ticker(self, client: aiomqtt.Client) -> None:
        """Close the resync phase on time; ask boards behind a gap for their
        state (again); drop those subscriptions once the gap is closed."""
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(0.5):  # not wait_for: see livegain/mqtt/client.py
                    await self._wake.wait()
            self._wake.clear()
            now = time.monotonic()
            if self.replica.resyncing_all and now >= self._sync_deadline:
                self._end_sync()
            waiting = {r.topic for r in self.replica.awaiting()}
            for topic in [t for t in self._asked if t not in waiting]:
                del self._asked[topic]
                await client.unsubscribe(topic)
            for topic in waiting:
                asked = self._asked.get(topic)
                if asked is None or now - asked >= self.resync_retry:
                    self._asked[topic] = now
                    self.stats.resync_requests += 1
                    await client.subscribe(topic, qos=0)

    # ------------------------------------------------------------- health

    def health(self) -> dict[str, Any]:
        """What ``/healthz`` adds to the server's own figures (clients, boards)."""
        last = self.stats.last_message_at
        problems = []
        if not self.stats.connected:
            problems.append("broker not connected")
        if self.replica.service == "offline":
            problems.append("service offline (its MQTT status)")
        out: dict[str, Any] = {
            "role": "gateway",
            "instance": self.instance,
            "broker": {
                "url": str(self.broker),
                # never the client id: whoever knows it can take the session over
                "prefix": self.replica.prefix,
                "connected": self.stats.connected,
                "connects": self.stats.connects,
                "failures": self.stats.failures,
                "last_error": self.stats.last_error,
                "messages": self.stats.messages,
                "resync_requests": self.stats.resync_requests,
            },
            "service": self.replica.service,
            "lag": {
                "seconds": None if last is None else round(time.monotonic() - last, 3),
                "seq": self.replica.seq_lag(),
                "boards_behind": len(self.replica.awaiting()),
            },
            "replica": asdict(self.replica.stats),
        }
        if problems:
            out["status"] = "degraded"
            out["problems"] = problems
        return out
