"""Engine workers through the broker against the local pool, on one machine.

For N = 1, 2, 3 engine processes: the same positions evaluated by a local
:class:`EnginePool` of N processes, then by N `livegain worker` processes
(one engine each) through a Mosquitto of the run's own (on a free port,
``set_tcp_nodelay true``), asked by a :class:`RemoteEvaluator`. Prints
positions per second of each, their ratio, and the broker's added latency per
job: the time from a job's publication to its result, less the worker's own
time (median and p99). Workers are fresh for each N (a worker remembers the
results it gave). Checks that both give identical evaluations.

    .venv/bin/python bench/remote_workers.py [--depth 10] [--positions 300]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import chess
import chess.pgn

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from brokers import PrivateBroker  # noqa: E402

from livegain.core.evaluation import Evaluation  # noqa: E402
from livegain.engine.pool import EnginePool  # noqa: E402
from livegain.engine.search import SearchLimit  # noqa: E402
from livegain.mqtt.address import parse_mqtt_url  # noqa: E402
from livegain.remote.evaluator import RemoteEvaluator  # noqa: E402


def positions(n: int) -> list[chess.Board]:
    out: list[chess.Board] = []
    seen: set[str] = set()
    with (REPO / "livegain" / "data" / "demo-round.pgn").open() as f:
        while len(out) < n:
            game = chess.pgn.read_game(f)
            if game is None:
                break
            board = game.board()
            for move in game.mainline_moves():
                board.push(move)
                if not board.is_game_over() and board.fen() not in seen:
                    seen.add(board.fen())
                    out.append(board.copy(stack=False))
    return out[:n]


async def local(
    engine: str, boards: list[chess.Board], n: int, depth: int
) -> tuple[float, list[Evaluation]]:
    async with EnginePool(engine, workers=n, limit=SearchLimit(depth=depth)) as pool:
        t0 = time.perf_counter()
        evs = await asyncio.gather(*(pool.evaluate(b) for b in boards))
        return time.perf_counter() - t0, list(evs)


async def remote(
    engine: str, boards: list[chess.Board], n: int, depth: int, broker: PrivateBroker, log: Path
) -> tuple[float, list[Evaluation], list[float]]:
    procs = [
        subprocess.Popen(  # noqa: ASYNC220 - started once, before any timing
            [
                sys.executable,
                "-m",
                "livegain.cli",
                "worker",
                "--broker",
                broker.url,
                "--workers",
                "1",
                "--depth",
                str(depth),
                "--engine",
                engine,
                "--id",
                f"bench-{n}-{i}",
            ],
            stdout=(log / f"worker-{n}-{i}.log").open("wb"),
            stderr=subprocess.STDOUT,
            cwd=REPO,
        )
        for i in range(n)
    ]
    try:
        async with RemoteEvaluator(
            parse_mqtt_url(broker.url), SearchLimit(depth=depth), job_timeout=60.0
        ) as ev:
            while ev.capacity() < 2 * n:  # noqa: ASYNC110 - every worker announced
                await asyncio.sleep(0.05)
            t0 = time.perf_counter()
            evs = await asyncio.gather(*(ev.evaluate(b) for b in boards))
            seconds = time.perf_counter() - t0
            return seconds, list(evs), list(ev.overheads)
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(timeout=10)


def p99(xs: list[float]) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(0.99 * len(s)))]


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--depth", type=int, default=10)
    ap.add_argument("--positions", type=int, default=300)
    ap.add_argument("--engine", default="/usr/games/stockfish")
    ap.add_argument("--max-processes", type=int, default=3)
    args = ap.parse_args()
    boards = positions(args.positions)
    with tempfile.TemporaryDirectory() as tmp:
        broker = PrivateBroker(Path(tmp))
        broker.conf.write_text(broker.conf.read_text() + "set_tcp_nodelay true\n")
        broker.start()
        try:
            print(f"{len(boards)} positions, depth {args.depth}, Stockfish {args.engine}")
            print(
                f"{'processes':>9} {'local pos/s':>12} {'remote pos/s':>13} {'remote/local':>13}"
                f" {'added ms median':>16} {'added ms p99':>13} identical"
            )
            for n in range(1, args.max_processes + 1):
                t_local, ev_local = await local(args.engine, boards, n, args.depth)
                t_remote, ev_remote, over = await remote(
                    args.engine, boards, n, args.depth, broker, Path(tmp)
                )
                same = ev_local == ev_remote
                print(
                    f"{n:>9} {len(boards) / t_local:>12.1f} {len(boards) / t_remote:>13.1f}"
                    f" {t_local / t_remote:>13.3f} {1000 * statistics.median(over):>16.2f}"
                    f" {1000 * p99(over):>13.2f} {same}"
                )
        finally:
            broker.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
