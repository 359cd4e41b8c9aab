"""`livegain watch TOURNAMENT` follows a whole event, unattended, from its first
round to its last: a real event relayed as Lichess and LiveChess Cloud serve a
live one (livegain.relay.event: round 1 live, then finished, round 2
paired and live, ...), the real service (Stockfish, the WebSocket, the
standings), a WebSocket client. Every game of every round is shown and
evaluated, and the final standings (points and tie-breaks) equal the event's
crosstable as its games give it."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import chess.pgn
import pytest
from cli.test_watch import read_until_url
from conftest import TATA_STEEL, need

from app.mirror import Mirror, fully_evaluated
from livegain.core.snapshot import PlayerInfo, player_key
from livegain.core.standings import Result, Standings
from livegain.relay.event import EventRelay

REPO = Path(__file__).resolve().parents[2]
DEMO_EVENT = REPO / "livegain" / "data" / "demo-event.pgn"
LIVEGAIN = [sys.executable, "-m", "livegain.cli"]
DEPTH = 3


def crosstable(text: str) -> tuple[dict[str, int], list[Result], dict[str, str]]:
    """Each game's plies by its players, the finished results (keyed as the
    service keys players) and each key's name, read straight from the PGN."""
    import io

    plies: dict[str, int] = {}
    results: list[Result] = []
    names: dict[str, str] = {}
    stream = io.StringIO(text)
    while (game := chess.pgn.read_game(stream)) is not None:
        h = game.headers
        white = PlayerInfo(h["White"], fide_id=h.get("WhiteFideId"))
        black = PlayerInfo(h["Black"], fide_id=h.get("BlackFideId"))
        plies[f"{h['White']} - {h['Black']}"] = len(list(game.mainline_moves()))
        rnd = int(h["Round"].split(".")[0])
        results.append(Result.game(player_key(white), player_key(black), h["Result"], round=rnd))
        names[player_key(white)], names[player_key(black)] = h["White"], h["Black"]
    return plies, results, names


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.loads(resp.read())


async def follow_whole_event(
    text: str, info_format: str | None, via: str, stockfish: str, events_wait: float
) -> dict[str, Any]:
    """Run the event through ``livegain watch``; the final standings message."""
    plies, results, names = crosstable(text)
    relay = EventRelay.from_pgn(text, info_format=info_format, hold=0.01)
    async with relay:
        relay.begin(1)
        await relay.advance(1, 20)  # round 1 under way when the command starts
        env = {**os.environ, "LIVEGAIN_ENGINE__WORKERS": "2"}
        if via == "lichess":
            source = relay.tournament_url
            extra = ["--lichess-url", relay.base_url]
        else:
            source = f"https://view.livechesscloud.com/#{relay.lcc_id}"
            extra = []
            env["LIVEGAIN_LCC_LOOKUP_URL"] = relay.lcc_lookup  # the tournament's host asked
        proc = await asyncio.create_subprocess_exec(
            *LIVEGAIN,
            "watch",
            source,
            *extra,
            "--port",
            "0",
            "--depth",
            str(DEPTH),
            "--engine",
            stockfish,
            "--interval",
            "0.3",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
        )
        try:
            out = "".join(await read_until_url(proc))
            m = re.search(r"live at (http://127\.0\.0\.1:(\d+)/)", out)
            assert m, out
            base = m.group(1)
            assert relay.name in out  # the tournament's name, read from the source

            def shown(mirror: Mirror, rounds: int) -> bool:
                """Every game of rounds 1..rounds shown, ended and evaluated."""
                want = {
                    k: n
                    for k, n in plies.items()
                    if any(
                        int(r.number) <= rounds
                        and any(
                            f"{s.white.name} - {s.black.name}" == k for s in r.replay.snapshots()
                        )
                        for r in relay.rounds
                    )
                }
                got = {
                    f"{s['white']['name']} - {s['black']['name']}": s
                    for s in mirror.boards.values()
                }
                return all(
                    k in got and got[k]["result"] != "*" and fully_evaluated(got[k], n)
                    for k, n in want.items()
                )

            async with Mirror(f"ws://127.0.0.1:{m.group(2)}/ws") as mirror:
                for rnd in relay.rounds:
                    if rnd.number > 1:
                        relay.begin(rnd.number)
                    await relay.advance(rnd.number)
                    relay.finish(rnd.number)
                    await mirror.wait(lambda mm, n=rnd.number: shown(mm, n), wait=events_wait)
                # Placed by the source: the tournament's name, the round's number.
                for state in mirror.boards.values():
                    assert state["tournament"] == relay.name
                    assert state["round"] is not None and state["round"].isdigit()
                    assert state["board"] is not None
                assert len(mirror.boards) == len(plies)
            # The final standings, as soon as the last computation has every result.
            url = f"{base}api/standings/{urllib.parse.quote(relay.name)}"
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 60
            while True:
                try:
                    msg = await asyncio.to_thread(get_json, url)
                except OSError:
                    msg = None
                if msg is not None and msg["finished"] == len(results) and msg["live"] == 0:
                    break
                assert loop.time() < deadline, f"standings not final: {msg}"
                await asyncio.sleep(0.5)
            expected = Standings.from_results(
                results, tiebreaks=tuple(msg["tiebreaks"]), players=list(names)
            )
            got = {r["key"]: r for r in msg["rows"]}
            assert set(got) == set(names)
            for row in expected.rows:
                mine = got[row.player]
                assert (mine["rank"], mine["points"], mine["games"]) == (
                    row.rank,
                    row.points,
                    row.rounds,
                ), row.player
                tiebreaks = dict(zip(msg["tiebreaks"], row.tiebreaks, strict=True))
                assert mine["tiebreaks"] == pytest.approx(tiebreaks), row.player
                # The player table counts the whole event.
                assert mine["rated_games"] <= mine["games"]
            health = await asyncio.to_thread(get_json, f"{base}healthz")
            # which format the event was read as, and why (the source's words)
            fmt = health["standings"]["formats"][relay.name]
            assert fmt["format"] == msg["format"] and fmt["why"].startswith("format: ")
            status = next(iter(health["feeds"].values()))["status"]
            if via == "lichess":
                assert status["finished_rounds_read"] == len(relay.rounds)
                assert status["why"] == "every round is finished"
            else:
                assert status["finished_rounds"] == [r.number for r in relay.rounds]
            # Lichess asks for one request at a time: never two at once.
            assert relay.max_in_flight <= 1
        finally:
            if proc.returncode is None:
                proc.send_signal(signal.SIGINT)
            async with asyncio.timeout(60):
                _, err = await proc.communicate()
        assert proc.returncode == 0, err.decode()
    return msg


@pytest.mark.engine
@pytest.mark.parametrize("via", ["lichess", "lcc"])
async def test_watch_follows_the_demo_event_from_round_1_to_round_5(
    via: str, stockfish: str
) -> None:
    text = DEMO_EVENT.read_text(encoding="utf-8")
    await follow_whole_event(text, "5-round Swiss", via, stockfish, events_wait=180)


@pytest.mark.engine
async def test_watch_follows_tata_steel_2022_from_round_1_to_round_13(stockfish: str) -> None:
    need(TATA_STEEL.exists(), f"{TATA_STEEL} not present (the shared data beside the checkout)")
    text = TATA_STEEL.read_text(encoding="utf-8")
    msg = await follow_whole_event(
        text, "14-player round robin", "lichess", stockfish, events_wait=240
    )
    # The official result: Carlsen first alone with 9.5/13, every player 13 games.
    first = msg["rows"][0]
    assert (first["name"], first["rank"], first["points"]) == ("Carlsen, Magnus", 1, 9.5)
    assert msg["rows"][1]["rank"] == 2
    assert all(r["games"] == 13 and r["rated_games"] == 13 for r in msg["rows"])
    assert msg["format"] == "round-robin"
