"""How late the service's event loop runs, and why when it stalls.

A task asks to wake every :data:`TICK` seconds; how much later than asked it
wakes is the loop's *lag*: what a viewer's ping or a ``/healthz`` request
waits on top of its own work. A lag over :data:`STALL` seconds is a
*stall*: counted, kept (the last few, for ``/healthz``) and logged
(``loop_stalled``) with what tells its causes apart, measured over the same
interval:

- ``cpu_s``: CPU time of the whole process (every thread): near the stall's
  length, the process was busy (a long callback, a garbage collection);
- ``waiting_s``: time the loop's thread was ready but not running (waiting
  for a core: other processes had them), from ``/proc/self/schedstat``
  (None where the kernel gives none);
- ``gc``: garbage collections per generation during the stall.

Neither all busy nor waiting for a core: the thread was blocked in a system
call (the disk, say).

- ``where``: what the loop was running, as a watchdog thread saw it half a
  stall into it (the innermost frames of the loop thread's stack, from
  :func:`sys._current_frames`, the standard library's documented way to read
  another thread's stack); None when the stall ended before it looked.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
import time
import traceback
from collections import deque
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import structlog

log = structlog.get_logger("livegain.loop_lag")

TICK = 0.05
"""Seconds between two wake-ups asked for."""
STALL = 0.25
"""A lag over this many seconds is a stall."""
KEPT = 5
"""Stalls kept for ``/healthz`` (the latest)."""
WINDOW = 60.0
"""Seconds over which the recent maximum lag is taken."""

_SCHEDSTAT = Path("/proc/thread-self/schedstat")


def _waiting() -> float | None:
    """Seconds this thread has spent ready to run but not running (None: unknown)."""
    try:
        fields = _SCHEDSTAT.read_text().split()
        return int(fields[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


def _collections() -> list[int]:
    return [g["collections"] for g in gc.get_stats()]


@dataclass(frozen=True)
class Stall:
    """One stall of the loop: when, how long, and the figures that tell why."""

    at: float
    """Wall-clock time (Unix seconds) the loop woke up."""
    seconds: float
    cpu_s: float
    waiting_s: float | None
    gc: tuple[int, ...]
    where: tuple[str, ...] | None = None


FRAMES = 12
"""Innermost frames of the loop thread kept for a stall's ``where``."""


class LoopLag:
    """Measures the loop's lag while :meth:`run` runs (one task)."""

    def __init__(self, *, tick: float = TICK, stall: float = STALL) -> None:
        self.tick = tick
        self.stall = stall
        self.stalls = 0
        self.last: deque[Stall] = deque(maxlen=KEPT)
        self._recent: deque[tuple[float, float]] = deque()  # (monotonic, lag) maxima
        self._woke = time.monotonic()  # when the loop last woke this task
        self._where: tuple[str, ...] | None = None  # the watchdog's look at a stall

    async def run(self) -> None:
        """Wake every ``tick`` seconds until cancelled, noting each lag (and
        a watchdog thread looks at the loop's stack in a stall)."""
        loop = asyncio.get_running_loop()
        done = threading.Event()
        watchdog = threading.Thread(
            target=self._watch, args=(threading.get_ident(), done), name="loop-watchdog"
        )
        watchdog.daemon = True
        watchdog.start()
        try:
            while True:
                asked = loop.time() + self.tick
                cpu, waiting, collections = time.process_time(), _waiting(), _collections()
                self._woke = time.monotonic()
                await asyncio.sleep(self.tick)
                now = loop.time()
                self.note(now, now - asked, cpu, waiting, collections)
        finally:
            done.set()

    def _watch(self, loop_thread: int, done: threading.Event) -> None:
        """In its own thread: once per stall, half a stall in, keep the loop
        thread's innermost frames (what the loop is running)."""
        looked_at = 0.0
        while not done.wait(self.stall / 2):
            woke = self._woke
            if woke != looked_at and time.monotonic() - woke > self.tick + self.stall / 2:
                looked_at = woke
                frame = sys._current_frames().get(loop_thread)
                if frame is not None:
                    stack = traceback.extract_stack(frame)[-FRAMES:]
                    self._where = tuple(
                        f"{f.filename.rsplit('/', 2)[-1]}:{f.lineno} {f.name}" for f in stack
                    )

    def note(
        self,
        now: float,
        lag: float,
        cpu_before: float,
        waiting_before: float | None,
        gc_before: list[int],
    ) -> None:
        """One wake-up ``lag`` seconds late, at ``now`` (the loop's clock)."""
        lag = max(0.0, lag)
        recent = self._recent
        while recent and recent[-1][1] <= lag:  # a running maximum over WINDOW
            recent.pop()
        recent.append((now, lag))
        while recent[0][0] < now - WINDOW:
            recent.popleft()
        if lag <= self.stall:
            self._where = None
            return
        where, self._where = self._where, None
        waiting = _waiting()
        stall = Stall(
            at=round(time.time(), 3),
            seconds=round(lag, 3),
            cpu_s=round(time.process_time() - cpu_before, 3),
            waiting_s=(
                None
                if waiting is None or waiting_before is None
                else round(waiting - waiting_before, 3)
            ),
            gc=tuple(a - b for a, b in zip(_collections(), gc_before, strict=True)),
            where=where,
        )
        self.stalls += 1
        self.last.append(stall)
        log.warning("loop_stalled", **asdict(stall))

    def status(self) -> dict[str, Any]:
        """Figures for ``/healthz``."""
        return {
            "max_lag_s": round(self._recent[0][1], 3) if self._recent else 0.0,
            "window_s": WINDOW,
            "stalls": self.stalls,
            "stall_s": self.stall,
            "last_stalls": [asdict(s) for s in self.last],
        }
