"""Where `livegain analyze` spends its time around the searches, run by run.

Each run is ``livegain analyze GAMES.pgn --depth D --workers W --cache NEW
--json`` in a fresh interpreter, with a watcher that wraps the engine pool's
``start`` and ``evaluate_many`` as soon as the pool's module is imported, and
prints, from the interpreter's first line to its exit:

  head    until the searches begin (imports, engine start-up, reading and
          preparing the games: the raw loop has only its engines' start-up)
  search  the searches (the raw loop's own work)
  tail    from the last search to the end of the command (the ratings, the
          JSON output)
  interp  the interpreter's own start-up and teardown (the total measured
          from outside, less the above)
  cpu     the command's own CPU time (its engines excluded)

With ``--tree DIR`` the runs alternate between this checkout's package and the
one in DIR (``git archive REV livegain | tar -x -C DIR``), for a before/after
comparison in the same minutes. Asserts nothing.

    .venv/bin/python bench/analyze_phases.py [--pgn FILE] [--games 10] [--depth 10]
        [--workers 2] [--runs 3] [--tree DIR]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from analyze_vs_raw import add_run_options, analyze_args, first_games  # bench/, beside this script

HERE = Path(__file__).resolve().parent

# Run in the measured interpreter: marks by wall clock from its first line.
PROBE = r"""
import importlib.machinery, json, resource, sys, time
T0 = time.perf_counter()
marks = {}

def patch(cls):
    many, start = cls.evaluate_many, cls.start
    async def evaluate_many(self, *a, **k):
        marks.setdefault("search", time.perf_counter() - T0)
        try:
            return await many(self, *a, **k)
        finally:
            marks["searched"] = time.perf_counter() - T0
    async def started(self):
        marks.setdefault("start", time.perf_counter() - T0)
        try:
            return await start(self)
        finally:
            marks.setdefault("started", time.perf_counter() - T0)
    cls.evaluate_many, cls.start = evaluate_many, started

class Hook:  # wraps the pool's methods as soon as its module has run
    def find_spec(self, name, path=None, target=None):
        if name != "livegain.engine.pool":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module
        def exec_module(module):
            run(module)
            patch(module.EnginePool)
        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, Hook())
import livegain.cli as cli
inner = cli.main

def main(words):
    code = inner(words)
    marks["end"] = time.perf_counter() - T0
    use = resource.getrusage(resource.RUSAGE_SELF)
    marks["cpu"] = use.ru_utime + use.ru_stime
    sys.stderr.write("PHASES " + json.dumps(marks) + "\n")
    return code

cli.main = main
# as the console script runs it (a tree without console(): main, then exit)
getattr(cli, "console", lambda: sys.exit(main(sys.argv[1:])))()
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_run_options(ap)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tree", default=None, help="another livegain package, run in turns")
    args = ap.parse_args()
    if not args.pgn.exists():
        sys.exit(f"{args.pgn}: no such file")
    tmp = Path(tempfile.mkdtemp(prefix="lg-phases-"))
    # bytecode, as an installed package has it (see bench/analyze_vs_raw.py)
    for tree in (HERE.parent, Path(args.tree) if args.tree else None):
        if tree is not None:
            compileall.compile_dir(str(tree / "livegain"), quiet=1)
    games = first_games(args.pgn, args.games)
    pgn = tmp / "games.pgn"
    pgn.write_text("".join(f"{g}\n\n" for g in games), encoding="utf-8")
    trees: list[str | None] = [None, args.tree] if args.tree else [None]
    print(
        f"load average {os.getloadavg()[0]:.2f}; {len(games)} games, depth {args.depth},"
        f" {args.workers} processes; times in ms"
    )
    rows: dict[str | None, list[dict[str, float]]] = {t: [] for t in trees}
    for run in range(args.runs):
        for tree in trees:
            env = dict(os.environ)
            if tree:
                env["PYTHONPATH"] = tree
            cache = tmp / f"cache-{run}-{len(rows[tree])}-{tree is None}.sqlite"
            cmd = [
                sys.executable,
                "-c",
                PROBE,
                *analyze_args(pgn, args.depth, args.workers, args.engine, cache),
            ]
            t0 = time.perf_counter()
            done = subprocess.run(
                cmd, env=env, cwd=tmp, capture_output=True, text=True, check=False
            )
            outer = time.perf_counter() - t0
            line = [x for x in done.stderr.splitlines() if x.startswith("PHASES ")]
            if done.returncode != 0 or not line:
                sys.exit(f"run failed ({done.returncode}): {done.stderr[-2000:]}")
            m = json.loads(line[-1][len("PHASES ") :])
            row = {
                "start": 1000 * m["start"],
                "started": 1000 * m["started"],
                "head": 1000 * m["search"],
                "search": 1000 * (m["searched"] - m["search"]),
                "tail": 1000 * (m["end"] - m["searched"]),
                "interp": 1000 * (outer - m["end"]),
                "total": 1000 * outer,
                "cpu": 1000 * m["cpu"],
            }
            rows[tree].append(row)
            print(
                f"  run {run + 1} {tree or 'this checkout'}: "
                + ", ".join(f"{k} {v:.0f}" for k, v in row.items()),
                flush=True,
            )
    for tree in trees:
        med = {k: statistics.median(r[k] for r in rows[tree]) for k in rows[tree][0]}
        shown = ", ".join(f"{k} {v:.0f}" for k, v in med.items())
        print(f"median {tree or 'this checkout'}: {shown}")


if __name__ == "__main__":
    main()
