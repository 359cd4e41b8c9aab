"""The MQTT client every part of livegain uses: aiomqtt's, with cancellation kept.

aiomqtt waits for the broker's answer (PUBACK, SUBACK, the disconnection) with
:func:`asyncio.wait_for`. On Python 3.11 that function *returns the answer*
when the waiting task is cancelled in the same loop turn as the answer
arrives (CPython gh-86296, fixed in 3.12 where ``wait_for`` is built on
``asyncio.timeout``). The task then carries on as if it had never been
cancelled: a replay keeps playing, a publisher keeps publishing, and whoever
awaits the cancelled task waits for ever. It happened in ``livegain demo
--mqtt`` stopped with Ctrl-C while moves were going out (about one stop in
ten on a loaded machine).

:class:`Client` overrides aiomqtt's public coroutines and raises the
cancellation they swallowed, so a cancelled task stops.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, NoReturn, Protocol, TypeVar

import aiomqtt

from livegain.broker import taken_over

T = TypeVar("T")


async def keep_cancellation(aw: Awaitable[T]) -> T:
    """``await aw``; if the task was cancelled meanwhile and ``aw`` returned
    anyway, raise :class:`asyncio.CancelledError` as it should have."""
    task = asyncio.current_task()
    before = task.cancelling() if task is not None else 0
    result = await aw
    if task is not None and task.cancelling() > before:
        raise asyncio.CancelledError
    return result


class Client(aiomqtt.Client):
    """:class:`aiomqtt.Client` whose waits on the broker end when cancelled."""

    async def publish(self, *args: Any, **kwargs: Any) -> None:
        await keep_cancellation(super().publish(*args, **kwargs))

    async def subscribe(self, *args: Any, **kwargs: Any) -> Any:
        return await keep_cancellation(super().subscribe(*args, **kwargs))

    async def unsubscribe(self, *args: Any, **kwargs: Any) -> None:
        await keep_cancellation(super().unsubscribe(*args, **kwargs))

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await keep_cancellation(super().__aexit__(exc_type, exc, tb))


#: The first wait before connecting to a broker again (seconds); doubled after
#: each attempt that fails, up to the caller's most.
BACKOFF_FIRST = 0.5


async def reconnect_forever(
    connection: Callable[[], Awaitable[None]],
    connects: Callable[[], int],
    lost: Callable[[Exception, float], None],
    *,
    most: float,
) -> NoReturn:
    """Run ``connection`` (one connection to a broker, until it ends) again
    and again, until cancelled: aiomqtt's reconnection pattern.

    Between two: :data:`BACKOFF_FIRST` seconds, doubled after each attempt
    that never connected, up to ``most``; back to the first once one had
    connected (``connects()`` grew meanwhile). ``lost(error, retry_in)``
    reports an MQTT error or unreadable TLS files (``ValueError``).
    """
    delay = BACKOFF_FIRST
    while True:
        began = connects()
        error: Exception | None = None
        try:
            await connection()
        except (aiomqtt.MqttError, ValueError) as exc:
            error = exc
        if connects() > began:  # it was connected: the back-off starts again
            delay = BACKOFF_FIRST
        if error is not None:
            lost(error, delay)
        await asyncio.sleep(delay)
        delay = min(delay * 2, most)


class LinkStats(Protocol):
    """A broker link's counters (the MQTT publisher's, the gateway's)."""

    connected: bool
    connects: int
    failures: int
    last_error: str | None


async def keep_connected(
    session: Callable[[], Awaitable[None]],
    stats: LinkStats,
    *,
    most: float,
    log: Any,
    event: str,
    broker: str,
) -> NoReturn:
    """:func:`reconnect_forever` for a link that keeps :class:`LinkStats`:
    ``connected`` is false once a session ends; each loss is counted
    (``failures``, ``last_error``) and logged as a warning ``event`` with the
    broker, the error and the wait before the next attempt."""

    async def connection() -> None:
        try:
            await session()
        finally:
            stats.connected = False

    def lost(exc: Exception, retry_in: float) -> None:
        stats.failures += 1
        stats.last_error = str(exc)
        if taken_over(exc):
            stats.last_error = f"session taken over (another client connected with our id): {exc}"
        log.warning(event, broker=broker, error=str(exc), retry_in=retry_in)

    await reconnect_forever(connection, lambda: stats.connects, lost, most=most)
