"""The service stays responsive while it ingests oversized input.

A 10,000-game PGN file, a 1 MB single-game PGN file and the same 1 MB game
published (retained) to a private Mosquitto arrive while /healthz is polled
from another process, as a monitoring probe would. 99 % of the answers must
come within 200 ms and every one within 400 ms (before the limits and the
off-loop work, the service did not answer for minutes: 1,000 games held the
loop for 457 s); the games within the limits must all become boards, and each
refusal must be reported as a feed error naming the feed and the game(s).

The bounds are set for the shared 2-core CI machine as it is, which is not
always the same speed: on a quiet day the answers came within 100 ms (p99 53
ms, docs/benchmarks.md, bench/ingest_load.py, 1,000 games in 16.8 s); on a
slow one the same code took 36.8 s for those games and its p99 was 113 ms,
so a bound of 100 ms measured the machine, not the service. The bulk work
(games handed on by the feed, evaluations answered from the store) takes at
most half of the event loop's time while it lasts, so that everyone else's
turn comes within a few of its steps (p99 about 60 ms on a quiet day).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import aiomqtt
import pytest
from brokers import PrivateBroker

from livegain.app.service import Service
from livegain.engine.pool import EnginePool
from livegain.feeds.base import FileFeedConfig, MqttFeedConfig

from .conftest import running, settings_for
from .ingest_data import huge_game, many_games

pytestmark = [pytest.mark.engine, pytest.mark.timeout(300)]

P99_LATENCY = 0.200
MAX_LATENCY = 0.400
PROBE = r"""
import http.client, json, sys, time
port, stop = int(sys.argv[1]), sys.argv[2]
import os
out = []
while not os.path.exists(stop):
    t0 = time.perf_counter()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request("GET", "/healthz")
    r = c.getresponse()
    body = r.read()
    c.close()
    out.append((time.time(), time.perf_counter() - t0, r.status, len(body)))
    time.sleep(0.02)
print(json.dumps(out))
"""


async def test_healthz_answers_in_time_during_oversized_ingest(
    tmp_path: Path, pool: EnginePool, private_broker: PrivateBroker
) -> None:
    miss = await _ingest_scenario(tmp_path, pool, private_broker)
    assert miss is None, miss


async def _ingest_scenario(
    tmp_path: Path, pool: EnginePool, private_broker: PrivateBroker
) -> str | None:
    """One ingest under probing; None when every answer came within the bound,
    else what missed it (every other check fails the test at once)."""
    drop = tmp_path / "drop"  # the file feeds watch this directory
    drop.mkdir(parents=True)
    many = many_games(10_000)
    huge = huge_game()
    assert len(huge.encode()) >= 1_000_000 and many.count("[Event ") == 10_000
    topic_root = "test/ingest-load"
    feeds = [
        FileFeedConfig(name="files", path=str(drop), interval=0.2),
        MqttFeedConfig(
            name="mqtt-in", url=private_broker.url, topic=f"{topic_root}/#", client_id="ingest-load"
        ),
    ]
    settings = settings_for(
        tmp_path, feeds=[f.model_dump() for f in feeds], engine={"depth": 4, "workers": 1}
    )
    service = Service(settings, evaluator=pool)
    errors: list[tuple[str, str, str]] = []
    report = service.on_feed_error

    def record(source: str, where: str, message: str) -> None:
        errors.append((source, where, message))
        report(source, where, message)

    service.on_feed_error = record  # type: ignore[method-assign]

    def refused(feed: str, where: str, what: str) -> bool:
        return any(s == feed and where in w and what in m for s, w, m in errors)

    async with running(service):
        mqtt_feed = service.feeds[1]
        await asyncio.wait_for(mqtt_feed.subscribed.wait(), 20)  # type: ignore[attr-defined]
        stop_file = tmp_path / "stop-probe"
        probe = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            PROBE,
            str(service.server.port),
            str(stop_file),
            stdout=asyncio.subprocess.PIPE,
        )
        try:
            await asyncio.sleep(1.0)  # a baseline before the input arrives
            started = time.time()
            # Written by another thread: the service's event loop is this
            # test's, and writing 6 MB on it would be the test holding it.
            await asyncio.to_thread(_drop, tmp_path / "many.tmp", many, drop / "round1.pgn")
            await asyncio.to_thread(_drop, tmp_path / "huge.tmp", huge, drop / "huge.pgn")
            async with aiomqtt.Client("127.0.0.1", private_broker.port) as client:
                await client.publish(f"{topic_root}/huge/1/1", huge.encode(), qos=1, retain=True)
            t = service.registry
            assert t is not None
            deadline = time.monotonic() + 240
            while time.monotonic() < deadline:
                done = (
                    len(t.boards) == 1000
                    and refused("files", "games 1001-10000", "max_games")
                    and refused("files", "huge.pgn game 1 (Long, A - Long, B", "max_plies")
                    and refused("mqtt-in", f"{topic_root}/huge/1/1", "max_plies")
                )
                if done:
                    break
                await asyncio.sleep(0.2)
            ingest_s = time.time() - started
            await asyncio.sleep(1.0)
        finally:
            stop_file.touch()
            out, _ = await asyncio.wait_for(probe.communicate(), 60)
        samples = json.loads(out)

    assert len(t.boards) == 1000, f"{len(t.boards)} boards after {ingest_s:.0f} s"
    assert refused("files", "games 1001-10000", "10000 games"), errors
    assert refused("files", "huge.pgn", "plies"), errors
    assert refused("mqtt-in", "huge/1/1", "plies"), errors
    during = [s for s in samples if started <= s[0] <= started + ingest_s]
    assert all(s[2] == 200 for s in samples)
    assert len(during) >= 10, f"only {len(during)} probes during {ingest_s:.1f} s of ingest"
    # Nothing lost: a game within the limits is a board, with its moves.
    g = next(b for b in t.boards.values() if b.white.name == "White, 999")
    assert g.plies >= 30 and g.board == 999 and g.source == "files"
    times = sorted(s[1] for s in samples)
    worst, p99 = times[-1], times[int(0.99 * (len(times) - 1))]
    print(f"/healthz p99 {p99 * 1000:.0f} ms, max {worst * 1000:.0f} ms")
    if p99 < P99_LATENCY and worst < MAX_LATENCY:
        return None
    return (
        f"/healthz p99 {p99 * 1000:.0f} ms, max {worst * 1000:.0f} ms over {len(samples)} "
        f"probes ({len(during)} during {ingest_s:.1f} s of ingest)"
    )


def _drop(tmp: Path, text: str, dest: Path) -> None:
    """``text`` written to ``tmp``, then moved to ``dest`` at once (as a feed's source would)."""
    tmp.write_text(text)
    tmp.replace(dest)
