"""The etiquette towards source hosts (livegain.feeds.hosts): one request at a
time on Lichess, Retry-After obeyed after a 429 or 503 (with a fake clock),
requests counted; and against a real HTTP server answering 429."""

from __future__ import annotations

import asyncio
from email.utils import formatdate
from typing import Any

import pytest

from livegain.feeds.hosts import WAIT_429, WAIT_503, Host, host_of, retry_after, wait_after
from livegain.feeds.resolve import HttpLookup, LookupFailed
from livegain.relay.http import MiniHttpServer, Reply


def test_retry_after_reads_seconds_and_http_dates() -> None:
    now = 1_700_000_000.0
    assert retry_after("60", now) == 60.0
    assert retry_after(" 5 ", now) == 5.0
    assert retry_after(formatdate(now + 90, usegmt=True), now) == pytest.approx(90.0)
    assert retry_after(formatdate(now - 90, usegmt=True), now) == 0.0  # already past
    assert retry_after("999999999", now) == 3600.0  # at most an hour
    for bad in (None, "", "soon", "-5", "1e9", "Tue, 99 Foo 2024"):
        assert retry_after(bad, now) is None
    assert wait_after(429, {}, now) == WAIT_429 == 60.0  # a full minute, as Lichess asks
    assert wait_after(503, {}, now) == WAIT_503
    assert wait_after(429, {"retry-after": "7"}, now) == 7.0
    assert wait_after(200, {"retry-after": "7"}, now) is None


class FakeClock:
    """Monotonic time that moves only when something sleeps."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


async def test_after_a_429_with_retry_after_60_nothing_is_sent_for_60_seconds() -> None:
    clock = FakeClock()
    host = Host("lichess.org", clock=clock, sleep=clock.sleep, wall=lambda: 1_700_000_000.0)
    async with host.slot():
        pass
    assert host.answered(429, {"retry-after": "60"}) == 60.0
    sent_at: list[float] = []
    async with host.slot():
        sent_at.append(clock.now)
    assert sent_at == [1060.0]  # not one second earlier
    assert host.stats.throttled == 1 and host.stats.requests == 2
    # Without Retry-After: a full minute after a 429.
    host.answered(429, {})
    async with host.slot():
        sent_at.append(clock.now)
    assert sent_at[1] - sent_at[0] == 60.0


async def test_a_serial_host_never_has_two_requests_in_flight() -> None:
    host = Host("lichess.org")
    assert host.serial and not Host("1.pool.livechesscloud.com").serial
    most = 0

    async def request() -> None:
        nonlocal most
        async with host.slot():
            most = max(most, host.in_flight)
            await asyncio.sleep(0.005)

    await asyncio.gather(*(request() for _ in range(20)))
    assert most == 1 and host.stats.requests == 20
    assert host.per_minute() == 20
    other = Host("1.pool.livechesscloud.com")

    async def parallel() -> None:
        nonlocal most
        async with other.slot():
            most = max(most, other.in_flight)
            await asyncio.sleep(0.005)

    await asyncio.gather(*(parallel() for _ in range(5)))
    assert most == 5  # LiveChess Cloud's pool: no such rule


async def test_a_lookup_answered_429_says_how_long_the_host_asks_to_wait() -> None:
    asked: list[str] = []

    def handle(path: str, headers: object) -> Reply:
        asked.append(path)
        return Reply(429, b'{"error":"rate limited"}', "application/json", {"Retry-After": "2"})

    async with MiniHttpServer(handle) as server:
        url = f"{server.base_url}/api/broadcast/AbCd1234"
        with pytest.raises(LookupFailed, match=r"HTTP 429.*the host asks to wait 2 s") as err:
            await HttpLookup().json(url)
        assert err.value.status == 429
        loop = asyncio.get_running_loop()
        start = loop.time()
        with pytest.raises(LookupFailed):
            await HttpLookup().json(url)
        assert loop.time() - start >= 1.9  # the second request waited for Retry-After
        assert host_of(url).stats.throttled == 2
    assert len(asked) == 2


async def test_a_document_nested_100000_deep_is_one_error_not_a_traceback() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000

    def handle(path: str, headers: object) -> Reply:
        return Reply(200, deep, "application/json")

    async with MiniHttpServer(handle) as server:
        with pytest.raises(LookupFailed, match="nested deeper than 32 levels"):
            await HttpLookup().json(f"{server.base_url}/api/broadcast/AbCd1234")


async def test_a_stream_answered_429_is_not_opened_again_before_retry_after() -> None:
    from livegain.feeds.base import PgnStreamFeedConfig
    from livegain.feeds.pgn_stream import PgnStreamFeed

    opened: list[float] = []
    loop = asyncio.get_running_loop()
    game = b'[Event "E"]\n[White "A"]\n[Black "B"]\n[Result "*"]\n\n1. e4 *\n\n'

    def handle(path: str, headers: object) -> Reply:
        opened.append(loop.time())
        if len(opened) == 1:
            return Reply(429, b"slow down", headers={"Retry-After": "2"})

        async def body() -> Any:
            yield game
            await asyncio.sleep(30)

        return Reply(200, content_type="application/x-chess-pgn", stream=body)

    class Sink:
        def __init__(self) -> None:
            self.got = asyncio.Event()
            self.errors: list[str] = []

        def snapshot(self, snap: object) -> None:
            self.got.set()

        def error(self, source: str, where: str, message: str) -> None:
            self.errors.append(message)

    async with MiniHttpServer(handle) as server:
        feed = PgnStreamFeed(
            PgnStreamFeedConfig(url=f"{server.base_url}/api/stream/broadcast/round/AbCd1234.pgn"),
            backoff=(0.05, 0.05, 0.05),  # its own back-off is short: Retry-After is longer
        )
        sink = Sink()
        task = asyncio.create_task(feed.run(sink))
        try:
            async with asyncio.timeout(20):
                await sink.got.wait()
        finally:
            task.cancel()
    assert opened[1] - opened[0] >= 1.9
    assert "HTTP 429" in sink.errors[0]
