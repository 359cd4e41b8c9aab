"""deploy/haproxy.cfg in front of real `livegain gateway` processes.

Docker cannot run here, so the compose file's load balancer is checked on its
own: Debian's HAProxy runs deploy/haproxy.cfg with its port moved and the
gateways named directly (the file finds them through Docker's DNS), in front
of two gateways fed by a real Mosquitto. Viewers connect to the one port; one
gateway is killed; they all end on the other and keep receiving updates.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiomqtt
import pytest
from brokers import PrivateBroker, free_port, port_open
from conftest import need
from publish.helpers import board_state, update_for
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from livegain.publish.schema import Snapshot

pytestmark = [pytest.mark.broker, pytest.mark.slow, pytest.mark.timeout(120)]

REPO = Path(__file__).resolve().parents[2]
HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"
PREFIX = "livegain/out"


def health(port: int) -> Any:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as answer:
        return json.loads(answer.read())


def haproxy_config(port: int, gateways: list[int]) -> str:
    """deploy/haproxy.cfg listening on ``port``, with these gateways instead of Docker's DNS."""
    cfg = (REPO / "deploy" / "haproxy.cfg").read_text()
    cfg, bound = re.subn(r"(?m)^(\s+)bind :8080$", rf"\1bind 127.0.0.1:{port}", cfg)
    servers = "\n".join(f"    server gw{i} 127.0.0.1:{p}" for i, p in enumerate(gateways))
    cfg, templated = re.subn(r"(?m)^\s+server-template gateway .*$", servers, cfg)
    assert bound == 1 and templated == 1, "deploy/haproxy.cfg changed shape"
    # within this process's limit on open files (the container raises its own)
    return cfg.replace("maxconn 200000", "maxconn 2000")


@pytest.fixture
def haproxy_bin() -> str:
    need(Path(HAPROXY).exists(), f"{HAPROXY} not installed (apt-get install haproxy)")
    return HAPROXY


def spawn_gateway(broker: PrivateBroker, log: Path, port: int) -> subprocess.Popen[bytes]:
    args = ["--broker", broker.url, "--host", "127.0.0.1", "--port", str(port)]
    with log.open("wb") as err:
        return subprocess.Popen(
            [sys.executable, "-m", "livegain.cli", "gateway", *args],
            stdout=subprocess.PIPE,
            stderr=err,
            # every viewer comes from the load balancer's address
            env={**os.environ, "LIVEGAIN_SERVER__MAX_CONNECTIONS_PER_IP": "0"},
        )


@contextlib.asynccontextmanager
async def gateway(
    broker: PrivateBroker, log: Path
) -> AsyncIterator[tuple[subprocess.Popen[bytes], int]]:
    port = free_port()
    proc = spawn_gateway(broker, log, port)
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 30)
        assert b" is live at " in line, line
        yield proc, port
    finally:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def load_balancer(binary: str, workdir: Path, gateways: list[int]) -> Iterator[int]:
    port = free_port()
    cfg = workdir / "haproxy.cfg"
    cfg.write_text(haproxy_config(port, gateways))
    check = subprocess.run([binary, "-c", "-f", str(cfg)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    proc = subprocess.Popen(
        [binary, "-db", "-f", str(cfg)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        for _ in range(100):
            if port_open("127.0.0.1", port, 0.1):
                break
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        yield port
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)


class Viewer:
    """Connects through the load balancer, and again whenever the connection drops."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.connections = 0
        self.seqs: list[int] = []
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while True:
            with contextlib.suppress(OSError, ConnectionClosed, InvalidHandshake, TimeoutError):
                async with connect(self.url, open_timeout=5, proxy=None) as ws:
                    self.connections += 1
                    await ws.send(json.dumps({"type": "subscribe", "boards": "*"}))
                    async for raw in ws:
                        msg = json.loads(raw)
                        if msg["type"] == "snapshot":
                            self.seqs.append(msg["state"]["seq"])
                        elif msg["type"] == "update":
                            self.seqs.append(msg["seq"])
            await asyncio.sleep(0.2)

    async def stop(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


async def until(cond: Any, what: str, wait: float = 30.0) -> None:
    for _ in range(int(wait / 0.05)):
        if cond():
            return
        await asyncio.sleep(0.05)
    raise TimeoutError(what)


async def test_viewers_through_the_load_balancer_survive_a_gateway(
    tmp_path: Path, private_broker: PrivateBroker, haproxy_bin: str
) -> None:
    state = board_state("t-r1-b1", plies=2, seq=2)
    async with contextlib.AsyncExitStack() as stack:
        service = await stack.enter_async_context(aiomqtt.Client("127.0.0.1", private_broker.port))
        await service.publish(f"{PREFIX}/status", b"online", qos=1, retain=True)
        snapshot = Snapshot(state=state).model_dump_json().encode()
        await service.publish(f"{PREFIX}/t-r1-b1/state", snapshot, qos=1, retain=True)
        a, port_a = await stack.enter_async_context(gateway(private_broker, tmp_path / "a.log"))
        _, port_b = await stack.enter_async_context(gateway(private_broker, tmp_path / "b.log"))
        lb = stack.enter_context(load_balancer(haproxy_bin, tmp_path, [port_a, port_b]))
        views = [Viewer(f"ws://127.0.0.1:{lb}/ws") for _ in range(10)]
        try:
            await until(lambda: all(v.seqs == [2] for v in views), "every viewer has the board")
            counts = [(await asyncio.to_thread(health, p))["clients"] for p in (port_a, port_b)]
            assert sum(counts) == 10 and min(counts) > 0, counts  # both gateways took some
            a.send_signal(signal.SIGKILL)
            a.wait()
            # Their viewers reconnect to the same address and land on b.
            for _ in range(400):
                if (await asyncio.to_thread(health, port_b))["clients"] == 10:
                    break
                await asyncio.sleep(0.05)
            else:
                raise TimeoutError("not every viewer on gateway b")
            update = update_for(board_state("t-r1-b1", plies=3, seq=3))
            await service.publish(
                f"{PREFIX}/t-r1-b1/update", update.model_dump_json().encode(), qos=1
            )
            await until(lambda: all(v.seqs[-1] == 3 for v in views), "every viewer has seq 3")
        finally:
            for v in views:
                await v.stop()
        moved = [v for v in views if v.connections == 2]
        assert len(moved) == counts[0]
        for v in moved:
            assert v.seqs == [2, 2, 3]  # a fresh snapshot on the new gateway, then the update
