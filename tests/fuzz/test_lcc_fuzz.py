"""Fuzzing the LiveChess Cloud reader: no crash, a clear error naming the board, others unaffected.

The pure parsers get a few thousand hypothesis cases (derandomized: the same
cases in every run, so CI is reproducible); the feed gets seeded junk game
files, pairings and round indexes from a real local HTTP server, beside
boards whose files are good and must apply in every poll.
"""

from __future__ import annotations

import json
import random
from typing import Any

import chess
import pytest
from feeds.conftest import RecordingSink
from feeds.test_lcc import LccServer, _player
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from livegain.feeds import LccFeedConfig
from livegain.feeds.lcc import LccFeed
from livegain.feeds.lcc_json import (
    MAX_CLOCK_SECONDS,
    MAX_TEXT,
    RATING_RANGE,
    LccFormatError,
    initial_position,
    make_snapshot,
    parse_game_json,
    parse_move_token,
)
from livegain.feeds.pgn import MAX_TRAILING_ILLEGAL

from .lcc_junk import GAME, junk_game_body, junk_pairing, valid_game

pytestmark = pytest.mark.timeout(120)

FUZZ = settings(
    max_examples=400,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# --- strategies -------------------------------------------------------------------------------

numbers = st.one_of(
    st.integers(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([float("inf"), float("-inf"), float("nan"), 1e308, -0.0, 10**100]),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    numbers,
    st.text(max_size=30),
    st.sampled_from(["", "²", "١٢٣", "9" * 5000, "1e999", "NaN", "x" * 500]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(max_size=8), inner, max_size=4),
    ),
    max_leaves=12,
)
clock_texts = st.one_of(
    st.none(),
    st.integers(min_value=0, max_value=10**12).map(str),
    st.sampled_from(["1e999", "NaN", "-5", "٣", "9" * 5000, "1:00", "+", "12+", "+3"]),
)
tokens = st.one_of(
    st.builds(
        lambda san, clk, spent: " ".join(
            [san, (clk or "") + (f"+{spent}" if spent is not None else "")]
        ).strip(),
        st.sampled_from([*GAME, "O-O", "Ke2", "Qxf7#", "e8=Q", "", "??"]),
        clock_texts,
        st.none() | st.integers(min_value=0, max_value=10**10),
    ),
    json_values,
)
game_docs = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {},
        optional={
            "moves": st.one_of(st.lists(tokens, max_size=14), json_values),
            "chess960": st.one_of(st.sampled_from([518, 0, 959, 960, -1]), json_values),
            "clock": st.one_of(
                st.fixed_dictionaries({}, optional={"white": json_values, "black": json_values}),
                json_values,
            ),
            "result": st.one_of(st.sampled_from(["WHITEWIN", "DRAW", "*", "1-0"]), json_values),
            "live": json_values,
            "extra": json_values,
        },
    ),
)
players = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {},
        optional={k: json_values for k in ("fname", "mname", "lname", "title", "federation")}
        | {"rating": numbers | json_values, "fideid": numbers | json_values},
    ),
)

# --- properties -------------------------------------------------------------------------------

WHERE = "round 7 board 3 (A - B)"


def _sane_clock(v: int | None) -> bool:
    return v is None or (isinstance(v, int) and 0 <= v <= MAX_CLOCK_SECONDS)


def _check_game(data: object) -> None:
    g = parse_game_json(data, WHERE)  # must not raise
    for issue in g.issues:
        assert issue.startswith(WHERE), issue  # names the board
        assert len(issue) < 800, issue  # a readable line, not the document
    assert all(_sane_clock(c) for c in g.clocks + g.spent)
    assert _sane_clock(g.clock_white) and _sane_clock(g.clock_black)
    assert len(g.moves) == len(g.clocks) == len(g.spent)
    if g.skipped:
        assert not g.moves and g.issues
        return
    # The moves are a legal line, except at most the trailing tokens passed on as they came.
    board = chess.Board(g.initial_fen, chess960=True) if g.initial_fen else chess.Board()
    legal = 0
    for san in g.moves:
        try:
            board.push_san(san)
        except ValueError:
            break
        legal += 1
    assert len(g.moves) - legal <= MAX_TRAILING_ILLEGAL, g


@FUZZ
@given(game_docs)
def test_parse_game_json_never_raises_and_names_the_board(data: object) -> None:
    _check_game(data)


def test_parse_game_json_on_damaged_documents() -> None:
    """3,000 seeded junk game files (see lcc_junk), parsed as the feed parses them."""
    rng = random.Random(7)
    parsed = 0
    for _ in range(3000):
        body = junk_game_body(rng)
        try:
            data = json.loads(body.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            continue  # the feed reports these before any parsing (tested with the feed below)
        _check_game(data)
        parsed += 1
    assert parsed > 1000


@settings(FUZZ, max_examples=1000)
@given(tokens)
def test_move_tokens_parse_or_raise_a_format_error(token: object) -> None:
    try:
        mv = parse_move_token(token)
    except LccFormatError as exc:
        assert len(str(exc)) < 300
        return
    assert _sane_clock(mv.clock) and _sane_clock(mv.spent)


@FUZZ
@given(json_values)
def test_initial_position_accepts_numbers_or_raises_a_format_error(value: object) -> None:
    try:
        board, _fen = initial_position(value)
    except LccFormatError:
        return
    assert board.is_valid()


@settings(FUZZ, max_examples=250)
@given(
    players,
    players,
    st.dictionaries(st.sampled_from(["name", "location", "timecontrol", "rounds"]), json_values),
    json_values,
    json_values,
)
def test_make_snapshot_keeps_only_sane_values(
    white: Any, black: Any, tournament: dict[str, Any], result: Any, date: Any
) -> None:
    game = parse_game_json({"moves": ["e4 100", "e5 99"]}, WHERE)
    issues: list[str] = []
    snap = make_snapshot(
        "lcc",
        "t1",
        tournament,
        7,
        3,
        {"white": white, "black": black, "result": result},
        game,
        date if isinstance(date, str) else None,
        issues,
    )
    for p in (snap.white, snap.black):
        assert isinstance(p.name, str) and 0 < len(p.name) <= MAX_TEXT
        assert p.rating is None or RATING_RANGE[0] <= p.rating <= RATING_RANGE[1]
        assert p.fide_id is None or (p.fide_id.isascii() and p.fide_id.isdigit())
        for text in (p.title, p.federation):
            assert text is None or (isinstance(text, str) and len(text) <= MAX_TEXT)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in snap.tags)
    assert all(len(v) <= 2 * MAX_TEXT + 2 for _, v in snap.tags)
    assert snap.result in {"1-0", "0-1", "1/2-1/2", "*"}
    assert all(isinstance(i, str) and len(i) < 300 for i in issues)


# --- the feed, against a real server ----------------------------------------------------------

GOOD = {"moves": [f"{san} {5400 - i}" for i, san in enumerate(GAME)], "clock": {"white": 1}}
BOARDS = 40  # odd boards good, even boards junk
POLLS = 25  # new junk on every even board at every poll: 500 junk game files


async def test_the_feed_on_junk_keeps_every_good_board() -> None:
    sink = RecordingSink()
    rng = random.Random(20240501)
    srv = LccServer()
    srv.docs["tournament.json"] = {"name": "Fuzz Open", "rounds": [{"count": 1}, {"count": 1}]}

    def index() -> dict[str, Any]:
        pairings: list[Any] = []
        for b in range(1, BOARDS + 1):
            if b % 2:
                pairings.append({"white": _player("Ann", f"Good{b}"), "black": None})
            else:
                pairings.append(junk_pairing(rng))
        return {"pairings": pairings}

    async with srv.server:
        feed = LccFeed(LccFeedConfig(name="fuzz", base_url=srv.base_url, tournament_id="t1"))
        for poll in range(POLLS):
            srv.docs["round-1/index.json"] = json.dumps(index()).encode()
            # round 2's index is junk of any kind; round 1 must not mind
            srv.docs["round-2/index.json"] = junk_game_body(rng)
            for b in range(1, BOARDS + 1):
                path = f"round-1/game-{b}.json"
                if b % 2:
                    srv.docs[path] = {**GOOD, "moves": GOOD["moves"][: 1 + poll % len(GAME)]}
                else:
                    srv.docs[path] = junk_game_body(rng)
            assert await feed.poll_once(sink) is True
            latest = {s.board: s for s in sink.snapshots if s.round == "1"}
            want = tuple(GAME[: 1 + poll % len(GAME)])
            for b in range(1, BOARDS + 1, 2):
                assert latest[b].moves == want, (poll, b, sink.error_text()[-2000:])
    text = sink.error_text()
    assert "internal error" not in text and "unreadable" not in text, text[-3000:]
    for source, where, message in sink.errors:
        assert source == "fuzz"
        # every error names the tournament, the round (and the board) it is about
        assert where.startswith(("tournament", "round 1", "round 2")), (where, message)
        assert len(message) < 800
    boards_named = {w.split(" ")[3] for _, w, _ in sink.errors if w.startswith("round 1 board")}
    assert boards_named and all(int(b) % 2 == 0 for b in boards_named)  # only junk boards
    assert feed.errors == len(sink.errors) > POLLS
    print(f"{len(sink.errors)} errors over {POLLS * BOARDS // 2} junk game files")


def test_the_junk_generator_makes_junk() -> None:
    """The feed test above is only as good as its junk: most of it must be bad."""
    rng = random.Random(1)
    bad = 0
    for _ in range(500):
        body = junk_game_body(rng)
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            bad += 1
            continue
        if parse_game_json(data, "w").issues:
            bad += 1
    assert bad > 300
    assert valid_game(rng)["chess960"] == 518
