"""The whole service on a LiveChess Cloud tournament where one board's files are garbage.

A real local LCC server (``MiniHttpServer``) serves five boards of one round;
the moves go on, one ply per step, on every board. Board 3's DGT clock
reports ``1e999`` in every version of its game file; board 5's file is junk
of a new kind at each step (invalid JSON, deep nesting, NaN, a list...). A
real :class:`Service` (real Stockfish at low depth, a websockets mirror)
must keep showing every step of boards 1, 2 and 4 promptly, show board 3's
moves without the bad clock, count the errors in ``/healthz`` and name the
board in the log.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import structlog
from feeds.test_lcc import LccServer, _player

from livegain.app.service import Service
from livegain.engine.pool import EnginePool
from livegain.feeds._http import http_get

from .conftest import running, settings_for, toy_model, ws_url
from .mirror import Mirror, fully_evaluated

pytestmark = [pytest.mark.engine, pytest.mark.timeout(240)]

GAMES = {
    1: ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O", "Be7", "Re1", "b5"],
    2: ["d4", "d5", "c4", "e6", "Nc3", "Nf6", "Bg5", "Be7", "e3", "O-O", "Nf3", "h6"],
    3: ["e4", "c5", "Nf3", "d6", "d4", "cxd4", "Nxd4", "Nf6", "Nc3", "a6", "Be2", "e5"],
    4: ["c4", "e5", "Nc3", "Nf6", "Nf3", "Nc6", "g3", "d5", "cxd5", "Nxd5", "Bg2", "Nb6"],
}
WHITE = {1: "Alpha", 2: "Bravo", 3: "Charlie", 4: "Delta", 5: "Echo"}
GOOD = (1, 2, 4)
FIRST = 2  # plies on every board at the start
JUNK: list[bytes] = [
    b'{"moves": ["e4", ',  # invalid JSON
    b"[" * 50_000 + b"]" * 50_000,  # nested past any parser's depth
    b'{"chess960": 1e999, "moves": ["e4"]}',
    b'{"moves": ["e4 1e999", "e5 NaN"], "clock": {"white": NaN}}',
    b"[1, 2, 3]",
    b'{"moves": {"e4": 1}}',
    b'{"moves": ["e4", "e5", "Ke3", "Ke6", "Kd4", "d5"], "clock": {"black": -1}}',
    b'"garbage"',
    b'{"moves": ["e4 ' + b"9" * 5000 + b'", "e5", "Nf3"]}',
    b"\xff\xfe\x00junk",
    b'{"moves": [["e4"]], "result": 1e999}',
]
STEP_WAIT = 15.0  # seconds for one step to show (the feed polls every 0.1 s)


def _game_file(board: int, plies: int) -> Any:
    moves = [f"{san} {5400 - 10 * i}" for i, san in enumerate(GAMES[board][:plies])]
    doc = {"live": True, "chess960": 518, "result": None, "moves": moves, "clock": "CLOCK"}
    if board == 3:  # the clock object of this board is garbage in every version
        text = json.dumps(doc).replace('"CLOCK"', '{"white": 1e999, "black": 5300}')
        return text.encode()
    doc["clock"] = {"white": 5400 - 10 * plies, "black": 5390 - 10 * plies}
    return doc


def _white(board: int) -> str:
    return f"{WHITE[board]}, Ann"


def _plies(mirror: Mirror, board: int) -> int:
    for state in mirror.boards.values():
        if state["white"]["name"] == _white(board):
            return len(state["moves"])
    return 0


async def test_one_bad_lcc_board_does_not_stop_the_others(tmp_path: Any, pool: EnginePool) -> None:
    srv = LccServer()
    srv.docs["tournament.json"] = {"name": "Garbage Open", "rounds": [{"count": 5, "live": 5}]}
    srv.docs["round-1/index.json"] = {
        "date": "2024-05-01",
        "pairings": [
            {"white": _player("Ann", WHITE[b]), "black": _player("Bob", f"Opp{b}"), "result": "*"}
            for b in range(1, 6)
        ],
    }
    for b in GAMES:
        srv.docs[f"round-1/game-{b}.json"] = _game_file(b, FIRST)
    srv.docs["round-1/game-5.json"] = JUNK[0]
    feed = {
        "type": "lcc",
        "name": "lcc-live",
        "base_url": "",
        "tournament_id": "t1",
        "interval": 0.1,
    }
    async with srv.server:
        feed["base_url"] = srv.base_url
        settings = settings_for(tmp_path, feeds=[feed])
        service = Service(settings, evaluator=pool, perceived_model=toy_model())
        with structlog.testing.capture_logs() as logs:
            async with running(service), Mirror(ws_url(service)) as mirror:
                await mirror.wait(lambda m: all(_plies(m, b) == FIRST for b in GOOD), STEP_WAIT)
                loop = asyncio.get_running_loop()
                slowest = 0.0
                for plies in range(FIRST + 1, len(GAMES[1]) + 1):
                    for b in GAMES:
                        srv.docs[f"round-1/game-{b}.json"] = _game_file(b, plies)
                    srv.docs["round-1/game-5.json"] = JUNK[plies % len(JUNK)]
                    t0 = loop.time()
                    await mirror.wait(
                        lambda m, n=plies: all(_plies(m, b) == n for b in GOOD), STEP_WAIT
                    )
                    slowest = max(slowest, loop.time() - t0)
                final = len(GAMES[1])
                await mirror.wait(
                    lambda m: all(
                        fully_evaluated(s, final)
                        for s in m.boards.values()
                        if s["white"]["name"] in {_white(b) for b in GOOD}
                    )
                )
                # Board 3: its moves apply; the garbage clock does not.
                await mirror.wait(lambda m: _plies(m, 3) == final, STEP_WAIT)
                three = next(s for s in mirror.boards.values() if s["white"]["name"] == _white(3))
                # white: its last move's clock (the object's 1e999 is dropped); black: the object's
                assert (three["clocks"]["white"], three["clocks"]["black"]) == (5300, 5300)
                resp = await http_get(f"http://127.0.0.1:{service.server.port}/healthz")
                health = json.loads(resp.body)
    print(f"slowest step: {slowest:.2f} s")
    assert health["feeds"]["lcc-live"]["errors"] >= 2
    assert health["feed_errors"]["lcc-live"] >= 2
    feed_errors = [e for e in logs if e.get("event") == "feed_error"]
    board3 = [e for e in feed_errors if "round 1 board 3 (Charlie, Ann - Opp3, Bob)" in e["where"]]
    assert board3 and "white clock inf" in board3[0]["error"], feed_errors
    board5 = [e for e in feed_errors if "round 1 board 5 (Echo, Ann - Opp5, Bob)" in e["where"]]
    assert len(board5) >= 3, feed_errors  # each new kind of junk is reported, by board
    assert not [e for e in logs if e.get("event") == "feed_crashed"]
    assert all("internal error" not in e["error"] for e in feed_errors), feed_errors
