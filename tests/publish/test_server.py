"""The WebSocket + HTTP server against real websockets clients and raw HTTP."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from livegain.publish.limits import ServerLimits
from livegain.publish.schema import PROTOCOL_VERSION
from livegain.publish.server import LiveServer, safe_join

from .helpers import (
    board_state,
    http_get,
    moment_bytes,
    recv_board_json,
    recv_board_messages,
    recv_json,
    recv_until,
    update_for,
)


@pytest.fixture
def static_dir(tmp_path: Path) -> Path:
    d = tmp_path / "static"
    d.mkdir()
    (d / "index.html").write_text("<html>index</html>")
    (d / "board.html").write_text("<html>board</html>")
    (d / "boards.html").write_text("<html>boards</html>")
    (d / "app.js").write_text("console.log(1)")
    (d / "style.css").write_text("body{}")
    (tmp_path / "secret.txt").write_text("do not serve")
    return d


@pytest.fixture
async def server(static_dir: Path) -> AsyncIterator[LiveServer]:
    srv = LiveServer("127.0.0.1", 0, static_dir=static_dir, health=lambda: {"engine": "test"})
    await srv.start()
    try:
        yield srv
    finally:
        await srv.close()


def ws_url(srv: LiveServer) -> str:
    return f"ws://127.0.0.1:{srv.port}/ws"


async def test_hello_subscribe_snapshot_then_updates(server: LiveServer) -> None:
    server.set_board(board_state("b1", plies=2, seq=2))
    server.set_board(board_state("b2", plies=0, seq=0))
    async with connect(ws_url(server)) as ws:
        hello = await recv_json(ws)
        assert hello["type"] == "hello"
        assert hello["protocol"] == PROTOCOL_VERSION == 4
        assert [b["board_id"] for b in hello["boards"]] == ["b1", "b2"]
        assert (hello["boards_total"], hello["boards_next"]) == (2, None)
        # (the list's diff for b1 and b2 goes to every client once its interval
        # is over: on a loaded machine it may come between any two messages)
        await ws.send(json.dumps({"type": "subscribe", "boards": ["b1"]}))
        (snap,) = await recv_board_json(ws)
        assert snap["type"] == "snapshot"
        assert snap["state"]["board_id"] == "b1"
        assert snap["state"]["seq"] == 2
        assert len(snap["state"]["moves"]) == 2
        # An update for an unsubscribed board is not sent, the subscribed one is.
        s2 = board_state("b2", plies=1, seq=1)
        server.publish(update_for(s2), s2)
        s1 = board_state("b1", plies=3, seq=3)
        server.publish(update_for(s1), s1)
        (upd,) = await recv_board_json(ws)
        assert upd["type"] == "update"
        assert upd["board_id"] == "b1"
        assert upd["seq"] == 3
        assert upd["ply"]["ply"] == 3
        # Subscribing to everything sends every board, including later ones.
        await ws.send(json.dumps({"type": "subscribe", "boards": "*"}))
        got = {m["state"]["board_id"] for m in await recv_board_json(ws, 2)}
        assert got == {"b1", "b2"}
        server.set_board(board_state("b3"))
        snapshots: list[dict[str, Any]] = []
        diffs: list[dict[str, Any]] = []

        def b3_listed() -> bool:
            return any(b["board_id"] == "b3" for d in diffs for b in d["added"])

        async with asyncio.timeout(5):
            while not snapshots or not b3_listed():
                msg = await recv_json(ws)
                (snapshots if msg["type"] == "snapshot" else diffs).append(msg)
        assert [m["state"]["board_id"] for m in snapshots] == ["b3"]
        assert diffs[-1]["added"][-1]["board_id"] == "b3"
        assert {m["type"] for m in diffs} == {"boards_diff"}
        for diff in diffs:  # b1 and b2 may come again: added less than an interval ago
            assert {b["board_id"] for b in diff["added"]} <= {"b1", "b2", "b3"}
            assert diff["changed"] == diff["removed"] == []
        await ws.send(json.dumps({"type": "ping"}))
        (pong,) = await recv_board_json(ws)
        assert pong["type"] == "pong"


async def test_same_bytes_to_every_subscriber(server: LiveServer) -> None:
    server.set_board(board_state("b1"))
    async with connect(ws_url(server)) as a, connect(ws_url(server)) as b:
        for ws in (a, b):
            await recv_json(ws)
            await ws.send('{"type":"subscribe","boards":"*"}')
            await recv_until(ws, "snapshot")
        s = board_state("b1", plies=1, seq=1)
        data = server.publish(update_for(s), s)
        (ra,) = await recv_board_messages(a, 1)
        (rb,) = await recv_board_messages(b, 1)
        assert ra == rb == data.decode()


async def test_unsubscribe_stops_updates(server: LiveServer) -> None:
    server.set_board(board_state("b1"))
    async with connect(ws_url(server)) as ws:
        await recv_json(ws)
        await ws.send('{"type":"subscribe","boards":"*"}')
        await recv_until(ws, "snapshot")
        await ws.send('{"type":"unsubscribe","boards":"*"}')
        await ws.send('{"type":"ping"}')
        assert [m["type"] for m in await recv_board_json(ws)] == ["pong"]
        s = board_state("b1", plies=1, seq=1)
        server.publish(update_for(s), s)
        await ws.send('{"type":"ping"}')
        # no update between: the next message that is not the board list's is the pong
        assert [m["type"] for m in await recv_board_json(ws)] == ["pong"]


@pytest.mark.parametrize(
    ("payload", "needle"),
    [
        ("{not json", "invalid JSON"),
        ('{"type":"launch_missiles"}', "unknown message type"),
        ('["subscribe"]', "JSON object"),
        ('{"type":"subscribe","boards":42}', "boards"),
        ('{"type":"subscribe","boards":"*","extra":1}', "extra"),
        (b"\x00\x01binary", "binary"),
        ("x" * 5000, "too large"),
    ],
)
async def test_hostile_messages_get_errors_and_keep_connection(
    server: LiveServer, payload: str | bytes, needle: str
) -> None:
    async with connect(ws_url(server)) as ws:
        await recv_json(ws)
        await ws.send(payload)
        err = await recv_json(ws)
        assert err["type"] == "error"
        assert needle in err["message"]
        await ws.send('{"type":"ping"}')
        assert (await recv_json(ws))["type"] == "pong"
    assert server.stats.protocol_errors == 1


async def test_repeated_abuse_closes(static_dir: Path) -> None:
    srv = LiveServer("127.0.0.1", 0, static_dir=static_dir, limits=ServerLimits(max_errors=3))
    async with srv:
        async with connect(ws_url(srv)) as ws:
            await recv_json(ws)
            for _ in range(3):
                await ws.send("garbage")
            with pytest.raises(ConnectionClosed) as info:
                for _ in range(10):
                    await recv_json(ws)
            assert info.value.rcvd is not None and info.value.rcvd.code == 1008
        assert srv.stats.closed_abusive == 1
        # Other clients are unaffected.
        async with connect(ws_url(srv)) as ok:
            assert (await recv_json(ok))["type"] == "hello"


async def test_frame_over_transport_limit_closes_1009(server: LiveServer) -> None:
    async with connect(ws_url(server), max_size=None) as ws:
        await recv_json(ws)
        await ws.send("x" * (server.limits.max_frame_bytes + 10))
        with pytest.raises(ConnectionClosed) as info:
            await recv_json(ws)
        assert info.value.rcvd is not None and info.value.rcvd.code == 1009


async def test_slow_client_gets_snapshot_not_backlog(static_dir: Path) -> None:
    limits = ServerLimits(soft_backlog=64 * 1024, low_backlog=8 * 1024, stale_timeout=30)
    srv = LiveServer("127.0.0.1", 0, static_dir=static_dir, limits=limits)
    async with srv:
        srv.set_board(board_state("b1"))
        # max_queue=1: the client library stops reading the socket once one
        # message is queued, so the server's write buffer fills for real.
        async with (
            connect(ws_url(srv), max_queue=1, max_size=None) as slow,
            connect(ws_url(srv)) as fast,
        ):
            for ws in (slow, fast):
                await recv_json(ws)
                await ws.send('{"type":"subscribe","boards":"*"}')
                await recv_until(ws, "snapshot")
            pad = "x" * 20_000
            last = 0
            fast_seen: list[int] = []
            max_backlog = 0
            for seq in range(1, 400):
                s = board_state("b1", plies=1, seq=seq)
                srv.publish(update_for(s, padding=pad), s)
                last = seq
                slow_side = server_side(srv, slow)
                max_backlog = max(max_backlog, slow_side.transport.get_write_buffer_size())
                # The fast client keeps up.
                fast_seen.append((await recv_json(fast))["seq"])
                if srv.stats.dropped_updates > 20:
                    break
            assert fast_seen == list(range(1, last + 1))
            assert srv.stats.dropped_updates > 0
            # The server buffer stayed bounded: at most the soft limit plus one message.
            assert max_backlog <= limits.soft_backlog + 25_000
            # A new board while the slow client is behind: its board list and
            # the new board's snapshot come with the resync.
            srv.set_board(board_state("b2"))
            # The slow client now reads: it receives what was buffered, then a
            # fresh snapshot at the latest seq instead of every missed update.
            seen: list[int] = []
            snapshot_seq = None
            got_b2 = got_list = False
            for _ in range(last + 10):
                msg = await recv_json(slow, wait=10)
                if msg["type"] == "snapshot":
                    if msg["state"]["board_id"] == "b1":
                        snapshot_seq = msg["state"]["seq"]
                    else:
                        got_b2 = True
                elif msg["type"] == "boards":
                    # The list changed while it was behind: the first page again.
                    ids = [b["board_id"] for b in msg["boards"]]
                    got_list = got_list or (msg["reset"] and ids == ["b1", "b2"])
                elif msg["type"] == "boards_diff":
                    # (or the change itself, when the resync came first)
                    got_list = got_list or "b2" in [b["board_id"] for b in msg["added"]]
                else:
                    seen.append(msg["seq"])
                if snapshot_seq is not None and got_b2 and got_list:
                    break
            assert snapshot_seq == last
            assert got_b2 and got_list
            assert len(seen) < last
            assert srv.stats.resyncs == 1
            # After the resync the slow client gets live updates again.
            s = board_state("b1", plies=2, seq=last + 1)
            srv.publish(update_for(s), s)
            assert (await recv_until(slow, "update"))["seq"] == last + 1


def server_side(srv: LiveServer, client_ws: object) -> ServerConnection:
    """The server-side connection matching a client (by the local port)."""
    port = client_ws.local_address[1]  # type: ignore[attr-defined]
    for ws in srv.hub.clients():
        if ws.remote_address[1] == port:
            return ws
    raise AssertionError("client not found on the server")


async def test_http_routes(server: LiveServer) -> None:
    st, h, body = await http_get(server.port, "/")
    assert (st, h["content-type"], body) == (200, "text/html; charset=utf-8", b"<html>index</html>")
    st, _, body = await http_get(server.port, "/overlay/board?board=b1&theme=dark")
    assert (st, body) == (200, b"<html>board</html>")
    st, _, body = await http_get(server.port, "/overlay/boards")
    assert (st, body) == (200, b"<html>boards</html>")
    st, h, _ = await http_get(server.port, "/overlay/static/app.js")
    assert (st, h["content-type"]) == (200, "text/javascript; charset=utf-8")
    st, h, _ = await http_get(server.port, "/overlay/static/style.css")
    assert (st, h["content-type"]) == (200, "text/css; charset=utf-8")
    assert h["x-content-type-options"] == "nosniff"
    for bad in (
        "/overlay/static/../secret.txt",
        "/overlay/static/%2e%2e/secret.txt",
        "/overlay/static/..%2fsecret.txt",
        "/overlay/static//etc/passwd",
        "/overlay/static/.hidden",
        "/overlay/static/",
        "/nope",
    ):
        st, _, body = await http_get(server.port, bad)
        assert st == 404, bad
        assert b"do not serve" not in body


async def test_healthz_and_api_boards(server: LiveServer) -> None:
    server.set_board(board_state("b1", plies=3, seq=3, white="<script>alert(1)</script>"))
    async with connect(ws_url(server)) as ws:
        await recv_json(ws)
        st, h, body = await http_get(server.port, "/healthz")
        assert st == 200 and h["content-type"] == "application/json"
        health = json.loads(body)
        assert health["status"] == "ok"
        assert health["boards"] == 1
        assert health["clients"] == 1
        assert health["engine"] == "test"
        assert health["uptime"] >= 0
    st, h, body = await http_get(server.port, "/api/boards")
    assert st == 200 and h["content-type"] == "application/json"
    boards = json.loads(body)
    assert boards[0]["board_id"] == "b1"
    assert boards[0]["plies"] == 3
    # Hostile names are data: carried verbatim inside JSON, never as markup.
    assert boards[0]["white"]["name"] == "<script>alert(1)</script>"


async def test_plain_http_on_ws_path_is_rejected_cleanly(server: LiveServer) -> None:
    st, _, _ = await http_get(server.port, "/ws")
    assert st == 426


def test_safe_join(tmp_path: Path) -> None:
    (tmp_path / "a.css").write_text("x")
    assert safe_join(tmp_path, "a.css") == (tmp_path / "a.css").resolve()
    for bad in ("", "../x", "a/../../x", "/etc/passwd", "a\\b", ".env", "a\x00b", "x//y"):
        assert safe_join(tmp_path, bad) is None, bad


async def test_large_update_reaches_a_real_client(server: LiveServer) -> None:
    server.set_board(board_state("b1"))
    async with connect(ws_url(server), max_size=None) as ws:
        await recv_json(ws)
        await ws.send('{"type":"subscribe","boards":"*"}')
        await recv_until(ws, "snapshot")
        s = board_state("b1", plies=1, seq=1)
        data = server.publish(update_for(s, padding="y" * 100_000), s)
        assert await recv_board_messages(ws, 1) == [data.decode()]


async def test_api_board_state(server: LiveServer) -> None:
    server.set_board(board_state("r1/b 1", plies=2, seq=2))
    st, h, body = await http_get(server.port, "/api/boards/r1%2Fb%201")
    assert (st, h["content-type"]) == (200, "application/json")
    assert json.loads(body)["moves"][1]["san"] == "e5"
    st, _, _ = await http_get(server.port, "/api/boards/nope")
    assert st == 404


async def test_message_flood_is_rate_limited(static_dir: Path) -> None:
    limits = ServerLimits(rate=5, burst=10, max_errors=1000)
    srv = LiveServer("127.0.0.1", 0, static_dir=static_dir, limits=limits)
    async with srv, connect(ws_url(srv)) as ws:
        await recv_json(ws)
        for _ in range(30):
            await ws.send('{"type":"ping"}')
        kinds = [(await recv_json(ws))["type"] for _ in range(30)]
        assert 10 <= kinds.count("pong") < 30
        assert kinds.count("error") == 30 - kinds.count("pong")
        await asyncio.sleep(0.5)  # tokens come back
        await ws.send('{"type":"ping"}')
        assert (await recv_json(ws))["type"] == "pong"


async def test_connections_beyond_the_limit_are_refused(static_dir: Path) -> None:
    from websockets.exceptions import InvalidStatus

    limits = ServerLimits(max_clients=2)
    async with LiveServer("127.0.0.1", 0, static_dir=static_dir, limits=limits) as srv:
        async with connect(ws_url(srv)) as a, connect(ws_url(srv)) as b:
            await recv_json(a)
            await recv_json(b)
            with pytest.raises(InvalidStatus) as info:
                async with connect(ws_url(srv)):
                    pass
            assert info.value.response.status_code == 503
        assert srv.stats.refused == 1


async def test_chunked_fan_out_keeps_order(static_dir: Path) -> None:
    """With more clients than one chunk, writes are spread over loop iterations, in order."""
    srv = LiveServer("127.0.0.1", 0, static_dir=static_dir, limits=ServerLimits(fanout_chunk=2))
    async with srv:
        srv.set_board(board_state("b1"))
        clients = [await connect(ws_url(srv)) for _ in range(5)]
        try:
            for ws in clients:
                await recv_json(ws)
                await ws.send('{"type":"subscribe","boards":"*"}')
                await recv_until(ws, "snapshot")
            for seq in range(1, 6):
                s = board_state("b1", plies=1, seq=seq)
                srv.publish(update_for(s), s)
            assert srv.outbox > 0  # not everything written yet: the loop gets a turn
            for ws in clients:
                assert [(await recv_json(ws))["seq"] for _ in range(5)] == [1, 2, 3, 4, 5]
            assert srv.outbox == 0
        finally:
            for ws in clients:
                await ws.close()


async def test_a_viewer_who_comes_later_gets_the_latest_moments(server: LiveServer) -> None:
    """Real WebSocket clients: a moment goes to the board's subscribers when it
    happens, and one who connects afterwards gets it after the board's snapshot."""
    server.set_board(board_state("b1", plies=6, seq=6))
    server.set_board(board_state("b2", plies=2, seq=2))
    async with connect(ws_url(server)) as early:
        assert (await recv_json(early))["type"] == "hello"
        await early.send(json.dumps({"type": "subscribe", "boards": ["b1"]}))
        assert (await recv_json(early))["type"] == "snapshot"
        server.publish_moment("b1", moment_bytes("b1", 6))
        server.publish_moment("b2", moment_bytes("b2", 2, "turnaround"))
        got = await recv_json(early)
        assert (got["type"], got["board_id"], got["ply"]) == ("moment", "b1", 6)
    async with connect(ws_url(server)) as late:
        assert (await recv_json(late))["type"] == "hello"
        await late.send(json.dumps({"type": "subscribe", "boards": "*"}))
        got = [await recv_json(late) for _ in range(4)]
        assert [(m["type"], m.get("board_id"), m.get("ply")) for m in got[2:]] == [
            ("moment", "b1", 6),
            ("moment", "b2", 2),
        ]
        assert [m["type"] for m in got[:2]] == ["snapshot", "snapshot"]
        assert got[2] == json.loads(moment_bytes("b1", 6))
