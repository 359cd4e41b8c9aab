"""One port for everything: the WebSocket feed at ``/ws`` and plain HTTP.

HTTP (answered from ``process_request`` before any WebSocket handshake):

- ``/`` -> ``overlay/static/index.html``; ``/overlay/board`` and
  ``/overlay/boards`` -> ``board.html`` / ``boards.html``;
  ``/overlay/static/<file>`` -> files under ``livegain/overlay/static``;
- ``/healthz`` -> JSON (status, boards, clients, engine, uptime, counters);
- ``/api/boards`` -> JSON list of :class:`~livegain.publish.schema.BoardSummary`
  (``?offset=&limit=`` for a part of it); ``/api/boards/<id>`` -> one
  :class:`~livegain.publish.schema.BoardState`;
- ``DELETE /api/boards/<id>`` with ``Authorization: Bearer <admin token>``
  removes a board (only when an admin token is configured).

Only GET (and OPTIONS, and that DELETE) are answered; other methods get 405,
a malformed request 400, and a request pipelined behind another is not read
(the answer to the first closes the connection, as every answer here does).
Pages of another origin may not open ``/ws`` unless allowed (``origins``);
no CORS header is sent unless configured (``cors_origins``); one address may
hold at most ``max_connections_per_ip`` WebSocket connections (HTTP 429).

WebSocket protocol (see ``docs/protocol/README.md``): on connect the server
sends ``hello`` with the first page of the board list (``list_boards`` asks
for the next pages); a ``subscribe`` answers one ``snapshot`` per board, then
the client receives one ``update`` per change; ``boards_diff`` with the
boards added, changed and removed, at most every ``board_list_interval``
seconds while the list changes.

Fan-out: each message is serialised and framed once and written to every
subscriber without awaiting (like :func:`websockets.asyncio.server.broadcast`,
without framing it once per connection); a large fan-out is written in chunks,
one per event-loop iteration, and a board's next message joins one still
being written (see :meth:`LiveServer._merge`). A client
whose write buffer holds more than ``soft_backlog`` bytes stops receiving
updates: the boards it missed are marked stale and, once its buffer drains, it
receives a fresh ``snapshot`` of each instead of the backlog. A client that
does not drain within ``stale_timeout`` seconds, or whose buffer passes
``hard_backlog`` bytes, is disconnected. One slow client never delays the
others: nothing on the publishing path awaits a client.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import hmac
import json
import logging
import socket
import struct
import time
from collections import Counter, deque
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import structlog
from pydantic import TypeAdapter, ValidationError
from websockets.asyncio.server import Server, ServerConnection, broadcast, serve
from websockets.datastructures import Headers
from websockets.exceptions import (
    ConnectionClosed,
    HeaderLineTooLong,
    InvalidMessage,
    RequestLineTooLong,
    TooManyHeaders,
)
from websockets.http11 import Request, Response
from websockets.protocol import Protocol, State

from livegain import __version__
from livegain.publish.fanout import MAX_FRAME as FANOUT_MAX_FRAME
from livegain.publish.fanout import MAX_JOBS as FANOUT_MAX_JOBS
from livegain.publish.fanout import FanoutHelpers, HelperFailed, current_cpu
from livegain.publish.schema import (
    PROTOCOL_VERSION,
    Boards,
    BoardsDiff,
    BoardState,
    BoardSummary,
    ClientMessage,
    Error,
    Hello,
    ListBoards,
    Ping,
    Pong,
    Snapshot,
    Subscribe,
    Unsubscribe,
    Update,
)

log = structlog.get_logger("livegain.publish.server")

STATIC_DIR = Path(__file__).resolve().parent.parent / "overlay" / "static"
WS_PATH = "/ws"

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".htm": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".ico": "image/x-icon",
    ".woff": "font/woff",
    ".woff2": "font/woff2",
    ".ttf": "font/ttf",
    ".txt": "text/plain; charset=utf-8",
    ".map": "application/json",
}

PAGES = {
    "/": "index.html",
    "/index.html": "index.html",
    "/overlay/board": "board.html",
    "/overlay/board.html": "board.html",
    "/overlay/boards": "boards.html",
    "/overlay/boards.html": "boards.html",
}

_CLIENT_ADAPTER: TypeAdapter[Subscribe | Unsubscribe | Ping | ListBoards] = TypeAdapter(
    ClientMessage
)


@dataclass(frozen=True)
class ServerLimits:
    """Bounds that protect the server from slow or hostile clients."""

    max_message_bytes: int = 4096
    """Client messages above this size get an ``error`` (the connection stays)."""
    max_frame_bytes: int = 65536
    """Frames above this size close the connection (code 1009)."""
    max_errors: int = 20
    """Protocol errors tolerated per connection before it is closed (1008)."""
    max_subscriptions: int = 64
    """Board ids one client may subscribe to (``"*"`` counts as one); beyond:
    an ``error`` (the connection stays)."""
    max_board_id: int = 96
    """Longest board id a client may name (the service's ids are shorter)."""
    max_clients: int = 10_000
    """WebSocket connections beyond this are refused (HTTP 503)."""
    max_connections_per_ip: int = 64
    """WebSocket connections per client address beyond this are refused (HTTP
    429); 0: no limit. Behind a reverse proxy every client has its address:
    limit there instead."""
    origins: tuple[str, ...] = ()
    """Origins whose pages may open ``/ws`` besides the server's own host (any
    port); ``"*"``: any; ``"null"``: local files. A client that sends no
    ``Origin`` (OBS, tools) is always allowed; others get HTTP 403."""
    cors_origins: tuple[str, ...] = ()
    """Origins that get ``Access-Control-Allow-Origin`` on HTTP answers (``"*"``:
    any); none by default."""
    board_page: int = 100
    """Boards in ``hello`` and at most per ``list_boards`` page."""
    board_list_interval: float = 0.5
    """Seconds board-list changes are gathered into one ``boards_diff``."""
    rate: float = 20.0
    """Client messages per second allowed on average (a token bucket) ..."""
    burst: int = 40
    """... with bursts up to this many; beyond, messages get an ``error``."""
    soft_backlog: int = 256 * 1024
    """Write-buffer bytes above which a client stops getting updates (resync later)."""
    low_backlog: int = 16 * 1024
    """Write-buffer bytes below which a stale client receives its snapshots."""
    hard_backlog: int = 8 * 1024 * 1024
    """Write-buffer bytes above which a client is disconnected at once."""
    stale_timeout: float = 30.0
    """Seconds a stale client may take to drain before it is disconnected."""
    fanout_chunk: int = 500
    """Socket writes per event-loop iteration and per process (the server's and
    each fan-out helper's) when one message goes to many clients."""
    helper_min: int = 64
    """Fewest clients in one chunk of a fan-out for the helpers to take a share."""
    helper_weight: float = 1.3
    """A helper's share of a fan-out against the server's own (which also
    checks every client before handing them out)."""
    helper_batch: int = 64
    """Clients per job handed to a helper (it starts on the first job while
    the next ones are being checked)."""
    helper_timeout: float = 2.0
    """Seconds a helper may take to answer before it is given up."""
    ping_interval: float | None = 20.0
    ping_timeout: float | None = 20.0


@dataclass
class ServerStats:
    connections_total: int = 0
    protocol_errors: int = 0
    closed_abusive: int = 0
    closed_slow: int = 0
    resyncs: int = 0
    dropped_updates: int = 0
    messages_sent: int = 0
    http_requests: int = 0
    refused: int = 0
    refused_origin: int = 0
    """WebSocket handshakes refused for their Origin (HTTP 403)."""
    refused_per_ip: int = 0
    """WebSocket handshakes refused for the per-address cap (HTTP 429)."""
    bad_requests: int = 0
    """HTTP requests answered 400 or 405 (malformed, or a method not served)."""
    admin_refused: int = 0
    """Admin requests without the right token (HTTP 401)."""
    boards_removed: int = 0
    board_list_diffs: int = 0
    """``boards_diff`` messages sent (each to every client)."""
    helper_writes: int = 0
    """Writes made by the fan-out helpers (included in ``messages_sent``)."""
    helper_short: int = 0
    """Helper writes that the server finished (a partial write or an error)."""
    helper_failures: int = 0


@dataclass(eq=False)
class _Outgoing:
    frame: bytes
    board_id: str | None
    clients: list[_Client]
    pos: int = 0
    count: int = 1
    """Messages in ``frame`` (several when later ones were merged into it)."""
    catch_up_of: _Outgoing | None = None
    """For the clients an item had reached when a message was merged into it:
    that item (the merged message follows for them separately)."""


@dataclass(eq=False)
class _Client:
    ws: ServerConnection
    all_boards: bool = False
    boards: set[str] = field(default_factory=set)
    stale: set[str] = field(default_factory=set)
    stale_since: float | None = None
    boards_stale: bool = False
    errors: int = 0
    tokens: float = 0.0
    last_refill: float = 0.0
    dropped: int = 0
    resyncs: int = 0
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    transport: asyncio.Transport = field(init=False)
    protocol: Protocol = field(init=False)
    sock: socket.socket | None = field(init=False)
    """The connection's socket when its transport is asyncio's selector
    transport (written to directly while the transport's buffer is empty)."""
    helper_id: int | None = None
    """The socket's id with the fan-out helpers, once registered."""

    def __post_init__(self) -> None:
        self.transport = self.ws.transport
        self.protocol = self.ws.protocol
        self.sock = _raw_socket(self.transport)

    def wants(self, board_id: str) -> bool:
        return self.all_boards or board_id in self.boards

    def backlog(self) -> int:
        transport = self.ws.transport
        if transport is None or transport.is_closing():
            return 0
        return int(transport.get_write_buffer_size())

    @property
    def peer(self) -> str:
        try:
            addr = self.ws.remote_address
        except Exception:  # pragma: no cover - transport gone
            return "?"
        return f"{addr[0]}:{addr[1]}" if isinstance(addr, tuple) else str(addr)


def summary_of(state: BoardState) -> BoardSummary:
    """The short form of a board for board lists."""
    return BoardSummary(
        board_id=state.board_id,
        tournament=state.tournament,
        round=state.round,
        board=state.board,
        white=state.white,
        black=state.black,
        result=state.result,
        plies=len(state.moves),
        eval=state.eval,
        white_perceived=state.white_perceived,
        black_perceived=state.black_perceived,
        white_algorithm4=state.white_algorithm4,
        black_algorithm4=state.black_algorithm4,
    )


StateLike = BoardState | Callable[[], BoardState]
"""A board state, or a function that builds it when needed (it is built lazily:
only when a snapshot, a summary or the board list needs it)."""


class _BoardEntry:
    __slots__ = ("_factory", "_snapshot", "_state", "_summary", "_summary_json", "list_key")

    def __init__(self, state: StateLike, list_key: tuple[str, str, str, str] | None = None) -> None:
        self._state: BoardState | None = None
        self._factory: Callable[[], BoardState] | None = None
        if isinstance(state, BoardState):
            self._state = state
        else:
            self._factory = state
        self._snapshot: bytes | None = None
        self._summary: BoardSummary | None = None
        self._summary_json: bytes | None = None
        if list_key is None:
            st = self.state
            list_key = (st.board_id, st.white.name, st.black.name, st.result)
        self.list_key = list_key

    @property
    def state(self) -> BoardState:
        if self._state is None:
            assert self._factory is not None
            self._state = self._factory()
            self._factory = None
        return self._state

    def snapshot_bytes(self) -> bytes:
        if self._snapshot is None:
            self._snapshot = Snapshot(state=self.state).model_dump_json().encode()
        return self._snapshot

    def summary(self) -> BoardSummary:
        if self._summary is None:
            self._summary = summary_of(self.state)
        return self._summary

    def summary_json(self) -> bytes:
        if self._summary_json is None:
            self._summary_json = self.summary().model_dump_json().encode()
        return self._summary_json


class LiveServer:
    """The WebSocket + HTTP server. Feed it board states and updates.

    The service calls :meth:`set_board` when a board appears or must be
    re-sent whole (a reset), and :meth:`publish` with each update and the
    board state after it. Everything here runs on the event loop; publishing
    never awaits.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 8080,
        *,
        static_dir: Path = STATIC_DIR,
        limits: ServerLimits | None = None,
        health: Callable[[], dict[str, Any]] | None = None,
        server_name: str = f"livegain {__version__}",
        fanout_helpers: int = 0,
        helper_cpus: list[int] | None = None,
        admin_token: str | None = None,
    ) -> None:
        self.host = host
        self.requested_port = port
        self.static_dir = static_dir.resolve()
        self.limits = limits or ServerLimits()
        self.health_extra = health
        self.server_name = server_name
        self.stats = ServerStats()
        self._boards: dict[str, _BoardEntry] = {}
        self._ords: dict[str, int] = {}
        """Per board, its place in the board list (increasing in the order of
        ``_boards``: a page cursor is the last place it holds)."""
        self._last_ord = 0
        self._announced: dict[str, tuple[str, str, str, str]] = {}
        """The board list as the last ``boards_diff`` left it (id -> list key)."""
        self._list_dirty: set[str] = set()
        self._list_timer: asyncio.TimerHandle | None = None
        self._per_ip: Counter[str] = Counter()
        self._log_times: dict[str, float] = {}
        self._log_skipped: Counter[str] = Counter()
        self.admin_token = admin_token
        """Bearer token of ``DELETE /api/boards/{id}`` (None: no admin API)."""
        self.on_remove: Callable[[str], object] | None = None
        """Called to remove a board on an admin request (the service also takes it
        out of the game registry and the store, then calls :meth:`remove_board`);
        None: :meth:`remove_board` alone."""
        self._clients: set[_Client] = set()
        self._subscribers: dict[str, list[_Client]] = {}
        """Per board, the clients that receive it (rebuilt after any change of
        clients or subscriptions; lists are replaced, never changed in place)."""
        self._server: Server | None = None
        self._started = time.monotonic()
        self._tasks: set[asyncio.Task[None]] = set()
        self._outbox: deque[_Outgoing] = deque()
        self._draining = False
        self.fanout_helpers = fanout_helpers
        """Helper processes that write large fan-outs for this one (0: none)."""
        self.helper_cpus = helper_cpus
        """CPUs the helpers are pinned to, one each in turn (None: every usable
        CPU; empty: not pinned)."""
        self._helpers: FanoutHelpers | None = None
        self.on_boards: Callable[[bytes], None] | None = None
        """Called with the whole board list (a ``boards`` message) each time a
        ``boards_diff`` goes out, so at most every ``board_list_interval``
        seconds (e.g. to publish it, retained, over MQTT)."""
        self.metrics: Callable[[], bytes] | None = None
        """Renders ``/metrics`` (Prometheus text format); None: no such page."""

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        self._started = time.monotonic()
        if self.fanout_helpers > 0 and self._helpers is None:
            raise_fd_limit(self.limits.max_clients)
            helpers = FanoutHelpers(
                self.fanout_helpers, cpus=self.helper_cpus, timeout=self.limits.helper_timeout
            )
            try:
                await asyncio.to_thread(helpers.start)
            except (HelperFailed, OSError) as exc:
                log.warning("fanout_helpers_unavailable", error=str(exc))
            else:
                self._helpers = helpers
        try:
            self._server = await self._serve()
            if self._list_dirty:
                self._schedule_list()
        except BaseException:
            if self._helpers is not None:
                helpers, self._helpers = self._helpers, None
                helpers.close()
            raise

    async def _serve(self) -> Server:
        live = self

        class Connection(_Connection):
            pass

        Connection.live = live
        return await serve(
            self._handler,
            self.host,
            self.requested_port,
            process_request=self._process_request,
            create_connection=Connection,
            max_size=self.limits.max_frame_bytes,
            max_queue=16,
            compression=None,
            ping_interval=self.limits.ping_interval,
            ping_timeout=self.limits.ping_timeout,
            logger=logging.getLogger("livegain.websockets"),
        )

    async def close(self) -> None:
        if self._list_timer is not None:
            self._list_timer.cancel()
            self._list_timer = None
        if self._server is not None:
            self._server.close(close_connections=True)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), timeout=5)
            self._server = None
        for task in list(self._tasks):
            task.cancel()
        if self._helpers is not None:
            helpers, self._helpers = self._helpers, None
            await asyncio.to_thread(helpers.close)

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
        return f"http://{host}:{self.port}/"

    @property
    def client_count(self) -> int:
        return len(self._clients)

    # -------------------------------------------------------------- boards

    def board_ids(self) -> list[str]:
        return list(self._boards)

    def has_board(self, board_id: str) -> bool:
        return board_id in self._boards

    def state(self, board_id: str) -> BoardState | None:
        entry = self._boards.get(board_id)
        return entry.state if entry else None

    def snapshot_bytes(self, board_id: str) -> bytes | None:
        """The board's current ``snapshot`` message, serialised (cached per state)."""
        entry = self._boards.get(board_id)
        return entry.snapshot_bytes() if entry else None

    def summaries(self) -> list[BoardSummary]:
        return [e.summary() for e in self._boards.values()]

    def set_board(self, state: BoardState) -> None:
        """Add or replace a board; subscribers get a full snapshot of it."""
        entry = _BoardEntry(state)
        board_id = state.board_id
        old = self._boards.get(board_id)
        self._put(board_id, entry)
        self._send_to_subscribers(board_id, entry.snapshot_bytes())
        if old is None or old.list_key != entry.list_key:
            self._list_changed(board_id)

    def remove_board(self, board_id: str) -> bool:
        """Forget a board: it leaves the board list (a ``removed`` diff)."""
        if self._boards.pop(board_id, None) is None:
            return False
        self._ords.pop(board_id, None)
        self.stats.boards_removed += 1
        self._list_changed(board_id)
        return True

    def _put(self, board_id: str, entry: _BoardEntry) -> None:
        if board_id not in self._boards:
            self._last_ord += 1
            self._ords[board_id] = self._last_ord
        self._boards[board_id] = entry

    def publish(self, update: Update, state: StateLike) -> bytes:
        """Record ``state`` (the board after ``update``) and send ``update``.

        Returns the serialised update (the same bytes every client received),
        so that other publishers can reuse it.
        """
        data = update.model_dump_json().encode()
        self.publish_raw(update.board_id, data, state, update.result)
        return data

    def publish_raw(
        self, board_id: str, data: bytes, state: StateLike, result: str | None = None
    ) -> None:
        """Like :meth:`publish` with an update already serialised."""
        old = self._boards.get(board_id)
        new = old is None
        key = None
        if old is not None and result is not None:
            key = (old.list_key[0], old.list_key[1], old.list_key[2], result)
        entry = _BoardEntry(state, key)
        self._put(board_id, entry)
        if new:
            # A subscriber to a board it never saw needs the whole of it.
            self._send_to_subscribers(board_id, entry.snapshot_bytes())
        else:
            self._send_to_subscribers(board_id, data)
        # Replacing an entry keeps its place in the dict: the board list only
        # changes with a new board or a new list key.
        if old is None or entry.list_key != old.list_key:
            self._list_changed(board_id)

    # ---------------------------------------------------------- board list

    def _list_changed(self, board_id: str) -> None:
        self._list_dirty.add(board_id)
        self._schedule_list()

    def _schedule_list(self) -> None:
        if self._list_timer is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on the loop yet: start() schedules it
            return
        self._list_timer = loop.call_later(self.limits.board_list_interval, self._flush_list)

    def _flush_list(self) -> None:
        """Send what changed in the board list since the last time, as one diff."""
        self._list_timer = None
        dirty, self._list_dirty = self._list_dirty, set()
        added: list[BoardSummary] = []
        changed: list[BoardSummary] = []
        removed: list[str] = []
        announced = self._announced
        for board_id in sorted(dirty, key=lambda b: self._ords.get(b, 0)):
            entry = self._boards.get(board_id)
            before = announced.get(board_id)
            if entry is None:
                if before is not None:
                    del announced[board_id]
                    removed.append(board_id)
            elif before is None:
                announced[board_id] = entry.list_key
                added.append(entry.summary())
            elif before != entry.list_key:
                announced[board_id] = entry.list_key
                changed.append(entry.summary())
        if not (added or changed or removed):
            return
        self.stats.board_list_diffs += 1
        data = BoardsDiff(added=added, changed=changed, removed=removed).model_dump_json()
        self._fan_out_queued(list(self._clients), None, data.encode())
        if self.on_boards is not None:
            self.on_boards(self.board_page(0, None, reset=True))

    def _page(self, cursor: int, limit: int | None) -> tuple[list[_BoardEntry], int | None]:
        """Up to ``limit`` boards placed after ``cursor``, and the next cursor."""
        out: list[_BoardEntry] = []
        ords = self._ords
        last = 0
        for board_id, entry in self._boards.items():
            place = ords[board_id]
            if place <= cursor:
                continue
            if limit is not None and len(out) >= limit:
                return out, last
            out.append(entry)
            last = place
        return out, None

    def board_page(
        self, cursor: int = 0, limit: int | None = None, *, reset: bool = False
    ) -> bytes:
        """A ``boards`` message: the boards after ``cursor``, ``limit`` at most
        (None: all of them), serialised from each board's cached summary."""
        entries, nxt = self._page(cursor, limit)
        shell = Boards(boards=[], total=len(self._boards), next=nxt, reset=reset)
        return _splice(shell.model_dump_json().encode(), [e.summary_json() for e in entries])

    def _hello(self) -> bytes:
        entries, nxt = self._page(0, self.limits.board_page)
        shell = Hello(
            server=self.server_name, boards=[], boards_total=len(self._boards), boards_next=nxt
        )
        return _splice(shell.model_dump_json().encode(), [e.summary_json() for e in entries])

    def _send_to_subscribers(self, board_id: str, data: bytes) -> None:
        clients = self._subscribers.get(board_id)
        if clients is None:
            clients = [c for c in self._clients if c.wants(board_id)]
            self._subscribers[board_id] = clients
        self._fan_out_queued(clients, board_id, data)

    def _fan_out(self, clients: Iterable[_Client], board_id: str | None, data: bytes) -> None:
        """Write ``data`` to ``clients`` now (a few clients: snapshots, resyncs)."""
        self._write_each(clients, board_id, text_frame(data))

    def _fan_out_queued(self, clients: list[_Client], board_id: str | None, data: bytes) -> None:
        """Write ``data`` to many clients, ``fanout_chunk`` writes per loop iteration.

        Messages go out in order (first in, first out, each to all its clients
        before the next), but a large fan-out yields to the event loop between
        chunks, so that the engine's workers and the feeds are not held up
        behind a thousand socket writes.
        """
        if not clients:
            return
        frame = text_frame(data)
        if self._merge(clients, board_id, frame):
            return
        self._outbox.append(_Outgoing(frame, board_id, clients))
        if not self._draining:
            # The first chunk goes out one loop iteration later, so that the
            # tasks created with this message (the engine's request for the
            # position just published) take their first step, and the search
            # begins, before the fan-out does.
            self._draining = True
            loop = asyncio.get_running_loop()
            loop.call_soon(loop.call_soon, self._drain_outbox)

    def _merge(self, clients: list[_Client], board_id: str | None, frame: bytes) -> bool:
        """Add ``frame`` to the same board's message still being written, if any.

        The clients not reached yet get both in one write (one system call
        instead of two); those already reached get the new one afterwards, in
        a catch-up item. Each client still receives every message, in order.
        Only the tail of the outbox is considered, so nothing overtakes a
        message queued before it.
        """
        if not self._outbox:
            return False
        last = self._outbox[-1]
        if last.board_id != board_id:
            return False
        if last.clients is clients:
            last.frame += frame
            last.count += 1
            if last.pos:
                catch_up = _Outgoing(frame, board_id, clients[: last.pos], catch_up_of=last)
                self._outbox.append(catch_up)
            return True
        base = last.catch_up_of
        if (
            base is not None
            and len(self._outbox) >= 2
            and self._outbox[-2] is base
            and base.clients is clients
            and base.pos == len(last.clients)
            and last.pos == 0
        ):
            # [message being written, its catch-up not started]: neither has
            # moved since, so each client is in exactly one of them.
            base.frame += frame
            base.count += 1
            last.frame += frame
            last.count += 1
            return True
        return False

    def _drain_outbox(self) -> None:
        try:
            budget = self.limits.fanout_chunk * self._writers()
            while self._outbox and budget > 0:
                item = self._outbox[0]
                end = min(len(item.clients), item.pos + budget)
                try:
                    self._write_to(
                        item.clients[item.pos : end], item.board_id, item.frame, item.count
                    )
                except Exception as exc:  # a bug must not stop every later message
                    log.exception("fanout_failed", board_id=item.board_id, error=str(exc))
                budget -= end - item.pos
                item.pos = end
                if item.pos >= len(item.clients):
                    self._outbox.popleft()
        finally:
            if self._outbox:
                asyncio.get_running_loop().call_soon(self._drain_outbox)
            else:
                self._draining = False

    def _writers(self) -> int:
        """Processes that write one fan-out: this one and the helpers on other cores."""
        helpers = self._helpers
        if helpers is None or not helpers.active:
            return 1
        return 1 + len(helpers.elsewhere(current_cpu()))

    @property
    def outbox(self) -> int:
        """Messages not yet written to all their clients."""
        return len(self._outbox)

    def _write_to(
        self, clients: list[_Client], board_id: str | None, frame: bytes, count: int = 1
    ) -> None:
        """Write one frame to each client, with the fan-out helpers' help when
        there are enough clients.

        The helpers pinned to other cores than this process's current one
        take the first part of the list: of it, the clients a plain ``send``
        would reach (open, not stale for this board, nothing buffered), in
        turn; the others stay here with the rest of the list. While they
        write, this process writes its part; then it waits for them without
        returning to the event loop, so nothing else is written to their
        clients meanwhile, and finishes the writes they could not complete.
        """
        helpers = self._helpers
        if helpers is not None and helpers.broken is not None:
            self._helpers_failed(helpers, [])
            helpers = None
        if (
            helpers is None
            or not helpers.active
            or len(clients) < self.limits.helper_min
            or len(frame) > FANOUT_MAX_FRAME
        ):
            self._write_each(clients, board_id, frame, count)
            return
        mine = helpers.elsewhere(current_cpu())
        if not mine:
            self._write_each(clients, board_id, frame, count)
            return
        weight = len(mine) * self.limits.helper_weight
        cut = round(len(clients) * weight / (weight + 1))
        # Jobs of ``batch`` clients: the first helper starts after the first
        # few checks, not after all of them; at most MAX_JOBS per helper (its
        # answers wait in its socket until this process reads them).
        batch = max(self.limits.helper_batch, -(-cut // (FANOUT_MAX_JOBS * len(mine))))
        while batch > 1 and not helpers.fits(len(frame), batch):
            batch //= 2
        jobs: list[list[_Client]] = []
        here: list[_Client] = []
        ready: list[_Client] = []
        turn = 0
        open_ = State.OPEN
        try:
            for client in clients[:cut]:
                transport = client.transport
                if (
                    client.helper_id is not None
                    and not (client.stale and board_id is not None and board_id in client.stale)
                    and client.protocol.state is open_
                    and not transport.is_closing()
                    and not transport.get_write_buffer_size()
                ):
                    ready.append(client)
                    if len(ready) >= batch:
                        self._hand_over(helpers, mine[turn], frame, ready, jobs, here)
                        ready = []
                        turn = (turn + 1) % len(mine)
                else:
                    here.append(client)
            if ready:
                self._hand_over(helpers, mine[turn], frame, ready, jobs, here)
            self._write_each(clients[cut:], board_id, frame, count)
            self._write_each(here, board_id, frame, count)
        finally:
            # Whatever happened above, the helpers' answers are read now:
            # their clients' writes are finished or, for a helper that
            # failed, the connections closed.
            self._finish_jobs(helpers, jobs, frame, count)

    def _hand_over(
        self,
        helpers: FanoutHelpers,
        helper: int,
        frame: bytes,
        ready: list[_Client],
        jobs: list[list[_Client]],
        here: list[_Client],
    ) -> None:
        """Send one job to a helper; if it cannot take it, the clients stay here."""
        if helper in helpers.failed:
            here.extend(ready)
            return
        try:
            helpers.send(helper, frame, [c.helper_id or 0 for c in ready])
        except HelperFailed:
            here.extend(ready)  # nothing of this job was written
            return
        jobs.append(ready)

    def _finish_jobs(
        self, helpers: FanoutHelpers, jobs: list[list[_Client]], frame: bytes, count: int
    ) -> None:
        short, lost = helpers.wait()
        size = len(frame)
        self.stats.helper_short += len(short)
        for job, idx, written in short:
            if job in lost:
                continue
            transport = jobs[job][idx].transport
            if written < 0:
                transport.write(frame)  # the transport meets the error (or writes it all)
            elif written < size:
                transport.write(frame[written:])
        done = sum(len(clients) for n, clients in enumerate(jobs) if n not in lost)
        self.stats.helper_writes += done
        self.stats.messages_sent += done * count
        if helpers.failed:
            # What a failed helper wrote of its jobs is unknown: a client may
            # hold part of a frame. Only those connections are closed
            # (overlays reconnect); helpers are not used any more.
            self._helpers_failed(helpers, [c for n in sorted(lost) for c in jobs[n]])

    def _helpers_failed(self, helpers: FanoutHelpers, lost: list[_Client]) -> None:
        self.stats.helper_failures += 1
        log.error("fanout_helper_failed", reason=helpers.broken, clients_closed=len(lost))
        if self._helpers is helpers:
            self._helpers = None
        for client in lost:
            self._clients.discard(client)
            client.transport.abort()
        self._subscribers.clear()
        for client in self._clients:
            client.helper_id = None
        # The helpers' copies of the sockets go with their processes.
        helpers.close()

    def _write_each(
        self, clients: Iterable[_Client], board_id: str | None, frame: bytes, count: int = 1
    ) -> None:
        """Write one frame to each client, honouring stale boards and backlogs.

        The frame is built once and written as is to every client: server
        frames are unmasked and compression is off, so the bytes are the same
        for all (what ``broadcast()`` would send, without framing the message
        once per connection). ``frame`` may hold ``count`` messages for the
        same board, back to back. This loop is the fan-out's hot path.

        A client whose write buffer is empty gets the frame straight from one
        ``send`` on its socket: that is what ``transport.write`` itself would
        do first, without its bookkeeping. Anything else goes through the
        transport: the unsent rest of a partial send (buffered, in order, as
        nothing was buffered before it), a would-block (the same), an error
        (the transport meets it again, closes the connection and reports the
        loss to the protocol), a buffer that is not empty, or a transport that
        is not asyncio's selector transport.
        """
        limits = self.limits
        soft = limits.soft_backlog
        size = len(frame)
        sent = 0
        for client in clients:
            if client.stale and board_id is not None and board_id in client.stale:
                client.dropped += count
                self.stats.dropped_updates += count
                continue
            transport = client.transport
            if client.protocol.state is not State.OPEN or transport.is_closing():
                continue
            backlog = transport.get_write_buffer_size()
            if backlog:
                if backlog > limits.hard_backlog:
                    self._drop_slow(client, f"write backlog {backlog} bytes")
                    continue
                if backlog > soft:
                    if board_id is None:
                        # The board list: a fresh one goes with the resync.
                        client.boards_stale = True
                        if client.stale_since is None:
                            client.stale_since = time.monotonic()
                        client.wake.set()
                        continue
                    self._mark_stale(client, board_id)
                    continue
                transport.write(frame)  # queued behind what is buffered
            elif client.sock is None:
                transport.write(frame)
            else:
                try:
                    n = client.sock.send(frame)
                except (BlockingIOError, InterruptedError):
                    n = 0
                except OSError:
                    transport.write(frame)
                    n = size
                if n < size:
                    transport.write(frame[n:])
            sent += count
        self.stats.messages_sent += sent

    def _mark_stale(self, client: _Client, board_id: str) -> None:
        if not client.stale:
            client.stale_since = time.monotonic()
            log.info("client_backlog", peer=client.peer, backlog=client.backlog())
        client.stale.add(board_id)
        client.dropped += 1
        self.stats.dropped_updates += 1
        client.wake.set()

    def _drop_slow(self, client: _Client, why: str) -> None:
        self.stats.closed_slow += 1
        log.warning("client_too_slow", peer=client.peer, reason=why)
        self._forget(client)
        self._clients.discard(client)
        self._subscribers.clear()
        transport = client.ws.transport
        if transport is not None:
            transport.abort()

    # ------------------------------------------------------------- clients

    async def _handler(self, ws: ServerConnection) -> None:
        client = _Client(ws)
        helpers = self._helpers
        if helpers is not None and client.sock is not None:
            client.helper_id = helpers.add(client.sock)
            if helpers.broken is not None:
                self._helpers_failed(helpers, [])
        self._clients.add(client)
        self._subscribers.clear()
        self.stats.connections_total += 1
        resync = asyncio.create_task(self._resync_loop(client))
        try:
            self._fan_out([client], None, self._hello())
            async for message in ws:
                self._on_message(client, message)
                if client.errors >= self.limits.max_errors:
                    self.stats.closed_abusive += 1
                    log.warning("client_abusive", peer=client.peer, errors=client.errors)
                    await ws.close(1008, "too many protocol errors")
                    break
        except ConnectionClosed:
            pass
        finally:
            self._forget(client)
            self._clients.discard(client)
            self._subscribers.clear()
            resync.cancel()

    def _forget(self, client: _Client) -> None:
        """The helpers close their copy of the socket (else it would stay open)."""
        helpers = self._helpers
        if client.helper_id is not None and helpers is not None:
            helpers.remove(client.helper_id)
            if helpers.broken is not None:
                # Stopped at once: their copies must not keep sockets open.
                self._helpers_failed(helpers, [])
        client.helper_id = None

    def _send(self, client: _Client, message: Hello | Error | Pong | Snapshot) -> None:
        broadcast([client.ws], message.model_dump_json().encode(), text=True)
        self.stats.messages_sent += 1

    def _error(self, client: _Client, message: str) -> None:
        client.errors += 1
        self.stats.protocol_errors += 1
        log.info("client_protocol_error", peer=client.peer, error=message, count=client.errors)
        self._send(client, Error(message=message))

    def _take_token(self, client: _Client) -> bool:
        now = time.monotonic()
        if client.last_refill == 0.0:
            client.tokens = float(self.limits.burst)
        else:
            client.tokens = min(
                float(self.limits.burst),
                client.tokens + (now - client.last_refill) * self.limits.rate,
            )
        client.last_refill = now
        if client.tokens < 1.0:
            return False
        client.tokens -= 1.0
        return True

    def _on_message(self, client: _Client, message: str | bytes) -> None:
        if not self._take_token(client):
            self._error(client, f"too many messages (limit {self.limits.rate:g} per second)")
            return
        limit = self.limits.max_message_bytes
        size = len(message.encode() if isinstance(message, str) else message)
        if size > limit:
            self._error(client, f"message too large: {size} bytes (limit {limit})")
            return
        if isinstance(message, bytes):
            self._error(client, "binary frames are not accepted; send JSON text")
            return
        try:
            msg = _CLIENT_ADAPTER.validate_json(message)
        except ValidationError as exc:
            self._error(client, _describe_validation(exc))
            return
        if isinstance(msg, Ping):
            self._send(client, Pong())
        elif isinstance(msg, Subscribe):
            self._subscribe(client, msg)
        elif isinstance(msg, ListBoards):
            page = self.limits.board_page
            limit = page if msg.limit is None else min(msg.limit, page)
            self._fan_out([client], None, self.board_page(msg.cursor, limit, reset=msg.cursor == 0))
        else:
            self._unsubscribe(client, msg)

    def _subscribe(self, client: _Client, msg: Subscribe) -> None:
        limits = self.limits
        if msg.boards == "*":
            self._subscribers.clear()
            client.all_boards = True
            targets = list(self._boards)
        else:
            ids = list(dict.fromkeys(msg.boards))
            longest = max((len(b) for b in ids), default=0)
            if longest > limits.max_board_id:
                self._error(
                    client,
                    f"subscribe: board id of {longest} characters "
                    f"(limit {limits.max_board_id}); nothing subscribed",
                )
                return
            total = len(client.boards.union(ids)) + int(client.all_boards)
            if total > limits.max_subscriptions:
                self._error(
                    client,
                    f"subscribe: {total} boards (limit {limits.max_subscriptions} per "
                    'connection; "*" subscribes to every board); nothing subscribed',
                )
                return
            self._subscribers.clear()
            client.boards.update(ids)
            targets = [b for b in ids if b in self._boards]
        for board_id in targets:
            client.stale.discard(board_id)
            self._fan_out([client], board_id, self._boards[board_id].snapshot_bytes())

    def _unsubscribe(self, client: _Client, msg: Unsubscribe) -> None:
        self._subscribers.clear()
        if msg.boards == "*":
            client.all_boards = False
            client.boards.clear()
            client.stale.clear()
        else:
            for b in msg.boards:
                client.boards.discard(b)
                client.stale.discard(b)

    async def _resync_loop(self, client: _Client) -> None:
        """Send fresh snapshots to a client that fell behind, once it drains."""
        limits = self.limits
        while True:
            await client.wake.wait()
            client.wake.clear()
            deadline = (client.stale_since or time.monotonic()) + limits.stale_timeout
            while client.backlog() > limits.low_backlog:
                if time.monotonic() > deadline:
                    self._drop_slow(client, f"did not drain in {limits.stale_timeout:.0f} s")
                    return
                await asyncio.sleep(0.05)
            if client not in self._clients:
                return
            if not client.stale and not client.boards_stale:
                continue
            stale, client.stale = client.stale, set()
            client.stale_since = None
            if client.boards_stale:
                # It missed board-list changes: the first page again, marked
                # ``reset`` (the client asks for the next ones).
                client.boards_stale = False
                self._fan_out(
                    [client], None, self.board_page(0, self.limits.board_page, reset=True)
                )
            client.resyncs += 1
            self.stats.resyncs += 1
            log.info("client_resync", peer=client.peer, boards=len(stale), dropped=client.dropped)
            for board_id in stale:
                entry = self._boards.get(board_id)
                if entry is not None and client.wants(board_id):
                    self._fan_out([client], board_id, entry.snapshot_bytes())

    # ---------------------------------------------------------------- HTTP

    def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        split = urlsplit(request.path)
        path = split.path
        if path == WS_PATH and request.method == "GET":
            return self._admit(connection, request)
        self.stats.http_requests += 1
        try:
            response = self._route(connection, request, path, split.query)
        except Exception as exc:  # never let one request take the server down
            log.exception("http_error", path=path, error=str(exc))
            response = _response(HTTPStatus.INTERNAL_SERVER_ERROR, b"internal error\n", ".txt")
        self._cors(response, request.headers.get("Origin"))
        return response

    def _admit(self, connection: ServerConnection, request: Request) -> Response | None:
        """Refuse a WebSocket handshake from a foreign page, a full server or an
        address that holds its share; else count it against its address."""
        limits = self.limits
        origin = request.headers.get("Origin")
        if not self._origin_allowed(origin, request.headers.get("Host")):
            self.stats.refused_origin += 1
            self._note("ws_origin_refused", origin=origin, peer=_peer(connection))
            body = f"origin not allowed: {origin}\n".encode("utf-8", "replace")
            return _response(HTTPStatus.FORBIDDEN, body, ".txt")
        if len(self._clients) >= limits.max_clients:
            self.stats.refused += 1
            self._note("ws_server_full", clients=len(self._clients))
            return _response(HTTPStatus.SERVICE_UNAVAILABLE, b"too many connections\n", ".txt")
        ip = _ip(connection)
        cap = limits.max_connections_per_ip
        if cap and self._per_ip[ip] >= cap:
            self.stats.refused_per_ip += 1
            self._note("ws_per_ip_refused", ip=ip, limit=cap)
            body = f"too many connections from {ip} (limit {cap})\n".encode()
            return _response(HTTPStatus.TOO_MANY_REQUESTS, body, ".txt")
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
        return theirs is not None and theirs == ours

    def _cors(self, response: Response, origin: str | None) -> None:
        allowed = self.limits.cors_origins
        if origin is None or not allowed:
            return
        if "*" in allowed:
            response.headers["Access-Control-Allow-Origin"] = "*"
        elif origin in allowed:
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers["Vary"] = "Origin"

    def _note(self, event: str, **fields: Any) -> None:
        """Log ``event`` at most once a second (with how many were not logged):
        a flood of refused requests must not become a flood of log lines."""
        now = time.monotonic()
        if now - self._log_times.get(event, -1e9) < 1.0:
            self._log_skipped[event] += 1
            return
        self._log_times[event] = now
        skipped = self._log_skipped.pop(event, 0)
        log.info(event, skipped=skipped, **fields)

    def bad_request(self, status: HTTPStatus, why: str, peer: str) -> Response:
        """The answer to a request that is malformed or uses a method not served."""
        self.stats.bad_requests += 1
        self._note("http_bad_request", status=status.value, error=why, peer=peer)
        response = _response(status, f"{status.phrase}: {why}\n".encode(), ".txt")
        if status is HTTPStatus.METHOD_NOT_ALLOWED:
            response.headers["Allow"] = "GET, OPTIONS"
        return response

    def _route(
        self, connection: ServerConnection, request: Request, path: str, query: str
    ) -> Response:
        method = request.method
        board_path = path.startswith("/api/boards/")
        if method == "OPTIONS":
            response = _response(HTTPStatus.NO_CONTENT, b"", ".txt")
            allowed = "GET, DELETE, OPTIONS" if board_path and self.admin_token else "GET, OPTIONS"
            response.headers["Allow"] = allowed
            response.headers["Access-Control-Allow-Methods"] = allowed
            response.headers["Access-Control-Allow-Headers"] = "Authorization"
            return response
        if method == "DELETE" and board_path and self.admin_token is not None:
            return self._delete_board(request, unquote(path[len("/api/boards/") :]))
        if method != "GET":
            response = self.bad_request(
                HTTPStatus.METHOD_NOT_ALLOWED, f"method {method} not allowed", _peer(connection)
            )
            if board_path and self.admin_token is not None:
                response.headers["Allow"] = "GET, DELETE, OPTIONS"
            return response
        if path == "/api/boards" and query:
            return self._boards_part(query)
        return self._http(path)

    def _boards_part(self, query: str) -> Response:
        params = parse_qs(query)
        try:
            offset = int(params.get("offset", ["0"])[0])
            limit = int(params.get("limit", ["1000000000"])[0])
            if offset < 0 or limit < 1:
                raise ValueError("negative")
        except ValueError:
            body = b"offset and limit must be whole numbers (offset >= 0, limit >= 1)\n"
            return _response(HTTPStatus.BAD_REQUEST, body, ".txt")
        entries = list(self._boards.values())[offset : offset + limit]
        body = b"[" + b",".join(e.summary_json() for e in entries) + b"]"
        response = _response(HTTPStatus.OK, body, ".json")
        response.headers["X-Total-Count"] = str(len(self._boards))
        return response

    def _delete_board(self, request: Request, board_id: str) -> Response:
        token = self.admin_token
        assert token is not None
        given = request.headers.get("Authorization", "")
        scheme, _, value = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            value.strip().encode(), token.encode()
        ):
            self.stats.admin_refused += 1
            self._note("admin_refused", board_id=board_id)
            response = _response(HTTPStatus.UNAUTHORIZED, b"admin token required\n", ".txt")
            response.headers["WWW-Authenticate"] = 'Bearer realm="livegain"'
            return response
        if board_id not in self._boards:
            return _response(HTTPStatus.NOT_FOUND, f"no board {board_id!r}\n".encode(), ".txt")
        if self.on_remove is not None:
            self.on_remove(board_id)
        else:
            self.remove_board(board_id)
        log.info("board_removed", board_id=board_id, by="admin")
        return _json_response(HTTPStatus.OK, {"removed": board_id})

    def _http(self, path: str) -> Response:
        if path == "/healthz":
            return _json_response(HTTPStatus.OK, self.health())
        if path == "/metrics" and self.metrics is not None:
            return _response(HTTPStatus.OK, self.metrics(), ".txt")
        if path == "/api/boards":
            body = b"[" + b",".join(e.summary_json() for e in self._boards.values()) + b"]"
            return _response(HTTPStatus.OK, body, ".json")
        if path.startswith("/api/boards/"):
            board_id = unquote(path[len("/api/boards/") :])
            entry = self._boards.get(board_id)
            if entry is None:
                return _response(HTTPStatus.NOT_FOUND, f"no board {board_id!r}\n".encode(), ".txt")
            return _response(HTTPStatus.OK, entry.state.model_dump_json().encode(), ".json")
        page = PAGES.get(path)
        if page is not None:
            return self._file(page)
        prefix = "/overlay/static/"
        if path.startswith(prefix):
            return self._file(unquote(path[len(prefix) :]))
        return _response(HTTPStatus.NOT_FOUND, f"not found: {path}\n".encode(), ".txt")

    def _file(self, name: str) -> Response:
        target = safe_join(self.static_dir, name)
        if target is None or not target.is_file():
            return _response(HTTPStatus.NOT_FOUND, f"not found: {name}\n".encode(), ".txt")
        return _response(HTTPStatus.OK, target.read_bytes(), target.suffix.lower())

    def health(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "status": "ok",
            "version": __version__,
            "protocol": PROTOCOL_VERSION,
            "boards": len(self._boards),
            "clients": len(self._clients),
            "uptime": round(time.monotonic() - self._started, 3),
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
            },
            "fanout_helpers": {
                "running": self._helpers.running() if self._helpers is not None else 0,
                "configured": self.fanout_helpers,
                "writes": self.stats.helper_writes,
                "finished_here": self.stats.helper_short,
                "failures": self.stats.helper_failures,
            },
        }
        if self.health_extra is not None:
            out.update(self.health_extra())  # may set "status": "degraded" and "problems"
        return out


_MAX_HEAD = 64 * 1024
"""Most bytes of a request's head (request line and headers) read."""
_MAX_HELD = 1 << 20
"""Most bytes held back while a handshake is answered (beyond: dropped)."""
_ALLOWED_METHODS = frozenset({"GET", "DELETE", "OPTIONS"})


class _Connection(ServerConnection):
    """A connection whose request head is checked before websockets parses it.

    websockets answers one request per connection. Two requests written at
    once (HTTP pipelining) made it parse the second as WebSocket frames, fail,
    half-close the socket before the first answer went out, and log a
    traceback. Here the bytes after the first request's head are held back
    until the handshake is over: after a WebSocket upgrade they are frames and
    go in; after an HTTP answer (which closes the connection) they are dropped,
    and a pipelining client sends them again on a new connection. A head that
    websockets cannot parse, or one with a method this server does not serve,
    is answered here (400, 405, 431) instead of the connection being dropped
    without an answer.
    """

    live: LiveServer | None = None
    """The server whose counters and log see the requests answered here."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head = bytearray()
        self._held: bytearray | None = None

    def data_received(self, data: bytes) -> None:
        if self._held is not None:
            if len(self._held) <= _MAX_HELD:
                self._held += data
            return
        if self.protocol.state is not State.CONNECTING:
            super().data_received(data)
            return
        start = max(0, len(self._head) - 3)
        self._head += data
        end = self._head.find(b"\r\n\r\n", start)
        if end < 0:
            if len(self._head) > _MAX_HEAD:
                self._answer(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "request head too large")
            return
        head = bytes(self._head[: end + 4])
        self._held = bytearray(self._head[end + 4 :])
        self._head = bytearray()
        problem = _check_head(head)
        if problem is not None:
            self._answer(*problem)
            return
        super().data_received(head)

    async def handshake(self, *args: Any, **kwargs: Any) -> None:
        await super().handshake(*args, **kwargs)
        held, self._held = self._held, None
        if held and self.protocol.state is State.OPEN:
            super().data_received(bytes(held))

    def _answer(self, status: HTTPStatus, why: str) -> None:
        """Answer a request websockets would drop unanswered, then close."""
        self._held = bytearray()  # nothing more is read
        live = self.live
        if live is not None:
            response = live.bad_request(status, why, _peer(self))
        else:
            response = _response(status, f"{status.phrase}: {why}\n".encode(), ".txt")
        self.protocol.handshake_exc = InvalidMessage(f"{status.value}: {why}")
        self.transport.write(response.serialize())
        self.transport.close()


def _check_head(head: bytes) -> tuple[HTTPStatus, str] | None:
    """Why websockets would refuse this request head without an answer, if it would."""
    line = head.split(b"\r\n", 1)[0]
    parts = line.split(b" ")
    if len(parts) == 3 and parts[2] in (b"HTTP/1.1", b"HTTP/1.0"):
        method = parts[0].decode("latin-1")
        if method not in _ALLOWED_METHODS:
            shown = method if method.isascii() and method.isprintable() else repr(method)
            return HTTPStatus.METHOD_NOT_ALLOWED, f"method {shown[:32]} not allowed"
    pos = 0

    def read_line(limit: int, too_long: type[Exception]) -> Generator[None, None, bytes]:
        nonlocal pos
        end = head.find(b"\n", pos)
        if end < 0:
            raise EOFError("line without CRLF")
        if end + 1 - pos > limit:
            raise too_long(f"line of {end + 1 - pos} bytes")
        chunk = head[pos : end + 1]
        pos = end + 1
        return chunk
        yield  # a generator, as websockets' parser expects

    parser = Request.parse(read_line)
    try:
        next(parser)
    except StopIteration:
        return None
    except RequestLineTooLong:
        return HTTPStatus.REQUEST_URI_TOO_LONG, "request line too long"
    except (HeaderLineTooLong, TooManyHeaders) as exc:
        return HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, f"header fields too large ({exc})"
    except Exception as exc:
        why = str(exc)[:200].encode("ascii", "replace").decode("ascii")
        if "body" in why or "Transfer" in why or "transfer" in why:
            return HTTPStatus.BAD_REQUEST, f"request bodies are not accepted ({why})"
        return HTTPStatus.BAD_REQUEST, f"malformed request: {why}"
    return HTTPStatus.BAD_REQUEST, "incomplete request"


def _peer(connection: ServerConnection) -> str:
    try:
        addr = connection.remote_address
    except Exception:  # pragma: no cover - transport gone
        return "?"
    return f"{addr[0]}:{addr[1]}" if isinstance(addr, tuple) else str(addr)


def _ip(connection: ServerConnection) -> str:
    try:
        addr = connection.remote_address
    except Exception:  # pragma: no cover - transport gone
        return "?"
    return str(addr[0]) if isinstance(addr, tuple) else str(addr)


def _splice(shell: bytes, items: list[bytes]) -> bytes:
    """``shell`` (a message serialised with an empty ``boards`` list) with the
    serialised summaries ``items`` in that list."""
    empty = b'"boards":[]'
    at = shell.index(empty)
    return shell[:at] + b'"boards":[' + b",".join(items) + b"]" + shell[at + len(empty) :]


def raise_fd_limit(clients: int) -> None:
    """Let this process (and the helpers it starts) hold a socket per client.

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


def _raw_socket(transport: asyncio.BaseTransport | None) -> socket.socket | None:
    """The socket under an asyncio selector transport; None for any other transport."""
    if not isinstance(transport, asyncio.Transport):
        return None
    if type(transport).__name__ != "_SelectorSocketTransport":
        return None
    sock = getattr(transport, "_sock", None)
    return sock if isinstance(sock, socket.socket) else None


def text_frame(payload: bytes) -> bytes:
    """An unmasked, unfragmented WebSocket text frame (RFC 6455, section 5.2)."""
    n = len(payload)
    if n < 126:
        header = bytes((0x81, n))
    elif n < 1 << 16:
        header = bytes((0x81, 126)) + struct.pack("!H", n)
    else:
        header = bytes((0x81, 127)) + struct.pack("!Q", n)
    return header + payload


def safe_join(root: Path, name: str) -> Path | None:
    """``root / name`` if it stays inside ``root``, else None (no traversal)."""
    if not name or "\x00" in name or "\\" in name or name.startswith("/"):
        return None
    parts = name.split("/")
    if any(p in ("", ".", "..") or p.startswith(".") for p in parts):
        return None
    target = (root / name).resolve()
    if not target.is_relative_to(root):
        return None
    return target


def _response(status: HTTPStatus, body: bytes, suffix: str) -> Response:
    headers = Headers(
        [
            ("Date", email.utils.formatdate(usegmt=True)),
            ("Connection", "close"),
            ("Content-Length", str(len(body))),
            ("Content-Type", CONTENT_TYPES.get(suffix, "application/octet-stream")),
            ("Cache-Control", "no-cache"),
            ("X-Content-Type-Options", "nosniff"),
        ]
    )
    return Response(status.value, status.phrase, headers, body)


def _json_response(status: HTTPStatus, data: Any) -> Response:
    return _response(status, json.dumps(data).encode(), ".json")


def _describe_validation(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False, include_input=False)
    if not errors:
        return "invalid message"
    first = errors[0]
    kind = first.get("type", "")
    if kind == "json_invalid":
        return f"invalid JSON: {first.get('msg', '')}"
    if kind == "union_tag_invalid":
        return "unknown message type; expected subscribe, unsubscribe or ping"
    if kind in ("union_tag_not_found", "dict_type", "model_attributes_type"):
        return "a message must be a JSON object with a 'type' field"
    loc = ".".join(str(p) for p in first.get("loc", ())[:2])
    msgs = "; ".join(str(e.get("msg", "")) for e in errors[:2])
    return f"invalid message at {loc or 'top level'}: {msgs}"
