"""Engine throughput: the livegain pool against raw UCI pipes (and a naive loop).

The same positions (spread evenly over a PGN file), the same depth, Threads=1,
the same Hash, ``ucinewgame`` before every position in every method, so every
method does the same search work (the total node counts printed must agree):

  (a) raw    Stockfish driven directly over pipes: N processes, one thread each
             pulling positions from a shared queue, a minimal UCI loop
             (bench/raw_uci.py);
  (b) naive  one python-chess SimpleEngine, ``analyse`` per position in a loop
             (what one writes by hand); only with ``--naive``;
  (c) pool   livegain's EnginePool with N workers, every position in flight
             (one ``evaluate`` each, as the live service asks), the cache off;
  (d) batch  the same pool, every position in one ``evaluate_many`` (what
             ``livegain analyze`` asks): the processes' reader threads chain
             the searches, the event loop is woken once per process.

For each depth of ``--depths`` (default 8, 10, 12) the methods run in turns
(``--rounds`` chunks, rotating the order, so that a change of machine load hits
all alike) and the bench prints positions/s, the ratio pool/raw measured in
this run and the CPU per position of this process (the driver: the UCI loop's
threads, or the pool and its event loop) and of the engines.

With ``--cache-pass``: the pool again with a fresh cache file (cold) and a
second pass over the same positions (warm), at the last depth; and how many
positions of the whole file repeat across its games (no engine needed).

Prints figures and ratios; asserts nothing.

    .venv/bin/python bench/engine_throughput.py [--pgn FILE] [--positions 300]
        [--depths 8,10,12] [--workers 2] [--hash 16] [--rounds 3] [--naive]
        [--cache-pass] [--engine /usr/games/stockfish]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import resource
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.engine
import chess.pgn

from livegain.batch.engine_analysis import game_positions
from livegain.engine.cache import EvalCache
from livegain.engine.launch import default_workers
from livegain.engine.pool import EnginePool
from livegain.engine.search import SearchLimit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from raw_uci import RawEngine
from raw_uci import run_raw as run_raw_fens

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


def run_raw(path: str, boards: list[chess.Board], depth: int, workers: int, hash_mb: int) -> int:
    lock = threading.Lock()

    def engine_cpu(engine: RawEngine) -> None:  # called by each thread of the loop
        cpu = cpu_seconds(engine.proc.pid)
        with lock:
            ENGINE_CPU[0] += cpu

    return run_raw_fens(path, [b.fen() for b in boards], depth, workers, hash_mb, engine_cpu)


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
    batch: bool = False,
) -> tuple[int, int]:
    async with EnginePool(
        path, workers=workers, limit=SearchLimit(depth=depth), hash_mb=hash_mb, cache=cache
    ) as pool:
        if batch:
            evs = await pool.evaluate_many(boards)
        else:
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


def driver_cost(path: str, boards: list[chess.Board], depth: int, hash_mb: int) -> None:
    """CPU of this process per position for each way of driving one engine process.

    Why the pool has its own UCI client: python-chess's ``analyse`` with each
    ``info`` selector against the minimal pipe loop and livegain's UciProcess.
    """

    def self_cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    def raw() -> int:
        engine = RawEngine(path, hash_mb)
        nodes = sum(engine.search(b.fen(), depth)[1] for b in boards)
        engine.close()
        return nodes

    async def python_chess(info: chess.engine.Info) -> int:
        _, engine = await chess.engine.popen_uci(path)
        await engine.configure({"Threads": 1, "Hash": hash_mb, "UCI_ShowWDL": True})
        nodes = 0
        for b in boards:
            res = await engine.analyse(b, chess.engine.Limit(depth=depth), game=object(), info=info)
            nodes += int(res.get("nodes", 0))
        await engine.quit()
        return nodes

    async def livegain_uci() -> int:
        from livegain.engine.uci import UciProcess

        engine = UciProcess.start(path)
        await engine.handshake()
        await engine.configure({"Threads": 1, "Hash": hash_mb, "UCI_ShowWDL": True})
        nodes = 0
        for b in boards:
            nodes += (await engine.search(b.fen(), depth, None, new_game=True)).nodes
        await engine.quit()
        return nodes

    ways: list[tuple[str, Callable[[], int]]] = [
        ("raw UCI loop over pipes", raw),
        (
            "python-chess analyse, INFO_ALL",
            lambda: asyncio.run(python_chess(chess.engine.INFO_ALL)),
        ),
        (
            "python-chess analyse, INFO_SCORE|INFO_BASIC",
            lambda: asyncio.run(python_chess(chess.engine.INFO_SCORE | chess.engine.INFO_BASIC)),
        ),
        (
            "python-chess analyse, INFO_NONE",
            lambda: asyncio.run(python_chess(chess.engine.INFO_NONE)),
        ),
        ("livegain UciProcess", lambda: asyncio.run(livegain_uci())),
    ]
    print(f"driver CPU per position, one process, depth {depth}, {len(boards)} positions:")
    for label, fn in ways:
        c0 = self_cpu()
        nodes = fn()
        print(f"  {label:<44} {1000 * (self_cpu() - c0) / len(boards):5.2f} ms  nodes {nodes}")


@dataclass
class Tally:
    """Wall time, this process's CPU (all threads) and the engines' CPU, over rounds.

    Engine CPU includes each process's start-up (loading the network), which
    every method pays once per process per round.
    """

    wall: float = 0.0
    rounds: list[float] = field(default_factory=list)  # the wall time of each round
    driver_cpu: float = 0.0
    engine_cpu: float = 0.0
    nodes: int = 0

    def add(self, fn: Callable[[], int]) -> None:
        before = resource.getrusage(resource.RUSAGE_SELF)
        engine_before = ENGINE_CPU[0]
        t0 = time.perf_counter()
        self.nodes += fn()
        self.rounds.append(time.perf_counter() - t0)
        self.wall += self.rounds[-1]
        after = resource.getrusage(resource.RUSAGE_SELF)
        self.driver_cpu += (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        self.engine_cpu += ENGINE_CPU[0] - engine_before


def compare(
    args: argparse.Namespace, boards: list[chess.Board], depth: int, naive: bool
) -> dict[str, Tally]:
    """Run the methods at ``depth`` in rounds; print each round and the results."""
    n, w = len(boards), args.workers

    def pool_nodes(chunk: list[chess.Board], batch: bool = False) -> int:
        return asyncio.run(run_pool(args.engine, chunk, depth, w, args.hash, batch=batch))[0]

    methods: dict[str, Callable[[list[chess.Board]], int]] = {
        "a": lambda chunk: run_raw(args.engine, chunk, depth, w, args.hash),
        "c": pool_nodes,
        "d": lambda chunk: pool_nodes(chunk, batch=True),
    }
    if naive:
        methods["b"] = lambda chunk: run_naive(args.engine, chunk, depth, args.hash)
    keys = list(methods)
    tallies = {k: Tally() for k in keys}
    rounds = max(1, args.rounds)
    load = os.getloadavg()[0]
    for r in range(rounds):
        chunk = boards[r::rounds]
        order = keys[r % len(keys) :] + keys[: r % len(keys)]
        for key in order:
            tallies[key].add(lambda key=key, chunk=chunk: methods[key](chunk))  # type: ignore[misc]
    labels = {
        "a": f"(a) raw UCI pipes, {w} processes",
        "b": "(b) naive python-chess loop, 1",
        "c": f"(c) livegain pool, {w} workers",
        "d": f"(d) livegain pool, batch, {w} workers",
    }
    rate = {k: n / t.wall for k, t in tallies.items()}
    print(
        f"depth {depth}: {n} positions, {rounds} rounds,"
        f" load average {load:.2f} -> {os.getloadavg()[0]:.2f}"
    )
    for k in sorted(tallies):
        t = tallies[k]
        print(
            f"  {labels[k]:<34} {rate[k]:7.2f} positions/s"
            f"  driver CPU {1000 * t.driver_cpu / n:5.2f} ms/position"
            f"  engine {1000 * t.engine_cpu / n:6.1f} ms  nodes {t.nodes}"
        )
    agree = len({t.nodes for t in tallies.values()}) == 1
    cpu = {k: (t.driver_cpu + t.engine_cpu) / n for k, t in tallies.items()}
    print(
        f"  pool/raw = {rate['c'] / rate['a']:.3f}, batch/raw = {rate['d'] / rate['a']:.3f} (wall)"
        + (f"   pool/naive = {rate['c'] / rate['b']:.2f}" if "b" in rate else "")
        + f"   CPU view: raw/pool = {cpu['a'] / cpu['c']:.3f}"
        f" (driver CPU pool {1000 * tallies['c'].driver_cpu / n:.2f} ms,"
        f" raw {1000 * tallies['a'].driver_cpu / n:.2f} ms per position)"
        f"   nodes {'agree' if agree else 'DIFFER'}",
        flush=True,
    )
    return tallies


def cache_pass(
    args: argparse.Namespace, games: list[chess.pgn.Game], boards: list[chess.Board], depth: int
) -> None:
    n, w = len(boards), args.workers
    with tempfile.TemporaryDirectory() as tmp:
        cache = EvalCache(Path(tmp) / "bench.sqlite")
        t0 = time.perf_counter()
        asyncio.run(run_pool(args.engine, boards, depth, w, args.hash, cache))
        tcold = time.perf_counter() - t0
        t0 = time.perf_counter()
        _, warm_searches = asyncio.run(run_pool(args.engine, boards, depth, w, args.hash, cache))
        twarm = time.perf_counter() - t0
        cache.close()
    print(
        f"  cache (depth {depth}): first pass {n / tcold:.2f} positions/s, second pass"
        f" {n / twarm:.1f} positions/s ({warm_searches} engine searches; engine start-up"
        f" included), {tcold / twarm:.0f}x faster"
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pgn", type=Path, default=DEFAULT_PGN)
    ap.add_argument("--positions", type=int, default=300)
    ap.add_argument("--depths", default="8,10,12", metavar="D,D,...")
    ap.add_argument("--depth", type=int, default=None, help="one depth (same as --depths D)")
    ap.add_argument("--workers", type=int, default=default_workers())
    ap.add_argument("--hash", type=int, default=16)
    ap.add_argument("--engine", default="/usr/games/stockfish")
    ap.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="split the positions into this many chunks and run the methods on each chunk in "
        "turn (rotating the order), so that a change of machine load hits all alike",
    )
    ap.add_argument("--naive", action="store_true", help="also run (b), the naive loop")
    ap.add_argument("--cache-pass", action="store_true", help="also measure the cache")
    ap.add_argument(
        "--drivers",
        action="store_true",
        help="only compare the driver CPU per position of python-chess's analyse (each info"
        " selector), the raw loop and livegain's UCI client, one process, the first depth",
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
    depths = [args.depth] if args.depth else [int(x) for x in args.depths.split(",")]
    print(
        f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.2f}; python {platform.python_version()}"
    )
    if args.depth_cost:
        depth_cost(args.engine, boards, [int(x) for x in args.depth_cost.split(",")], args.hash)
        return
    if args.drivers:
        driver_cost(args.engine, boards, depths[0], args.hash)
        return
    print(
        f"positions: {len(boards)} from {args.pgn.name}; {args.workers} processes;"
        f" Hash {args.hash} MB; depths {', '.join(map(str, depths))}"
    )
    summary = []
    for depth in depths:
        t = compare(args, boards, depth, args.naive)
        summary.append((depth, t))
    print(
        "summary: depth, then for the pool (evaluate) and the batch (evaluate_many):"
        " /raw over all rounds (median, lowest and highest of the rounds);"
        " driver CPU per position: pool, batch, raw"
    )
    n = len(boards)
    for depth, t in summary:
        cells = []
        for k in ("c", "d"):
            ratios = sorted(a / x for a, x in zip(t["a"].rounds, t[k].rounds, strict=True))
            cells.append(
                f"{t['a'].wall / t[k].wall:.3f} ({statistics.median(ratios):.3f};"
                f" {ratios[0]:.3f}-{ratios[-1]:.3f})"
            )
        print(
            f"  {depth:5d}  pool {cells[0]}  batch {cells[1]}  "
            f"{1000 * t['c'].driver_cpu / n:.2f} / {1000 * t['d'].driver_cpu / n:.2f} /"
            f" {1000 * t['a'].driver_cpu / n:.2f} ms"
        )
    if args.cache_pass:
        cache_pass(args, games, boards, depths[-1])
    print(f"  load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
