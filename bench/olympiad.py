"""Olympiad round: 2,000 boards from 250 PGN-over-HTTP feeds, 200 viewers, on one service.

Five processes, as in production (all on this machine's cores):

* the **service**, ``livegain serve`` with a generated configuration: one
  ``pgn-http`` feed per source polled every 2 s, the local engine pool at
  depth 10 (``[engine] depth = 10``, real Stockfish), its own SQLite store;
* the **feeds**: one GET server (``MiniHttpServer``, as ``livegain replay``)
  answering ``/f{n}.pgn`` for each of the ``--feeds`` sources, each a
  multi-game PGN of its ``--boards / --feeds`` boards (ETag, 304). Games are
  random legal games (python-chess, seeded). Every board plays one move
  every 60 s on average (gaps drawn uniformly in 5..115 s); a move's
  *arrival* is when the server first serves a body that holds it;
* the **viewers**: ``--viewers`` WebSocket clients (``websockets``), each
  subscribed to every board (``{"type":"subscribe","boards":"*"}``) and
  sending the protocol's ``ping`` every 2 s (round trip to its ``pong``).
  ``--measuring`` of them parse every message and note when the update that
  carries a move's evaluation arrives; the others only read;
* a **light client process**: 2 more viewers of every board that read
  without parsing and ping every 0.25 s, so that a round trip is the
  service's and the kernel's, not that of a client process busy with 200
  viewers (the first process is at 20-30 % of a core during play);
* this process: asks for ``/healthz`` every 0.5 s and reads the service's
  RSS and CPU (and its engine processes' CPU) from /proc.

With ``--teams N`` the first boards are the Olympiad's two sections, "Chess
Olympiad 2026 Open" and "Chess Olympiad 2026 Women", each a team Swiss of
``N`` teams of four (``WhiteTeam``/``BlackTeam``, ``Board``; round 1, the top
half against the bottom half, colours alternating by board), configured as
``[[events]]`` ``format = "swiss"``, ``rounds = --rounds`` (11): the service
computes each section's team odds (every round left simulated, 10,000
simulations) in its standings child process while the round is played. The
other boards stay individual games of "Chess Olympiad 2026" (standings only).

Phases: start-up (every board created, the start positions evaluated),
viewers connect, a 10 s baseline with the boards and viewers but no moves,
then ``--seconds`` of play; moves stop at the end and the bench waits up to
``--drain`` s for the last evaluations. It prints the figures; it asserts
nothing.

    .venv/bin/python bench/olympiad.py [--seconds 600] [--boards 2000] [--feeds 250]
        [--viewers 200] [--measuring 10] [--depth 10] [--engine-workers 2]
        [--teams 190 --rounds 11]
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import contextlib
import hashlib
import http.client
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

PING_EVERY = 2.0
PROBE_VIEWERS = 2
"""Viewers of the light client process (they read every board, parse nothing)."""
PROBE_PING_EVERY = 0.25
HEALTH_EVERY = 0.5
MOVE_GAP = (5.0, 115.0)  # seconds between a board's moves: uniform, mean 60
FIRST_MOVE = (0.0, 60.0)


# --- figures ------------------------------------------------------------------------------


def figures(values: list[float]) -> dict[str, float]:
    if not values:
        nan = float("nan")
        return {"n": 0, "p50": nan, "p99": nan, "max": nan}
    s = sorted(values)
    return {
        "n": len(s),
        "p50": statistics.median(s),
        "p99": s[min(len(s) - 1, int(len(s) * 0.99))],
        "max": s[-1],
    }


def row(name: str, f: dict[str, float], unit: str = "ms", scale: float = 1000.0) -> str:
    return (
        f"{name:<34}{f['n']:>8}{f['p50'] * scale:>10.1f}{f['p99'] * scale:>10.1f}"
        f"{f['max'] * scale:>10.1f}  {unit}"
    )


async def until(cond: Callable[[], bool]) -> None:
    """Wait until ``cond()`` (a file another process writes: no event to wait on)."""
    while not cond():  # noqa: ASYNC110
        await asyncio.sleep(0.05)


# --- games ---------------------------------------------------------------------------------


def random_game(rng: random.Random, plies: int) -> list[str]:
    """A random legal game of at most ``plies`` plies, as SAN."""
    import chess

    board = chess.Board()
    out: list[str] = []
    while len(out) < plies:
        moves = list(board.legal_moves)
        if not moves or board.is_insufficient_material():
            break
        mv = rng.choice(moves)
        out.append(board.san(mv))
        board.push(mv)
    return out


SECTIONS = ("Open", "Women")
TEAM_BOARDS = 4


def board_tags(g: int, teams: int) -> str:
    """The PGN tags of board ``g`` (0-based): a board of a section's team match
    when ``g`` is among the sections' boards (``teams`` teams each), else an
    individual game."""
    per_section = teams // 2 * TEAM_BOARDS
    section, k = divmod(g, per_section) if per_section else (len(SECTIONS), g)
    if section >= len(SECTIONS):
        return (
            f'[Event "Chess Olympiad 2026"]\n[Site "Bench"]\n[Round "1"]\n'
            f'[Board "{g + 1}"]\n[White "White {g}"]\n[Black "Black {g}"]\n'
            f'[WhiteElo "{2200 + g % 500}"]\n[BlackElo "{2250 + g % 450}"]\n'
        )
    name = SECTIONS[section]
    match, board = divmod(k, TEAM_BOARDS)
    # round 1 of a Swiss: team i (by rating) against team i + teams/2
    strong, weak = match, match + teams // 2
    a, b = (strong, weak) if match % 2 == 0 else (weak, strong)
    white, black = (a, b) if board % 2 == 0 else (b, a)  # team a White on boards 1, 3

    def elo(team: int) -> int:
        return 2750 - 1000 * team // teams - 25 * board

    return (
        f'[Event "Chess Olympiad 2026 {name}"]\n[Site "Bench"]\n[Round "1"]\n'
        # the last word of a name is the board's index, as the viewers read it
        f'[Board "{k + 1}"]\n[White "{name} T{white:03d}-{board + 1} {g}"]\n'
        f'[Black "{name} T{black:03d}-{board + 1} {g}"]\n'
        f'[WhiteTeam "{name} T{white:03d}"]\n[BlackTeam "{name} T{black:03d}"]\n'
        f'[WhiteElo "{elo(white)}"]\n[BlackElo "{elo(black)}"]\n'
    )


def movetext(sans: list[str]) -> str:
    parts = []
    for i, san in enumerate(sans):
        if i % 2 == 0:
            parts.append(f"{i // 2 + 1}.")
        parts.append(san)
    parts.append("*")
    return " ".join(parts)


# --- the feeds process ---------------------------------------------------------------------


def run_feeds(args: argparse.Namespace) -> None:
    from livegain.relay.http import MiniHttpServer, Reply

    work = Path(args.work)
    rng = random.Random(args.seed)
    n, nf = args.boards, args.feeds
    per = [n // nf + (1 if i < n % nf else 0) for i in range(nf)]
    first: list[int] = []
    k = 0
    for c in per:
        first.append(k)
        k += c
    # plies a board can play in the run: enough for every drawn move
    max_plies = int((args.seconds + FIRST_MOVE[1]) / MOVE_GAP[0]) + 2
    games = [random_game(rng, min(max_plies, 200)) for _ in range(n)]
    offsets: list[list[float]] = []  # seconds after the start of play of each ply
    for g in games:
        t = rng.uniform(*FIRST_MOVE)
        ts = []
        for _ in g:
            ts.append(t)
            t += rng.uniform(*MOVE_GAP)
        offsets.append(ts)
    start: list[float | None] = [None]
    stop_at: list[float | None] = [None]
    cache: dict[int, tuple[tuple[int, ...], bytes, str, float]] = {}
    served: dict[int, float] = {}  # board * 1000 + ply -> first served (time.time())

    def shown(g: int, now: float) -> int:
        t0 = start[0]
        if t0 is None:
            return 0
        until = now if stop_at[0] is None else min(now, stop_at[0])
        return bisect.bisect_right(offsets[g], until - t0)

    def body(f: int, key: tuple[int, ...]) -> bytes:
        out = []
        for j, plies in enumerate(key):
            g = first[f] + j
            out.append(
                f'{board_tags(g, args.teams)}[TimeControl "5400+30"]\n[Result "*"]\n\n'
                f"{movetext(games[g][:plies])}\n"
            )
        return "\n".join(out).encode()

    def handle(path: str, headers: Any) -> Reply:
        path = path.split("?", 1)[0]
        if not (path.startswith("/f") and path.endswith(".pgn")):
            return Reply(404, b"not found\n")
        try:
            f = int(path[2:-4])
        except ValueError:
            return Reply(404, b"not found\n")
        if not 0 <= f < nf:
            return Reply(404, b"not found\n")
        now = time.time()
        key = tuple(shown(first[f] + j, now) for j in range(per[f]))
        hit = cache.get(f)
        if hit is None or hit[0] != key:
            data = body(f, key)
            etag = '"' + hashlib.sha256(data).hexdigest()[:20] + '"'
            hit = (key, data, etag, now)
            cache[f] = hit
        _, data, etag, _ = hit
        inm = headers.get("if-none-match")
        common = {"ETag": etag, "Cache-Control": "no-cache"}
        if inm is not None and etag in [t.strip() for t in inm.split(",")]:
            return Reply(304, headers=common)
        for j, plies in enumerate(key):
            g = first[f] + j
            for p in range(plies, 0, -1):
                if g * 1000 + p in served:
                    break
                served[g * 1000 + p] = now
        return Reply(200, data, "application/x-chess-pgn", common)

    async def main() -> None:
        server = MiniHttpServer(handle)
        await server.start()
        (work / "feeds.port").write_text(str(server.port))
        await until(lambda: (work / "go").exists())
        start[0] = time.time()
        (work / "go.at").write_text(repr(start[0]))
        await until(lambda: (work / "stop").exists())
        stop_at[0] = time.time()
        await until(lambda: (work / "done").exists())
        out = {
            "start": start[0],
            "stop": stop_at[0],
            "requests": server.requests,
            "served": [[k // 1000, k % 1000, t] for k, t in served.items()],
        }
        tmp = work / "feeds.json.tmp"
        tmp.write_text(json.dumps(out))
        tmp.replace(work / "feeds.json")
        await server.stop()

    asyncio.run(main())


# --- the viewers process -------------------------------------------------------------------


def run_viewers(args: argparse.Namespace) -> None:
    import websockets
    from websockets.asyncio.client import connect

    work = Path(args.work)
    url = f"ws://127.0.0.1:{args.port}/ws"
    rtts: list[tuple[float, float]] = []  # (sent at, round trip)
    evals: list[tuple[int, int, float]] = []  # (board, ply, received)
    counts = {"messages": 0, "snapshots": 0, "updates": 0, "closed": 0, "errors": 0}
    ready = [0]

    async def viewer(i: int, measuring: bool) -> None:
        boards: dict[str, int] = {}
        seen: set[int] = set()
        pending: list[float] = []
        try:
            async with connect(url, max_size=None, compression=None, open_timeout=60) as ws:
                await ws.send('{"type":"subscribe","boards":"*"}')
                ready[0] += 1

                async def pinger() -> None:
                    await asyncio.sleep(random.uniform(0, args.ping_every))
                    while True:
                        if not pending:
                            pending.append(time.time())
                            await ws.send('{"type":"ping"}')
                        await asyncio.sleep(args.ping_every)

                task = asyncio.create_task(pinger())
                try:
                    async for raw in ws:
                        now = time.time()
                        counts["messages"] += 1
                        msg = raw if isinstance(raw, str) else raw.decode()
                        if msg.startswith('{"type":"pong"'):
                            if pending:
                                t = pending.pop()
                                rtts.append((t, now - t))
                            continue
                        if not measuring:
                            continue
                        m = json.loads(msg)
                        kind = m.get("type")
                        if kind == "snapshot":
                            counts["snapshots"] += 1
                            st = m["state"]
                            g = int(st["white"]["name"].split()[-1])
                            boards[st["board_id"]] = g
                            for mv in st.get("moves") or ():
                                if mv.get("eval") is not None and g * 1000 + mv["ply"] not in seen:
                                    seen.add(g * 1000 + mv["ply"])
                                    evals.append((g, mv["ply"], now))
                        elif kind == "update":
                            counts["updates"] += 1
                            ply = m.get("ply")
                            g2 = boards.get(m["board_id"])
                            if ply and ply.get("eval") is not None and g2 is not None:
                                key = g2 * 1000 + ply["ply"]
                                if key not in seen:
                                    seen.add(key)
                                    evals.append((g2, ply["ply"], now))
                finally:
                    task.cancel()
        except websockets.ConnectionClosed:
            counts["closed"] += 1
        except (OSError, TimeoutError, websockets.InvalidHandshake):
            counts["errors"] += 1

    async def main() -> None:
        tasks = []
        for i in range(args.viewers):
            tasks.append(asyncio.create_task(viewer(i, i < args.measuring)))
            await asyncio.sleep(args.connect_gap)
        await until(lambda: ready[0] >= args.viewers or (work / "done").exists())
        (work / f"{args.name}.ready").write_text(str(ready[0]))
        await until(lambda: (work / "done").exists())
        out = {"rtts": rtts, "evals": evals, "counts": counts, "connected": ready[0]}
        tmp = work / f"{args.name}.json.tmp"
        tmp.write_text(json.dumps(out))
        tmp.replace(work / f"{args.name}.json")
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(main())


# --- this process: the probe and the figures -----------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                if int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(d.name))
    return out


def descendants(pid: int) -> tuple[list[int], list[int]]:
    """The service's engine processes, and its other descendants (the
    standings' child process and the process that forks it)."""
    engines: list[int] = []
    helpers: list[int] = []
    todo = children(pid)
    while todo:
        p = todo.pop()
        todo.extend(children(p))
        comm = ""
        with contextlib.suppress(OSError):
            comm = Path(f"/proc/{p}/comm").read_text().strip()
        (engines if "stockfish" in comm else helpers).append(p)
    return engines, helpers


class Probe(threading.Thread):
    """``GET /healthz`` every 0.5 s; keeps (time, latency, bytes, document)."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.samples: list[tuple[float, float, int]] = []
        self.last: dict[str, Any] = {}
        self.stop = threading.Event()

    def get(self) -> tuple[float, bytes]:
        t0 = time.perf_counter()
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        c.request("GET", "/healthz")
        body = c.getresponse().read()
        c.close()
        return time.perf_counter() - t0, body

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                lat, body = self.get()
                self.samples.append((time.time(), lat, len(body)))
                self.last = json.loads(body)
            except (OSError, ValueError, http.client.HTTPException):
                pass
            self.stop.wait(HEALTH_EVERY)


def write_config(work: Path, args: argparse.Namespace, feeds_port: int, port: int) -> Path:
    lines = [
        f'data_dir = "{work / "data"}"',
        "[server]",
        'host = "127.0.0.1"',
        f"port = {port}",
        "max_connections_per_ip = 0",
        "[engine]",
        f"depth = {args.depth}",
        f"workers = {args.engine_workers}",
        "[limits]",
        f"max_boards = {max(args.boards, 1000)}",
        "[log]",
        'level = "warning"',
        "json = false",
    ]
    for f in range(args.feeds):
        lines += [
            "[[feeds]]",
            'type = "pgn-http"',
            f'name = "f{f:03d}"',
            f'url = "http://127.0.0.1:{feeds_port}/f{f}.pgn"',
            "interval = 2.0",
        ]
    if args.teams:  # the sections' team odds: a team Swiss to its last round
        for name in SECTIONS:
            lines += [
                "[[events]]",
                f'name = "Chess Olympiad 2026 {name}"',
                'format = "swiss"',
                f"rounds = {args.rounds}",
            ]
    path = work / "livegain.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def wait_file(path: Path, timeout: float, proc: subprocess.Popen[bytes] | None = None) -> None:
    end = time.time() + timeout
    while not path.exists():
        if proc is not None and proc.poll() is not None:
            raise SystemExit(f"{proc.args!r} exited with {proc.returncode}")
        if time.time() > end:
            raise SystemExit(f"timed out waiting for {path.name}")
        time.sleep(0.1)


def orchestrate(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="livegain-olympiad-"))
    me = [sys.executable, str(Path(__file__).resolve())]
    common = ["--work", str(work), "--boards", str(args.boards), "--feeds", str(args.feeds)]
    common += ["--seconds", str(args.seconds), "--seed", str(args.seed)]
    common += ["--teams", str(args.teams)]
    procs: list[subprocess.Popen[bytes]] = []
    log = open(work / "service.log", "wb")  # noqa: SIM115 (closed below)
    try:
        t_gen = time.time()
        feeds = subprocess.Popen([*me, "--role", "feeds", *common])
        procs.append(feeds)
        wait_file(work / "feeds.port", 600, feeds)
        print(f"games generated and feeds serving in {time.time() - t_gen:.1f} s", flush=True)
        port = free_port()
        cfg = write_config(work, args, int((work / "feeds.port").read_text()), port)
        cmd = [str(Path(sys.executable).parent / "livegain"), "serve", "--config", str(cfg)]
        if args.profile:  # the service's own thread under cProfile, saved when it stops
            cmd = [sys.executable, "-m", "cProfile", "-o", args.profile, "-m", "livegain.cli"]
            cmd += ["serve", "--config", str(cfg)]
        t_start = time.time()
        env = dict(os.environ)
        if args.asyncio_debug:  # callbacks holding the loop > 100 ms logged, with what they were
            env["PYTHONASYNCIODEBUG"] = "1"
        service = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        procs.append(service)
        probe = Probe(port)
        while True:
            if service.poll() is not None:
                raise SystemExit(f"service exited with {service.returncode}: see {work}")
            with contextlib.suppress(OSError, http.client.HTTPException):
                probe.get()
                break
            time.sleep(0.2)
        probe.start()
        while True:  # every board created and its start position evaluated
            h = probe.last
            bs = h.get("board_summary") or {}
            if (
                bs.get("boards", 0) >= args.boards
                and h.get("service", {}).get("pending", 1) == 0
                and h.get("engine_queue", 1) == 0
            ):
                break
            if service.poll() is not None:
                raise SystemExit(f"service exited with {service.returncode}: see {work}")
            time.sleep(0.5)
        t_up = time.time()
        print(f"start-up: {bs['boards']} boards created and evaluated in {t_up - t_start:.1f} s")
        viewers = subprocess.Popen(
            [
                *me,
                "--role",
                "viewers",
                *common,
                "--port",
                str(port),
                "--viewers",
                str(args.viewers),
                "--measuring",
                str(args.measuring),
                "--connect-gap",
                str(args.connect_gap),
            ]
        )
        procs.append(viewers)
        wait_file(work / "viewers.ready", 600, viewers)
        # A second, light client process: a few more viewers of every board
        # that only read (no parsing), pinging often; their round trips are
        # the service's, not those of a client process busy with 200 viewers.
        pinger = subprocess.Popen(
            [
                *me,
                "--role",
                "viewers",
                *common,
                "--port",
                str(port),
                "--viewers",
                str(PROBE_VIEWERS),
                "--measuring",
                "0",
                "--name",
                "probe",
                "--ping-every",
                str(PROBE_PING_EVERY),
            ]
        )
        procs.append(pinger)
        wait_file(work / "probe.ready", 600, pinger)
        print(
            f"viewers: {(work / 'viewers.ready').read_text()} connected and subscribed "
            f"in {time.time() - t_up:.1f} s",
            flush=True,
        )
        time.sleep(5)  # the initial snapshots drain
        base_start = time.time()
        time.sleep(args.baseline)
        engines, helpers = descendants(service.pid)
        cpu0 = cpu_seconds(service.pid)
        eng0 = sum(cpu_seconds(p) for p in engines)
        help0 = sum(cpu_seconds(p) for p in helpers)
        feed0, view0 = cpu_seconds(feeds.pid), cpu_seconds(viewers.pid)
        rss: list[float] = []
        (work / "go").touch()
        wait_file(work / "go.at", 30)
        t0 = float((work / "go.at").read_text())
        print(f"play: {args.seconds:g} s ...", flush=True)
        while time.time() < t0 + args.seconds:
            rss.append(rss_mb(service.pid))
            time.sleep(min(5.0, max(0.0, t0 + args.seconds - time.time())))
        t1 = time.time()
        cpu1 = cpu_seconds(service.pid)
        eng1 = sum(cpu_seconds(p) for p in engines)
        help1 = sum(cpu_seconds(p) for p in helpers)
        feed1, view1 = cpu_seconds(feeds.pid), cpu_seconds(viewers.pid)
        rss.append(rss_mb(service.pid))
        (work / "stop").touch()
        end = time.time() + args.drain
        while time.time() < end:  # the last moves' evaluations
            h = probe.last
            if h.get("service", {}).get("pending", 1) == 0 and h.get("engine_queue", 1) == 0:
                time.sleep(3)  # a poll's worth for the last served moves
                h = probe.last
                if h.get("service", {}).get("pending", 1) == 0 and not h.get("engine_queue"):
                    break
            time.sleep(0.5)
        t_drained = time.time()
        probe.stop.set()
        probe.join()
        (work / "done").touch()
        wait_file(work / "feeds.json", 120, feeds)
        wait_file(work / "viewers.json", 120, viewers)
        wait_file(work / "probe.json", 120, pinger)
        pdata = json.loads((work / "probe.json").read_text())
        fdata = json.loads((work / "feeds.json").read_text())
        vdata = json.loads((work / "viewers.json").read_text())
        last = probe.last
    finally:
        (work / "done").touch()
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
        for p in reversed(procs):
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(30)
            if p.poll() is None:
                p.kill()
        log.close()

    # --- figures
    base = [lat for ts, lat, _ in probe.samples if base_start <= ts < t0]
    during = [lat for ts, lat, _ in probe.samples if t0 <= ts < t1]
    sizes = [b for ts, _, b in probe.samples if t0 <= ts < t1]
    rtt_base = [r for ts, r in vdata["rtts"] if base_start <= ts < t0]
    rtt = [r for ts, r in vdata["rtts"] if t0 <= ts < t1]
    light_base = [r for ts, r in pdata["rtts"] if base_start <= ts < t0]
    light = [r for ts, r in pdata["rtts"] if t0 <= ts < t1]
    served = {(g, p): t for g, p, t in fdata["served"]}
    delays = []
    got: set[tuple[int, int]] = set()
    for g, p, t in vdata["evals"]:
        s = served.get((g, p))
        if s is not None and t0 <= s < t1:
            delays.append(t - s)
            got.add((g, p))
    moved = [k for k, s in served.items() if t0 <= s < t1]
    missing = sum(1 for k in moved if k not in got)
    bs = last.get("board_summary") or {}
    plies, evaluated = bs.get("plies", 0), bs.get("evaluated", 0)
    wall = t1 - t0
    n_cores = os.cpu_count() or 1

    print()
    print(
        f"Olympiad round: {args.boards} boards, {args.feeds} pgn-http feeds (2 s), "
        f"{args.viewers} viewers ({args.measuring} measuring), depth {args.depth}, "
        f"{args.engine_workers} engine processes, {wall:.0f} s of play, {n_cores} cores"
    )
    if args.teams:
        print(
            f"team odds: {len(SECTIONS)} sections ({', '.join(SECTIONS)}) of {args.teams} teams "
            f"of {TEAM_BOARDS} ({len(SECTIONS) * args.teams * TEAM_BOARDS // 2} boards), "
            f"team Swiss, rounds = {args.rounds}, round 1 of {args.rounds}"
        )
    print(
        f"moves served in play: {len(moved)} ({len(moved) / wall:.1f}/s); "
        f"feed requests: {fdata['requests']}; at the end: {plies} plies, "
        f"{evaluated} evaluated; drained {t_drained - t1:.1f} s after play"
    )
    print(f"{'':<34}{'n':>8}{'p50':>10}{'p99':>10}{'max':>10}")
    fb, fd = figures(base), figures(during)
    print(row("/healthz, baseline (no moves)", fb))
    print(row("/healthz, during play", fd))
    rb, rd = figures(rtt_base), figures(rtt)
    print(row("WebSocket ping, baseline", rb))
    print(row("WebSocket ping, during play", rd))
    print(row("  light client process, baseline", figures(light_base)))
    print(row("  light client process, during", figures(light)))
    md = figures(delays)
    print(row("move arrival -> evaluated update", md, "s", 1.0))
    if fb["n"] and fd["n"]:
        print(
            f"/healthz during/baseline: p50 x{fd['p50'] / fb['p50']:.1f}, "
            f"p99 x{fd['p99'] / fb['p99']:.1f}; body {statistics.median(sizes) / 1024:.0f} KiB"
        )
    if rb["n"] and rd["n"]:
        print(
            f"ping during/baseline: p50 x{rd['p50'] / rb['p50']:.1f}, "
            f"p99 x{rd['p99'] / rb['p99']:.1f}"
        )
    print(
        f"evaluations not seen by the measuring viewers by the end: {missing} of {len(moved)} "
        f"(per viewer, {len(delays)} receptions)"
    )
    print(
        f"service: RSS {rss[0]:.0f} -> {rss[-1]:.0f} MB (max {max(rss):.0f}); CPU "
        f"{100 * (cpu1 - cpu0) / wall:.0f}% of one core; engines "
        f"{100 * (eng1 - eng0) / wall:.0f}% ({len(engines)} processes); standings' "
        f"process {100 * (help1 - help0) / wall:.0f}%; feeds "
        f"{100 * (feed1 - feed0) / wall:.0f}%; viewers {100 * (view1 - view0) / wall:.0f}%"
    )
    print(f"viewers: {vdata['counts']}")
    st = last.get("standings") or {}
    print(
        f"standings: {st.get('computations')} computations ({st.get('failures')} failed), "
        f"{st.get('published')} published; the last one's seconds per event: "
        f"{st.get('last_seconds')}"
    )
    lag = last.get("event_loop_lag") or {}
    kept = lag.get("last_stalls", [])
    stalls = [(s["seconds"], s["cpu_s"], s["waiting_s"], s["gc"]) for s in kept]
    print(
        f"service's loop, stalls over {lag.get('stall_s')} s: {lag.get('stalls')}; "
        f"the last (seconds, cpu_s, waiting_s for a core, gc): {stalls}"
    )
    slow = [(round(ts - t0, 1), round(lat * 1000)) for ts, lat, _ in probe.samples if lat > 0.2]
    (work / "samples.json").write_text(
        json.dumps({"t0": t0, "healthz": probe.samples, "rtts": vdata["rtts"]})
    )
    print(f"/healthz over 200 ms (s into play, ms): {slow[:20]}")
    print(f"work dir (service log, config, samples.json): {work}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--seconds", type=float, default=600.0, help="seconds of play")
    ap.add_argument("--boards", type=int, default=2000)
    ap.add_argument("--feeds", type=int, default=250)
    ap.add_argument("--viewers", type=int, default=200)
    ap.add_argument("--measuring", type=int, default=10, help="viewers that parse every message")
    ap.add_argument("--depth", type=int, default=10)
    ap.add_argument("--engine-workers", type=int, default=2)
    ap.add_argument("--baseline", type=float, default=10.0, help="seconds without moves")
    ap.add_argument("--drain", type=float, default=60.0, help="seconds allowed after play")
    ap.add_argument("--connect-gap", type=float, default=0.05, help="seconds between connects")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument(
        "--teams",
        type=int,
        default=0,
        help="teams per Olympiad section (two sections, team Swiss with odds); 0: none",
    )
    ap.add_argument("--rounds", type=int, default=11, help="the sections' rounds in all")
    ap.add_argument(
        "--profile", metavar="PATH", help="run the service under cProfile, stats to PATH"
    )
    ap.add_argument(
        "--asyncio-debug",
        action="store_true",
        help="asyncio debug mode in the service: loop stalls over 100 ms in its log",
    )
    ap.add_argument("--role", choices=("bench", "feeds", "viewers"), default="bench")
    ap.add_argument(
        "--name", default="viewers", help=argparse.SUPPRESS
    )  # a viewers process's files
    ap.add_argument("--ping-every", type=float, default=PING_EVERY, help=argparse.SUPPRESS)
    ap.add_argument("--work", help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.teams and (
        args.teams % 2 or len(SECTIONS) * args.teams * TEAM_BOARDS // 2 > args.boards
    ):
        ap.error(f"--teams {args.teams}: an even number whose sections fit in --boards")
    if args.role == "feeds":
        run_feeds(args)
    elif args.role == "viewers":
        run_viewers(args)
    else:
        orchestrate(args)


if __name__ == "__main__":
    main()
