"""Fan-out cost: one update written to N real websockets clients.

Rows: websockets' ``broadcast()`` alone (the baseline), and its two halves
timed apart (each connection framing the message, then writing it to its
transport); the server's path
(``LiveServer._enqueue``, then its chunks written at once: the message
waiting for each client, the hub's stale filter, each connection's state and
write-buffer check, the frame serialised once and written to each), on plain connections; the same
with permessage-deflate negotiated by every client (each connection
compresses the message with its own context); the same over TLS. And two
messages back to back (a move and its evaluation), joined into one write per
client by the server's path, against the same bytes (both frames) written
straight to each connection's transport.
The clients run in this process and do not read during the timed call, so
the figures are the server's writes alone; wall and CPU time are printed.

    .venv/bin/python bench/fanout.py [--clients 1000] [--rounds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import ssl
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trustme
from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import ServerConnection, broadcast
from websockets.frames import Frame, Opcode

from livegain.publish.actions import Send
from livegain.publish.limits import ServerLimits
from livegain.publish.schema import BoardState, EvalInfo, Player, Ply, Update
from livegain.publish.server import LiveServer

LIMITS = ServerLimits(max_connections_per_ip=0)  # every client comes from 127.0.0.1


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


def frame_each(connections: list[ServerConnection], data: bytes) -> None:
    for ws in connections:
        ws.protocol.send_text(data)


def write_each(connections: list[ServerConnection]) -> None:
    for ws in connections:
        ws.send_data()


def fan_out(server: LiveServer, *sends: Send[ServerConnection]) -> None:
    """The server's fan-out of ``sends`` to their clients, all of it at once:
    the messages queued back to back (those to the same clients joined), then
    every chunk written."""
    for send in sends:
        server._enqueue(send)
    while server.outbox:
        server._drain_outbox()


def write_raw(connections: list[ServerConnection], data: bytes) -> None:
    """``data`` written to each connection's transport, nothing else."""
    for ws in connections:
        ws.transport.write(data)


async def timed(
    server: LiveServer, clients: int, rounds: int, client_kwargs: dict[str, Any], url: str
) -> dict[str, tuple[list[float], list[float]]]:
    """Connect ``clients`` clients, then time each way of writing one update."""
    await server.start()
    _, state = sample_update(1)
    server.set_board(state)
    conns: list[ClientConnection] = []
    for _ in range(clients):
        ws = await connect(url.format(port=server.port), max_queue=None, **client_kwargs)
        await ws.send('{"type":"subscribe","boards":"*"}')
        conns.append(ws)
    await asyncio.sleep(1.0)
    server_side = server.hub.clients()
    assert len(server_side) == clients, len(server_side)
    data = sample_update(2)[0].model_dump_json().encode()
    send = Send(server_side, data, "b1")
    # a move and its evaluation, joined: the server's path against the same
    # bytes (both frames) written to each transport
    second = sample_update(3)[0].model_dump_json().encode()
    pair = Send(server_side, second, "b1")
    frames = (Frame(Opcode.TEXT, d).serialize(mask=False, extensions=[]) for d in (data, second))
    both = b"".join(frames)
    ways: dict[str, Callable[[], None]] = {
        "broadcast()": lambda: broadcast(server_side, data, text=True),
        "server path": lambda: fan_out(server, send),
        # broadcast()'s two halves, timed apart: each connection frames the
        # message (the sans-I/O protocol's send_text), then writes it out.
        "framing": lambda: frame_each(server_side, data),
        "writes": lambda: write_each(server_side),
        "two joined": lambda: fan_out(server, send, pair),
        "two raw": lambda: write_raw(server_side, both),
    }
    out: dict[str, tuple[list[float], list[float]]] = {n: ([], []) for n in ways}
    for _ in range(rounds):
        for name, way in ways.items():
            t0 = time.perf_counter()
            c0 = time.thread_time()
            way()
            out[name][1].append((time.thread_time() - c0) * 1000)
            out[name][0].append((time.perf_counter() - t0) * 1000)
            await asyncio.sleep(0.2)  # let the clients drain
    for ws in conns:
        await ws.close()
    await server.close()
    return out


async def main(clients: int, rounds: int) -> None:
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    cert.configure_cert(server_ctx)
    client_ctx = ssl.create_default_context()
    ca.configure_trust(client_ctx)
    plain = "ws://127.0.0.1:{port}/ws"
    with tempfile.TemporaryDirectory() as tmp:
        static = Path(tmp)
        rows: dict[str, tuple[list[float], list[float]]] = {}
        got = await timed(
            LiveServer("127.0.0.1", 0, static_dir=static, limits=LIMITS), clients, rounds, {}, plain
        )
        rows["broadcast() alone"] = got["broadcast()"]
        rows["  its framing part"] = got["framing"]
        rows["  its writing part"] = got["writes"]
        rows["server path"] = got["server path"]
        rows["two messages joined: written raw"] = got["two raw"]
        rows["two messages joined: server path"] = got["two joined"]
        got = await timed(
            LiveServer("127.0.0.1", 0, static_dir=static, limits=LIMITS, compression=True),
            clients,
            rounds,
            {"compression": "deflate"},
            plain,
        )
        rows["server path, permessage-deflate"] = got["server path"]
        got = await timed(
            LiveServer("127.0.0.1", 0, static_dir=static, limits=LIMITS, ssl=server_ctx),
            clients,
            rounds,
            {"ssl": client_ctx},
            "wss://127.0.0.1:{port}/ws",
        )
        rows["server path, TLS"] = got["server path"]
    size = len(sample_update(2)[0].model_dump_json())
    base = statistics.median(rows["broadcast() alone"][0])
    print(f"{clients} clients, {size}-byte update, {rounds} rounds (ms per fan-out)")
    for name, (wall, cpu) in rows.items():
        med = statistics.median(wall)
        print(
            f"{name:<32} median {med:7.2f}  max {max(wall):7.2f}  "
            f"CPU median {statistics.median(cpu):7.2f}  ratio {med / base:.2f}"
        )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args()
    resource.setrlimit(resource.RLIMIT_NOFILE, (20000, 20000))
    asyncio.run(main(args.clients, args.rounds))
