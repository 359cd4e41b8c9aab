"""What operability costs: a /metrics scrape and /healthz with many boards, the
publish-latency histogram beside a publish, and the store's start-up check.

    .venv/bin/python bench/health_metrics.py [--boards 200] [--evals 50000]

Figures are printed with a baseline measured in the same run: a scrape beside
one publish of one update; the store opened with its integrity check
(``PRAGMA quick_check``) beside the same open without it.
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import chess

from livegain.app.runtime import Runtime
from livegain.app.service import STORE_FILE, Service
from livegain.app.store import Store
from livegain.config import load_settings
from livegain.core.evaluation import Evaluation
from livegain.core.snapshot import GameSnapshot, PlayerInfo


def per_call(fn: Callable[[], object], n: int) -> float:
    fn()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n


class Scripted:
    """No engine: the bench measures the service's own bookkeeping."""

    engine_key = "bench"

    async def evaluate(self, board: chess.Board, priority: int = 0) -> Evaluation:
        raise RuntimeError("not used")

    def describe(self) -> str:
        return "bench"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--boards", type=int, default=200)
    ap.add_argument("--evals", type=int, default=50_000)
    args = ap.parse_args()
    from livegain.core.board.registry import BoardRegistry

    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(
            None, data_dir=tmp, persist=False, server={"host": "127.0.0.1", "port": 0}
        )
        service = Service(settings, evaluator=Scripted())
        # the state a started service runs on, without starting it (no feeds,
        # no server): the bench times the bookkeeping alone
        registry = BoardRegistry(engine_rating=2860.0)
        service._runtime = Runtime(registry, None, service.evaluator, "bench")
        service.standings.follow(registry.boards)
        service.scheduler.max_inflight = 2
        moves = ("e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O", "Be7") * 4
        for b in range(args.boards):
            snap = GameSnapshot(
                source="bench",
                white=PlayerInfo(f"White {b}"),
                black=PlayerInfo(f"Black {b}"),
                moves=moves[: 8 + b % 10],
                round="1",
                board=b + 1,
            )
            registry.apply(snap)
        first = next(iter(registry.boards))
        publish = per_call(lambda: service._publish_board(first, [], new=True), 2000)
        assert not service.stats.board_failures, service.stats.board_failures
        scrape = per_call(service.metrics.render, 200)
        health = per_call(service.health, 200)
        observe = per_call(lambda: service.metrics.publish_seconds.observe(0.0002), 100_000)
        size = len(service.metrics.render())
        print(f"{args.boards} boards")
        print(f"  publish one board (baseline):   {publish * 1e6:9.1f} us")
        print(
            f"  histogram observe per publish:  {observe * 1e6:9.2f} us ({observe / publish:.1%})"
        )
        print(f"  /metrics scrape:                {scrape * 1e3:9.2f} ms ({size} bytes)")
        print(f"  /healthz body:                  {health * 1e3:9.2f} ms")

        path = Path(tmp) / STORE_FILE
        store = Store(path)
        ev = Evaluation(cp=20, mate=None, wdl=(50, 900, 50), depth=12, nodes=1, best="e2e4", pv=())
        store._db.execute("BEGIN")
        for i in range(args.evals):
            store.save_eval("bench", f"fen-{i:08d} w - - 0 1", ev)
        store._db.execute("COMMIT")
        store.close()

        def plain_open() -> None:
            db = sqlite3.connect(path, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("SELECT COALESCE(MAX(ord), 0) FROM boards").fetchone()
            db.close()

        bare = per_call(plain_open, 5)
        checked = per_call(lambda: Store(path).close(), 5)
        print(f"store of {args.evals} evaluations ({path.stat().st_size / 1e6:.1f} MB)")
        print(f"  open without the check (baseline): {bare * 1e3:8.2f} ms")
        print(
            f"  open with quick_check:             {checked * 1e3:8.2f} ms (x{checked / bare:.1f})"
        )


if __name__ == "__main__":
    main()
