"""The service feeds its WebSocket server and its MQTT publisher side by side:
every update the viewers receive goes to the broker with the same bytes, and
every whole board (a new board, a reset) goes there as the same snapshot."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import chess
from app.conftest import running
from websockets.asyncio.client import connect

from livegain.app.service import Service
from livegain.config import load_settings
from livegain.core.evaluation import Evaluation
from livegain.core.snapshot import GameSnapshot, PlayerInfo
from livegain.publish.mqtt import MqttPublisher

from .helpers import recv_board_messages, recv_json, toy_model

SANS = ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6"]


class InstantEvaluator:
    """A material count, at once (no engine process)."""

    async def evaluate(self, board: chess.Board, priority: int = 0) -> Evaluation:
        cp = sum(
            {1: 100, 2: 300, 3: 300, 4: 500, 5: 900}.get(p.piece_type, 0)
            * (1 if p.color == chess.WHITE else -1)
            for p in board.piece_map().values()
        )
        return Evaluation(cp=cp, depth=1)

    def describe(self) -> str:
        return "instant"

    @property
    def engine_key(self) -> str:
        return "instant"


class RecordingPublisher(MqttPublisher):
    """What the service hands the MQTT publisher (never connects)."""

    def __init__(self) -> None:
        super().__init__("mqtt://127.0.0.1:1")
        self.updates: list[tuple[str, bytes]] = []
        self.state_calls: list[tuple[str, bytes | Callable[[], bytes]]] = []

    def publish_update(self, board_id: str, update: bytes) -> None:
        self.updates.append((board_id, update))

    def publish_state(self, board_id: str, snapshot: bytes | Callable[[], bytes]) -> None:
        self.state_calls.append((board_id, snapshot))

    def states(self, board_id: str) -> list[bytes]:
        """Every state queued for the board, as the broker would get it now."""
        return [s if isinstance(s, bytes) else s() for b, s in self.state_calls if b == board_id]

    def state(self, board_id: str) -> bytes:
        """The board's state as the broker would get it now (the last one queued)."""
        entry = next(s for b, s in reversed(self.state_calls) if b == board_id)
        return entry if isinstance(entry, bytes) else entry()


def snap(moves: list[str], **kw: Any) -> GameSnapshot:
    return GameSnapshot(
        source="feed",
        white=PlayerInfo("Alpha, Ann"),
        black=PlayerInfo("Beta, Bob"),
        moves=tuple(moves),
        event="T",
        round="1",
        board=1,
        **kw,
    )


async def test_viewers_and_the_broker_get_the_same_bytes(tmp_path: Path) -> None:
    settings = load_settings(
        None,
        server={"host": "127.0.0.1", "port": 0},
        persist=False,
        engine={"rating": 2860.0},
        log={"level": "warning", "json": False},
    )
    service = Service(settings, evaluator=InstantEvaluator(), perceived_model=toy_model())
    recorder = RecordingPublisher()
    async with running(service):
        service.mqtt = recorder
        service.on_snapshot(snap(SANS[:2]))
        (bid,) = service.server.board_ids()
        async with connect(f"ws://127.0.0.1:{service.server.port}/ws", max_size=None) as ws:
            await recv_json(ws)
            await ws.send('{"type":"subscribe","boards":"*"}')
            (first,) = await recv_board_messages(ws, 1)
            assert json.loads(first)["type"] == "snapshot"
            # The retained state queued for the broker is the snapshot viewers got.
            await until(lambda: service.server.snapshot_bytes(bid) == first.encode())
            assert recorder.state(bid) == first.encode()
            for k in range(3, len(SANS) + 1):
                service.on_snapshot(snap(SANS[:k]))
            # A reset: the board's details change, viewers get it whole.
            service.on_snapshot(snap(SANS, tags=(("Annotator", "arbiter"),)))
            received: list[str] = []
            snapshots: list[str] = []
            async with asyncio.timeout(10):
                while not snapshots:
                    raw = await ws.recv()
                    assert isinstance(raw, str)
                    kind = json.loads(raw)["type"]
                    if kind == "update":
                        received.append(raw)
                    elif kind == "snapshot":
                        snapshots.append(raw)
            # Every update viewers received went to the broker, byte for byte, in order.
            since = json.loads(first)["state"]["seq"]  # what the viewer had before
            mqtt_updates = after(recorder, bid, since)
            assert received and mqtt_updates[: len(received)] == received
            # The reset's snapshot is a state queued for the broker (a later one
            # replaces it there once the next evaluations come).
            assert snapshots[0].encode() in recorder.states(bid)
            assert json.loads(snapshots[0])["state"]["seq"] == json.loads(received[-1])["seq"]
            # Later updates (the evaluations of the last moves) go to both too.
            await asyncio.sleep(0.3)
            while True:
                try:
                    raw = await asyncio.wait_for(ws.recv(), 0.5)
                except TimeoutError:
                    break
                if json.loads(raw)["type"] == "update":
                    received.append(str(raw))
            assert after(recorder, bid, since) == received
            assert recorder.state(bid) == service.server.snapshot_bytes(bid)


def after(recorder: RecordingPublisher, board_id: str, seq: int) -> list[str]:
    """The updates handed to the MQTT publisher for ``board_id`` after ``seq``."""
    out = [data.decode() for b, data in recorder.updates if b == board_id]
    return [u for u in out if json.loads(u)["seq"] > seq]


async def until(cond: Callable[[], bool], wait: float = 5.0) -> None:
    async with asyncio.timeout(wait):
        while not cond():  # noqa: ASYNC110
            await asyncio.sleep(0.02)
