"""The replay: timing from clocks, the round advancing together, its HTTP server, the CLI."""

from __future__ import annotations

import asyncio
import json
from email.utils import formatdate, parsedate_to_datetime
from pathlib import Path

import pytest

from livegain.cli import main
from livegain.feeds._http import http_get
from livegain.feeds.pgn import parse_pgn
from livegain.relay.replay import Replay, ReplayError, move_times, time_control

pytestmark = pytest.mark.timeout(60)

CLOCKS = (
    '[White "A"]\n[Black "B"]\n[TimeControl "600+5"]\n[Result "1-0"]\n\n'
    "1. e4 {[%clk 0:09:58]} e5 {[%clk 0:09:50]} {[%emt 0:00:15]} 2. Nf3 {[%clk 0:09:40]} "
    "Nc6 3. Bb5 {[%clk 0:09:45]} 1-0\n"
)
PLAIN = '[White "C"]\n[Black "D"]\n[Result "0-1"]\n\n1. d4 d5 2. c4 0-1\n'


def test_move_times_from_emt_clocks_increment_or_fixed() -> None:
    (g,) = parse_pgn(CLOCKS)
    spent, times = move_times(g, seconds_per_move=7)
    # e4: 600 - 598 + 5 = 7; e5: emt 15 wins; Nf3: 598 - 580 + 5 = 23; Nc6: none -> 7;
    # Bb5: 580 - 585 + 5 = 0
    assert spent == [7, 15, 23, None, 0]
    assert times == [7, 22, 45, 52, 52]
    (p,) = parse_pgn(PLAIN)
    assert move_times(p, 3)[1] == [3, 6, 9]
    assert time_control("40/5400+30:1800+30") == (5400, 30)
    assert time_control("-") == (None, 0)


async def test_games_advance_together_and_results_wait_for_the_last_move() -> None:
    replay = Replay.from_pgn(CLOCKS + "\n" + PLAIN, seconds_per_move=7)
    # timeline: A-B at 7, 22, 45, 52, 52; C-D at 7, 14, 21
    assert [(t, i) for t, i, _ in replay.timeline] == [
        (7, 0),
        (7, 1),
        (14, 1),
        (21, 1),
        (22, 0),
        (45, 0),
        (52, 0),
        (52, 0),
    ]
    assert await replay.advance(4) == 4
    a, c = replay.snapshots()
    assert a.moves == ("e4",) and a.result == "*"
    assert c.moves == ("d4", "d5", "c4") and c.result == "0-1"  # over: its result shows
    await replay.advance_all()
    a = replay.snapshot(0)
    assert a.result == "1-0" and a.clock_white == 585 and a.clock_black == 590
    assert replay.finished and replay.done.is_set()
    assert await replay.advance() == 0
    await replay.reset()
    assert replay.snapshot(0).moves == () and not replay.finished


async def test_autoplay_runs_on_the_clock_and_loops() -> None:
    replay = Replay.from_pgn(PLAIN, speed=1000, seconds_per_move=1, loop=True, loop_pause=0.01)
    await replay.start(autoplay=True)
    try:
        async with asyncio.timeout(10):
            while replay.rounds_played < 2:  # noqa: ASYNC110 (polling a counter)
                await asyncio.sleep(0.01)
    finally:
        await replay.stop()
    assert replay.rounds_played >= 2


async def test_replay_http_etag_last_modified_and_404() -> None:
    replay = Replay.from_pgn(CLOCKS, tournament_id="t9")
    await replay.start(autoplay=False)
    try:
        r = await http_get(replay.pgn_url)
        assert r.status == 200 and '[Result "*"]' in r.text()
        etag, modified = r.headers["etag"], r.headers["last-modified"]
        r = await http_get(replay.pgn_url, headers={"If-None-Match": etag})
        assert r.status == 304 and r.body == b""
        r = await http_get(replay.pgn_url, headers={"If-Modified-Since": modified})
        assert r.status == 200  # same second as the change: it may have changed since
        later = formatdate(parsedate_to_datetime(modified).timestamp() + 1, usegmt=True)
        r = await http_get(replay.pgn_url, headers={"If-Modified-Since": later})
        assert r.status == 304
        await replay.advance(2)
        r = await http_get(replay.pgn_url, headers={"If-None-Match": etag})
        assert r.status == 200 and r.headers["etag"] != etag
        assert (
            "1. e4 {[%clk 0:09:58] [%emt 0:00:07]} e5 {[%clk 0:09:50] [%emt 0:00:15]} *" in r.text()
        )
        g = json.loads((await http_get(replay.lcc_base_url + "/t9/round-1/game-1.json")).body)
        assert g["moves"] == ["e4 598+7", "e5 590+15"] and g["chess960"] == 518
        assert g["result"] is None and g["live"] is True
        t = json.loads((await http_get(replay.lcc_base_url + "/t9/tournament.json")).body)
        assert t["rounds"] == [{"count": 1, "live": 1}]
        for bad in (
            "/nope",
            "/game-2.pgn",
            "/get/other/tournament.json",
            "/get/t9/round-2/index.json",
        ):
            assert (await http_get(replay.base_url + bad)).status == 404
    finally:
        await replay.stop()


def test_replay_refuses_nonsense(tmp_path: Path) -> None:
    with pytest.raises(ReplayError, match="no playable game"):
        Replay.from_pgn("garbage")
    with pytest.raises(ReplayError, match="speed"):
        Replay.from_pgn(PLAIN, speed=0)
    with pytest.raises(ReplayError, match="unknown mode"):
        Replay.from_pgn(PLAIN, mode="carrier-pigeon")  # type: ignore[arg-type]
    with pytest.raises(ReplayError, match="No such file"):
        Replay.from_file(tmp_path / "missing.pgn")


def test_cli_replay_runs_a_round_to_the_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "round.pgn"
    f.write_text(CLOCKS + "\n" + PLAIN)
    code = main(
        ["replay", str(f), "--speed", "100000", "--seconds-per-move", "0.01", "--exit-when-done"]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "replaying 2 games, 8 moves" in out and "/games.pgn" in out
    assert "all games over" in out


def test_cli_replay_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(tmp_path / "nope.pgn")]) == 2
    assert "no such file" in capsys.readouterr().err
    f = tmp_path / "junk.pgn"
    f.write_text("junk")
    assert main(["replay", str(f)]) == 2
    assert "no playable game" in capsys.readouterr().err
    f.write_text(PLAIN)
    assert main(["replay", str(f), "--speed", "-1"]) == 2
