"""/healthz says "degraded", with the reasons, while a part is failing, and "ok"
again once it works: the store (a real SQLITE_FULL), a feed, the engine, the
MQTT broker."""

from __future__ import annotations

import asyncio
import json
import sys
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import chess
import pytest
from brokers import free_port

from livegain.app.service import Service
from livegain.core.evaluation import Evaluation
from livegain.core.snapshot import GameSnapshot, PlayerInfo
from livegain.engine.errors import EngineSearchError
from livegain.engine.pool import EnginePool
from livegain.engine.search import SearchLimit
from livegain.feeds.base import FeedSink, PgnHttpFeedConfig

from .conftest import DEPTH, running, settings_for


async def wait_until(cond: Callable[[], bool], limit: float = 60.0) -> None:
    """Poll ``cond`` every 20 ms, for at most ``limit`` seconds."""
    async with asyncio.timeout(limit):
        while True:
            if cond():
                return
            await asyncio.sleep(0.02)


async def healthz(service: Service) -> dict[str, Any]:
    """GET /healthz over HTTP, as a monitor would."""

    def get() -> dict[str, Any]:
        with urllib.request.urlopen(f"{service.url}healthz", timeout=5) as r:
            assert r.status == 200  # degraded is still 200: see docs/service.md
            data: dict[str, Any] = json.loads(r.read())
            return data

    return await asyncio.to_thread(get)


async def healthz_until(service: Service, status: str, limit: float = 30.0) -> dict[str, Any]:
    """GET /healthz until its status is ``status`` (at most ``limit`` seconds)."""
    async with asyncio.timeout(limit):
        while True:
            health = await healthz(service)
            if health["status"] == status:
                return health
            await asyncio.sleep(0.1)


def problems(health: dict[str, Any], start: str) -> list[str]:
    return [p for p in health.get("problems", []) if p.startswith(start)]


def snapshot(moves: list[str]) -> GameSnapshot:
    return GameSnapshot(
        source="arbiter",
        white=PlayerInfo("Byrne, Donald"),
        black=PlayerInfo("Fischer, Robert James"),
        moves=tuple(moves),
        round="1",
        board=1,
    )


# ------------------------------------------------------------------ the store


class Gated:
    """The real pool behind a gate: searches wait until it opens (so that no
    evaluation is written to the store while the test fills the disk)."""

    def __init__(self, pool: EnginePool) -> None:
        self.pool = pool
        self.gate = asyncio.Event()

    async def evaluate(self, board: chess.Board, priority: int = 0) -> Evaluation:
        await self.gate.wait()
        return await self.pool.evaluate(board, priority)

    def describe(self) -> str:
        return self.pool.describe()

    @property
    def engine_key(self) -> str:
        return self.pool.engine_key


def new_board(k: int) -> GameSnapshot:
    return GameSnapshot(
        source="arbiter",
        white=PlayerInfo(f"White {k:04d}"),
        black=PlayerInfo(f"Black {k:04d}"),
        moves=("e4", "e5"),
        round="1",
        board=k,
    )


@pytest.mark.engine
async def test_a_full_disk_degrades_health_and_it_recovers(
    tmp_path: Path, pool: EnginePool
) -> None:
    """SQLite's real SQLITE_FULL ("database or disk is full"), reached with
    ``PRAGMA max_page_count`` on the running service's own store."""
    engine = Gated(pool)
    service = Service(settings_for(tmp_path), evaluator=engine)
    async with running(service):
        service.on_snapshot(new_board(1))
        assert (await healthz(service))["status"] == "ok"
        assert service.store is not None
        db = service.store._db  # the connection the service writes with
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        db.execute(f"PRAGMA max_page_count = {pages}")  # not one more page: a full disk
        k = 1
        while service.stats.store_failures == 0:
            k += 1
            assert k < 1000, "the store never filled up"
            service.on_snapshot(new_board(k))
        health = await healthz(service)
        assert health["status"] == "degraded", health
        (why,) = problems(health, "store: writes failing")
        assert "database or disk is full" in why
        assert health["store"]["failing"] is True and health["store"]["failures"] == 1
        service.on_snapshot(new_board(k + 1))  # still full: counted again, still degraded
        health = await healthz(service)
        assert health["store"]["failures"] == 2 and health["status"] == "degraded"
        # Nothing else is lost: the boards are followed and published all the same.
        assert len(service.board_status()) == k + 1 == health["board_summary"]["boards"]

        db.execute("PRAGMA max_page_count = 1073741823")  # space again
        service.on_snapshot(new_board(k + 2))
        health = await healthz(service)
        assert health["status"] == "ok", health
        assert health["store"]["failing"] is False and health["store"]["last_error"] is None
        assert not problems(health, "store")
        engine.gate.set()  # the evaluations now reach the store too
        boards = service.registry.boards.values() if service.registry else ()
        await wait_until(lambda: all(g.evaluated_plies == g.plies == 2 for g in boards))
        assert service.store.count_evals() == 3  # the three positions every board went through
        assert (await healthz(service))["status"] == "ok"


# ------------------------------------------------------------------- the feeds


class CrashOnce:
    """A feed that crashes on its first run and reads a game when restarted."""

    name = "flaky"

    def __init__(self) -> None:
        self.runs = 0

    async def run(self, sink: FeedSink) -> None:
        self.runs += 1
        if self.runs == 1:
            raise ConnectionResetError("the relay hung up")
        sink.snapshot(snapshot(["e4"]))
        await asyncio.Event().wait()


@pytest.mark.engine
async def test_a_crashed_feed_degrades_health_until_it_reads_again(
    tmp_path: Path, pool: EnginePool
) -> None:
    feed = CrashOnce()
    service = Service(settings_for(tmp_path, persist=False), evaluator=pool, feeds=[feed])
    async with running(service):
        await wait_until(lambda: feed.runs == 1 and service.stats.feed_errors["flaky"] == 1)
        health = await healthz(service)
        assert health["status"] == "degraded"
        (why,) = problems(health, "feed flaky:")
        assert "crashed" in why and "the relay hung up" in why
        assert health["feeds"]["flaky"]["failing"] is True
        # Restarted after 1 s; it reads a game: healthy again.
        await wait_until(lambda: service.stats.snapshots == 1, 10)
        health = await healthz(service)
        assert not problems(health, "feed"), health
        assert health["feeds"]["flaky"]["crashes"] == 1


@pytest.mark.engine
async def test_a_feed_with_only_errors_degrades_health(tmp_path: Path, pool: EnginePool) -> None:
    """A real PGN-over-HTTP feed polling a port nobody listens on."""
    url = f"http://127.0.0.1:{free_port()}/round.pgn"
    feed = PgnHttpFeedConfig(name="relay", url=url, interval=0.1)
    settings = settings_for(tmp_path, persist=False, feeds=[feed.model_dump()])
    service = Service(settings, evaluator=pool)
    service.feed_failing_after = 3.0  # seconds of errors only (30 s by default)
    async with running(service):
        await wait_until(lambda: service.stats.feed_errors["relay"] >= 1)
        health = await healthz(service)
        assert not problems(health, "feed relay:")  # one error is not yet failing
        health = await healthz_until(service, "degraded")  # errors only for 3 s
        (why,) = problems(health, "feed relay:")
        assert "only errors" in why and "no game read" in why
        assert health["feeds"]["relay"]["errors"] >= 1


# ------------------------------------------------------------------- the engine


class Failing:
    """The real pool, except that its first ``fail`` searches fail."""

    def __init__(self, pool: EnginePool, fail: int) -> None:
        self.pool = pool
        self.fail = fail

    async def evaluate(self, board: chess.Board, priority: int = 0) -> Evaluation:
        if self.fail > 0:
            self.fail -= 1
            raise EngineSearchError("engine process died (exit code -9)")
        return await self.pool.evaluate(board, priority)

    def describe(self) -> str:
        return self.pool.describe()

    @property
    def engine_key(self) -> str:
        return self.pool.engine_key


@pytest.mark.engine
async def test_engine_failures_degrade_health_while_recent(
    tmp_path: Path, pool: EnginePool
) -> None:
    service = Service(settings_for(tmp_path, persist=False), evaluator=Failing(pool, fail=2))
    service.recent = 5.0  # seconds a failure counts as recent (120 s by default)
    async with running(service):
        service.on_snapshot(snapshot(["e4"]))
        await wait_until(lambda: service.stats.engine_failures == 2)
        health = await healthz(service)
        assert health["status"] == "degraded"
        (why,) = problems(health, "engine: ")
        assert "2 failed searches" in why and "engine process died" in why
        # Every position is evaluated in the end (retried), and the failures age out.
        assert service.registry is not None
        (game,) = service.registry.boards.values()
        await wait_until(lambda: game.evaluated_plies == 1, 30)
        await healthz_until(service, "ok")  # 5 s after the last failure


CRASHING_ENGINE = '''#!{python}
"""A UCI engine whose first search ends the process (as an out-of-memory kill would)."""
import os, sys
from pathlib import Path

COUNTER = Path({counter!r})
for raw in sys.stdin:
    cmd = raw.strip()
    if cmd == "uci":
        print("id name Crashy 1.0\\noption name Hash type spin default 16 min 1 max 64")
        print("option name Threads type spin default 1 min 1 max 1\\nuciok", flush=True)
    elif cmd == "isready":
        print("readyok", flush=True)
    elif cmd.startswith("go"):
        n = int(COUNTER.read_text() or 0) + 1 if COUNTER.exists() else 1
        COUNTER.write_text(str(n))
        if n == 1:
            os._exit(9)
        print("info depth 3 score cp 20 nodes 100\\nbestmove (none)", flush=True)
    elif cmd == "quit":
        break
'''


@pytest.mark.engine
async def test_an_engine_restart_degrades_health(tmp_path: Path) -> None:
    """A real engine process that dies mid-search: the pool restarts it and the
    search succeeds, but /healthz says the engine was restarted."""
    engine = tmp_path / "crashy"
    engine.write_text(
        CRASHING_ENGINE.format(python=sys.executable, counter=str(tmp_path / "searches"))
    )
    engine.chmod(0o755)
    async with EnginePool(str(engine), workers=1, limit=SearchLimit(depth=DEPTH)) as crashy:
        service = Service(settings_for(tmp_path, persist=False), evaluator=crashy)
        async with running(service):
            assert (await healthz(service))["status"] == "ok"
            service.on_snapshot(snapshot(["d4"]))
            await wait_until(lambda: service.stats.evaluations == 2, 30)
            assert service.stats.engine_failures == 0  # retried inside the pool
            health = await healthz(service)
            assert health["status"] == "degraded"
            (why,) = problems(health, "engine: ")
            assert "restarted" in why


# ------------------------------------------------------------------- the broker


@pytest.mark.engine
async def test_an_unreachable_broker_degrades_health_and_metrics(
    tmp_path: Path, pool: EnginePool
) -> None:
    """The MQTT publisher pointed at a closed port."""
    mqtt = {"enabled": True, "url": f"mqtt://127.0.0.1:{free_port()}"}
    service = Service(settings_for(tmp_path, persist=False, mqtt=mqtt), evaluator=pool)
    async with running(service):
        await asyncio.sleep(0.3)
        health = await healthz(service)
        assert health["status"] == "degraded"
        assert "mqtt publisher not connected" in health["problems"]

        def metrics() -> str:
            with urllib.request.urlopen(f"{service.url}metrics", timeout=5) as r:
                return str(r.read().decode())

        text = await asyncio.to_thread(metrics)
        assert "livegain_mqtt_connected 0.0" in text.splitlines()
        assert "livegain_degraded 1.0" in text.splitlines()
