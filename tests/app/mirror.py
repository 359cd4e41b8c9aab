"""A WebSocket client that keeps a mirror of every board, as an overlay would."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
from collections.abc import Callable
from typing import Any

from websockets.asyncio.client import ClientConnection, connect


class SeqGap(AssertionError):
    pass


def apply_update(state: dict[str, Any], upd: dict[str, Any]) -> None:
    """Fold one ``update`` message into a board state, following docs/protocol/README.md."""
    if upd["seq"] <= state["seq"]:
        return
    if upd["seq"] != state["seq"] + 1:
        raise SeqGap(f"{state['board_id']}: seq {upd['seq']} after {state['seq']}")
    t = upd.get("truncate_to")
    if t is not None:
        state["moves"] = [m for m in state["moves"] if m["ply"] <= t]
        state["white_trace"] = [p for p in state["white_trace"] if p["ply"] <= t]
        state["black_trace"] = [p for p in state["black_trace"] if p["ply"] <= t]
    ply = upd.get("ply")
    if ply is not None:
        n = ply["ply"]
        if n <= len(state["moves"]):
            state["moves"][n - 1] = ply
        elif n == len(state["moves"]) + 1:
            state["moves"].append(ply)
        else:
            raise AssertionError(f"ply {n} leaves a hole after {len(state['moves'])}")
    state["white_trace"].extend(upd["white_points"])
    state["black_trace"].extend(upd["black_points"])
    # Every update carries the board's current values of these.
    for key in (
        "fen",
        "eval",
        "clocks",
        "result",
        "status",
        "match",
        "white_perceived",
        "black_perceived",
        "white_form",
        "black_form",
        "white_algorithm4",
        "black_algorithm4",
        "white_accuracy",
        "black_accuracy",
        "head_to_head",
    ):
        state[key] = upd[key]
    state["seq"] = upd["seq"]


class Mirror:
    """Subscribes to every board and mirrors them from snapshot + updates."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.boards: dict[str, dict[str, Any]] = {}
        self.hello: dict[str, Any] | None = None
        self.messages: list[dict[str, Any]] = []
        self.errors: list[dict[str, Any]] = []
        self._ws: ClientConnection | None = None
        self._task: asyncio.Task[None] | None = None
        self.changed = asyncio.Event()

    async def __aenter__(self) -> Mirror:
        self._ws = await connect(self.url, max_size=None)
        self._task = asyncio.create_task(self._reader())
        await self._ws.send(json.dumps({"type": "subscribe", "boards": "*"}))
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
        if self._ws is not None:
            await self._ws.close()

    async def send(self, text: str) -> None:
        assert self._ws is not None
        await self._ws.send(text)

    async def _reader(self) -> None:
        assert self._ws is not None
        async for raw in self._ws:
            msg = json.loads(raw)
            self.messages.append(msg)
            kind = msg["type"]
            if kind == "hello":
                self.hello = msg
            elif kind == "snapshot":
                self.boards[msg["state"]["board_id"]] = copy.deepcopy(msg["state"])
            elif kind == "update":
                state = self.boards.get(msg["board_id"])
                assert state is not None, f"update before snapshot for {msg['board_id']}"
                apply_update(state, msg)
            elif kind == "error":
                self.errors.append(msg)
            self.changed.set()

    async def wait(self, cond: Callable[[Mirror], bool], wait: float = 120.0) -> None:
        loop = asyncio.get_running_loop()
        end = loop.time() + wait
        while not cond(self):
            left = end - loop.time()
            if left <= 0:
                raise TimeoutError(f"mirror condition not met in {wait} s: {self.describe()}")
            self.changed.clear()
            if self._task is not None and self._task.done():
                self._task.result()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), min(left, 0.5))

    def describe(self) -> str:
        return ", ".join(
            f"{b}: {len(s['moves'])} plies, {evaluated(s)} evaluated, {s['result']}"
            for b, s in self.boards.items()
        )


def evaluated(state: dict[str, Any]) -> int:
    """Plies with an evaluation and a gain (the contiguous prefix)."""
    n = 0
    for m in state["moves"]:
        if m["eval"] is None or m["gain"] is None:
            break
        n += 1
    return n


def fully_evaluated(state: dict[str, Any], plies: int) -> bool:
    return (
        len(state["moves"]) == plies
        and evaluated(state) == plies
        and len(state["white_trace"]) + len(state["black_trace"]) == plies
    )


def comparable(state: dict[str, Any]) -> dict[str, Any]:
    """A board state without what legitimately differs between two runs."""
    skip = ("board_id", "seq", "errors", "match")
    return {k: v for k, v in state.items() if k not in skip}
