"""A whole event under chaos: `livegain watch` follows a multi-round event while
its service, the broker, a gateway and an engine worker are SIGKILLed and
started again at random.

The event (default: the project's demo Open, five rounds, 30 games) is served
as a Lichess broadcast by :class:`~livegain.relay.event.EventRelay`, one
move revealed every ``--move-every`` seconds, round after round. The service
is `livegain watch` with a broadcast delay (``--delay``), a store kept on disk,
its local pool and one `livegain worker` through a Mosquitto of the bench's
own (engine mode "both"), publishing to that broker, where a `livegain
gateway` reads it. Every 30-60 s (seeded) one of the four is SIGKILLed and
started again a moment later. Two viewers (WebSocket clients, one on the
service, one on the gateway) reconnect whenever they are cut off and record
every move they are shown, and when.

Reported:

* **plies lost**: moves of the event that the service does not show, with an
  evaluation, at the end (must be 0);
* **plies evaluated twice**: engine searches over all the service's lives
  (``livegain_engine_calls_total``, read every second, summed over lives)
  less the distinct positions of the event; the reads stop a second before a
  kill at worst, so this is a lower bound of the searches made again;
* **shown early**: moves a viewer was shown before ``--delay`` seconds after
  the relay revealed them (must be 0);
* **longest without an update**: per viewer, the longest time between two
  new moves shown while a round was being played (disconnections included);
* **final standings** against the crosstable computed from the event's PGN
  (must be equal: points, games and tie-breaks).

    .venv/bin/python bench/chaos_event.py [--seed 7] [--move-every 0.15] [--delay 20]

Figures and the command are in docs/benchmarks.md, "A whole event under chaos".
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import chess
import chess.pgn
from websockets.asyncio.client import connect

from livegain.core.snapshot import PlayerInfo, player_key
from livegain.core.standings import Result, Standings
from livegain.relay.event import EventRelay

REPO = Path(__file__).resolve().parent.parent
DEMO_EVENT = REPO / "livegain" / "data" / "demo-event.pgn"
MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
STOCKFISH = shutil.which("stockfish") or "/usr/games/stockfish"
PREFIX = "livegain/out"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_open(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
        return True
    return False


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read())


class Part:
    """One process of the chaos: started, SIGKILLed, started again (same port)."""

    def __init__(
        self, name: str, argv: list[str], log: Path, port: int | None, env: dict[str, str]
    ) -> None:
        self.name = name
        self.argv = argv
        self.log = log
        self.port = port
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None
        self.kills = 0
        self.lives = 0

    def start(self, wait: float = 60.0) -> None:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                self.argv, stdout=out, stderr=subprocess.STDOUT, env=self.env, cwd=REPO
            )
        self.lives += 1
        if self.port is None:
            return
        end = time.monotonic() + wait
        while not port_open(self.port):
            if self.proc.poll() is not None or time.monotonic() > end:
                raise RuntimeError(f"{self.name} did not start: see {self.log}")
            time.sleep(0.1)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(30)
            self.kills += 1

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()


@dataclass
class Viewer:
    """A WebSocket client that reconnects and records each move shown, and when."""

    name: str
    port: int
    reveals: dict[tuple[str, str], list[float]]
    delay: float
    shown: dict[tuple[str, str], int] = field(default_factory=dict)
    new_move_times: list[float] = field(default_factory=list)
    early: list[str] = field(default_factory=list)
    connects: int = 0
    _names: dict[str, tuple[str, str]] = field(default_factory=dict)

    async def run(self) -> None:
        while True:
            try:
                async with connect(f"ws://127.0.0.1:{self.port}/ws", max_size=None) as ws:
                    self.connects += 1
                    await ws.send(json.dumps({"type": "subscribe", "boards": "*"}))
                    async for raw in ws:
                        self._take(json.loads(raw))
            except (TimeoutError, OSError, Exception):  # cut off: again
                await asyncio.sleep(0.5)

    def _take(self, msg: dict[str, Any]) -> None:
        now = time.time()
        if msg.get("type") == "snapshot":
            st = msg["state"]
            game = (st["white"]["name"], st["black"]["name"])
            self._names[st["board_id"]] = game
            self._saw(game, len(st["moves"]), now)
        elif msg.get("type") == "update":
            game_or = self._names.get(msg["board_id"])
            ply = msg.get("ply")
            if game_or is not None and ply is not None:
                self._saw(game_or, int(ply["ply"]), now)

    def _saw(self, game: tuple[str, str], plies: int, now: float) -> None:
        before = self.shown.get(game, 0)
        if plies <= before:
            return
        self.shown[game] = plies
        self.new_move_times.append(now)
        times = self.reveals.get(game, [])
        for p in range(before + 1, plies + 1):
            if p > len(times):
                self.early.append(f"{game} ply {p}: shown, never revealed")
            elif now < times[p - 1] + self.delay - 0.05:
                self.early.append(f"{game} ply {p}: {times[p - 1] + self.delay - now:.1f} s early")


def crosstable(text: str) -> tuple[list[Result], int, dict[tuple[str, str], int]]:
    """The event's results (keys as the service keys players), its distinct
    positions, and each game's plies."""
    results: list[Result] = []
    fens: set[str] = set()
    plies: dict[tuple[str, str], int] = {}
    stream = io.StringIO(text)
    while (game := chess.pgn.read_game(stream)) is not None:
        h = game.headers
        w = PlayerInfo(h["White"], fide_id=h.get("WhiteFideId"))
        b = PlayerInfo(h["Black"], fide_id=h.get("BlackFideId"))
        rnd = int(h["Round"].split(".")[0])
        results.append(Result.game(player_key(w), player_key(b), h["Result"], round=rnd))
        board = game.board()
        fens.add(board.epd())
        n = 0
        for move in game.mainline_moves():
            board.push(move)
            fens.add(board.epd())
            n += 1
        plies[(h["White"], h["Black"])] = n
    return results, len(fens), plies


def metric(text: str, name: str) -> float | None:
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    return None


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--event", type=Path, default=DEMO_EVENT, help="a multi-round PGN")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--move-every", type=float, default=0.15, help="seconds between moves")
    ap.add_argument("--delay", type=int, default=20, help="the broadcast delay, seconds")
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--kill-every", type=float, nargs=2, default=(30.0, 60.0))
    ap.add_argument("--work", type=Path, default=None, help="keep logs here")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    work = args.work or Path(tempfile.mkdtemp(prefix="livegain-chaos-"))
    work.mkdir(parents=True, exist_ok=True)
    text = args.event.read_text(encoding="utf-8")
    results, positions, plies = crosstable(text)
    relay = EventRelay.from_pgn(text, info_format="Swiss")
    env = {**os.environ, "LIVEGAIN_LOG__LEVEL": "warning"}
    broker_port, service_port, gateway_port = free_port(), free_port(), free_port()
    broker_url = f"mqtt://127.0.0.1:{broker_port}"
    (work / "mosquitto.conf").write_text(
        f"listener {broker_port} 127.0.0.1\nallow_anonymous true\npersistence true\n"
        f"persistence_location {work}/\nautosave_interval 1\nset_tcp_nodelay true\n"
        "max_queued_messages 100000\n"
    )
    (work / "livegain.toml").write_text(
        f'[engine]\ndepth = {args.depth}\nworkers = 1\nmode = "both"\n'
        f'[engine.remote]\nurl = "{broker_url}"\n'
        f'[mqtt]\nenabled = true\nurl = "{broker_url}"\nprefix = "{PREFIX}"\n'
        '[log]\nlevel = "warning"\njson = false\n'
    )
    py = [sys.executable, "-m", "livegain.cli"]
    async with relay:
        broker = Part(
            "broker",
            [MOSQUITTO, "-c", str(work / "mosquitto.conf")],
            work / "broker.log",
            broker_port,
            env,
        )
        service = Part(
            "service",
            [
                *py,
                "watch",
                relay.tournament_url,
                "--lichess-url",
                relay.base_url,
                "--config",
                str(work / "livegain.toml"),
                "--data-dir",
                str(work / "data"),
                "--delay",
                str(args.delay),
                "--port",
                str(service_port),
                "--interval",
                "2",
                "--engine",
                STOCKFISH,
            ],
            work / "service.log",
            service_port,
            env,
        )
        gateway = Part(
            "gateway",
            [
                *py,
                "gateway",
                "--broker",
                broker_url,
                "--prefix",
                PREFIX,
                "--host",
                "127.0.0.1",
                "--port",
                str(gateway_port),
            ],
            work / "gateway.log",
            gateway_port,
            env,
        )
        worker = Part(
            "worker",
            [
                *py,
                "worker",
                "--broker",
                broker_url,
                "--workers",
                "1",
                "--depth",
                str(args.depth),
                "--engine",
                STOCKFISH,
                "--id",
                "chaos-worker",
            ],
            work / "worker.log",
            None,
            env,
        )
        parts = [broker, service, gateway, worker]
        reveals: dict[tuple[str, str], list[float]] = {}
        viewers = [
            Viewer("service", service_port, reveals, args.delay),
            Viewer("gateway", gateway_port, reveals, args.delay),
        ]
        calls_lives: list[float] = [0.0]
        playing: list[tuple[float, float]] = []
        t0 = time.time()
        for p in parts:
            await asyncio.to_thread(p.start)
        tasks = [asyncio.create_task(v.run()) for v in viewers]

        async def scrape() -> None:
            while True:
                with contextlib.suppress(Exception):
                    body = await asyncio.to_thread(
                        lambda: (
                            urllib.request.urlopen(
                                f"http://127.0.0.1:{service_port}/metrics", timeout=2
                            )
                            .read()
                            .decode()
                        )
                    )
                    value = metric(body, "livegain_engine_calls_total")
                    if value is not None:
                        calls_lives[-1] = value
                await asyncio.sleep(1.0)

        kills: list[str] = []
        bag: list[Part] = []
        done = asyncio.Event()

        async def chaos() -> None:
            while not done.is_set():
                await asyncio.sleep(rng.uniform(*args.kill_every))
                if done.is_set():
                    return
                if not bag:  # each part in turn, in a shuffled order each cycle
                    bag.extend(rng.sample(parts, len(parts)))
                victim = bag.pop()
                victim.kill()
                if victim is service:
                    calls_lives.append(0.0)
                kills.append(f"{time.time() - t0:6.1f} s {victim.name}")
                await asyncio.sleep(rng.uniform(0.5, 3.0))
                await asyncio.to_thread(victim.start)

        tasks += [asyncio.create_task(scrape()), asyncio.create_task(chaos())]
        for rnd in relay.rounds:
            relay.begin(rnd.number)
            start = time.time()
            for _, i, _ply in list(rnd.replay.timeline):
                await rnd.replay.advance(1)
                snap = rnd.replay.snapshot(i)
                reveals.setdefault((snap.white.name, snap.black.name), []).append(time.time())
                await asyncio.sleep(args.move_every)
            relay.finish(rnd.number)
            playing.append((start, time.time()))
            print(f"round {rnd.number} played ({time.time() - t0:.0f} s)", flush=True)
        done.set()
        # Every part up again, then until the service shows every move evaluated.
        for p in parts:
            if p.proc is None or p.proc.poll() is not None:
                await asyncio.to_thread(p.start)
        base = f"http://127.0.0.1:{service_port}/"
        deadline = time.monotonic() + 600
        lost = sum(plies.values())
        boards: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            await asyncio.sleep(2)
            try:
                boards = await asyncio.to_thread(get_json, base + "api/boards")
            except Exception:
                continue
            shown = {}
            for b in boards:
                state = await asyncio.to_thread(
                    get_json, base + "api/boards/" + urllib.parse.quote(b["board_id"], safe="")
                )
                good = sum(1 for m in state["moves"] if m["eval"] is not None)
                shown[(state["white"]["name"], state["black"]["name"])] = good
            lost = sum(max(0, n - shown.get(g, 0)) for g, n in plies.items())
            if lost == 0:
                break
        quoted = urllib.parse.quote(relay.name)
        msg: dict[str, Any] | None = None
        while time.monotonic() < deadline:
            with contextlib.suppress(Exception):
                msg = await asyncio.to_thread(get_json, f"{base}api/standings/{quoted}")
                if msg is not None and msg["finished"] == len(results) and msg["live"] == 0:
                    break
            await asyncio.sleep(2)
        await asyncio.sleep(args.delay + 5)  # what was held reaches the viewers
        for t in tasks:
            t.cancel()
        for p in reversed(parts):
            p.stop()
    expected = Standings.from_results(
        results, tiebreaks=tuple(msg["tiebreaks"]) if msg else ("BH-C1", "BH", "SB")
    )
    equal = (
        msg is not None
        and all(
            (r["points"], r["games"]) == (e.points, e.rounds)
            and all(
                abs((r["tiebreaks"][n] or 0.0) - (v or 0.0)) < 1e-9
                for n, v in zip(msg["tiebreaks"], e.tiebreaks, strict=True)
            )
            for e in expected.rows
            for r in msg["rows"]
            if r["key"] == e.player
        )
        and len(msg["rows"]) == len(expected.rows)
    )
    searches = sum(calls_lives)
    print(
        f"\nevent: {relay.name}, {len(relay.rounds)} rounds, {len(plies)} games, "
        f"{sum(plies.values())} plies, {positions} distinct positions; one move every "
        f"{args.move_every:g} s, delay {args.delay} s, depth {args.depth}, seed {args.seed}"
    )
    print(f"kills ({len(kills)}): " + "; ".join(kills))
    print("lives: " + ", ".join(f"{p.name} {p.lives}" for p in parts))
    print(f"plies lost: {lost}")
    print(
        f"engine searches over {len(calls_lives)} service lives: {searches:.0f} "
        f"(distinct positions {positions}): evaluated twice, at least "
        f"{max(0, searches - positions):.0f}"
    )
    for v in viewers:
        gaps = [
            b - a
            for a, b in zip(v.new_move_times, v.new_move_times[1:], strict=False)
            if any(s <= a and b <= e + args.delay for s, e in playing)
        ]
        print(
            f"viewer on the {v.name}: {v.connects} connections, shown early: {len(v.early)}"
            f"{' (' + '; '.join(v.early[:3]) + ')' if v.early else ''}, longest without a "
            f"new move while playing: {max(gaps, default=0):.1f} s, games shown in full: "
            f"{sum(1 for g, n in plies.items() if v.shown.get(g, 0) >= n)}/{len(plies)}"
        )
    print(f"final standings equal to the crosstable: {'yes' if equal else 'NO'}")
    print(f"logs: {work}")
    return 0 if lost == 0 and equal and not any(v.early for v in viewers) else 1


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
