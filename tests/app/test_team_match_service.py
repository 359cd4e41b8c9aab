"""A team event through the whole service: boards whose WhiteTeam/BlackTeam
name teams give the event's standings message a team table (team standings
and the latest round's match board by board, with its odds), live."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from team_games import team_game
from websockets.asyncio.client import connect

from livegain.app.service import Service
from livegain.engine.pool import EnginePool
from livegain.feeds.base import PgnHttpFeedConfig
from livegain.feeds.replay import Replay

from .conftest import running, settings_for, toy_model, ws_url

EVENT = "Team Test League"
MATE = "1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7#"
SLOW = "1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. Bg5 Be7"


def game(rnd: str, white: str, wt: str, black: str, bt: str, moves: str, result: str) -> str:
    return team_game(EVENT, rnd, white, wt, black, bt, moves, result)


# Round 1 between the Rooks and the Knights, 4 boards (colours alternating):
# board 1 the Rooks mate, board 2 a game going on, boards 3-4 no move yet.
PGN = (
    game("1.1", "Rook, Ann", "Rooks", "Knight, Bob", "Knights", MATE, "1-0")
    + game("1.2", "Knight, Cy", "Knights", "Rook, Dee", "Rooks", SLOW, "*")
    + game("1.3", "Rook, Eve", "Rooks", "Knight, Fay", "Knights", "", "*")
    + game("1.4", "Knight, Gus", "Knights", "Rook, Hal", "Rooks", "", "*")
)


@pytest.mark.engine
async def test_a_team_match_board_by_board_with_its_odds(tmp_path: Path, pool: EnginePool) -> None:
    replay = Replay.from_pgn(PGN, mode="pgn-http", seconds_per_move=1.0)
    await replay.start(autoplay=False)
    try:
        feed = PgnHttpFeedConfig(name="relay", url=replay.pgn_url, interval=0.2)
        events = [{"name": EVENT, "format": "swiss", "sims": 2000}]
        settings = settings_for(tmp_path, feeds=[feed.model_dump()], events=events)
        service = Service(settings, evaluator=pool, perceived_model=toy_model())
        async with running(service), connect(ws_url(service)) as ws:
            assert json.loads(await ws.recv())["type"] == "hello"
            await ws.send(json.dumps({"type": "subscribe_standings", "events": "*"}))
            await replay.advance_all()

            async def latest(check: Any) -> dict[str, Any]:
                async with asyncio.timeout(60):
                    while True:
                        msg = json.loads(await ws.recv())
                        if msg["type"] == "standings" and check(msg):
                            return msg

            msg = await latest(
                lambda m: (
                    m["teams"] is not None
                    and m["finished"] == 1
                    and m["teams"]["matches"][0]["boards"][1]["live"]
                )
            )
            teams = msg["teams"]
            assert teams["round"] == 1 and teams["tiebreaks"] == ["OSB", "GP", "BH-C1"]
            (match,) = teams["matches"]
            assert (match["a"], match["b"], match["score_a"], match["score_b"]) == (
                "Rooks",
                "Knights",
                1.0,
                0.0,
            )
            assert match["boards_left"] == 3
            boards = match["boards"]
            assert [b["board"] for b in boards] == [1, 2, 3, 4]
            assert [b["a_white"] for b in boards] == [True, False, True, False]
            assert boards[0]["result"] == "1-0" and boards[0]["wdl"] is None
            assert [b["live"] for b in boards] == [False, True, False, False]
            assert all(sum(b["wdl"]) == pytest.approx(1000, abs=0.5) for b in boards[1:])
            # the Rooks, a board up with three to play, are the favourites
            assert match["win"] > match["loss"]
            assert match["win"] + match["draw"] + match["loss"] == pytest.approx(1, abs=1e-3)
            # no match finished yet: both teams on 0
            assert {r["team"]: r["match_points"] for r in teams["rows"]} == {
                "Rooks": 0.0,
                "Knights": 0.0,
            }
    finally:
        await replay.stop()
