"""Who may come in, and how much one client may take: Origin, per-address
cap, subscriptions, CORS, and HTTP that websockets alone would not answer."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from livegain.publish.limits import ServerLimits
from livegain.publish.server import LiveServer

from .helpers import board_state, http_get, recv_json
from .test_board_list import parse_response


def ws_url(srv: LiveServer) -> str:
    return f"ws://127.0.0.1:{srv.port}/ws"


async def raw_exchange(port: int, data: bytes, wait: float = 5.0) -> bytes:
    """Write ``data`` in one go and read until the server closes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        await writer.drain()
        return await asyncio.wait_for(reader.read(), wait)
    finally:
        writer.close()


async def test_pages_of_other_origins_may_not_open_the_socket(tmp_path: Path) -> None:
    async with LiveServer("127.0.0.1", 0, static_dir=tmp_path) as srv:
        with pytest.raises(InvalidStatus) as info:
            async with connect(ws_url(srv), origin="https://evil.example"):  # type: ignore[arg-type]
                pass
        assert info.value.response.status_code == 403
        for origin in ("null", "http://127.0.0.2:1"):
            with pytest.raises(InvalidStatus):
                async with connect(ws_url(srv), origin=origin):  # type: ignore[arg-type]
                    pass
        assert srv.stats.refused_origin == 3
        # The server's own pages (same host, any port) and clients without an
        # Origin (OBS, tools) are let in.
        for origin in (f"http://127.0.0.1:{srv.port}", "http://127.0.0.1:9", None):
            async with connect(ws_url(srv), origin=origin) as ws:  # type: ignore[arg-type]
                assert (await recv_json(ws))["type"] == "hello"
    limits = ServerLimits(origins=("https://studio.example",))
    async with LiveServer("127.0.0.1", 0, static_dir=tmp_path, limits=limits) as srv:
        async with connect(ws_url(srv), origin="https://studio.example") as ws:  # type: ignore[arg-type]
            assert (await recv_json(ws))["type"] == "hello"
        with pytest.raises(InvalidStatus):
            async with connect(ws_url(srv), origin="https://evil.example"):  # type: ignore[arg-type]
                pass


async def handshake_status(port: int, host: str, origin: str) -> int:
    """The status of a WebSocket handshake sent with these Host and Origin headers."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(
            (
                f"GET /ws HTTP/1.1\r\nHost: {host}\r\nOrigin: {origin}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        await writer.drain()
        line = await asyncio.wait_for(reader.readline(), 5)
        return int(line.split()[1])
    finally:
        writer.close()


async def test_localhost_and_loopback_addresses_are_one_origin(tmp_path: Path) -> None:
    async with LiveServer("127.0.0.1", 0, static_dir=tmp_path) as srv:
        # A page served as localhost opens ws://127.0.0.1 (and the other way round).
        for origin in (f"http://localhost:{srv.port}", f"http://[::1]:{srv.port}"):
            async with connect(ws_url(srv), origin=origin) as ws:  # type: ignore[arg-type]
                assert (await recv_json(ws))["type"] == "hello"
        port = srv.port
        for host in (f"localhost:{port}", f"[::1]:{port}", f"LOCALHOST:{port}"):
            assert await handshake_status(port, host, f"http://127.0.0.1:{port}") == 101
        assert srv.stats.refused_origin == 0
        # Loopback is one host only among the loopback names: other hosts stay out.
        for host, origin in (
            (f"localhost:{port}", "http://127.0.0.2:1"),
            (f"localhost:{port}", "https://evil.example"),
            (f"localhost.evil.example:{port}", f"http://127.0.0.1:{port}"),
            (f"example.org:{port}", f"http://localhost:{port}"),
        ):
            assert await handshake_status(port, host, origin) == 403, (host, origin)
        assert srv.stats.refused_origin == 4


async def test_no_wildcard_cors_unless_configured(tmp_path: Path) -> None:
    async with LiveServer("127.0.0.1", 0, static_dir=tmp_path) as srv:
        for path in ("/healthz", "/api/boards", "/nope"):
            _, h, _ = await http_get(srv.port, path)
            assert "access-control-allow-origin" not in h, path
    limits = ServerLimits(cors_origins=("https://site.example",))
    async with LiveServer("127.0.0.1", 0, static_dir=tmp_path, limits=limits) as srv:
        for origin, expected in (("https://site.example", "https://site.example"), ("x", None)):
            raw = await raw_exchange(
                srv.port,
                f"GET /api/boards HTTP/1.1\r\nHost: h\r\nOrigin: {origin}\r\n\r\n".encode(),
            )
            _, h, _ = parse_response(raw)
            assert h.get("access-control-allow-origin") == expected


async def test_one_address_cannot_take_every_slot(tmp_path: Path) -> None:
    limits = ServerLimits(max_connections_per_ip=3)
    async with LiveServer("127.0.0.1", 0, static_dir=tmp_path, limits=limits) as srv:
        held = [await connect(ws_url(srv)) for _ in range(3)]
        try:
            for ws in held:
                await recv_json(ws)
            with pytest.raises(InvalidStatus) as info:
                async with connect(ws_url(srv)):
                    pass
            assert info.value.response.status_code == 429
            assert srv.stats.refused_per_ip == 1
            # Another address still gets in (127.0.0.2 is loopback too).
            async with connect(ws_url(srv), local_addr=("127.0.0.2", 0)) as other:
                assert (await recv_json(other))["type"] == "hello"
            # A slot freed is a slot again.
            await held.pop().close()
            for _ in range(100):
                async with asyncio.timeout(5):
                    try:
                        async with connect(ws_url(srv)) as ws:
                            assert (await recv_json(ws))["type"] == "hello"
                            break
                    except InvalidStatus:
                        await asyncio.sleep(0.02)
            else:
                raise AssertionError("the freed slot was never given back")
        finally:
            for ws in held:
                await ws.close()


async def test_subscriptions_are_bounded_and_the_connection_stays(tmp_path: Path) -> None:
    limits = ServerLimits(max_subscriptions=5, max_board_id=20)
    async with LiveServer("127.0.0.1", 0, static_dir=tmp_path, limits=limits) as srv:
        srv.set_board(board_state("b1"))
        async with connect(ws_url(srv)) as ws:
            await recv_json(ws)
            await ws.send(json.dumps({"type": "subscribe", "boards": ["x" * 21]}))
            err = await recv_json(ws)
            assert err["type"] == "error" and "21 characters (limit 20)" in err["message"]
            many = [f"id{i}" for i in range(6)]
            await ws.send(json.dumps({"type": "subscribe", "boards": many}))
            err = await recv_json(ws)
            assert err["type"] == "error" and "6 boards (limit 5" in err["message"]
            # Nothing of a refused request was kept; within the limit all is well.
            server_side = next(iter(srv.hub.clients()))
            assert srv.hub.subscriptions(server_side) == set()
            await ws.send(json.dumps({"type": "subscribe", "boards": ["b1", *many[:4]]}))
            assert (await recv_json(ws))["type"] == "snapshot"
            await ws.send(json.dumps({"type": "subscribe", "boards": ["b1", "id0"]}))  # known
            await ws.send(json.dumps({"type": "subscribe", "boards": ["one-more"]}))
            msgs = [await recv_json(ws) for _ in range(2)]
            assert msgs[-1]["type"] == "error"
            assert len(srv.hub.subscriptions(server_side)) == 5
            await ws.send('{"type":"ping"}')
            assert (await recv_json(ws))["type"] == "pong"


async def test_pipelined_requests_get_an_answer_and_no_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="livegain.websockets")
    async with LiveServer("127.0.0.1", 0, static_dir=tmp_path) as srv:
        two = b"GET /healthz HTTP/1.1\r\nHost: h\r\n\r\nGET /api/boards HTTP/1.1\r\nHost: h\r\n\r\n"
        for _ in range(20):
            raw = await raw_exchange(srv.port, two)
            status, headers, body = parse_response(raw)
            # The first is answered in full; the answer closes the connection,
            # so the client sends the second again.
            assert status == 200 and headers["connection"] == "close"
            assert len(body) == int(headers["content-length"])
            assert json.loads(body)["status"] == "ok"
        # A WebSocket client that writes a frame right behind its handshake.
        async with connect(ws_url(srv)) as ws:
            await recv_json(ws)
            await ws.send('{"type":"ping"}')
            assert (await recv_json(ws))["type"] == "pong"
    bad = [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
    assert bad == [], [r.getMessage() for r in bad]


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"BREW /healthz HTTP/1.1\r\nHost: h\r\n\r\n", 405),
        (b"POST /api/boards HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello", 405),
        (b"PUT /ws HTTP/1.1\r\nHost: h\r\n\r\n", 405),
        (b"HEAD / HTTP/1.1\r\nHost: h\r\n\r\n", 405),
        (b"GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc", 400),
        (b"GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
        (b"hello there\r\n\r\n", 400),
        (b"GET /\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nno colon here\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\n" + b"X-Big: " + b"y" * 70_000 + b"\r\n\r\n", 431),
        (b"GET / HTTP/1.1\r\n" + b"X-Big: " + b"y" * 9_000 + b"\r\n\r\n", 431),
        (b"GET /" + b"a" * 9_000 + b" HTTP/1.1\r\n\r\n", 414),
    ],
)
async def test_bad_requests_get_a_status_and_no_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, request_bytes: bytes, status: int
) -> None:
    caplog.set_level(logging.INFO, logger="livegain.websockets")
    async with LiveServer("127.0.0.1", 0, static_dir=tmp_path) as srv:
        got, headers, _ = parse_response(await raw_exchange(srv.port, request_bytes))
        assert got == status
        if status == 405:
            assert headers["allow"] == "GET, OPTIONS"
        assert srv.stats.bad_requests == 1
        # The server is fine afterwards.
        st, _, _ = await http_get(srv.port, "/healthz")
        assert st == 200
    bad = [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
    assert bad == [], [r.getMessage() for r in bad]
