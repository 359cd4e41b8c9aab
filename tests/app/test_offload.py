"""Heavy computations run in one child process, below the service's priority,
and a child that dies is replaced without losing the next job."""

from __future__ import annotations

import asyncio
import hashlib
import os
import time

import pytest

from livegain.app.offload import NICE, Offload, OffloadError


async def test_jobs_run_in_one_child_process_at_a_lower_priority() -> None:
    offload = Offload()
    try:
        first = await offload.run(os.getpid)
        second = await offload.run(os.getpid)
        child_nice = await offload.run(os.nice, 0)
    finally:
        offload.close()
    assert first == second != os.getpid()
    assert child_nice == min(19, os.nice(0) + NICE)
    assert offload.starts == 1 and not offload.in_thread


async def test_a_child_that_dies_fails_its_job_and_is_replaced() -> None:
    offload = Offload()
    try:
        before = await offload.run(os.getpid)
        with pytest.raises(OffloadError, match="died"):
            await offload.run(os._exit, 3)
        after = await offload.run(os.getpid)
    finally:
        offload.close()
    assert after != before and after != os.getpid()
    assert offload.starts == 2


async def test_jobs_take_at_most_their_share_of_a_core() -> None:
    """After a job that took c seconds of the child's CPU, the next turn comes
    no sooner than c * (1 / share - 1) seconds after it ended; turns come in order."""
    offload = Offload(share=0.25)
    order: list[int] = []
    spans: dict[int, tuple[float, float, float]] = {}  # started, ended, CPU

    async def job(k: int) -> None:
        async with offload.turn():
            started = time.monotonic()
            order.append(k)
            await offload.run(hashlib.pbkdf2_hmac, "sha256", b"pw", b"salt", 200_000)
            spans[k] = (started, time.monotonic(), offload.last_cpu)

    try:
        await asyncio.gather(job(0), job(1), job(2))
    finally:
        offload.close()
    assert order == [0, 1, 2]
    for k in (0, 1):
        _, ended, cpu = spans[k]
        assert cpu > 0.005
        # rested three times its CPU (share 1/4); the clock's resolution aside
        assert spans[k + 1][0] - ended >= 3 * cpu - 0.002
    assert offload.cpu_seconds == pytest.approx(sum(c for _, _, c in spans.values()))


def test_a_share_outside_one_core_is_refused() -> None:
    with pytest.raises(ValueError, match="share"):
        Offload(share=0.0)
    with pytest.raises(ValueError, match="share"):
        Offload(share=1.5)
