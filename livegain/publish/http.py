"""Plain HTTP beside the WebSocket feed: routes, static files, answers.

Everything here answers from websockets' ``process_request`` hook, before any
WebSocket handshake, on the same port as ``/ws``:

- ``/`` -> ``overlay/static/index.html``; ``/overlay/board`` and
  ``/overlay/boards`` -> ``board.html`` / ``boards.html``;
  ``/overlay/static/<file>`` -> files under ``livegain/overlay/static``;
- ``/healthz`` -> JSON (status, boards, clients, uptime, counters, and what the
  server's owner adds); ``/healthz/boards`` -> each board's state, when the
  owner gives it; ``/metrics`` when the owner renders it;
- ``/api/boards`` -> JSON list of :class:`~livegain.publish.schema.BoardSummary`
  (``?offset=&limit=`` for a part of it); ``/api/boards/<id>`` -> one
  :class:`~livegain.publish.schema.BoardState`;
- ``/api/standings`` -> JSON list of every event's latest
  :class:`~livegain.publish.schema.Standings` message (by event name);
  ``/api/standings/<event>`` -> one (URL-encoded name);
- ``/api/producer`` -> :class:`~livegain.publish.schema.ProducerRanking`, every
  board ranked for the crew (docs/producer.md); ``/overlay/producer`` its page;
- ``DELETE /api/boards/<id>`` with ``Authorization: Bearer <admin token>``
  removes a board (only when an admin token is configured).

Only GET (and OPTIONS, and that DELETE) are answered; other methods get 405,
a malformed request 400, and a request pipelined behind another is not read
(the answer to the first closes the connection, as every answer here does;
:class:`HeadCheckedConnection`). No CORS header is sent unless configured
(``cors_origins``). The boards come from the server's
:class:`~livegain.publish.hub.Hub`.
"""

from __future__ import annotations

import email.utils
import hmac
import json
import math
import time
from collections import Counter
from collections.abc import Callable, Generator
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote

import structlog
from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.exceptions import (
    HeaderLineTooLong,
    InvalidMessage,
    RequestLineTooLong,
    TooManyHeaders,
)
from websockets.http11 import Request, Response
from websockets.protocol import State

from livegain.publish.hub import Hub, ServerStats
from livegain.publish.limits import ServerLimits

log = structlog.get_logger("livegain.publish.http")

STATIC_DIR = Path(__file__).resolve().parent.parent / "overlay" / "static"

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
    "/overlay/producer": "producer.html",
    "/overlay/producer.html": "producer.html",
}


class Notes:
    """Log an event at most once a second (with how many were not logged): a
    flood of refused requests must not become a flood of log lines."""

    def __init__(self) -> None:
        self._times: dict[str, float] = {}
        self._skipped: Counter[str] = Counter()

    def __call__(self, event: str, **fields: Any) -> None:
        now = time.monotonic()
        if now - self._times.get(event, -1e9) < 1.0:
            self._skipped[event] += 1
            return
        self._times[event] = now
        skipped = self._skipped.pop(event, 0)
        log.info(event, skipped=skipped, **fields)


class HttpSite:
    """The answers to plain HTTP requests of one server.

    ``health`` builds ``/healthz``; ``board_status()`` gives the builder of
    ``/healthz/boards`` (None: no such page); ``metrics()`` gives the renderer of
    ``/metrics`` (None: no such page); ``remove`` removes a board on an admin
    request and says whether there was one.
    """

    def __init__(
        self,
        hub: Hub[Any],
        *,
        static_dir: Path = STATIC_DIR,
        limits: ServerLimits,
        stats: ServerStats,
        health: Callable[[], dict[str, Any]],
        board_status: Callable[[], Callable[[], dict[str, Any]] | None],
        metrics: Callable[[], Callable[[], bytes] | None],
        remove: Callable[[str], bool],
        admin_token: str | None = None,
        notes: Notes | None = None,
    ) -> None:
        self.hub = hub
        self.static_dir = static_dir.resolve()
        self.limits = limits
        self.stats = stats
        self.health = health
        self.board_status = board_status
        self.metrics = metrics
        self.remove = remove
        self.admin_token = admin_token
        self.note = notes or Notes()
        # board id -> when the producer's ranking first saw its game over (monotonic)
        self._ended_seen: dict[str, float] = {}
        self._producer_polled = False

    def answer(
        self, connection: ServerConnection, request: Request, path: str, query: str
    ) -> Response:
        """The answer to a request that is not a WebSocket handshake."""
        self.stats.http_requests += 1
        try:
            response = self._route(connection, request, path, query)
        except Exception as exc:  # never let one request take the server down
            log.exception("http_error", path=path, error=str(exc))
            response = response_of(HTTPStatus.INTERNAL_SERVER_ERROR, b"internal error\n", ".txt")
        self._cors(response, request.headers.get("Origin"))
        return response

    def bad_request(self, status: HTTPStatus, why: str, peer: str) -> Response:
        """The answer to a request that is malformed or uses a method not served."""
        self.stats.bad_requests += 1
        self.note("http_bad_request", status=status.value, error=why, peer=peer)
        response = response_of(status, f"{status.phrase}: {why}\n".encode(), ".txt")
        if status is HTTPStatus.METHOD_NOT_ALLOWED:
            response.headers["Allow"] = "GET, OPTIONS"
        return response

    def _cors(self, response: Response, origin: str | None) -> None:
        allowed = self.limits.cors_origins
        if origin is None or not allowed:
            return
        if "*" in allowed:
            response.headers["Access-Control-Allow-Origin"] = "*"
        elif origin in allowed:
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers["Vary"] = "Origin"

    def _route(
        self, connection: ServerConnection, request: Request, path: str, query: str
    ) -> Response:
        method = request.method
        board_path = path.startswith("/api/boards/")
        if method == "OPTIONS":
            response = response_of(HTTPStatus.NO_CONTENT, b"", ".txt")
            allowed = "GET, DELETE, OPTIONS" if board_path and self.admin_token else "GET, OPTIONS"
            response.headers["Allow"] = allowed
            response.headers["Access-Control-Allow-Methods"] = allowed
            response.headers["Access-Control-Allow-Headers"] = "Authorization"
            return response
        if method == "DELETE" and board_path and self.admin_token is not None:
            return self._delete_board(request, unquote(path[len("/api/boards/") :]))
        if method != "GET":
            response = self.bad_request(
                HTTPStatus.METHOD_NOT_ALLOWED, f"method {method} not allowed", peer_of(connection)
            )
            if board_path and self.admin_token is not None:
                response.headers["Allow"] = "GET, DELETE, OPTIONS"
            return response
        if path == "/api/boards" and query:
            return self._boards_part(query)
        return self._get(path)

    def _boards_part(self, query: str) -> Response:
        params = parse_qs(query)
        try:
            offset = int(params.get("offset", ["0"])[0])
            limit = int(params.get("limit", ["1000000000"])[0])
            if offset < 0 or limit < 1:
                raise ValueError("negative")
        except ValueError:
            body = b"offset and limit must be whole numbers (offset >= 0, limit >= 1)\n"
            return response_of(HTTPStatus.BAD_REQUEST, body, ".txt")
        entries = self.hub.entries()[offset : offset + limit]
        body = b"[" + b",".join(e.summary_json() for e in entries) + b"]"
        response = response_of(HTTPStatus.OK, body, ".json")
        response.headers["X-Total-Count"] = str(self.hub.board_count)
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
            self.note("admin_refused", board_id=board_id)
            response = response_of(HTTPStatus.UNAUTHORIZED, b"admin token required\n", ".txt")
            response.headers["WWW-Authenticate"] = 'Bearer realm="livegain"'
            return response
        # The service knows boards that viewers do not have yet (a broadcast
        # delay holds them): it says whether the board was found.
        if not self.remove(board_id):
            return response_of(HTTPStatus.NOT_FOUND, f"no board {board_id!r}\n".encode(), ".txt")
        log.info("board_removed", board_id=board_id, by="admin")
        return json_response(HTTPStatus.OK, {"removed": board_id})

    def _get(self, path: str) -> Response:
        if path == "/healthz":
            return json_response(HTTPStatus.OK, self.health())
        if path == "/healthz/boards":
            boards = self.board_status()
            if boards is not None:
                return json_response(HTTPStatus.OK, {"board_status": boards()})
        if path == "/metrics":
            render = self.metrics()
            if render is not None:
                return response_of(HTTPStatus.OK, render(), ".txt")
        if path == "/api/boards":
            body = b"[" + b",".join(e.summary_json() for e in self.hub.entries()) + b"]"
            return response_of(HTTPStatus.OK, body, ".json")
        if path == "/api/standings":
            hub = self.hub
            parts = [hub.standings(e) for e in hub.standings_events()]
            body = b"[" + b",".join(p for p in parts if p is not None) + b"]"
            return response_of(HTTPStatus.OK, body, ".json")
        if path == "/api/producer":
            return response_of(HTTPStatus.OK, self._producer().encode(), ".json")
        if path.startswith("/api/standings/"):
            event = unquote(path[len("/api/standings/") :])
            data = self.hub.standings(event)
            if data is None:
                body = f"no standings of {event!r}\n".encode()
                return response_of(HTTPStatus.NOT_FOUND, body, ".txt")
            return response_of(HTTPStatus.OK, data, ".json")
        if path.startswith("/api/boards/"):
            board_id = unquote(path[len("/api/boards/") :])
            entry = self.hub.entry(board_id)
            if entry is None:
                body = f"no board {board_id!r}\n".encode()
                return response_of(HTTPStatus.NOT_FOUND, body, ".txt")
            return response_of(HTTPStatus.OK, entry.state.model_dump_json().encode(), ".json")
        page = PAGES.get(path)
        if page is not None:
            return self._file(page)
        prefix = "/overlay/static/"
        if path.startswith(prefix):
            return self._file(unquote(path[len(prefix) :]))
        return response_of(HTTPStatus.NOT_FOUND, f"not found: {path}\n".encode(), ".txt")

    def _producer(self) -> str:
        """The producer's ranking (JSON) of the boards as shown now."""
        from livegain.publish import producer_view

        states = [e.state for e in self.hub.entries()]
        now = time.monotonic()
        finished = {s.board_id for s in states if s.result != "*"}
        for bid in list(self._ended_seen):
            if bid not in finished:
                del self._ended_seen[bid]
        # Games already over at the first request ended before anyone looked: not "just".
        first = not self._producer_polled
        self._producer_polled = True
        for bid in finished:
            self._ended_seen.setdefault(bid, -math.inf if first else now)
        ended_ago = {bid: now - t for bid, t in self._ended_seen.items()}
        hub = self.hub
        raw = [hub.standings(e) for e in hub.standings_events()]
        standings = producer_view.standings_of(r for r in raw if r is not None)
        at_ms = int(time.time() * 1000)
        return producer_view.ranking(states, standings, ended_ago, at_ms).model_dump_json()

    def _file(self, name: str) -> Response:
        target = safe_join(self.static_dir, name)
        if target is None or not target.is_file():
            return response_of(HTTPStatus.NOT_FOUND, f"not found: {name}\n".encode(), ".txt")
        return response_of(HTTPStatus.OK, target.read_bytes(), target.suffix.lower())


# ------------------------------------------------------------ connections

_MAX_HEAD = 64 * 1024
"""Most bytes of a request's head (request line and headers) read."""
_MAX_HELD = 1 << 20
"""Most bytes held back while a handshake is answered (beyond: dropped)."""
_ALLOWED_METHODS = frozenset({"GET", "DELETE", "OPTIONS"})


class HeadCheckedConnection(ServerConnection):
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

    site: HttpSite | None = None
    """The site whose counters and log see the requests answered here (set
    on a subclass made per server)."""

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
        problem = check_head(head)
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
        site = self.site
        if site is not None:
            response = site.bad_request(status, why, peer_of(self))
        else:
            response = response_of(status, f"{status.phrase}: {why}\n".encode(), ".txt")
        self.protocol.handshake_exc = InvalidMessage(f"{status.value}: {why}")
        self.transport.write(response.serialize())
        self.transport.close()


def check_head(head: bytes) -> tuple[HTTPStatus, str] | None:
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


def peer_of(connection: ServerConnection) -> str:
    """``host:port`` of the other end (``?`` once the transport is gone)."""
    try:
        addr = connection.remote_address
    except Exception:  # pragma: no cover - transport gone
        return "?"
    return f"{addr[0]}:{addr[1]}" if isinstance(addr, tuple) else str(addr)


def ip_of(connection: ServerConnection) -> str:
    try:
        addr = connection.remote_address
    except Exception:  # pragma: no cover - transport gone
        return "?"
    return str(addr[0]) if isinstance(addr, tuple) else str(addr)


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


def response_of(status: HTTPStatus, body: bytes, suffix: str) -> Response:
    """An answer that closes the connection, typed by ``suffix`` (".json", ".txt", ...)."""
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


def json_response(status: HTTPStatus, data: Any) -> Response:
    return response_of(status, json.dumps(data).encode(), ".json")
