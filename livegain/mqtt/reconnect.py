"""Staying connected to a broker: aiomqtt's reconnection pattern, with a
back-off, for every long-lived link (the publisher, the gateway, workers)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, NoReturn, Protocol

import aiomqtt

from livegain.mqtt.client import taken_over

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
