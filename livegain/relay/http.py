"""The relay's HTTP server: GET only, on aiohttp's web server, one handler
for every path (``livegain replay``, the demo's relays, the tests' servers)."""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from aiohttp import web


@dataclass
class Reply:
    """A handler's answer: status, body (or an endless stream), type and headers."""

    status: int = 200
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    stream: Callable[[], AsyncIterator[bytes]] | None = None
    """An endless body instead of ``body``: sent chunked as it is produced."""


Handler = Callable[[str, Mapping[str, str]], Awaitable[Reply] | Reply]


class MiniHttpServer:
    """A GET-only HTTP server on aiohttp's web server: every path goes to
    ``handler(path, headers)``, which returns a :class:`Reply` (or an
    awaitable of one); ``path`` is the request target as sent (query
    included), request header names are lower-cased. HEAD is answered as
    GET without the body; other methods get 405; a handler that raises
    answers 500 and the server lives. A reply with ``stream`` is sent chunked
    as it is produced. Bound to 127.0.0.1 by default.
    """

    def __init__(self, handler: Handler, host: str = "127.0.0.1", port: int = 0) -> None:
        self._handler = handler
        self.host = host
        self.port = port
        self._runner: web.AppRunner | None = None
        self.requests = 0
        self._peers: weakref.WeakSet[asyncio.BaseTransport] = weakref.WeakSet()
        self.connections = 0
        """Connections that have sent a request (a client that keeps its
        connection open sends all its requests over one)."""

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/{path:.*}", self._serve)
        # endless streams are cut when it stops, not waited for
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=0.5)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port)
        await site.start()
        self._runner = runner
        self.port = int(runner.addresses[0][1])

    async def stop(self) -> None:
        if self._runner is not None:
            runner, self._runner = self._runner, None
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(2):
                    await runner.cleanup()

    async def __aenter__(self) -> MiniHttpServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        self.requests += 1
        if request.transport is not None and request.transport not in self._peers:
            self._peers.add(request.transport)
            self.connections += 1
        if request.method not in ("GET", "HEAD"):
            return web.Response(status=405, body=b"only GET\n", headers={"Allow": "GET, HEAD"})
        headers = {k.lower(): v for k, v in request.headers.items()}
        try:
            result = self._handler(request.raw_path, headers)
            reply = await result if not isinstance(result, Reply) else result
        except Exception as exc:  # a handler bug answers 500, the server lives
            reply = Reply(500, f"{type(exc).__name__}: {exc}\n".encode())
        hdrs = {"Content-Type": reply.content_type, **reply.headers}
        if reply.stream is None or request.method != "GET":
            body = b"" if reply.status == 304 else reply.body
            return web.Response(status=reply.status, body=body, headers=hdrs)
        resp = web.StreamResponse(status=reply.status, headers=hdrs)
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        with contextlib.suppress(ConnectionError):  # the client went away
            async for data in reply.stream():
                if data:
                    await resp.write(data)
            await resp.write_eof()
        return resp
