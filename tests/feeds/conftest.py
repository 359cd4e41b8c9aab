"""Feed test helpers: a recording sink, the real broker, a private broker for restarts."""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from livegain.core.events import GameSnapshot

BROKER_HOST = "127.0.0.1"
BROKER_PORT = 1883


@dataclass
class RecordingSink:
    """A FeedSink that records everything and lets a test wait for a condition."""

    snapshots: list[GameSnapshot] = field(default_factory=list)
    errors: list[tuple[str, str, str]] = field(default_factory=list)
    _event: asyncio.Event | None = None

    def snapshot(self, snap: GameSnapshot) -> None:
        self.snapshots.append(snap)
        self._wake()

    def error(self, source: str, where: str, message: str) -> None:
        self.errors.append((source, where, message))
        self._wake()

    def _wake(self) -> None:
        if self._event is not None:
            self._event.set()

    def latest(self) -> dict[object, GameSnapshot]:
        """The last snapshot per game (GameId, else round/board/players)."""
        out: dict[object, GameSnapshot] = {}
        for s in self.snapshots:
            key = s.game_id or (s.round, s.board, s.white.name, s.black.name)
            out[key] = s
        return out

    def by_board(self) -> dict[int | None, GameSnapshot]:
        return {s.board: s for s in self.snapshots}

    def error_text(self) -> str:
        return "\n".join(" | ".join(e) for e in self.errors)

    async def wait_for(self, predicate: Callable[[], bool], within: float = 10.0) -> None:
        if self._event is None:
            self._event = asyncio.Event()
        try:
            async with asyncio.timeout(within):
                while not predicate():
                    self._event.clear()
                    # woken by the sink, or re-check every 20 ms (predicates on other state)
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(0.02):
                            await self._event.wait()
        except TimeoutError:
            raise AssertionError(
                f"condition not met in {within} s; {len(self.snapshots)} snapshots, "
                f"errors:\n{self.error_text()}"
            ) from None


@pytest.fixture
def sink() -> RecordingSink:
    return RecordingSink()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


@pytest.fixture
def broker() -> str:
    """The shared real broker at 127.0.0.1:1883 (skip when it is not running)."""
    if not port_open(BROKER_HOST, BROKER_PORT):
        pytest.skip("no MQTT broker at 127.0.0.1:1883")
    return f"mqtt://{BROKER_HOST}:{BROKER_PORT}"


@pytest.fixture
def unique() -> str:
    return uuid.uuid4().hex[:10]


class PrivateBroker:
    """A mosquitto of our own on a free port, with persistence, that tests may restart."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.conf = workdir / "mosquitto.conf"
        self.conf.write_text(
            f"listener {self.port} 127.0.0.1\n"
            # run as root, mosquitto would switch to the "mosquitto" user, which cannot
            # write its persistence file in our temp dir: stay who we are
            f"user {getpass.getuser()}\n"
            "allow_anonymous true\n"
            "persistence true\n"
            f"persistence_location {workdir}/\n"
            f"log_dest file {workdir}/mosquitto.log\n"
        )
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self) -> None:
        exe = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
        self.proc = subprocess.Popen(
            [exe, "-c", str(self.conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 10
        while not port_open("127.0.0.1", self.port, 0.2):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"private mosquitto did not start: {self.log()}")
            time.sleep(0.05)

    def stop(self) -> None:
        """SIGTERM (mosquitto saves its persistence file on a clean exit) and wait."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self.proc = None

    def log(self) -> str:
        p = self.workdir / "mosquitto.log"
        return p.read_text(errors="replace")[-2000:] if p.exists() else ""


@pytest.fixture
def private_broker(tmp_path: Path) -> Iterator[PrivateBroker]:
    if not (shutil.which("mosquitto") or os.path.exists("/usr/sbin/mosquitto")):
        pytest.skip("mosquitto not installed")
    b = PrivateBroker(tmp_path)
    b.start()
    try:
        yield b
    finally:
        b.stop()


async def run_feed(feed: object, sink: RecordingSink) -> asyncio.Task[None]:
    """Start ``feed.run(sink)`` as a task (the caller cancels it)."""
    return asyncio.create_task(feed.run(sink))  # type: ignore[attr-defined]


async def cancel(task: asyncio.Task[None]) -> None:
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    else:  # a feed's run() must never return on its own
        raise AssertionError("feed task ended by itself")
