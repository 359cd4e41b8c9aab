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

Nothing outlives the service, whatever ends it (SIGKILL, the OOM killer
included). The service's death closes the last write end of a pipe whose
read end the child holds; a thread of the child blocked on it reads EOF and
ends the child at once (:func:`_end_with_parent`). ``multiprocessing``'s own
helpers then end by the same rule: the fork server leaves its loop when its
"alive" pipe reaches EOF, and the resource tracker when its pipe does; each
pipe's write ends were held by the service and by the child (which inherits
copies of both), and by nothing else. Without the child's watch a SIGKILLed
service left all three running: the child waits forever for its next job on
a queue whose write end it holds itself, and keeps the other two alive.
docs/service.md ("Processes") says how each of the service's processes ends;
tests/app/test_no_orphans.py kills a real service and checks.

The child's work is held to a share of one core (``share``): after a job
that took ``c`` seconds of the child's CPU, the next one starts no sooner
than ``c * (1 / share - 1)`` seconds later, so that over time the child
computes at most ``share`` of the time, however much is asked of it. Callers
that build their job from the latest state wait for their turn first
(:meth:`Offload.turn`: one job at a time, first come first served, when the
share allows), then build it: what runs is never older than the wait.

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
import signal
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.connection import Connection
from typing import ParamSpec, TypeVar

import structlog

from livegain.core.errors import LivegainError

log = structlog.get_logger("livegain.offload")

P = ParamSpec("P")
R = TypeVar("R")

NICE = 10
"""How much lower than the service the child is scheduled (``nice`` steps):
below the local engines too (``engine.nice``, 5), whose evaluations viewers
wait for, while the odds can wait (bench/olympiad.py ``--teams``: at the
engines' priority, a section's computation of 12 s took its share from
them, and evaluations queued for up to 8 s)."""


def _timed(call: Callable[[], R]) -> tuple[R, float]:
    """``call()`` and the CPU seconds its thread spent on it (in the child)."""
    t0 = time.thread_time()
    out = call()
    return out, time.thread_time() - t0


class OffloadError(LivegainError, RuntimeError):
    """The child process died while running the job."""


def _lower_priority(nice: int) -> None:
    """In the child, before any job: let the service's loop go first."""
    if nice > 0:
        with contextlib.suppress(OSError):  # not permitted: the same priority
            os.nice(nice)


def _end_with_parent(service_alive: Connection) -> None:
    """In the child (a daemon thread): wait for EOF on ``service_alive``, the
    read end of a pipe whose only write end is the service's (nothing is ever
    written to it), then end the process at once. The kernel closes the write
    end when the service ends, whatever ends it. A job running meanwhile is
    dropped: nobody waits for its result any more."""
    with contextlib.suppress(EOFError, OSError):
        service_alive.recv_bytes()
    os._exit(0)


def _child_start(nice: int, service_alive: Connection) -> None:
    """The child's initializer, before any job: end with the service, and run
    below it (:func:`_lower_priority`). A Ctrl-C in the terminal reaches the
    whole process group: the child ignores it (no KeyboardInterrupt traceback
    of its own), and ends when the service closes its pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(
        target=_end_with_parent, args=(service_alive,), name="end-with-service", daemon=True
    ).start()
    _lower_priority(nice)


class Offload:
    """One child process for the service's heavy computations (see module)."""

    def __init__(
        self, *, preload: Sequence[str] = (), nice: int = NICE, share: float = 1.0
    ) -> None:
        if not 0.0 < share <= 1.0:
            raise ValueError(f"share must lie in (0, 1], got {share}")
        self.preload = tuple(preload)
        self.nice = nice
        self.share = share
        """The share of one core the jobs may take over time (see module)."""
        self.cpu_seconds = 0.0
        """CPU seconds the jobs took in all."""
        self.last_cpu = 0.0
        """CPU seconds of the last job."""
        self._turn = asyncio.Lock()
        self._rest_until = 0.0  # monotonic: when the share allows the next job
        self.starts = 0
        """Child processes started (more than one: a child died and was replaced)."""
        self.in_thread = False
        """True once no child process could be started: jobs run in threads."""
        self._pool: ProcessPoolExecutor | None = None
        # The pipe the child watches (_end_with_parent): its read end goes to
        # the child with the initializer's arguments; the write end stays here
        # only (a pipe's ends are not inherited by the processes this one
        # execs: engines, the fork server), so that it closes when this
        # process ends.
        self._alive: tuple[Connection, Connection] | None = None
        self._closed: weakref.WeakSet[ProcessPoolExecutor] = weakref.WeakSet()
        """Pools whose child :meth:`close` ended (its jobs' failures are no news)."""

    def _start(self) -> ProcessPoolExecutor | None:
        alive: tuple[Connection, Connection] | None = None
        try:
            ctx = multiprocessing.get_context("forkserver")
            if self.preload:
                ctx.set_forkserver_preload(list(self.preload))
            # A Connection in the initializer's arguments is pickled as a
            # duplicate of its descriptor, sent to the child through the fork
            # server (the documented way to hand a Pipe end to a process).
            alive = ctx.Pipe(duplex=False)
            pool = ProcessPoolExecutor(
                max_workers=1,
                mp_context=ctx,
                initializer=_child_start,
                initargs=(self.nice, alive[0]),
            )
        except (OSError, ValueError) as exc:
            if alive is not None:
                _close_pipe(alive)
            log.warning("offload_in_thread", error=str(exc))
            self.in_thread = True
            return None
        self._alive = alive
        self.starts += 1
        return pool

    def _drop(self, pool: ProcessPoolExecutor) -> None:
        """Stop using ``pool``: jobs not started are dropped, and closing the
        pipe its child watches ends the child at once (even mid-job)."""
        if self._pool is pool:
            self._pool = None
        pool.shutdown(wait=False, cancel_futures=True)
        alive, self._alive = self._alive, None
        if alive is not None:
            _close_pipe(alive)

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Wait until this caller may run a job: the jobs before it are done
        (first come, first served) and the share allows the next (see
        module); the turn lasts until the block ends."""
        async with self._turn:
            await asyncio.sleep(max(0.0, self._rest_until - time.monotonic()))
            yield

    async def run(self, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        """``fn(*args, **kwargs)`` in the child process (or a thread, see
        module). Its CPU time counts against the share (:meth:`turn`)."""
        call = functools.partial(fn, *args, **kwargs)
        out, cpu = await self._run(functools.partial(_timed, call))
        self.last_cpu = cpu
        self.cpu_seconds += cpu
        self._rest_until = time.monotonic() + cpu * (1.0 / self.share - 1.0)
        return out

    async def _run(self, call: Callable[[], R]) -> R:
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
            if pool in self._closed:  # close() ended it on purpose: nothing to report
                raise OffloadError("the child process was ended by close()") from exc
            if self._pool is pool:
                self._drop(pool)
            log.error("offload_child_died", error=str(exc))
            raise OffloadError(f"the child process died while computing: {exc}") from exc

    def close(self) -> None:
        """End the child process now: jobs not started are dropped, and a job
        it is running too (its caller gets :class:`OffloadError`). A later
        :meth:`run` starts a new child."""
        pool = self._pool
        if pool is not None:
            self._closed.add(pool)
            self._drop(pool)


def _close_pipe(ends: tuple[Connection, Connection]) -> None:
    for end in ends:
        with contextlib.suppress(OSError):
            end.close()
