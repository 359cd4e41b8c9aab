"""The service's runtime: what exists once it has started.

The game state, the store and the engine are made or started by
:meth:`Service.run <livegain.app.service.Service.run>` (the models shown
depend on the engine's name and limit, the store on the settings), not when
the service is built. The parts that work on them (the scheduler, ``/healthz``
and ``/metrics``) are handed one :class:`Runtime` then, instead of reading the
service's attributes, so they never see one of them missing.
"""

from __future__ import annotations

from dataclasses import dataclass

from livegain.app.evaluator import Evaluator
from livegain.app.store import Store
from livegain.core.board.registry import BoardRegistry


@dataclass(frozen=True)
class Runtime:
    """What a started service runs on."""

    registry: BoardRegistry
    """Every board of every feed."""
    store: Store | None
    """Where evaluations and snapshots are kept (None: ``persist = false``)."""
    evaluator: Evaluator
    """The engine (a pool, remote workers, or the one the service was given)."""
    engine_key: str
    """The engine's key in the store: its evaluations are stored under it."""
