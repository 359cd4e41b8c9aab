"""Helpers for the overlay tests (real parts only): Debian's Chromium (Playwright), a real
``livegain serve`` subprocess with a real Stockfish, fed by a real replay
(:class:`livegain.relay.replay.Replay` serving PGN over HTTP), and a real
WebSocket client to read what the server says.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from brokers import free_port

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = REPO / "artifacts" / "overlays"

# ------------------------------------------------------------------ a calibrated model

#: Moves before the test model's estimate counts (the shipped models' minimum too).
TEST_MIN_MOVES = 5


def write_test_model(path: Path) -> Path:
    """A small hand-made calibrated perceived-rating model, so the pages' figures do
    not depend on which model is shipped: a move's score depends only on the
    centipawns it lost (2600 for none, 200 less per band), the estimate is the mean
    score (shrunk toward the prior while too early) with a 95 % interval of
    -450/+450 from 5 moves and -350/+350 from 10."""
    from livegain.core.perceived import MoveBin, MoveClasses, PerceivedModel
    from livegain.models.perceived import store_perceived_model

    classes = MoveClasses()
    losses = len(classes.loss_edges) + 1
    scores = tuple(2600.0 - 200.0 * (c % losses) for c in range(classes.count))
    model = PerceivedModel(
        name="overlay-test",
        classes=classes,
        move_scores=scores,
        bins=(
            MoveBin(moves_from=1, intercept=1200.0, slope=0.4, q_low=-700.0, q_high=700.0),
            MoveBin(
                moves_from=TEST_MIN_MOVES, intercept=0.0, slope=1.0, q_low=-450.0, q_high=450.0
            ),
            MoveBin(moves_from=10, intercept=0.0, slope=1.0, q_low=-350.0, q_high=350.0),
        ),
        prior=1800.0,
        prior_low=1100.0,
        prior_high=2500.0,
        min_moves=TEST_MIN_MOVES,
        provenance={"evals": "engine", "source": "tests/overlay (hand-made)"},
    )
    return store_perceived_model(model, path)


def model_for_pictures(tmp: Path) -> Path | None:
    """For the tests that take the docs' pictures: None (``livegain serve`` then
    uses the shipped model) when a model is shipped, else the tests' own, written
    into ``tmp`` (pictures taken that way are for checking, not for the docs)."""
    from livegain.models.perceived import load_perceived_models

    return None if load_perceived_models() else write_test_model(tmp / "perceived.toml")


def headline(state: dict[str, Any], color: str) -> dict[str, Any] | None:
    """The calibrated rating of a board message (snapshot or update) that a board
    overlay shows in large type for ``color``: his ``form`` when he has an official
    rating and the message carries it, else his ``perceived`` rating (the moves
    alone); None when there is neither. (The server sends a form only for a rated
    player: updates, which carry no players, say so by it.)"""
    form: dict[str, Any] | None = state.get(f"{color}_form")
    return form if form is not None else state.get(f"{color}_perceived")


def wait_until(check: Callable[[], Any], timeout: float, what: str, interval: float = 0.1) -> Any:
    """Poll ``check`` until it returns something truthy; fail naming ``what``."""
    deadline = time.monotonic() + timeout
    last_exc: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = check()
        except Exception as exc:  # keep polling; report the last error
            last_exc = exc
            value = None
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} (last: {last_exc!r})")


# ------------------------------------------------------------------ test games

# Short games with clocks, written into tmp by the tests and replayed live.
GAME_A = """[Event "Overlay Test Open"]
[Site "Test"]
[Round "3"]
[Board "1"]
[White "Fischer, Robert J."]
[Black "Spassky, Boris V."]
[WhiteTitle "GM"]
[BlackTitle "GM"]
[WhiteElo "2785"]
[BlackElo "2660"]
[WhiteFed "USA"]
[BlackFed "URS"]
[TimeControl "5400+30"]
[Result "1-0"]

1. e4 {[%clk 1:30:20]} e5 {[%clk 1:30:25]} 2. Nf3 {[%clk 1:30:41]} Nc6 {[%clk 1:30:48]}
3. Bb5 {[%clk 1:30:58]} a6 {[%clk 1:31:10]} 4. Ba4 {[%clk 1:31:20]} Nf6 {[%clk 1:31:31]}
5. O-O {[%clk 1:31:40]} Be7 {[%clk 1:31:50]} 6. Re1 {[%clk 1:32:01]} b5 {[%clk 1:32:11]}
7. Bb3 {[%clk 1:32:20]} d6 {[%clk 1:32:30]} 8. c3 {[%clk 1:32:41]} O-O {[%clk 1:32:50]}
9. h3 {[%clk 1:33:01]} Nb8 {[%clk 1:20:11]} 10. d4 {[%clk 1:25:40]} Nbd7 {[%clk 1:19:02]} 1-0
"""

GAME_B = """[Event "Overlay Test Open"]
[Site "Test"]
[Round "3"]
[Board "2"]
[White "Polgar, Judit"]
[Black "Kasparov, Garry"]
[WhiteTitle "GM"]
[BlackTitle "GM"]
[WhiteElo "2681"]
[BlackElo "2812"]
[Result "*"]

1. d4 Nf6 2. c4 g6 3. Nc3 Bg7 4. e4 d6 5. Nf3 O-O 6. Be2 e5 7. O-O Nc6 8. d5 Ne7 *
"""

XSS_NAME = "<img src=x onerror=alert(1)>"

GAME_XSS = f"""[Event "Overlay Test Open"]
[Site "Test"]
[Round "3"]
[Board "3"]
[White "{XSS_NAME}"]
[Black "Tal, Mikhail"]
[WhiteElo "2400"]
[BlackElo "2705"]
[Result "*"]

1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6 *
"""


# ------------------------------------------------------------------ the replay


class ReplayThread:
    """A :class:`Replay` (PGN over HTTP) running on its own event loop thread,
    advanced by the (synchronous) test."""

    def __init__(self, pgn_text: str) -> None:
        from livegain.relay.replay import Replay

        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

        async def make() -> Replay:
            r = Replay.from_pgn(pgn_text, mode="pgn-http", seconds_per_move=1.0)
            await r.start(autoplay=False)
            return r

        self.replay = self._call(make())

    def _call(self, coro: Any, timeout: float = 10.0) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    @property
    def url(self) -> str:
        return str(self.replay.pgn_url)

    @property
    def total_plies(self) -> int:
        return int(self.replay.total_plies)

    def advance(self, n: int = 1) -> int:
        return int(self._call(self.replay.advance(n)))

    def reset(self) -> None:
        """Back to the start of the round: every board is reset to no moves."""
        self._call(self.replay.reset())

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._call(self.replay.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


# ------------------------------------------------------------------ a network that goes silent


class SilentLinkProxy:
    """A TCP relay to the service that can go silent without closing anything:
    what a dropped Wi-Fi or a dead NAT entry looks like to a browser (a real
    network cannot be made to do that on demand)."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.flowing = asyncio.Event()
        self.flowing.set()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self._writers: list[asyncio.StreamWriter] = []
        self.server = asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(5)
        self.port = int(self.server.sockets[0].getsockname()[1])

    async def _start(self) -> asyncio.Server:
        return await asyncio.start_server(self._client, "127.0.0.1", 0)

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.append(writer)
        await self.flowing.wait()  # hold new connections without an answer
        try:
            up_r, up_w = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.close()
            return
        self._writers.append(up_w)

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(Exception):
                while data := await src.read(65536):
                    await self.flowing.wait()  # silent: neither deliver nor close
                    dst.write(data)
                    await dst.drain()
            with contextlib.suppress(Exception):
                dst.close()

        await asyncio.gather(pipe(reader, up_w), pipe(up_r, writer))

    def go_silent(self) -> None:
        self.loop.call_soon_threadsafe(self.flowing.clear)

    def restore(self) -> None:
        """The network comes back; connections held while it was silent are dropped."""

        def drop() -> None:
            for w in self._writers:
                with contextlib.suppress(Exception):
                    w.transport.abort()
            self._writers.clear()
            self.flowing.set()

        self.loop.call_soon_threadsafe(drop)

    def close(self) -> None:
        self.restore()
        self.loop.call_soon_threadsafe(self.server.close)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


# ------------------------------------------------------------------ the service


class StaticServer:
    """The real :class:`LiveServer` (HTTP + WebSocket, no boards) on its own loop thread."""

    def __init__(self) -> None:
        from livegain.publish.server import LiveServer

        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.server = LiveServer("127.0.0.1", 0)
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(10)
        self.url = f"http://127.0.0.1:{self.server.port}"

    def set_board(self, state: Any) -> None:
        """Publish a whole board (a ``BoardState``) as the service would."""
        self.loop.call_soon_threadsafe(self.server.set_board, state)

    def publish(self, update: Any, state: Any) -> None:
        """Publish one ``Update`` and the board state after it."""
        self.loop.call_soon_threadsafe(self.server.publish, update, state)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self.server.close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


def _toml_str(s: str) -> str:
    return json.dumps(s)  # a JSON string is a valid TOML basic string


class Serve:
    """``livegain serve --config <tmp>.toml`` as a subprocess on a fixed free port."""

    def __init__(
        self,
        tmp: Path,
        feed_url: str,
        engine: str,
        *,
        depth: int = 6,
        matches: str = "",
        perceived_model: Path | None = None,
    ) -> None:
        self.tmp = tmp
        self.port = free_port()
        self.config = tmp / "livegain.toml"
        self.log_path = tmp / "serve.log"
        # the calibrated model: the given file, else the shipped one
        model = (
            ""
            if perceived_model is None
            else f"perceived_model = {_toml_str(str(perceived_model))}\n"
        )
        self.config.write_text(
            f"data_dir = {_toml_str(str(tmp / 'data'))}\n"
            "persist = true\n\n"
            f'[server]\nhost = "127.0.0.1"\nport = {self.port}\n\n'
            f"[engine]\npath = {_toml_str(engine)}\ndepth = {depth}\nworkers = 1\n{model}\n"
            f'[[feeds]]\ntype = "pgn-http"\nurl = {_toml_str(feed_url)}\ninterval = 0.2\n\n'
            f"{matches}\n"
            '[log]\nlevel = "warning"\n'
        )
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def command(self) -> list[str]:
        return [sys.executable, "-m", "livegain.cli", "serve", "--config", str(self.config)]

    def start(self, timeout: float = 30.0) -> None:
        log = self.log_path.open("ab")
        env = dict(os.environ)
        env.pop("LIVEGAIN_SERVER__PORT", None)
        self.proc = subprocess.Popen(
            self.command(), stdout=log, stderr=subprocess.STDOUT, cwd=REPO, env=env
        )
        log.close()

        def up() -> bool:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(f"serve exited with {self.proc.returncode}")
            with urllib.request.urlopen(f"{self.url}/healthz", timeout=1) as r:
                return bool(r.status == 200)

        try:
            wait_until(up, timeout, "livegain serve to answer /healthz")
        except AssertionError:
            self.stop()
            tail = self.log_path.read_text(errors="replace")[-3000:]
            raise AssertionError(f"livegain serve did not start; log:\n{tail}") from None

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None

    def boards(self) -> list[dict[str, Any]]:
        with urllib.request.urlopen(f"{self.url}/api/boards", timeout=2) as r:
            data: list[dict[str, Any]] = json.loads(r.read())
            return data


# ------------------------------------------------------------------ a WebSocket client


class WsWatcher:
    """A real WebSocket client: subscribes and keeps the latest snapshot and update per board."""

    def __init__(self, ws_url: str, boards: list[str] | str = "*") -> None:
        from websockets.sync.client import connect

        self.stack = contextlib.ExitStack()
        self.ws = self.stack.enter_context(connect(ws_url, open_timeout=5))
        self.hello = json.loads(self.ws.recv(timeout=5))
        assert self.hello["type"] == "hello", self.hello
        self.snapshots: dict[str, dict[str, Any]] = {}
        self.updates: dict[str, list[dict[str, Any]]] = {}
        self.lock = threading.Lock()
        self.closed = False
        self.ws.send(json.dumps({"type": "subscribe", "boards": boards}))
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        with contextlib.suppress(Exception):
            for raw in self.ws:
                msg = json.loads(raw)
                with self.lock:
                    if msg["type"] == "snapshot":
                        self.snapshots[msg["state"]["board_id"]] = msg["state"]
                        self.updates[msg["state"]["board_id"]] = []
                    elif msg["type"] == "update":
                        self.updates.setdefault(msg["board_id"], []).append(msg)
        self.closed = True

    def last_update(self, board_id: str) -> dict[str, Any] | None:
        with self.lock:
            ups = self.updates.get(board_id) or []
            return ups[-1] if ups else None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.stack.close()
        self.thread.join(5)


def fresh_state(ws_url: str, board_id: str, timeout: float = 5.0) -> dict[str, Any]:
    """A fresh snapshot of one board, from a new connection."""
    from websockets.sync.client import connect

    with connect(ws_url, open_timeout=timeout) as ws:
        ws.send(json.dumps({"type": "subscribe", "boards": [board_id]}))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = json.loads(ws.recv(timeout=timeout))
            if msg["type"] == "snapshot" and msg["state"]["board_id"] == board_id:
                state: dict[str, Any] = msg["state"]
                return state
    raise AssertionError(f"no snapshot of {board_id} within {timeout} s")


def settled(state: dict[str, Any], plies: int) -> bool:
    """Every revealed ply is on the board and evaluated, ratings known (Algorithm 4's
    always; the calibrated one comes with it, or is null without a model)."""
    moves = state["moves"]
    return (
        len(moves) == plies
        and all(m["gain"] is not None for m in moves)
        and state["eval"] is not None
        and (plies < 1 or state["white_algorithm4"] is not None)
        and (plies < 2 or state["black_algorithm4"] is not None)
    )


def wait_settled(serve: Serve, board_id: str, plies: int, timeout: float = 40.0) -> dict[str, Any]:
    def check() -> dict[str, Any] | None:
        st = fresh_state(serve.ws_url, board_id)
        return st if settled(st, plies) else None

    result: dict[str, Any] = wait_until(
        check, timeout, f"{board_id} to be evaluated to ply {plies}", 0.25
    )
    return result


def board_id_of(serve: Serve, white: str, timeout: float = 20.0) -> str:
    def find() -> str | None:
        for b in serve.boards():
            if b["white"]["name"] == white:
                return str(b["board_id"])
        return None

    found: str = wait_until(find, timeout, f"a board with White {white!r}")
    return found


def save_artifact(page: Any, name: str, **kwargs: Any) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path), **kwargs)
    return path


def standings_api(serve: Serve, event: str) -> dict[str, Any] | None:
    """The event's standings message from ``/api/standings`` (None: none yet)."""
    import urllib.error
    import urllib.parse

    try:
        url = f"{serve.url}/api/standings/{urllib.parse.quote(event)}"
        with urllib.request.urlopen(url, timeout=2) as r:
            data: dict[str, Any] = json.loads(r.read())
            return data
    except urllib.error.HTTPError:
        return None


@contextlib.contextmanager
def serving_played(tmp: Path, pgn: str, engine_path: str, events_toml: str) -> Iterator[Serve]:
    """A ``livegain serve`` with ``events_toml`` following a replay of ``pgn``,
    every move of it revealed at once."""
    replay = ReplayThread(pgn)
    serve = Serve(tmp, replay.url, engine_path, matches=events_toml)
    try:
        serve.start()
        replay.advance(len(replay.replay.timeline))
        yield serve
    finally:
        serve.stop()
        replay.close()
