from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from publish.helpers import toy_model

from livegain.config import Settings, load_settings
from livegain.engine.pool import EnginePool, SearchLimit

__all__ = ["DEPTH", "settings_for", "toy_model"]

DEPTH = 6


def settings_for(tmp: Path, **over: Any) -> Settings:
    base: dict[str, Any] = {
        "server": {"host": "127.0.0.1", "port": 0},
        "engine": {"depth": DEPTH, "workers": 1, "rating": 2860.0},
        "data_dir": str(tmp / "data"),
        "log": {"level": "warning", "json": False},
    }
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            base[k] = {**base[k], **v}
        else:
            base[k] = v
    return load_settings(None, **base)


@pytest.fixture
async def pool(stockfish: str) -> AsyncIterator[EnginePool]:
    async with EnginePool(stockfish, workers=1, limit=SearchLimit(depth=DEPTH)) as p:
        yield p
