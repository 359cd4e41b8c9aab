"""Gateways end to end: the service publishes to a real Mosquitto, `livegain gateway`
processes serve viewers from it, real WebSocket clients watch.

The service runs in this process with an instant evaluator (a material
count: no engine needed) and a feed the test drives move by move; it serves
its own viewers too, and one of them (the reference) records the service's
``/ws`` stream. Each gateway is a separate ``livegain gateway`` process. A
viewer records, per connection, every ``snapshot`` and ``update`` message as
received and folds them as an overlay does, noting any gap or duplicate in
``seq``.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import itertools
import json
import os
import signal
import socket
import ssl
import sys
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import pytest
import trustme
from brokers import PrivateBroker
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from livegain.app.service import Service
from livegain.cli import main as cli_main
from livegain.core.evaluation import Evaluation
from livegain.core.snapshot import GameSnapshot, PlayerInfo
from livegain.feeds.base import FeedSink

from .conftest import running, settings_for, ws_url
from .mirror import apply_update

pytestmark = [pytest.mark.broker, pytest.mark.slow, pytest.mark.timeout(180)]

REPO = Path(__file__).resolve().parents[2]
_LOGS = itertools.count()
VALUES = {chess.PAWN: 100, chess.KNIGHT: 300, chess.BISHOP: 300, chess.ROOK: 500, chess.QUEEN: 900}


# --------------------------------------------------------------------------
# the service, driven by hand


class InstantEvaluator:
    """A material count: every position is evaluated at once."""

    engine_key = "instant"

    async def evaluate(self, board: chess.Board, priority: int = 0) -> Evaluation:
        await asyncio.sleep(0)
        cp = sum(
            VALUES.get(p.piece_type, 0) * (1 if p.color == chess.WHITE else -1)
            for p in board.piece_map().values()
        )
        return Evaluation(cp=cp, depth=1)

    def describe(self) -> str:
        return "instant material count"


class HandFeed:
    name = "hand"

    def __init__(self) -> None:
        self.sink: FeedSink | None = None
        self.ready = asyncio.Event()

    async def run(self, sink: FeedSink) -> None:
        self.sink = sink
        self.ready.set()
        await asyncio.Event().wait()


def demo_game() -> tuple[GameSnapshot, list[str]]:
    with (REPO / "livegain" / "data" / "demo-round.pgn").open() as fh:
        game = chess.pgn.read_game(fh)
    assert game is not None
    sans = []
    board = game.board()
    for move in game.mainline_moves():
        sans.append(board.san(move))
        board.push(move)
    base = GameSnapshot(
        source="hand",
        white=PlayerInfo(game.headers["White"]),
        black=PlayerInfo(game.headers["Black"]),
        game_id="gw-1",
        event="Gateway test",
        round="1",
        board=1,
    )
    return base, sans


@dataclass
class Round:
    service: Service
    feed: HandFeed
    base: GameSnapshot
    sans: list[str]
    board_id: str = ""
    played: int = 0

    async def play(self, upto: int, pause: float = 0.03) -> None:
        """Play the game's moves up to ``upto`` plies, one snapshot each."""
        assert self.feed.sink is not None
        while self.played < upto:
            self.played += 1
            snap = GameSnapshot(**{**self.base.__dict__, "moves": tuple(self.sans[: self.played])})
            self.feed.sink.snapshot(snap)
            await asyncio.sleep(pause)

    def state(self) -> dict[str, Any]:
        state = self.service.server.state(self.board_id)
        assert state is not None
        return state.model_dump(mode="json")

    async def settled(self, wait: float = 30.0) -> dict[str, Any]:
        """The board once every move played is evaluated and published to MQTT."""
        loop = asyncio.get_running_loop()
        end = loop.time() + wait
        mqtt = self.service.mqtt
        assert mqtt is not None
        while True:
            state = self.state()
            done = len(state["moves"]) == self.played and all(
                m["eval"] is not None for m in state["moves"]
            )
            if done and state["start_eval"] is not None and mqtt.pending == 0:
                await asyncio.sleep(0.3)
                if self.state() == state and mqtt.pending == 0:
                    return state
            if loop.time() > end:
                raise TimeoutError(f"service not settled in {wait} s")
            await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def live_round(tmp_path: Path, broker: PrivateBroker, prefix: str) -> AsyncIterator[Round]:
    feed = HandFeed()
    settings = settings_for(
        tmp_path,
        persist=False,
        mqtt={"enabled": True, "url": broker.url, "prefix": prefix},
    )
    service = Service(settings, evaluator=InstantEvaluator(), feeds=[feed], max_inflight=4)
    base, sans = demo_game()
    async with running(service):
        await asyncio.wait_for(feed.ready.wait(), 10)
        game = Round(service, feed, base, sans)
        await game.play(1)
        await until(lambda: bool(service.server.board_ids()), "the board exists")
        game.board_id = service.server.board_ids()[0]
        await game.settled()
        yield game


async def until(cond: Callable[[], bool], what: str, wait: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + wait
    while not cond():
        if loop.time() > end:
            raise TimeoutError(f"not in {wait} s: {what}")
        await asyncio.sleep(0.05)


# --------------------------------------------------------------------------
# gateway processes


def http_get(url: str, context: ssl.SSLContext | None = None) -> Any:
    with urllib.request.urlopen(url, timeout=5, context=context) as answer:
        return json.loads(answer.read())


def tail(log: Path) -> str:
    return log.read_text()[-3000:]


@dataclass
class GatewayProcess:
    proc: asyncio.subprocess.Process
    url: str
    log: Path
    context: ssl.SSLContext | None = None

    @classmethod
    async def start(
        cls,
        broker: PrivateBroker,
        prefix: str,
        log: Path,
        *extra: str,
        port: int | None = None,
        context: ssl.SSLContext | None = None,
    ) -> GatewayProcess:
        # port 0 unless given: the gateway binds and announces its own port
        args = ["--broker", broker.url, "--prefix", prefix, "--host", "127.0.0.1"]
        args += ["--port", str(port or 0), *extra]
        with log.open("wb") as err:
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "livegain.cli",
                "gateway",
                *args,
                stdout=asyncio.subprocess.PIPE,
                stderr=err,
                env={**os.environ, "LIVEGAIN_LOG__LEVEL": "info"},
            )
        assert proc.stdout is not None
        try:
            line = await asyncio.wait_for(proc.stdout.readline(), 30)
        except TimeoutError:
            line = b""
        if b" is live at " not in line:
            proc.kill()
            await proc.wait()
            raise RuntimeError(f"gateway did not start: {line!r}\n{tail(log)}")
        url = line.decode().split(" is live at ", 1)[1].strip()
        return cls(proc, url, log, context)

    @property
    def ws(self) -> str:
        scheme = "wss" if self.url.startswith("https:") else "ws"
        return scheme + self.url[self.url.index(":") :] + "ws"

    async def health(self) -> Any:
        return await asyncio.to_thread(http_get, self.url + "healthz", self.context)

    async def board(self, board_id: str) -> Any:
        return await asyncio.to_thread(http_get, f"{self.url}api/boards/{board_id}", self.context)

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)

    async def stop(self) -> int:
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
        return await asyncio.wait_for(self.proc.wait(), 20)


def port_of(gw: GatewayProcess) -> int:
    return int(gw.url.rstrip("/").rsplit(":", 1)[1])


@contextlib.asynccontextmanager
async def gateways(
    tmp_path: Path, broker: PrivateBroker, prefix: str, n: int, *extra: str, **kw: Any
) -> AsyncIterator[list[GatewayProcess]]:
    procs: list[GatewayProcess] = []
    try:
        for _ in range(n):
            log = tmp_path / f"gateway-{next(_LOGS)}.log"
            procs.append(await GatewayProcess.start(broker, prefix, log, *extra, **kw))
        yield procs
    finally:
        for g in procs:
            if g.proc.returncode is None:
                g.proc.kill()
                await g.proc.wait()


async def synced(gw: GatewayProcess, game: Round) -> None:
    """The gateway has the board exactly as the service has it now."""
    want = game.state()

    async def same() -> bool:
        with contextlib.suppress(OSError, ValueError):
            return bool(await gw.board(game.board_id) == want)
        return False

    for _ in range(300):
        if await same():
            return
        await asyncio.sleep(0.1)
    raise TimeoutError(f"gateway {gw.url} does not have the board as the service has it")


# --------------------------------------------------------------------------
# viewers


@dataclass(eq=False)
class Viewer:
    """A WebSocket client that goes to the next URL when its connection drops."""

    urls: list[str]
    context: ssl.SSLContext | None = None
    compression: str | None = None
    connections: list[list[str]] = field(default_factory=list)
    """Per connection, every snapshot and update message as received."""
    boards: dict[str, dict[str, Any]] = field(default_factory=dict)
    gaps: list[str] = field(default_factory=list)
    duplicates: int = 0
    extensions: list[str | None] = field(default_factory=list)
    """Per connection, the Sec-WebSocket-Extensions the server answered."""
    task: asyncio.Task[None] | None = None

    def start(self) -> Viewer:
        self.task = asyncio.create_task(self._run())
        return self

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task

    async def _run(self) -> None:
        i = 0
        while True:
            url = self.urls[i % len(self.urls)]
            with contextlib.suppress(OSError, ConnectionClosed, InvalidHandshake, TimeoutError):
                async with connect(
                    url,
                    ssl=self.context,
                    compression=self.compression,
                    max_size=None,
                    open_timeout=5,
                    proxy=None,
                ) as ws:
                    assert ws.response is not None
                    self.extensions.append(ws.response.headers.get("Sec-WebSocket-Extensions"))
                    self.connections.append([])
                    self.boards = {}
                    await ws.send(json.dumps({"type": "subscribe", "boards": "*"}))
                    async for raw in ws:
                        assert isinstance(raw, str)
                        self._on(raw)
            i += 1
            await asyncio.sleep(0.1)

    def _on(self, raw: str) -> None:
        msg = json.loads(raw)
        kind = msg["type"]
        if kind == "snapshot":
            self.boards[msg["state"]["board_id"]] = copy.deepcopy(msg["state"])
        elif kind == "update":
            state = self.boards.get(msg["board_id"])
            if state is None:
                self.gaps.append(f"update {msg['seq']} before any snapshot")
            elif msg["seq"] <= state["seq"]:
                self.duplicates += 1
            elif msg["seq"] != state["seq"] + 1:
                self.gaps.append(f"seq {msg['seq']} after {state['seq']}")
            else:
                apply_update(state, msg)
        else:
            return
        self.connections[-1].append(raw)

    def seq(self, board_id: str) -> int:
        state = self.boards.get(board_id)
        return -1 if state is None else int(state["seq"])


@contextlib.asynccontextmanager
async def viewers(groups: list[list[Viewer]], board_id: str) -> AsyncIterator[None]:
    everyone = [v.start() for g in groups for v in g]
    try:
        await until(lambda: all(v.seq(board_id) >= 0 for v in everyone), "every viewer subscribed")
        yield
    finally:
        for v in everyone:
            await v.stop()


async def caught_up(views: list[Viewer], state: dict[str, Any], wait: float = 30.0) -> None:
    bid = state["board_id"]
    await until(
        lambda: all(v.boards.get(bid) == state for v in views),
        f"every viewer has the service's board (seqs {[v.seq(bid) for v in views]}, "
        f"service {state['seq']})",
        wait,
    )


def assert_clean(views: list[Viewer]) -> None:
    for v in views:
        assert v.gaps == [] and v.duplicates == 0, (v.urls, v.gaps, v.duplicates)


# --------------------------------------------------------------------------
# tests


async def test_every_viewer_of_every_gateway_gets_the_services_stream(
    tmp_path: Path, private_broker: PrivateBroker, prefix: str
) -> None:
    # one gateway on asyncio's loop, the other on uvloop (--loop uvloop)
    async with (
        live_round(tmp_path, private_broker, prefix) as game,
        gateways(tmp_path, private_broker, prefix, 1) as (a,),
        gateways(tmp_path, private_broker, prefix, 1, "--loop", "uvloop") as (b,),
    ):
        await synced(a, game)
        await synced(b, game)
        ref = Viewer([ws_url(game.service)])
        on_a = [Viewer([a.ws]) for _ in range(3)]
        on_b = [Viewer([b.ws]) for _ in range(3)]
        async with viewers([[ref], on_a, on_b], game.board_id):
            await game.play(40)
            final = await game.settled()
            await caught_up([ref, *on_a, *on_b], final)
            health = [await gw.health() for gw in (a, b)]
        assert_clean([ref, *on_a, *on_b])
        (stream,) = ref.connections
        updates = [m for m in stream if json.loads(m)["type"] == "update"]
        assert len(updates) >= 2 * 39, "each move and its evaluation"
        for v in [*on_a, *on_b]:
            # one connection each, and byte for byte what the service's viewer got
            assert v.connections == [stream]
        for h in health:
            assert h["role"] == "gateway" and h["status"] == "ok"
            assert h["clients"] == 3 and h["boards"] == 1
            assert h["broker"]["connected"] is True and h["service"] == "online"
            assert h["lag"]["seq"] == 0 and h["lag"]["boards_behind"] == 0
            assert h["lag"]["seconds"] is not None
        assert [h["event_loop"] for h in health] == ["asyncio", "uvloop"]
        for gw in (a, b):
            assert await gw.stop() == 0  # SIGTERM: a clean stop


async def test_sigkill_of_a_gateway_moves_its_viewers_to_the_other(
    tmp_path: Path, private_broker: PrivateBroker, prefix: str
) -> None:
    async with (
        live_round(tmp_path, private_broker, prefix) as game,
        gateways(tmp_path, private_broker, prefix, 2) as (a, b),
    ):
        await synced(a, game)
        await synced(b, game)
        ref = Viewer([ws_url(game.service)])
        on_a = [Viewer([a.ws, b.ws]) for _ in range(3)]
        on_b = [Viewer([b.ws, a.ws]) for _ in range(3)]
        async with viewers([[ref], on_a, on_b], game.board_id):
            await game.play(15)
            a.kill()
            await game.play(30)
            final = await game.settled()
            await caught_up([ref, *on_a, *on_b], final)
            clients_b = (await b.health())["clients"]
        assert_clean([ref, *on_a, *on_b])
        assert clients_b == 6
        for v in on_a:
            # reconnected to b, resynced from a snapshot, and on to the end
            assert len(v.connections) == 2
            assert json.loads(v.connections[1][0])["type"] == "snapshot"
        (stream,) = ref.connections
        for v in on_b:
            assert v.connections == [stream], "b's viewers noticed nothing"


async def test_a_broker_restart_mid_round_leaves_no_silent_gap(
    tmp_path: Path, private_broker: PrivateBroker, prefix: str
) -> None:
    async with (
        live_round(tmp_path, private_broker, prefix) as game,
        gateways(tmp_path, private_broker, prefix, 2) as (a, b),
    ):
        await synced(a, game)
        await synced(b, game)
        views = [Viewer([gw.ws]) for gw in (a, b) for _ in range(2)]
        async with viewers([views], game.board_id):
            await game.play(10)
            private_broker.stop()
            await game.play(20)  # the service keeps going; its publisher queues
            await asyncio.sleep(0.5)
            private_broker.start()
            await game.play(30)
            final = await game.settled(wait=60)
            await caught_up(views, final, wait=60)
            health = [await gw.health() for gw in (a, b)]
        # No gap and no duplicate on any connection; the gateways kept their viewers.
        assert_clean(views)
        assert all(len(v.connections) == 1 for v in views)
        for h in health:
            assert h["broker"]["connects"] >= 2 and h["broker"]["failures"] >= 1
            assert h["status"] == "ok" and h["clients"] == 2


def slow_reader(url: str) -> socket.socket:
    """A WebSocket client that subscribes to every board, then never reads."""
    host, port = url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
    s = socket.socket()
    # A small window and small segments: the server's kernel holds little for
    # it (tens of KiB, not the megabytes of loopback's defaults), so what it
    # does not read soon waits in the server's own write buffer.
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 536)
    s.connect((host, int(port)))
    s.sendall(
        f"GET /ws HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(1)
    assert head.startswith(b"HTTP/1.1 101"), head
    payload = b'{"type":"subscribe","boards":"*"}'
    mask = b"\x01\x02\x03\x04"
    masked = bytes(c ^ mask[i % 4] for i, c in enumerate(payload))
    s.sendall(bytes([0x81, 0x80 | len(payload)]) + mask + masked)
    return s


async def test_a_never_reading_viewer_changes_nothing_for_the_others(
    tmp_path: Path, private_broker: PrivateBroker, prefix: str
) -> None:
    config = tmp_path / "gateway.toml"
    config.write_text("[server]\nsoft_backlog_kb = 1\nstale_timeout = 120\n")
    async with (
        live_round(tmp_path, private_broker, prefix) as game,
        gateways(tmp_path, private_broker, prefix, 1, "--config", str(config)) as (gw,),
    ):
        await synced(gw, game)
        ref = Viewer([ws_url(game.service)])
        others = [Viewer([gw.ws]) for _ in range(3)]
        stuck = await asyncio.to_thread(slow_reader, gw.ws)
        try:
            async with viewers([[ref], others], game.board_id):
                await game.play(60)
                final = await game.settled()
                await caught_up([ref, *others], final)
                health = await gw.health()
        finally:
            stuck.close()
        assert_clean([ref, *others])
        (stream,) = ref.connections
        for v in others:
            assert v.connections == [stream]
        # the never-reading one was held back (its updates dropped), not the others
        assert health["clients"] == 4
        assert health["websocket"]["dropped_updates"] > 0


@pytest.fixture
def tls_files(tmp_path: Path) -> tuple[Path, ssl.SSLContext]:
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    pem = tmp_path / "gateway.pem"
    cert.private_key_and_cert_chain_pem.write_to_path(str(pem))
    context = ssl.create_default_context()
    ca.configure_trust(context)
    return pem, context


async def test_tls_and_permessage_deflate_viewers(
    tmp_path: Path,
    private_broker: PrivateBroker,
    prefix: str,
    tls_files: tuple[Path, ssl.SSLContext],
) -> None:
    pem, context = tls_files
    extra = ["--tls-cert", str(pem), "--tls-key", str(pem), "--compression"]
    async with (
        live_round(tmp_path, private_broker, prefix) as game,
        gateways(tmp_path, private_broker, prefix, 1, *extra, context=context) as (gw,),
    ):
        assert gw.url.startswith("https://") and gw.ws.startswith("wss://")
        await synced(gw, game)
        ref = Viewer([ws_url(game.service)])
        deflate = Viewer([gw.ws], context=context, compression="deflate")
        plain = Viewer([gw.ws], context=context, compression=None)
        async with viewers([[ref, deflate, plain]], game.board_id):
            await game.play(30)
            final = await game.settled()
            await caught_up([ref, deflate, plain], final)
        assert_clean([ref, deflate, plain])
        (stream,) = ref.connections
        assert deflate.connections == [stream] and plain.connections == [stream]
        # negotiated per client: deflate for the one that asked, none for the other
        assert deflate.extensions[0] is not None and "permessage-deflate" in deflate.extensions[0]
        assert plain.extensions == [None]
        health = await gw.health()
        assert health["websocket"]["tls"] is True and health["websocket"]["compression"] is True


async def test_two_gateways_share_one_port_with_reuse_port(
    tmp_path: Path, private_broker: PrivateBroker, prefix: str
) -> None:
    async with (
        live_round(tmp_path, private_broker, prefix) as game,
        gateways(tmp_path, private_broker, prefix, 1, "--reuse-port") as (a,),
        # the second binds the port the first was given
        gateways(tmp_path, private_broker, prefix, 1, "--reuse-port", port=port_of(a)) as (b,),
    ):
        assert a.url == b.url
        await synced(a, game)
        views = [Viewer([a.ws]) for _ in range(24)]
        async with viewers([views], game.board_id):
            await game.play(6)
            final = await game.settled()
            await caught_up(views, final)
            # /healthz lands on either gateway: ask until both have answered
            clients: dict[str, int] = {}
            for _ in range(200):
                health = await a.health()
                clients[health["instance"]] = health["clients"]
                if len(clients) == 2:
                    break
        assert_clean(views)
        assert len(clients) == 2, "only one gateway answered"
        assert sum(clients.values()) == 24 and all(n > 0 for n in clients.values()), clients


def test_bad_broker_url_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["gateway", "--broker", "http://example.org", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("livegain gateway: error: --broker: not an MQTT URL")
    assert len(err.strip().splitlines()) == 1


def test_tls_cert_without_key_is_refused(
    capsys: pytest.CaptureFixture[str], tls_files: tuple[Path, ssl.SSLContext]
) -> None:
    pem, _ = tls_files
    assert cli_main(["gateway", "--tls-cert", str(pem), "--port", "0"]) == 2
    assert "tls_cert and tls_key go together" in capsys.readouterr().err


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """urllib must reach the gateways directly, whatever the environment says."""
    for var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    yield
