"""PGN over HTTP, polled: one multi-game file per round, or one file per board.

Each URL is polled every ``interval`` seconds with ``If-None-Match`` /
``If-Modified-Since`` from its last answer (a 304 costs nothing); a body equal
to the last one is not parsed again. On a network error or an HTTP error
status the URL backs off 2 s -> 10 s -> 60 s (never faster than the
interval), reset by the next success; every failure is reported to the sink.
URLs back off independently: one board's 404 does not slow the others.

Limits: a body larger than ``max_bytes`` (after gzip) is a failed fetch;
past ``max_games`` games in one body the rest are refused; a game longer
than ``max_plies`` is refused. Hashing and parsing a body run in a thread,
and games are handed on with a turn of the event loop between them.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

import aiohttp

from livegain.feeds._http import HttpError, http_get, http_session
from livegain.feeds.backoff import BACKOFF, Backoff
from livegain.feeds.base import FeedSink, PgnHttpFeedConfig, source_sink
from livegain.feeds.emitter import Emitter
from livegain.feeds.pgn import MAX_PLIES, ParsedGame, parse_pgn

MAX_CONCURRENT = 8


@dataclass
class _UrlState:
    url: str
    etag: str | None = None
    last_modified: str | None = None
    digest: bytes | None = None
    next_at: float = 0.0
    backoff: Backoff = field(default_factory=Backoff)
    polls: int = 0
    not_modified: int = 0
    cache: dict[tuple[int, str], ParsedGame] = field(default_factory=dict)


class PgnHttpFeed:
    """Polls one or more PGN URLs and emits a snapshot for each game that changed."""

    def __init__(
        self,
        cfg: PgnHttpFeedConfig,
        *,
        backoff: tuple[float, ...] = BACKOFF,
        max_plies: int = MAX_PLIES,
    ) -> None:
        self.cfg = cfg
        self.max_plies = max_plies
        self.name = cfg.name or "pgn-http"
        urls = [cfg.url] if isinstance(cfg.url, str) else list(cfg.url)
        self.urls = [_UrlState(u, backoff=Backoff(backoff)) for u in urls]
        self.emitter = Emitter(self.name)
        self._sem = asyncio.Semaphore(MAX_CONCURRENT)
        # The run's HTTP session: connections kept between polls (None: a
        # session per request, for a poll_once outside run)
        self._session: aiohttp.ClientSession | None = None

    @property
    def polls(self) -> int:
        return sum(u.polls for u in self.urls)

    @property
    def not_modified(self) -> int:
        return sum(u.not_modified for u in self.urls)

    async def run(self, sink: FeedSink) -> None:
        sink = source_sink(sink, self.cfg)
        loop = asyncio.get_running_loop()
        async with http_session() as self._session:
            try:
                while True:
                    now = loop.time()
                    due = [u for u in self.urls if u.next_at <= now]
                    if due:
                        await asyncio.gather(*(self._poll(u, sink) for u in due))
                    wait = min(u.next_at for u in self.urls) - loop.time()
                    await asyncio.sleep(max(wait, 0.005))
            finally:
                self._session = None

    async def poll_once(self, sink: FeedSink) -> None:
        """Poll every URL now, whatever its schedule (tests, manual refresh)."""
        await asyncio.gather(*(self._poll(u, sink) for u in self.urls))

    async def _poll(self, st: _UrlState, sink: FeedSink) -> None:
        try:
            await self._poll_url(st, sink)
        except Exception as exc:  # a bug must not end the feed: report it, back off
            self._failed(st, sink, f"internal error: {type(exc).__name__}: {exc}")

    async def _poll_url(self, st: _UrlState, sink: FeedSink) -> None:
        loop = asyncio.get_running_loop()
        headers: dict[str, str] = {}
        if st.etag:
            headers["If-None-Match"] = st.etag
        if st.last_modified:
            headers["If-Modified-Since"] = st.last_modified
        st.polls += 1
        try:
            async with self._sem:
                resp = await http_get(
                    st.url,
                    headers=headers,
                    timeout=self.cfg.timeout,
                    max_body=self.cfg.max_bytes,
                    session=self._session,
                )
        except HttpError as exc:
            self._failed(st, sink, f"fetch failed: {exc}")
            return
        if resp.status == 304:
            st.not_modified += 1
            self._succeeded(st, loop.time())
            return
        if resp.status != 200:
            self._failed(st, sink, f"HTTP {resp.status} {resp.reason}".strip())
            return
        self._succeeded(st, loop.time())
        st.etag = resp.headers.get("etag")
        st.last_modified = resp.headers.get("last-modified")
        games = await asyncio.to_thread(self._parse, st, resp.body, resp.text)
        if games is None:
            return
        prefix = f"{st.url} " if len(self.urls) > 1 else ""
        await self.emitter.offer_async(games, sink, fallback=st.url, where_prefix=prefix)

    def _parse(
        self, st: _UrlState, body: bytes, text: Callable[[], str]
    ) -> list[ParsedGame] | None:
        """The body's games, or None when it is the same as last time (runs in a thread)."""
        digest = hashlib.sha256(body).digest()
        if digest == st.digest:
            return None
        st.digest = digest
        return parse_pgn(
            text(), self.name, st.cache, max_plies=self.max_plies, max_games=self.cfg.max_games
        )

    def _succeeded(self, st: _UrlState, now: float) -> None:
        st.backoff.succeed()
        st.next_at = now + self.cfg.interval

    def _failed(self, st: _UrlState, sink: FeedSink, message: str) -> None:
        delay = max(st.backoff.fail(), self.cfg.interval)
        st.next_at = asyncio.get_running_loop().time() + delay
        self.emitter.error(sink, st.url, f"{message}; retrying in {delay:g} s")
