"""The service's counters: what it read, evaluated, published and failed at,
as ``/healthz`` and ``/metrics`` report them."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class ServiceStats:
    snapshots: int = 0
    duplicates: int = 0
    evaluations: int = 0
    store_hits: int = 0
    engine_calls: int = 0
    engine_failures: int = 0
    updates: int = 0
    restored_boards: int = 0
    restored_evals: int = 0
    store_failures: int = 0
    feed_errors: Counter[str] = field(default_factory=Counter)
    board_failures: Counter[str] = field(default_factory=Counter)
