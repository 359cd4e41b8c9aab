"""Live standings through the whole service: a replayed round robin, Stockfish, a
WebSocket client that asked for the standings, and /api/standings."""

from __future__ import annotations

import asyncio
import json
import math
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from livegain.config import ConfigError, load_settings
from livegain.engine.pool import EnginePool

from .conftest import relayed_event, ws_url

EVENT = "Standings Test RR"


def game(rnd: str, white: str, black: str, elo: tuple[int, int], moves: str, result: str) -> str:
    return (
        f'[Event "{EVENT}"]\n[Round "{rnd}"]\n[White "{white}"]\n[Black "{black}"]\n'
        f'[WhiteElo "{elo[0]}"]\n[BlackElo "{elo[1]}"]\n[Result "{result}"]\n\n'
        f"{moves} {result}\n"
    )


# Round 1 of a 4-player round robin: a scholar's mate (1-0 on its 7th ply) and a
# game still in progress; the 4 other pairings are not on any board.
MATE = "1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7#"
ROUND = (
    game("1.1", "Alpha, Ann", "Beta, Bob", (2600, 2600), MATE, "1-0")
    + "\n"
    + game("1.2", "Gamma, Gil", "Delta, Dan", (2500, 2500), "1. d4 d5 2. c4 e6 3. Nc3", "*")
)


class StandingsClient:
    """A WebSocket client that asked for every event's standings."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.got: list[dict[str, Any]] = []

    async def wait(self, check: Callable[[dict[str, Any]], bool]) -> Any:
        async with asyncio.timeout(40):
            while True:
                if self.got and check(self.got[-1]):
                    return self.got[-1]
                msg = json.loads(await self.ws.recv())
                if msg["type"] == "standings":
                    self.got.append(msg)


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as answer:
        return json.loads(answer.read())


def rows(msg: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in msg["rows"]}


def sums_to_one(msg: dict[str, Any]) -> bool:
    total = float(sum(r["win"] for r in msg["rows"]))
    error = math.sqrt(sum(r["win_se"] ** 2 for r in msg["rows"]))
    return abs(total - 1.0) <= 4 * error + 1e-9


@pytest.mark.engine
async def test_standings_follow_the_live_game_and_its_result(
    tmp_path: Path, pool: EnginePool
) -> None:
    events = [{"name": EVENT.upper(), "format": "round-robin", "sims": 20_000}]
    async with relayed_event(tmp_path, pool, ROUND, events) as (replay, service, ws):
        client = StandingsClient(ws)
        # every move but the mate: both games in progress
        last = next(k for k, (_, i, ply) in enumerate(replay.timeline) if (i, ply) == (0, 7))
        await replay.advance(last)
        live = await client.wait(lambda m: m["live"] == 2 and m["plies"] == last)
        assert (live["event"], live["format"], live["finished"], live["upcoming"]) == (
            EVENT,  # the name as the boards carry it, not as configured
            "round-robin",
            0,
            4,  # the pairs not met: A-C, A-D, B-C, B-D
        )
        assert (live["tiebreaks"], live["sims"], live["rounds"]) == (
            ["DE", "SB", "WIN"],
            20_000,
            3,
        )
        assert all(r["live"] and r["points"] == 0.0 for r in live["rows"])
        assert sums_to_one(live)
        # the mate arrives: Alpha has won, Gamma and Delta still play
        await replay.advance(1)
        done = await client.wait(lambda m: m["finished"] == 1)
        assert done["version"] > live["version"] and (done["live"], done["upcoming"]) == (1, 4)
        table = rows(done)
        alpha, beta = table["Alpha, Ann"], table["Beta, Bob"]
        assert (alpha["rank"], alpha["points"], alpha["games"], alpha["live"]) == (
            1,
            1.0,
            1,
            False,
        )
        assert (beta["rank"], beta["points"], beta["live"]) == (2, 0.0, False)
        # tied on 0 with Beta, whom they have not met: the same rank
        for name in ("Gamma, Gil", "Delta, Dan"):
            assert (table[name]["rank"], table[name]["live"]) == (2, True)
        assert alpha["tiebreaks"] == {"DE": None, "SB": 0.0, "WIN": 1.0}
        assert alpha["win"] > beta["win"] and sums_to_one(done)
        # the same message over HTTP, alone and among every event's
        base = service.url
        one = await asyncio.to_thread(get, f"{base}api/standings/{urllib.parse.quote(EVENT)}")
        every = await asyncio.to_thread(get, f"{base}api/standings")
        latest = client.got[-1]
        assert one == latest and latest in every
        with pytest.raises(urllib.error.HTTPError) as missing:
            await asyncio.to_thread(get, f"{base}api/standings/Nope")
        assert missing.value.code == 404
        # a client that asks later gets the latest at once
        async with connect(ws_url(service)) as late:
            await late.recv()  # hello
            await late.send(json.dumps({"type": "subscribe_standings", "events": [EVENT]}))
            async with asyncio.timeout(10):
                assert json.loads(await late.recv()) == latest


def test_events_configuration(tmp_path: Path) -> None:
    pgn = tmp_path / "left.pgn"
    pgn.write_text(
        '[White "Alpha, Ann"]\n[Black "Beta, Bob"]\n[Round "3.1"]\n[Result "*"]\n\n*\n\n'
        '[White "Gamma, Gil"]\n[Black "Delta, Dan"]\n[Round "2.2"]\n[Result "1-0"]\n\n1-0\n'
    )
    lines = tmp_path / "left.txt"
    lines.write_text("# round 3\nAlpha, Ann - Beta, Bob\n\nVachier-Lagrave - Gamma\n")
    events = [
        {"name": "A", "pairings": [["Alpha", "Beta", "3"], ["Gamma", "Delta"]]},
        {"name": "B", "format": "swiss", "pairings": str(pgn), "points_before": {"Alpha": 2.5}},
        {"name": "C", "pairings": str(lines), "tiebreaks": ["SB", "WIN"], "playoff": "rating"},
    ]
    s = load_settings(None, events=events)
    a, b, c = (e.rules() for e in s.events)
    assert [(p.white, p.black, p.round) for p in a.pairings] == [
        ("Alpha", "Beta", 3),
        ("Gamma", "Delta", None),
    ]
    # sims not given: the format's default (100,000; a Swiss to its end 10,000)
    assert (a.format, a.order, a.sims, a.draw_rate, a.rounds, a.top_k) == (
        "round-robin",
        ("DE", "SB", "WIN"),
        None,
        0.5,
        None,
        3,
    )
    assert [(p.white, p.black, p.round) for p in b.pairings] == [("Alpha, Ann", "Beta, Bob", 3)]
    assert (b.order, b.points_before) == (("BH-C1", "BH", "SB"), (("Alpha", 2.5),))
    assert [(p.white, p.black) for p in c.pairings] == [
        ("Alpha, Ann", "Beta, Bob"),
        ("Vachier-Lagrave", "Gamma"),
    ]
    assert (c.order, c.playoff) == (("SB", "WIN"), "rating")
    bad = [
        ({"name": "X", "tiebreaks": ["XX"]}, "unknown tie-break"),
        ({"name": "X", "format": "arena"}, "events.0.format"),
        ({"name": "X", "format": "knockout", "bracket": "spiral"}, "events.0.bracket"),
        ({"name": "X", "cycles": 3}, "events.0.cycles"),
        ({"name": "X", "points_before": {"A": 1.2}}, "multiple of 1/2"),
        ({"name": "X", "pairings": [["A"]]}, "expected [white, black]"),
        ({"name": "X", "pairings": str(tmp_path / "nope.txt")}, "pairings file"),
    ]
    for entry, needle in bad:
        with pytest.raises(ConfigError, match=re.escape(needle)):
            load_settings(None, events=[entry])
