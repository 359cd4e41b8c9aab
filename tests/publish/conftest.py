from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from .brokers import MOSQUITTO, PrivateBroker, port_open


@pytest.fixture
def shared_broker() -> str:
    """The team's Mosquitto at 127.0.0.1:1883 (skips when unreachable)."""
    if not port_open("127.0.0.1", 1883):
        pytest.skip("no MQTT broker at 127.0.0.1:1883 (make test starts one)")
    return "mqtt://127.0.0.1:1883"


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
def prefix() -> str:
    return f"test/livegain-{uuid.uuid4().hex[:10]}"
