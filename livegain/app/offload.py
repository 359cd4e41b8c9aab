"""Work too heavy for the event loop's process, run in a child process.

A worker *thread* keeps a long computation off the event loop but not off its
interpreter lock: while the thread computes, every system call the loop makes
(each WebSocket write of a fan-out, each accepted connection) gives the lock
away and waits up to the switch interval (5 ms) to get it back. At an
Olympiad round (bench/olympiad.py: 2,000 boards, 4,000 players in one event,
200 viewers) the standings of the event were computed in a thread about a
quarter of the time, and a fan-out of one update to 200 viewers could take
seconds. A child process has its own lock; the operating system shares the
cores between it and the loop.

:class:`Offload` runs picklable module-level functions in one child process,
started when first needed (``forkserver``: a clean interpreter, not a copy of
the running service with its threads and sockets), at a lower scheduling
priority (``nice``) so that the loop, which answers viewers, goes first when
the cores are short. The child imports the modules named in ``preload`` once,
before any job. A child that dies is replaced on the next job; the job it was
running fails with :class:`OffloadError` and its caller decides (the
standings count a failure and compute again on their next turn). Where no
process can be started, jobs run in a worker thread instead, logged once.

As with any :mod:`multiprocessing` start method but ``fork``, the child
imports the program's main module again: a script that runs the service
itself must guard its entry point with ``if __name__ == "__main__":``
(``livegain``'s own commands, ``python -m livegain.cli`` and pytest do).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import ParamSpec, TypeVar

import structlog

from livegain.core.errors import LivegainError

log = structlog.get_logger("livegain.offload")

P = ParamSpec("P")
R = TypeVar("R")

NICE = 5
"""How much lower than the service the child is scheduled (``nice`` steps)."""


class OffloadError(LivegainError, RuntimeError):
    """The child process died while running the job."""


def _lower_priority(nice: int) -> None:
    """In the child, before any job: let the service's loop go first."""
    if nice > 0:
        with contextlib.suppress(OSError):  # not permitted: the same priority
            os.nice(nice)


class Offload:
    """One child process for the service's heavy computations (see module)."""

    def __init__(self, *, preload: Sequence[str] = (), nice: int = NICE) -> None:
        self.preload = tuple(preload)
        self.nice = nice
        self.starts = 0
        """Child processes started (more than one: a child died and was replaced)."""
        self.in_thread = False
        """True once no child process could be started: jobs run in threads."""
        self._pool: ProcessPoolExecutor | None = None

    def _start(self) -> ProcessPoolExecutor | None:
        try:
            ctx = multiprocessing.get_context("forkserver")
            if self.preload:
                ctx.set_forkserver_preload(list(self.preload))
            pool = ProcessPoolExecutor(
                max_workers=1,
                mp_context=ctx,
                initializer=_lower_priority,
                initargs=(self.nice,),
            )
        except (OSError, ValueError) as exc:
            log.warning("offload_in_thread", error=str(exc))
            self.in_thread = True
            return None
        self.starts += 1
        return pool

    async def run(self, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        """``fn(*args, **kwargs)`` in the child process (or a thread, see module)."""
        call = functools.partial(fn, *args, **kwargs)
        fresh = self._pool is None and not self.in_thread
        if fresh:
            self._pool = self._start()
        pool = self._pool
        if pool is None:
            return await asyncio.to_thread(call)
        try:
            if fresh:
                # The first job starts the child, and submit() waits for the
                # fork server's answer: half a second on a busy machine, off
                # the event loop here.
                future = await asyncio.to_thread(pool.submit, call)
                return await asyncio.wrap_future(future)
            return await asyncio.get_running_loop().run_in_executor(pool, call)
        except BrokenProcessPool as exc:
            if self._pool is pool:
                self._pool = None
                pool.shutdown(wait=False, cancel_futures=True)
            log.error("offload_child_died", error=str(exc))
            raise OffloadError(f"the child process died while computing: {exc}") from exc

    def close(self) -> None:
        """End the child process (jobs not started are dropped)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
