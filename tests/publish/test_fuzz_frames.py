"""Thousands of generated client frames against a running server: every bad
one is answered with an ``error``, nothing crashes, and the other clients keep
getting their updates."""

from __future__ import annotations

import json
import logging
import random
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from livegain.publish.limits import ServerLimits
from livegain.publish.server import LiveServer

from .helpers import board_state, recv_json, subscribed, update_for

FRAMES = 3_000
SEED = 20_240_611

VALID_TYPES = ["subscribe", "unsubscribe", "ping", "list_boards"]
JUNK_VALUES: list[Any] = [
    None,
    True,
    0,
    -1,
    2**70,
    1.5e308,
    "",
    "*",
    "b1",
    "x" * 300,
    "\u0000",
    "\ud7ff\U0001f600",
    [],
    ["b1"],
    [1, 2],
    {},
    {"a": {"b": [None]}},
]


def junk(rng: random.Random, depth: int = 0) -> Any:
    pick = rng.random()
    if depth < 3 and pick < 0.15:
        return [junk(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if depth < 3 and pick < 0.3:
        return {rng.choice(["type", "boards", "cursor", "x"]): junk(rng, depth + 1)}
    return rng.choice(JUNK_VALUES)


def frame(rng: random.Random) -> tuple[str | bytes, bool]:
    """A client frame, and whether it is certainly invalid (must get an error)."""
    kind = rng.random()
    if kind < 0.2:  # a valid message
        t = rng.choice(VALID_TYPES)
        msg: dict[str, Any] = {"type": t}
        if t in ("subscribe", "unsubscribe"):
            msg["boards"] = rng.choice([["b1"], ["nope"], "*", []])
        if t == "list_boards":
            msg["cursor"] = rng.randint(0, 5)
        return json.dumps(msg), False
    if kind < 0.5:  # a known type with junk fields
        msg = {
            "type": rng.choice(VALID_TYPES),
            rng.choice(["boards", "cursor", "limit", "x"]): junk(rng),
        }
        return json.dumps(msg), False
    if kind < 0.65:  # an unknown type or no type
        msg = {"type": rng.choice(["", "launch", "SUBSCRIBE", "hello", "boards"]), "x": junk(rng)}
        return json.dumps(msg), True
    if kind < 0.75:  # JSON that is not an object
        return json.dumps(junk(rng)) if rng.random() < 0.5 else "[]", True
    if kind < 0.85:  # not JSON at all
        n = rng.randint(1, 200)
        text = "".join(
            chr(rng.choice([rng.randint(32, 126), rng.randint(0x80, 0x2FFF)])) for _ in range(n)
        )
        return "{" + text, True
    if kind < 0.92:  # binary frames
        return rng.randbytes(rng.randint(1, 300)), True
    # too large
    return json.dumps({"type": "subscribe", "boards": ["z" * 5000]}), True


async def test_fuzzed_frames_get_errors_and_disturb_nobody(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    limits = ServerLimits(rate=1e9, burst=10**9, max_errors=10**9)
    async with LiveServer("127.0.0.1", 0, static_dir=tmp_path, limits=limits) as srv:
        srv.set_board(board_state("b1"))
        (watcher,) = await subscribed(srv, 1)
        rng = random.Random(SEED)
        sent_bad = 0
        seq = 0
        async with connect(f"ws://127.0.0.1:{srv.port}/ws", max_size=None) as fuzz:
            await recv_json(fuzz)
            for i in range(FRAMES):
                data, bad = frame(rng)
                await fuzz.send(data)
                # A ping behind each frame: what came before the pong answers it.
                await fuzz.send('{"type":"ping"}')
                # (a valid ping of the fuzz itself is answered with a pong too)
                pongs = 2 if data == '{"type": "ping"}' else 1
                kinds = []
                while pongs:
                    msg = await recv_json(fuzz)
                    if msg["type"] == "pong":
                        pongs -= 1
                    else:
                        kinds.append(msg["type"])
                if bad:
                    sent_bad += 1
                    assert "error" in kinds, (i, data)
                if i % 100 == 0:  # the other client's updates flow meanwhile
                    seq += 1
                    s = board_state("b1", plies=1 + seq % 8, seq=seq)
                    srv.publish(update_for(s), s)
            assert fuzz.close_code is None
        got = []
        while len(got) < seq:
            msg = await recv_json(watcher)
            if msg["type"] == "update":
                got.append(msg["seq"])
        assert got == list(range(1, seq + 1))
        await watcher.ping()
        await watcher.close()
        assert srv.stats.protocol_errors >= sent_bad > FRAMES // 3
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
