"""deploy/: the broker configuration locks the doors, checked on a real Mosquitto.

The compose file cannot be started here (no Docker daemon), but its broker
configuration, ACL and password script can: the test runs Debian's Mosquitto
on ``deploy/mosquitto.conf`` (paths and port moved into a temp dir) with the
password file ``deploy/broker-users.sh`` makes, and checks who may do what.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import re
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import aiomqtt
import pytest
from brokers import MOSQUITTO, free_port, port_open
from conftest import need
from feeds.conftest import RecordingSink, cancel, run_feed

from livegain.feeds.base import MqttFeedConfig
from livegain.feeds.mqtt import MqttFeed
from livegain.feeds.mqtt_ingest import move_event

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"


WORKERS = ("worker", "worker2")
"""The engine worker users the test broker has: `worker` (deploy/acl's own)
and one more (its ACL section written by broker-users.sh)."""


class DeployBroker:
    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = free_port()
        secrets = workdir / "secrets"
        subprocess.run([str(DEPLOY / "broker-users.sh"), str(secrets), *WORKERS], check=True)
        self.passwords = dict(
            re.match(r"BROKER_(\w+)_PASSWORD=(\S+)", line).groups()  # type: ignore[union-attr]
            for line in (secrets / "broker.env").read_text().splitlines()
        )
        for user, password in self.passwords.items():  # each user's own file: that one only
            own = (secrets / f"{user.lower()}.env").read_text()
            assert own == f"BROKER_{user}_PASSWORD={password}\n"
        self.ingest_port = free_port()
        conf = (DEPLOY / "mosquitto.conf").read_text()
        conf = conf.replace("listener 1883\n", f"listener {self.port} 127.0.0.1\n")
        conf = conf.replace("listener 1884\n", f"listener {self.ingest_port} 127.0.0.1\n")
        conf = conf.replace("/mosquitto/config/passwd", str(secrets / "passwd"))
        acl = (secrets / "acl").read_text()
        assert acl.startswith((DEPLOY / "acl").read_text())  # deploy/acl, and worker2's
        assert "\nuser worker2\ntopic read livegain/engine/jobs/+/worker2\n" in acl
        conf = conf.replace("/mosquitto/config/acl", str(secrets / "acl"))
        (workdir / "data").mkdir()
        conf = conf.replace("/mosquitto/data/", f"{workdir / 'data'}/")
        conf = conf.replace("log_dest stdout", f"log_dest file {workdir / 'log'}")
        conf += f"user {getpass.getuser()}\n"
        (workdir / "mosquitto.conf").write_text(conf)
        self.proc = subprocess.Popen(
            [MOSQUITTO, "-c", str(workdir / "mosquitto.conf")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for _ in range(200):
            if port_open("127.0.0.1", self.port, 0.1):
                return
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                raise RuntimeError(f"mosquitto exited on deploy/mosquitto.conf: {err}")
            time.sleep(0.05)
        raise RuntimeError("mosquitto did not open its port")

    def client(self, user: str | None, *, port: int | None = None, **kw: object) -> aiomqtt.Client:
        """A client of ``user`` with its own password; by default on the main
        listener, with an id of the form the broker requires (``livegain-``)."""
        password = self.passwords[user.upper()] if user else None
        kw.setdefault("identifier", f"livegain-test-{uuid.uuid4().hex}")
        return aiomqtt.Client(
            "127.0.0.1",
            port or self.port,
            username=user,
            password=password,
            protocol=aiomqtt.ProtocolVersion.V5,
            **kw,  # type: ignore[arg-type]
        )

    def log(self) -> str:
        path = self.workdir / "log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[DeployBroker]:
    need(
        Path(MOSQUITTO).exists() and shutil.which("mosquitto_passwd") is not None,
        "mosquitto / mosquitto_passwd not installed (make test installs them)",
    )
    b = DeployBroker(tmp_path)
    try:
        yield b
    finally:
        b.stop()


async def _received(client: aiomqtt.Client, wait: float) -> list[tuple[str, bytes]]:
    got: list[tuple[str, bytes]] = []

    async def read() -> None:
        async for msg in client.messages:
            got.append((str(msg.topic), bytes(msg.payload)))  # type: ignore[arg-type]

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(read(), wait)
    return got


async def test_anonymous_and_wrong_password_are_refused(broker: DeployBroker) -> None:
    with pytest.raises(aiomqtt.MqttError):
        async with broker.client(None):
            pass
    with pytest.raises(aiomqtt.MqttError):
        async with aiomqtt.Client(
            "127.0.0.1", broker.port, username="relay", password="not-the-password"
        ):
            pass


async def test_acl_relay_feeds_service_publishes_viewer_reads(broker: DeployBroker) -> None:
    async with (
        broker.client("livegain") as service,
        broker.client("viewer") as viewer,
        broker.client("relay") as relay,
    ):
        await service.subscribe("livegain/in/#", qos=1)
        await viewer.subscribe("livegain/#", qos=1)
        # The relay feeds a move: the service gets it, the viewer may not read it.
        await relay.publish("livegain/in/t/1/1", b'{"seq": 1, "ply": 1, "san": "e4"}', qos=1)
        # A viewer's publish is refused, on results and on the ingest.
        await viewer.publish("livegain/out/t/state", b"forged", qos=1)
        await viewer.publish("livegain/in/t/1/1", b"forged", qos=1)
        # The relay may not write results either.
        await relay.publish("livegain/out/t/state", b"forged by relay", qos=1)
        # The service publishes a result: the viewer reads it.
        await service.publish("livegain/out/t/state", b"real", qos=1)
        got_service = await _received(service, 1.0)
        got_viewer = await _received(viewer, 1.0)
    assert got_service == [("livegain/in/t/1/1", b'{"seq": 1, "ply": 1, "san": "e4"}')]
    assert got_viewer == [("livegain/out/t/state", b"real")]


async def test_acl_worker_takes_its_own_jobs_and_answers_nothing_else(
    broker: DeployBroker,
) -> None:
    """A worker user reads the jobs given to it and no other worker's, writes
    results and its presence under its own name only; the service gives jobs
    and reads results and presence; a worker can neither read nor write boards
    or moves, nor answer, clear or fake in another worker's name."""
    jobs = "livegain/engine/jobs/0123456789abcdef"
    async with (
        broker.client("livegain") as service,
        broker.client("worker", identifier="livegain-w1") as worker,
        broker.client("worker2", identifier="livegain-w2") as worker2,
        broker.client("viewer") as viewer,
        broker.client("relay") as relay,
    ):
        await service.subscribe("livegain/engine/results/#", qos=1)
        await service.subscribe("livegain/engine/workers/+", qos=1)
        await worker.subscribe(f"{jobs}/+", qos=1)  # granted: its own only
        await worker.subscribe("livegain/in/#", qos=1)  # refused: not its business
        await worker.subscribe("livegain/out/#", qos=1)
        await worker.subscribe("livegain/engine/results/#", qos=1)  # other workers' results
        await worker.subscribe("livegain/engine/workers/+", qos=1)
        await worker2.subscribe(f"{jobs}/worker", qos=1)  # another worker's jobs: refused
        await viewer.subscribe("livegain/engine/#", qos=1)
        await service.publish(f"{jobs}/worker", b"job", qos=1)
        await service.publish(f"{jobs}/worker2", b"job for worker2", qos=1)
        await worker.publish("livegain/engine/results/svc/worker", b"result", qos=1)
        await worker.publish("livegain/engine/workers/worker", b"presence", qos=1)
        # what a worker may not do: feed moves, forge results, give jobs out,
        # answer or announce in another worker's name, clear its presence
        await worker.publish("livegain/in/t/1/1", b"forged move", qos=1)
        await worker.publish("livegain/out/t/state", b"forged state", qos=1)
        await worker.publish(f"{jobs}/worker2", b"forged job", qos=1)
        await worker2.publish("livegain/engine/results/svc/worker", b"in worker's name", qos=1)
        await worker2.publish("livegain/engine/workers/worker", b"fake presence", qos=1)
        await worker2.publish("livegain/engine/workers/worker", b"", qos=1, retain=True)
        await worker2.publish("livegain/engine/results/svc", b"no worker level", qos=1)
        # nor may the others answer jobs or pose as workers
        await relay.publish("livegain/engine/results/svc/worker", b"forged result", qos=1)
        await viewer.publish("livegain/engine/workers/viewer", b"forged presence", qos=1)
        await relay.publish(f"{jobs}/worker", b"relay job", qos=1)
        await relay.publish("livegain/in/t/1/1", b'{"seq": 1, "ply": 1, "san": "e4"}', qos=1)
        await service.publish("livegain/out/t/state", b"real", qos=1)
        got_worker = await _received(worker, 1.0)
        got_worker2 = await _received(worker2, 0.5)
        got_service = await _received(service, 1.0)
        got_viewer = await _received(viewer, 0.5)
    assert got_worker == [(f"{jobs}/worker", b"job")]
    assert got_worker2 == []
    assert sorted(got_service) == [
        ("livegain/engine/results/svc/worker", b"result"),
        ("livegain/engine/workers/worker", b"presence"),
    ]
    assert got_viewer == []


async def test_acl_gateway_reads_results_and_writes_nothing(broker: DeployBroker) -> None:
    """The `gateway` user (viewer gateways) reads the service's results and
    nothing else, and can write nowhere: not a forged state for other gateways
    or sites, not a move, not an engine job."""
    async with (
        broker.client("livegain") as service,
        broker.client("gateway", identifier="livegain-g1") as gateway,
        broker.client("viewer") as viewer,
        broker.client("relay") as relay,
    ):
        await service.subscribe("livegain/in/#", qos=1)
        await service.subscribe("livegain/engine/results/#", qos=1)
        await viewer.subscribe("livegain/out/#", qos=1)
        for topic in ("livegain/out/+/state", "livegain/out/+/update", "livegain/out/status"):
            await gateway.subscribe(topic, qos=0)
        await gateway.subscribe("livegain/in/#", qos=0)  # refused: not its business
        await gateway.subscribe("livegain/engine/#", qos=0)
        # what a gateway may not do: forge results, feed moves, answer or give jobs
        await gateway.publish("livegain/out/t/state", b"forged state", qos=1)
        await gateway.publish("livegain/out/status", b"offline", qos=1)
        await gateway.publish("livegain/in/t/1/1", b"forged move", qos=1)
        await gateway.publish("livegain/engine/results/svc", b"forged result", qos=1)
        await gateway.publish("livegain/engine/jobs/0123456789abcdef", b"forged job", qos=1)
        await relay.publish("livegain/in/t/1/1", b"ingest", qos=1)  # not for gateways
        await service.publish("livegain/engine/jobs/0123456789abcdef", b"job", qos=1)
        # The service publishes results: the gateway reads them.
        await service.publish("livegain/out/t/state", b"real state", qos=1, retain=True)
        await service.publish("livegain/out/t/update", b"real update", qos=1)
        await service.publish("livegain/out/status", b"online", qos=1, retain=True)
        got_gateway = await _received(gateway, 1.0)
        got_viewer = await _received(viewer, 0.5)
        got_service = await _received(service, 0.5)
    real = [
        ("livegain/out/t/state", b"real state"),
        ("livegain/out/t/update", b"real update"),
        ("livegain/out/status", b"online"),
    ]
    assert got_gateway == real
    assert got_viewer == real
    assert got_service == [("livegain/in/t/1/1", b"ingest")]


def test_compose_binds_to_loopback_and_keeps_the_broker_closed() -> None:
    text = (REPO / "docker-compose.yml").read_text()
    published = re.findall(r'^\s+- "([^"]+:\d+)"\s*$', text, flags=re.M)
    assert published, "docker-compose.yml publishes no port"
    for mapping in published:
        assert mapping.startswith("127.0.0.1:"), f"{mapping} is published beyond loopback"
    conf = (DEPLOY / "mosquitto.conf").read_text()
    assert re.search(r"^allow_anonymous false$", conf, flags=re.M)
    assert re.search(r"^password_file ", conf, flags=re.M)
    assert re.search(r"^acl_file ", conf, flags=re.M)
    # the ingest on the listener that binds its session to its user
    assert re.search(r"^clientid_prefixes livegain-$", conf, flags=re.M)
    assert re.search(r"^listener 1884\nuse_username_as_clientid true$", conf, flags=re.M)
    feeds = re.search(r"^\s+LIVEGAIN_FEEDS: '(.*)'$", text, flags=re.M)
    assert feeds and '"url": "mqtt://mosquitto:1884"' in feeds.group(1)
    # the engine workers: a service of their own, scalable (no fixed name, no port)
    worker = text.split("\n  worker:\n", 1)[1].split("\n\n", 1)[0]
    assert 'entrypoint: ["livegain", "worker"]' in worker
    assert "container_name" not in worker and "ports" not in worker
    assert "BROKER_WORKER_PASSWORD" in worker


def test_compose_runs_scalable_gateways_behind_one_port() -> None:
    """Viewers reach N gateways (`--scale gateway=N`) through one published port:
    the load balancer's, fed deploy/haproxy.cfg; the gateways log in as the
    read-only `gateway` user and are not published themselves."""
    text = (REPO / "docker-compose.yml").read_text()
    gateway = text.split("\n  gateway:\n", 1)[1].split("\n\n", 1)[0]
    assert 'entrypoint: ["livegain", "gateway"]' in gateway
    assert "container_name" not in gateway and "ports" not in gateway
    assert '"--broker-user", "gateway"' in gateway and "BROKER_GATEWAY_PASSWORD" in gateway
    assert "deploy/secrets/gateway.env" in gateway
    assert '"--port", "8080"' in gateway
    lb = text.split("\n  lb:\n", 1)[1].split("\n\n", 1)[0]
    assert '- "127.0.0.1:8080:8080"' in lb
    assert "./deploy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro" in lb
    cfg = (DEPLOY / "haproxy.cfg").read_text()
    assert re.search(r"^\s+bind :8080$", cfg, flags=re.M)
    assert re.search(r"^\s+server-template gateway \d+ gateway:8080 ", cfg, flags=re.M)
    users = (DEPLOY / "broker-users.sh").read_text()
    assert re.search(r"^for user in .*\bgateway\b", users, flags=re.M)


GAME = ["d4", "Nf6", "c4", "e6", "Nc3", "Bb4", "e3", "O-O", "Bd3", "d5", "Nf3", "c5"]


def _ingest(broker: DeployBroker, port: int, data_dir: Path) -> MqttFeed:
    """The service's MQTT ingest as docker-compose.yml configures it."""
    feed = MqttFeed(
        MqttFeedConfig(
            url=f"mqtt://127.0.0.1:{port}",
            topic="livegain/in/#",
            username="livegain",
            password=broker.passwords["LIVEGAIN"],  # type: ignore[arg-type]
            session_expiry=120,
        ),
        reconnect_delays=(0.05,),
    )
    feed.restore([], data_dir)
    return feed


async def _attack(broker: DeployBroker, port: int, identifier: str) -> str:
    """Connect as each other user with ``identifier``, stay a moment; what happened."""
    outcomes = []
    for user in ("viewer", "relay", "worker", "gateway"):
        try:
            async with broker.client(user, port=port, identifier=identifier):
                await asyncio.sleep(0.05)
            outcomes.append("connected")
        except aiomqtt.MqttError:
            outcomes.append("refused")
    return ",".join(sorted(set(outcomes)))


async def test_no_other_user_can_take_the_ingest_session(
    broker: DeployBroker, tmp_path: Path
) -> None:
    """On the deploy broker the ingest's session is bound to the `livegain`
    user: every other user, with every id the ingest could be known by (the
    id the broker keeps it under, the id it sends), on either listener, gets
    a session of its own or is refused; the ingest is never disconnected and
    keeps every ply."""
    feed = _ingest(broker, broker.ingest_port, tmp_path / "data")
    sink = RecordingSink()
    task = await run_feed(feed, sink)
    outcomes: dict[tuple[int, str], set[str]] = {}
    try:
        await asyncio.wait_for(feed.subscribed.wait(), 10)
        assert feed.client_id is not None
        targets = [
            (port, cid)
            for port in (broker.port, broker.ingest_port)
            for cid in ("livegain", feed.client_id)
        ]
        async with broker.client("relay") as relay:
            for ply, san in enumerate(GAME, start=1):
                await relay.publish("livegain/in/t/1/1", move_event(ply, ply, san), qos=1)
                port, cid = targets[ply % len(targets)]
                outcomes.setdefault((port, cid), set()).add(await _attack(broker, port, cid))
        await sink.wait_for(
            lambda: bool(sink.snapshots) and sink.snapshots[-1].moves == tuple(GAME)
        )
        assert feed.connections == 1 and feed.taken_over == 0
        assert sink.errors == []
    finally:
        await cancel(task)
    # the broker holds the ingest under its user's name, nobody else's
    assert re.search(r"New client connected from \S+ as livegain \(.*u'livegain'\)", broker.log())
    # "livegain" itself is refused everywhere (an id must begin with "livegain-")
    assert outcomes[(broker.port, "livegain")] == {"refused"}
    assert outcomes[(broker.ingest_port, "livegain")] == {"refused"}
    # the id the ingest sends connects, but as a session of the attacker's own:
    # on the main listener a session nobody holds, on the ingest listener the
    # attacker's user name
    assert outcomes[(broker.port, feed.client_id)] == {"connected"}
    assert outcomes[(broker.ingest_port, feed.client_id)] == {"connected"}
    for user in ("viewer", "relay", "worker", "gateway"):
        assert re.search(rf"New client connected from \S+ as {user} \(.*u'{user}'\)", broker.log())


async def test_without_the_binding_a_known_id_takes_the_session(
    broker: DeployBroker, tmp_path: Path
) -> None:
    """The attack the binding stops, on the listener without it: a viewer that
    knows the ingest's client id disconnects it (the ingest reports the loss
    and reconnects). Mosquitto from 2.0.15 tells the holder why (MQTT 5
    "session taken over", counted: tests/feeds/test_mqtt_session.py); 2.0.11
    only closes the connection."""
    feed = _ingest(broker, broker.port, tmp_path / "data")
    sink = RecordingSink()
    task = await run_feed(feed, sink)
    try:
        await asyncio.wait_for(feed.subscribed.wait(), 10)
        assert feed.client_id is not None
        async with broker.client("viewer", identifier=feed.client_id):
            await sink.wait_for(lambda: bool(sink.errors))
        await sink.wait_for(lambda: feed.connections == 2 and feed.connected)
        assert re.search(
            rf"Client {re.escape(feed.client_id)} .*(already connected|session taken over)",
            broker.log(),
        ), broker.log()[-2000:]
    finally:
        await cancel(task)


@pytest.fixture
def worker_process(broker: DeployBroker, tmp_path: Path) -> Iterator[str]:
    """A real `livegain worker` as the broker user `worker` (its id: its user);
    yields the broker URL."""
    import os
    import sys

    need(Path("/usr/games/stockfish").exists(), "stockfish not installed")
    url = f"mqtt://127.0.0.1:{broker.port}"
    env = dict(os.environ, BROKER_WORKER_PASSWORD=broker.passwords["WORKER"])
    with (tmp_path / "worker.log").open("wb") as log:
        proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "livegain.cli", "worker", "--broker", url),
                *("--broker-user", "worker", "--broker-password-env", "BROKER_WORKER_PASSWORD"),
                *("--workers", "1", "--depth", "6"),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=REPO,
            env=env,
        )
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)


async def test_a_worker_user_cannot_clear_or_fake_another_workers_presence(
    broker: DeployBroker, worker_process: str
) -> None:
    """A real `livegain worker` as the user `worker` (its identity: its user)
    and the service's requester as `livegain`, on the deploy broker; the user
    `worker2` clears `worker`'s retained presence, announces a fake 64-process
    `worker` on its topic, and announces itself under the name `worker` on its
    own topic: the broker drops the first two, the requester refuses the
    third, and `worker` stays accepted with its real presence, answering jobs."""
    import chess

    from livegain.engine.search import SearchLimit
    from livegain.mqtt.address import parse_mqtt_url
    from livegain.remote.evaluator import RemoteEvaluator
    from livegain.remote.protocol import Presence, decode, encode, presence_topic

    url = worker_process
    ev = RemoteEvaluator(
        parse_mqtt_url(url, username="livegain", password=broker.passwords["LIVEGAIN"]),
        SearchLimit(depth=6),
        job_timeout=10.0,
        wait_for_workers=60.0,
    )
    async with ev, broker.client("worker2") as attacker:
        real = ev.workers_seen["worker"].presence
        assert real is not None and real.worker == "worker" and ev.roster.usable("worker")
        fake = real.model_copy(update={"processes": 64, "host": "fake"})
        base = "livegain/engine/workers"
        await attacker.publish(f"{base}/worker", b"", qos=1, retain=True)  # clear
        await attacker.publish(f"{base}/worker", encode(fake), qos=1, retain=True)
        # last, on its own topic (what it may write), in worker's name: the
        # requester gets it after the two above (one publisher, in order)
        await attacker.publish(
            presence_topic("livegain/engine", "worker2"), encode(fake), qos=1, retain=True
        )
        await asyncio.wait_for(_until(lambda: "worker2" in ev.workers_seen), 30)
        refused = ev.workers_seen["worker2"]
        assert not refused.accepted
        assert "names worker 'worker' on the topic of 'worker2'" in (refused.reason or "")
        info = ev.workers_seen["worker"]
        assert info.accepted and info.presence == real  # never cleared, never replaced
        assert ev.roster.usable("worker") and not ev.roster.usable("worker2")
        assert ev.capacity() == 2  # 1 process x prefetch 2: not the fake's 64
        # the broker keeps the real presence retained
        async with broker.client("livegain") as reader:
            await reader.subscribe(f"{base}/worker", qos=1)
            async for message in reader.messages:
                kept = decode(bytes(message.payload))  # type: ignore[arg-type]
                assert isinstance(kept, Presence) and kept == real
                break
        # and the worker takes jobs and answers them, as itself
        got = await asyncio.wait_for(ev.evaluate(chess.Board()), 60)
        assert got.depth == 6 and ev.results_by["worker"] == 1
        status = {x["worker"]: x for x in ev.workers_status()["workers"]}
        assert status["worker"]["accepted"] and status["worker"]["processes"] == 1
        assert status["worker2"]["accepted"] is False


async def _until(cond: Callable[[], bool]) -> None:
    while not cond():  # noqa: ASYNC110 - the requester's task changes it
        await asyncio.sleep(0.02)
