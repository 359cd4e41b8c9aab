"""How long a polled feed waits after failures: a delay per consecutive
failure, the count reset by a success."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# Delays after the 1st, 2nd, 3rd and later consecutive failures (reset on success).
BACKOFF: tuple[float, ...] = (2.0, 10.0, 60.0)


@dataclass
class Backoff:
    """Consecutive-failure counter that says how long to wait before the next try."""

    delays: Sequence[float] = BACKOFF
    failures: int = 0

    def fail(self) -> float:
        self.failures += 1
        return self.delays[min(self.failures, len(self.delays)) - 1]

    def succeed(self) -> None:
        self.failures = 0
