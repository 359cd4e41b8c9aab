"""LiveChess Cloud JSON: the parsers, and the feed against real local HTTP servers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import chess
import pytest

from livegain.feeds import LccFeedConfig, make_feed
from livegain.feeds.lcc import LccFeed
from livegain.feeds.lcc_json import (
    LccFormatError,
    LccMove,
    initial_position,
    parse_game_json,
    parse_move_token,
    player_info,
    player_name,
)
from livegain.relay.http import MiniHttpServer, Reply
from livegain.relay.replay import Replay

from .conftest import RecordingSink, cancel, run_feed

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("e4 1534+25", LccMove("e4", 1534, 25)),
        ("dxe4 63", LccMove("dxe4", 63, None)),
        ("fxe4 +31", LccMove("fxe4", None, 31)),
        ("Nc2 34+2", LccMove("Nc2", 34, 2)),
        ("Kxg3 1521", LccMove("Kxg3", 1521, None)),
        ("Nc6", LccMove("Nc6", None, None)),
        ("Bb5+ 1500+3", LccMove("Bb5+", 1500, 3)),
    ],
)
def test_move_tokens(token: str, expected: LccMove) -> None:
    assert parse_move_token(token) == expected


@pytest.mark.parametrize("token", ["", "  ", "e4 12:00", "e4 1+2+3", "e4 abc"])
def test_bad_move_tokens(token: str) -> None:
    with pytest.raises(LccFormatError):
        parse_move_token(token)


def test_clock_object_wins_over_the_last_moves_times() -> None:
    g = parse_game_json(
        {
            "chess960": 518,
            "moves": ["e4 1534+25", "e5 1538+22", "Nf3 1500"],
            "clock": {"white": 1490, "black": 1530, "time": 1714470000000},
            "result": None,
        },
        "g",
    )
    assert g.moves == ("e4", "e5", "Nf3") and g.clocks == (1534, 1538, 1500)
    assert (g.clock_white, g.clock_black) == (1490, 1530)
    assert g.spent == (25, 22, None) and g.initial_fen is None and not g.issues
    g = parse_game_json({"moves": ["e4 1534+25", "e5 1538+22", "Nf3 1500"], "clock": None}, "g")
    assert (g.clock_white, g.clock_black) == (1500, 1538)


def test_chess960_position_numbers() -> None:
    board, fen = initial_position(518)
    assert fen is None and board == chess.Board()
    board, fen = initial_position(0)
    assert fen == chess.Board.from_chess960_pos(0).fen()
    assert fen is not None and fen.startswith("bbqnnrkr")
    with pytest.raises(LccFormatError):
        initial_position(960)
    with pytest.raises(LccFormatError):
        initial_position("518x")
    # a Chess960 game: castling is king-takes-rook in position 0 (bbqnnrkr)
    g = parse_game_json({"chess960": 0, "moves": ["g3", "g6", "Ng2", "Ng7"]}, "g")
    assert g.moves == ("g3", "g6", "Ng2", "Ng7") and g.initial_fen is not None
    g = parse_game_json({"chess960": 1234, "moves": ["e4"]}, "round 1 board 3")
    assert g.moves == () and "round 1 board 3" in g.issues[0]


def test_both_result_vocabularies_and_illegal_moves() -> None:
    for raw, want in [
        ("WHITEWIN", "1-0"),
        ("BLACKWIN", "0-1"),
        ("DRAW", "1/2-1/2"),
        ("*", "*"),
        (None, None),
    ]:
        assert parse_game_json({"moves": [], "result": raw}, "g").result == want
    g = parse_game_json({"moves": [], "result": "WHITE_WINS"}, "g")
    assert "unknown result" in g.issues[0]
    g = parse_game_json({"moves": ["e4 100", "e5 100", "Ke3 90", "Nc6", "d4"]}, "round 2 board 4")
    assert g.moves == ("e4", "e5") and len(g.issues) == 1
    assert "ply 3 (2.Ke3 90)" in g.issues[0] and "keeping the 2 moves" in g.issues[0]
    assert parse_game_json([1, 2], "g").issues == ("g: not a JSON object",)
    assert parse_game_json({"moves": "e4 e5"}, "g").issues == ("g: 'moves' is not a list",)


def test_trailing_kings_in_the_centre_are_passed_on() -> None:
    g = parse_game_json(
        {"moves": ["e4 100", "e5 100", "Ke2 90", "Ke7 90", "Ke3 80", "Ke6 80", "Kd4 70", "Kd5"]},
        "g",
    )
    assert g.moves[-2:] == ("Kd4", "Kd5") and g.clocks[-2:] == (70, None)
    assert not g.issues


def test_null_player_fields() -> None:
    p = {
        "fname": None,
        "mname": None,
        "lname": None,
        "title": None,
        "federation": None,
        "gender": None,
        "fideid": None,
    }
    assert player_info(p).name == "?" and player_info(None).name == "?"
    full = {
        "fname": "Magnus",
        "mname": "Øen",
        "lname": "Carlsen",
        "title": "GM",
        "federation": "NOR",
        "gender": "male",
        "fideid": 1503014,
    }
    info = player_info(full)
    assert info.name == "Carlsen, Magnus Øen" and info.fide_id == "1503014"
    assert (info.title, info.federation) == ("GM", "NOR")
    assert player_name({"lname": "Ding"}) == "Ding"
    assert player_info({"fideid": 0}).fide_id is None


# --- the feed against a purpose-written LCC server --------------------------------------------


def _player(first: str, last: str, fide: int | None = None) -> dict[str, Any]:
    return {
        "fname": first,
        "mname": None,
        "lname": last,
        "title": "GM",
        "federation": None,
        "gender": None,
        "fideid": fide,
    }


class LccServer:
    """Serves a mutable dict of documents under /get/{id}/, with ETags, counting requests."""

    def __init__(self, tid: str = "t1") -> None:
        self.tid = tid
        self.docs: dict[str, Any] = {}
        self.status: dict[str, int] = {}
        self.requests: dict[str, int] = {}
        self.hang: set[str] = set()
        self.server = MiniHttpServer(self._handle)

    async def _handle(self, path: str, headers: Mapping[str, str]) -> Reply:
        prefix = f"/get/{self.tid}/"
        rel = path[len(prefix) :] if path.startswith(prefix) else path
        if rel in self.hang:
            await asyncio.sleep(30)  # a server that never answers this document
        return self._answer(path, headers)

    def _answer(self, path: str, headers: Mapping[str, str]) -> Reply:
        prefix = f"/get/{self.tid}/"
        rel = path[len(prefix) :] if path.startswith(prefix) else path
        self.requests[rel] = self.requests.get(rel, 0) + 1
        if rel in self.status:
            return Reply(self.status[rel], b"error")
        if rel not in self.docs:
            return Reply(404, b"no such document")
        doc = self.docs[rel]
        body = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
        etag = f'"{hash(body) & 0xFFFFFFFF:x}"'
        if headers.get("if-none-match") == etag:
            return Reply(304, headers={"ETag": etag})
        return Reply(200, body, "application/json", {"ETag": etag})

    @property
    def base_url(self) -> str:
        return self.server.base_url + "/get"


@pytest.fixture
async def lcc_server() -> Any:
    srv = LccServer()
    srv.docs["tournament.json"] = {
        "id": "t1",
        "name": "Test Open",
        "location": "Wijk",
        "country": "NED",
        "website": None,
        "timecontrol": "90 min/40 mov. + 30 min/rest. + 30 sec.",
        "rules": "STANDARD",
        "chess960": "STANDARD",
        "eboards": ["45753"],
        "rounds": [{"count": 2, "live": 0}, {"count": 2, "live": 2}],
    }
    srv.docs["round-1/index.json"] = {"date": "2024-04-29", "pairings": []}
    srv.docs["round-2/index.json"] = {
        "date": "2024-04-30",
        "pairings": [
            {
                "white": _player("Magnus", "Carlsen", 1503014),
                "black": _player("Anish", "Giri"),
                "result": "*",
                "live": True,
            },
            {
                "white": _player("Liren", "Ding"),
                "black": {"fname": None, "lname": None},
                "result": "*",
                "live": True,
            },
        ],
    }
    srv.docs["round-2/game-1.json"] = {
        "live": True,
        "serialNr": "7490",
        "firstMove": 1714470000000,
        "chess960": 518,
        "result": None,
        "comment": None,
        "clock": None,
        "moves": ["e4 5400+2", "e5 5398+3"],
    }
    async with srv.server:
        yield srv


async def test_lcc_feed_round_game_lifecycle(lcc_server: LccServer, sink: RecordingSink) -> None:
    feed = make_feed(
        LccFeedConfig(base_url=lcc_server.base_url, tournament_id="t1", rounds=[2], interval=0.05)
    )
    assert isinstance(feed, LccFeed)
    await feed.poll_once(sink)
    # game-2.json is missing (404): an empty game this poll, nothing emitted for it
    assert [s.board for s in sink.snapshots] == [1]
    s = sink.snapshots[0]
    assert s.game_id == "lcc:t1:2:1" and (s.round, s.board) == ("2", 1)
    assert s.white.name == "Carlsen, Magnus" and s.white.fide_id == "1503014"
    assert s.moves == ("e4", "e5") and s.clocks == (5400, 5398)
    assert s.event == "Test Open" and ("Date", "2024.04.30") in s.tags
    assert len(sink.errors) == 1 and "game-2.json" in sink.errors[0][1]
    assert "HTTP 404" in sink.errors[0][2]
    # next poll: the 404 is not reported again; game 1 unchanged -> nothing new
    await feed.poll_once(sink)
    assert len(sink.snapshots) == 1 and len(sink.errors) == 1
    # game 2 appears with a Chess960 start and null black player; game 1 goes on
    lcc_server.docs["round-2/game-2.json"] = {
        "chess960": 0,
        "moves": ["g3 5400", "g6"],
        "clock": {"white": 5390, "black": 5401},
    }
    lcc_server.docs["round-2/game-1.json"]["moves"].append("Nf3 5390+10")
    await feed.poll_once(sink)
    latest = sink.by_board()
    assert latest[2].initial_fen == chess.Board.from_chess960_pos(0).fen()
    assert latest[2].black.name == "?" and latest[2].clock_white == 5390
    assert latest[1].moves == ("e4", "e5", "Nf3")
    # the round ends: index result "1-0" is authoritative; the game file says WHITEWIN
    lcc_server.docs["round-2/index.json"]["pairings"][0]["result"] = "1-0"
    lcc_server.docs["round-2/game-1.json"]["result"] = "WHITEWIN"
    await feed.poll_once(sink)
    assert sink.by_board()[1].result == "1-0"
    assert ("LccResult", "1-0") in sink.by_board()[1].tags
    # a finished game read in full is not fetched again
    before = lcc_server.requests["round-2/game-1.json"]
    await feed.poll_once(sink)
    await feed.poll_once(sink)
    assert lcc_server.requests["round-2/game-1.json"] == before
    assert lcc_server.requests["round-2/game-2.json"] >= 3
    assert "round-1/index.json" not in lcc_server.requests  # rounds=[2]


async def test_a_game_file_that_fails_is_not_a_deleted_game(
    lcc_server: LccServer, sink: RecordingSink
) -> None:
    feed = LccFeed(LccFeedConfig(base_url=lcc_server.base_url, tournament_id="t1", rounds=[2]))
    await feed.poll_once(sink)
    n = len(sink.snapshots)
    lcc_server.status["round-2/game-1.json"] = 503
    await feed.poll_once(sink)
    await feed.poll_once(sink)
    assert len(sink.snapshots) == n  # no empty snapshot replaced the game
    assert sum("HTTP 503" in e[2] for e in sink.errors) == 1  # reported once per streak
    del lcc_server.status["round-2/game-1.json"]
    lcc_server.docs["round-2/game-1.json"] = b'{"moves": ["e4", '  # garbage JSON
    await feed.poll_once(sink)
    assert any("invalid JSON" in e[2] for e in sink.errors)
    lcc_server.docs["round-2/game-1.json"] = {"moves": ["e4", "e5", "Qxf7", "Nc6", "d4"]}
    await feed.poll_once(sink)
    assert sink.by_board()[1].moves == ("e4", "e5")
    err = sink.errors[-1]
    assert "round 2 board 1 (Carlsen, Magnus - Giri, Anish)" in err[1]
    assert "ply 3 (2.Qxf7)" in err[2]


async def test_tournament_json_failures_back_off(
    lcc_server: LccServer, sink: RecordingSink
) -> None:
    lcc_server.status["tournament.json"] = 500
    feed = LccFeed(
        LccFeedConfig(base_url=lcc_server.base_url, tournament_id="t1", interval=0.01),
        backoff=(0.05, 0.1, 0.2),
    )
    task = await run_feed(feed, sink)
    try:
        await sink.wait_for(lambda: lcc_server.requests.get("tournament.json", 0) >= 3)
        assert feed.backoff.failures >= 2
        del lcc_server.status["tournament.json"]
        await sink.wait_for(lambda: 1 in sink.by_board())
        await sink.wait_for(lambda: feed.backoff.failures == 0)
        # every round listed is followed by default
        assert "round-1/index.json" in lcc_server.requests
    finally:
        await cancel(task)
    assert sum("tournament.json" in e[1] for e in sink.errors) == 1


async def test_lcc_feed_follows_a_replay(sink: RecordingSink) -> None:
    pgn = (
        '[Event "R"]\n[Date "2024.05.01"]\n[White "Carlsen, Magnus"]\n[Black "Giri, Anish"]\n'
        '[WhiteFideId "1503014"]\n[Result "0-1"]\n[TimeControl "600+5"]\n\n'
        "1. e4 {[%clk 0:09:58]} c5 {[%clk 0:09:50]} 2. Nf3 {[%clk 0:09:40]} "
        "d6 {[%clk 0:09:51]} 0-1\n\n"
        '[Event "R"]\n[White "Ding"]\n[Black "Nepo"]\n[Result "1/2-1/2"]\n\n'
        "1. d4 Nf6 1/2-1/2\n"
    )
    replay = Replay.from_pgn(pgn, mode="lcc", tournament_id="rp")
    await replay.start(autoplay=False)
    feed = LccFeed(LccFeedConfig(base_url=replay.lcc_base_url, tournament_id="rp", interval=0.05))
    task = await run_feed(feed, sink)
    try:
        await sink.wait_for(lambda: len(sink.by_board()) == 2)
        await replay.advance(3)
        await replay.advance_all()
        await sink.wait_for(
            lambda: sink.by_board()[1].result == "0-1" and sink.by_board()[2].result == "1/2-1/2"
        )
        one = sink.by_board()[1]
        assert one.moves == ("e4", "c5", "Nf3", "d6")
        assert one.clocks == (598, 590, 580, 591)
        assert one.white.name == "Carlsen, Magnus" and one.white.fide_id == "1503014"
        assert one.game_id == "lcc:rp:1:1"
        assert sink.by_board()[2].moves == ("d4", "Nf6")
        assert sink.errors == []
        await asyncio.sleep(0.2)
    finally:
        await cancel(task)
        await replay.stop()


async def test_a_game_file_that_times_out_is_skipped_this_poll(
    lcc_server: LccServer, sink: RecordingSink
) -> None:
    lcc_server.docs["round-2/game-2.json"] = {"moves": ["d4 100"]}
    lcc_server.hang.add("round-2/game-1.json")
    feed = LccFeed(
        LccFeedConfig(base_url=lcc_server.base_url, tournament_id="t1", rounds=[2], timeout=2.0)
    )
    await feed.poll_once(sink)
    assert [s.board for s in sink.snapshots] == [2]  # board 1: nothing, not an empty game
    assert any("game-1.json" in e[1] and "timed out" in e[2] for e in sink.errors)
    lcc_server.hang.clear()
    await feed.poll_once(sink)
    assert sink.by_board()[1].moves == ("e4", "e5")


async def test_unchanged_game_files_are_not_parsed_again(
    lcc_server: LccServer, sink: RecordingSink, monkeypatch: pytest.MonkeyPatch
) -> None:
    import livegain.feeds.lcc as lcc_mod

    parsed: list[str] = []
    real = lcc_mod.parse_game_json

    def counting(data: object, where: str, max_plies: int | None = None) -> lcc_mod.LccGame:
        parsed.append(where)
        return real(data, where, max_plies)

    monkeypatch.setattr(lcc_mod, "parse_game_json", counting)
    feed = LccFeed(LccFeedConfig(base_url=lcc_server.base_url, tournament_id="t1", rounds=[2]))
    await feed.poll_once(sink)
    await feed.poll_once(sink)
    await feed.poll_once(sink)
    assert len(parsed) == 1  # game 1 once; game 2 is missing
    lcc_server.docs["round-2/game-1.json"]["moves"].append("Nf3 5390")
    await feed.poll_once(sink)
    assert len(parsed) == 2 and sink.by_board()[1].moves[-1] == "Nf3"


async def test_the_service_ply_limit_reaches_the_feed(
    lcc_server: LccServer, sink: RecordingSink
) -> None:
    """``[limits] max_plies`` (handed on by make_feed) refuses a longer game, named."""
    from livegain.feeds.base import make_feed

    cfg = LccFeedConfig(base_url=lcc_server.base_url, tournament_id="t1", rounds=[2])
    moves = len(lcc_server.docs["round-2/game-1.json"]["moves"])
    feed = make_feed(cfg, max_plies=moves - 1)
    assert isinstance(feed, LccFeed)
    await feed.poll_once(sink)
    assert 1 not in sink.by_board()
    assert any("max_plies" in message for _, where, message in sink.errors), sink.errors
