"""The machine's price of one thread wake-up: CPU per line read from a pipe.

A child process writes one short UCI-like ``info`` line every GAP ms (busy
waiting, as an engine's search would keep its core); a thread of this process
reads the lines (blocking ``readline``, as bench/raw_uci.py and the engine
pool's reader threads do) and reports its own CPU time per line
(``RUSAGE_THREAD``). Every line wakes the thread once, so this is what one
wake-up costs the driver of an engine on this machine, whatever the driver's
own work.

    python3 bench/wake_cost.py [--gaps 0.5,5,20] [--lines 400]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import threading

WRITER = """
import sys, time
for i in range({lines}):
    sys.stdout.write("info depth %d score cp 20 nodes 1000 pv e2e4 e7e5\\n" % i)
    sys.stdout.flush()
    t = time.perf_counter() + {gap_ms} / 1000
    while time.perf_counter() < t:
        pass
"""


def per_line(gap_ms: float, lines: int) -> tuple[float, float]:
    """(user, system) CPU in µs per line read."""
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER.format(lines=lines, gap_ms=gap_ms)], stdout=subprocess.PIPE
    )
    assert writer.stdout is not None
    stdout = writer.stdout
    out: list[float] = []

    def read() -> None:
        a = resource.getrusage(resource.RUSAGE_THREAD)
        n = sum(1 for _ in stdout)
        b = resource.getrusage(resource.RUSAGE_THREAD)
        out.extend([(b.ru_utime - a.ru_utime) / n * 1e6, (b.ru_stime - a.ru_stime) / n * 1e6])

    t = threading.Thread(target=read)
    t.start()
    t.join()
    writer.wait()
    return out[0], out[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gaps", default="0.5,5,20", metavar="MS,MS,...")
    ap.add_argument("--lines", type=int, default=400)
    args = ap.parse_args()
    for gap in (float(g) for g in args.gaps.split(",")):
        user, system = per_line(gap, args.lines)
        print(f"a line every {gap:g} ms: {user:.1f} µs user + {system:.1f} µs system CPU per line")


if __name__ == "__main__":
    main()
