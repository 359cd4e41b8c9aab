"""Heavy computations run in one child process, below the service's priority,
and a child that dies is replaced without losing the next job."""

from __future__ import annotations

import os

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
