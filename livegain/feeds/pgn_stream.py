"""PGN over a streamed HTTP response: a broadcast round's live stream.

The Lichess broadcast API (docs/feeds.md) streams a round as
``GET /api/stream/broadcast/round/{id}.pgn``: every game once, then a game's
whole PGN again each time it changes, on one endless response. This feed
keeps that response open and emits each game as soon as its text is
complete: its tag pairs, a blank line, its movetext and the blank line after
it (so a game is never parsed from half a chunk, and never waits for the
next game to arrive).

When the response ends or fails (network error, HTTP error status, or no
data for ``idle_timeout`` seconds when set) the feed reconnects, backing off
2 s -> 10 s -> 60 s, reset once a response is open again; every failure is
reported to the sink. The stream opens through its host's etiquette
(:mod:`livegain.feeds.hosts`): on Lichess it waits for any other request in
flight, and after a 429 or 503 it is not opened again before the time the
host gave in ``Retry-After`` (a minute after a 429 without one). After a
reconnect the server sends every game again: unchanged games are not emitted
twice. Text that is not a game (no tag pairs) is reported and skipped.

Limits: a game whose text runs past ``max_bytes`` is dropped with an error;
a game longer than ``max_plies`` is refused. Games are parsed in a thread,
and handed on with a turn of the event loop between them.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import re

from livegain.feeds._http import HttpError, http_stream
from livegain.feeds.backoff import BACKOFF, Backoff
from livegain.feeds.base import FeedSink, PgnStreamFeedConfig, source_sink
from livegain.feeds.emitter import Emitter
from livegain.feeds.hosts import host_of
from livegain.feeds.pgn import MAX_PLIES, ParsedGame, parse_game

_BLANK = re.compile(r"\n[ \t]*\n")


def complete_games(buffer: str) -> tuple[list[str], str, list[str]]:
    """Cut the complete games off the front of ``buffer`` (``\\n`` line ends).

    Returns (games' texts, the incomplete rest, texts skipped as not games).
    A game is complete once the blank line after its movetext has arrived.
    """
    games: list[str] = []
    skipped: list[str] = []
    pos = 0
    while True:
        start = len(buffer) - len(buffer[pos:].lstrip())
        if start >= len(buffer):
            return games, "", skipped
        if buffer[start] != "[":
            # Not a tag pair: skip to the next line that starts one.
            nxt = buffer.find("\n[", start)
            if nxt < 0:
                return games, buffer[start:], skipped
            skipped.append(buffer[start:nxt])
            pos = nxt + 1
            continue
        tags_end = _BLANK.search(buffer, start)
        if tags_end is None:
            return games, buffer[start:], skipped
        moves_end = _BLANK.search(buffer, tags_end.end())
        if moves_end is None:
            return games, buffer[start:], skipped
        games.append(buffer[start : moves_end.start() + 1])
        pos = moves_end.end()


class PgnStreamFeed:
    """Follows one streamed PGN URL and emits a snapshot for each game that changed."""

    def __init__(
        self,
        cfg: PgnStreamFeedConfig,
        *,
        backoff: tuple[float, ...] = BACKOFF,
        max_plies: int = MAX_PLIES,
    ) -> None:
        self.cfg = cfg
        self.max_plies = max_plies
        self.name = cfg.name or "pgn-stream"
        self.emitter = Emitter(self.name)
        self.backoff = Backoff(backoff)
        self.connects = 0
        self.games_read = 0

    async def run(self, sink: FeedSink) -> None:
        sink = source_sink(sink, self.cfg)
        while True:
            try:
                await self._follow(sink)
                message = "the server ended the stream"
            except HttpError as exc:
                message = f"stream failed: {exc}"
            except Exception as exc:  # a bug must not end the feed: report it, back off
                message = f"internal error: {type(exc).__name__}: {exc}"
            delay = self.backoff.fail()
            self.emitter.error(sink, self.cfg.url, f"{message}; reconnecting in {delay:g} s")
            await asyncio.sleep(delay)

    async def _follow(self, sink: FeedSink) -> None:
        pending = ""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        host = host_of(self.cfg.url)
        stream = http_stream(
            self.cfg.url,
            timeout=self.cfg.timeout,
            idle_timeout=self.cfg.idle_timeout,
            max_chunk=self.cfg.max_bytes,
            on_open=host.answered,
        )
        async with contextlib.aclosing(stream):
            async with host.slot():  # held while the stream opens, not while it is read
                status, _ = await anext(stream)
            if status != 200:
                raise HttpError(f"HTTP {status}")
            self.connects += 1
            self.backoff.succeed()
            async for _status, chunk in stream:
                pending = await self._take(sink, decoder, pending, chunk)

    async def _take(
        self, sink: FeedSink, decoder: codecs.IncrementalDecoder, pending: str, chunk: bytes
    ) -> str:
        """Hand on the games a chunk completes; the text still incomplete."""
        pending += decoder.decode(chunk).replace("\r\n", "\n")
        games, pending, skipped = complete_games(pending)
        for text in skipped:
            self.emitter.error(
                sink, self.cfg.url, f"not a PGN game, skipped: {text.strip()[:60]!r}"
            )
        limit = self.cfg.max_bytes
        kept: list[tuple[str, int]] = []
        for text in games:
            self.games_read += 1
            if len(text) > limit:
                self.emitter.error(sink, self.cfg.url, _too_long(self.games_read, limit))
            else:
                kept.append((text, self.games_read - 1))
        if kept:
            parsed = await asyncio.to_thread(self._parse, kept)
            await self.emitter.offer_async(parsed, sink, fallback=self.cfg.url)
        if len(pending) > limit:
            self.emitter.error(sink, self.cfg.url, _too_long(self.games_read + 1, limit))
            pending = ""
        return pending

    def _parse(self, texts: list[tuple[str, int]]) -> list[ParsedGame]:
        """Parse complete games' texts (runs in a thread)."""
        return [parse_game(text, self.name, index, self.max_plies) for text, index in texts]


def _too_long(number: int, limit: int) -> str:
    return f"game {number}: its text runs past {limit} bytes (max_bytes); dropped"
