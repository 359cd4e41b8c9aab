"""Start-up time of the ``livegain`` command: launch to exit, median of N runs.

Each command runs in a fresh interpreter (``python -m livegain.cli ARGS``), its
output discarded. ``--tree DIR`` runs another checkout's ``livegain`` package
(for a before/after comparison: ``git archive HEAD livegain | tar -x -C DIR``),
from a neutral working directory so that it is the one imported.

    .venv/bin/python bench/cli_startup.py [--runs 7] [--tree DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

COMMANDS = (
    ["--help"],
    ["analyze", "--help"],
    ["elo", "expected", "--rating-a", "2800", "--rating-b", "2700"],
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--tree", default=None, help="a directory holding another livegain package")
    args = ap.parse_args()
    env = dict(os.environ)
    if args.tree:
        env["PYTHONPATH"] = args.tree
    cwd = tempfile.gettempdir()
    print(f"load average {os.getloadavg()[0]:.2f}; {args.tree or 'this checkout'}")
    for words in COMMANDS:
        times = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "livegain.cli", *words],
                env=env,
                cwd=cwd,
                stdout=subprocess.DEVNULL,
                check=True,
            )
            times.append(time.perf_counter() - t0)
        print(
            f"  livegain {' '.join(words):<45} median {statistics.median(times):.3f} s"
            f" (min {min(times):.3f}, max {max(times):.3f})"
        )


if __name__ == "__main__":
    main()
