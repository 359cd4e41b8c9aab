"""The broadcast delay, wired (docs/service.md, "Broadcast delay"): what a
delayed board would publish goes into the :class:`~livegain.publish.delay.DelayLine`
(and the store) and out to the outputs at its time, nothing early, across
restarts. A feed's ``delay`` (default: ``[broadcast] delay``) applies to its
boards; a board takes the longest of its feeds' and of its event group's."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence

import structlog

from livegain.app.outputs import Outputs
from livegain.app.stats import ServiceStats
from livegain.app.store import Store
from livegain.app.store_writes import StoreWrites
from livegain.config import Settings
from livegain.core.board.board import BoardGame
from livegain.core.board.updates import BoardUpdate
from livegain.feeds.base import Feed
from livegain.publish import convert, schema
from livegain.publish.delay import (
    DelayLine,
    Held,
    Item,
    Message,
    Released,
    decode_held,
    encode_item,
)
from livegain.publish.entry import BoardEntry

log = structlog.get_logger("livegain.delay")


class BroadcastDelay:
    """The service's delay line (``line``: None while every board is live)."""

    def __init__(
        self,
        settings: Settings,
        outputs: Outputs,
        writes: StoreWrites,
        stats: ServiceStats,
        observe: Callable[[float], None],
    ) -> None:
        self.settings = settings
        self.outputs = outputs
        self.writes = writes
        self.stats = stats
        self.observe = observe
        """Called with the seconds each release took to publish (a metric)."""
        self.line: DelayLine | None = None
        self._wake = asyncio.Event()
        self.feed_delays: dict[str, int] = {}
        self.group_delays: dict[str, int] = {}

    def hold_moment(self, game: BoardGame, data: bytes) -> bool:
        """Hold a ``moment`` message of a delayed board as long as the board
        (under the key ``moment/<board>``): True; False when it is live."""
        delay = self.board_delay(game) if self.line is not None else 0
        if delay <= 0:
            return False
        bid = game.board_id
        self.hold(f"moment/{bid}", Message(f"moment/{bid}", data), delay)
        return True

    def start(self, feeds: Sequence[Feed], store: Store | None) -> None:
        """Set up the broadcast delay (docs/service.md, "Broadcast delay").

        A feed's ``delay`` (default: ``[broadcast] delay``) applies to its
        boards; a board takes the longest of its feeds' and of its event
        group's. With any delay, or items still held in the store, delayed
        boards go out through a :class:`DelayLine` taken back from the store:
        what viewers saw before the restart is served again at once, what was
        held is released at its own time (nothing early)."""
        s = self.settings
        default = s.broadcast.delay
        delays: dict[str, int] = {}
        groups: dict[str, int] = {}
        for i, feed in enumerate(feeds):
            cfg = s.feeds[i] if i < len(s.feeds) else None
            own = cfg.delay if cfg is not None else getattr(feed, "delay", None)
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
        for r in line.due(time.time()):
            if isinstance(r.held.item, Message):
                self._publish_released(r)
            self._checkpoint(r)
        for state in line.released_states().values():
            self.outputs.board(state.board_id, BoardEntry(state), whole=True)
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

    def hold_board(
        self,
        game: BoardGame,
        updates: list[BoardUpdate],
        *,
        new: bool,
        match: schema.MatchOdds | None,
        engine: str,
    ) -> bool:
        """Hold what :meth:`_publish_board` would publish now in the delay line
        (False: the board is not delayed: publish it at once)."""
        line = self.line
        assert line is not None
        bid = game.board_id
        delay = self.board_delay(game)
        if delay == 0 and not line.knows(bid):
            return False
        items = [convert.update(u, match=match) for u in updates]
        whole = new or line.expects(bid) is None
        if not whole:
            for u in items:
                if u.seq != line.expects(bid):
                    whole = True  # the numbering does not follow what is held
                    break
                self.hold(bid, u, delay)
        if whole:
            state = convert.board_state(game, engine=engine, match=match)
            self.hold(bid, state.model_copy(update={"delay": delay}), delay)
        return True

    def hold(self, key: str, item: Item, delay: int) -> Held:
        """Hold one item in the delay line, and in the store."""
        line = self.line
        assert line is not None
        before = line.next_due()
        held = line.hold(time.time(), key, item, delay)
        kind, body = encode_item(item)
        self.writes.write(
            lambda store: store.save_held(held.n, key, held.due, kind, body), board_id=key
        )
        if before is None or held.due < before:
            self._wake.set()
        return held

    def max_delay(self) -> int:
        return max([self.settings.broadcast.delay, *self.feed_delays.values()])

    def hold_standings(self, event: str, data: bytes) -> bool:
        """Hold an event's ``standings`` message for the broadcast delay (the
        longest configured: they show every board's result): True; False
        without a delay (publish it at once)."""
        delay = self.max_delay()
        if self.line is None or delay == 0:
            return False
        self.hold(f"standings/{event}", Message(f"standings/{event}", data), delay)
        return True

    def held_standings(self) -> list[tuple[str, bytes]]:
        """The ``standings`` messages the line holds, (event, message), each
        event's in order."""
        line = self.line
        if line is None:
            return []
        return [
            (key.removeprefix("standings/"), h.item.data)
            for key in line.boards()
            if key.startswith("standings/")
            for h in line.held(key)
            if isinstance(h.item, Message)
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

    def release_due(self) -> None:
        line = self.line
        assert line is not None
        for r in line.due(time.time()):
            started = time.perf_counter()
            try:
                self._publish_released(r)
            except Exception as exc:
                self.stats.board_failures[r.board_id] += 1
                log.exception("publish_failed", board_id=r.board_id, error=str(exc))
            self.observe(time.perf_counter() - started)
            self._checkpoint(r)

    def _publish_released(self, r: Released) -> None:
        """Publish one released item as :meth:`_publish_board` publishes live:
        to the WebSocket hub (and so /api) and the MQTT publisher, the same bytes."""
        bid = r.board_id
        item = r.held.item
        if isinstance(item, Message) and bid.startswith("moment/"):
            self.outputs.moment(bid.removeprefix("moment/"), item.data)
            return
        if isinstance(item, Message):
            self.outputs.standings(bid.removeprefix("standings/"), item.data)
        elif r.state is None:
            self.outputs.remove(bid)
        elif isinstance(item, schema.Update):
            self.outputs.board(bid, BoardEntry(r.state), (item,))
        else:
            self.outputs.board(bid, BoardEntry(r.state), whole=True)

    def _checkpoint(self, r: Released) -> None:
        """Store a released state when the line says so (the items before it go)."""
        if not r.checkpoint:
            return
        state = None if r.state is None else r.state.model_dump_json()
        self.writes.write(
            lambda store: store.save_released(r.board_id, state, r.held.n), board_id=r.board_id
        )
