"""`livegain analyze` as a whole against the raw UCI loop, start-up included.

Both are run as programs and timed from launch to exit, alternately, for
``--rounds`` rounds:

  raw      ``python bench/raw_uci.py FENS`` (standard library only): Stockfish
           over pipes, the same processes, Threads, Hash and ``ucinewgame``
           before every position (bench/raw_uci.py);
  analyze  ``livegain analyze GAMES.pgn --depth D --workers W --cache NEW.sqlite
           --json`` with a fresh (new, empty) cache file each time: start-up,
           reading the PGN, the engine pool, the ratings and the JSON output;
           the package's bytecode is compiled first, as an installed one has it.

The raw loop searches exactly the positions ``analyze`` searches (the rows a
first, untimed ``analyze`` run left in its cache: distinct positions, finished
ones excluded), in game order; the node totals printed must agree. Prints each
round, then the ratio raw seconds / analyze seconds (1.0: as fast as the raw
loop), a bootstrap interval of that median over the rounds, and the CPU time
of each program with its engines; asserts nothing.

    .venv/bin/python bench/analyze_vs_raw.py [--pgn FILE] [--games 10] [--depth 10]
        [--workers 2] [--hash 16] [--rounds 3] [--engine /usr/games/stockfish]
"""

from __future__ import annotations

import argparse
import compileall
import os
import platform
import random
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import chess.pgn

HERE = Path(__file__).resolve().parent
DEFAULT_PGN = HERE.parents[1] / "shared/data/tata-steel-masters-2022.pgn"


def livegain_command() -> list[str]:
    exe = Path(sys.executable).with_name("livegain")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "livegain.cli"]


def add_run_options(ap: argparse.ArgumentParser) -> None:
    """The games, depth, processes and engine of an analyze run."""
    ap.add_argument("--pgn", type=Path, default=DEFAULT_PGN)
    ap.add_argument("--games", type=int, default=10)
    ap.add_argument("--depth", type=int, default=10)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--engine", default="/usr/games/stockfish")


def analyze_args(pgn: Path, depth: int, workers: int, engine: str, cache: Path) -> list[str]:
    """``analyze PGN --depth D --workers W --engine E --cache NEW --json``."""
    return [
        "analyze",
        str(pgn),
        "--depth",
        str(depth),
        "--workers",
        str(workers),
        "--engine",
        engine,
        "--cache",
        str(cache),
        "--json",
    ]


def first_games(pgn: Path, n: int) -> list[chess.pgn.Game]:
    games: list[chess.pgn.Game] = []
    with pgn.open(encoding="utf-8") as fh:
        while len(games) < n and (g := chess.pgn.read_game(fh)) is not None:
            games.append(g)
    return games


def game_order_fens(games: list[chess.pgn.Game]) -> list[str]:
    fens = []
    for g in games:
        board = g.board()
        fens.append(board.fen())
        for move in g.mainline_moves():
            board.push(move)
            fens.append(board.fen())
    return fens


def cache_rows(path: Path) -> tuple[set[str], int]:
    db = sqlite3.connect(path)
    try:
        rows = db.execute("SELECT fen, nodes FROM evals").fetchall()
    finally:
        db.close()
    return {r[0] for r in rows}, sum(int(r[1]) for r in rows)


def timed(cmd: list[str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the program and its engines, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall, cpu, done.stdout


def median_interval(
    values: list[float], level: float = 0.9, draws: int = 5000
) -> tuple[float, float]:
    """A percentile bootstrap interval of the median (fixed seed): how far the
    rounds' spread leaves the median uncertain."""
    rng = random.Random(0)
    meds = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(draws))
    cut = int((1 - level) / 2 * draws)
    return meds[cut], meds[draws - 1 - cut]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_run_options(ap)
    ap.add_argument("--hash", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()

    print(
        f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.2f}; python {platform.python_version()}"
    )
    # Bytecode for the package, as pip writes it when installing a wheel: an
    # editable checkout under PYTHONDONTWRITEBYTECODE=1 would otherwise compile
    # every module on every run (0.3 s of start-up on this VM).
    compileall.compile_dir(str(HERE.parent / "livegain"), quiet=1)
    games = first_games(args.pgn, args.games)
    tmp = Path(tempfile.mkdtemp(prefix="lg-analyze-bench-"))
    try:
        pgn = tmp / "games.pgn"
        pgn.write_text("".join(f"{g}\n\n" for g in games), encoding="utf-8")
        lg = livegain_command()

        def analyze_cmd(cache: Path) -> list[str]:
            return [*lg, *analyze_args(pgn, args.depth, args.workers, args.engine, cache)]

        # An untimed first run: which positions analyze searches (and warm disk caches).
        first = tmp / "first.sqlite"
        timed(analyze_cmd(first))
        searched, nodes_first = cache_rows(first)
        fens, seen = [], set()
        for fen in game_order_fens(games):
            if fen in searched and fen not in seen:
                seen.add(fen)
                fens.append(fen)
        fen_file = tmp / "fens.txt"
        fen_file.write_text("".join(f + "\n" for f in fens), encoding="utf-8")
        positions = len(game_order_fens(games))
        print(
            f"{len(games)} games of {args.pgn.name}: {positions} positions, {len(fens)} searched"
            f" (distinct, unfinished); depth {args.depth}; {args.workers} processes;"
            f" Hash {args.hash} MB; {args.rounds} rounds"
        )
        raw_cmd = [
            sys.executable,
            str(HERE / "raw_uci.py"),
            str(fen_file),
            "--depth",
            str(args.depth),
            "--workers",
            str(args.workers),
            "--hash",
            str(args.hash),
            "--engine",
            args.engine,
        ]
        raw_walls, lg_walls, raw_cpus, lg_cpus = [], [], [], []
        for r in range(args.rounds):
            cache = tmp / f"fresh-{r}.sqlite"
            order = ("raw", "analyze") if r % 2 == 0 else ("analyze", "raw")
            load = os.getloadavg()[0]
            for which in order:
                if which == "raw":
                    wall, cpu, out = timed(raw_cmd)
                    raw_nodes = int(out.split()[3])
                    raw_walls.append(wall)
                    raw_cpus.append(cpu)
                else:
                    wall, cpu, _ = timed(analyze_cmd(cache))
                    _, lg_nodes = cache_rows(cache)
                    lg_walls.append(wall)
                    lg_cpus.append(cpu)
            agree = "agree" if raw_nodes == lg_nodes == nodes_first else "DIFFER"
            print(
                f"  round {r + 1} (load average {load:.2f} -> {os.getloadavg()[0]:.2f}):"
                f" raw {raw_walls[-1]:.2f} s, analyze {lg_walls[-1]:.2f} s,"
                f" raw/analyze {raw_walls[-1] / lg_walls[-1]:.3f};"
                f" nodes raw {raw_nodes} analyze {lg_nodes} ({agree})",
                flush=True,
            )
        ratios = [a / b for a, b in zip(raw_walls, lg_walls, strict=True)]
        print(
            f"results: raw {statistics.median(raw_walls):.2f} s, analyze"
            f" {statistics.median(lg_walls):.2f} s (medians);"
            f" raw/analyze median {statistics.median(ratios):.3f}"
            f" (min {min(ratios):.3f}, max {max(ratios):.3f})"
        )
        low, high = median_interval(ratios)
        print(
            f"  median ratio, 90 % bootstrap interval over rounds: {low:.3f}-{high:.3f};"
            f" ratio of the median times"
            f" {statistics.median(raw_walls) / statistics.median(lg_walls):.3f}"
        )
        n = len(fens)
        print(
            f"  CPU per searched position (program + engines): raw"
            f" {1000 * statistics.median(raw_cpus) / n:.1f} ms, analyze"
            f" {1000 * statistics.median(lg_cpus) / n:.1f} ms"
            f" (analyze's own work, start-up included:"
            f" {1000 * (statistics.median(lg_cpus) - statistics.median(raw_cpus)) / n:+.2f} ms)"
        )
        print(f"  load average after: {os.getloadavg()[0]:.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
