"""Engine evaluation: a pool of UCI processes, its searches, a persistent cache.

The names below are imported when first used, so that importing a light
module of this package (``livegain.engine.launch``) costs nothing more.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "EngineError": "livegain.engine.errors",
    "EnginePool": "livegain.engine.pool",
    "EngineSearchError": "livegain.engine.errors",
    "EngineStartError": "livegain.engine.errors",
    "SearchLimit": "livegain.engine.search",
    "EvalCache": "livegain.engine.cache",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
