"""Engine throughput: the livegain pool against raw UCI pipes and a naive loop.

The same positions (spread evenly over a PGN file), the same depth, Threads=1,
the same Hash, ``ucinewgame`` before every position in all three, so every
method does the same search work (the total node counts printed must agree):

  (a) raw    Stockfish driven directly over pipes: N processes, one thread each
             pulling positions from a shared queue, a minimal UCI loop;
  (b) naive  one python-chess SimpleEngine, ``analyse`` per position in a loop
             (what one writes by hand);
  (c) pool   livegain's EnginePool with N workers, every position in flight,
             the cache off.

Then the cache: the pool again with a fresh cache file (cold), and a second pass
over the same positions (warm); and how many positions of the whole file repeat
across its games (no engine needed).

Prints figures and the ratios c/a and c/b measured in this run; asserts nothing.

    .venv/bin/python bench/engine_throughput.py [--pgn FILE] [--positions 300]
        [--depth 12] [--workers 2] [--hash 16] [--engine /usr/games/stockfish]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import queue
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.engine
import chess.pgn

from livegain.engine.batch import game_positions
from livegain.engine.cache import EvalCache
from livegain.engine.pool import EnginePool, SearchLimit, default_workers

DEFAULT_PGN = Path(__file__).resolve().parents[1].parent / "shared/data/tata-steel-masters-2022.pgn"


def read_games(path: Path) -> list[chess.pgn.Game]:
    games = []
    with path.open(encoding="utf-8") as fh:
        while (g := chess.pgn.read_game(fh)) is not None:
            games.append(g)
    return games


def all_boards(games: list[chess.pgn.Game]) -> list[chess.Board]:
    return [b for g in games for b in game_positions(g).boards]


def pick_positions(games: list[chess.pgn.Game], n: int) -> list[chess.Board]:
    """``n`` distinct, unfinished positions spread evenly over the file."""
    seen: set[str] = set()
    unique = []
    for b in all_boards(games):
        fen = b.fen()
        if fen not in seen and not b.is_game_over():
            seen.add(fen)
            unique.append(b)
    if n >= len(unique):
        return unique
    step = len(unique) / n
    return [unique[int(i * step)] for i in range(n)]


#: CPU seconds of engine processes, read from /proc just before each one quits.
ENGINE_CPU = [0.0]


# -- (a) raw pipes -------------------------------------------------------------


class RawEngine:
    def __init__(self, path: str, hash_mb: int) -> None:
        self.proc = subprocess.Popen(
            [path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
        )
        self.send("uci")
        self.wait_for("uciok")
        for name, value in (("Threads", 1), ("Hash", hash_mb), ("UCI_ShowWDL", "true")):
            self.send(f"setoption name {name} value {value}")
        self.send("setoption name UCI_AnalyseMode value true")
        self.send("isready")
        self.wait_for("readyok")

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def wait_for(self, prefix: str) -> list[str]:
        assert self.proc.stdout is not None
        lines = []
        for line in self.proc.stdout:
            lines.append(line)
            if line.startswith(prefix):
                return lines
        raise RuntimeError("engine exited")

    def search(self, fen: str, depth: int) -> tuple[int, int]:
        """(score cp from the side to move, nodes) of the last info line."""
        self.send("ucinewgame")
        self.send("isready")
        self.wait_for("readyok")
        self.send(f"position fen {fen}")
        self.send(f"go depth {depth}")
        lines = self.wait_for("bestmove")
        score, nodes = 0, 0
        for line in lines:
            tokens = line.split()
            if tokens and tokens[0] == "info" and "score" in tokens:
                i = tokens.index("score")
                score = int(tokens[i + 2]) if tokens[i + 1] == "cp" else 100000
                nodes = int(tokens[tokens.index("nodes") + 1])
        return score, nodes

    def close(self) -> None:
        self.send("quit")
        self.proc.wait(5)


def run_raw(path: str, boards: list[chess.Board], depth: int, workers: int, hash_mb: int) -> int:
    engines = [RawEngine(path, hash_mb) for _ in range(workers)]
    jobs: queue.SimpleQueue[str | None] = queue.SimpleQueue()
    for b in boards:
        jobs.put(b.fen())
    for _ in engines:
        jobs.put(None)
    totals = [0] * workers

    def work(i: int) -> None:
        while (fen := jobs.get()) is not None:
            totals[i] += engines[i].search(fen, depth)[1]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ENGINE_CPU[0] += sum(cpu_seconds(e.proc.pid) for e in engines)
    for e in engines:
        e.close()
    return sum(totals)


# -- (b) naive python-chess loop -------------------------------------------------


def run_naive(path: str, boards: list[chess.Board], depth: int, hash_mb: int) -> int:
    nodes = 0
    with chess.engine.SimpleEngine.popen_uci(path) as engine:
        engine.configure({"Threads": 1, "Hash": hash_mb, "UCI_ShowWDL": True})
        for b in boards:
            info = engine.analyse(b, chess.engine.Limit(depth=depth), game=object())
            nodes += int(info.get("nodes", 0))
        transport = engine.protocol.transport
        assert transport is not None
        ENGINE_CPU[0] += cpu_seconds(transport.get_pid())
    return nodes


# -- (c) the pool ---------------------------------------------------------------


async def run_pool(
    path: str,
    boards: list[chess.Board],
    depth: int,
    workers: int,
    hash_mb: int,
    cache: EvalCache | None = None,
) -> tuple[int, int]:
    async with EnginePool(
        path, workers=workers, limit=SearchLimit(depth=depth), hash_mb=hash_mb, cache=cache
    ) as pool:
        evs = await asyncio.gather(*(pool.evaluate(b) for b in boards))
        ENGINE_CPU[0] += sum(cpu_seconds(pid) for pid in pool.pids())
        return sum(e.nodes for e in evs), pool.stats.searches


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, from /proc (immune to other load)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def depth_cost(path: str, boards: list[chess.Board], depths: list[int], hash_mb: int) -> None:
    """Per-position cost of each depth on one process: wall and CPU time, nodes."""
    print("depth  positions  median wall  p90 wall  mean CPU  median nodes  total CPU")
    engine = RawEngine(path, hash_mb)
    for depth in depths:
        walls, nodes = [], []
        cpu0 = cpu_seconds(engine.proc.pid)
        for b in boards:
            t0 = time.perf_counter()
            nodes.append(engine.search(b.fen(), depth)[1])
            walls.append(time.perf_counter() - t0)
        cpu = cpu_seconds(engine.proc.pid) - cpu0
        walls.sort()
        nodes.sort()
        print(
            f"{depth:5d}  {len(boards):9d}  {1000 * walls[len(walls) // 2]:8.0f} ms"
            f"  {1000 * walls[int(len(walls) * 0.9)]:5.0f} ms  {1000 * cpu / len(boards):5.0f} ms"
            f"  {nodes[len(nodes) // 2]:12d}  {cpu:8.1f} s",
            flush=True,
        )
    engine.close()


@dataclass
class Tally:
    """Wall time, this process's CPU (all threads) and the engines' CPU, over rounds.

    Engine CPU includes each process's start-up (loading the network), which
    every method pays once per process per round.
    """

    wall: float = 0.0
    driver_cpu: float = 0.0
    engine_cpu: float = 0.0
    nodes: int = 0

    def add(self, fn: Callable[[], int]) -> None:
        before = resource.getrusage(resource.RUSAGE_SELF)
        engine_before = ENGINE_CPU[0]
        t0 = time.perf_counter()
        self.nodes += fn()
        self.wall += time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_SELF)
        self.driver_cpu += (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        self.engine_cpu += ENGINE_CPU[0] - engine_before


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pgn", type=Path, default=DEFAULT_PGN)
    ap.add_argument("--positions", type=int, default=300)
    ap.add_argument("--depth", type=int, default=12)
    ap.add_argument("--workers", type=int, default=default_workers())
    ap.add_argument("--hash", type=int, default=16)
    ap.add_argument("--engine", default="/usr/games/stockfish")
    ap.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="split the positions into this many chunks and run a, b, c on each chunk in "
        "turn (rotating the order), so that a change of machine load hits all three alike",
    )
    ap.add_argument(
        "--depth-cost",
        default=None,
        metavar="D,D,...",
        help="only measure the per-position cost of these depths on one process",
    )
    args = ap.parse_args()

    games = read_games(args.pgn)
    boards = pick_positions(games, args.positions)
    n, d, w = len(boards), args.depth, args.workers
    print(
        f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.2f}; python {platform.python_version()}"
    )
    if args.depth_cost:
        depth_cost(args.engine, boards, [int(x) for x in args.depth_cost.split(",")], args.hash)
        return
    print(
        f"positions: {n} from {args.pgn.name}; depth {d}; {w} processes; Hash {args.hash} MB;"
        f" {args.rounds} rounds"
    )

    def pool_nodes(chunk: list[chess.Board]) -> int:
        return asyncio.run(run_pool(args.engine, chunk, d, w, args.hash))[0]

    methods: dict[str, Callable[[list[chess.Board]], int]] = {
        "a": lambda chunk: run_raw(args.engine, chunk, d, w, args.hash),
        "b": lambda chunk: run_naive(args.engine, chunk, d, args.hash),
        "c": pool_nodes,
    }
    tallies = {k: Tally() for k in methods}
    rounds = max(1, args.rounds)
    for r in range(rounds):
        chunk = boards[r::rounds]
        order = list(methods)[r % 3 :] + list(methods)[: r % 3]
        for key in order:
            tallies[key].add(lambda key=key, chunk=chunk: methods[key](chunk))  # type: ignore[misc]
        print(
            f"  round {r + 1}: "
            + ", ".join(f"{k} {tallies[k].wall:.1f} s" for k in methods)
            + " (cumulative)",
            flush=True,
        )

    with tempfile.TemporaryDirectory() as tmp:
        cache = EvalCache(Path(tmp) / "bench.sqlite")
        t0 = time.perf_counter()
        asyncio.run(run_pool(args.engine, boards, d, w, args.hash, cache))
        tcold = time.perf_counter() - t0
        t0 = time.perf_counter()
        _, warm_searches = asyncio.run(run_pool(args.engine, boards, d, w, args.hash, cache))
        twarm = time.perf_counter() - t0
        cache.close()

    labels = {
        "a": f"(a) raw UCI pipes, {w} processes",
        "b": "(b) naive python-chess loop, 1",
        "c": f"(c) livegain pool, {w} workers",
    }
    rate = {k: n / t.wall for k, t in tallies.items()}
    print("results (positions/s; CPU per position: driver = this process, engine = Stockfish):")
    for k, t in tallies.items():
        print(
            f"  {labels[k]:<34} {rate[k]:7.2f} positions/s"
            f"  driver {1000 * t.driver_cpu / n:5.1f} ms"
            f"  engine {1000 * t.engine_cpu / n:6.1f} ms  nodes {t.nodes}"
        )
    cpu = {k: (t.driver_cpu + t.engine_cpu) / n for k, t in tallies.items()}
    print(f"  wall:  c/a = {rate['c'] / rate['a']:.3f}   c/b = {rate['c'] / rate['b']:.2f}")
    print(
        f"  CPU per position (a load-independent view): c/a = {cpu['a'] / cpu['c']:.3f}"
        f" (driver overhead {1000 * (cpu['c'] - cpu['a']):+.1f} ms per position)"
    )
    print(
        f"  cache: first pass {n / tcold:.2f} positions/s, second pass {n / twarm:.1f} "
        f"positions/s ({warm_searches} engine searches; engine start-up included), "
        f"{tcold / twarm:.0f}x faster"
    )
    every = [b.fen() for b in all_boards(games)]
    counts = Counter(every)
    repeats = sum(c - 1 for c in counts.values())
    epd = Counter(b.epd() for b in all_boards(games))
    epd_repeats = sum(c - 1 for c in epd.values())
    print(
        f"  {args.pgn.name}: {len(every)} positions in {len(games)} games, {len(counts)} distinct;"
        f" {repeats} ({100 * repeats / len(every):.1f} %) repeat an earlier position"
        f" (by EPD without move counters: {epd_repeats}, {100 * epd_repeats / len(every):.1f} %)"
    )
    print(f"  load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
