"""Turn any PGN into a live relay: moves revealed over time, served like a real broadcast.

All games of the file advance together, like a live round. A move's time is
what the game's own annotations say: ``[%emt]`` (time spent) when present,
else the drop of the mover's ``[%clk]`` since their previous move plus the
increment from ``TimeControl`` (first move: base time minus clock), else a
fixed ``seconds_per_move``; everything is divided by ``speed``. The growing
round is served as

* ``pgn-http``: ``GET /games.pgn`` (all boards, with ETag and Last-Modified;
  ``If-None-Match``/``If-Modified-Since`` answer 304) and ``/game-{n}.pgn``;
* ``lcc``: LiveChess Cloud JSON, ``/get/{id}/tournament.json``,
  ``/get/{id}/round-1/index.json``, ``/get/{id}/round-1/game-{n}.json``
  (the HTTP server always serves both layouts);
* ``mqtt``: JSON move events (docs/feeds.md) published QoS 1 on
  ``{prefix}/{id}/1/{board}``.

In-process use (the live demo and the tests)::

    replay = Replay.from_file("round.pgn", speed=30, mode="pgn-http")
    await replay.start(autoplay=False)      # serve, reveal nothing yet
    await replay.advance(5)                 # reveal the next 5 moves (no sleeps)
    ...
    await replay.stop()

With ``autoplay=True`` a task reveals moves on the clock; ``loop=True`` starts
the round again (a new MQTT ``epoch``) after a pause once every game is over.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, replace
from email.utils import formatdate, parsedate_to_datetime
from pathlib import Path
from typing import Any, Literal

import chess

from livegain.core.errors import LivegainError
from livegain.core.snapshot import GameSnapshot, PlayerInfo
from livegain.feeds.pgn import ParsedGame, game_to_pgn, parse_pgn
from livegain.relay.http import MiniHttpServer, Reply

ReplayMode = Literal["pgn-http", "lcc", "mqtt"]
MODES: tuple[str, ...] = ("pgn-http", "lcc", "mqtt")
DEFAULT_SECONDS_PER_MOVE = 10.0
_TC_RE = re.compile(r"^(?:\d{1,9}/)?(\d{1,9})(?:\+(\d{1,9}))?(?!\d)")


_END = -1
"""Ends the open /stream.pgn responses."""


class ReplayError(LivegainError):
    """The replay cannot start (no games, unreachable broker, port in use)."""


@dataclass(frozen=True)
class ReplayGame:
    """One game to replay: the whole game, and when (seconds into the round) each ply falls."""

    full: GameSnapshot
    clocks: tuple[float | None, ...]
    spent: tuple[float | None, ...]
    times: tuple[float, ...]
    trailing_illegal: int = 0  # illegal tokens at the end (a DGT "kings in the centre" signal)


def time_control(tag: str | None) -> tuple[float | None, float]:
    """``5400+30`` / ``40/5400+30:1800+30`` -> (base seconds of the first period, increment)."""
    if not tag:
        return None, 0.0
    m = _TC_RE.match(tag.strip())
    if not m:
        return None, 0.0
    return float(m.group(1)), float(m.group(2) or 0)


def move_times(
    parsed: ParsedGame, seconds_per_move: float = DEFAULT_SECONDS_PER_MOVE
) -> tuple[list[float | None], list[float]]:
    """(seconds spent per ply where known, cumulative time of each ply into the round)."""
    assert parsed.snapshot is not None
    headers = dict(parsed.headers)
    base, inc = time_control(headers.get("TimeControl"))
    n = len(parsed.snapshot.moves)
    clocks = list(parsed.clock_seconds) + [None] * (n - len(parsed.clock_seconds))
    emts = list(parsed.emt_seconds) + [None] * (n - len(parsed.emt_seconds))
    previous: dict[int, float | None] = {0: base, 1: base}
    spent: list[float | None] = []
    times: list[float] = []
    t = 0.0
    for k in range(n):
        side = k % 2
        s: float | None = emts[k]
        clk = clocks[k]
        prev = previous[side]
        if s is None and clk is not None and prev is not None:
            s = prev - clk + inc
            if s < 0 or s > 4 * 3600:
                s = None
        spent.append(s)
        if clk is not None:
            previous[side] = clk
        t += s if s is not None else seconds_per_move
        times.append(t)
    return spent, times


def _split_name(name: str) -> tuple[str | None, str | None]:
    if "," in name:
        last, _, first = name.partition(",")
        return (first.strip() or None), (last.strip() or None)
    parts = name.split()
    if len(parts) >= 2:
        return " ".join(parts[:-1]), parts[-1]
    return None, (name.strip() or None) if name.strip() not in ("", "?") else None


def lcc_player(p: PlayerInfo) -> dict[str, Any]:
    fname, lname = _split_name(p.name)
    return {
        "fname": fname,
        "mname": None,
        "lname": lname,
        "title": p.title,
        "federation": p.federation,
        "gender": None,
        "fideid": int(p.fide_id) if p.fide_id and p.fide_id.isdigit() else None,
    }


def mqtt_player(p: PlayerInfo) -> dict[str, Any]:
    out: dict[str, Any] = {"name": p.name}
    for key in ("title", "federation", "rating", "fide_id"):
        v = getattr(p, key)
        if v is not None:
            out[key] = v
    return out


_LCC_RESULT = {"1-0": "WHITEWIN", "0-1": "BLACKWIN", "1/2-1/2": "DRAW", "*": "*"}


class Replay:
    """A PGN replayed as a live round over HTTP (PGN or LCC JSON) or MQTT."""

    def __init__(
        self,
        games: Sequence[ParsedGame],
        *,
        speed: float = 1.0,
        seconds_per_move: float = DEFAULT_SECONDS_PER_MOVE,
        mode: ReplayMode = "pgn-http",
        host: str = "127.0.0.1",
        port: int = 0,
        mqtt_url: str = "mqtt://127.0.0.1:1883",
        topic_prefix: str = "livegain/in",
        tournament_id: str = "replay",
        loop: bool = False,
        loop_pause: float = 5.0,
    ) -> None:
        if speed <= 0:
            raise ReplayError(f"speed must be > 0 (got {speed})")
        if seconds_per_move <= 0:
            raise ReplayError(f"seconds per move must be > 0 (got {seconds_per_move})")
        if mode not in MODES:
            raise ReplayError(f"unknown mode {mode!r} (one of {', '.join(MODES)})")
        self.games: list[ReplayGame] = []
        for g in games:
            if g.snapshot is None:
                continue
            spent, times = move_times(g, seconds_per_move)
            clocks = tuple(g.clock_seconds) + (None,) * (len(times) - len(g.clock_seconds))
            self.games.append(
                ReplayGame(g.snapshot, clocks, tuple(spent), tuple(times), g.trailing_illegal)
            )
        if not self.games:
            raise ReplayError("no playable game in the PGN")
        self.speed = speed
        self.mode: ReplayMode = mode
        self.host = host
        self.port = port
        self.mqtt_url = mqtt_url
        self.topic_prefix = topic_prefix.rstrip("/")
        self.tournament_id = tournament_id
        self.loop = loop
        self.loop_pause = loop_pause
        self.timeline = sorted(
            (t, i, ply + 1) for i, g in enumerate(self.games) for ply, t in enumerate(g.times)
        )
        self.position = 0
        self.revealed = [0] * len(self.games)
        self.rounds_played = 0
        self.epoch = f"{int(time.time() * 1000)}"
        self._seq = [0] * len(self.games)
        self._server: MiniHttpServer | None = None
        self._mqtt: Any = None
        self._publishing = False  # mqtt mode, between start() and stop()
        self._mqtt_stack: contextlib.AsyncExitStack | None = None
        self._task: asyncio.Task[None] | None = None
        self._changed_at = time.time()
        self._cache: dict[str, tuple[bytes, str]] = {}
        self._watchers: list[asyncio.Queue[int | None]] = []
        """Queues of the open /stream.pgn responses (game indices that changed)."""
        self.done = asyncio.Event()
        self.error: ReplayError | None = None  # why autoplay stopped early, if it did

    # -- construction

    @classmethod
    def from_pgn(cls, text: str, **kwargs: Any) -> Replay:
        return cls(parse_pgn(text, "replay"), **kwargs)

    @classmethod
    def from_file(cls, path: str | Path, **kwargs: Any) -> Replay:
        try:
            raw = Path(path).read_bytes()
        except OSError as exc:
            raise ReplayError(f"{path}: {exc.strerror or exc}") from None
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = raw.decode("latin-1")
        return cls.from_pgn(text, **kwargs)

    # -- state

    @property
    def finished(self) -> bool:
        return self.position >= len(self.timeline)

    @property
    def total_plies(self) -> int:
        return len(self.timeline)

    def snapshot(self, index: int) -> GameSnapshot:
        """Game ``index`` (0-based) as revealed so far; its result once its last move is out."""
        g = self.games[index]
        k = self.revealed[index]
        done = k >= len(g.full.moves)
        clocks = tuple(None if c is None else int(c) for c in g.clocks[:k])
        white = next((c for c in reversed(clocks[0::2]) if c is not None), None)
        black = next((c for c in reversed(clocks[1::2]) if c is not None), None)
        if g.full.initial_fen and chess.Board(g.full.initial_fen).turn == chess.BLACK:
            white, black = black, white
        return replace(
            g.full,
            moves=g.full.moves[:k],
            after_illegal=(),  # only the legal prefix is replayed
            clocks=clocks,
            result=g.full.result if done else "*",
            clock_white=white,
            clock_black=black,
        )

    def snapshots(self) -> list[GameSnapshot]:
        return [self.snapshot(i) for i in range(len(self.games))]

    async def advance(self, n: int = 1) -> int:
        """Reveal the next ``n`` moves of the round's timeline; returns how many were revealed."""
        count = 0
        while count < n and not self.finished:
            _, i, ply = self.timeline[self.position]
            self.position += 1
            self.revealed[i] = ply
            count += 1
            self._touch(i)
            await self._publish_move(i, ply)
        if self.finished:
            self.done.set()
        return count

    async def advance_all(self) -> int:
        return await self.advance(len(self.timeline))

    async def reset(self) -> None:
        """Back to the start of the round (boards reset; a new MQTT epoch)."""
        self.position = 0
        self.revealed = [0] * len(self.games)
        self.rounds_played += 1
        self.epoch = f"{int(time.time() * 1000)}-{self.rounds_played}"
        self._seq = [0] * len(self.games)
        self.done.clear()
        self._touch()
        await self._publish_starts()

    def _touch(self, index: int | None = None) -> None:
        self._changed_at = time.time()
        self._cache.clear()
        for q in self._watchers:
            q.put_nowait(index)

    async def stream(self) -> AsyncIterator[bytes]:
        """Every game's PGN, then a game's whole PGN again each time it changes."""
        q: asyncio.Queue[int | None] = asyncio.Queue()
        self._watchers.append(q)
        changed: Sequence[int] = range(len(self.games))  # every game first
        try:
            while True:
                for i in changed:
                    yield (self.game_pgn(i) + "\n\n\n").encode("utf-8")
                index = await q.get()
                if index == _END:
                    return
                changed = range(len(self.games)) if index is None else [index]
        finally:
            self._watchers.remove(q)

    # -- lifecycle

    async def start(self, autoplay: bool = True) -> None:
        if self.mode == "mqtt":
            await self._connect()
            self._publishing = True
            await self._publish_starts()
        else:
            self._server = MiniHttpServer(self._handle, self.host, self.port)
            try:
                await self._server.start()
            except OSError as exc:
                raise ReplayError(f"cannot listen on {self.host}:{self.port}: {exc}") from None
            self.port = self._server.port
        if autoplay:
            self._task = asyncio.create_task(self._autoplay())

    async def _connect(self) -> None:
        from livegain.mqtt.client import connect

        await self._disconnect()
        stack = contextlib.AsyncExitStack()
        try:
            self._mqtt = await stack.enter_async_context(connect(self.mqtt_url))
        except Exception as exc:
            await stack.aclose()
            raise ReplayError(f"cannot connect to {self.mqtt_url}: {exc}") from None
        self._mqtt_stack = stack

    async def _disconnect(self) -> None:
        if self._mqtt_stack is not None:
            with contextlib.suppress(Exception):
                await self._mqtt_stack.aclose()
        self._mqtt_stack = None
        self._mqtt = None

    async def stop(self) -> None:
        for q in self._watchers:
            q.put_nowait(_END)  # open streams end with the replay
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._server is not None:
            await self._server.stop()
            self._server = None
        self._publishing = False
        await self._disconnect()

    async def __aenter__(self) -> Replay:
        await self.start(autoplay=False)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _autoplay(self) -> None:
        try:
            await self.play()
        except ReplayError as exc:
            self.error = exc
            self.done.set()

    async def play(self) -> None:
        """Reveal the moves on the clock (``speed``) to the end of the round, and
        again from the start after a pause with ``loop``."""
        loop = asyncio.get_running_loop()
        while True:
            t0 = loop.time() - (
                self.timeline[self.position - 1][0] / self.speed if self.position else 0.0
            )
            while not self.finished:
                due = t0 + self.timeline[self.position][0] / self.speed
                await asyncio.sleep(max(0.0, due - loop.time()))
                now_t = (loop.time() - t0) * self.speed
                n = 0
                while (
                    self.position + n < len(self.timeline)
                    and self.timeline[self.position + n][0] <= now_t + 1e-9
                ):
                    n += 1
                await self.advance(max(n, 1))
            if not self.loop:
                return
            await asyncio.sleep(self.loop_pause)
            await self.reset()

    # -- addresses

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def pgn_url(self) -> str:
        return f"{self.base_url}/games.pgn"

    @property
    def stream_url(self) -> str:
        """The round as one endless PGN response (the Lichess broadcast stream format)."""
        return f"{self.base_url}/stream.pgn"

    def board_urls(self) -> list[str]:
        return [f"{self.base_url}/game-{i + 1}.pgn" for i in range(len(self.games))]

    @property
    def lcc_base_url(self) -> str:
        """What an LCC feed's ``base_url`` should be (``tournament_id`` is separate)."""
        return f"{self.base_url}/get"

    def topic(self, index: int) -> str:
        return f"{self.topic_prefix}/{self.tournament_id}/1/{index + 1}"

    # -- PGN

    def round_pgn(self) -> str:
        return "\n".join(self.game_pgn(i) for i in range(len(self.games)))

    def game_pgn(self, index: int) -> str:
        g = self.games[index]
        snap = self.snapshot(index)
        k = len(snap.moves)
        return game_to_pgn(
            snap.tags, snap.moves, g.clocks[:k], snap.result, snap.initial_fen, g.spent[:k]
        )

    # -- LCC JSON

    def lcc_tournament(self) -> dict[str, Any]:
        tags = dict(self.games[0].full.tags)
        live = sum(1 for i in range(len(self.games)) if self.snapshot(i).result == "*")
        return {
            "id": self.tournament_id,
            "name": tags.get("Event", "livegain replay"),
            "location": tags.get("Site"),
            "country": None,
            "website": None,
            "timecontrol": tags.get("TimeControl"),
            "rules": "STANDARD",
            "chess960": "STANDARD",
            "eboards": [],
            "rounds": [{"count": len(self.games), "live": live}],
        }

    def lcc_index(self) -> dict[str, Any]:
        date = dict(self.games[0].full.tags).get("Date", "")
        iso = date.replace(".", "-") if re.fullmatch(r"\d{4}\.\d{2}\.\d{2}", date) else None
        pairings = []
        for i in range(len(self.games)):
            snap = self.snapshot(i)
            pairings.append(
                {
                    "white": lcc_player(snap.white),
                    "black": lcc_player(snap.black),
                    "result": snap.result,
                    "live": snap.result == "*",
                }
            )
        return {"date": iso, "pairings": pairings}

    def lcc_game(self, index: int) -> dict[str, Any]:
        g = self.games[index]
        snap = self.snapshot(index)
        k = len(snap.moves)
        tokens = []
        for ply, san in enumerate(snap.moves):
            token = san
            clk, sp = g.clocks[ply], g.spent[ply]
            if clk is not None:
                token += f" {int(clk)}"
            if sp is not None:
                token += f"+{int(sp)}" if clk is not None else f" +{int(sp)}"
            tokens.append(token)
        chess960 = 518
        if snap.initial_fen:
            with contextlib.suppress(ValueError):
                pos = chess.Board(snap.initial_fen, chess960=True).chess960_pos()
                if pos is not None:
                    chess960 = pos
        clock = None
        if snap.clock_white is not None or snap.clock_black is not None:
            clock = {
                "white": snap.clock_white,
                "black": snap.clock_black,
                "time": int(self._changed_at * 1000),
            }
        done = k >= len(g.full.moves)
        return {
            "live": not done,
            "serialNr": str(index + 1),
            "firstMove": None,
            "chess960": chess960,
            "result": _LCC_RESULT.get(snap.result) if done else None,
            "comment": None,
            "clock": clock,
            "moves": tokens,
        }

    # -- HTTP

    def _handle(self, path: str, headers: Mapping[str, str]) -> Reply:
        path = path.split("?", 1)[0]
        if path in ("/", "/index.txt"):
            lines = [f"livegain replay: {len(self.games)} games", self.pgn_url, self.stream_url]
            lines.append(f"{self.lcc_base_url}/{self.tournament_id}/tournament.json")
            return Reply(200, ("\n".join(lines) + "\n").encode())
        if path == "/games.pgn":
            return self._cached(path, headers, lambda: self.round_pgn(), "application/x-chess-pgn")
        if path == "/stream.pgn":
            return Reply(200, content_type="application/x-chess-pgn", stream=self.stream)
        m = re.fullmatch(r"/game-(\d{1,9})\.pgn", path)
        if m and 1 <= int(m.group(1)) <= len(self.games):
            i = int(m.group(1)) - 1
            return self._cached(path, headers, lambda: self.game_pgn(i), "application/x-chess-pgn")
        prefix = f"/get/{self.tournament_id}/"
        if path.startswith(prefix):
            rest = path[len(prefix) :]
            if rest == "tournament.json":
                return self._json(path, headers, self.lcc_tournament)
            if rest == "round-1/index.json":
                return self._json(path, headers, self.lcc_index)
            m = re.fullmatch(r"round-1/game-(\d{1,9})\.json", rest)
            if m and 1 <= int(m.group(1)) <= len(self.games):
                i = int(m.group(1)) - 1
                return self._json(path, headers, lambda: self.lcc_game(i))
        return Reply(404, b"not found\n")

    def _json(self, path: str, headers: Mapping[str, str], build: Any) -> Reply:
        return self._cached(
            path, headers, lambda: json.dumps(build(), separators=(",", ":")), "application/json"
        )

    def _cached(
        self, path: str, headers: Mapping[str, str], build: Any, content_type: str
    ) -> Reply:
        if path not in self._cache:
            body = build().encode("utf-8")
            etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
            self._cache[path] = (body, etag)
        body, etag = self._cache[path]
        modified = formatdate(self._changed_at, usegmt=True)
        common = {"ETag": etag, "Last-Modified": modified, "Cache-Control": "no-cache"}
        inm = headers.get("if-none-match")
        if inm is not None:
            if etag in [t.strip() for t in inm.split(",")] or inm.strip() == "*":
                return Reply(304, headers=common)
        elif headers.get("if-modified-since"):
            with contextlib.suppress(TypeError, ValueError, IndexError, OverflowError):
                since = parsedate_to_datetime(headers["if-modified-since"]).timestamp()
                # strictly after: a change within the same second as ``since`` must not be
                # answered 304 (Last-Modified has one-second resolution)
                if int(self._changed_at) < int(since):
                    return Reply(304, headers=common)
        return Reply(200, body, content_type, common)

    # -- MQTT

    async def _publish(self, index: int, data: dict[str, Any]) -> None:
        if not self._publishing:
            return
        self._seq[index] += 1
        payload = json.dumps(
            {"seq": self._seq[index], "epoch": self.epoch, **data}, separators=(",", ":")
        )
        await self._publish_raw(index, payload)

    async def _publish_raw(self, index: int, payload: str) -> None:
        import aiomqtt

        # a broker restart mid-replay: reconnect and publish again (same seq: the
        # ingest drops it if the first try did arrive)
        for delay in (0.5, 1.0, 2.0, 5.0, None):
            try:
                if self._mqtt is None:
                    await self._connect()
                await self._mqtt.publish(self.topic(index), payload, qos=1)
                return
            except (aiomqtt.MqttError, ReplayError) as exc:
                if delay is None:
                    raise ReplayError(f"cannot publish to {self.mqtt_url}: {exc}") from None
                await self._disconnect()
                await asyncio.sleep(delay)

    async def _publish_starts(self) -> None:
        if not self._publishing:
            return
        for i, g in enumerate(self.games):
            snap = g.full
            start: dict[str, Any] = {
                "white": mqtt_player(snap.white),
                "black": mqtt_player(snap.black),
                "truncate": 0,
                "result": "*",
            }
            if snap.event:
                start["event"] = snap.event
            if snap.initial_fen:
                start["fen"] = snap.initial_fen
            await self._publish(i, start)
            if not g.full.moves and snap.result != "*":
                await self._publish(i, {"result": snap.result})

    async def _publish_move(self, index: int, ply: int) -> None:
        if not self._publishing:
            return
        g = self.games[index]
        if ply > len(g.full.moves) - g.trailing_illegal:
            # an illegal trailing token cannot be a move event: send the game so far as
            # PGN (the ingest passes such tokens on, as the PGN feeds do)
            await self._publish_raw(index, self.game_pgn(index))
            return
        data: dict[str, Any] = {"ply": ply, "san": g.full.moves[ply - 1]}
        clk = g.clocks[ply - 1]
        if clk is not None:
            data["clock"] = int(clk)
        if ply == len(g.full.moves) and g.full.result != "*":
            data["result"] = g.full.result
        await self._publish(index, data)
