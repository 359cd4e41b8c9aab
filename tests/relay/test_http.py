"""The relay's GET server (:class:`~livegain.relay.http.MiniHttpServer`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping

import pytest

from livegain.feeds._http import http_get
from livegain.relay.http import MiniHttpServer, Reply

pytestmark = pytest.mark.timeout(60)


async def test_the_relay_server_answers_as_a_get_server_should() -> None:
    """MiniHttpServer: HEAD without a body, other methods 405,
    a handler that raises 500 (and the server goes on), 304 without a body,
    the request target as sent, a streamed reply chunk by chunk."""
    seen: list[str] = []

    async def stream() -> AsyncIterator[bytes]:
        for part in (b"one\n", b"", b"two\n"):
            yield part

    def handler(path: str, headers: Mapping[str, str]) -> Reply:
        seen.append(path)
        if path == "/boom":
            raise RuntimeError("handler bug")
        if path == "/same":
            return Reply(304, headers={"ETag": '"x"'})
        if path == "/stream":
            return Reply(200, stream=stream)
        return Reply(200, b"body\n", headers={"ETag": '"x"'})

    async with MiniHttpServer(handler) as srv:
        resp = await http_get(srv.base_url + "/a%20b?round=1")
        assert (resp.status, resp.body, resp.headers["etag"]) == (200, b"body\n", '"x"')
        assert seen[-1] == "/a%20b?round=1"
        broken = await http_get(srv.base_url + "/boom")
        assert broken.status == 500 and b"RuntimeError: handler bug" in broken.body
        assert (await http_get(srv.base_url + "/")).status == 200  # still serving
        same = await http_get(srv.base_url + "/same")
        assert (same.status, same.body) == (304, b"")
        streamed = await http_get(srv.base_url + "/stream")
        assert streamed.body == b"one\ntwo\n"
        assert streamed.headers.get("transfer-encoding") == "chunked"
        reader, writer = await asyncio.open_connection(srv.host, srv.port)
        for method, expect in ((b"HEAD", b"200"), (b"POST", b"405")):
            writer.write(method + b" / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
            status = await asyncio.wait_for(reader.readline(), 5)
            assert status.split()[1] == expect, status
            head = b""
            while (line := await asyncio.wait_for(reader.readline(), 5)) != b"\r\n":
                head += line
            if method == b"POST":
                assert b"Allow: GET, HEAD" in head
                await asyncio.wait_for(reader.readexactly(len(b"only GET\n")), 5)
            else:  # the length of a GET's body, and none of it
                assert b"Content-Length: 5" in head
        writer.close()
        assert srv.requests == len(seen) + 1  # the POST never reached the handler
