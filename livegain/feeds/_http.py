"""HTTP for polled feeds on aiohttp: GET and streamed GET (the client; the
GET-only server of ``livegain replay`` and the tests is the relay's,
:mod:`livegain.relay.http`).

The wire is aiohttp's (connections, redirects, TLS, chunked bodies, protocol
errors); this module adds what a feed needs on top: one deadline for the whole
request (``asyncio.timeout``: cancelling a feed or a timeout ends the request
at once and closes its socket), a cap on the body kept, gzip inflated here
with the same cap (a gzip bomb is an error, not a memory blow-up), an idle
timeout for endless streams, and every failure as one :class:`HttpError`
naming it.
"""

from __future__ import annotations

import asyncio
import contextlib
import zlib
from collections.abc import AsyncGenerator, Callable, Iterator, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import aiohttp

from livegain import __version__
from livegain.core.errors import LivegainError

USER_AGENT = f"livegain/{__version__}"
MAX_BODY = 64 * 1024 * 1024


class HttpError(LivegainError):
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
    session: aiohttp.ClientSession | None = None,
) -> HttpResponse:
    """GET ``url``; raise :class:`HttpError` on any failure (never for an HTTP
    status). ``session``: a feed's own (:func:`http_session`), whose
    connections are kept between its polls; None: one for this request."""
    _check_url(url)
    with _as_http_errors(timeout):
        async with asyncio.timeout(timeout), contextlib.AsyncExitStack() as stack:
            if session is None:
                session = await stack.enter_async_context(http_session())
            resp = await stack.enter_async_context(
                session.get(
                    url,
                    headers=_request_headers(headers, gzip=True),
                    max_redirects=max_redirects,
                )
            )
            hdrs = {k.lower(): v for k, v in resp.headers.items()}
            body = await _read_body(resp, hdrs, max_body)
            return HttpResponse(resp.status, resp.reason or "", hdrs, body, str(resp.url))


def _check_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise HttpError(f"unsupported URL {url!r}")


def http_session() -> aiohttp.ClientSession:
    """A session for a feed's polls (``async with http_session() as session``):
    its connections are kept from one poll to the next (a GET on a kept
    connection costs a third of one on a new connection: docs/feeds.md). The
    deadline is each request's (``asyncio.timeout``); bodies come as sent
    (gzip is inflated here)."""
    return aiohttp.ClientSession(
        headers={"User-Agent": USER_AGENT, "Accept": "*/*"},
        timeout=aiohttp.ClientTimeout(total=None),
        auto_decompress=False,
    )


def _request_headers(extra: Mapping[str, str] | None, *, gzip: bool) -> dict[str, str]:
    # gzip only: the body is inflated here, bounded (a gzip bomb is an error)
    return {"Accept-Encoding": "gzip, identity" if gzip else "identity", **(extra or {})}


@contextlib.contextmanager
def _as_http_errors(timeout: float) -> Iterator[None]:
    """Network faults, timeouts and malformed responses become :class:`HttpError`."""
    try:
        yield
    except TimeoutError:
        raise HttpError(f"timed out after {timeout:g} s") from None
    except aiohttp.TooManyRedirects as exc:
        raise HttpError(f"too many redirects (last: {exc.request_info.real_url})") from None
    except aiohttp.ClientResponseError as exc:
        raise HttpError(f"malformed response: {_one_line(exc.message)}") from None
    except aiohttp.ClientPayloadError as exc:  # a body cut short or badly framed
        raise HttpError(f"malformed response: {_one_line(str(exc))}") from None
    except aiohttp.ServerDisconnectedError:
        raise HttpError("malformed response: the server closed the connection") from None
    except (aiohttp.ClientError, OSError, ValueError) as exc:
        raise HttpError(f"{type(exc).__name__}: {_one_line(str(exc))}") from None


def _one_line(text: str) -> str:
    """aiohttp's parser errors span lines (the bad line, a caret): one line for a log."""
    return " ".join(text.split())


async def http_stream(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = 10.0,  # noqa: ASYNC109 (connect + redirects + headers)
    idle_timeout: float | None = None,
    max_redirects: int = 5,
    max_chunk: int = MAX_BODY,
    on_open: Callable[[int, Mapping[str, str]], object] | None = None,
) -> AsyncGenerator[tuple[int, bytes], None]:
    """GET ``url`` and yield its body as it arrives, for endless responses.

    Yields ``(status, chunk)``; the first item may carry an empty chunk (the
    status, before any body). Chunked and read-to-close bodies; no gzip. A
    chunk is what has arrived since the last one; a larger one than
    ``max_chunk`` is an error.
    Raises :class:`HttpError` on a network error, a malformed response, or
    ``idle_timeout`` seconds without data; returns when the server ends the
    body. ``on_open(status, headers)`` (names lower-cased) is called once the
    response's head has arrived.
    """
    _check_url(url)
    async with http_session() as session:
        with _as_http_errors(timeout):
            async with asyncio.timeout(timeout):
                resp = await session.get(
                    url,
                    headers=_request_headers(headers, gzip=False),
                    max_redirects=max_redirects,
                )
        if on_open is not None:
            on_open(resp.status, {k.lower(): v for k, v in resp.headers.items()})
        try:
            yield resp.status, b""
            while True:
                with _as_http_errors(timeout):
                    try:
                        async with asyncio.timeout(idle_timeout):
                            data = await resp.content.readany()
                    except TimeoutError:
                        raise HttpError(f"no data for {idle_timeout:g} s") from None
                if not data:
                    return
                if len(data) > max_chunk:
                    raise HttpError(f"chunk larger than {max_chunk} bytes")
                yield resp.status, data
        finally:
            resp.release()


async def _read_body(resp: aiohttp.ClientResponse, hdrs: Mapping[str, str], max_body: int) -> bytes:
    """The body as sent, inflated here when gzip: never more than ``max_body``
    bytes kept, either way."""
    length = hdrs.get("content-length")
    if length is not None and length.isdigit() and int(length) > max_body:
        raise HttpError(f"body larger than {max_body} bytes")
    gzip = hdrs.get("content-encoding", "identity").lower() == "gzip"
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS) if gzip else None  # gzip header and trailer
    sent = 0
    out = bytearray()
    try:
        async for raw in resp.content.iter_any():
            sent += len(raw)
            if inflate is None:
                if sent > max_body:
                    raise HttpError(f"body larger than {max_body} bytes")
                out += raw
                continue
            out += inflate.decompress(raw, max_body + 1 - len(out))
            if len(out) > max_body or inflate.unconsumed_tail:
                raise HttpError(f"gzip body inflates past {max_body} bytes")
    except aiohttp.ClientPayloadError:
        if length is not None and length.isdigit() and sent < int(length):
            raise HttpError(f"connection closed after {sent} of {length} body bytes") from None
        raise  # malformed: named by _as_http_errors
    except zlib.error as exc:
        raise HttpError(f"bad gzip body: {exc}") from None
    if inflate is not None and sent:
        try:
            out += inflate.flush()
        except zlib.error as exc:
            raise HttpError(f"bad gzip body: {exc}") from None
        if not inflate.eof:
            raise HttpError("bad gzip body: truncated")
        if len(out) > max_body:
            raise HttpError(f"gzip body inflates past {max_body} bytes")
    return bytes(out)
