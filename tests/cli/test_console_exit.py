"""The `livegain` console script: a batch command that has finished exits
without the interpreter's teardown, and loses nothing by it (output, files,
cache, exit handlers, exit code)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import livegain
from livegain.batch.pgn_evals import annotated_games_from_pgn
from livegain.batch.pgnio import read_pgn_games

GOTC = Path(livegain.__file__).parent / "data" / "game_of_the_century.pgn"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "livegain.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_analyze_writes_everything_before_it_exits(stockfish: str, tmp_path: Path) -> None:
    cache, out = tmp_path / "cache.sqlite", tmp_path / "annotated.pgn"
    done = cli(
        "analyze", str(GOTC), "--depth", "2", "--workers", "1", "--engine", stockfish,
        "--cache", str(cache), "--json", "--output-pgn", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    (game,) = report["games"]
    # the annotated PGN is complete: every ply with its evaluation
    (written,), skipped = annotated_games_from_pgn(read_pgn_games(out))
    assert skipped == []
    assert len(written.sans) == len(game["plies"]) > 80
    assert all(score is not None for score in written.scores)
    # the cache's rows are committed
    db = sqlite3.connect(cache)
    try:
        (rows,) = db.execute("SELECT COUNT(*) FROM evals").fetchone()
    finally:
        db.close()
    assert rows >= len(written.sans) - 5  # every searched position (repeats once)


def test_exit_handlers_of_the_command_still_run(stockfish: str, tmp_path: Path) -> None:
    """Handlers registered while the command runs (as libraries do) run
    before the process ends, and the exit code is the command's."""
    mark = tmp_path / "handler-ran"
    script = (
        "import atexit, sys\n"
        "import livegain.cli as cli\n"
        "inner = cli.main\n"
        "def main(words):\n"
        f"    atexit.register(lambda: open({str(mark)!r}, 'w').write('yes'))\n"
        "    return inner(words)\n"
        "cli.main = main\n"
        "cli.console()\n"
    )
    missing = tmp_path / "nope.pgn"
    done = subprocess.run(
        [sys.executable, "-c", script, "analyze", str(missing), "--engine", stockfish],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and "no such file" in done.stderr
    assert mark.read_text() == "yes"


def test_a_reader_that_stops_early_gets_no_traceback(stockfish: str, tmp_path: Path) -> None:
    """`livegain analyze ... --json | head -c 100`: the output stops; the
    command neither fails nor prints a traceback."""
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "livegain.cli", "analyze", str(GOTC), "--depth", "1",
            "--workers", "1", "--engine", stockfish, "--cache", str(tmp_path / "c.sqlite"),
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    head = proc.stdout.read(100)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(120) == 0
    assert head.startswith(b"{")
    assert "Traceback" not in err and "Exception ignored" not in err


def test_a_command_that_raises_keeps_its_traceback(tmp_path: Path) -> None:
    """Only a command that returned exits early: a crash is reported as usual."""
    script = (
        "import livegain.cli as cli\n"
        "def main(words):\n"
        "    raise RuntimeError('boom')\n"
        "cli.main = main\n"
        "cli.console()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, "analyze", "x.pgn"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert "Traceback" in done.stderr and "RuntimeError: boom" in done.stderr


def test_other_commands_exit_as_usual() -> None:
    done = cli("elo", "expected", "--rating-a", "2800", "--rating-b", "2700")
    assert done.returncode == 0 and done.stdout.strip()
