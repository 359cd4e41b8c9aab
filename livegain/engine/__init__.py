"""Engine evaluation: a pool of UCI processes, a persistent cache, batch analysis."""

from livegain.engine.cache import EvalCache
from livegain.engine.pool import (
    EngineError,
    EnginePool,
    EngineSearchError,
    EngineStartError,
    SearchLimit,
)

__all__ = [
    "EngineError",
    "EnginePool",
    "EngineSearchError",
    "EngineStartError",
    "EvalCache",
    "SearchLimit",
]
