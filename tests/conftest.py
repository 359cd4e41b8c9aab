"""Shared test fixtures: where the shared data sits, real parts' availability.

A test that needs a real part (Stockfish, Mosquitto, Chromium, the
``../shared`` data) asks for it through :func:`need`: under CI (``CI=true``) a
missing part FAILS the test, saying what is missing; elsewhere the test is
skipped, saying why. No test passes by skipping on CI.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from brokers import MOSQUITTO, PrivateBroker, port_open

REPO = Path(__file__).resolve().parent.parent
# CI has ../shared beside the checkout; tests that read it skip when absent (fail on CI).
SHARED = REPO.parent / "shared"
TATA_STEEL = SHARED / "data" / "tata-steel-masters-2022.pgn"
SEEDS = SHARED / "seeds"


def on_ci() -> bool:
    """True under CI (``CI=true``, as GitHub Actions, GitLab CI and others set it)."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def need(condition: object, why: str) -> None:
    """Go on only if ``condition`` holds: else fail under CI, skip elsewhere; ``why``
    names the missing part (and how to get it)."""
    if condition:
        return
    if on_ci():
        pytest.fail(f"CI=true and a required part is missing: {why}", pytrace=False)
    pytest.skip(why)


def stockfish_path() -> str | None:
    found = shutil.which("stockfish")
    if found:
        return found
    return "/usr/games/stockfish" if Path("/usr/games/stockfish").exists() else None


@pytest.fixture(autouse=True)
def structlog_config_restored() -> Iterator[None]:
    """structlog's configuration as it was before each test: a command run in
    the test's process (``main(["gateway", ...])``) configures logging for the
    whole process, and a later test capturing logs (``capture_logs``) would see
    nothing under that command's level filter."""
    saved = dict(structlog.get_config())
    saved["processors"] = list(saved["processors"])
    yield
    structlog.configure(**saved)


@pytest.fixture
def tata_steel() -> Path:
    need(TATA_STEEL.exists(), f"{TATA_STEEL} not present (the shared data beside the checkout)")
    return TATA_STEEL


@pytest.fixture
def stockfish() -> str:
    path = stockfish_path()
    need(path is not None, "stockfish not installed (make test installs it)")
    assert path is not None
    return path


@pytest.fixture
def shared_broker() -> str:
    """The Mosquitto at 127.0.0.1:1883 that make test starts (see :func:`need`)."""
    need(port_open("127.0.0.1", 1883), "no MQTT broker at 127.0.0.1:1883 (make test starts one)")
    return "mqtt://127.0.0.1:1883"


@pytest.fixture
def private_broker(tmp_path: Path) -> Iterator[PrivateBroker]:
    """A Mosquitto of the test's own on a free port, with persistence; restartable."""
    need(Path(MOSQUITTO).exists(), f"{MOSQUITTO} not installed (make test installs it)")
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
