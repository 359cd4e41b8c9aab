"""The service measures how late its event loop runs and tells a stall's
cause apart: busy in the process, waiting for a core, or blocked."""

from __future__ import annotations

import asyncio
import contextlib
import time

from livegain.app.loop_lag import WINDOW, LoopLag


def test_the_recent_maximum_lag_is_over_the_window_and_stalls_are_counted() -> None:
    lag = LoopLag(stall=0.25)
    lag.note(0.0, 0.01, time.process_time(), None, [0, 0, 0])
    lag.note(1.0, 0.2, time.process_time(), None, [0, 0, 0])
    lag.note(2.0, 0.05, time.process_time(), None, [0, 0, 0])
    assert lag.status()["max_lag_s"] == 0.2 and lag.stalls == 0
    lag.note(3.0, 0.5, time.process_time(), None, [0, 0, 0])
    assert lag.stalls == 1 and lag.status()["max_lag_s"] == 0.5
    (stall,) = lag.status()["last_stalls"]
    assert stall["seconds"] == 0.5 and stall["waiting_s"] is None
    # once the stall is older than the window, the maximum is what came after it
    lag.note(3.0 + WINDOW + 1, 0.03, time.process_time(), None, [0, 0, 0])
    assert lag.status()["max_lag_s"] == 0.03 and lag.stalls == 1


async def test_a_blocked_loop_is_a_stall_that_used_no_cpu() -> None:
    lag = LoopLag()
    task = asyncio.create_task(lag.run())
    try:
        await asyncio.sleep(0.2)  # a few ticks first
        time.sleep(0.6)  # noqa: ASYNC251 - the loop blocked in a system call, not busy
        # The monitor's wake-up is overdue: it runs in the next iteration.
        await asyncio.sleep(0.1)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    blocked = max(lag.last, key=lambda s: s.seconds)
    assert blocked.seconds >= 0.5
    assert blocked.cpu_s < blocked.seconds / 2  # asleep, not computing
    # the watchdog saw where the loop was: this test's blocking call
    assert blocked.where is not None
    assert "test_a_blocked_loop_is_a_stall_that_used_no_cpu" in blocked.where[-1]
    assert lag.status()["max_lag_s"] >= 0.5
