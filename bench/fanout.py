"""Fan-out cost: one update written to N real websockets clients, four ways.

``broadcast()`` (websockets frames the message once per connection); the
frame built once and the same bytes written to every transport; the
server's own path in one process (``LiveServer._write_each``: the frame
built once, written with one ``send`` on each idle socket, backlog and state
checks included); and the same with the fan-out helpers sharing the writes
(``LiveServer._write_to``).
The clients run in this process and do not read during the timed call, so
the figures are the server's writes alone; wall and CPU time are printed.

    .venv/bin/python bench/fanout.py [--clients 1000] [--rounds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import time
from pathlib import Path

from websockets.asyncio.client import connect
from websockets.asyncio.server import broadcast

from livegain.publish.fanout import default_count
from livegain.publish.schema import BoardState, EvalInfo, Player, Ply, Update
from livegain.publish.server import LiveServer, text_frame

ROOT = Path(__file__).resolve().parent.parent


def sample_update(seq: int) -> tuple[Update, BoardState]:
    moves = [
        Ply(
            ply=i + 1,
            san="Nf3",
            uci="g1f3",
            color="white" if i % 2 == 0 else "black",
            eval=EvalInfo(cp=20, depth=12),
            gain=-3,
        )
        for i in range(40)
    ]
    state = BoardState(
        board_id="b1",
        white=Player(name="A"),
        black=Player(name="B"),
        result="*",
        status="live",
        fen="8/8/8/8/8/8/8/K6k w - - 0 1",
        moves=moves,
        white_trace=[],
        black_trace=[],
        engine="bench",
        engine_rating=2860.0,
        seq=seq,
    )
    upd = Update(board_id="b1", seq=seq, ply=moves[-1], fen=state.fen, result="*", status="live")
    return upd, state


async def main(clients: int, rounds: int) -> None:
    helpers = default_count()
    server = LiveServer("127.0.0.1", 0, fanout_helpers=helpers)
    await server.start()
    _, state = sample_update(1)
    server.set_board(state)
    conns = []
    for _ in range(clients):
        ws = await connect(f"ws://127.0.0.1:{server.port}/ws", max_queue=None)
        await ws.send('{"type":"subscribe","boards":"*"}')
        conns.append(ws)
    await asyncio.sleep(1.0)
    server_clients = list(server._clients)
    server_side = [c.ws for c in server_clients]
    data = sample_update(2)[0].model_dump_json().encode()
    names = ("broadcast()", "framed once", "server path", "+ helpers")
    wall: dict[str, list[float]] = {n: [] for n in names}
    cpu: dict[str, list[float]] = {n: [] for n in names}
    for _ in range(rounds):
        for name in names:
            t0 = time.perf_counter()
            c0 = time.thread_time()
            if name == "broadcast()":
                broadcast(server_side, data, text=True)
            elif name == "framed once":
                frame = text_frame(data)
                for sws in server_side:
                    sws.transport.write(frame)
            elif name == "server path":
                server._write_each(server_clients, "b1", text_frame(data))
            else:
                server._write_to(server_clients, "b1", text_frame(data))
            cpu[name].append((time.thread_time() - c0) * 1000)
            wall[name].append((time.perf_counter() - t0) * 1000)
            await asyncio.sleep(0.2)  # let the clients drain
    base = statistics.median(wall["broadcast()"])
    print(f"{clients} clients, {len(data)}-byte update, {rounds} rounds (ms per fan-out)")
    print(f"fan-out helpers: {helpers} (the last row only; CPU is this process's own)")
    for name in names:
        med = statistics.median(wall[name])
        print(
            f"{name:<14} median {med:7.2f}  max {max(wall[name]):7.2f}  "
            f"CPU median {statistics.median(cpu[name]):7.2f}  ratio {med / base:.2f}"
        )
    for ws in conns:
        await ws.close()
    await server.close()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args()
    resource.setrlimit(resource.RLIMIT_NOFILE, (20000, 20000))
    asyncio.run(main(args.clients, args.rounds))
