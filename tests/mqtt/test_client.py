"""A cancellation that races with the broker's answer stops the task (Python 3.11's wait_for)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable

import pytest

from livegain.mqtt.client import keep_cancellation


async def _answer_racing_cancel(wrap: Callable[[Awaitable[int]], Awaitable[int]]) -> list[str]:
    """A task waits (as aiomqtt does) with wait_for for an answer; the answer
    arrives and the task is cancelled in the same loop turn."""
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[int] = loop.create_future()
    trace: list[str] = []

    async def waiter() -> None:
        await wrap(asyncio.wait_for(answer, 10))
        trace.append("carried on")
        await asyncio.sleep(3600)  # a replay would play on, a publisher publish on

    task = asyncio.create_task(waiter())
    await asyncio.sleep(0)
    answer.add_done_callback(lambda _: task.cancel())  # after wait_for's own callback
    answer.set_result(1)
    try:
        await asyncio.wait_for(task, 2)
        trace.append("returned")
    except asyncio.CancelledError:
        trace.append("cancelled")
    except TimeoutError:
        trace.append("still running")
    return trace


async def _plain(aw: Awaitable[int]) -> int:
    return await aw


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="wait_for keeps cancellations from 3.12")
async def test_wait_for_swallows_a_racing_cancellation_on_3_11() -> None:
    # The premise: without the guard the cancelled task carries on.
    assert await _answer_racing_cancel(_plain) == ["carried on", "still running"]


async def test_the_guard_raises_the_swallowed_cancellation() -> None:
    assert await _answer_racing_cancel(keep_cancellation) == ["cancelled"]


async def test_the_guard_passes_results_and_ordinary_cancellations() -> None:
    assert await keep_cancellation(asyncio.sleep(0, result=7)) == 7

    task = asyncio.create_task(keep_cancellation(asyncio.sleep(3600)))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_reconnect_forever_backs_off_and_starts_again_after_a_connection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Waits double after each attempt that never connected, up to the most;
    an attempt that had connected brings the first wait back. (A scripted
    connection: a broker that refuses on cue is what is not at hand here;
    tests/publish and tests/engine restart real brokers.)"""
    import aiomqtt

    import livegain.mqtt.reconnect as mqtt_client

    monkeypatch.setattr(mqtt_client, "BACKOFF_FIRST", 0.01)
    # True: the attempt connects (then loses the connection), False: refused
    script = [False, False, False, False, True, False, False]
    connects = 0
    waits: list[float] = []
    done = asyncio.Event()

    async def connection() -> None:
        nonlocal connects
        if not script:
            done.set()
            await asyncio.Event().wait()  # stays connected until cancelled
        if script.pop(0):
            connects += 1
        raise aiomqtt.MqttError("connection lost")

    def lost(exc: Exception, retry_in: float) -> None:
        assert "connection lost" in str(exc)
        waits.append(retry_in)

    task = asyncio.create_task(
        mqtt_client.reconnect_forever(connection, lambda: connects, lost, most=0.04)
    )
    await asyncio.wait_for(done.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert waits == [0.01, 0.02, 0.04, 0.04, 0.01, 0.02, 0.04]
