"""LiveChess Cloud: one bad document never stops the other boards (real local HTTP server).

Each case serves a round of three boards where board 2's game file (or its
pairing) is bad in one way; boards 1 and 3 must be applied in the same poll,
the poll must succeed (no back-off), and the error must name the feed, the
round and the board.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from livegain.feeds import LccFeedConfig
from livegain.feeds.lcc import LccFeed
from livegain.feeds.lcc_json import MAX_CLOCK_SECONDS

from .conftest import RecordingSink
from .test_lcc import LccServer, _player

pytestmark = pytest.mark.timeout(60)

GOOD_1 = {"live": True, "chess960": 518, "moves": ["e4 5400+2", "e5 5398+3", "Nf3 5390"]}
GOOD_3 = {"live": True, "chess960": 518, "moves": ["d4 5400", "d5 5399"]}
PLAYERS = {
    1: ("Alpha", "Ann"),
    2: ("Bravo", "Bob"),
    3: ("Charlie", "Cid"),
}


def _pairing(board: int) -> dict[str, Any]:
    last, first = PLAYERS[board]
    return {
        "white": _player(first, last),
        "black": _player("X", f"Opp{board}"),
        "result": "*",
        "live": True,
    }


@pytest.fixture
async def round_server() -> Any:
    srv = LccServer()
    srv.docs["tournament.json"] = {"name": "Iso Open", "rounds": [{"count": 3, "live": 3}]}
    srv.docs["round-1/index.json"] = {
        "date": "2024-05-01",
        "pairings": [_pairing(b) for b in (1, 2, 3)],
    }
    srv.docs["round-1/game-1.json"] = GOOD_1
    srv.docs["round-1/game-2.json"] = {"moves": ["c4 5400"]}
    srv.docs["round-1/game-3.json"] = GOOD_3
    async with srv.server:
        yield srv


def _feed(srv: LccServer, **kw: Any) -> LccFeed:
    return LccFeed(LccFeedConfig(name="lcc-iso", base_url=srv.base_url, tournament_id="t1", **kw))


def _assert_others_applied(sink: RecordingSink) -> None:
    boards = sink.by_board()
    assert boards[1].moves == ("e4", "e5", "Nf3"), sink.error_text()
    assert boards[3].moves == ("d4", "d5"), sink.error_text()


def _board2_errors(sink: RecordingSink) -> list[tuple[str, str, str]]:
    return [e for e in sink.errors if "round 1 board 2 (Bravo, Bob - Opp2, X)" in e[1]]


# Raw bodies: several cannot be written by json.dumps (1e999, NaN, a 5000-digit clock).
BAD_GAME_FILES: dict[str, tuple[bytes, str]] = {
    "clock 1e999": (b'{"moves": ["c4 5400"], "clock": {"white": 1e999, "black": 5300}}', "inf"),
    "clock NaN": (b'{"moves": ["c4 5400"], "clock": {"white": NaN, "black": 5300}}', "nan"),
    "negative clock": (b'{"moves": ["c4 5400"], "clock": {"white": -5, "black": 5300}}', "-5"),
    "clock as a string": (b'{"moves": ["c4"], "clock": {"white": "5400", "black": 1}}', "'5400'"),
    "huge move clock": (b'{"moves": ["c4 5400", "e5 ' + b"9" * 5000 + b'"]}', "clock"),
    "5000-digit trailing": (
        b'{"moves": ["c4 5400", "e5 9", "Nf3 ' + b"9" * 5000 + b'"]}',
        "ply 3 (2.Nf3",
    ),
    "chess960 1e999": (b'{"chess960": 1e999, "moves": ["c4"]}', "chess960"),
    "moves an object": (b'{"moves": {"1": "c4"}}', "'moves' is not a list"),
    "a token a list": (b'{"moves": ["c4", ["e5"], "Nf3"]}', "ply 2"),
    "illegal move": (b'{"moves": ["c4", "e5", "Ke3", "Nc6", "Nf3"]}', "ply 3 (2.Ke3)"),
    "not an object": (b"[1, 2, 3]", "not a JSON object"),
    "a string": (b'"c4 e5"', "not a JSON object"),
    "deep nesting": (b"[" * 100_000 + b"]" * 100_000, "nested deeper"),
    "nesting under the limit of json": (b'{"moves": ' + b"[" * 500 + b"]" * 500 + b"}", "nested"),
    "invalid JSON": (b'{"moves": ["c4", ', "invalid JSON"),
    "not UTF-8": (b'{"moves": ["\xff\xfe c4"]}', "ply 1"),
    "unknown fields and result": (b'{"moves": ["c4"], "x": {"y": 1e999}, "result": 7}', "result"),
}


@pytest.mark.parametrize("case", list(BAD_GAME_FILES))
async def test_a_bad_game_file_is_named_and_the_other_boards_apply(
    round_server: LccServer, sink: RecordingSink, case: str
) -> None:
    body, mentioned = BAD_GAME_FILES[case]
    round_server.docs["round-1/game-2.json"] = body
    feed = _feed(round_server)
    assert await feed.poll_once(sink) is True  # the poll itself succeeded: no back-off
    _assert_others_applied(sink)
    errors = _board2_errors(sink)
    assert errors, f"no error naming board 2; errors:\n{sink.error_text()}"
    assert all(e[0] == "lcc-iso" for e in sink.errors)  # the feed is named
    assert any(mentioned in e[2] for e in errors), sink.error_text()
    # A snapshot of board 2, when there is one, holds only sane values.
    snap = sink.by_board().get(2)
    if snap is not None:
        assert all(c is None or 0 <= c <= MAX_CLOCK_SECONDS for c in snap.clocks)
        for c in (snap.clock_white, snap.clock_black):
            assert c is None or 0 <= c <= MAX_CLOCK_SECONDS
    # Reported once, not on every poll; the next polls are unaffected.
    n = len(sink.errors)
    await feed.poll_once(sink)
    await feed.poll_once(sink)
    assert len(sink.errors) == n
    # The game file is repaired: board 2 applies, the others stay as they were.
    round_server.docs["round-1/game-2.json"] = {"moves": ["c4 5400", "e5 5300"]}
    assert await feed.poll_once(sink) is True
    assert sink.by_board()[2].moves == ("c4", "e5")
    _assert_others_applied(sink)


async def test_a_bad_clock_keeps_the_moves_and_the_other_clock(
    round_server: LccServer, sink: RecordingSink
) -> None:
    round_server.docs["round-1/game-2.json"] = (
        b'{"moves": ["c4 5400", "e5 5390"], "clock": {"white": 1e999, "black": 5300}}'
    )
    await _feed(round_server).poll_once(sink)
    two = sink.by_board()[2]
    assert two.moves == ("c4", "e5")
    assert (two.clock_white, two.clock_black) == (5400, 5300)  # the move's clock, the object's
    assert "white clock inf is not 0..1000000 seconds" in _board2_errors(sink)[0][2]


async def test_a_game_file_that_turns_bad_keeps_the_board_as_it_was(
    round_server: LccServer, sink: RecordingSink
) -> None:
    round_server.docs["round-1/game-2.json"] = {"moves": ["c4 5400", "e5 5300"]}
    feed = _feed(round_server)
    await feed.poll_once(sink)
    n = len(sink.snapshots)
    for body in (b"[1]", b'{"moves": 5}', b'{"chess960": -1, "moves": []}'):
        round_server.docs["round-1/game-2.json"] = body
        await feed.poll_once(sink)
    assert len(sink.snapshots) == n  # no empty game replaced board 2
    assert sink.by_board()[2].moves == ("c4", "e5")
    assert feed.bad_games == 3
    assert len(_board2_errors(sink)) == 3


BAD_PAIRINGS: dict[str, tuple[Any, str]] = {
    "white a list": ([1, 2], "white [1, 2] is not an object"),
    "name fields of every type": (
        {"fname": ["x"], "lname": {"a": 1}, "title": 5, "federation": 1e300},
        "is not a string",
    ),
    "rating 1e999": ({"lname": "Bravo", "fname": "Bob", "rating": float("inf")}, "rating inf"),
    "rating 10**100": ({"lname": "Bravo", "fname": "Bob", "rating": 10**100}, "rating"),
    "rating a string": ({"lname": "Bravo", "fname": "Bob", "rating": "2700"}, "rating '2700'"),
    "fideid superscript": ({"lname": "Bravo", "fname": "Bob", "fideid": "²"}, "fideid '²'"),
    "fideid 5000 digits": ({"lname": "Bravo", "fname": "Bob", "fideid": "9" * 5000}, "fideid"),
}


@pytest.mark.parametrize("case", list(BAD_PAIRINGS))
async def test_a_bad_pairing_is_named_and_the_other_boards_apply(
    round_server: LccServer, sink: RecordingSink, case: str
) -> None:
    white, mentioned = BAD_PAIRINGS[case]
    index = round_server.docs["round-1/index.json"]
    index["pairings"][1]["white"] = white
    round_server.docs["round-1/index.json"] = json.dumps(index).encode()  # inf -> Infinity
    sink_feed = _feed(round_server)
    assert await sink_feed.poll_once(sink) is True
    _assert_others_applied(sink)
    two = sink.by_board()[2]
    assert two.moves == ("c4",)  # the game itself is fine
    assert two.white.rating is None or 1 <= two.white.rating <= 3999
    assert two.white.fide_id is None or len(two.white.fide_id) <= 12
    errors = [e for e in sink.errors if "round 1 board 2" in e[1]]
    assert any(mentioned in e[2] for e in errors), sink.error_text()


async def test_a_pairing_that_is_not_an_object_skips_only_its_board(
    round_server: LccServer, sink: RecordingSink
) -> None:
    index = round_server.docs["round-1/index.json"]
    index["pairings"][1] = "Bravo - Opp2"
    await _feed(round_server).poll_once(sink)
    _assert_others_applied(sink)
    assert 2 not in sink.by_board()
    assert any("round 1 board 2: pairing" in e[2] for e in sink.errors)


@pytest.mark.parametrize(
    ("body", "mentioned"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "nested deeper"),
        (b'{"pairings": {"1": 2}}', "no 'pairings' list"),
        (b'{"pairings": [], "date": 1e999}', None),
        (b"NaN", "no 'pairings' list"),
    ],
)
async def test_a_bad_round_index_skips_that_round_only(
    round_server: LccServer, sink: RecordingSink, body: bytes, mentioned: str | None
) -> None:
    round_server.docs["tournament.json"]["rounds"].insert(0, {"count": 1, "live": 0})
    # round 1 is the bad one now; the good round moves to round 2
    for name in ("index.json", "game-1.json", "game-2.json", "game-3.json"):
        round_server.docs[f"round-2/{name}"] = round_server.docs.pop(f"round-1/{name}")
    round_server.docs["round-1/index.json"] = body
    feed = _feed(round_server)
    assert await feed.poll_once(sink) is True
    boards = {s.board: s for s in sink.snapshots if s.round == "2"}
    assert boards[1].moves == ("e4", "e5", "Nf3") and boards[3].moves == ("d4", "d5")
    assert boards[2].moves == ("c4",)
    if mentioned is not None:
        errs = [e for e in sink.errors if "round 1" in e[1] and "index.json" in e[1]]
        assert any(mentioned in e[2] for e in errs), sink.error_text()


async def test_a_document_past_max_bytes_is_refused_by_name(
    round_server: LccServer, sink: RecordingSink
) -> None:
    filler = ["c4 5400"] + ["x" * 1000] * 1100  # about 1.1 MB
    round_server.docs["round-1/game-2.json"] = {"moves": filler}
    feed = _feed(round_server)
    assert feed.max_bytes == 1024 * 1024  # the default of the lcc feed's max_bytes
    assert await feed.poll_once(sink) is True
    _assert_others_applied(sink)
    assert 2 not in sink.by_board()
    errs = _board2_errors(sink)
    assert errs and "max_bytes" in errs[0][2] and "game-2.json" in errs[0][1]


async def test_pairings_past_max_games_are_not_followed(
    round_server: LccServer, sink: RecordingSink
) -> None:
    feed = _feed(round_server, max_games=2)
    await feed.poll_once(sink)
    assert sorted(sink.by_board()) == [1, 2]
    assert "round-1/game-3.json" not in round_server.requests
    assert any("3 pairings; following the first 2 (max_games)" in e[2] for e in sink.errors)
    await feed.poll_once(sink)
    assert sum("max_games" in e[2] for e in sink.errors) == 1  # once, not every poll


async def test_a_game_past_max_plies_is_refused_unread(
    round_server: LccServer, sink: RecordingSink
) -> None:
    round_server.docs["round-1/game-2.json"] = {"moves": ["Nf3", "Nf6", "Ng1", "Ng8"] * 300}
    await _feed(round_server).poll_once(sink)
    _assert_others_applied(sink)
    assert 2 not in sink.by_board()
    assert any("1200 moves" in e[2] and "max_plies" in e[2] for e in _board2_errors(sink))


async def test_a_bad_rounds_list_in_tournament_json_is_named(
    round_server: LccServer, sink: RecordingSink
) -> None:
    round_server.docs["tournament.json"] = b'{"name": "Iso Open", "rounds": 1e999}'
    feed = _feed(round_server)
    assert await feed.poll_once(sink) is True
    assert any("'rounds' inf is not a list" in e[2] for e in sink.errors)
    # a configured round list does not depend on it
    feed = _feed(round_server, rounds=[1])
    sink2 = RecordingSink()
    await feed.poll_once(sink2)
    assert sorted(sink2.by_board()) == [1, 2, 3]


async def test_a_long_game_is_read_in_full(round_server: LccServer, sink: RecordingSink) -> None:
    """Past OFF_LOOP_MOVES tokens the game is parsed in a worker thread: same result."""
    moves = ["Nf3", "Nf6", "Ng1", "Ng8"] * 100
    round_server.docs["round-1/game-2.json"] = {
        "moves": [f"{m} {1000 - i}" for i, m in enumerate(moves)]
    }
    await _feed(round_server).poll_once(sink)
    _assert_others_applied(sink)
    two = sink.by_board()[2]
    assert len(two.moves) == 400 and two.clocks[-1] == 601 and not _board2_errors(sink)
