"""The baseline of the engine benchmarks: Stockfish driven directly over pipes.

A minimal UCI loop, standard library only (so that, run as a program, its
start-up is only Python's): N processes, one thread each (starting its process,
then pulling FENs from a shared queue); per position ``ucinewgame``, ``isready``/``readyok``,
``position fen``, ``go depth D``, read to ``bestmove``; Threads=1, a fixed Hash,
``UCI_ShowWDL`` and ``UCI_AnalyseMode`` on (what livegain's pool sends).

    .venv/bin/python bench/raw_uci.py FENS.txt [--depth 10] [--workers 2]
        [--hash 16] [--engine /usr/games/stockfish]

prints ``positions N nodes M seconds S`` (one FEN per line in FENS.txt).
"""

from __future__ import annotations

import argparse
import queue
import subprocess
import threading
import time
from collections.abc import Callable


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


def run_raw(
    path: str,
    fens: list[str],
    depth: int,
    workers: int,
    hash_mb: int,
    before_quit: Callable[[RawEngine], None] | None = None,
) -> int:
    """Search every FEN on ``workers`` processes; the total node count.

    Each thread starts its own process (so the processes start in parallel, as
    the pool's do), searches from the shared queue, then quits it.
    """
    jobs: queue.SimpleQueue[str | None] = queue.SimpleQueue()
    for fen in fens:
        jobs.put(fen)
    for _ in range(workers):
        jobs.put(None)
    totals = [0] * workers

    def work(i: int) -> None:
        engine = RawEngine(path, hash_mb)
        while (fen := jobs.get()) is not None:
            totals[i] += engine.search(fen, depth)[1]
        if before_quit is not None:
            before_quit(engine)
        engine.close()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(totals)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("fens", help="a file with one FEN per line")
    ap.add_argument("--depth", type=int, default=10)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--hash", type=int, default=16)
    ap.add_argument("--engine", default="/usr/games/stockfish")
    args = ap.parse_args()
    with open(args.fens, encoding="utf-8") as fh:
        fens = [line.strip() for line in fh if line.strip()]
    t0 = time.perf_counter()
    nodes = run_raw(args.engine, fens, args.depth, args.workers, args.hash)
    print(f"positions {len(fens)} nodes {nodes} seconds {time.perf_counter() - t0:.3f}")


if __name__ == "__main__":
    main()
