"""Engine test helpers: a scripted UCI engine for faults, child-process counting."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path

import chess.pgn
import pytest

FAKE_ENGINE = '''#!{python}
"""A scripted UCI engine: answers like an engine, then crashes or hangs on cue."""
import os, sys, time

MODE = {mode!r}
ON = {on!r}          # which searches (1-based, counted across processes) misbehave
COUNTER = {counter!r}


def out(line):
    sys.stdout.write(line + "\\n")
    sys.stdout.flush()


position = ""
for raw in sys.stdin:
    cmd = raw.strip()
    if cmd == "uci":
        if MODE == "garbage":
            out("this is not a chess engine")
            sys.exit(3)
        out("id name FakeEngine 1.0")
        out("option name Hash type spin default 16 min 1 max 1024")
        out("option name Threads type spin default 1 min 1 max 8")
        out("uciok")
    elif cmd == "isready":
        out("readyok")
    elif cmd.startswith("position"):
        position = cmd
    elif cmd.startswith("go"):
        with open(COUNTER, "a") as fh:
            fh.write("x")
        n = os.path.getsize(COUNTER)
        if MODE == "crash" and (ON is None or n in ON):
            os._exit(9)
        if MODE == "hang" and (ON is None or n in ON):
            time.sleep(3600)
        score = sum(position.encode()) % 200 - 100
        if MODE == "garbled":
            out("info depth 5 score cp x1 nodes 1234")
        else:
            out(f"info depth 5 score cp {{score}} nodes 1234")
        out("bestmove (none)")
    elif cmd == "quit":
        break
'''


def fake_score(board: chess.Board) -> int:
    """The score the scripted engine gives ``board`` (it sends the bare FEN)."""
    fen = board.fen()
    line = "position startpos" if fen == chess.STARTING_FEN else f"position fen {fen}"
    return sum(line.encode()) % 200 - 100


FakeEngineFactory = Callable[..., str]


@pytest.fixture
def fake_engine(tmp_path: Path) -> FakeEngineFactory:
    """Write a scripted engine; ``fake_engine("crash", on={1})`` returns its path."""
    made = 0

    def make(mode: str = "ok", on: set[int] | None = None) -> str:
        nonlocal made
        made += 1
        path = tmp_path / f"fake-engine-{made}"
        counter = tmp_path / f"fake-engine-{made}.count"
        path.write_text(
            FAKE_ENGINE.format(python=sys.executable, mode=mode, on=on, counter=str(counter))
        )
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
        return str(path)

    return make


def fake_searches(path: str) -> int:
    """How many searches a scripted engine (all its processes) has started."""
    counter = Path(path + ".count")
    return counter.stat().st_size if counter.exists() else 0


def child_pids() -> set[int]:
    """Process ids whose parent is this process (zombies included), from /proc."""
    me = os.getpid()
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            data = (entry / "stat").read_text()
        except OSError:
            continue
        fields = data.rsplit(")", 1)[1].split()
        if int(fields[1]) == me:
            found.add(int(entry.name))
    return found


@pytest.fixture
def tata_games(tata_steel: Path) -> list[chess.pgn.Game]:
    """The first three games of the Tata Steel file."""
    games: list[chess.pgn.Game] = []
    with tata_steel.open(encoding="utf-8") as fh:
        while len(games) < 3 and (g := chess.pgn.read_game(fh)) is not None:
            games.append(g)
    return games
