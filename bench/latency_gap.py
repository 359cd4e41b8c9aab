"""Latency: a move injected into a feed -> the evaluated update at N WebSocket clients.

The service runs as it does in production (game state, scheduler, publishing,
WebSocket fan-out) with one change: the engine is replaced by an instant
evaluator (a material count), so the figures are the service's own overhead,
without the engine's search time. The clients live in separate processes
(``--client-procs``, 1 by default) and are raw sockets (handshake, a masked
``subscribe`` frame, then a byte search for the evaluated ply in what
arrives), so that client-side parsing costs as little as possible;
timestamps on both sides use CLOCK_MONOTONIC, which is system-wide on Linux.
The clients still share the machine's cores with the server: real viewers
are on other machines.

Gateway mode (``--gateways G``): each case is run twice, side by side, in
one invocation: the viewers on the service's own (embedded) server, then
spread evenly over G ``livegain gateway`` processes (ports of their own)
fed by the service through a Mosquitto the bench starts
(``set_tcp_nodelay true``, as deploy/mosquitto.conf). In lazy mode the bench
learns that a gateway has written a move's updates from its ``/healthz``
(``messages_sent``), asked every 20 ms.

For each move: t0 just before the snapshot is handed to the service's sink;
"published" when the embedded server has written the evaluated update to
every client's socket; "delivered median" / "delivered last" when half of /
all the N clients' kernels received it; "read" when the client processes
read it (eager mode); "server CPU" the CPU time the server's process used
from t0 to "published" (both of the move's fan-outs included), "CPU after
eval" the same from the evaluation's return (the part after the search).
Per run: the CPU time per update of the service's process, of the gateways
and of the broker over all the moves (both of each move's updates counted),
and the servers' RSS growth per connection once every client is connected
and subscribed (idle). The same run is repeated with 1 client as the
baseline. On the embedded server, after the moves, a second baseline of the
same run: websockets' bare ``broadcast()`` of the last update's frame to
the same clients ("bare broadcast", CPU ms); the service's CPU per
viewer-update (its CPU per update at N clients less at 1, over N) is given
against it.

    .venv/bin/python bench/latency.py [--clients 1000 [10000 ...]] [--moves 50]
        [--search-ms 50] [--gateways 2] [--client-procs 4] [--read lazy]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import multiprocessing as mp
import os
import platform
import resource
import selectors
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import chess
import chess.pgn
from websockets.asyncio.server import broadcast

from livegain.app.service import Service
from livegain.cli.running import run_async
from livegain.config import load_settings
from livegain.core.evaluation import Evaluation
from livegain.core.snapshot import GameSnapshot, PlayerInfo
from livegain.feeds.base import FeedSink
from livegain.publish.publication import Kind, Publication

ROOT = Path(__file__).resolve().parent.parent
VALUES = {chess.PAWN: 100, chess.KNIGHT: 300, chess.BISHOP: 300, chess.ROOK: 500, chess.QUEEN: 900}


def now_ns() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


class InstantEvaluator:
    """Material count after an optional simulated search (a sleep: no CPU used).

    The time spent in :meth:`evaluate` is measured per position so that it can
    be subtracted exactly: what remains is the service's overhead.
    """

    def __init__(self, search_s: float = 0.0) -> None:
        self.search_s = search_s
        self.spent: dict[str, int] = {}
        self.began: dict[str, int] = {}
        self.done_cpu: dict[str, int] = {}

    async def evaluate(self, board: chess.Board, priority: int = 0) -> Evaluation:
        t0 = now_ns()
        self.began[board.fen()] = t0
        if self.search_s > 0:
            await asyncio.sleep(self.search_s)
        cp = sum(
            VALUES.get(p.piece_type, 0) * (1 if p.color == chess.WHITE else -1)
            for p in board.piece_map().values()
        )
        fen = board.fen()
        self.spent[fen] = now_ns() - t0
        self.done_cpu[fen] = time.process_time_ns()
        return Evaluation(cp=cp, depth=1)

    def describe(self) -> str:
        return "instant material count"

    @property
    def engine_key(self) -> str:
        return "instant"


class InjectFeed:
    """A feed the bench drives by hand."""

    name = "bench"

    def __init__(self) -> None:
        self.sink: FeedSink | None = None
        self.ready = asyncio.Event()

    async def run(self, sink: FeedSink) -> None:
        self.sink = sink
        self.ready.set()
        await asyncio.Event().wait()


# --------------------------------------------------------------------------
# client process: raw WebSocket clients


def _masked_frame(first: int, payload: bytes) -> bytes:
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    n = len(payload)
    ext = b"" if n < 126 else struct.pack("!H", n)
    header = bytes([first, 0x80 | (n if n < 126 else 126)]) + ext
    return header + mask + masked


def _connect(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(
        (
            f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(4096)
        if not chunk:
            raise ConnectionError("closed during handshake")
        buf += chunk
    if not buf.startswith(b"HTTP/1.1 101"):
        raise ConnectionError(buf[:100].decode(errors="replace"))
    s.sendall(_masked_frame(0x81, b'{"type":"subscribe","boards":"*"}'))
    s.setblocking(False)
    return s


# Linux's SO_TIMESTAMPNS (asm-generic, x86 included): the kernel stamps each
# packet with CLOCK_REALTIME as it reaches the receiving socket's host stack,
# and ``recvmsg`` returns the stamp of the last packet it read.
SO_TIMESTAMPNS = 35
_TS_SPACE = socket.CMSG_SPACE(16)


def _kernel_ts(ancdata: list[tuple[int, int, bytes]]) -> int | None:
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= 16:
            sec, nsec = struct.unpack("qq", data[:16])
            return int(sec * 1_000_000_000 + nsec)
    return None


class _Stream:
    """One client's byte stream, cut into WebSocket frames as they complete.

    Server frames are unmasked. Each complete frame is paired with the
    kernel stamp of the read that completed it and the time that read
    returned to this process.
    """

    def __init__(self) -> None:
        self.buf = bytearray()

    def feed(self, data: bytes) -> list[tuple[int, bytes]]:
        self.buf += data
        frames = []
        buf = self.buf
        while len(buf) >= 2:
            n = buf[1] & 0x7F
            hdr = 2
            if n == 126:
                if len(buf) < 4:
                    break
                n = struct.unpack_from("!H", buf, 2)[0]
                hdr = 4
            elif n == 127:
                if len(buf) < 10:
                    break
                n = struct.unpack_from("!Q", buf, 2)[0]
                hdr = 10
            if len(buf) < hdr + n:
                break
            frames.append((buf[0] & 0x0F, bytes(buf[hdr : hdr + n])))
            del buf[: hdr + n]
        return frames


def client_main(port: int, n: int, conn: Connection, lazy: bool) -> None:
    """Open n clients; report when every client received each evaluated ply.

    Each evaluated update is timed twice per client: "delivered", the
    kernel's receive stamp of the packet that completed its frame (when the
    server's write reached the client's socket, whatever this process was
    doing), and "read", when this process got it from ``recvmsg``.

    Eager (``lazy=False``): one blocking ``select`` waits on the sockets and
    the control pipe together, and every socket is read as soon as data
    arrives, as a viewer's browser would. Lazy: the sockets are read only
    when the bench says the update was published, so this process uses no
    CPU during the fan-out (the clients' share of the 2 cores goes to the
    server, as with viewers on other machines); only "delivered" means
    anything then.
    """
    resource.setrlimit(resource.RLIMIT_NOFILE, (20000, 20000))
    socks = [_connect(port) for _ in range(n)]
    for s in socks:
        s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    streams = [_Stream() for _ in socks]
    sel = selectors.DefaultSelector()
    if not lazy:
        for i, s in enumerate(socks):
            sel.register(s, selectors.EVENT_READ, i)
    sel.register(conn, selectors.EVENT_READ, -1)
    conn.send(("connected", n))
    expect: int | None = None
    marker = b""
    seen: set[int] = set()
    results: dict[int, list[tuple[int, int]]] = {}
    closed: set[int] = set()

    def read(i: int) -> None:
        s = socks[i]
        while True:
            try:
                data, anc, _flags, _addr = s.recvmsg(1 << 16, _TS_SPACE)
            except BlockingIOError:
                return
            t_read = now_ns()
            if not data:
                closed.add(i)
                if not lazy:
                    sel.unregister(s)
                return
            stamp = _kernel_ts(anc)
            for opcode, frame in streams[i].feed(data):
                if opcode == 0x9:  # the server's keepalive ping: answer it
                    s.sendall(_masked_frame(0x8A, frame))
                    continue
                if expect is None or i in seen:
                    continue
                pos = frame.find(marker)
                if pos >= 0 and frame.find(b'"eval":{', pos) >= 0:
                    # CLOCK_REALTIME -> CLOCK_MONOTONIC (both read now: the
                    # offset moves by parts per million at most).
                    offset = time.time_ns() - now_ns()
                    delivered = (stamp - offset) if stamp is not None else t_read
                    seen.add(i)
                    results[expect].append((delivered, t_read))
            if lazy is False:
                return

    deadline = time.monotonic() + 600
    running = True
    collecting = False
    while running and time.monotonic() < deadline:
        for key, _ in sel.select(timeout=0.002 if collecting else 1.0):
            i = key.data
            if i >= 0:
                read(i)
                continue
            while conn.poll():
                cmd = conn.recv()
                if cmd[0] == "expect":
                    expect = int(cmd[1])
                    marker = b'"ply":{"ply":%d,' % expect
                    seen = set()
                    results[expect] = []
                elif cmd[0] == "collect":
                    collecting = True
                elif cmd[0] == "stop":
                    running = False
        if collecting and expect is not None:
            # Everything was written before "collect" was sent; a client
            # that still lacks the update is read again after 2 ms.
            for j in range(n):
                if j not in seen and j not in closed:
                    read(j)
        if expect is not None and len(seen) + len(closed - seen) >= n:
            conn.send(("done", expect))
            expect = None
            collecting = False
    conn.send(("results", results))
    for s in socks:
        s.close()


# --------------------------------------------------------------------------
# server side


def demo_game() -> tuple[GameSnapshot, list[str]]:
    with (ROOT / "livegain" / "data" / "demo-round.pgn").open() as fh:
        game = chess.pgn.read_game(fh)
    assert game is not None
    sans = []
    b = game.board()
    for mv in game.mainline_moves():
        sans.append(b.san(mv))
        b.push(mv)
    snap = GameSnapshot(
        source="bench",
        white=PlayerInfo(game.headers["White"]),
        black=PlayerInfo(game.headers["Black"]),
        game_id="bench-1",
        event="Latency bench",
        round="1",
        board=1,
    )
    return snap, sans


# --------------------------------------------------------------------------
# gateway mode: a broker and `livegain gateway` processes


PREFIX = "bench/out"
MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_ns(pid: int) -> int:
    """CPU time of every thread of process ``pid`` (scheduler statistics, ns)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            total += int((task / "schedstat").read_text().split()[0])
    return total


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


class Broker:
    """A Mosquitto of the bench's own: loopback, anonymous, no persistence,
    ``set_tcp_nodelay true`` as deploy/mosquitto.conf has it."""

    def __init__(self, workdir: Path) -> None:
        if not Path(MOSQUITTO).exists():
            raise SystemExit(f"gateway mode needs Mosquitto ({MOSQUITTO} not found)")
        self.port = free_port()
        conf = workdir / "mosquitto.conf"
        conf.write_text(
            f"listener {self.port} 127.0.0.1\nallow_anonymous true\n"
            "persistence false\nset_tcp_nodelay true\nmax_queued_messages 100000\n"
            f"log_dest file {workdir / 'mosquitto.log'}\n"
        )
        self.proc = subprocess.Popen(
            [MOSQUITTO, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        for _ in range(200):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port)):
                return
            time.sleep(0.05)
        raise RuntimeError("mosquitto did not open its port")

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


class Gateway:
    """One `livegain gateway` process on a port of its own."""

    def __init__(self, broker: Broker, log: Path, loop: str = "asyncio") -> None:
        self.port = free_port()
        env = {
            **os.environ,
            "LIVEGAIN_SERVER__MAX_CONNECTIONS": "20000",
            "LIVEGAIN_SERVER__MAX_CONNECTIONS_PER_IP": "0",
            "LIVEGAIN_LOG__LEVEL": "warning",
        }
        with log.open("wb") as err:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "livegain.cli",
                    "gateway",
                    "--broker",
                    broker.url,
                    "--prefix",
                    PREFIX,
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(self.port),
                    "--loop",
                    loop,
                ],
                stdout=subprocess.PIPE,
                stderr=err,
                env=env,
            )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if b" is live at " not in line:
            self.proc.kill()
            raise RuntimeError(f"gateway did not start: {line!r}, see {log}")

    @property
    def pid(self) -> int:
        return self.proc.pid

    async def health(self) -> dict[str, Any]:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        data = await reader.read()
        writer.close()
        body: dict[str, Any] = json.loads(data.split(b"\r\n\r\n", 1)[1])
        return body

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


# --------------------------------------------------------------------------
# one measured run


async def measure(
    clients: int,
    moves: int,
    search_s: float,
    procs: int,
    lazy: bool,
    gateways: int = 0,
    loop: str = "asyncio",
) -> tuple[dict[str, list[float]], dict[str, float]]:
    """One run: ``clients`` viewers of the service's own server (``gateways``
    0) or spread evenly over ``gateways`` gateway processes fed by the service
    through a broker. Returns the per-move figures and the run's totals."""
    feed = InjectFeed()
    workdir = Path(tempfile.mkdtemp(prefix="livegain-latency-"))
    broker = Broker(workdir) if gateways else None
    settings = load_settings(
        None,
        server={
            "host": "127.0.0.1",
            "port": 0,
            "max_connections_per_ip": 0,
            "max_connections": max(clients + 100, 10_000),
        },
        persist=False,
        engine={"rating": 2860.0},
        log={"level": "warning", "json": False},
        mqtt={
            "enabled": broker is not None,
            "url": broker.url if broker else "mqtt://127.0.0.1:1883",
            "prefix": PREFIX,
        },
    )
    evaluator = InstantEvaluator(search_s)
    service = Service(settings, evaluator=evaluator, feeds=[feed], max_inflight=4)
    published: dict[int, int] = {}
    published_cpu: dict[int, int] = {}
    written: dict[int, asyncio.Event] = {}
    sent_in_move = [0]
    orig = service.server.deliver

    last_update = [b""]

    def timed_deliver(p: Publication, /) -> None:
        # the last step of the publication chain: a board's updates, each
        # encoded once, written to every subscriber
        orig(p)
        if p.kind is not Kind.BOARD or p.whole:
            return
        for update, data in zip(p.updates, p.encoded, strict=True):
            sent_in_move[0] += 1
            last_update[0] = data
            if update.ply is not None and update.ply.gain is not None:
                done_when_written(update.ply.ply)

    def done_when_written(ply: int) -> None:
        # Large fan-outs are written in chunks, one per loop iteration.
        if service.server.outbox == 0:
            if ply not in published:
                published[ply] = now_ns()
                published_cpu[ply] = time.process_time_ns()
                written.setdefault(ply, asyncio.Event()).set()
        else:
            asyncio.get_running_loop().call_soon(done_when_written, ply)

    service.server.deliver = timed_deliver  # type: ignore[method-assign]
    stop = asyncio.Event()
    task = asyncio.create_task(service.run(stop))
    gws: list[Gateway] = []
    try:
        await asyncio.wait_for(service.ready.wait(), 30)
        await asyncio.wait_for(feed.ready.wait(), 10)
        assert feed.sink is not None
        base, sans = demo_game()
        fens = []
        board = chess.Board()
        for san in sans:
            board.push_san(san)
            fens.append(board.fen())
        feed.sink.snapshot(base)  # the board exists before clients subscribe
        await asyncio.sleep(0.2)
        for i in range(gateways):
            log = workdir / f"gateway-{i}.log"
            gws.append(await asyncio.to_thread(Gateway, broker, log, loop))  # type: ignore[arg-type]
        for gw in gws:
            for _ in range(200):
                if (await gw.health())["boards"] == 1:
                    break
                await asyncio.sleep(0.05)
            else:
                raise RuntimeError("a gateway did not get the board")
        server_pids = [gw.pid for gw in gws] or [os.getpid()]
        rss_before = sum(rss_kib(pid) for pid in server_pids)
        ports = [gw.port for gw in gws] or [service.server.port]
        ev_loop = asyncio.get_running_loop()
        # The client processes report through pipes read by the event loop when
        # they have something to say (no polling in the server's process).
        inbox: asyncio.Queue[tuple[int, Any]] = asyncio.Queue()
        parents: list[Connection] = []
        children = []
        procs = max(procs, len(ports))
        shares = [clients // procs + (1 if i < clients % procs else 0) for i in range(procs)]
        per_port = [0] * len(ports)
        ctx = mp.get_context("fork")
        for i, share in enumerate(shares):
            if share <= 0:
                continue
            parent, child = mp.Pipe()
            parents.append(parent)
            j = len(parents) - 1

            def readable(j: int = j, parent: Connection = parent) -> None:
                # uvloop's add_reader makes the pipe non-blocking; a report
                # larger than the pipe's buffer is read whole, blocking
                os.set_blocking(parent.fileno(), True)
                try:
                    while parent.poll():
                        inbox.put_nowait((j, parent.recv()))
                except EOFError:  # the client process has exited
                    ev_loop.remove_reader(parent.fileno())

            ev_loop.add_reader(parent.fileno(), readable)
            port = ports[i % len(ports)]
            per_port[i % len(ports)] += share
            proc = ctx.Process(target=client_main, args=(port, share, child, lazy), daemon=True)
            proc.start()
            children.append(proc)

        async def from_all(kind: str, limit_s: float) -> dict[int, Any]:
            got: dict[int, Any] = {}
            async with asyncio.timeout(limit_s):
                while len(got) < len(parents):
                    i, msg = await inbox.get()
                    if msg[0] != kind:
                        raise RuntimeError(f"client process {i}: expected {kind!r}, got {msg!r}")
                    got[i] = msg[1]
            return got

        async def connected() -> int:
            if not gws:
                return service.server.client_count
            return sum([(await gw.health())["clients"] for gw in gws])

        await from_all("connected", 600)
        for _ in range(1200):  # the servers have accepted every client (bounded wait)
            if await connected() >= clients:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)
        rss_after = sum(rss_kib(pid) for pid in server_pids)

        async def sent() -> list[int]:
            return [(await gw.health())["websocket"]["messages_sent"] for gw in gws]

        async def gateways_wrote(expected: list[int]) -> list[int]:
            """Wait until each gateway has written the move's updates to all of
            its clients: its /healthz (``messages_sent``), asked every 25 ms
            (about 1 ms of the gateway's CPU each), the first time only once
            the fan-out should be over (40 µs per client), so as not to slow
            the fan-out down."""
            await asyncio.sleep(max(0.005, 40e-6 * max(per_port)))
            got = []
            for gw, want in zip(gws, expected, strict=True):
                while True:
                    count = (await gw.health())["websocket"]["messages_sent"]
                    if count >= want:
                        got.append(count)
                        break
                    await asyncio.sleep(0.025)
            return got

        def cpu_now() -> dict[str, int]:
            out = {"service": time.process_time_ns()}
            out["gateways"] = sum(cpu_ns(gw.pid) for gw in gws)
            out["broker"] = cpu_ns(broker.proc.pid) if broker else 0
            return out

        t0: dict[int, int] = {}
        cpu0: dict[int, int] = {}
        moves = min(moves, len(sans))
        sent_before = await sent()
        cpu_start = cpu_now()
        updates_start = service.stats.updates
        for k in range(1, moves + 1):
            for parent in parents:
                parent.send(("expect", k))
            await asyncio.sleep(float(os.environ.get("GAP", "0.02")))
            snap = GameSnapshot(**{**base.__dict__, "moves": tuple(sans[:k])})
            sent_in_move[0] = 0
            t0[k] = now_ns()
            cpu0[k] = time.process_time_ns()
            feed.sink.snapshot(snap)
            try:
                if lazy:
                    event = written.setdefault(k, asyncio.Event())
                    await asyncio.wait_for(event.wait(), 30)
                    if gws:
                        want = [
                            b + n * sent_in_move[0]
                            for b, n in zip(sent_before, per_port, strict=True)
                        ]
                        sent_before = await asyncio.wait_for(gateways_wrote(want), 30)
                    for parent in parents:
                        parent.send(("collect", k))
                done = await from_all("done", 60)
            except TimeoutError:
                raise TimeoutError(f"ply {k} not received by every client in time") from None
            assert all(v == k for v in done.values()), done
        cpu_end = cpu_now()
        bare = await bare_broadcast(service, last_update[0]) if not gws and clients > 1 else None
        (board_id,) = service.server.board_ids()
        state_bytes = len(service.server.snapshot_bytes(board_id) or b"")
        updates = service.stats.updates - updates_start
        for parent in parents:
            parent.send(("stop",))
        per_proc = await from_all("results", 60)
        results: dict[int, list[tuple[int, int]]] = {k: [] for k in range(1, moves + 1)}
        for part in per_proc.values():
            for k, times in part.items():
                results[k].extend(times)
        for parent in parents:
            ev_loop.remove_reader(parent.fileno())
        for proc in children:
            proc.join(10)
    finally:
        for gw in gws:
            await asyncio.to_thread(gw.stop)
        stop.set()
        await asyncio.wait_for(task, 30)
        if broker is not None:
            broker.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    # Minus the time the evaluator spent on the move's position (the "search").
    start = {k: t0[k] + evaluator.spent[fens[k - 1]] for k in range(1, moves + 1)}

    def at(k: int, which: int, q: str) -> float:
        times = [r[which] for r in results[k]]
        t = max(times) if q == "last" else statistics.median(times)
        return (t - start[k]) / 1e6

    ks = range(1, moves + 1)
    per_move = {
        "search began": [(evaluator.began[fens[k - 1]] - t0[k]) / 1e6 for k in ks],
        "delivered median": [at(k, 0, "median") for k in ks],
        "delivered last": [at(k, 0, "last") for k in ks],
        "read median": [at(k, 1, "median") for k in ks],
        "read last": [at(k, 1, "last") for k in ks],
    }
    if not gws:
        # Until the evaluated update is written to every socket (embedded only:
        # a gateway's writes are not seen from here).
        per_move["published"] = [(published[k] - start[k]) / 1e6 for k in ks]
        # CPU time of the server's process from the move's arrival until the
        # evaluated update is written to every socket: both of the move's
        # fan-outs and everything else the service did for it (the evaluator
        # sleeps: no CPU). Unlike the wall-clock figures, it does not count time
        # the server waited for a core held by the clients or by other work.
        per_move["server CPU"] = [(published_cpu[k] - cpu0[k]) / 1e6 for k in ks]
        # The same from the evaluation's return only: the part on the critical
        # path once the search is done.
        per_move["CPU after eval"] = [
            (published_cpu[k] - evaluator.done_cpu[fens[k - 1]]) / 1e6 for k in ks
        ]
    totals = {
        f"CPU/update {part}": (cpu_end[part] - cpu_start[part]) / 1e6 / max(updates, 1)
        for part in ("service", "gateways", "broker")
    }
    totals["RSS/connection KiB"] = (rss_after - rss_before) / clients
    totals["updates"] = float(updates)
    # The messages' sizes at the last move: a board's snapshot grows with its
    # plies (the service publishes it, retained, after each batch of updates).
    totals["snapshot bytes"] = float(state_bytes)
    totals["update bytes"] = float(len(last_update[0]))
    if bare is not None:
        totals["bare broadcast"] = bare
    return per_move, totals


BARE_ROUNDS = 20


async def bare_broadcast(service: Service, frame: bytes) -> float:
    """The baseline of the same run: CPU ms of websockets' bare
    ``broadcast()`` of the last update's frame to every connected client (no
    hub, no checks), the median of :data:`BARE_ROUNDS`, the loop left to run
    between two (as between moves). The clients have stopped reading (lazy)
    or read what comes (eager)."""
    conns = service.server.hub.clients()
    costs = []
    for _ in range(BARE_ROUNDS):
        c0 = time.process_time_ns()
        broadcast(conns, frame, text=True)
        costs.append((time.process_time_ns() - c0) / 1e6)
        await asyncio.sleep(0.02)
    return statistics.median(costs)


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    idx = min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))
    return s[idx]


PER_MOVE = (
    "search began",
    "published",
    "delivered median",
    "delivered last",
    "read median",
    "read last",
    "server CPU",
    "CPU after eval",
)
TOTALS = (
    "CPU/update service",
    "CPU/update gateways",
    "CPU/update broker",
    "RSS/connection KiB",
    "snapshot bytes",
    "update bytes",
    "bare broadcast",
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--clients", type=int, nargs="+", default=[1000], help="viewers (several: one run each)"
    )
    ap.add_argument("--moves", type=int, default=50)
    ap.add_argument(
        "--search-ms",
        type=float,
        default=0.0,
        help="simulated search time per position (a sleep), subtracted from the figures",
    )
    ap.add_argument(
        "--client-procs",
        type=int,
        default=1,
        help="processes the clients are spread over (they share this machine's cores)",
    )
    ap.add_argument(
        "--read",
        choices=("both", "lazy", "eager"),
        default="both",
        help="how the N clients read: lazy (after each update is written, so that "
        "they use no CPU during the fan-out) and/or eager (as soon as data arrives)",
    )
    ap.add_argument(
        "--gateways",
        type=int,
        default=0,
        metavar="G",
        help="also run each case with the viewers spread over G `livegain gateway` "
        "processes fed through a Mosquitto (0: the embedded server only)",
    )
    ap.add_argument(
        "--loop",
        choices=("asyncio", "uvloop", "both"),
        default="asyncio",
        help="the event loop of the service and the gateways (both: each case on each, "
        "side by side)",
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    resource.setrlimit(resource.RLIMIT_NOFILE, (20000, 20000))
    search_s = args.search_ms / 1000
    load = os.getloadavg()[0]
    runs: dict[str, tuple[dict[str, list[float]], dict[str, float]]] = {
        "1 client": asyncio.run(measure(1, args.moves, search_s, 1, lazy=False))
    }
    modes = [m for m in ("lazy", "eager") if args.read in (m, "both")]
    procs = args.client_procs
    loops = ["asyncio", "uvloop"] if args.loop == "both" else [args.loop]
    for n in args.clients:
        for mode in modes:
            lazy = mode == "lazy"
            for loop in loops:
                tag = f", {loop}" if args.loop == "both" else ""
                runs[f"{n} {mode}{tag}"] = run_async(
                    measure(n, args.moves, search_s, procs, lazy, loop=loop), loop
                )
                if args.gateways:
                    runs[f"{n} {mode}, {args.gateways} gw{tag}"] = run_async(
                        measure(n, args.moves, search_s, procs, lazy, args.gateways, loop), loop
                    )
    out: dict[str, Any] = {"machine": f"{platform.machine()} {os.cpu_count()} cores", "runs": {}}
    print(
        f"{platform.machine()}, {os.cpu_count()} cores, load average {load:.2f} at the start; "
        f"clients in {procs} process(es) (at least one per gateway) on the same machine"
    )
    print(
        f"latency over {args.moves} moves, engine excluded (instant evaluator, "
        f"simulated search {args.search_ms:g} ms subtracted), ms, p50 / p99"
    )
    width = 24
    print(f"{'':<20}" + "".join(f"{name:>{width}}" for name in runs))
    for key in PER_MOVE:
        cells = []
        for name, (run, _) in runs.items():
            if key not in run or ("lazy" in name and key.startswith("read")):
                cells.append(f"{'-':>{width}}")
                continue
            p50, p99 = pct(run[key], 50), pct(run[key], 99)
            out["runs"].setdefault(key, {})[name] = [p50, p99]
            cells.append(f"{p50:>{width - 9}.2f} / {p99:>6.2f}")
        print(f"{key:<20}" + "".join(cells))
    print(
        "per update (CPU ms, all of the run's updates), per connection (RSS, idle) "
        "and message sizes at the last move"
    )
    for key in TOTALS:
        cells = []
        for name, (_, totals) in runs.items():
            if key not in totals:
                cells.append(f"{'-':>{width}}")
                continue
            value = totals[key]
            out["runs"].setdefault(key, {})[name] = value
            text = (
                f"{value:.3f}"
                if "CPU" in key
                else f"{value:.0f}"
                if "bytes" in key
                else f"{value:.1f}"
            )
            cells.append(f"{text:>{width}}")
        print(f"{key:<20}" + "".join(cells))

    one = runs["1 client"][1]["CPU/update service"]
    for name, (_, totals) in runs.items():
        if "bare broadcast" not in totals or " gw" in name:
            continue
        n = int(name.split()[0])
        per_viewer = (totals["CPU/update service"] - one) / n * 1000
        bare_each = totals["bare broadcast"] / n * 1000
        print(
            f"{name}: service CPU per viewer-update {per_viewer:.1f} us; a bare broadcast() of "
            f"the same frame to the same clients {bare_each:.1f} us;"
            f" ratio {per_viewer / bare_each:.2f}"
        )

    def ratio(what: str, new: str, base: str) -> None:
        b, f = runs[base][0]["delivered last"], runs[new][0]["delivered last"]
        print(
            f"{what}, delivered last: p50 {pct(f, 50) / pct(b, 50):.2f}x,"
            f" p99 {pct(f, 99) / pct(b, 99):.2f}x"
        )

    for n in args.clients:
        for mode in modes:
            for loop in loops:
                tag = f", {loop}" if args.loop == "both" else ""
                if args.gateways:
                    ratio(
                        f"{n} {mode}{tag}: {args.gateways} gateways / embedded",
                        f"{n} {mode}, {args.gateways} gw{tag}",
                        f"{n} {mode}{tag}",
                    )
            if args.loop == "both":
                ratio(
                    f"{n} {mode}: uvloop / asyncio, embedded",
                    f"{n} {mode}, uvloop",
                    f"{n} {mode}, asyncio",
                )
                if args.gateways:
                    gw = f"{n} {mode}, {args.gateways} gw"
                    ratio(
                        f"{n} {mode}: uvloop / asyncio, {args.gateways} gateways",
                        f"{gw}, uvloop",
                        f"{gw}, asyncio",
                    )
    if args.json:
        json.dump(out, sys.stdout)
        print()
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        raise SystemExit(main())
