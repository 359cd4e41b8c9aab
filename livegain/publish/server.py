"""The WebSocket server: one port for ``/ws`` and plain HTTP, around the hub.

:class:`LiveServer` is an adapter: the boards, subscriptions, client-message
checks and the stale/resync policy are the :class:`~livegain.publish.hub.Hub`'s
(no I/O there); the HTTP answers are :class:`~livegain.publish.http.HttpSite`'s.
What stays here is the I/O: the listening socket (plain, or TLS with
``ssl``; ``reuse_port`` to share the port between processes), the handshake's
doors, each connection's reader, the timers the hub asks for, and the writes.

Doors (before the WebSocket handshake): pages of another origin may not open
``/ws`` unless allowed (``origins``, HTTP 403); one address may hold at most
``max_connections_per_ip`` connections (HTTP 429), the server
``max_clients`` (HTTP 503).

WebSocket protocol (see ``docs/protocol/README.md``): on connect the server
sends ``hello`` with the first page of the board list (``list_boards`` asks
for the next pages); a ``subscribe`` answers one ``snapshot`` per board, then
the client receives one ``update`` per change; ``boards_diff`` with the boards
added, changed and removed, at most every ``board_list_interval`` seconds
while the list changes. permessage-deflate is offered when ``compression``
is on, and used with the clients that ask for it.

A fan-out writes a message to many connections without awaiting any. The
connections without an extension (no permessage-deflate: every frame of a
message is the same bytes for all of them) get one frame, serialised once
per message (:class:`websockets.frames.Frame`, websockets' low-level API),
written to each connection's transport after the same checks websockets'
:func:`~websockets.asyncio.server.broadcast` makes (the connection open, no
fragmented message in progress). That reaches past websockets' connection
API, for a measured reason: ``broadcast()`` frames the message again for
every connection, about 2 µs of the 9-15 µs a viewer costs per update
(bench/fanout.py, docs/benchmarks.md "One frame for every viewer, one write
for what waits"). The
connection's own writes (pings, pongs, the close) go through its protocol
and straight to the same transport, whose writes keep their order: nothing
is buffered between the two. Connections with permessage-deflate compress
with their own context: they get the message through ``broadcast()``.

A fan-out to many clients is written ``fanout_chunk`` clients per event-loop
iteration, in order (first in, first out), so that the engine's workers and
the feeds are not held up behind thousands of writes. A message to the same
clients as the last one queued, while that one is still being written (a
move's evaluation behind the move, another board's update for viewers of
every board), joins it: the clients not yet written get both in one write,
one system call where there were two (the system call is most of what a
viewer costs); the clients already written get it next, and the messages
that come after it join that. Each client gets every message in the order
they came. Before each write the
connection's write buffer is read
(``connection.transport.get_write_buffer_size()``): a client above
``soft_backlog`` bytes is not written to, and the hub marks it stale; its
buffer is then read every ``POLL_S`` seconds until it drains below
``low_backlog`` (it gets a fresh ``snapshot`` of each board it missed instead
of the backlog) or is aborted (``hard_backlog``, ``stale_timeout``). One
slow client never delays the others: nothing on the publishing path awaits a
client.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl as ssl_module
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from http import HTTPStatus
from pathlib import Path
from typing import Any, Protocol, assert_never
from urllib.parse import urlsplit

import structlog
from websockets.asyncio.server import Server, ServerConnection, broadcast, serve
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame, Opcode
from websockets.http11 import Request, Response
from websockets.protocol import State

from livegain import __version__
from livegain.publish.actions import Action, BoardsChanged, Close, Send
from livegain.publish.entry import BoardEntry, StateLike, summary_of
from livegain.publish.http import (
    CONTENT_TYPES,
    PAGES,
    STATIC_DIR,
    HeadCheckedConnection,
    HttpSite,
    Notes,
    ip_of,
    peer_of,
    response_of,
    safe_join,
)
from livegain.publish.hub import Hub, ServerStats
from livegain.publish.limits import ServerLimits
from livegain.publish.publication import Kind, Publication
from livegain.publish.schema import PROTOCOL_VERSION, BoardState, BoardSummary, Update

__all__ = [
    "CONTENT_TYPES",
    "PAGES",
    "STATIC_DIR",
    "WS_PATH",
    "BoardEntry",
    "LiveServer",
    "ServerLimits",
    "ServerOwner",
    "ServerStats",
    "StateLike",
    "raise_fd_limit",
    "safe_join",
    "summary_of",
]

log = structlog.get_logger("livegain.publish.server")

WS_PATH = "/ws"
# One machine under three names: a page served as http://localhost:8080 may open
# ws://127.0.0.1:8080/ws and the other way round (the server's own pages).
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
POLL_S = 0.05
"""Seconds between two reads of a lagging client's write buffer."""

_OPEN = State.OPEN


class ServerOwner(Protocol):
    """What the server asks of the program that runs it (the service), handed to
    it at construction: the server never reaches into that program otherwise."""

    def remove_board(self, board_id: str, /) -> bool:
        """An operator's removal (``DELETE /api/boards/{id}``): the board
        leaves everywhere (the host hands its removal back to this server);
        whether it was found."""
        ...

    def publish(self, publication: Publication, /) -> None:
        """A publication made here (the board list changed) for the host's
        publication chain, which ends at this server and the other outputs."""
        ...


class _Outgoing:
    """Messages being written to the same clients, in order, ``pos`` of them
    done: one message, or several that came while the first was still being
    written (:meth:`LiveServer._enqueue`), each client's in one write."""

    __slots__ = ("clients", "pos", "sends")

    def __init__(
        self, send: Send[ServerConnection], clients: Sequence[ServerConnection] | None = None
    ) -> None:
        self.sends = [send]
        self.clients = send.clients if clients is None else clients
        self.pos = 0


def _same_clients(a: Sequence[ServerConnection], b: Sequence[ServerConnection]) -> bool:
    """Whether two fan-outs go to the same clients in the same order (the
    hub's subscriber lists are replaced when they change, never changed in
    place: the same board's are one list)."""
    return a is b or (len(a) == len(b) and list(a) == list(b))


def _frame(data: bytes) -> bytes:
    """A text message's one frame on the wire, from a server (not masked, no
    extension: the same bytes for every connection without one)."""
    return Frame(Opcode.TEXT, data).serialize(mask=False, extensions=[])


class LiveServer:
    """The WebSocket + HTTP server. Feed it board states and updates.

    The service hands it each :class:`~livegain.publish.publication.Publication`
    (:meth:`deliver`: it is the last step of the publication chain, beside the
    MQTT publisher); :meth:`set_board` adds or re-sends a board whole and
    :meth:`publish` sends one update with the board state after it.
    Everything here runs on the event loop; publishing never awaits.

    ``owner`` (None: a server on its own, e.g. a gateway's): who removes a
    board on an operator's request, and takes the board list each time it
    changes (:class:`ServerOwner`). ``metrics`` renders ``/metrics``
    (Prometheus text format; None: no such page).
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 8080,
        *,
        static_dir: Path = STATIC_DIR,
        limits: ServerLimits | None = None,
        health: Callable[[], dict[str, Any]] | None = None,
        board_status: Callable[[], dict[str, Any]] | None = None,
        server_name: str = f"livegain {__version__}",
        admin_token: str | None = None,
        ssl: ssl_module.SSLContext | None = None,
        compression: bool = False,
        reuse_port: bool = False,
        owner: ServerOwner | None = None,
        metrics: Callable[[], bytes] | None = None,
    ) -> None:
        self.host = host
        self.requested_port = port
        self.limits = limits or ServerLimits()
        self.health_extra = health
        """Adds to (or overrides) ``/healthz`` (e.g. ``"status": "degraded"``)."""
        self.board_status = board_status
        """Each board's state, for ``/healthz/boards`` (None: no such page)."""
        self.server_name = server_name
        self.ssl = ssl
        """TLS context: serve ``https``/``wss`` (None: plain ``http``/``ws``)."""
        self.compression = compression
        """Offer permessage-deflate (negotiated per client; off by default)."""
        self.reuse_port = reuse_port
        """Listen with ``SO_REUSEPORT``: several processes share the port."""
        self.stats = ServerStats()
        self.hub: Hub[ServerConnection] = Hub(
            self.limits, server_name=server_name, stats=self.stats, peer=peer_of
        )
        self.admin_token = admin_token
        """Bearer token of ``DELETE /api/boards/{id}`` (None: no admin API)."""
        self.owner = owner
        """Removes a board on an operator's request (the service also takes it
        out of the game registry and the store; None: :meth:`remove_board`
        alone), and takes the board list each time a ``boards_diff`` goes
        out, so at most every ``board_list_interval`` seconds (to publish it,
        retained, over MQTT)."""
        self.metrics = metrics
        self._note = Notes()
        self.site = HttpSite(
            self.hub,
            static_dir=static_dir,
            limits=self.limits,
            stats=self.stats,
            health=self.health,
            board_status=lambda: self.board_status,
            metrics=lambda: self.metrics,
            remove=self._admin_remove,
            admin_token=admin_token,
            notes=self._note,
        )
        self._per_ip: Counter[str] = Counter()
        self._server: Server | None = None
        self._started = time.monotonic()
        self._tasks: set[asyncio.Task[None]] = set()
        self._outbox: deque[_Outgoing] = deque()
        self._draining = False
        self._list_timer: asyncio.TimerHandle | None = None
        self._poll_timer: asyncio.TimerHandle | None = None

    @property
    def static_dir(self) -> Path:
        return self.site.static_dir

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        self._started = time.monotonic()
        raise_fd_limit(self.limits.max_clients)
        self._server = await self._serve()
        self._after_change()

    async def _serve(self) -> Server:
        class Connection(HeadCheckedConnection):
            pass

        Connection.site = self.site
        kwargs: dict[str, Any] = {}
        if self.reuse_port:
            kwargs["reuse_port"] = True  # through to loop.create_server
        return await serve(
            self._handler,
            self.host,
            self.requested_port,
            process_request=self._process_request,
            create_connection=Connection,
            max_size=self.limits.max_frame_bytes,
            max_queue=16,
            compression="deflate" if self.compression else None,
            ssl=self.ssl,
            ping_interval=self.limits.ping_interval,
            ping_timeout=self.limits.ping_timeout,
            logger=logging.getLogger("livegain.websockets"),
            **kwargs,
        )

    async def close(self) -> None:
        for timer in (self._list_timer, self._poll_timer):
            if timer is not None:
                timer.cancel()
        self._list_timer = self._poll_timer = None
        if self._server is not None:
            self._server.close(close_connections=True)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(5):  # not wait_for: see livegain/mqtt/client.py
                    await self._server.wait_closed()
            self._server = None
        for task in list(self._tasks):
            task.cancel()

    async def __aenter__(self) -> LiveServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def serve_forever(self) -> None:
        """Start if needed and run until cancelled."""
        if self._server is None:
            await self.start()
        try:
            await asyncio.Event().wait()
        finally:
            await self.close()

    @property
    def port(self) -> int:
        if self._server is None:
            return self.requested_port
        for sock in self._server.sockets:
            return int(sock.getsockname()[1])
        return self.requested_port

    @property
    def url(self) -> str:
        host = self.host if self.host not in ("0.0.0.0", "", "::") else "127.0.0.1"
        if ":" in host:
            host = f"[{host}]"
        scheme = "https" if self.ssl is not None else "http"
        return f"{scheme}://{host}:{self.port}/"

    @property
    def client_count(self) -> int:
        return self.hub.client_count

    # -------------------------------------------------------------- boards

    def board_ids(self) -> list[str]:
        return self.hub.board_ids()

    def has_board(self, board_id: str) -> bool:
        return self.hub.has_board(board_id)

    def state(self, board_id: str) -> BoardState | None:
        return self.hub.state(board_id)

    def snapshot_bytes(self, board_id: str) -> bytes | None:
        """The board's current ``snapshot`` message, serialised (cached per state)."""
        return self.hub.snapshot_bytes(board_id)

    def summaries(self) -> list[BoardSummary]:
        return self.hub.summaries()

    def set_board(self, state: StateLike) -> None:
        """Add or replace a board; subscribers get a full snapshot of it."""
        self._queue(self.hub.set_board(state))
        self._after_change()

    def remove_board(self, board_id: str) -> bool:
        """Forget a board: it leaves the board list (a ``removed`` diff)."""
        found = self.hub.remove_board(board_id)
        self._after_change()
        return found

    def publish(self, update: Update, state: StateLike) -> bytes:
        """Record ``state`` (the board after ``update``) and send ``update``.

        Returns the serialised update (the same bytes every client received),
        so that other publishers can reuse it.
        """
        data, actions = self.hub.publish(update, state)
        self._queue(actions)
        self._after_change()
        return data

    def publish_raw(
        self, board_id: str, data: bytes, state: StateLike, result: str | None = None
    ) -> None:
        """Like :meth:`publish` with an update already serialised."""
        self._queue(self.hub.publish_raw(board_id, data, state, result))
        self._after_change()

    def board_page(
        self, cursor: int = 0, limit: int | None = None, *, reset: bool = False
    ) -> bytes:
        """A ``boards`` message: the boards after ``cursor``, ``limit`` at most
        (None: all of them)."""
        return self.hub.board_page(cursor, limit, reset=reset)

    def publish_moment(self, board_id: str, data: bytes) -> None:
        """A board's new ``moment`` message (serialised): sent to the board's
        subscribers, and kept for those who subscribe later (the latest
        :data:`livegain.publish.recent_moments.KEPT`)."""
        self._queue(self.hub.publish_moment(board_id, data))

    def publish_standings(self, event: str, data: bytes) -> None:
        """An event's new ``standings`` message (serialised): kept for
        ``/api/standings`` and new subscribers, sent to its subscribers."""
        self._queue(self.hub.publish_standings(event, data))

    def deliver(self, p: Publication, /) -> None:
        """The last step of the publication chain: ``p`` to the hub (its
        subscribers, ``/api``); the board list is the hub's own."""
        if p.kind is Kind.BOARD:
            if p.whole:
                self.set_board(p.entry)
            else:
                for update, data in zip(p.updates, p.encoded, strict=True):
                    self.publish_raw(p.key, data, p.entry, update.result)
        elif p.kind is Kind.MOMENT:
            self.publish_moment(p.key, p.data)
        elif p.kind is Kind.STANDINGS:
            self.publish_standings(p.key, p.data)
        elif p.kind is Kind.REMOVAL:
            self.remove_board(p.key)
        elif p.kind is Kind.BOARD_LIST:
            pass  # made here
        else:
            assert_never(p.kind)

    def _admin_remove(self, board_id: str) -> bool:
        """An operator's removal: the host's (which also knows boards held
        by a broadcast delay), else this server's; whether the board was found."""
        if self.owner is not None:
            return self.owner.remove_board(board_id)
        return self.remove_board(board_id)

    # ---------------------------------------------------------- hub timers

    def _after_change(self) -> None:
        """Start the board-list timer when the hub has changes to send."""
        if self._list_timer is not None or not self.hub.list_pending:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on the loop yet: start() comes back here
            return
        self._list_timer = loop.call_later(self.limits.board_list_interval, self._flush_list)

    def _flush_list(self) -> None:
        self._list_timer = None
        self._queue(self.hub.flush_list())
        self._after_change()

    def _watch_lagging(self) -> None:
        if self._poll_timer is None:
            loop = asyncio.get_running_loop()
            self._poll_timer = loop.call_later(POLL_S, self._poll_lagging)

    def _poll_lagging(self) -> None:
        """Report each lagging client's write buffer to the hub (resync or abort)."""
        self._poll_timer = None
        now = time.monotonic()
        for ws in self.hub.lagging_clients():
            self._apply(self.hub.poll(ws, _backlog(ws), now))
        if self.hub.lagging_clients():
            self._watch_lagging()

    # -------------------------------------------------------------- writes

    def _queue(self, actions: Sequence[Action[ServerConnection]]) -> None:
        """Carry out the hub's answer to a publication: fan-outs are queued
        (written in chunks from the next loop iteration on)."""
        for action in actions:
            if isinstance(action, Send):
                self._enqueue(action)
            else:
                self._apply([action])

    def _enqueue(self, send: Send[ServerConnection]) -> None:
        """Queue a fan-out. A message to the same clients as the last one
        queued, which is not yet written to all of them, joins it: the
        clients it has not reached get both in one write (one system call
        instead of two: the write is most of a viewer's cost), those it has
        reached get the new one next, on its own (and the messages after it
        with it). Each client still gets every message in the order they came."""
        last = self._outbox[-1] if self._outbox else None
        if last is not None and _same_clients(last.clients, send.clients):
            done = last.pos
            last.sends.append(send)
            if done:
                self._outbox.append(_Outgoing(send, send.clients[:done]))
            return  # the outbox is being drained
        self._outbox.append(_Outgoing(send))
        if not self._draining:
            # The first chunk goes out one loop iteration later, so that the
            # tasks created with this message (the engine's request for the
            # position just published) take their first step, and the search
            # begins, before the fan-out does.
            self._draining = True
            loop = asyncio.get_running_loop()
            loop.call_soon(loop.call_soon, self._drain_outbox)

    def _drain_outbox(self) -> None:
        try:
            budget = self.limits.fanout_chunk
            while self._outbox and budget > 0:
                item = self._outbox[0]
                clients = item.clients
                start = item.pos
                end = min(len(clients), start + budget)
                # These clients count as written before they are, and get the
                # messages joined so far: one that joins during the writes
                # (a publication made meanwhile) reaches them on its own.
                item.pos = end
                sends = tuple(item.sends)
                try:
                    self._write(sends, clients[start:end])
                except Exception as exc:  # a bug must not stop every later message
                    log.exception("fanout_failed", board_id=sends[0].board_id, error=str(exc))
                budget -= end - start
                if end >= len(clients):
                    self._outbox.popleft()
        finally:
            if self._outbox:
                asyncio.get_running_loop().call_soon(self._drain_outbox)
            else:
                self._draining = False

    @property
    def outbox(self) -> int:
        """Messages not yet written to all their clients (those joined count once)."""
        return len(self._outbox)

    def _apply(self, actions: Sequence[Action[ServerConnection]]) -> None:
        """Carry out the hub's answer at once (to one client's message, a resync)."""
        for action in actions:
            if isinstance(action, Send):
                self._write((action,), action.clients)
            elif isinstance(action, Close):
                self._close(action)
            elif isinstance(action, BoardsChanged) and self.owner is not None:
                self.owner.publish(Publication.board_list(action.page, at=time.time()))

    def _write(
        self, sends: Sequence[Send[ServerConnection]], clients: Sequence[ServerConnection]
    ) -> None:
        """Write ``sends``, in order, to each of ``clients`` in one write, now,
        without awaiting any.

        A board's message skips the clients stale for it; any checked message
        skips (and reports to the hub) the clients whose write buffer is
        above ``soft_backlog``. This loop is the fan-out's hot path: the
        messages' frames are joined once, and a client that no check stops
        (no client stale, no compression, room in its write buffer for every
        message) gets those bytes as they are; only the others are written
        message by message.
        """
        hub = self.hub
        stale_any = hub.has_lagging
        soft = self.limits.soft_backlog
        # Each message's frame, serialised once, and all of them in one buffer:
        # what every client gets when none of the checks below says otherwise.
        frames = [_frame(s.data) for s in sends]
        joined = frames[0] if len(frames) == 1 else b"".join(frames)
        checked = any(s.checked for s in sends)
        # The most the write buffer may hold now for every message to pass the
        # soft limit: it is judged before the last one, after the others.
        room = soft - (len(joined) - len(frames[-1]))
        count = len(sends)
        written = 0
        lagging = False
        for ws in clients:
            protocol = ws.protocol
            if protocol.state is not _OPEN or ws.send_in_progress is not None:
                continue
            transport = ws.transport
            if transport.is_closing():  # aborted, not yet reported closed
                continue
            if not (stale_any or protocol.extensions) and (
                not checked or transport.get_write_buffer_size() <= room
            ):
                transport.write(joined)
                written += count
                continue
            # Message by message: stale for a board, near the soft limit, or
            # compressed with the connection's own context. The backlog before
            # each message is at most what the write buffer holds now, then as
            # if the kernel took nothing of the messages joined before it; read
            # again (after writing those) when that is over the soft limit.
            backlog = transport.get_write_buffer_size() if checked else 0
            plain = not protocol.extensions
            data: list[bytes] = []
            for k, s in enumerate(sends):
                if s.checked:
                    if stale_any and not hub.recipients(s, (ws,)):
                        continue  # stale for its board: a snapshot comes with the resync
                    if backlog > soft and data:
                        transport.write(b"".join(data))
                        data = []
                        backlog = transport.get_write_buffer_size()
                    if backlog > soft:
                        self._apply(hub.lagging(ws, s, backlog, time.monotonic()))
                        lagging = True
                        continue
                written += 1
                if plain:
                    data.append(frames[k])
                    backlog += len(frames[k])
                else:  # compressed with the connection's own context
                    broadcast((ws,), s.data, text=True)
                    backlog = transport.get_write_buffer_size()
            if data:
                transport.write(data[0] if len(data) == 1 else b"".join(data))
        if lagging:
            self._watch_lagging()
        self.stats.messages_sent += written

    def _close(self, action: Close[ServerConnection]) -> None:
        ws = action.client
        if action.abort:
            transport = ws.transport
            if transport is not None:
                transport.abort()
            return
        task = asyncio.get_running_loop().create_task(ws.close(action.code, action.reason))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------- clients

    async def _handler(self, ws: ServerConnection) -> None:
        hub = self.hub
        self.stats.connections_total += 1
        try:
            self._apply(hub.connect(ws))
            async for message in ws:
                actions = hub.receive(ws, message, time.monotonic())
                mine = next((a for a in actions if isinstance(a, Close) and a.client is ws), None)
                self._apply([a for a in actions if a is not mine])
                if mine is not None:
                    await ws.close(mine.code, mine.reason)
                    break
        except ConnectionClosed:
            pass
        finally:
            hub.disconnect(ws)

    # ---------------------------------------------------------------- HTTP

    def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        split = urlsplit(request.path)
        if split.path == WS_PATH and request.method == "GET":
            return self._admit(connection, request)
        return self.site.answer(connection, request, split.path, split.query)

    def _admit(self, connection: ServerConnection, request: Request) -> Response | None:
        """Refuse a WebSocket handshake from a foreign page, a full server or an
        address that holds its share; else count it against its address."""
        limits = self.limits
        origin = request.headers.get("Origin")
        if not self._origin_allowed(origin, request.headers.get("Host")):
            self.stats.refused_origin += 1
            self._note("ws_origin_refused", origin=origin, peer=peer_of(connection))
            body = f"origin not allowed: {origin}\n".encode("utf-8", "replace")
            return response_of(HTTPStatus.FORBIDDEN, body, ".txt")
        if self.hub.client_count >= limits.max_clients:
            self.stats.refused += 1
            self._note("ws_server_full", clients=self.hub.client_count)
            return response_of(HTTPStatus.SERVICE_UNAVAILABLE, b"too many connections\n", ".txt")
        ip = ip_of(connection)
        cap = limits.max_connections_per_ip
        if cap and self._per_ip[ip] >= cap:
            self.stats.refused_per_ip += 1
            self._note("ws_per_ip_refused", ip=ip, limit=cap)
            body = f"too many connections from {ip} (limit {cap})\n".encode()
            return response_of(HTTPStatus.TOO_MANY_REQUESTS, body, ".txt")
        self._per_ip[ip] += 1
        task = asyncio.get_running_loop().create_task(self._release_ip(connection, ip))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return None

    async def _release_ip(self, connection: ServerConnection, ip: str) -> None:
        try:
            await connection.wait_closed()
        finally:
            left = self._per_ip[ip] - 1
            if left > 0:
                self._per_ip[ip] = left
            else:
                self._per_ip.pop(ip, None)

    def _origin_allowed(self, origin: str | None, host: str | None) -> bool:
        if origin is None:
            return True  # not a browser page: OBS, command-line tools
        allowed = self.limits.origins
        if "*" in allowed or origin in allowed:
            return True
        if host is None or origin == "null":
            return False
        try:
            theirs = urlsplit(origin).hostname
            ours = urlsplit(f"//{host}").hostname
        except ValueError:
            return False
        if theirs is None or ours is None:
            return False
        return theirs == ours or (theirs in LOOPBACK_NAMES and ours in LOOPBACK_NAMES)

    def bad_request(self, status: HTTPStatus, why: str, peer: str) -> Response:
        """The answer to a request that is malformed or uses a method not served."""
        return self.site.bad_request(status, why, peer)

    def health(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "status": "ok",
            "version": __version__,
            "protocol": PROTOCOL_VERSION,
            "boards": self.hub.board_count,
            "clients": self.hub.client_count,
            "uptime": round(time.monotonic() - self._started, 3),
            "event_loop": type(asyncio.get_running_loop()).__module__.split(".")[0],
            "websocket": {
                "connections_total": self.stats.connections_total,
                "protocol_errors": self.stats.protocol_errors,
                "closed_abusive": self.stats.closed_abusive,
                "closed_slow": self.stats.closed_slow,
                "resyncs": self.stats.resyncs,
                "dropped_updates": self.stats.dropped_updates,
                "messages_sent": self.stats.messages_sent,
                "refused": self.stats.refused,
                "refused_origin": self.stats.refused_origin,
                "refused_per_ip": self.stats.refused_per_ip,
                "bad_requests": self.stats.bad_requests,
                "admin_refused": self.stats.admin_refused,
                "boards_removed": self.stats.boards_removed,
                "board_list_diffs": self.stats.board_list_diffs,
                "tls": self.ssl is not None,
                "compression": self.compression,
            },
        }
        if self.health_extra is not None:
            out.update(self.health_extra())  # may set "status": "degraded" and "problems"
        return out


def _backlog(ws: ServerConnection) -> int:
    """Bytes in the connection's write buffer (0 once its transport is gone)."""
    transport = ws.transport
    if transport is None or transport.is_closing():
        return 0
    return int(transport.get_write_buffer_size())


def raise_fd_limit(clients: int) -> None:
    """Let this process hold a socket per client.

    The soft limit on open files is often 1024; it is raised towards the hard
    limit, as far as ``clients`` plus some room needs.
    """
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = clients + 1024
    if hard != resource.RLIM_INFINITY:
        want = min(want, hard)
    if soft != resource.RLIM_INFINITY and soft < want:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
