"""Shared test fixtures: where the shared data sits, real parts' availability."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from brokers import MOSQUITTO, PrivateBroker, port_open

REPO = Path(__file__).resolve().parent.parent
# CI has ../shared beside the checkout; tests that read it skip cleanly when absent.
SHARED = REPO.parent / "shared"
TATA_STEEL = SHARED / "data" / "tata-steel-masters-2022.pgn"
SEEDS = SHARED / "seeds"


def stockfish_path() -> str | None:
    found = shutil.which("stockfish")
    if found:
        return found
    return "/usr/games/stockfish" if Path("/usr/games/stockfish").exists() else None


@pytest.fixture
def tata_steel() -> Path:
    if not TATA_STEEL.exists():
        pytest.skip(f"{TATA_STEEL} not present")
    return TATA_STEEL


@pytest.fixture
def stockfish() -> str:
    path = stockfish_path()
    if path is None:
        pytest.skip("stockfish not installed (make test installs it)")
    return path


@pytest.fixture
def shared_broker() -> str:
    """The Mosquitto at 127.0.0.1:1883 that make test starts (skips when unreachable)."""
    if not port_open("127.0.0.1", 1883):
        pytest.skip("no MQTT broker at 127.0.0.1:1883 (make test starts one)")
    return "mqtt://127.0.0.1:1883"


@pytest.fixture
def private_broker(tmp_path: Path) -> Iterator[PrivateBroker]:
    """A Mosquitto of the test's own on a free port, with persistence; restartable."""
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
    """A unique MQTT topic prefix, so tests sharing a broker never see each other."""
    return f"test/livegain-{uuid.uuid4().hex[:10]}"
