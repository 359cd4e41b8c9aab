"""Hostile input against every reader and every command.

Readers (property-based, hypothesis, derandomized): every reader of
untrusted input is given hostile documents (nesting 100,000 deep, numbers
such as 1e999 and 10**400, NaN, values of the wrong type, documents cut
short, very long strings, bytes that are not UTF-8, truncated gzip) and may
only return or raise its documented error, whose message says what was
wrong. The readers: JSON within bounds (feeds' and lookups' documents), the
MQTT ingest, the WebSocket hub's client messages, the remote engine
protocol, the gateway's replica and the producer's standings, TOML within
bounds, the configuration file and its ``LIVEGAIN_*`` variables, the model
files, the live and batch PGN readers, the official rating of a tag, the
``rank`` results table; and a lookup over HTTP (slow body, truncated or
exploding gzip).

Commands (real processes): every sub-command ``livegain --help`` lists is run
on hostile inputs (a configuration nested 100,000 deep or over the size
limit, a truncated gzip PGN, a PGN whose rating tag is 10**400, a JSON
document nested 100,000 deep where a file is read, a missing file, numbers
such as ``nan`` and 10**400): the exit code is the documented one
(docs/service.md, "Exit codes": 2 for bad input), stderr is one line
``livegain COMMAND...: error: ...``, never a traceback. Ctrl-C: a command that
runs until stopped stops with 0 ("stopped") even during its lookups; a batch
command interrupted exits 130 ("interrupted").
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import livegain
from livegain.batch.pgnio import PgnError, read_pgn_games_skipping
from livegain.cli import _COMMANDS
from livegain.cli.errors import CliError
from livegain.cli.rank import read_results_csv
from livegain.config import ConfigError, load_settings
from livegain.core.snapshot import RATING_RANGE, official_rating
from livegain.feeds.json_bounds import (
    MAX_DEPTH,
    MAX_TOML_BYTES,
    depth_exceeds,
    loads_bounded,
    loads_toml_bounded,
)
from livegain.feeds.mqtt_ingest import MqttIngest
from livegain.feeds.pgn import parse_pgn
from livegain.feeds.resolve import HttpLookup, LookupFailed
from livegain.models.files import CalibrationError, read_toml
from livegain.publish.actions import Close, Send
from livegain.publish.hub import Hub
from livegain.publish.producer_view import standings_of
from livegain.publish.replica import Replica
from livegain.relay.http import MiniHttpServer, Reply
from livegain.remote.protocol import ProtocolError, decode

pytestmark = pytest.mark.timeout(240)

FUZZ = settings(
    max_examples=60,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

GOTC = Path(livegain.__file__).parent / "data" / "game_of_the_century.pgn"
LIVEGAIN = [sys.executable, "-m", "livegain.cli"]
DEEP = 100_000

# --------------------------------------------------------------------------- hostile documents

#: Numbers no reader should take at face value (JSON/TOML spellings).
HUGE = ["1e999", "-1e999", "1" + "0" * 400, "-" + "9" * 400, "9" * 5000, "NaN", "Infinity", "nan"]


def deep_json(n: int, opener: str = "[", closed: bool = True) -> str:
    closer = {"[": "]", '{"a":': "}"}[opener]
    return opener * n + ("0" + closer * n if closed else "")


def _truncated(data: bytes) -> bytes:
    """The first half: a gzip stream cut short."""
    return data[: len(data) // 2]


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
    | st.sampled_from(["seq", "e4", "*", "x" * 5000]),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def hostile_json(draw: st.DrawFn, fields: tuple[str, ...] = ("seq", "type", "event")) -> bytes:
    """A JSON document (or not quite one), as bytes."""
    kind = draw(st.integers(0, 6))
    if kind == 0:  # deep nesting, under and over the bound, closed or cut
        n = draw(st.sampled_from([MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 300, 5_000, DEEP]))
        opener = draw(st.sampled_from(["[", '{"a":']))
        text = deep_json(n, opener, closed=draw(st.booleans()))
        if draw(st.booleans()):  # deep inside a field the reader looks at
            text = f'{{"{draw(st.sampled_from(fields))}": {text}}}'
        return text.encode()
    if kind == 1:  # a huge number in a field the reader looks at
        field = draw(st.sampled_from(fields))
        return f'{{"{field}": {draw(st.sampled_from(HUGE))}, "seq": 1}}'.encode()
    if kind == 2:  # any JSON values, in the fields the reader looks at
        doc = {f: draw(json_values) for f in draw(st.lists(st.sampled_from(fields), max_size=3))}
        return json.dumps(doc, allow_nan=True).encode()
    if kind == 3:  # a document cut short
        whole = json.dumps({f: draw(json_values) for f in fields}).encode()
        return whole[: draw(st.integers(0, len(whole)))]
    if kind == 4:  # not UTF-8
        return b'{"seq": 1, "white": "\xff\xfe' + draw(st.binary(max_size=8)) + b'"}'
    if kind == 5:  # a very long string
        return f'{{"{draw(st.sampled_from(fields))}": "{"x" * 200_000}"}}'.encode()
    return draw(st.binary(max_size=40))


def assert_json_depth(value: Any) -> None:
    assert not depth_exceeds(value, MAX_DEPTH)


# --------------------------------------------------------------------------- JSON readers


@FUZZ
@given(hostile_json())
def test_json_within_bounds_returns_a_shallow_value_or_says_what_is_wrong(body: bytes) -> None:
    try:
        value = loads_bounded(body)
    except ValueError as exc:
        assert str(exc).startswith("invalid JSON: ") and "\n" not in str(exc)
        return
    assert_json_depth(value)


@FUZZ
@given(
    st.lists(hostile_json(("seq", "ply", "san", "white", "black", "clock", "moves")), max_size=4)
)
def test_the_mqtt_ingest_names_the_topic_of_every_bad_payload(payloads: list[bytes]) -> None:
    topic = "livegain/in/t/1/1"
    ingest = MqttIngest("fz", max_bytes=1 << 20)
    for n, payload in enumerate(payloads):
        result = ingest.handle(topic, payload, float(n))
        for where, message in result.errors:
            assert where.startswith(topic) and message
            assert not message.startswith("unreadable payload")
        for snap in result.snapshots:
            for player in (snap.white, snap.black):
                assert player.rating is None or RATING_RANGE[0] <= player.rating <= RATING_RANGE[1]


def test_the_mqtt_ingest_refuses_a_rating_of_400_digits() -> None:
    event = '{"seq": 1, "white": {"name": "A", "rating": 1%s, "fide_id": 1%s}}'
    result = MqttIngest("fz").handle("in/t/1/1", (event % ("0" * 400, "0" * 400)).encode(), 0.0)
    assert result.errors == []
    (snap,) = result.snapshots
    assert snap.white.name == "A" and snap.white.rating is None and snap.white.fide_id is None


@FUZZ
@given(st.lists(hostile_json(("type", "boards", "cursor", "limit", "event")), max_size=6))
def test_the_hub_answers_every_bad_client_message_with_an_error(messages: list[bytes]) -> None:
    hub: Hub[str] = Hub()
    hub.connect("c")
    for n, raw in enumerate(messages):
        message: str | bytes = raw  # a binary frame: always an error
        if n % 2:
            message = raw.decode("utf-8", "replace")
        errors = []
        for action in hub.receive("c", message, float(n)):
            assert isinstance(action, Send | Close)
            if isinstance(action, Send):
                sent = json.loads(action.data)
                if sent["type"] == "error":
                    errors.append(sent["message"])
        if isinstance(message, bytes) or not _maybe_a_message(message):
            assert len(errors) == 1 and errors[0], (message[:80], errors)


def _maybe_a_message(text: str) -> bool:
    """An object with a string ``type``: perhaps a valid client message."""
    try:
        value = loads_bounded(text)
    except ValueError:
        return False
    return isinstance(value, dict) and isinstance(value.get("type"), str)


@FUZZ
@given(hostile_json(("type", "v", "id", "fen", "depth")))
def test_a_remote_engine_message_is_a_message_or_a_protocol_error(body: bytes) -> None:
    try:
        decode(body)
    except ProtocolError as exc:
        assert str(exc) and "\n" not in str(exc)


REPLICA_TOPICS = [
    "livegain/out/boards",
    "livegain/out/status",
    "livegain/out/moments",
    "livegain/out/standings/open",
    "livegain/out/b1/state",
    "livegain/out/b1/update",
]


@FUZZ
@given(
    st.lists(
        st.tuples(
            st.sampled_from(REPLICA_TOPICS),
            hostile_json(("event", "boards", "board_id", "state", "seq", "type")),
        ),
        max_size=6,
    )
)
def test_the_gateway_counts_hostile_messages_as_junk(messages: list[tuple[str, bytes]]) -> None:
    replica = Replica("livegain/out")
    for topic, payload in messages:
        replica.feed(topic, payload)
    assert replica.stats.messages == len(messages)
    not_json = sum(1 for t, p in messages if p and not t.endswith("/status") and not _json(p))
    assert replica.stats.junk >= not_json
    standings_of(payload for _topic, payload in messages)


def _json(body: bytes) -> bool:
    try:
        loads_bounded(body)
    except ValueError:
        return False
    return True


def test_the_gateway_counts_a_standings_message_nested_100000_deep_as_junk() -> None:
    replica = Replica("livegain/out")
    deep = f'{{"event": "x", "rows": {deep_json(DEEP)}}}'.encode()
    assert replica.feed("livegain/out/standings/x", deep) == []
    assert replica.feed("livegain/out/boards", deep_json(DEEP).encode()) == []
    assert replica.stats.junk == 2
    assert standings_of([deep]) == []


# --------------------------------------------------------------------------- TOML readers


@st.composite
def hostile_toml(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 5))
    n = draw(st.sampled_from([MAX_DEPTH + 1, 300, 5_000, DEEP]))
    if kind == 0:
        return "a = " + "[" * n + "]" * n + "\n"
    if kind == 1:
        return "a = " + "{b = " * n + "1" + "}" * n + "\n"
    if kind == 2:
        return ".".join(["a"] * n) + " = 1\n"
    if kind == 3:
        return "[" + ".".join(["a"] * n) + "]\n"
    if kind == 4:
        return "a = " + draw(st.sampled_from([*HUGE, '"' + "x" * 100_000 + '"', "1979-05-27T"]))
    return draw(st.text(max_size=60))


@FUZZ
@given(hostile_toml())
def test_toml_within_bounds_returns_a_shallow_table_or_says_what_is_wrong(text: str) -> None:
    try:
        data = loads_toml_bounded(text)
    except ValueError as exc:
        assert str(exc).startswith("not valid TOML (") and "\n" not in str(exc)
        return
    assert isinstance(data, dict)
    assert_json_depth(data)


#: Configuration keys and hostile TOML values for them.
CONFIG_KEYS = [
    "server.port",
    "server.host",
    "engine.depth",
    "engine.rating",
    "engine.search_timeout",
    "broadcast.delay",
    "limits.max_plies",
    "log.level",
    "data_dir",
    "feeds",
    "events",
    "matches",
]
TOML_VALUES = [
    *HUGE,
    "inf",
    "-inf",
    '"x"',
    "-1",
    "true",
    "[]",
    "[[1, 2], [3]]",
    "{a = 1}",
    '"\\u0000"',
    "[" * 40 + "]" * 40,
    '[{type = "file", path = "x", interval = nan}]',
    '[{type = "lcc", base_url = 5}]',
]


@FUZZ
@given(
    st.one_of(
        hostile_toml(),
        st.lists(
            st.tuples(st.sampled_from(CONFIG_KEYS), st.sampled_from(TOML_VALUES)),
            min_size=1,
            max_size=3,
            unique_by=lambda kv: kv[0],
        ).map(lambda kvs: "".join(f"{k} = {v}\n" for k, v in kvs)),
        st.binary(max_size=30),
    )
)
def test_a_configuration_file_loads_or_is_one_error_naming_it(text: str | bytes) -> None:
    data = text if isinstance(text, bytes) else text.encode()
    with _scratch_file("livegain.toml", data) as path:
        try:
            load_settings(path)
        except ConfigError as exc:
            assert str(exc).startswith(f"{path}: ") and "\n" not in str(exc)


def test_a_configuration_over_the_size_limit_is_refused_without_being_read(tmp_path: Path) -> None:
    path = tmp_path / "big.toml"
    path.write_bytes(b"# " + b"x" * (MAX_TOML_BYTES + 10) + b"\n")
    with pytest.raises(ConfigError, match=f"larger than {MAX_TOML_BYTES} bytes"):
        load_settings(path)


@FUZZ
@given(
    st.sampled_from(["LIVEGAIN_FEEDS", "LIVEGAIN_SERVER", "LIVEGAIN_EVENTS"]),
    hostile_json(("type", "port", "name")).map(lambda b: b.decode("utf-8", "replace")),
)
def test_a_bad_variable_is_one_error_naming_it(name: str, value: str) -> None:
    if "\x00" in value:
        value = value.replace("\x00", "")
    with mock.patch.dict(os.environ, {name: value}):
        try:
            load_settings(None)
        except ConfigError as exc:
            message = str(exc)
            assert message.startswith(("environment: LIVEGAIN_", "configuration: "))
            assert "\n" not in message


@FUZZ
@given(st.one_of(hostile_toml().map(str.encode), st.binary(max_size=30)))
def test_a_model_file_is_read_or_is_one_error_naming_it(data: bytes) -> None:
    with _scratch_file("models.toml", data) as path:
        try:
            read_toml(path)
        except CalibrationError as exc:
            assert str(exc).startswith(f"{path}: ")


# --------------------------------------------------------------------------- PGN readers

TAGS = ["WhiteElo", "BlackElo", "Round", "Board", "TimeControl", "WhiteFideId", "FEN", "Result"]
TAG_VALUES = [*HUGE, "", "-", "?", "2750", "0", "x" * 10_000, "40/5400+30", "\\"]


@st.composite
def hostile_pgn(draw: st.DrawFn, deepest: int = DEEP) -> str:
    """A game with hostile tags, variations or comments nested up to ``deepest``."""
    tags = draw(st.dictionaries(st.sampled_from(TAGS), st.sampled_from(TAG_VALUES), max_size=4))
    head = "".join(f'[{k} "{v}"]\n' for k, v in tags.items())
    n = draw(st.sampled_from([1, 50, 5_000, deepest]))
    body = draw(
        st.sampled_from(
            [
                "1. e4 e5 2. Nf3 *",
                "1. e4 " + "( 1. d4 " * n + ")" * n + " e5 *",
                "1. e4 " + "{" * n + "}" + " e5 *",
                "1. e4 { [%clk " + "9" * 400 + ":00:00] [%eval 1e999] } e5 *",
                "1. e4 " + "(" * n,
            ]
        )
    )
    return f'[Event "Fuzz"]\n[White "A"]\n[Black "B"]\n{head}\n{body}\n'


@FUZZ
@given(hostile_pgn())
def test_the_live_pgn_reader_keeps_ratings_in_range(text: str) -> None:
    for game in parse_pgn(text, "fz"):
        for issue in game.issues:
            assert issue.message and not issue.message.startswith("unreadable game")
        if game.snapshot is not None:
            for player in (game.snapshot.white, game.snapshot.black):
                rating = player.rating
                assert rating is None or RATING_RANGE[0] <= rating <= RATING_RANGE[1]


@FUZZ
@given(
    # python-chess builds every variation: 100,000 of them take seconds (linear)
    hostile_pgn(deepest=10_000),
    st.sampled_from(["plain", "gzip", "truncated gzip", "not UTF-8", "JSON nested deep"]),
)
def test_the_batch_pgn_reader_returns_games_or_a_pgn_error(text: str, form: str) -> None:
    data = text.encode()
    if form == "gzip":
        data = gzip.compress(data)
    elif form == "truncated gzip":
        data = _truncated(gzip.compress(data))
    elif form == "not UTF-8":
        data = data.replace(b"A", b"\xff\xfe", 1)
    elif form == "JSON nested deep":
        data = deep_json(DEEP).encode()
    with _scratch_file("games.pgn", data) as path:
        try:
            games, _numbers, _skipped = read_pgn_games_skipping(path)
        except PgnError as exc:
            assert str(exc).startswith(f"{path}: ") and "\n" not in str(exc)
            return
    for game in games:
        for side in ("WhiteElo", "BlackElo"):
            rating = official_rating(game.headers.get(side))
            assert rating is None or RATING_RANGE[0] <= rating <= RATING_RANGE[1]


@FUZZ
@given(
    st.one_of(
        st.sampled_from([*HUGE, "2750", " 2750 ", "02750", "2750.0", "0", "4000", "²", "", None]),
        st.integers(min_value=-(10**400), max_value=10**400),
        st.floats(allow_nan=True, allow_infinity=True),
        st.booleans(),
        st.text(max_size=8),
    )
)
def test_an_official_rating_is_a_whole_number_in_range_or_none(value: object) -> None:
    rating = official_rating(value)
    assert rating is None or (type(rating) is int and RATING_RANGE[0] <= rating <= RATING_RANGE[1])


@FUZZ
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c", '"', "x" * 200_000]),
            st.sampled_from(["b", "c", "a"]),
            st.sampled_from([*HUGE, "1", "-1", "0", "", "1_000", "+3"]),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_the_rank_table_is_read_or_is_one_error_naming_the_line(
    rows: list[tuple[str, str, str]],
) -> None:
    lines = ["player_a,player_b,wins_a,draws,wins_b"] + [f"{a},{b},{n},0,1" for a, b, n in rows]
    with _scratch_file("results.csv", "\n".join(lines).encode()) as path:
        try:
            read_results_csv(path)
        except CliError as exc:
            assert str(exc).startswith(f"{path}:") and "\n" not in str(exc)
            assert len(str(exc)) < 400


# --------------------------------------------------------------------------- lookups over HTTP


def _gzip_bomb() -> bytes:
    out = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return out.compress(b"[" * (8 << 20)) + out.flush()


HTTP_BODIES: dict[str, tuple[bytes, dict[str, str], str]] = {
    "slow body": (b"", {}, "timed out after 1 s"),
    "truncated gzip": (
        gzip.compress(b'{"tour": {"name": "x"}}' * 50)[:40],
        {"Content-Encoding": "gzip"},
        "bad gzip body",
    ),
    "gzip bomb": (_gzip_bomb(), {"Content-Encoding": "gzip"}, "gzip body inflates past"),
    "nested 100,000 deep": (deep_json(DEEP).encode(), {}, "nested deeper than 32 levels"),
    "not JSON": (b"\xff\xfe{", {}, "invalid JSON"),
}


@pytest.mark.parametrize("case", list(HTTP_BODIES))
async def test_a_hostile_lookup_is_one_error_naming_the_url(case: str) -> None:
    body, headers, why = HTTP_BODIES[case]

    async def trickle() -> AsyncIterator[bytes]:
        while True:  # a byte now and then: never a whole body
            yield b"["
            await asyncio.sleep(0.2)

    def handle(path: str, _headers: object) -> Reply:
        stream = trickle if case == "slow body" else None
        return Reply(200, body, "application/json", headers, stream=stream)

    async with MiniHttpServer(handle) as server:
        url = f"{server.base_url}/api/broadcast/AbCd1234"
        with pytest.raises(LookupFailed, match=re.escape(why)) as err:
            await HttpLookup(timeout=1.0, max_bytes=1 << 20).json(url)
    assert str(err.value).startswith(url)


# --------------------------------------------------------------------------- commands


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Hostile input files, by name."""
    d = tmp_path_factory.mktemp("hostile")
    gotc = GOTC.read_text()
    files = {
        "deep.toml": ("a = " + "[" * DEEP + "]" * DEEP + "\n").encode(),
        "huge.toml": b"# " + b"x" * (MAX_TOML_BYTES + 1) + b"\n",
        "truncated.pgn.gz": _truncated(gzip.compress(GOTC.read_bytes() * 2)),
        "elo400.pgn": gotc.replace(
            '[Result "0-1"]', '[Result "0-1"]\n[WhiteElo "1' + "0" * 400 + '"]\n[BlackElo "1e999"]'
        ).encode(),
        "deep.json": deep_json(DEEP).encode(),
        "count400.csv": (
            "player_a,player_b,wins_a,draws,wins_b\na,b,1" + "0" * 400 + ",0,1\n"
        ).encode(),
    }
    out = {}
    for name, data in files.items():
        (d / name).write_bytes(data)
        out[name] = str(d / name)
    out["missing.pgn"] = str(d / "missing.pgn")
    out["deep_env"] = "[" * DEEP  # unclosed: an environment string holds at most 128 KiB
    return out


BIG = "1" + "0" * 400
LCC_ID = "0b9b5e3e-1c2d-4e5f-8a9b-0123456789ab"
BROKER = ["--broker", "mqtt://127.0.0.1:1"]
RATINGS = ["--rating-a", "1", "--rating-b", "1", "--draw-rate", "0.5"]
GZIP_CUT = "cannot read (Compressed file ended before the end-of-stream marker"
TOO_DEEP = "nested deeper than 32 levels"
DEEP_VARIABLE = f"environment: LIVEGAIN_FEEDS: invalid JSON: {TOO_DEEP}"
NOT_FINITE = "is not a finite number"
TOO_LARGE = "is too large (at most 9 digits)"
#: Per command: (id, arguments with {file} names from ``hostile``, extra
#: environment, what its one line of error says; None: it succeeds, exit 0).
#: An error is exit code 2 and one line ``livegain COMMAND...: error: ...``.
CASES: dict[str, list[tuple[str, list[str], dict[str, str], str | None]]] = {
    "analyze": [
        ("truncated gzip", ["{truncated.pgn.gz}", "--evals", "pgn"], {}, GZIP_CUT),
        ("json nested deep", ["{deep.json}", "--evals", "pgn"], {}, "deep.json: no games found"),
        ("missing file", ["{missing.pgn}", "--evals", "pgn"], {}, "missing.pgn: no such file"),
        ("rating 10**400", ["{elo400.pgn}", "--evals", "pgn", "--json"], {}, None),
    ],
    "calibrate": [
        ("truncated gzip", ["{truncated.pgn.gz}"], {}, GZIP_CUT),
        ("missing file", ["{missing.pgn}"], {}, "missing.pgn: no such file"),
        ("json nested deep", ["{deep.json}"], {}, "deep.json: no games found"),
    ],
    "fit": [
        ("truncated gzip", ["{truncated.pgn.gz}"], {}, GZIP_CUT),
        ("rating 10**400", ["{elo400.pgn}", "--wdl"], {}, "no game in the calibration part"),
        ("missing file", ["{missing.pgn}"], {}, "missing.pgn: no such file"),
    ],
    "fit-opening": [
        ("truncated gzip", ["{truncated.pgn.gz}", "--out", "{missing.pgn}"], {}, GZIP_CUT),
        (
            "rating 10**400",
            ["{elo400.pgn}", "--out", "{missing.pgn}"],
            {},
            "no rated player-game from the standard start",
        ),
        ("missing file", ["{missing.pgn}", "--out", "{missing.pgn}"], {}, "missing.pgn: no such"),
    ],
    "validate": [
        ("rating 10**400", ["{elo400.pgn}", "--part", "all"], {}, "no rated player-game"),
        ("deep model file", ["{elo400.pgn}", "--models", "{deep.toml}"], {}, TOO_DEEP),
    ],
    "serve": [
        ("config nested deep", ["--config", "{deep.toml}"], {}, f"not valid TOML ({TOO_DEEP})"),
        ("config too large", ["--config", "{huge.toml}"], {}, "larger than 1048576 bytes"),
        ("config missing", ["--config", "{missing.pgn}"], {}, "no such configuration file"),
        ("variable nested deep", [], {"LIVEGAIN_FEEDS": "{deep_env}"}, DEEP_VARIABLE),
    ],
    "watch": [
        ("config nested deep", ["{elo400.pgn}", "--config", "{deep.toml}"], {}, TOO_DEEP),
        ("missing source", ["{missing.pgn}"], {}, "missing.pgn: no such file or folder"),
        ("source of 100,000 characters", ["#" * DEEP], {}, "no such file or folder"),
        ("round of 5,000 digits", [f"{LCC_ID}/{'9' * 5000}"], {}, "no such file or folder"),
        ("nan interval", ["{elo400.pgn}", "--interval", "nan"], {}, NOT_FINITE),
    ],
    "worker": [
        ("broker not a URL", ["--broker", "mqtt://[::1"], {}, "--broker: Invalid IPv6 URL"),
        ("broker 100,000 characters", ["--broker", "x" * DEEP], {}, "--broker: not an MQTT URL"),
    ],
    "gateway": [
        ("config nested deep", [*BROKER, "--config", "{deep.toml}"], {}, TOO_DEEP),
        ("variable nested deep", BROKER, {"LIVEGAIN_FEEDS": "{deep_env}"}, DEEP_VARIABLE),
    ],
    "demo": [
        ("broker not a URL", ["--mqtt", "nonsense"], {}, "--mqtt: not an MQTT URL"),
        ("port 10**400", ["--port", BIG], {}, "server.port"),
        ("speed nan", ["--speed", "nan"], {}, NOT_FINITE),
    ],
    "replay": [
        ("truncated gzip", ["{truncated.pgn.gz}"], {}, "no playable game"),
        ("missing file", ["{missing.pgn}"], {}, "missing.pgn: no such file"),
        ("port out of range", [str(GOTC), "--port", "-5"], {}, "--port must be 0-65535"),
    ],
    "elo": [
        ("rating nan", ["expected", "--rating-a", "nan", "--rating-b", "1"], {}, NOT_FINITE),
        ("score 1e999", ["diff", "--score", "1e999"], {}, NOT_FINITE),
        ("games 10**400", ["diff", "--score", "3", "--games", BIG], {}, TOO_LARGE),
        ("opponent 1e999", ["performance", "--opponents", "1e999", "--scores", "1"], {}, "finite"),
    ],
    "odds": [
        ("rating 1e999", ["game", "--rating-a", "1e999", "--rating-b", "1"], {}, NOT_FINITE),
        ("games 10**400", ["match", *RATINGS, "--games", BIG], {}, TOO_LARGE),
        ("games 100,000", ["match", *RATINGS, "--games", "100000"], {}, "at most 10,000 games"),
    ],
    "rank": [
        ("truncated gzip", ["{truncated.pgn.gz}"], {}, "truncated.pgn.gz: not UTF-8 text"),
        ("json nested deep", ["{deep.json}"], {}, "deep.json:1: not a CSV line"),
        ("count 10**400", ["{count400.csv}"], {}, "is more than 1,000,000 games"),
        ("missing file", ["{missing.pgn}"], {}, "missing.pgn: no such file"),
    ],
}  # fmt: skip


def listed_commands() -> list[str]:
    """The sub-commands ``livegain --help`` lists."""
    out = subprocess.run([*LIVEGAIN, "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    listing = out.stdout.split("positional arguments:", 1)[1].split("options:", 1)[0]
    return re.findall(r"^    ([\w-]+)", listing, flags=re.MULTILINE)


def test_every_listed_command_has_hostile_cases() -> None:
    listed = listed_commands()
    assert listed == list(_COMMANDS)
    assert sorted(CASES) == sorted(listed)


CASE_IDS = [(command, case[0]) for command, cases in CASES.items() for case in cases]


@pytest.fixture(scope="module")
def ran(hostile: dict[str, str]) -> dict[tuple[str, str], subprocess.CompletedProcess[str]]:
    """Every case run once, a few processes at a time."""

    def fill(text: str) -> str:
        return re.sub(r"\{([\w.]+)\}", lambda m: hostile[m.group(1)], text)

    def run(command: str, args: list[str], env: dict[str, str]) -> Any:
        environ = {k: v for k, v in os.environ.items() if not k.startswith("LIVEGAIN_")}
        environ.update({k: fill(v) for k, v in env.items()})
        return subprocess.run(
            [*LIVEGAIN, command, *(fill(a) for a in args), *_quick(command)],
            capture_output=True,
            text=True,
            timeout=180,
            env=environ,
            stdin=subprocess.DEVNULL,
        )

    jobs = {
        (command, case_id): (command, args, env)
        for command, cases in CASES.items()
        for case_id, args, env, _says in cases
    }
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {key: pool.submit(run, *job) for key, job in jobs.items()}
        return {key: f.result() for key, f in futures.items()}


def _quick(command: str) -> list[str]:
    """Options that keep a command that would run from taking long or listening widely."""
    if command in ("serve", "watch", "gateway", "demo"):
        return ["--port", "0"] if command != "demo" else []
    if command == "calibrate":
        return ["--depth", "1", "--workers", "1"]
    if command == "replay":
        return ["--speed", "1000000", "--exit-when-done"]
    return []


@pytest.mark.parametrize(("command", "case"), CASE_IDS, ids=[f"{c}-{k}" for c, k in CASE_IDS])
def test_a_command_on_hostile_input_exits_with_its_code_and_one_line(
    command: str, case: str, ran: dict[tuple[str, str], subprocess.CompletedProcess[str]]
) -> None:
    done = ran[(command, case)]
    (says,) = [c[3] for c in CASES[command] if c[0] == case]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    if says is None:
        assert done.returncode == 0, done.stderr[-3000:]
        return
    assert done.returncode == 2, done.stderr[-3000:]
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr[-3000:]
    assert re.match(rf"livegain {command}( [\w-]+)?: error: \S", lines[0]), lines[0]
    assert says in lines[0] and len(lines[0]) < 1000, lines[0]


# --------------------------------------------------------------------------- Ctrl-C


@pytest.fixture
def stalled_server() -> Iterator[tuple[int, threading.Event]]:
    """A TCP server that accepts connections and never answers; the event is
    set once a client has connected."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.1)
    connected = threading.Event()
    done = threading.Event()
    held: list[socket.socket] = []

    def accept() -> None:
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            held.append(conn)
            connected.set()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], connected
    finally:
        done.set()
        thread.join(5)
        listener.close()
        for conn in held:
            conn.close()


def _signal_group(proc: subprocess.Popen[str], sig: int) -> tuple[int, str]:
    """``sig`` to the command's process group (as a terminal sends Ctrl-C)."""
    os.killpg(proc.pid, sig)
    _out, err = proc.communicate(timeout=60)
    return proc.returncode, err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_watch_stopped_during_its_lookups_says_stopped_and_exits_0(
    sig: int, stalled_server: tuple[int, threading.Event], tmp_path: Path
) -> None:
    port, connected = stalled_server
    proc = subprocess.Popen(
        [
            *LIVEGAIN,
            "watch",
            "https://lichess.org/broadcast/fuzz-open/round-1/AbCd1234",
            *("--lichess-url", f"http://127.0.0.1:{port}", "--port", "0"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
        cwd=tmp_path,
    )
    try:
        assert connected.wait(60), "watch never looked its source up"
        code, err = _signal_group(proc, sig)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
    assert err.splitlines() == ["livegain watch: stopped"], err
    assert code == 0


def test_a_batch_command_interrupted_says_interrupted_and_exits_130(
    stockfish: str, tmp_path: Path
) -> None:
    proc = subprocess.Popen(
        [*LIVEGAIN, "analyze", str(GOTC), "--depth", "40", "--workers", "1", "--engine", stockfish],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
        cwd=tmp_path,
    )
    try:
        deadline = time.monotonic() + 60
        while not _children(proc.pid):  # the engine runs: the analysis has started
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        code, err = _signal_group(proc, signal.SIGINT)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
    assert err.splitlines() == ["livegain analyze: interrupted"], err
    assert code == 130


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(x) for x in out.stdout.split()]


# --------------------------------------------------------------------------- helpers


@contextlib.contextmanager
def _scratch_file(name: str, data: bytes) -> Iterator[Path]:
    """A file of ``data`` for one example (hypothesis runs many examples in
    one test, so no function-scoped ``tmp_path``), removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="livegain-fuzz-") as d:
        path = Path(d) / name
        path.write_bytes(data)
        yield path
