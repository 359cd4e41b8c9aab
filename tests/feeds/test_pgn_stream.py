"""A streamed PGN round (the Lichess broadcast stream format) from a server on 127.0.0.1.

Lichess itself cannot be reached from the test machine: the server here is a
scripted stand-in speaking the same format, an endless chunked response that
sends every game once, then a game's whole PGN again each time it changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator

import pytest

from livegain.feeds import PgnStreamFeedConfig, make_feed
from livegain.feeds.pgn_stream import PgnStreamFeed, complete_games

from .conftest import RecordingSink, cancel, run_feed

pytestmark = pytest.mark.timeout(60)


def game(gid: str, board: int, white: str, black: str, moves: str) -> str:
    return (
        f'[Event "Stream Open"]\r\n[Round "3"]\r\n[Board "{board}"]\r\n'
        f'[White "{white}"]\r\n[Black "{black}"]\r\n[GameId "{gid}"]\r\n\r\n'
        f"{moves}\r\n\r\n\r\n"
    )


G1 = game("s1", 1, "Ames, A", "Bloom, B", "1. e4 { [%clk 1:30:00] } 1... e5 { [%clk 1:30:00] } *")
G2 = game("s2", 2, "Cole, C", "Dunn, D", "1. d4 d5 *")
G1_MORE = game("s1", 1, "Ames, A", "Bloom, B", "1. e4 e5 2. Nf3 { [%clk 1:29:30] } *")


class StreamServer:
    """Serves ``GET /round.pgn`` as an endless chunked response fed by :meth:`push`."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.connections = 0
        self._queues: list[asyncio.Queue[bytes | None]] = []
        self._server: asyncio.Server | None = None
        self.greeting: list[bytes] = []
        """Sent first on every connection (what the server "knows" so far)."""

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)

    @property
    def url(self) -> str:
        assert self._server is not None
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/round.pgn"

    def push(self, data: bytes) -> None:
        for q in self._queues:
            q.put_nowait(data)

    def drop_all(self) -> None:
        """End every open response (the server restarts the stream)."""
        for q in self._queues:
            q.put_nowait(None)

    async def close(self) -> None:
        self.drop_all()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        q: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._queues.append(q)
        try:
            while (await reader.readline()).strip():
                pass
            if self.status != 200:
                writer.write(f"HTTP/1.1 {self.status} Nope\r\nContent-Length: 0\r\n\r\n".encode())
                await writer.drain()
                return
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/x-chess-pgn\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n"
            )
            for data in self.greeting:
                writer.write(b"%x\r\n%s\r\n" % (len(data), data))
            await writer.drain()
            while (data := await q.get()) is not None:
                writer.write(b"%x\r\n%s\r\n" % (len(data), data))
                await writer.drain()
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self._queues.remove(q)
            writer.close()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await writer.wait_closed()


@contextlib.asynccontextmanager
async def streaming(status: int = 200) -> AsyncIterator[StreamServer]:
    server = StreamServer(status)
    await server.start()
    try:
        yield server
    finally:
        await server.close()


def feed_for(url: str) -> PgnStreamFeed:
    return PgnStreamFeed(PgnStreamFeedConfig(url=url), backoff=(0.05, 0.1, 0.2))


async def wait_connections(server: StreamServer, n: int) -> None:
    for _ in range(500):
        if server.connections >= n and server._queues:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{n} connections expected, {server.connections} seen")


async def test_games_arrive_as_soon_as_complete_and_updates_follow(sink: RecordingSink) -> None:
    async with streaming() as server:
        server.greeting = [(G1 + G2).encode()]
        feed = make_feed(PgnStreamFeedConfig(url=server.url))
        assert isinstance(feed, PgnStreamFeed)
        task = await run_feed(feed, sink)
        try:
            await sink.wait_for(lambda: len(sink.latest()) == 2)
            assert sink.latest()["s1"].moves == ("e4", "e5")
            assert sink.latest()["s1"].clocks == (5400, 5400)
            assert sink.latest()["s2"].moves == ("d4", "d5")
            # An update cut in the middle of a move: nothing until its end arrives,
            # and then at once (not when some other game comes).
            data = G1_MORE.encode()
            cut = data.index(b"Nf3") + 1
            server.push(data[:cut])
            await asyncio.sleep(0.2)
            assert sink.latest()["s1"].moves == ("e4", "e5")
            server.push(data[cut:])
            await sink.wait_for(lambda: sink.latest()["s1"].moves == ("e4", "e5", "Nf3"))
            assert sink.errors == []
        finally:
            await cancel(task)


async def test_reconnects_after_the_stream_ends_without_repeating_games(
    sink: RecordingSink,
) -> None:
    async with streaming() as server:
        server.greeting = [(G1 + G2).encode()]
        feed = feed_for(server.url)
        task = await run_feed(feed, sink)
        try:
            await sink.wait_for(lambda: len(sink.latest()) == 2)
            emitted = len(sink.snapshots)
            server.drop_all()  # the stream ends; reconnecting sends every game again
            await wait_connections(server, 2)
            await sink.wait_for(lambda: feed.connects >= 2)
            await asyncio.sleep(0.2)
            assert len(sink.snapshots) == emitted  # unchanged games are not emitted twice
            assert any("ended the stream" in e[2] for e in sink.errors)
            server.push(G1_MORE.encode())
            await sink.wait_for(lambda: sink.latest()["s1"].moves == ("e4", "e5", "Nf3"))
        finally:
            await cancel(task)


async def test_bad_text_and_illegal_moves_are_reported_others_carry_on(
    sink: RecordingSink,
) -> None:
    async with streaming() as server:
        bad = game("s3", 3, "Eve, E", "Fox, F", "1. e4 e5 2. Ke3 Nc6 3. Nf3 Nf6 4. d4 *")
        server.greeting = [b"garbage that is not PGN\r\n" + (G1 + bad + G2).encode()]
        task = await run_feed(feed_for(server.url), sink)
        try:
            await sink.wait_for(lambda: len(sink.latest()) == 3)
            assert sink.latest()["s3"].moves == ("e4", "e5")  # the legal prefix
            assert sink.latest()["s2"].moves == ("d4", "d5")
            text = sink.error_text()
            assert "not a PGN game" in text and "garbage" in text
            assert "Ke3" in text
        finally:
            await cancel(task)


async def test_http_errors_back_off_and_are_reported(sink: RecordingSink) -> None:
    async with streaming(status=404) as server:
        task = await run_feed(feed_for(server.url), sink)
        try:
            await sink.wait_for(lambda: len(sink.errors) >= 3)
            assert all("HTTP 404" in e[2] for e in sink.errors[:3])
            assert "reconnecting in 0.05 s" in sink.errors[0][2]
            assert "reconnecting in 0.1 s" in sink.errors[1][2]
        finally:
            await cancel(task)


def test_complete_games_waits_for_the_blank_line_after_the_moves() -> None:
    text = G1.replace("\r\n", "\n")
    done, rest, skipped = complete_games(text[:-3])  # the blank line has not arrived
    assert done == [] and rest.startswith("[Event") and skipped == []
    done, rest, skipped = complete_games(text + text[:40])
    assert len(done) == 1 and done[0].endswith("*\n") and rest == text[:40]
    done, rest, skipped = complete_games("junk\n" + text)
    assert len(done) == 1 and skipped == ["junk"]


async def test_follows_the_replay_stream_move_by_move(sink: RecordingSink) -> None:
    """The replay's own /stream.pgn (a real part of this project) as the source."""
    from livegain.relay.replay import Replay

    text = (G1 + G1_MORE.replace('"s1"', '"s9"').replace("Ames, A", "Eden, E")).replace(
        "\r\n", "\n"
    )
    replay = Replay.from_pgn(text, mode="pgn-http")
    await replay.start(autoplay=False)
    task = await run_feed(feed_for(replay.stream_url), sink)
    try:
        await sink.wait_for(lambda: len(sink.latest()) == 2)
        assert all(s.moves == () for s in sink.latest().values())
        for _ in range(replay.total_plies):
            await replay.advance(1)
            await asyncio.sleep(0.02)
        await sink.wait_for(lambda: sink.latest()["s9"].moves == ("e4", "e5", "Nf3"))
        await sink.wait_for(lambda: sink.latest()["s1"].moves == ("e4", "e5"))
        # Each game's snapshots only ever grow (the stream sends whole games;
        # an unchanged one is not emitted again).
        for gid in ("s1", "s9"):
            seen = [s.moves for s in sink.snapshots if s.game_id == gid]
            assert len(seen) == len(set(seen))
            assert all(a == b[: len(a)] for a, b in itertools.pairwise(seen))
        assert sink.errors == []
    finally:
        await cancel(task)
        await replay.stop()
