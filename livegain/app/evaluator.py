"""What the service needs from an engine, and what it may read of one.

:class:`Evaluator` is all the service requires (:class:`EnginePool` and
:class:`~livegain.remote.evaluator.RemoteEvaluator` are ones; a test's
material count is another). An evaluator may also tell more of itself, each
ability a small protocol of its own, checked with :func:`isinstance`:

- :class:`NamedEngine`: the engine's name (which calibrated models fit it);
- :class:`LimitedEngine`: its search limit (the same);
- :class:`ParallelEngine`: how many searches it runs at once (how many
  positions the scheduler keeps in flight);
- :class:`CountedEngine`: its :class:`EngineStats` (``/healthz``, ``/metrics``).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import chess

from livegain.core.evaluation import Evaluation
from livegain.engine.search import SearchLimit


class Evaluator(Protocol):
    """What the service needs from an engine: :class:`EnginePool` is one."""

    async def evaluate(self, board: chess.Board, priority: int = 0) -> Evaluation: ...

    def describe(self) -> str: ...

    @property
    def engine_key(self) -> str: ...


@runtime_checkable
class NamedEngine(Protocol):
    """An evaluator that knows its engine's name ("" while it does not yet)."""

    @property
    def engine_name(self) -> str: ...


@runtime_checkable
class LimitedEngine(Protocol):
    """An evaluator that searches each position to one limit."""

    @property
    def limit(self) -> SearchLimit: ...


@runtime_checkable
class ParallelEngine(Protocol):
    """An evaluator that runs ``workers`` searches at once."""

    @property
    def workers(self) -> int: ...


class EngineStats(Protocol):
    """An engine's counters since start (:class:`~livegain.engine.pool.PoolStats`)."""

    @property
    def search_seconds(self) -> float:
        """Seconds spent searching."""
        ...

    @property
    def restarts(self) -> int:
        """Engine processes restarted."""
        ...


@runtime_checkable
class CountedEngine(Protocol):
    """An evaluator that counts its searches and restarts."""

    @property
    def stats(self) -> EngineStats: ...
