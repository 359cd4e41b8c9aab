"""The broadcast delay, wired (docs/service.md, "Broadcast delay"): a step of
the publication chain (:mod:`livegain.publish.publication`). What a delayed
board would publish goes into the :class:`~livegain.publish.delay_line.DelayLine`
(and the store) and on to the next step (the outputs) at its time, nothing
early, across restarts. A feed's ``delay`` (default: ``[broadcast] delay``)
applies to its boards; a board takes the longest of its feeds' and of its
event group's.

The step holds each publication as it was built (a board's state and
updates, a removal, any other message by its kind and key): it derives
nothing again from the game."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence

import structlog

from livegain.app.stats import ServiceStats
from livegain.app.store import Store
from livegain.app.store_writes import StoreWrites
from livegain.config import Settings
from livegain.core.board.board import BoardGame
from livegain.feeds.base import DelayedFeed, Feed
from livegain.publish import schema
from livegain.publish.delay_line import (
    DelayLine,
    Held,
    Item,
    Message,
    Released,
    Remove,
    decode_held,
    encode_held,
)
from livegain.publish.entry import BoardEntry
from livegain.publish.publication import Kind, Publication, Step

log = structlog.get_logger("livegain.delay")


class BroadcastDelay:
    """The service's delay line (``line``: None while every board is live),
    as the publication chain's step before ``then`` (the outputs)."""

    def __init__(
        self,
        settings: Settings,
        then: Step,
        writes: StoreWrites,
        stats: ServiceStats,
        observe: Callable[[float], None],
    ) -> None:
        self.settings = settings
        self.then = then
        """The next step: what is released (or not delayed) goes there."""
        self.writes = writes
        self.stats = stats
        self.observe = observe
        """Called with the seconds each release took to publish (a metric)."""
        self.line: DelayLine | None = None
        self._wake = asyncio.Event()
        self.feed_delays: dict[str, int] = {}
        self.group_delays: dict[str, int] = {}

    # ------------------------------------------------------------ the step

    def deliver(self, p: Publication, /) -> None:
        """Hold ``p`` until its time, or pass it on now: without a line, with
        no delay (a board the line knows stays in it, in order), or an
        operator's removal (what is held of the board goes with it)."""
        if self.line is None or not self._hold(self.line, p):
            self.then.deliver(p)

    def _hold(self, line: DelayLine, p: Publication) -> bool:
        """Hold ``p`` in ``line``: True; False: it goes on at once."""
        if p.kind is Kind.BOARD:
            return self._hold_board(line, p)
        if p.kind is Kind.REMOVAL:
            if p.at_once:
                if line.drop(p.key):
                    bid = p.key
                    self.writes.write(lambda store: store.forget_delayed(bid), board_id=bid)
                return False
            if not line.knows(p.key):
                return False
            self.hold(p.key, Remove(p.key), p.delay, p.at)
            return True
        if p.delay <= 0:
            return False
        message = Message(p.kind, p.key, p.message)
        self.hold(message.board_id, message, p.delay, p.at)
        return True

    def _hold_board(self, line: DelayLine, p: Publication) -> bool:
        """A board's change: each update that follows what the line holds of
        the board, else its whole state (carrying its delay)."""
        bid = p.key
        if p.delay == 0 and not line.knows(bid):
            return False
        whole = p.whole or line.expects(bid) is None
        if not whole:
            for u, data in zip(p.updates, p.encoded, strict=True):
                if u.seq != line.expects(bid):
                    whole = True  # the numbering does not follow what is held
                    break
                self.hold(bid, u, p.delay, p.at, encoded=data)
        if whole:
            state = p.entry.state.model_copy(update={"delay": p.delay})
            self.hold(bid, state, p.delay, p.at)
        return True

    # -------------------------------------------------------------- set-up

    def start(self, feeds: Sequence[Feed], store: Store | None, now: float | None = None) -> None:
        """Set up the broadcast delay (docs/service.md, "Broadcast delay").

        A feed's ``delay`` (default: ``[broadcast] delay``) applies to its
        boards; a board takes the longest of its feeds' and of its event
        group's. With any delay, or items still held in the store, delayed
        boards go out through a :class:`DelayLine` taken back from the store:
        what viewers saw before the restart is served again at once, what was
        held is released at its own time (nothing early; ``now``: the time
        now, by default)."""
        s = self.settings
        default = s.broadcast.delay
        delays: dict[str, int] = {}
        groups: dict[str, int] = {}
        for i, feed in enumerate(feeds):
            cfg = s.feeds[i] if i < len(s.feeds) else None
            if cfg is not None:
                own = cfg.delay
            else:  # a feed given to the service: its own delay, if it has one
                own = feed.delay if isinstance(feed, DelayedFeed) else None
            d = default if own is None else int(own)
            delays[feed.name] = max(d, delays.get(feed.name, 0))
            if cfg is not None and cfg.event_group is not None:
                groups[cfg.event_group] = max(d, groups.get(cfg.event_group, 0))
        self.feed_delays, self.group_delays = delays, groups
        released: list[tuple[str, int, str]] = []
        held: list[tuple[int, str, float, str, str]] = []
        if store is not None:
            released, held = store.load_delayed()
        if default == 0 and not any(delays.values()) and not held:
            if released and store is not None:
                store.clear_delayed()  # what a delay turned off since left behind
            return
        states: dict[str, schema.BoardState] = {}
        for bid, _, text in released:
            try:
                states[bid] = schema.BoardState.model_validate_json(text)
            except ValueError as exc:
                log.error("delay_bad_row", board_id=bid, error=str(exc))
        items: list[Held] = []
        for n, bid, due, kind, body in held:
            try:
                items.append(decode_held(n, bid, due, kind, body))
            except ValueError as exc:
                log.error("delay_bad_row", board_id=bid, n=n, error=str(exc))
        line = self.line = DelayLine()
        line.restore(states, items)
        # What fell due while the service was down goes out now; then what
        # viewers see of every board, before anyone can connect.
        now = time.time() if now is None else now
        for r in line.due(now):
            if isinstance(r.held.item, Message):
                self.then.deliver(self._released(r, now))
            self._checkpoint(r)
        for bid, state in line.released_states().items():
            self.then.deliver(Publication.board_change(bid, BoardEntry(state), whole=True, at=now))
        log.info(
            "broadcast_delay",
            default=default,
            feeds={k: v for k, v in delays.items() if v != default},
            restored_boards=len(states),
            held=len(line),
        )

    def board_delay(self, game: BoardGame) -> int:
        """The board's delay: the longest of its feeds' and its event group's."""
        default = self.settings.broadcast.delay
        feeds = self.feed_delays
        d = max(feeds.get(game.source, default), feeds.get(game.source_active, default))
        if game.group is not None:
            d = max(d, self.group_delays.get(game.group, 0))
        return d

    def hold(
        self, key: str, item: Item, delay: int, now: float, *, encoded: bytes | None = None
    ) -> Held:
        """Hold one item in the delay line (what was known at ``now``), and in
        the store (``encoded``: an update's bytes, as published)."""
        line = self.line
        assert line is not None
        before = line.next_due()
        held = line.hold(now, key, item, delay, encoded)
        kind, body = encode_held(held)
        self.writes.write(
            lambda store: store.save_held(held.n, key, held.due, kind, body), board_id=key
        )
        if before is None or held.due < before:
            self._wake.set()
        return held

    def max_delay(self) -> int:
        """The longest delay configured (what an event's standings, which show
        every board's result, are held for)."""
        return max([self.settings.broadcast.delay, *self.feed_delays.values()])

    def held_standings(self) -> list[tuple[str, bytes]]:
        """The ``standings`` messages the line holds, (event, message), each
        event's in order."""
        line = self.line
        if line is None:
            return []
        return [
            (h.item.key, h.item.data)
            for key in line.boards()
            for h in line.held(key)
            if isinstance(h.item, Message) and h.item.kind is Kind.STANDINGS
        ]

    async def run(self) -> None:
        """Release what the delay line holds, each item at its time."""
        line = self.line
        assert line is not None
        while True:
            self._wake.clear()
            nxt = line.next_due()
            wait = None if nxt is None else nxt - time.time()
            if wait is None or wait > 0:
                # asyncio.timeout, not wait_for: on Python 3.11 wait_for loses a
                # cancellation that comes as the event is set (livegain/mqtt/client.py)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(wait):
                        await self._wake.wait()
            self.release_due()

    def release_due(self, now: float | None = None) -> None:
        """Pass on what is due at ``now`` (default: the time now), in order."""
        line = self.line
        assert line is not None
        now = time.time() if now is None else now
        for r in line.due(now):
            started = time.perf_counter()
            try:
                self.then.deliver(self._released(r, now))
            except Exception as exc:
                self.stats.board_failures[r.board_id] += 1
                log.exception("publish_failed", board_id=r.board_id, error=str(exc))
            self.observe(time.perf_counter() - started)
            self._checkpoint(r)

    @staticmethod
    def _released(r: Released, now: float) -> Publication:
        """The publication of a released item, as it would have gone out live
        (the board's entry is its released state, serialised once for every
        output; an update goes out in the bytes it was published in, or
        stored in before a restart)."""
        item = r.held.item
        if isinstance(item, Message):
            return Publication(item.kind, item.key, now, data=item.data)
        bid = r.board_id
        if r.state is None:
            return Publication.removal(bid, at=now)
        entry = BoardEntry(r.state)
        if isinstance(item, schema.Update):
            data = None if r.held.data is None else (r.held.data,)
            return Publication.board_change(bid, entry, (item,), at=now, encoded=data)
        return Publication.board_change(bid, entry, whole=True, at=now)

    def _checkpoint(self, r: Released) -> None:
        """Store a released state when the line says so (the items before it go)."""
        if not r.checkpoint:
            return
        state = None if r.state is None else r.state.model_dump_json()
        self.writes.write(
            lambda store: store.save_released(r.board_id, state, r.held.n), board_id=r.board_id
        )
