"""The MQTT feed: moves published per board, read with aiomqtt (see docs/feeds.md).

The messages and their rules are :mod:`livegain.feeds.mqtt_ingest`'s (a pure
state machine, tested on its own); this module is the I/O around it.

The session is persistent (MQTT 5, clean start off, session expiry) under a
client id of our own (made once and kept in the service's data directory),
and the subscription QoS 1, so the broker keeps our messages while we are
away (a broker with persistence on keeps them across its own restart); the
feed reconnects with back-off. A stale board is listed in the feed's health,
and its resync request published. On start the service hands the feed the
boards it had stored (:meth:`MqttFeed.restore`): a restart goes on from them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import aiomqtt

from livegain.core.snapshot import GameSnapshot
from livegain.feeds.backoff import Backoff
from livegain.feeds.base import FeedSink, MqttFeedConfig, source_sink
from livegain.feeds.json_bounds import loads_bounded
from livegain.feeds.mqtt_ingest import IngestResult, MqttIngest
from livegain.mqtt.address import redact_url
from livegain.mqtt.client import connect, taken_over, unique_client_id

RECONNECT_DELAYS: tuple[float, ...] = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)

# --- the feed -----------------------------------------------------------------------------------


class MqttFeed:
    """Subscribes (QoS 1, persistent session) and feeds :class:`MqttIngest`.

    :meth:`restore` (called by the service before :meth:`run`) takes back the
    stored boards, the client id and each board's sequence numbering from the
    service's data directory.
    """

    def __init__(
        self, cfg: MqttFeedConfig, *, reconnect_delays: Sequence[float] = RECONNECT_DELAYS
    ) -> None:
        self.cfg = cfg
        self.name = cfg.name or "mqtt"
        self.broker = cfg.broker()
        self.ingest = MqttIngest(
            self.name, cfg.gap_timeout, max_bytes=cfg.max_bytes, max_games=cfg.max_games
        )
        self.backoff = Backoff(tuple(reconnect_delays))
        self.client_id: str | None = cfg.client_id
        self.state_file: Path | None = None
        self.connections = 0
        self.connected = False
        self.subscribed = asyncio.Event()
        self.errors = 0
        self.resync_requests = 0
        self.taken_over = 0  # connections the broker ended for another client with our id
        self._resyncs: dict[str, None] = {}  # board topics to ask for, in order
        self._resync_wake = asyncio.Event()
        self._state_dirty = False
        self._state_error: str | None = None
        self._held: list[tuple[str, str]] = []  # errors found before run() had a sink
        self._sink: FeedSink | None = None

    # -- restart

    def restore(self, snapshots: Iterable[GameSnapshot], state_dir: Path | None) -> None:
        """Take back what this feed had before a restart: the boards it emitted
        (``snapshots``: the service's stored ones), and from
        ``{state_dir}/mqtt-ingest-{name}.json`` its client id (made there once
        when none is configured) and each board's last seq."""
        state: dict[str, Any] = {}
        if state_dir is not None:
            safe = re.sub(r"[^A-Za-z0-9_.-]", "_", self.name)
            self.state_file = Path(state_dir) / f"mqtt-ingest-{safe}.json"
            state = self._load_state(self.state_file)
        if self.client_id is None:
            cid = state.get("client_id")
            self.client_id = cid if isinstance(cid, str) and cid else unique_client_id("ingest")
        boards = state.get("boards")
        self.ingest.restore(snapshots, boards if isinstance(boards, dict) else None)
        self._save_state()

    def _load_state(self, path: Path) -> dict[str, Any]:
        try:
            data = loads_bounded(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            self._held.append((str(path), f"feed state unreadable, starting afresh: {exc}"))
            return {}
        if not isinstance(data, dict):
            self._held.append((str(path), "feed state is not a JSON object, starting afresh"))
            return {}
        return data

    def _save_state(self) -> None:
        """Write the client id and sequence state (atomically; errors reported once)."""
        self._state_dirty = False
        if self.state_file is None:
            return
        data = {"client_id": self.client_id, "boards": self.ingest.sequence_state()}
        try:
            self.state_file.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".mqtt-ingest-", dir=self.state_file.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump(data, f, separators=(",", ":"))
                os.replace(tmp, self.state_file)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
            self._state_error = None
        except OSError as exc:
            message = f"cannot save the feed state: {exc}"
            if message != self._state_error:
                self._state_error = message
                if self._sink is not None:
                    self._error(self._sink, str(self.state_file), message)
                else:
                    self._held.append((str(self.state_file), message))

    # -- health

    def status(self) -> dict[str, Any]:
        """For the service's /healthz: connection, counts, stale boards; a
        ``problem`` while any board is stale."""
        stale = self.ingest.stale_boards()
        out: dict[str, Any] = {
            "connected": self.connected,
            "broker": str(self.broker),
            # never the client id: whoever knows it can take the session over
            "sessions_taken_over": self.taken_over,
            "boards": len(self.ingest.boards),
            "messages": self.ingest.messages,
            "duplicates": self.ingest.duplicates,
            "stale_boards": stale,
            "stale_marked": self.ingest.stale_marked,
            "healed": self.ingest.healed,
            "resync_requests": self.resync_requests,
            "refused_topics": self.ingest.refused_topics,
        }
        if stale:
            shown = ", ".join(sorted(stale)[:5]) + (", ..." if len(stale) > 5 else "")
            out["problem"] = f"{len(stale)} stale boards, moves missing ({shown})"
        return out

    # -- running

    async def run(self, sink: FeedSink) -> None:
        sink = source_sink(sink, self.cfg)
        # aiomqtt's reconnect pattern: one client, its context entered again after
        # each loss. Its message queue lives on across connections, so a message
        # received (and acknowledged) just before a connection drops is not lost.
        self._sink = sink
        held, self._held = self._held, []
        for where, problem in held:
            self._error(sink, where, problem)
        if self.client_id is None:
            self.client_id = unique_client_id("ingest")
        client: aiomqtt.Client | None = None
        ticker = asyncio.create_task(self._tick(sink))
        try:
            while True:
                try:
                    if client is None:
                        client = connect(
                            self.broker,
                            identifier=self.client_id,
                            session_expiry=self.cfg.session_expiry,
                        )
                    async with client:
                        await client.subscribe(self.cfg.topic, qos=1)
                        # counted once the broker answered (SUBACK), not before
                        self.connections += 1
                        self.connected = True
                        self.backoff.succeed()
                        self.subscribed.set()
                        resyncer = asyncio.create_task(self._send_resyncs(sink, client))
                        try:
                            async for message in client.messages:
                                self._message(sink, message)
                        finally:
                            resyncer.cancel()
                except Exception as exc:  # MqttError, or anything else: never end the feed
                    self.connected = False
                    self.subscribed.clear()
                    if client is not None:
                        await self._drain(sink, client)
                    delay = self.backoff.fail()
                    if taken_over(exc):
                        self.taken_over += 1
                        what = "session taken over (another client connected with this feed's id)"
                    elif isinstance(exc, aiomqtt.MqttError):
                        what = "broker connection"
                    elif isinstance(exc, ValueError):
                        what = "broker settings"
                    else:
                        what = f"internal error: {type(exc).__name__}"
                    self._error(sink, str(self.broker), f"{what}: {exc}; retrying in {delay:g} s")
                    await asyncio.sleep(delay)
        finally:
            self.connected = False
            ticker.cancel()
            if self._state_dirty:
                self._save_state()

    def _message(self, sink: FeedSink, message: aiomqtt.Message) -> None:
        payload = message.payload
        if isinstance(payload, str):
            data = payload.encode()
        elif isinstance(payload, bytes | bytearray):
            data = bytes(payload)
        else:
            data = str(payload).encode()
        now = asyncio.get_running_loop().time()
        self._deliver(sink, self.ingest.handle(message.topic.value, data, now))
        self._state_dirty = True

    async def _drain(self, sink: FeedSink, client: aiomqtt.Client) -> None:
        """Handle what arrived before the connection dropped (the iterator hands out
        queued messages even once disconnected, then raises)."""
        with contextlib.suppress(aiomqtt.MqttError):
            messages = client.messages
            while len(messages):
                self._message(sink, await anext(messages))

    async def _tick(self, sink: FeedSink) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(min(0.5, self.cfg.gap_timeout / 4))
            if self.ingest.waiting:
                self._deliver(sink, self.ingest.expire_gaps(loop.time()))
            if self._state_dirty:
                self._save_state()

    def resync_topic(self, board_topic: str) -> str | None:
        """Where the whole game of a board is asked for (None: asking is off)."""
        if not self.cfg.resync_topic:
            return None
        t, r, b = board_topic.split("/")[-3:]
        return f"{self.cfg.resync_topic.rstrip('/')}/{t}/{r}/{b}"

    async def _send_resyncs(self, sink: FeedSink, client: aiomqtt.Client) -> None:
        """Publish the queued requests for whole games (QoS 1) while connected."""
        while True:
            await self._resync_wake.wait()
            self._resync_wake.clear()
            while self._resyncs:
                board_topic = next(iter(self._resyncs))
                target = self.resync_topic(board_topic)
                st = self.ingest.boards.get(board_topic)
                if target is None or st is None:
                    del self._resyncs[board_topic]
                    continue
                epoch = st.epoch if isinstance(st.epoch, str | int | float) else None
                body = {
                    "topic": board_topic,
                    "plies": len(st.moves),
                    "seq": st.last_seq,
                    "epoch": epoch,
                    "reason": st.stale or "a gap in seq",
                }
                try:
                    await client.publish(
                        target, json.dumps(body, separators=(",", ":")).encode(), qos=1
                    )
                except aiomqtt.MqttError:
                    return  # kept queued: sent after the reconnect
                self._resyncs.pop(board_topic, None)
                self.resync_requests += 1

    def _deliver(self, sink: FeedSink, res: IngestResult) -> None:
        for where, message in res.errors:
            self._error(sink, where, message)
        for snap in res.snapshots:
            sink.snapshot(snap)
        if res.resyncs and self.cfg.resync_topic:
            for topic in res.resyncs:
                self._resyncs[topic] = None
            self._resync_wake.set()

    def _error(self, sink: FeedSink, where: str, message: str) -> None:
        self.errors += 1
        sink.error(self.name, redact_url(where), redact_url(message))


__all__ = [
    "MqttFeed",
]
