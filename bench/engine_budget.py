"""The engine budget: what each MultiPV and depth costs per position and per round.

A fixed sample of positions (distinct, unfinished, spread evenly over the
games: the shared Tata Steel 2022 file when present, else the project's own
demo games in livegain/data/), searched by one Stockfish process with the
service's settings (Threads 1, Hash 16, ``ucinewgame`` before every
position, UCI_ShowWDL and UCI_AnalyseMode on: bench/raw_uci.py) and
``MultiPV`` 1, 2, 3, 5, at depths 8, 10, 12 on every position and at one
deeper depth (16) on the first few. For each setting: the engine's CPU time
per position (from /proc, unaffected by other load), the median wall time
(inflated by the machine's load, printed), the median node count, and the
ratio of the CPU time to MultiPV 1 at the service's default depth (12),
measured in the same run.

And what a round of ``--boards`` boards (default 2,000) costs at each setting:
positions per board from the mean length of the sample's games (plies + 1),
engine-hours of CPU, and hours of wall time on a pool of ``--workers``
engines (default: the pool's default, one per core) busy all the time.

    nice -n 19 .venv/bin/python bench/engine_budget.py [--positions 40]
        [--deep-positions 8] [--depths 8,10,12] [--deep 16] [--multipv 1,2,3,5]
        [--boards 2000] [--workers N] [--pgn FILE] [--engine /usr/games/stockfish]

Then the live cost per move of the candidate features (docs/validity.md,
"Reading more from each move") against today's, in the same run: the
engine's CPU per position with today's setting (MultiPV 1 at depth 12)
against the settings the features need (MultiPV 3 at depth 10 or 12), and
the Python the service adds per move, today's (a board's running score:
the ledger's push and the players' numbers read again, with the shipped FIDE
model) against today's plus the played move's log-likelihood among three
candidates.

Prints figures and ratios; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

import chess
import chess.pgn

from livegain.batch.move_features import MoveRecord
from livegain.core.board.scoring import BoardScoring
from livegain.engine.launch import default_workers
from livegain.models.engine import load_calibrations
from livegain.models.perceived import load_perceived_models

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine_throughput import cpu_seconds, pick_positions, read_games
from raw_uci import RawEngine

ROOT = Path(__file__).resolve().parents[1]
SHARED_PGN = ROOT.parent / "shared/data/tata-steel-masters-2022.pgn"
DEMO_PGNS = sorted((ROOT / "livegain/data").glob("*.pgn"))
#: The service's default search depth (livegain/config.py, ``[engine] depth``).
DEFAULT_DEPTH = 12


def sample_games(pgn: str | None) -> tuple[list[chess.pgn.Game], str]:
    """The games to draw positions from, and what they are."""
    if pgn is not None:
        return read_games(Path(pgn)), pgn
    if SHARED_PGN.exists():
        return read_games(SHARED_PGN), str(SHARED_PGN.relative_to(ROOT.parent))
    games = [g for p in DEMO_PGNS for g in read_games(p)]
    return games, "livegain/data/*.pgn (demo games)"


def cost(
    engine_path: str, boards: list[chess.Board], depth: int, multipv: int
) -> tuple[float, float, int]:
    """(CPU ms per position, median wall ms, median nodes) of one setting on
    a fresh engine process."""
    engine = RawEngine(engine_path, 16)
    engine.send(f"setoption name MultiPV value {multipv}")
    engine.send("isready")
    engine.wait_for("readyok")

    def timed(board: chess.Board) -> tuple[float, int]:
        start = time.perf_counter()
        nodes = engine.search(board.fen(), depth)[1]
        return time.perf_counter() - start, nodes

    cpu0 = cpu_seconds(engine.proc.pid)
    walls, nodes = zip(*(timed(b) for b in boards), strict=True)
    cpu = cpu_seconds(engine.proc.pid) - cpu0
    engine.close()
    return 1000 * cpu / len(boards), 1000 * statistics.median(walls), int(statistics.median(nodes))


def python_per_move(games: int = 40, plies: int = 80) -> tuple[float, float]:
    """(today's, with the log-likelihood) Python µs per move of a board's
    running score over ``games`` games of ``plies`` plies (scores a fixed
    random walk, each position's three candidates spread below the best)."""
    model = next(m for m in load_perceived_models() if m.scale == "fide")
    calibration = load_calibrations()[0]
    rng = random.Random(7)
    walk = [0]
    for _ in range(plies):
        walk.append(max(-900, min(900, -walk[-1] + rng.randint(-60, 40))))
    candidates = [
        (("a", v), ("b", v - rng.randint(0, 80)), ("c", v - rng.randint(80, 200))) for v in walk
    ]
    played = [rng.choice("abc") for _ in range(plies)]

    def run(with_features: bool) -> float:
        t0 = time.perf_counter()
        for _ in range(games):
            board = BoardScoring(
                calibration.rating, calibration.engine_histogram(), model, True, 2500.0, 2450.0
            )
            board.start(walk[0])
            total, count = 0.0, 0  # the running mean a live board would keep
            for k in range(1, plies + 1):
                board.push(walk[k], True)
                board.ratings()
                if with_features:
                    move = MoveRecord(k, walk[k - 1], -walk[k], candidates[k - 1], played[k - 1])
                    total += move.log_likelihood(FEATURE_TEMPERATURE)
                    count += 1
        return (time.perf_counter() - t0) / (games * plies) * 1e6

    run(True)  # warm-up
    today = statistics.median(run(False) for _ in range(5))
    new = statistics.median(run(True) for _ in range(5))
    return today, new


#: The softmax temperature of the log-likelihood (about what the fit finds on
#: FIDE games at depth 10; the cost does not depend on it).
FEATURE_TEMPERATURE = 120.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--pgn", default=None)
    ap.add_argument("--positions", type=int, default=40)
    ap.add_argument("--deep-positions", type=int, default=8)
    ap.add_argument("--depths", default="8,10,12")
    ap.add_argument("--deep", type=int, default=16)
    ap.add_argument("--multipv", default="1,2,3,5")
    ap.add_argument("--boards", type=int, default=2000)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--engine", default="/usr/games/stockfish")
    args = ap.parse_args()
    depths = [int(d) for d in args.depths.split(",")]
    multipvs = [int(m) for m in args.multipv.split(",")]
    workers = args.workers or default_workers()

    games, source = sample_games(args.pgn)
    boards = pick_positions(games, args.positions)
    plies = statistics.mean(len(list(g.mainline_moves())) for g in games)
    per_board = plies + 1
    print(
        f"{len(boards)} positions from {source} ({len(games)} games, mean {plies:.0f} plies: "
        f"{per_board:.0f} positions per board); nice {os.nice(0)}, "
        f"load average {os.getloadavg()[0]:.1f} at the start"
    )
    results: dict[tuple[int, int], tuple[float, float, int, int]] = {}
    settings = [(d, m, boards) for d in depths for m in multipvs]
    settings += [(args.deep, m, boards[: args.deep_positions]) for m in multipvs]
    for depth, multipv, sample in settings:
        cpu, wall, nodes = cost(args.engine, sample, depth, multipv)
        results[(depth, multipv)] = (cpu, wall, nodes, len(sample))
        print(f"  depth {depth:2d} MultiPV {multipv}: {cpu:7.0f} ms CPU/position", flush=True)
    base_key = (DEFAULT_DEPTH, 1)
    if base_key not in results:
        base_key = (max(depths), 1)
    base = results[base_key][0]
    # the deeper depth's ratio against the base setting on its own positions
    deep_base = cost(args.engine, boards[: args.deep_positions], *base_key)[0]
    print(f"load average {os.getloadavg()[0]:.1f} at the end\n")
    print(
        f"| depth | MultiPV | positions | CPU ms/position | ratio to depth {base_key[0]} "
        f"MultiPV 1 | median wall ms | median nodes | {args.boards:,}-board round: "
        f"engine-hours | hours on {workers} engines |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (depth, multipv), (cpu, wall, nodes, n) in results.items():
        hours = args.boards * per_board * cpu / 1000 / 3600
        ratio = cpu / (deep_base if depth == args.deep else base)
        print(
            f"| {depth} | {multipv} | {n} | {cpu:.0f} | {ratio:.2f} | {wall:.0f} "
            f"| {nodes:,} | {hours:.1f} | {hours / workers:.1f} |"
        )
    print(
        f"\n(depth {args.deep} on the first {args.deep_positions} positions only: its ratio is "
        f"to depth {base_key[0]} MultiPV 1 on the same positions, {deep_base:.0f} ms)"
    )
    today_py, new_py = python_per_move()
    print(
        "\nLive cost per move: today's against the candidate features, this run "
        "(engine CPU from the table above; Python per move measured here)\n"
    )
    print("| per move | engine CPU ms | Python µs | total ms | ratio to today |")
    print("|---|---:|---:|---:|---:|")
    today_total = base + today_py / 1000
    rows = [(f"today: depth {base_key[0]}, MultiPV 1", base, today_py)]
    for depth in (10, base_key[0]):
        if (depth, 3) in results:
            rows.append(
                (f"+ log-likelihood: depth {depth}, MultiPV 3", results[(depth, 3)][0], new_py)
            )
    for name, engine_ms, py_us in rows:
        total = engine_ms + py_us / 1000
        print(
            f"| {name} | {engine_ms:.0f} | {py_us:.0f} | {total:.1f} | {total / today_total:.2f} |"
        )


if __name__ == "__main__":
    main()
