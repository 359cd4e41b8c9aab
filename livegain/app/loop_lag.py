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
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections import deque
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import structlog

log = structlog.get_logger("livegain.service")

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


class LoopLag:
    """Measures the loop's lag while :meth:`run` runs (one task)."""

    def __init__(self, *, tick: float = TICK, stall: float = STALL) -> None:
        self.tick = tick
        self.stall = stall
        self.stalls = 0
        self.last: deque[Stall] = deque(maxlen=KEPT)
        self._recent: deque[tuple[float, float]] = deque()  # (monotonic, lag) maxima

    async def run(self) -> None:
        """Wake every ``tick`` seconds until cancelled, noting each lag."""
        loop = asyncio.get_running_loop()
        while True:
            asked = loop.time() + self.tick
            cpu, waiting, collections = time.process_time(), _waiting(), _collections()
            await asyncio.sleep(self.tick)
            now = loop.time()
            self.note(now, now - asked, cpu, waiting, collections)

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
            return
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
