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
from collections.abc import Awaitable
from types import TracebackType
from typing import Any, TypeVar

import aiomqtt

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
