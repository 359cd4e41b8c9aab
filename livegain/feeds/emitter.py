"""A feed's parsed games handed on to its sink, once per change (:class:`Emitter`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Hashable, Iterable

from livegain.core.snapshot import GameSnapshot
from livegain.feeds.base import FeedSink
from livegain.feeds.pgn import ParsedGame, snapshot_key

# Handing games on: a turn of the event loop after each game sent (or every
# YIELD_EVERY games looked at), and after each SLICE seconds of work a pause
# as long as the work took: a file of a thousand games holds at most half of
# the event loop's time while it is read (bench/ingest_load.py).
YIELD_EVERY = 100
SLICE = 0.005


class Emitter:
    """Hands parsed games to a sink, once per change.

    A game is keyed by GameId, else round + board + players (never by its
    position in the file alone); an unchanged game is not sent again. A game
    whose text was cut mid-move (a partial fetch or a file being written) is
    not sent when it has fewer moves than what was already sent for it: a cut
    is not a takeback; the next poll brings the whole game.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.last: dict[Hashable, GameSnapshot] = {}
        self.emitted = 0
        self.errors = 0

    def offer(
        self,
        games: Iterable[ParsedGame],
        sink: FeedSink,
        fallback: Hashable,
        where_prefix: str = "",
        report_truncated: bool = True,
    ) -> None:
        for g in games:
            self._offer_one(g, sink, fallback, where_prefix, report_truncated)

    async def offer_async(
        self,
        games: Iterable[ParsedGame],
        sink: FeedSink,
        fallback: Hashable,
        where_prefix: str = "",
        report_truncated: bool = True,
    ) -> None:
        """:meth:`offer`, letting the event loop run between games: a file of
        a thousand games is folded in a thousand short steps, not one long
        one, with pauses as long as the steps (see :data:`SLICE`)."""
        clock = time.perf_counter
        start = clock()
        for n, g in enumerate(games, start=1):
            sent = self._offer_one(g, sink, fallback, where_prefix, report_truncated)
            spent = clock() - start
            if spent >= SLICE:
                # A slice used: the loop gets as long to serve everyone else.
                await asyncio.sleep(spent)
                start = clock()
            elif sent or n % YIELD_EVERY == 0:
                await asyncio.sleep(0)

    def _offer_one(
        self,
        g: ParsedGame,
        sink: FeedSink,
        fallback: Hashable,
        where_prefix: str,
        report_truncated: bool,
    ) -> bool:
        """Report ``g``'s issues and hand it on if it changed; True when it was sent."""
        for issue in g.issues:
            if issue.truncated and not report_truncated:
                continue
            self.error(sink, f"{where_prefix}{issue.where}", issue.message)
        if g.snapshot is not None:
            return self.offer_snapshot(g.snapshot, sink, fallback, truncated=g.truncated)
        return False

    def offer_snapshot(
        self, snap: GameSnapshot, sink: FeedSink, fallback: Hashable, truncated: bool = False
    ) -> bool:
        key = snapshot_key(snap, fallback)
        old = self.last.get(key)
        if old == snap:
            return False
        if (
            truncated
            and old is not None
            and len(snap.moves) < len(old.moves)
            and old.moves[: len(snap.moves)] == snap.moves
        ):
            return False
        self.last[key] = snap
        self.emitted += 1
        sink.snapshot(snap)
        return True

    def error(self, sink: FeedSink, where: str, message: str) -> None:
        self.errors += 1
        sink.error(self.source, where, message)
