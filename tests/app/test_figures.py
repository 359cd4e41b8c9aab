"""Figures that cannot lie: boards not evaluated yet count 0 evaluated plies
(never -1), so ``/healthz``'s ``board_summary`` and every figure of
``/metrics`` stay at or above zero (docs/service.md, "Metrics")."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import chess
from prometheus_client.parser import text_string_to_metric_families

from livegain.app.service import Service
from livegain.core.board.registry import BoardRegistry
from livegain.core.evaluation import Evaluation
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.core.snapshot import GameSnapshot, PlayerInfo

from .conftest import running, settings_for

BOARDS = 300


def board(k: int, moves: tuple[str, ...] = ("e4", "e5")) -> GameSnapshot:
    return GameSnapshot(
        source="arbiter",
        white=PlayerInfo(f"White {k:04d}"),
        black=PlayerInfo(f"Black {k:04d}"),
        moves=moves,
        round="1",
        board=k,
    )


def fen_after(moves: tuple[str, ...]) -> str:
    b = chess.Board()
    for san in moves:
        b.push_san(san)
    return b.fen()


def test_a_board_counts_no_evaluated_ply_until_its_first_gain() -> None:
    t = BoardRegistry(PAPER_ENGINE_RATING)
    moves = ("e4", "e5")
    bid = t.apply(board(1, moves)).board_id
    assert bid is not None
    g = t.board(bid)
    assert g.evaluated_plies == 0  # nothing evaluated
    t.record_eval(bid, 2, fen_after(moves), Evaluation(cp=20))
    assert g.evaluated_plies == 0  # the latest position alone: no prefix
    t.record_eval(bid, 0, fen_after(()), Evaluation(cp=25))
    assert g.evaluated_plies == 0  # the start position: still no ply
    t.record_eval(bid, 1, fen_after(moves[:1]), Evaluation(cp=30))
    assert g.evaluated_plies == 2


class Never:
    """An engine that never answers: every board stays unevaluated."""

    async def evaluate(self, board: chess.Board, priority: int = 0) -> Evaluation:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    def describe(self) -> str:
        return "never, depth 1"

    @property
    def engine_key(self) -> str:
        return "never|depth=1"


def negatives(data: Any, path: str = "") -> list[str]:
    """Every number below zero in a JSON document, by its path."""
    if isinstance(data, dict):
        return [n for k, v in data.items() for n in negatives(v, f"{path}.{k}")]
    if isinstance(data, list):
        return [n for i, v in enumerate(data) for n in negatives(v, f"{path}[{i}]")]
    if isinstance(data, (int, float)) and not isinstance(data, bool) and data < 0:
        return [f"{path} = {data}"]
    return []


async def test_boards_not_evaluated_report_no_negative_figure(tmp_path: Path) -> None:
    service = Service(settings_for(tmp_path, persist=False), evaluator=Never())
    async with running(service):
        for k in range(1, BOARDS + 1):
            service.on_snapshot(board(k))
        summary = service.health()["board_summary"]
        status = service.board_status()
        metrics = service.metrics.render().decode()

    assert summary["boards"] == BOARDS and summary["plies"] == 2 * BOARDS
    assert summary["evaluated"] == 0
    assert negatives(summary) == []
    assert len(status) == BOARDS and {b["evaluated"] for b in status.values()} == {0}

    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(metrics)
        for s in family.samples
    }
    assert samples[("livegain_boards", ())] == BOARDS
    assert samples[("livegain_plies", ())] == 2 * BOARDS
    assert samples[("livegain_plies_evaluated", ())] == 0
    assert samples[("livegain_eval_pending", ())] > 0
    below = {name: v for (name, _), v in samples.items() if v < 0}
    assert below == {}
