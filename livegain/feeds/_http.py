"""A tiny asyncio HTTP/1.1 GET client and a tiny GET-only server, for polled feeds.

Why not urllib in a thread: a request stuck on a dead server cannot be
cancelled there (the thread runs on until its socket timeout and holds up
interpreter shutdown); here a request is a coroutine, so cancelling a feed or
a timeout ends it at once and closes its socket. Feeds need only GET with a
few headers (If-None-Match, If-Modified-Since), Content-Length, chunked or
read-to-close bodies, gzip, redirects and TLS (stdlib ``ssl``), which fits in
a page of code with no new dependency.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

from livegain import __version__

USER_AGENT = f"livegain/{__version__}"
MAX_BODY = 64 * 1024 * 1024
MAX_HEADER_BYTES = 64 * 1024


class HttpError(Exception):
    """The request failed: network error, timeout, or a malformed response."""


@dataclass(frozen=True)
class HttpResponse:
    status: int
    reason: str
    headers: Mapping[str, str]  # names lower-cased
    body: bytes
    url: str

    def text(self) -> str:
        """The body as text: UTF-8 (BOM dropped), else Latin-1 (old PGN files)."""
        try:
            return self.body.decode("utf-8-sig")
        except UnicodeDecodeError:
            return self.body.decode("latin-1")


async def http_get(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = 10.0,  # noqa: ASYNC109 (one deadline for connect+redirects+body)
    max_redirects: int = 5,
    max_body: int = MAX_BODY,
) -> HttpResponse:
    """GET ``url``; raise :class:`HttpError` on any failure (never for an HTTP status)."""
    with _as_http_errors(timeout):
        async with asyncio.timeout(timeout):
            head = await _open(url, headers or {}, max_redirects, gzip=True)
            try:
                body = b""
                if head.status not in (204, 304) and not 100 <= head.status < 200:
                    body = await _read_body(head.reader, head.headers, max_body)
                encoding = head.headers.get("content-encoding", "identity").lower()
                if encoding == "gzip" and body:
                    body = _gunzip(body, max_body)
                return HttpResponse(head.status, head.reason, head.headers, body, head.url)
            finally:
                await _close(head.writer)


@contextlib.contextmanager
def _as_http_errors(timeout: float) -> Iterator[None]:
    """Network faults, timeouts and malformed responses become :class:`HttpError`."""
    try:
        yield
    except TimeoutError:
        raise HttpError(f"timed out after {timeout:g} s") from None
    except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
        raise HttpError(f"{type(exc).__name__}: {exc}") from None


@dataclass
class _Head:
    """A response whose status line and headers are read; its body is next on ``reader``."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    status: int
    reason: str
    headers: dict[str, str]  # names lower-cased
    url: str  # after redirects


async def _close(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(Exception):
        await writer.wait_closed()


async def _open(url: str, extra: Mapping[str, str], max_redirects: int, *, gzip: bool) -> _Head:
    """GET ``url``, following redirects, up to the final response's headers."""
    for _ in range(max_redirects + 1):
        head = await _request(url, extra, gzip=gzip)
        location = head.headers.get("location")
        if head.status in (301, 302, 303, 307, 308) and location:
            await _close(head.writer)
            url = urljoin(url, location)
            continue
        return head
    raise HttpError(f"too many redirects (last: {url})")


async def _request(url: str, extra: Mapping[str, str], *, gzip: bool) -> _Head:
    """Send a GET and read the status line and headers; the caller reads the body
    and closes the writer."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise HttpError(f"unsupported URL {url!r}")
    tls = parts.scheme == "https"
    port = parts.port or (443 if tls else 80)
    host = parts.hostname
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    ctx = ssl.create_default_context() if tls else None
    reader, writer = await asyncio.open_connection(
        host, port, ssl=ctx, server_hostname=host if tls else None, limit=MAX_HEADER_BYTES
    )
    try:
        host_header = host if parts.port is None else f"{host}:{port}"
        lines = [
            f"GET {target} HTTP/1.1",
            f"Host: {host_header}",
            f"User-Agent: {USER_AGENT}",
            "Accept: */*",
            f"Accept-Encoding: {'gzip, identity' if gzip else 'identity'}",
            "Connection: close",
        ]
        lines += [f"{k}: {v}" for k, v in extra.items()]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        await writer.drain()
        status_line = (await reader.readline()).decode("latin-1").strip()
        bits = status_line.split(" ", 2)
        if len(bits) < 2 or not bits[0].startswith("HTTP/") or not bits[1].isdigit():
            raise HttpError(f"malformed status line {status_line[:80]!r}")
        status = int(bits[1])
        reason = bits[2] if len(bits) > 2 else ""
        hdrs: dict[str, str] = {}
        total = 0
        while True:
            line = await reader.readline()
            total += len(line)
            if total > MAX_HEADER_BYTES:
                raise HttpError("response headers too large")
            if not line:
                raise HttpError("connection closed inside the response headers")
            text = line.decode("latin-1").rstrip("\r\n")
            if not text:
                break
            name, sep, value = text.partition(":")
            if not sep:
                raise HttpError(f"malformed header line {text[:80]!r}")
            hdrs[name.strip().lower()] = value.strip()
    except BaseException:
        writer.close()
        raise
    return _Head(reader, writer, status, reason, hdrs, url)


async def http_stream(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = 10.0,  # noqa: ASYNC109 (connect + redirects + headers)
    idle_timeout: float | None = None,
    max_redirects: int = 5,
    max_chunk: int = MAX_BODY,
) -> AsyncIterator[tuple[int, bytes]]:
    """GET ``url`` and yield its body as it arrives, for endless responses.

    Yields ``(status, chunk)``; the first item may carry an empty chunk (the
    status, before any body). Chunked and read-to-close bodies; no gzip.
    Raises :class:`HttpError` on a network error, a malformed response, or
    ``idle_timeout`` seconds without data; returns when the server ends the
    body.
    """
    with _as_http_errors(timeout):
        async with asyncio.timeout(timeout):
            head = await _open(url, headers or {}, max_redirects, gzip=False)
    reader, status = head.reader, head.status
    try:
        yield status, b""
        chunked = "chunked" in head.headers.get("transfer-encoding", "").lower()
        while True:
            try:
                async with asyncio.timeout(idle_timeout):
                    if chunked:
                        n = await _chunk_size(reader)
                        if n == 0:
                            return
                        if n > max_chunk:
                            raise HttpError(f"chunk larger than {max_chunk} bytes")
                        data = await reader.readexactly(n)
                        await reader.readexactly(2)
                    else:
                        data = await reader.read(65536)
                        if not data:
                            return
            except TimeoutError:
                raise HttpError(f"no data for {idle_timeout:g} s") from None
            except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
                raise HttpError(f"{type(exc).__name__}: {exc}") from None
            yield status, data
    finally:
        await _close(head.writer)


def _gunzip(data: bytes, max_body: int) -> bytes:
    """Decompress a gzip body, never past ``max_body`` bytes (a gzip bomb is an error)."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)  # gzip header and trailer
    try:
        out = d.decompress(data, max_body + 1)
        if len(out) > max_body or d.unconsumed_tail:
            raise HttpError(f"gzip body inflates past {max_body} bytes")
        out += d.flush()
    except zlib.error as exc:
        raise HttpError(f"bad gzip body: {exc}") from None
    if not d.eof:
        raise HttpError("bad gzip body: truncated")
    if len(out) > max_body:
        raise HttpError(f"gzip body inflates past {max_body} bytes")
    return out


async def _chunk_size(reader: asyncio.StreamReader) -> int:
    """The size line of the next chunk of a chunked body (0: the last one)."""
    line = (await reader.readline()).decode("latin-1").strip()
    if not line:
        raise HttpError("connection closed inside a chunked body")
    return int(line.split(";", 1)[0], 16)


async def _read_body(reader: asyncio.StreamReader, hdrs: Mapping[str, str], max_body: int) -> bytes:
    if "chunked" in hdrs.get("transfer-encoding", "").lower():
        chunks: list[bytes] = []
        size = 0
        while True:
            n = await _chunk_size(reader)
            if n == 0:
                # trailers, up to the blank line
                while (await reader.readline()).strip():
                    pass
                return b"".join(chunks)
            size += n
            if size > max_body:
                raise HttpError(f"body larger than {max_body} bytes")
            chunks.append(await reader.readexactly(n))
            await reader.readexactly(2)
    length = hdrs.get("content-length")
    if length is not None:
        if not length.isdigit():
            raise HttpError(f"bad Content-Length {length!r}")
        n = int(length)
        if n > max_body:
            raise HttpError(f"body larger than {max_body} bytes")
        try:
            return await reader.readexactly(n)
        except asyncio.IncompleteReadError as exc:
            raise HttpError(
                f"connection closed after {len(exc.partial)} of {n} body bytes"
            ) from None
    body = await reader.read(max_body + 1)
    data = bytearray(body)
    while body:
        if len(data) > max_body:
            raise HttpError(f"body larger than {max_body} bytes")
        body = await reader.read(max_body + 1 - len(data))
        data += body
    return bytes(data)


# --- a minimal GET server (replay, tests) -----------------------------------------------------


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    stream: Callable[[], AsyncIterator[bytes]] | None = None
    """An endless body instead of ``body``: sent chunked as it is produced."""


Handler = Callable[[str, Mapping[str, str]], Awaitable[Reply] | Reply]

_REASONS = {
    200: "OK",
    304: "Not Modified",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


class MiniHttpServer:
    """asyncio.start_server with a minimal HTTP/1.1 GET handler (one request per connection).

    ``handler(path, headers)`` returns a :class:`Reply` (or an awaitable of one);
    request header names are lower-cased. Bound to 127.0.0.1 by default.
    """

    def __init__(self, handler: Handler, host: str = "127.0.0.1", port: int = 0) -> None:
        self._handler = handler
        self.host = host
        self.port = port
        self._server: asyncio.Server | None = None
        self.requests = 0

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                self._server.close_clients()  # type: ignore[attr-defined]  # 3.13+
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(2):
                    await self._server.wait_closed()
            self._server = None

    async def __aenter__(self) -> MiniHttpServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        stream: Callable[[], AsyncIterator[bytes]] | None = None
        try:
            async with asyncio.timeout(30):
                request = (await reader.readline()).decode("latin-1").strip()
                headers: dict[str, str] = {}
                for _ in range(100):
                    line = (await reader.readline()).decode("latin-1").strip()
                    if not line:
                        break
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
                parts = request.split()
                self.requests += 1
                if len(parts) != 3 or not parts[2].startswith("HTTP/"):
                    reply = Reply(400, b"bad request\n")
                elif parts[0] not in ("GET", "HEAD"):
                    reply = Reply(405, b"only GET\n", headers={"Allow": "GET, HEAD"})
                else:
                    try:
                        result = self._handler(parts[1], headers)
                        reply = await result if not isinstance(result, Reply) else result
                    except Exception as exc:  # a handler bug answers 500, the server lives
                        reply = Reply(500, f"{type(exc).__name__}: {exc}\n".encode())
                body = b"" if (parts and parts[0] == "HEAD") or reply.status == 304 else reply.body
                head = [f"HTTP/1.1 {reply.status} {_REASONS.get(reply.status, 'Status')}"]
                hdrs = {"Content-Type": reply.content_type, "Connection": "close"}
                hdrs.update(reply.headers)
                if reply.stream is not None and parts[0] == "GET":
                    stream = reply.stream
                    hdrs["Transfer-Encoding"] = "chunked"
                elif reply.status != 304:
                    hdrs["Content-Length"] = str(len(reply.body))
                head += [f"{k}: {v}" for k, v in hdrs.items()]
                writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
                await writer.drain()
            if stream is not None:  # no time limit: it lasts as long as its producer
                async for data in stream():
                    if data:
                        writer.write(b"%x\r\n%s\r\n" % (len(data), data))
                        await writer.drain()
                writer.write(b"0\r\n\r\n")
                await writer.drain()
        except (TimeoutError, OSError, ConnectionError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await writer.wait_closed()  # (cancelled when the server stops)
