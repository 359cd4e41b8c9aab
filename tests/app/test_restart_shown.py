"""A restart serves at once what viewers had: the standings (their odds and
player rows inside) and the key moments, over HTTP, WebSocket and MQTT, with a
broadcast delay or without one; what the delay still held at the stop comes
out at its own time, never earlier.

A real service (in-process) follows a replayed round through a real PGN
relay with Stockfish, is stopped and started again on the same store. Every
wait is on a condition with a deadline."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiomqtt
import pytest
from websockets.asyncio.client import ClientConnection, connect

from livegain.app.live_standings import version_of
from livegain.app.service import STORE_FILE, Service
from livegain.app.shown import load_shown
from livegain.app.store import Store
from livegain.config import Settings
from livegain.engine.pool import EnginePool
from livegain.feeds.base import PgnHttpFeedConfig
from livegain.relay.replay import Replay

from .conftest import running, settings_for, toy_model, ws_url

EVENT = "Restart Open"
DELAY = 20
"""Seconds: long enough that a stop, a start and a first look (a few seconds
on a loaded machine) fit well inside it."""


def game(rnd: str, white: str, black: str, moves: str, result: str) -> str:
    return (
        f'[Event "{EVENT}"]\n[Round "{rnd}"]\n[White "{white}"]\n[Black "{black}"]\n'
        f'[WhiteElo "2600"]\n[BlackElo "2550"]\n[Result "{result}"]\n\n{moves} {result}\n'
    )


# A scholar's mate (1-0 on its 7th ply) and a game still in progress.
ROUND = (
    game("1.1", "Alpha, Ann", "Beta, Bob", "1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7#", "1-0")
    + "\n"
    + game("1.2", "Gamma, Gil", "Delta, Dan", "1. d4 d5 2. c4 e6 3. Nc3", "*")
)
PLIES = 12
"""Plies of the round, both games."""


class Viewer:
    """A WebSocket client that asked for every board and every event's
    standings, recording when each message came; it stays connected until
    the service closes the connection."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.messages: list[tuple[float, dict[str, Any]]] = []
        self.changed = asyncio.Event()
        self._ws: ClientConnection | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> Viewer:
        self._ws = await connect(self.url, max_size=None)
        self._task = asyncio.create_task(self._read())
        await self._ws.send(json.dumps({"type": "subscribe_standings", "events": "*"}))
        await self._ws.send(json.dumps({"type": "subscribe", "boards": "*"}))
        return self

    async def _read(self) -> None:
        assert self._ws is not None
        with contextlib.suppress(Exception):  # the service closing is the end
            async for raw in self._ws:
                self.messages.append((time.time(), json.loads(raw)))
                self.changed.set()
        self.changed.set()

    async def closed(self) -> None:
        """Wait (30 s at most) until the service has closed the connection."""
        assert self._task is not None
        async with asyncio.timeout(30):
            await self._task

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._task is not None:
            with contextlib.suppress(Exception):
                await self._task

    def standings(self) -> list[tuple[float, dict[str, Any]]]:
        return [(t, m) for t, m in self.messages if m["type"] == "standings"]

    def latest(self) -> dict[str, Any] | None:
        got = self.standings()
        return got[-1][1] if got else None

    def moments(self) -> list[dict[str, Any]]:
        return [m for _, m in self.messages if m["type"] == "moment"]

    def result_shown(self) -> bool:
        """The mate's result reached this viewer (in a snapshot or an update)."""
        for _, m in self.messages:
            state = m.get("state", m)
            if m["type"] in ("snapshot", "update") and state.get("result") == "1-0":
                return True
        return False

    async def until(self, check: Callable[[], bool], seconds: float) -> None:
        """Wait until ``check()`` holds (looked at on each message, and every
        0.2 s for what the service holds), at most ``seconds``."""
        async with asyncio.timeout(seconds):
            while not check():
                self.changed.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(0.2):
                        await self.changed.wait()


def http(service: Service, path: str) -> Any:
    """GET ``path`` (JSON; None for a 404)."""
    try:
        with urllib.request.urlopen(f"{service.url}{path}", timeout=10) as answer:
            return json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise


def one_event() -> str:
    return f"api/standings/{urllib.parse.quote(EVENT)}"


async def served(service: Service) -> tuple[float, Any, Any]:
    """(the time the answers came, ``/api/standings/{event}``, ``/api/standings``)."""
    one = await asyncio.to_thread(http, service, one_event())
    every = await asyncio.to_thread(http, service, "api/standings")
    return time.time(), one, every


class AtReady:
    """What the service serves the moment it is ready, before its own
    standings task has taken a step: every event's standings, the kept
    moments, how many standings it has published itself, and when."""

    standings: list[dict[str, Any]]
    moments: list[dict[str, Any]]
    published: int
    at: float

    @classmethod
    async def look(cls, service: Service) -> AtReady:
        await service.ready.wait()
        out = cls()
        hub = service.server.hub
        out.standings = [json.loads(hub.standings(e) or b"null") for e in hub.standings_events()]
        out.moments = [json.loads(data) for _, data in hub.moments()]
        out.published = service.standings.stats.published
        out.at = time.time()
        return out


@contextlib.asynccontextmanager
async def relay() -> AsyncIterator[Replay]:
    """The round as a polled PGN; the test reveals the moves."""
    replay = Replay.from_pgn(ROUND, mode="pgn-http", seconds_per_move=1.0)
    await replay.start(autoplay=False)
    try:
        yield replay
    finally:
        await replay.stop()


def settings(tmp_path: Path, replay: Replay, **over: Any) -> Settings:
    feed = PgnHttpFeedConfig(name="relay", url=replay.pgn_url, interval=0.2)
    events = [{"name": EVENT, "format": "round-robin", "sims": 5_000}]
    return settings_for(tmp_path, feeds=[feed.model_dump()], events=events, **over)


def mate_index(replay: Replay) -> int:
    """Moves revealed before the mate (the first game's 7th ply)."""
    return next(k for k, (_, i, ply) in enumerate(replay.timeline) if (i, ply) == (0, 7))


@contextlib.asynccontextmanager
async def mqtt_standings(prefix: str) -> AsyncIterator[list[tuple[float, dict[str, Any]]]]:
    """Every ``standings`` message on the broker under ``prefix``, with when it came."""
    got: list[tuple[float, dict[str, Any]]] = []
    async with aiomqtt.Client("127.0.0.1", 1883) as client:
        await client.subscribe(f"{prefix}/standings/+", qos=1)

        async def read() -> None:
            async for m in client.messages:
                if m.payload:
                    got.append((time.time(), json.loads(bytes(m.payload))))

        task = asyncio.create_task(read())
        try:
            yield got
        finally:
            task.cancel()


async def retained_standings(prefix: str) -> dict[str, Any]:
    """The retained ``standings`` message a subscriber gets now."""
    async with aiomqtt.Client("127.0.0.1", 1883) as client:
        await client.subscribe(f"{prefix}/standings/+", qos=1)
        async with asyncio.timeout(10):
            async for m in client.messages:
                if m.payload:
                    return dict(json.loads(bytes(m.payload)))
    raise AssertionError("no retained standings")


async def clear_retained(prefix: str) -> None:
    """Leave no retained message of the test behind on the shared broker."""
    async with aiomqtt.Client("127.0.0.1", 1883) as client:
        await client.subscribe(f"{prefix}/#", qos=1)
        topics: set[str] = set()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(1.0):
                async for m in client.messages:
                    if m.retain and m.payload:
                        topics.add(m.topic.value)
        for topic in topics:
            await client.publish(topic, b"", qos=1, retain=True)


def test_the_version_of_a_standings_message() -> None:
    assert version_of(b'{"type": "standings", "version": 7}') == 7
    bad = [b"", b"\xff", b"[]", b'{"type": "moment", "version": 1}']
    bad += [b'{"type": "standings"}', b'{"type": "standings", "version": "7"}']
    for data in bad:
        with pytest.raises(ValueError):
            version_of(data)


def test_a_shown_row_that_cannot_be_read_is_skipped(tmp_path: Path) -> None:
    store = Store(tmp_path / STORE_FILE)
    try:
        good = b'{"type": "standings", "event": "Open", "version": 3}'
        store.save_shown_standings("Open", good)
        store.save_shown_standings("Broken", b'{"type": "standings", "vers')
        store.save_shown_moment("b1", b'{"type": "moment", "board_id": "b1"}', kept=50)
        store.save_shown_moment("b2", b"not json", kept=50)
        shown = load_shown(store)
        assert shown.standings == [("Open", good)]
        assert shown.moments == [("b1", b'{"type": "moment", "board_id": "b1"}')]
        assert store.bad_rows == 2
    finally:
        store.close()


@pytest.mark.engine
@pytest.mark.slow
@pytest.mark.broker
async def test_a_restart_under_a_delay_shows_at_once_what_viewers_had_and_nothing_held(
    tmp_path: Path, pool: EnginePool, shared_broker: str, prefix: str
) -> None:
    mqtt = {"enabled": True, "url": shared_broker, "prefix": prefix}
    try:
        async with relay() as replay, mqtt_standings(prefix) as on_broker:
            config = settings(tmp_path, replay, broadcast={"delay": DELAY}, mqtt=mqtt)
            mate = mate_index(replay)
            service = Service(config, evaluator=pool, perceived_model=toy_model())
            async with running(service):
                viewer = await Viewer(ws_url(service)).start()
                await replay.advance(mate)  # every move but the mate

                def settled() -> bool:
                    """The viewer has the standings of every move revealed, and
                    the delay holds no standings message any more."""
                    latest = viewer.latest()
                    return (
                        latest is not None
                        and latest["plies"] == mate
                        and not service.delay.held_standings()
                    )

                await viewer.until(settled, 120)
                before = viewer.latest()
                assert before is not None and before["finished"] == 0 and before["live"] == 2
                _, one, every = await served(service)
                assert one == before and every == [before]
                await replay.advance(1)  # the mate: a result, held by the delay

                def result_held() -> bool:
                    held = service.delay.held_standings()
                    return any(json.loads(data)["finished"] == 1 for _, data in held)

                await viewer.until(result_held, 60)
                assert viewer.latest() == before  # nothing of the result yet
            await viewer.closed()
            stopped = time.time()
            assert viewer.latest() == before  # what the viewer had at the stop
            moments_before = viewer.moments()

            # What the delay held at the stop, with the time each is due.
            store = Store(Path(config.data_dir) / STORE_FILE)
            try:
                _, rows = store.load_delayed()
            finally:
                store.close()
            held = [
                (due, json.loads(body))
                for _, key, due, _, body in rows
                if key == f"standings/{EVENT}"
            ]
            assert any(msg["finished"] == 1 for _, msg in held)
            first_due = min(due for due, _ in held)
            newest_held = max(msg["version"] for _, msg in held)

            service = Service(config, evaluator=pool, perceived_model=toy_model())
            look = asyncio.create_task(AtReady.look(service))
            async with running(service):
                ready = await look
                assert ready.at < first_due, "the restart took longer than the delay"
                # At once, before the service computed anything: what the
                # viewer had just before the stop, standings and moments.
                assert ready.standings == [before] and ready.published == 0
                assert ready.moments[: len(moments_before)] == moments_before
                # The same over HTTP, WebSocket and MQTT (retained).
                got_at, one, every = await served(service)
                viewer = await Viewer(ws_url(service)).start()
                await viewer.until(lambda: viewer.latest() is not None, 30)
                first_at, first = viewer.standings()[0]
                retained = await retained_standings(prefix)
                retained_at = time.time()
                assert (one, every) == (before, [before]) and got_at < first_due
                assert first == before and first_at < first_due
                assert retained == before and retained_at < first_due
                await viewer.until(lambda: len(viewer.moments()) >= len(moments_before), 30)
                assert viewer.moments()[: len(moments_before)] == moments_before

                # What was held comes out at its own time, then the service's own.
                def newest_shown() -> bool:
                    latest = viewer.latest()
                    return latest is not None and latest["version"] > newest_held

                await viewer.until(newest_shown, 60)
                assert (await served(service))[1] == viewer.latest()
            await viewer.closed()
            assert viewer.result_shown()
            for where, got in (("ws", viewer.standings()), ("mqtt", on_broker)):
                for t, msg in got:
                    if t < stopped:
                        continue
                    if msg != before:
                        early = first_due - t
                        assert t >= first_due, f"{where}: v{msg['version']} {early:.2f} s early"
                    for due, held_msg in held:
                        if msg == held_msg:
                            assert t >= due, f"{where}: a held message {due - t:.2f} s early"
            shown = [m for _, m in viewer.standings()]
            assert any(m["finished"] == 1 for m in shown)
            versions = [m["version"] for m in shown]
            assert versions == sorted(versions)  # they grow across the restart too
    finally:
        await clear_retained(prefix)


@pytest.mark.engine
@pytest.mark.slow
async def test_a_restart_without_a_delay_shows_at_once_what_viewers_had(
    tmp_path: Path, pool: EnginePool
) -> None:
    async with relay() as replay:
        config = settings(tmp_path, replay)
        service = Service(config, evaluator=pool, perceived_model=toy_model())
        async with running(service):
            viewer = await Viewer(ws_url(service)).start()
            await replay.advance_all()

            def finished() -> bool:
                latest = viewer.latest()
                return (
                    latest is not None
                    and latest["finished"] == 1
                    and latest["plies"] == PLIES
                    and any(m["kind"] == "game-end" for m in viewer.moments())
                )

            await viewer.until(finished, 120)
            async with asyncio.timeout(60):  # the viewer has what /api serves
                while (answer := (await served(service))[1]) != viewer.latest():
                    with contextlib.suppress(TimeoutError):
                        await viewer.until(lambda: viewer.latest() == answer, 1)
        await viewer.closed()
        before = viewer.latest()
        moments_before = viewer.moments()
        assert before is not None and moments_before

        service = Service(config, evaluator=pool, perceived_model=toy_model())
        look = asyncio.create_task(AtReady.look(service))
        async with running(service):
            # Before the service has computed anything itself, it serves what
            # the viewer last had: standings and moments.
            ready = await look
            assert ready.standings == [before] and ready.published == 0
            assert ready.moments == moments_before
            # Over HTTP and WebSocket: that, or already the service's own next
            # message (a later version); never nothing.
            _, one, every = await served(service)
            viewer = await Viewer(ws_url(service)).start()
            await viewer.until(lambda: viewer.latest() is not None, 30)
            _, first = viewer.standings()[0]
            assert len(every) == 1
            for answer in (one, first, every[0]):
                assert answer == before or answer["version"] > before["version"], answer
            await viewer.until(lambda: len(viewer.moments()) >= len(moments_before), 30)
            assert viewer.moments()[: len(moments_before)] == moments_before
            # The service's own standings follow, with a later version.
            await viewer.until(
                lambda: any(m["version"] > before["version"] for _, m in viewer.standings()), 60
            )
        await viewer.closed()
