"""Feed test helpers: a recording sink, the real broker, a private broker for restarts."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from brokers import PrivateBroker, free_port, port_open
from conftest import need

from livegain.core.snapshot import GameSnapshot

__all__ = ["PrivateBroker", "RecordingSink", "cancel", "free_port", "run_feed"]

BROKER_HOST = "127.0.0.1"
BROKER_PORT = 1883


@dataclass
class RecordingSink:
    """A FeedSink that records everything and lets a test wait for a condition."""

    snapshots: list[GameSnapshot] = field(default_factory=list)
    errors: list[tuple[str, str, str]] = field(default_factory=list)
    _event: asyncio.Event | None = None

    def snapshot(self, snap: GameSnapshot) -> None:
        self.snapshots.append(snap)
        self._wake()

    def error(self, source: str, where: str, message: str) -> None:
        self.errors.append((source, where, message))
        self._wake()

    def _wake(self) -> None:
        if self._event is not None:
            self._event.set()

    def latest(self) -> dict[object, GameSnapshot]:
        """The last snapshot per game (GameId, else round/board/players)."""
        out: dict[object, GameSnapshot] = {}
        for s in self.snapshots:
            key = s.game_id or (s.round, s.board, s.white.name, s.black.name)
            out[key] = s
        return out

    def by_board(self) -> dict[int | None, GameSnapshot]:
        return {s.board: s for s in self.snapshots}

    def error_text(self) -> str:
        return "\n".join(" | ".join(e) for e in self.errors)

    async def wait_for(self, predicate: Callable[[], bool], within: float = 10.0) -> None:
        if self._event is None:
            self._event = asyncio.Event()
        try:
            async with asyncio.timeout(within):
                while not predicate():
                    self._event.clear()
                    # woken by the sink, or re-check every 20 ms (predicates on other state)
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(0.02):
                            await self._event.wait()
        except TimeoutError:
            raise AssertionError(
                f"condition not met in {within} s; {len(self.snapshots)} snapshots, "
                f"errors:\n{self.error_text()}"
            ) from None


@pytest.fixture
def sink() -> RecordingSink:
    return RecordingSink()


@pytest.fixture
def broker() -> str:
    """The shared real broker at 127.0.0.1:1883 (skip when it is not running)."""
    need(port_open(BROKER_HOST, BROKER_PORT), "no MQTT broker at 127.0.0.1:1883 (make test)")
    return f"mqtt://{BROKER_HOST}:{BROKER_PORT}"


@pytest.fixture
def unique() -> str:
    return uuid.uuid4().hex[:10]


async def run_feed(feed: object, sink: RecordingSink) -> asyncio.Task[None]:
    """Start ``feed.run(sink)`` as a task (the caller cancels it)."""
    return asyncio.create_task(feed.run(sink))  # type: ignore[attr-defined]


async def cancel(task: asyncio.Task[None]) -> None:
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    else:  # a feed's run() must never return on its own
        raise AssertionError("feed task ended by itself")
