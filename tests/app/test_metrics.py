"""GET /metrics: the Prometheus text format, read back with prometheus_client's
own parser after a short replay through the whole service."""

from __future__ import annotations

import asyncio
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from livegain.app.service import Service
from livegain.engine.pool import EnginePool
from livegain.feeds.base import PgnHttpFeedConfig
from livegain.relay.replay import Replay

from .conftest import running, settings_for
from .mirror import Mirror, fully_evaluated

REPO = Path(__file__).resolve().parents[2]
GOTC = REPO / "livegain" / "data" / "game_of_the_century.pgn"


Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


async def scrape(service: Service) -> tuple[str, Samples]:
    def get() -> tuple[str, str]:
        with urllib.request.urlopen(f"{service.url}metrics", timeout=5) as r:
            return str(r.headers["Content-Type"]), r.read().decode()

    ctype, text = await asyncio.to_thread(get)
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return ctype, samples


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


@pytest.mark.engine
async def test_metrics_after_a_short_replay(tmp_path: Path, pool: EnginePool) -> None:
    async with Replay.from_file(GOTC, speed=1000, mode="pgn-http") as replay:
        feed = PgnHttpFeedConfig(name="relay", url=replay.pgn_url, interval=0.1)
        settings = settings_for(tmp_path, feeds=[feed.model_dump()])
        service = Service(settings, evaluator=pool)
        async with running(service), Mirror(f"ws{service.url[4:]}ws") as mirror:
            await replay.advance(12)
            await mirror.wait(
                lambda m: len(m.boards) == 1 and fully_evaluated(next(iter(m.boards.values())), 12),
                wait=90,
            )
            ctype, samples = await scrape(service)
            board_status = service.board_status()

    assert ctype.startswith("text/plain")
    (board,) = board_status.values()
    assert value(samples, "livegain_boards") == 1
    assert value(samples, "livegain_plies") == board["plies"] >= 12
    assert value(samples, "livegain_plies_evaluated") == board["evaluated"] >= 12
    assert value(samples, "livegain_snapshots_total") == service.stats.snapshots >= 1
    assert value(samples, "livegain_evaluations_total") >= 13  # 12 plies and the start
    assert value(samples, "livegain_engine_calls_total") >= 13
    assert value(samples, "livegain_engine_failures_total") == 0
    assert value(samples, "livegain_engine_search_seconds_total") > 0
    assert value(samples, "livegain_feed_errors_total", feed="relay") == 0
    assert value(samples, "livegain_websocket_clients") == 1  # the mirror
    assert value(samples, "livegain_websocket_messages_sent_total") >= 13
    assert value(samples, "livegain_websocket_dropped_updates_total") == 0
    assert value(samples, "livegain_eval_inflight") >= 0
    assert value(samples, "livegain_eval_pending") >= 0
    assert value(samples, "livegain_store_failures_total") == 0
    assert value(samples, "livegain_degraded") == 0
    # Every publish is timed: one per change published (new board, moves, evaluations).
    published = value(samples, "livegain_publish_seconds_count")
    assert published >= 13
    assert value(samples, "livegain_publish_seconds_bucket", le="+Inf") == published
    assert 0 < value(samples, "livegain_publish_seconds_sum") < published  # < 1 s each
    # No MQTT publisher configured: no MQTT series.
    assert not [k for k in samples if k[0].startswith("livegain_mqtt")]


def test_each_service_has_its_own_registry(tmp_path: Path) -> None:
    """Two services in one process (tests, the demo) never collide."""
    a = Service(settings_for(tmp_path / "a"))
    b = Service(settings_for(tmp_path / "b"))
    a.metrics.publish_seconds.observe(0.5)
    assert a.metrics.registry is not b.metrics.registry
    assert b"livegain_publish_seconds_count 1.0" in a.metrics.render()
    assert b"livegain_publish_seconds_count 0.0" in b.metrics.render()
