"""Shared test fixtures: where the shared data sits, real parts' availability."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

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
