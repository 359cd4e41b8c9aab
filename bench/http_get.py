"""CPU per feed request: `livegain.feeds._http.http_get`, with a feed's kept
session and with one per request, against aiohttp with a session kept for
every request (the baseline, measured in the same run).

A feed's polls are GETs of a PGN or a LiveChess Cloud JSON every few seconds,
per round or per game; what matters on a machine that also runs the engines is
the CPU each costs. Both sides run in this process against the replay's GET
server (`MiniHttpServer`), so the figures include the server's share.

    .venv/bin/python bench/http_get.py [--requests 300] [--rounds 3] [--module FILE]

``--module FILE`` also times the ``http_get`` of another module (a copy of an
earlier ``_http.py``: ``git show REV:livegain/feeds/_http.py > /tmp/old_http.py``).
Asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp

import livegain
from livegain.feeds._http import http_get, http_session
from livegain.relay.http import MiniHttpServer, Reply

BODY = (Path(livegain.__file__).parent / "data" / "game_of_the_century.pgn").read_bytes()


async def per_request(get: Callable[[], Awaitable[bytes]], n: int) -> float:
    """CPU milliseconds per request over ``n`` requests."""
    t0 = time.process_time()
    for _ in range(n):
        assert await get() == BODY
    return 1000 * (time.process_time() - t0) / n


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--module", type=Path, default=None)
    args = ap.parse_args()

    other = None
    if args.module is not None:
        spec = importlib.util.spec_from_file_location("other_http", args.module)
        assert spec is not None and spec.loader is not None
        other = importlib.util.module_from_spec(spec)
        sys.modules["other_http"] = other  # (its dataclasses look themselves up there)
        spec.loader.exec_module(other)

    async with MiniHttpServer(lambda _path, _headers: Reply(200, BODY)) as server:
        url = server.base_url + "/round.pgn"
        async with aiohttp.ClientSession(auto_decompress=False) as session:

            async def kept() -> bytes:
                async with session.get(url) as resp:
                    return await resp.read()

            async def ours() -> bytes:
                return (await http_get(url)).body

            async with http_session() as feeds:

                async def ours_kept() -> bytes:
                    return (await http_get(url, session=feeds)).body

                runs: dict[str, Callable[[], Awaitable[bytes]]] = {
                    "aiohttp, one session kept": kept,
                    "http_get, the feed's session (as feeds run)": ours_kept,
                    "http_get, a session per request": ours,
                }
                if other is not None:

                    async def theirs() -> bytes:
                        return bytes((await other.http_get(url)).body)

                    runs[f"http_get of {args.module}"] = theirs
                got: dict[str, list[float]] = {name: [] for name in runs}
                for _ in range(args.rounds):  # in turns: a change of load hits all alike
                    for name, get in runs.items():
                        got[name].append(await per_request(get, args.requests))
    base = statistics.median(got["aiohttp, one session kept"])
    print(
        f"{args.requests} GETs of {len(BODY)} bytes a round, {args.rounds} rounds;"
        " CPU per request (client and server)"
    )
    for name, values in got.items():
        med = statistics.median(values)
        print(f"  {name:<48} {med:6.2f} ms  (x{med / base:.2f} the kept session)")


if __name__ == "__main__":
    asyncio.run(main())
