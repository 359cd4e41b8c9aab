"""Under CI (``CI=true``) a missing real part fails a test; elsewhere it skips, saying why.

Each fixture of tests/conftest.py that needs a real part is run in a pytest of
its own with that part made to look absent (the fixture's own lookup patched),
once with ``CI=true`` and once without.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

MISSING = """
import pytest
import conftest


@pytest.fixture(autouse=True)
def _parts_gone(monkeypatch):
    monkeypatch.setattr(conftest, "stockfish_path", lambda: None)
    monkeypatch.setattr(conftest, "port_open", lambda host, port: False)
    monkeypatch.setattr(conftest, "MOSQUITTO", "/nonexistent/mosquitto")
    monkeypatch.setattr(conftest, "TATA_STEEL", conftest.SHARED / "nonexistent.pgn")


def test_stockfish(stockfish):
    pass


def test_shared_broker(shared_broker):
    pass


def test_private_broker(private_broker):
    pass


def test_tata_steel(tata_steel):
    pass


def test_need_directly():
    conftest.need(False, "the frobnicator is not plugged in")
"""


def run_missing(tmp_path: Path, ci: str | None) -> str:
    (tmp_path / "test_missing.py").write_text(MISSING)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [
            *(
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-rfs",
                "-p",
                "conftest",
                "-p",
                "no:cacheprovider",
            ),
            *("--rootdir", str(tmp_path), "-c", os.devnull, str(tmp_path / "test_missing.py")),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    return proc.stdout + proc.stderr


@pytest.mark.parametrize("ci", ["true", "1"])
def test_a_missing_part_fails_under_ci(tmp_path: Path, ci: str) -> None:
    out = run_missing(tmp_path, ci)
    # A fixture that fails is an error of the test's set-up: it counts as a failure.
    assert "1 failed, 4 errors" in out, out
    assert "skipped" not in out and "passed" not in out, out
    for why in (
        "stockfish not installed",
        "no MQTT broker at 127.0.0.1:1883",
        "/nonexistent/mosquitto not installed",
        "nonexistent.pgn not present",
        "the frobnicator is not plugged in",
    ):
        said = [line for line in out.splitlines() if "a required part is missing: " in line]
        assert any(why in line for line in said), (why, out)


def test_a_missing_part_skips_outside_ci_and_says_why(tmp_path: Path) -> None:
    out = run_missing(tmp_path, None)
    assert "5 skipped" in out, out
    assert "failed" not in out and "error" not in out, out
    for why in ("stockfish not installed", "the frobnicator is not plugged in"):
        assert why in out, (why, out)
