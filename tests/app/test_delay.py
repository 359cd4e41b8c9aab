"""The broadcast delay end to end: a game replayed at four plies a second,
``[broadcast] delay = 3``; a WebSocket client, an MQTT subscriber and an
``/api`` poller record when they see each ply, and none sees a ply (by its
move, its position or a ply count) or the result before the ply reached the
service plus the delay; the service is stopped and started again in the
middle of the delay and releases nothing early."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiomqtt
import chess
import pytest

from livegain.app.service import Service
from livegain.core.evaluation import Evaluation
from livegain.core.snapshot import GameSnapshot, PlayerInfo
from livegain.feeds.base import FeedSink
from livegain.publish import schema

from .conftest import running, settings_for, toy_model, ws_url
from .mirror import Mirror, apply_update, fully_evaluated

DELAY = 3
SANS = ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6"]
SANS += ["O-O", "Be7", "Re1", "b5", "Bb3", "d6", "c3", "O-O"]
FIRST_RUN = 12
"""Plies sent before the restart."""


def position_plies() -> dict[str, int]:
    """Position (FEN without the move counters) -> the ply that made it."""
    board = chess.Board()
    out = {_pos(board.fen()): 0}
    for k, san in enumerate(SANS, start=1):
        board.push_san(san)
        out[_pos(board.fen())] = k
    return out


def _pos(fen: str) -> str:
    return " ".join(fen.split()[:4])


class Material:
    """A material count after a short wait (the engine's latency, no process)."""

    engine_key = "material"

    def __init__(self, latency: float = 0.02) -> None:
        self.latency = latency

    async def evaluate(self, board: chess.Board, priority: int = 0) -> Evaluation:
        await asyncio.sleep(self.latency)
        cp = sum(
            {1: 100, 2: 300, 3: 300, 4: 500, 5: 900}.get(p.piece_type, 0)
            * (1 if p.color == chess.WHITE else -1)
            for p in board.piece_map().values()
        )
        return Evaluation(cp=cp, depth=1)

    def describe(self) -> str:
        return "material"


class Relay:
    """A live game replayed at ``rate`` plies a second, from ply ``start`` to
    ``stop``, recording when each ply first reached the service."""

    name = "relay"

    def __init__(self, arrived: dict[int, float], start: int, stop: int, rate: float) -> None:
        self.arrived = arrived
        self.plies = range(start, stop + 1)
        self.pause = 1.0 / rate
        self.sent = 0

    async def run(self, sink: FeedSink) -> None:
        for k in self.plies:
            await asyncio.sleep(self.pause)
            result = "1-0" if k == len(SANS) else "*"
            now = time.time()
            for p in range(1, k + 1):
                self.arrived.setdefault(p, now)
            if result != "*":
                self.arrived.setdefault(0, now)  # 0: the result
            sink.snapshot(
                GameSnapshot(
                    source=self.name,
                    white=PlayerInfo("Alpha, Ann"),
                    black=PlayerInfo("Beta, Bob"),
                    moves=tuple(SANS[:k]),
                    result=result,
                    event="Delayed Open",
                    round="1",
                    board=1,
                )
            )
            self.sent = k
        await asyncio.Event().wait()


class Seen:
    """What clients saw, when: (time, where, plies shown, result shown)."""

    def __init__(self) -> None:
        self.positions = position_plies()
        self.events: list[tuple[float, str, int, str]] = []
        self.changed = asyncio.Event()

    def most(self, where: str) -> int:
        """The most plies seen by clients whose label starts with ``where``."""
        return max((p for _, w, p, _ in self.events if w.startswith(where)), default=0)

    def state(self, t: float, where: str, state: dict[str, Any]) -> None:
        plies = max([m["ply"] for m in state["moves"]] + [self.positions[_pos(state["fen"])]])
        self.events.append((t, where, plies, state["result"]))

    def message(self, t: float, where: str, msg: dict[str, Any]) -> None:
        kind = msg.get("type")
        if kind == "snapshot":
            self.state(t, where, msg["state"])
        elif kind == "update":
            shown = self.positions[_pos(msg["fen"])]
            if msg["ply"] is not None:
                shown = max(shown, msg["ply"]["ply"])
            self.events.append((t, where, shown, msg["result"]))
        elif kind in ("hello", "boards", "boards_diff"):
            for key in ("boards", "added", "changed"):
                for b in msg.get(key) or []:
                    self.events.append((t, f"{where} {kind}", b["plies"], b["result"]))

    def early(self, arrived: dict[int, float]) -> list[str]:
        """Everything seen before its time."""
        out = []
        for t, where, plies, result in self.events:
            for p in range(1, plies + 1):
                if t < arrived[p] + DELAY:
                    out.append(f"{where}: ply {p} {arrived[p] + DELAY - t:.2f} s early")
                    break
            if result != "*" and (0 not in arrived or t < arrived[0] + DELAY):
                out.append(f"{where}: the result before its time")
        return out


class StampedMirror(Mirror):
    """The test's mirror, recording when each message came."""

    def __init__(self, url: str, seen: Seen, where: str) -> None:
        super().__init__(url)
        self.seen = seen
        self.where = where

    async def _reader(self) -> None:
        assert self._ws is not None
        async for raw in self._ws:
            t = time.time()
            msg = json.loads(raw)
            self.seen.message(t, self.where, msg)
            self.messages.append(msg)
            if msg["type"] == "hello":
                self.hello = msg
            elif msg["type"] == "snapshot":
                self.boards[msg["state"]["board_id"]] = copy.deepcopy(msg["state"])
            elif msg["type"] == "update":
                apply_update(self.boards[msg["board_id"]], msg)
            self.changed.set()


@contextlib.asynccontextmanager
async def mqtt_watch(prefix: str, seen: Seen) -> AsyncIterator[list[str]]:
    topics: list[str] = []
    async with aiomqtt.Client("127.0.0.1", 1883) as client:
        await client.subscribe(f"{prefix}/out/#", qos=1)

        async def reader() -> None:
            async for m in client.messages:
                t = time.time()
                body = bytes(m.payload)
                topics.append(m.topic.value)
                if body and m.topic.value != f"{prefix}/out/status":
                    seen.message(t, f"mqtt {m.topic.value}", json.loads(body))
                    seen.changed.set()

        task = asyncio.create_task(reader())
        try:
            yield topics
        finally:
            task.cancel()


@contextlib.asynccontextmanager
async def api_poll(service: Service, seen: Seen) -> AsyncIterator[None]:
    """GET /api/boards and each board every 0.2 s, as a site would."""

    def get(path: str) -> Any:
        with urllib.request.urlopen(f"{service.url}{path}", timeout=5) as r:
            return json.loads(r.read())

    async def poll() -> None:
        while True:
            listed = await asyncio.to_thread(get, "api/boards")
            t = time.time()
            for b in listed:
                seen.events.append((t, "/api/boards", b["plies"], b["result"]))
                state = await asyncio.to_thread(get, f"api/boards/{b['board_id']}")
                seen.state(time.time(), "/api/boards/id", state)
            await asyncio.sleep(0.2)

    task = asyncio.create_task(poll())
    try:
        yield
    finally:
        task.cancel()


@pytest.mark.broker
async def test_no_client_sees_a_ply_before_its_time_across_a_restart(
    tmp_path: Path, shared_broker: str, prefix: str
) -> None:
    settings = settings_for(
        tmp_path,
        broadcast={"delay": DELAY},
        mqtt={"enabled": True, "url": shared_broker, "prefix": f"{prefix}/out"},
    )
    arrived: dict[int, float] = {}
    seen = Seen()
    first = Relay(arrived, 1, FIRST_RUN, rate=4)
    service = Service(settings, evaluator=Material(), feeds=[first], perceived_model=toy_model())
    async with mqtt_watch(prefix, seen):
        async with (
            running(service),
            StampedMirror(ws_url(service), seen, "ws") as mirror,
            api_poll(service, seen),
        ):
            # Stop in the middle of the delay: some plies out, the rest held.
            line = service.delay_line
            assert line is not None
            await mirror.wait(lambda m: any(len(s["moves"]) >= 2 for s in m.boards.values()), 30)
            await mirror.wait(lambda m: first.sent == FIRST_RUN, 30)
            held_at_stop = len(line)
            shown_at_stop = max(len(s["moves"]) for s in mirror.boards.values())
        assert held_at_stop > 0 and shown_at_stop < FIRST_RUN
        second = Relay(arrived, FIRST_RUN + 1, len(SANS), rate=4)
        service = Service(
            settings, evaluator=Material(), feeds=[second], perceived_model=toy_model()
        )
        async with (
            running(service),
            StampedMirror(ws_url(service), seen, "ws after restart") as mirror,
            api_poll(service, seen),
        ):
            # What viewers saw before the restart is served again at once.
            await mirror.wait(lambda m: m.hello is not None, 10)
            assert mirror.hello is not None
            (listed,) = mirror.hello["boards"]
            assert listed["plies"] >= shown_at_stop and listed["delay"] == DELAY
            await mirror.wait(
                lambda m: any(
                    fully_evaluated(s, len(SANS)) and s["result"] == "1-0"
                    for s in m.boards.values()
                ),
                60,
            )
            state = next(iter(mirror.boards.values()))
            assert state["delay"] == DELAY
            async with asyncio.timeout(30):  # the broker's copy catches up
                while seen.most("mqtt") < len(SANS):
                    seen.changed.clear()
                    await seen.changed.wait()
    assert seen.early(arrived) == []
    wheres = {w.split()[0] for _, w, plies, _ in seen.events if plies > 0}
    assert {"ws", "mqtt", "/api/boards", "/api/boards/id"} <= wheres
    async with aiomqtt.Client("127.0.0.1", 1883) as c:  # leave no retained messages behind
        for bid in mirror.boards:
            await c.publish(f"{prefix}/out/{bid}/state", b"", retain=True)
        for t in (f"{prefix}/out/boards", f"{prefix}/out/status"):
            await c.publish(t, b"", retain=True)


class MatchGames:
    """Two games of a match: game 2 ends (``Beta`` wins) while game 1's first
    move is still being analysed; game 1 goes on later."""

    name = "relay"

    def __init__(self, arrived: dict[str, float]) -> None:
        self.arrived = arrived

    def send(self, sink: FeedSink, board: int, white: str, black: str, moves: list[str]) -> None:
        result = "1-0" if board == 2 and len(moves) == 2 else "*"
        if result != "*":
            self.arrived["result"] = time.time()
        sink.snapshot(
            GameSnapshot(
                source=self.name,
                white=PlayerInfo(white),
                black=PlayerInfo(black),
                moves=tuple(moves),
                result=result,
                event="Match",
                round=str(board),
                board=1,
            )
        )

    async def run(self, sink: FeedSink) -> None:
        self.send(sink, 1, "Alpha", "Beta", ["e4"])
        self.send(sink, 2, "Beta", "Alpha", ["d4"])
        await asyncio.sleep(0.05)
        self.send(sink, 2, "Beta", "Alpha", ["d4", "d5"])  # 1-0: Beta leads
        await asyncio.sleep(DELAY)
        self.send(sink, 1, "Alpha", "Beta", ["e4", "e5"])
        await asyncio.Event().wait()


async def test_match_odds_count_a_result_only_once_viewers_have_it(tmp_path: Path) -> None:
    """Game 1's first move is evaluated after game 2's result came: the
    evaluation goes out with the move, before that result; the match odds it
    carries must not count it yet."""
    settings = settings_for(
        tmp_path,
        broadcast={"delay": DELAY},
        matches=[{"a": "Alpha", "b": "Beta", "games": 4}],
    )
    arrived: dict[str, float] = {}
    seen: list[tuple[float, dict[str, Any]]] = []

    class Watch(Mirror):
        async def _reader(self) -> None:
            assert self._ws is not None
            async for raw in self._ws:
                msg = json.loads(raw)
                seen.append((time.time(), msg))
                if msg["type"] == "snapshot":
                    self.boards[msg["state"]["board_id"]] = copy.deepcopy(msg["state"])
                elif msg["type"] == "update":
                    apply_update(self.boards[msg["board_id"]], msg)
                self.changed.set()

    service = Service(
        settings,
        evaluator=Material(latency=0.3),
        feeds=[MatchGames(arrived)],
        perceived_model=toy_model(),
    )
    async with running(service), Watch(ws_url(service)) as mirror:
        await mirror.wait(
            lambda m: any(
                len(s["moves"]) == 2 and s["moves"][0]["eval"] is not None
                for s in m.boards.values()
                if s["round"] == "1"
            ),
            30,
        )
    game1 = [
        (t, m.get("state", m)["match"])
        for t, m in seen
        if m["type"] in ("snapshot", "update") and m.get("state", m)["board_id"].endswith("r1-b1")
    ]
    assert game1 and all(match is not None for _, match in game1)
    early = [
        (round(arrived["result"] + DELAY - t, 3), match)
        for t, match in game1
        if match["score_b"] > 0 and t < arrived["result"] + DELAY
    ]
    assert early == []
    assert game1[-1][1]["score_b"] == 1.0  # counted once viewers have it


class Undelayed(MatchGames):
    name = "undelayed"
    delay = 0


@pytest.mark.parametrize("delayed", [True, False], ids=["held", "not-held"])
async def test_with_a_delay_each_board_change_is_converted_and_its_match_odds_computed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, delayed: bool
) -> None:
    """A board change's wire form (its state, its updates, their bytes) is built once and
    its match odds computed once, whether the delay holds it (``held``) or
    not: here a feed without a delay under a service with one (its boards go
    out at once)."""
    from livegain.app.match import MatchTracker
    from livegain.publish import convert

    settings = settings_for(
        tmp_path,
        broadcast={"delay": DELAY},
        matches=[{"a": "Alpha", "b": "Beta", "games": 4}],
    )
    calls = {"odds": 0, "changes": 0, "updates": 0, "states": 0, "converted": 0, "encoded": 0}
    odds, publish = MatchTracker.odds, Service._publish_board
    board_state, update = convert.board_state, convert.update
    dump = schema.Update.model_dump_json

    def counted_dump(self: schema.Update, *args: Any, **kwargs: Any) -> str:
        calls["encoded"] += 1
        return dump(self, *args, **kwargs)

    def counted_odds(self: MatchTracker, *args: Any, **kwargs: Any) -> Any:
        calls["odds"] += 1
        return odds(self, *args, **kwargs)

    def counted_publish(self: Service, bid: str, updates: list[Any], *, new: bool = False) -> None:
        calls["changes"] += 1
        calls["updates"] += 0 if new else len(updates)
        publish(self, bid, updates, new=new)

    def counted_state(*args: Any, **kwargs: Any) -> Any:
        calls["states"] += 1
        return board_state(*args, **kwargs)

    def counted_update(*args: Any, **kwargs: Any) -> Any:
        calls["converted"] += 1
        return update(*args, **kwargs)

    monkeypatch.setattr(MatchTracker, "odds", counted_odds)
    monkeypatch.setattr(Service, "_publish_board", counted_publish)
    monkeypatch.setattr(convert, "board_state", counted_state)
    monkeypatch.setattr(convert, "update", counted_update)
    monkeypatch.setattr(schema.Update, "model_dump_json", counted_dump)
    feed = MatchGames({}) if delayed else Undelayed({})
    service = Service(
        settings, evaluator=Material(latency=0.05), feeds=[feed], perceived_model=toy_model()
    )
    async with running(service), Mirror(ws_url(service)) as mirror:
        await mirror.wait(lambda m: sum(len(s["moves"]) for s in m.boards.values()) >= 3, 30)
        line = service.delay.line
        assert line is not None and (line.knows("relay-r1-b1") == delayed)
    assert calls["changes"] > 0 and calls["converted"] > 0
    assert calls["odds"] == calls["changes"]
    assert calls["converted"] == calls["updates"]  # each update converted once
    # and encoded once: held (and stored) and released in the bytes it was published in
    assert calls["encoded"] == calls["updates"]
    assert 0 < calls["states"] <= calls["changes"]  # each state at most once


class TwoBoards:
    """Board A: one move, then silence (it expires). Board B: a move every
    half second; an operator removes it while some of its moves are held."""

    name = "relay"

    def __init__(self, arrived: dict[str, float]) -> None:
        self.arrived = arrived

    async def run(self, sink: FeedSink) -> None:
        for k in range(1, 5):
            now = time.time()
            self.arrived.setdefault("A", now)
            self.arrived[f"B{k}"] = now
            for board, white, moves in ((1, "Alpha", SANS[:1]), (2, "Gamma", SANS[:k])):
                sink.snapshot(
                    GameSnapshot(
                        source=self.name,
                        white=PlayerInfo(white),
                        black=PlayerInfo("Beta"),
                        moves=tuple(moves),
                        round="1",
                        board=board,
                    )
                )
            await asyncio.sleep(0.5)
        await asyncio.Event().wait()


async def test_an_expired_board_leaves_after_its_moves_an_operators_removal_at_once(
    tmp_path: Path,
) -> None:
    expiry = 2.0
    token = "t" * 24
    settings = settings_for(
        tmp_path,
        broadcast={"delay": DELAY},
        server={"board_expiry": expiry, "admin_token": token},
    )
    arrived: dict[str, float] = {}
    seen: list[tuple[float, dict[str, Any]]] = []

    class Watch(Mirror):
        async def _reader(self) -> None:
            assert self._ws is not None
            async for raw in self._ws:
                msg = json.loads(raw)
                seen.append((time.time(), msg))
                self.changed.set()

    def delete(service: Service, bid: str) -> int:
        req = urllib.request.Request(
            f"{service.url}api/boards/{bid}",
            method="DELETE",
            headers={"Authorization": f"Bearer {token}"},
        )
        with urllib.request.urlopen(req, timeout=5) as r:
            return int(r.status)

    def shown(bid: str) -> list[tuple[float, int]]:
        """(time, plies) of each snapshot or update of ``bid`` seen."""
        out = []
        for t, m in seen:
            if m["type"] == "snapshot" and m["state"]["board_id"] == bid:
                out.append((t, len(m["state"]["moves"])))
            elif m["type"] == "update" and m["board_id"] == bid and m["ply"] is not None:
                out.append((t, m["ply"]["ply"]))
        return out

    def removed(bid: str) -> list[float]:
        return [t for t, m in seen if m["type"] == "boards_diff" and bid in m["removed"]]

    service = Service(
        settings, evaluator=Material(), feeds=[TwoBoards(arrived)], perceived_model=toy_model()
    )
    a, b = "relay-r1-b1", "relay-r1-b2"
    async with running(service), Watch(ws_url(service)) as mirror:
        await mirror.wait(lambda m: any(plies >= 1 for _, plies in shown(b)), 30)
        assert arrived.get("B4") is not None  # B's last moves are held
        assert await asyncio.to_thread(delete, service, b) == 200
        deleted = time.time()
        await mirror.wait(lambda m: bool(removed(a)), 30)
        await asyncio.sleep(0.5)  # B's held moves would have come by now
        assert service.server.board_ids() == []
    # A: shown with its move, and gone only a delay after it expired.
    assert shown(a) and shown(a)[0][0] < removed(a)[0]
    assert removed(a)[0] >= arrived["A"] + expiry + DELAY
    # B: gone at once; what was held of it never shown.
    assert max(p for _, p in shown(b)) < 4
    assert all(t < deleted for t, _ in shown(b))


class HeldBoard:
    """One board, one move, behind the delay; nothing else."""

    name = "relay"

    async def run(self, sink: FeedSink) -> None:
        sink.snapshot(
            GameSnapshot(
                source=self.name,
                white=PlayerInfo("Alpha"),
                black=PlayerInfo("Beta"),
                moves=tuple(SANS[:2]),
                round="1",
                board=1,
            )
        )
        await asyncio.Event().wait()


async def test_an_operator_removes_a_board_the_delay_still_holds(tmp_path: Path) -> None:
    token = "t" * 24
    settings = settings_for(tmp_path, broadcast={"delay": DELAY}, server={"admin_token": token})

    def delete(service: Service, bid: str) -> int:
        req = urllib.request.Request(
            f"{service.url}api/boards/{bid}",
            method="DELETE",
            headers={"Authorization": f"Bearer {token}"},
        )
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                return int(r.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)

    service = Service(
        settings, evaluator=Material(), feeds=[HeldBoard()], perceived_model=toy_model()
    )
    bid = "relay-r1-b1"
    async with running(service), Mirror(ws_url(service)) as mirror:
        for _ in range(200):  # the feed's snapshot is in (held by the delay)
            if service.registry is not None and bid in service.registry.boards:
                break
            await asyncio.sleep(0.05)
        assert service.registry is not None and bid in service.registry.boards
        assert service.server.board_ids() == []  # held: viewers do not have it yet
        assert await asyncio.to_thread(delete, service, bid) == 200
        assert await asyncio.to_thread(delete, service, "no-such-board") == 404
        await asyncio.sleep(DELAY + 1.0)  # its release time has passed
        assert service.server.board_ids() == []
        assert bid not in mirror.boards
        assert bid not in service.registry.boards
