"""The service with engine workers through the broker (`[engine] mode = "remote"`
and "both"): real Mosquitto, real `livegain worker` processes, a real file feed."""

from __future__ import annotations

import asyncio
import json
import shutil
import urllib.request
from pathlib import Path
from typing import Any

import chess
import pytest
from brokers import PrivateBroker
from engine.test_remote_workers import (
    CENTURY,
    announced,
    century_boards,
    local_reference,
    wait_until,
    workers,
)

from livegain.app.service import Service
from livegain.remote.evaluator import RemoteEvaluator

from .conftest import running, settings_for

pytestmark = [pytest.mark.engine, pytest.mark.broker, pytest.mark.slow]

DEPTH = 8


def remote_settings(tmp: Path, broker: PrivateBroker, mode: str, workers: int = 1) -> Any:
    pgn = tmp / "round.pgn"
    shutil.copy(CENTURY, pgn)
    return settings_for(
        tmp,
        engine={
            "depth": DEPTH,
            "workers": workers,
            "rating": 2860.0,
            "mode": mode,
            "remote": {"url": broker.url, "job_timeout": 5.0, "wait_for_workers": 60.0},
        },
        feeds=[{"type": "file", "path": str(pgn), "interval": 0.2}],
    )


def healthz(service: Service) -> dict[str, Any]:
    with urllib.request.urlopen(f"{service.url}healthz", timeout=5) as r:
        data: dict[str, Any] = json.loads(r.read())
        return data


def all_evaluated(service: Service) -> bool:
    t = service.registry
    return (
        t is not None
        and len(t.boards) == 1
        and all(g.evaluated_plies == g.plies and g.plies > 0 for g in t.boards.values())
    )


async def test_remote_mode_records_the_local_pools_evaluations_and_lists_workers(
    stockfish: str, private_broker: PrivateBroker, tmp_path: Path
) -> None:
    boards = [chess.Board(), *century_boards()]  # the start position is evaluated too
    expected, key, _ = await local_reference(stockfish, boards, depth=DEPTH)
    with workers(tmp_path, private_broker.url) as w:
        w.start("w1", depth=DEPTH, engine=stockfish)
        w.start("w2", depth=DEPTH, engine=stockfish)
        service = Service(remote_settings(tmp_path, private_broker, "remote"))
        async with running(service):
            assert isinstance(service.evaluator, RemoteEvaluator)
            assert service.engine_key == key  # the same store key as a local pool's
            await wait_until(lambda: all_evaluated(service), limit=120, what="all plies")
            assert service.store is not None
            stored = [service.store.get_eval(key, b.fen()) for b in boards]
            searched = [
                (s, e)
                for s, e, b in zip(stored, expected, boards, strict=True)
                if not b.is_game_over()
            ]
            assert all(s == e for s, e in searched)  # node counts included
            await wait_until(lambda: len(service.evaluator.workers_seen) == 2)  # type: ignore[attr-defined]
            health = await asyncio.to_thread(healthz, service)
            listed = {x["worker"]: x for x in health["workers"]}
            assert set(listed) == {"w1", "w2"}
            assert all(x["accepted"] and x["processes"] == 1 for x in listed.values())
            assert sum(x["results"] for x in listed.values()) == len(searched)
            assert health["remote_engine"]["connected"] is True
            assert health["remote_engine"]["jobs"]["duplicates"] == 0
            assert "problems" not in health, health.get("problems")
            w.kill("w1")
            w.kill("w2")
            await wait_until(lambda: not service.evaluator.workers_seen)  # type: ignore[attr-defined]
            health = await asyncio.to_thread(healthz, service)
            assert health["workers"] == []
            assert any("no accepted engine worker" in p for p in health["problems"])


async def test_both_mode_shares_the_work_between_the_local_pool_and_a_worker(
    stockfish: str, private_broker: PrivateBroker, tmp_path: Path
) -> None:
    boards = [chess.Board(), *century_boards()]  # the start position is evaluated too
    expected, key, _ = await local_reference(stockfish, boards, depth=DEPTH)
    with workers(tmp_path, private_broker.url) as w:
        w.start("remote1", depth=DEPTH, engine=stockfish)
        await announced(private_broker, "remote1")  # before the round starts
        service = Service(remote_settings(tmp_path, private_broker, "both"))
        async with running(service):
            ev = service.evaluator
            assert isinstance(ev, RemoteEvaluator) and ev.local is not None
            assert service.engine_key == key
            await wait_until(lambda: all_evaluated(service), limit=120, what="all plies")
            assert service.store is not None
            for b, e in zip(boards, expected, strict=True):
                if not b.is_game_over():
                    assert service.store.get_eval(key, b.fen()) == e
            assert ev.results_by["local"] > 0, "the local pool did nothing"
            assert ev.results_by["remote1"] > 0, "the worker did nothing"
            assert ev.tracker is not None and ev.tracker.stats.duplicates == 0
