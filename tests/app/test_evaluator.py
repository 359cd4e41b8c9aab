"""What the service reads of an evaluator it is given: only what the evaluator
declares (:mod:`livegain.app.evaluator`). Its engine's name and search limit
choose the models shown, its workers how many positions are kept in flight, its
counters go to ``/healthz`` and ``/metrics``; an evaluator that declares none of
these gets the settings' values, and no engine counters are reported."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

import chess
from prometheus_client.parser import text_string_to_metric_families

from livegain.app.evaluator import (
    CountedEngine,
    LimitedEngine,
    NamedEngine,
    ParallelEngine,
)
from livegain.app.service import Service
from livegain.core.evaluation import Evaluation
from livegain.engine.pool import EnginePool
from livegain.engine.search import SearchLimit
from livegain.mqtt.address import BrokerAddress
from livegain.remote.evaluator import RemoteEvaluator

from .conftest import running, settings_for


class Plain:
    """An evaluator that declares nothing more than it must."""

    engine_key = "plain"

    async def evaluate(self, board: chess.Board, priority: int = 0) -> Evaluation:
        await asyncio.sleep(0)
        return Evaluation(cp=0, depth=1)

    def describe(self) -> str:
        return "plain"


@dataclass
class Counters:
    search_seconds: float = 1.5
    restarts: int = 2


class Declared(Plain):
    """One that tells its name, limit, workers and counters."""

    engine_key = "declared"
    engine_name = "Declared"
    limit = SearchLimit(depth=9)
    workers = 3

    def __init__(self) -> None:
        self.stats = Counters()


def metric(text: bytes, name: str) -> float | None:
    for family in text_string_to_metric_families(text.decode()):
        for sample in family.samples:
            if sample.name == name:
                return float(sample.value)
    return None


def test_the_engines_declare_what_the_service_reads() -> None:
    pool = EnginePool(workers=2, limit=SearchLimit(depth=5))
    remote = RemoteEvaluator(BrokerAddress("127.0.0.1", 1883), SearchLimit(depth=5))
    for engine in (pool, remote):
        assert isinstance(engine, NamedEngine) and isinstance(engine, LimitedEngine)
        assert isinstance(engine, ParallelEngine) and engine.workers >= 1
    assert isinstance(pool, CountedEngine)


async def test_what_an_evaluator_declares_is_read(tmp_path: Path) -> None:
    given = Declared()
    service = Service(settings_for(tmp_path, persist=False), evaluator=given)
    assert service.runtime is None  # not started
    async with running(service):
        rt = service.runtime
        assert rt is not None and rt.evaluator is given and rt.engine_key == "declared"
        assert service.scheduler.max_inflight == 6  # twice its workers
        assert "Declared" in service.models.perceived_model_why
        assert "depth 9" in service.models.perceived_model_why
        text = service.metrics.render()
        assert metric(text, "livegain_engine_restarts_total") == 2
        assert metric(text, "livegain_engine_search_seconds_total") == 1.5
        problems = service.health().get("problems", [])
        assert "engine: engine process restarted (2 restarts since start)" in problems
    assert service.engine_pool is None and service.remote_engine is None  # given, not its own


async def test_an_evaluator_that_declares_nothing_gets_the_settings(tmp_path: Path) -> None:
    service = Service(settings_for(tmp_path, persist=False), evaluator=Plain())
    async with running(service):
        assert service.scheduler.max_inflight == 2  # [engine] workers = 1, at least 2
        assert "depth 6" in service.models.perceived_model_why  # [engine] depth
        text = service.metrics.render()
        assert metric(text, "livegain_engine_restarts_total") is None
        assert metric(text, "livegain_engine_search_seconds_total") is None
        assert not [p for p in service.health().get("problems", []) if p.startswith("engine")]
