"""PGN over HTTP against real HTTP servers on 127.0.0.1 (the replay server and fault servers)."""

from __future__ import annotations

import asyncio
import gzip
import itertools
from collections.abc import Awaitable, Callable, Mapping

import pytest

from livegain.feeds import PgnHttpFeedConfig, make_feed
from livegain.feeds._http import HttpError, http_get
from livegain.feeds.backoff import BACKOFF, Backoff
from livegain.feeds.http_pgn import PgnHttpFeed
from livegain.relay.http import MiniHttpServer, Reply
from livegain.relay.replay import Replay

from .conftest import RecordingSink, cancel, run_feed

pytestmark = pytest.mark.timeout(60)

ROUND = (
    '[Event "T"]\n[Round "1.1"]\n[White "A"]\n[Black "B"]\n[GameId "g1"]\n\n'
    "1. e4 {[%clk 0:10:00]} e5 {[%clk 0:10:00]} 2. Nf3 {[%clk 0:09:50]} Nc6 *\n\n"
    '[Event "T"]\n[Round "1.2"]\n[White "C"]\n[Black "D"]\n[GameId "g2"]\n\n'
    "1. d4 d5 2. c4 *\n"
)


def feed_for(url: str | list[str], **kw: float) -> PgnHttpFeed:
    cfg = PgnHttpFeedConfig(url=url, interval=kw.pop("interval", 0.05), **kw)
    return PgnHttpFeed(cfg, backoff=(0.05, 0.1, 0.2))


async def test_replay_round_followed_move_by_move_with_etag(sink: RecordingSink) -> None:
    replay = Replay.from_pgn(ROUND, mode="pgn-http")
    await replay.start(autoplay=False)
    feed = make_feed(PgnHttpFeedConfig(url=replay.pgn_url, interval=0.05))
    assert isinstance(feed, PgnHttpFeed)
    task = await run_feed(feed, sink)
    try:
        await sink.wait_for(lambda: len(sink.latest()) == 2)
        assert all(s.moves == () for s in sink.latest().values())
        for _ in range(replay.total_plies):
            await replay.advance(1)
        await sink.wait_for(lambda: sink.latest()["g1"].moves == ("e4", "e5", "Nf3", "Nc6"))
        await sink.wait_for(
            lambda: (
                sink.latest()["g2"].result == "*"
                and sink.latest()["g2"].moves == ("d4", "d5", "c4")
            )
        )
        assert sink.latest()["g1"].clocks == (600, 600, 590, None)
        # nothing changes now: the next polls are answered 304 and emit nothing
        emitted = len(sink.snapshots)
        before = feed.not_modified
        await asyncio.sleep(0.4)
        assert feed.not_modified >= before + 2
        assert len(sink.snapshots) == emitted
        # every emitted snapshot for g1 extends the previous one (no spurious takebacks)
        g1 = [s.moves for s in sink.snapshots if s.game_id == "g1"]
        assert all(b[: len(a)] == a for a, b in itertools.pairwise(g1))
        assert sink.errors == []
    finally:
        await cancel(task)
        await replay.stop()


async def test_one_url_per_board(sink: RecordingSink) -> None:
    replay = Replay.from_pgn(ROUND, mode="pgn-http")
    await replay.start(autoplay=False)
    await replay.advance_all()
    feed = feed_for(replay.board_urls())
    task = await run_feed(feed, sink)
    try:
        await sink.wait_for(lambda: len(sink.latest()) == 2)
        assert sink.latest()["g1"].moves == ("e4", "e5", "Nf3", "Nc6")
        assert sink.latest()["g2"].moves == ("d4", "d5", "c4")
        assert len(sink.snapshots) == 2 and sink.errors == []
    finally:
        await cancel(task)
        await replay.stop()


async def test_last_modified_only_server_gets_if_modified_since(sink: RecordingSink) -> None:
    seen: list[Mapping[str, str]] = []
    stamp = "Sat, 21 Nov 2026 10:00:00 GMT"

    def handler(path: str, headers: Mapping[str, str]) -> Reply:
        seen.append(dict(headers))
        if headers.get("if-modified-since") == stamp:
            return Reply(304)
        return Reply(200, ROUND.encode(), headers={"Last-Modified": stamp})

    async with MiniHttpServer(handler) as srv:
        feed = feed_for(srv.base_url + "/r.pgn")
        task = await run_feed(feed, sink)
        try:
            await sink.wait_for(lambda: len(seen) >= 4)
        finally:
            await cancel(task)
    assert "if-modified-since" not in seen[0]
    assert all(h.get("if-modified-since") == stamp for h in seen[1:])
    assert feed.not_modified >= 3
    assert len(sink.snapshots) == 2


async def test_errors_back_off_and_reset_on_success(sink: RecordingSink) -> None:
    status = {"code": 500}
    times: list[float] = []

    def handler(path: str, headers: Mapping[str, str]) -> Reply:
        times.append(asyncio.get_running_loop().time())
        if status["code"] != 200:
            return Reply(status["code"], b"oops")
        return Reply(200, ROUND.encode())

    async with MiniHttpServer(handler) as srv:
        feed = feed_for(srv.base_url + "/r.pgn", interval=0.01)
        task = await run_feed(feed, sink)
        try:
            await sink.wait_for(lambda: len(sink.errors) >= 4)
            status["code"] = 200
            await sink.wait_for(lambda: len(sink.snapshots) == 2)
            status["code"] = 503
            await sink.wait_for(lambda: len(sink.errors) >= 5)
        finally:
            await cancel(task)
    messages = [e[2] for e in sink.errors]
    assert messages[0] == "HTTP 500 Internal Server Error; retrying in 0.05 s"
    assert [m.rsplit("retrying in ", 1)[1] for m in messages[:5]] == [
        "0.05 s",
        "0.1 s",
        "0.2 s",
        "0.2 s",
        "0.05 s",  # the 5th: a new streak after success
    ]
    assert "HTTP 503" in messages[4]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert gaps[1] >= 0.09 and gaps[2] >= 0.19  # waited the back-off, not the interval
    assert all(e[0] == "pgn-http" and e[1].endswith("/r.pgn") for e in sink.errors)


def test_default_backoff_is_2_10_60() -> None:
    b = Backoff()
    assert BACKOFF == (2.0, 10.0, 60.0)
    assert [b.fail() for _ in range(4)] == [2.0, 10.0, 60.0, 60.0]
    b.succeed()
    assert b.fail() == 2.0


async def _raw_server(
    handle: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]],
) -> tuple[asyncio.Server, str]:
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"http://127.0.0.1:{port}"


async def test_404_on_one_board_and_a_hung_server_do_not_stop_the_others(
    sink: RecordingSink,
) -> None:
    async def hang(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readline()
        await asyncio.sleep(30)

    hung, hung_url = await _raw_server(hang)
    replay = Replay.from_pgn(ROUND)
    await replay.start(autoplay=False)
    await replay.advance_all()
    urls = [replay.board_urls()[0], replay.base_url + "/game-99.pgn", hung_url + "/x.pgn"]
    feed = PgnHttpFeed(
        PgnHttpFeedConfig(url=urls, interval=0.05, timeout=0.3), backoff=(0.05, 0.1, 0.2)
    )
    task = await run_feed(feed, sink)
    try:
        await sink.wait_for(lambda: any("timed out" in e[2] for e in sink.errors))
        await sink.wait_for(lambda: "g1" in sink.latest())
        assert any(e[1].endswith("/game-99.pgn") and "HTTP 404" in e[2] for e in sink.errors)
        assert sink.latest()["g1"].moves == ("e4", "e5", "Nf3", "Nc6")
    finally:
        await cancel(task)
        await replay.stop()
        hung.close()


async def test_cut_body_chunked_gzip_and_truncated_last_game(sink: RecordingSink) -> None:
    mode = {"kind": "cut"}
    full = ROUND.encode()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (await reader.readline()).strip():
            pass
        kind = mode["kind"]
        if kind == "cut":  # Content-Length promises more than arrives
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (len(full) + 50))
            writer.write(full[:40])
        elif kind == "chunked-gzip":
            body = gzip.compress(full)
            writer.write(
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n"
            )
            for i in range(0, len(body), 17):
                part = body[i : i + 17]
                writer.write(b"%x\r\n%s\r\n" % (len(part), part))
            writer.write(b"0\r\n\r\n")
        else:  # the server's copy is being rewritten: the last game is cut mid-move
            body = full[: full.rindex(b"c4") + 1]
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        writer.close()

    server, base = await _raw_server(handle)
    feed = feed_for(base + "/r.pgn")
    try:
        await feed.poll_once(sink)
        assert "connection closed after 40 of" in sink.errors[-1][2]
        assert sink.snapshots == []
        mode["kind"] = "chunked-gzip"
        feed.urls[0].next_at = 0
        await feed.poll_once(sink)
        assert sink.latest()["g2"].moves == ("d4", "d5", "c4")
        n = len(sink.snapshots)
        mode["kind"] = "truncated"
        await feed.poll_once(sink)
        # "2. c" is a cut, not a takeback of c4: nothing new is emitted for g2
        assert len(sink.snapshots) == n
        assert "cut mid-move" in sink.errors[-1][2]
        assert "C - D" in sink.errors[-1][1]
    finally:
        server.close()


async def test_boards_reordered_and_garbage_between_games(sink: RecordingSink) -> None:
    first, second = ROUND.split("\n\n[Event")
    reordered = "[Event" + second + "\n\n" + first + "\n"
    bodies = [ROUND, reordered, "@@@ not pgn at all {{{ \x00"]
    state = {"i": 0}

    def handler(path: str, headers: Mapping[str, str]) -> Reply:
        return Reply(200, bodies[state["i"]].encode())

    async with MiniHttpServer(handler) as srv:
        feed = feed_for(srv.base_url + "/r.pgn")
        await feed.poll_once(sink)
        assert len(sink.snapshots) == 2
        state["i"] = 1  # same games, other order: nothing changed
        await feed.poll_once(sink)
        assert len(sink.snapshots) == 2
        state["i"] = 2  # garbage: reported, nothing emitted, no exception
        await feed.poll_once(sink)
        assert len(sink.snapshots) == 2
        assert any("not a PGN game" in e[2] for e in sink.errors)


async def test_http_get_errors_are_http_errors() -> None:
    with pytest.raises(HttpError, match="unsupported URL"):
        await http_get("ftp://127.0.0.1/x")
    server, base = await _raw_server(_garbage_status)
    try:
        with pytest.raises(HttpError, match="malformed response"):
            await http_get(base + "/")
    finally:
        server.close()


async def _garbage_status(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await reader.readline()
    writer.write(b"SPDY/9 lol\r\n\r\n")
    await writer.drain()
    writer.close()


async def test_gzip_bomb_is_an_error_not_a_memory_blow_up() -> None:
    """A small gzip body that inflates past max_body is refused; a normal one reads."""
    bomb = gzip.compress(b"\0" * (8 * 1024 * 1024))  # ~8 KiB on the wire
    fine = gzip.compress(ROUND.encode())

    def handler(path: str, headers: Mapping[str, str]) -> Reply:
        body = bomb if path == "/bomb" else fine
        return Reply(200, body, headers={"Content-Encoding": "gzip"})

    async with MiniHttpServer(handler) as srv:
        with pytest.raises(HttpError, match="inflates past 1048576 bytes"):
            await http_get(srv.base_url + "/bomb", max_body=1024 * 1024)
        resp = await http_get(srv.base_url + "/r.pgn", max_body=1024 * 1024)
        assert resp.body == ROUND.encode()


async def test_redirects_are_followed_by_plain_and_streamed_gets() -> None:
    from livegain.feeds._http import http_stream

    def handler(path: str, _headers: Mapping[str, str]) -> Reply:
        if path.startswith("/hop/"):
            n = int(path.rsplit("/", 1)[1])
            target = "/final" if n == 0 else f"/hop/{n - 1}"
            return Reply(302, b"moved\n", headers={"Location": target})
        if path == "/loop":
            return Reply(301, headers={"Location": "/loop"})
        return Reply(200, ROUND.encode())

    async with MiniHttpServer(handler) as srv:
        resp = await http_get(f"{srv.base_url}/hop/2")
        assert resp.status == 200 and resp.body == ROUND.encode()
        assert resp.url == f"{srv.base_url}/final"
        with pytest.raises(HttpError, match="too many redirects"):
            await http_get(f"{srv.base_url}/loop", max_redirects=3)
        got = b""
        async for status, chunk in http_stream(f"{srv.base_url}/hop/1"):
            assert status == 200
            got += chunk
        assert got == ROUND.encode()
        with pytest.raises(HttpError, match="too many redirects"):
            async for _ in http_stream(f"{srv.base_url}/loop", max_redirects=2):
                pass


async def test_a_running_feed_polls_over_one_connection(sink: RecordingSink) -> None:
    """The feed keeps its HTTP session while it runs: its polls reuse one
    connection (a new connection per poll costs three times the CPU,
    docs/feeds.md)."""

    def handler(path: str, headers: Mapping[str, str]) -> Reply:
        return Reply(200, ROUND.encode(), headers={"ETag": '"r1"'})

    async with MiniHttpServer(handler) as srv:
        feed = feed_for(srv.base_url + "/r.pgn")
        task = await run_feed(feed, sink)
        try:
            await sink.wait_for(lambda: srv.requests >= 4)
        finally:
            await cancel(task)
        assert srv.connections == 1
        assert feed._session is None  # closed with the run
