"""Board-list traffic per idle viewer when many boards appear, and hello size.

    .venv/bin/python bench/board_list.py [BOARDS]

Starts a LiveServer, connects one idle WebSocket viewer, adds BOARDS boards
one after the other (yielding to the loop every 100, like a feed), and prints
the bytes the viewer received (debounced ``boards_diff`` messages) against the
baseline measured in the same run: the whole list sent again on every new
board (what the server did before diffs), and the size of ``hello`` then.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

from websockets.asyncio.client import connect

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from publish.helpers import board_state

from livegain.publish.server import LiveServer


async def main(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        srv = LiveServer("127.0.0.1", 0, static_dir=Path(tmp))
        async with srv, connect(f"ws://127.0.0.1:{srv.port}/ws", max_size=None) as idle:
            await idle.recv()
            baseline = 0
            t0 = time.perf_counter()
            for i in range(n):
                srv.set_board(board_state(f"bench-{i:05d}"))
                # what the whole list would have cost this viewer now
                baseline += len(srv.board_page(0, None))
                if i % 100 == 0:
                    await asyncio.sleep(0)
            added = time.perf_counter() - t0
            received = messages = 0
            while True:
                try:
                    msg = await asyncio.wait_for(idle.recv(), 1.5)
                except TimeoutError:
                    break
                received += len(msg)
                messages += 1
            async with connect(f"ws://127.0.0.1:{srv.port}/ws", max_size=None) as late:
                hello = await late.recv()
            whole = len(srv.board_page(0, None))
        print(f"boards added:                     {n} in {added:.2f} s")
        print(f"idle viewer received (diffs):     {received:,} bytes in {messages} messages")
        print(f"baseline, whole list per change:  {baseline:,} bytes in {n} messages")
        print(f"ratio baseline / diffs:           {baseline / max(received, 1):,.0f}")
        print(f"hello now:                        {len(hello):,} bytes")
        print(f"baseline hello (whole list):      {whole:,} bytes")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 3000))
