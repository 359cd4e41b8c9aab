"""Ingest load: a 10,000-game PGN file dropped into a file feed of a running service.

The service runs as ``livegain serve`` runs it (file feed, game state,
scheduler, a real Stockfish at a low depth, the HTTP/WebSocket server). A
probe in another process asks for ``/healthz`` every 20 ms, as monitoring
would. First with no input (the baseline), then while the file is ingested:
the time from the file's arrival until every accepted game is a board, and
/healthz latency (p50/p99/max) during it, against the baseline of the same run.

With the default limits a file's first 1,000 games are taken (``max_games``)
and the rest refused; ``--max-games 10000 --max-boards 10000`` takes them all.
``--huge`` also drops a 1 MB single-game file (refused: ``max_plies``).

    .venv/bin/python bench/ingest_load.py [--games 10000] [--max-games N] [--max-boards N]
        [--depth 4] [--huge] [--debug]

``--debug`` turns on asyncio's debug mode: every callback that holds the
event loop for more than 50 ms is logged with what it was.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from livegain.app.service import Service  # noqa: E402
from livegain.config import load_settings  # noqa: E402
from tests.app.ingest_data import huge_game, many_games  # noqa: E402

PROBE = r"""
import http.client, json, os, sys, time
port, stop = int(sys.argv[1]), sys.argv[2]
out = []
while not os.path.exists(stop):
    t0 = time.perf_counter()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("GET", "/healthz")
    r = c.getresponse()
    r.read()
    c.close()
    out.append((time.time(), time.perf_counter() - t0))
    time.sleep(0.02)
print(json.dumps(out))
"""


def figures(lat: list[float]) -> dict[str, float]:
    if not lat:
        return {"n": 0, "p50": float("nan"), "p99": float("nan"), "max": float("nan")}
    s = sorted(lat)
    return {
        "n": len(s),
        "p50": statistics.median(s) * 1000,
        "p99": s[min(len(s) - 1, int(len(s) * 0.99))] * 1000,
        "max": s[-1] * 1000,
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="livegain-ingest-"))
    drop = tmp / "drop"
    drop.mkdir()
    text = many_games(args.games)
    huge = huge_game() if args.huge else ""
    settings = load_settings(
        None,
        server={"host": "127.0.0.1", "port": 0},
        engine={"depth": args.depth, "workers": 1, "rating": 2860.0},
        data_dir=str(tmp / "data"),
        log={"level": "error", "json": False},
        feeds=[
            {
                "type": "file",
                "name": "files",
                "path": str(drop),
                "interval": 0.2,
                "max_games": args.max_games,
            }
        ],
        limits={"max_boards": args.max_boards},
    )
    service = Service(settings)
    stop = asyncio.Event()
    task = asyncio.create_task(service.run(stop))
    await asyncio.wait_for(service.ready.wait(), 60)
    stop_file = tmp / "stop"
    probe = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        PROBE,
        str(service.server.port),
        str(stop_file),
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        await asyncio.sleep(args.baseline)
        base_end = time.time()
        (tmp / "r.tmp").write_text(text)
        if huge:
            (tmp / "h.tmp").write_text(huge)
            (tmp / "h.tmp").replace(drop / "huge.pgn")
        (tmp / "r.tmp").replace(drop / "round.pgn")
        want = min(args.games, args.max_games, args.max_boards)
        t = service.registry
        assert t is not None
        while len(t.boards) < want:  # noqa: ASYNC110 (the service has no event for it)
            await asyncio.sleep(0.05)
        ingest_end = time.time()
        await asyncio.sleep(0.5)
    finally:
        stop_file.touch()
        out, _ = await asyncio.wait_for(probe.communicate(), 120)
        stop.set()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 60)
    samples = json.loads(out)
    base = [d for ts, d in samples if ts <= base_end]
    during = [d for ts, d in samples if base_end < ts <= ingest_end]
    return {
        "games": args.games,
        "accepted": want,
        "ingest_s": ingest_end - base_end,
        "baseline": figures(base),
        "during": figures(during),
        "feed_errors": dict(service.stats.feed_errors),
        "slowest": sorted(((d, ts - base_end) for ts, d in samples if ts > base_end), reverse=True)[
            :8
        ],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--games", type=int, default=10_000)
    ap.add_argument("--max-games", type=int, default=1000)
    ap.add_argument("--max-boards", type=int, default=1000)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--baseline", type=float, default=3.0, help="seconds of baseline probes")
    ap.add_argument("--huge", action="store_true", help="also drop a 1 MB single-game file")
    ap.add_argument("--debug", action="store_true", help="log callbacks holding the loop >50 ms")
    ap.add_argument(
        "--no-gc-pacing",
        action="store_true",
        help="leave full garbage collections to Python (the service's gc.freeze pacing off)",
    )
    args = ap.parse_args()
    if args.no_gc_pacing:
        import livegain.app.service

        livegain.app.service.GC_FREEZE_EVERY = float("inf")
    loop = asyncio.new_event_loop()
    if args.debug:
        logging.basicConfig(level=logging.WARNING)
        loop.set_debug(True)
        loop.slow_callback_duration = 0.05
    r = loop.run_until_complete(run(args))
    b, d = r["baseline"], r["during"]
    print(
        f"ingest of {r['games']} games ({r['accepted']} accepted): {r['ingest_s']:.1f} s, "
        f"{r['accepted'] / r['ingest_s']:.0f} games/s"
    )
    print(f"{'/healthz ms':<22}{'n':>6}{'p50':>9}{'p99':>9}{'max':>9}")
    for name, f in (("baseline (no ingest)", b), ("during ingest", d)):
        print(f"{name:<22}{f['n']:>6}{f['p50']:>9.1f}{f['p99']:>9.1f}{f['max']:>9.1f}")
    if b["n"] and d["n"]:
        print(
            f"ratio during/baseline: p50 x{d['p50'] / b['p50']:.1f}, "
            f"p99 x{d['p99'] / b['p99']:.1f}, max x{d['max'] / b['max']:.1f}"
        )
    print(f"feed errors: {r['feed_errors']}")
    slow = ", ".join(f"{d * 1000:.0f} ms at {at:.1f} s" for d, at in r["slowest"])
    print(f"slowest answers (from the input's arrival): {slow}")


if __name__ == "__main__":
    main()
