from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from publish.brokers import MOSQUITTO, PrivateBroker, port_open

from livegain.config import Settings, load_settings
from livegain.engine.pool import EnginePool, SearchLimit

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


@pytest.fixture
def private_broker(tmp_path: Path) -> Iterator[PrivateBroker]:
    if not Path(MOSQUITTO).exists():
        pytest.skip("mosquitto not installed")
    broker = PrivateBroker(tmp_path / "broker")
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def shared_broker() -> str:
    if not port_open("127.0.0.1", 1883):
        pytest.skip("no MQTT broker at 127.0.0.1:1883")
    return "mqtt://127.0.0.1:1883"


@pytest.fixture
def prefix() -> str:
    return f"test/livegain-{uuid.uuid4().hex[:10]}"
