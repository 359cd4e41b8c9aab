"""``livegain worker``: an engine pool that takes evaluation jobs from the broker.

The worker starts its :class:`~livegain.engine.pool.EnginePool`, connects
(MQTT 5, clean session, reconnecting with back-off), announces itself with a
retained :class:`~livegain.remote.protocol.Presence` on
``{prefix}/workers/{worker}`` (its MQTT will clears it when the process or its
connection dies) and subscribes to the jobs given to it, of its own engine
key: ``{prefix}/jobs/{engine_id}/{worker}`` (direct assignment, protocol v2:
the requester picks the worker of each job).

Its id is its identity: the last level of its presence, jobs and results
topics. On a broker with users it defaults to the broker user (on the deploy
broker only that user may write that presence and those results and read
those jobs: deploy/acl); otherwise ``livegain-worker-{host}-{random}``.

Each job is checked (valid message, this worker's engine key and limit, a
legal position, a ``reply_to`` of its own under the results topic), searched
on the pool (its ``priority`` kept) and answered on the job's ``reply_to``.
A job whose deadline has passed is skipped: its requester has given it to
another worker already. Results finished while the
broker is away are kept and sent after the reconnect; the last
``memory`` results are kept too, so a job given out again (after a deadline
or a reconnect) that comes back here is answered at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
from collections import OrderedDict, deque
from dataclasses import dataclass

import aiomqtt
import chess
import structlog

from livegain import __version__
from livegain.core.evaluation import Evaluation
from livegain.engine.errors import EngineError
from livegain.engine.pool import EnginePool
from livegain.mqtt.address import BrokerAddress
from livegain.mqtt.client import connect, instance_name, payload_bytes, unique_client_id
from livegain.mqtt.reconnect import reconnect_forever
from livegain.mqtt.topics import topic_safe
from livegain.remote.protocol import (
    DEFAULT_PREFIX,
    Eval,
    Job,
    Limit,
    Presence,
    ProtocolError,
    Result,
    decode,
    encode,
    jobs_topic,
    presence_topic,
)

log = structlog.get_logger("livegain.remote.worker")

RESULT_MEMORY = 10_000


@dataclass
class WorkerStats:
    connects: int = 0
    jobs: int = 0
    answered: int = 0
    from_memory: int = 0
    errors: int = 0
    refused: int = 0
    expired: int = 0
    bad: int = 0


class EngineWorker:
    """Evaluate the broker's jobs on ``pool`` (started and closed by :meth:`run`)."""

    def __init__(
        self,
        broker: BrokerAddress,
        pool: EnginePool,
        *,
        prefix: str = DEFAULT_PREFIX,
        worker_id: str | None = None,
        backoff_max: float = 10.0,
        memory: int = RESULT_MEMORY,
    ) -> None:
        self.broker = broker
        self.pool = pool
        self.prefix = prefix.rstrip("/")
        self.worker_id = worker_id or broker.username or instance_name("worker")
        if topic_safe(self.worker_id) != self.worker_id:
            raise ValueError(
                f"worker id {self.worker_id!r}: no '/', '+', '#' or control characters"
            )
        # Its MQTT client id is apart from its id (which /healthz and the
        # presence topic show): whoever knows a client id can take the session.
        self.client_id = unique_client_id("worker")
        self.backoff_max = backoff_max
        self.memory = memory
        self.stats = WorkerStats()
        self.connected = False
        self.subscribed = asyncio.Event()
        self.limit = Limit(depth=pool.limit.depth, nodes=pool.limit.nodes)
        self._remembered: OrderedDict[str, Evaluation] = OrderedDict()
        self._outbox: deque[tuple[str, bytes]] = deque()
        self._out_wake = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._started = time.time()

    @property
    def presence_topic(self) -> str:
        return presence_topic(self.prefix, self.worker_id)

    @property
    def jobs_topic(self) -> str:
        return jobs_topic(self.prefix, self.pool.engine_key, self.worker_id)

    def presence(self) -> Presence:
        return Presence(
            worker=self.worker_id,
            host=socket.gethostname(),
            engine_name=self.pool.engine_name,
            engine_key=self.pool.engine_key,
            jobs_topic=self.jobs_topic,
            limit=self.limit,
            hash_mb=self.pool.hash_mb,
            processes=self.pool.workers,
            cores=os.cpu_count() or 1,
            livegain=__version__,
            started=self._started,
        )

    async def run(self) -> None:
        """Start the pool, then take jobs until cancelled (the pool is closed then)."""
        await self.pool.start()
        log.info(
            "worker_started",
            worker=self.worker_id,
            engine=self.pool.describe(),
            processes=self.pool.workers,
            broker=str(self.broker),
        )
        try:
            await self._connect_forever()
        finally:
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await self.pool.close()

    async def _connect_forever(self) -> None:
        await reconnect_forever(
            self._connection, lambda: self.stats.connects, self._lost, most=self.backoff_max
        )

    async def _connection(self) -> None:
        will = aiomqtt.Will(self.presence_topic, b"", qos=1, retain=True)
        try:
            async with connect(self.broker, self.client_id, will=will, keepalive=15) as client:
                await self._session(client)
        finally:
            self.connected = False
            self.subscribed.clear()

    def _lost(self, exc: Exception, retry_in: float) -> None:
        log.warning(
            "worker_disconnected", broker=str(self.broker), error=str(exc), retry_in=retry_in
        )

    async def _session(self, client: aiomqtt.Client) -> None:
        # Subscribed before announced: a requester gives out jobs as soon as it
        # sees the presence, and a job published before the subscription would
        # reach no worker (it would wait out its deadline).
        await client.subscribe(self.jobs_topic, qos=1)
        await client.publish(self.presence_topic, encode(self.presence()), qos=1, retain=True)
        self.connected = True
        self.subscribed.set()
        self.stats.connects += 1
        log.info("worker_connected", worker=self.worker_id, broker=str(self.broker))
        sender = asyncio.create_task(self._send(client))
        try:
            async for message in client.messages:
                self._on_message(message)
            raise aiomqtt.MqttError("connection closed")
        except asyncio.CancelledError:
            # A clean stop: clear the presence ourselves (the will is not sent).
            with contextlib.suppress(Exception):
                await client.publish(self.presence_topic, b"", qos=1, retain=True, timeout=1.0)
            raise
        finally:
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
                await sender

    async def _send(self, client: aiomqtt.Client) -> None:
        while True:
            while self._outbox:
                topic, data = self._outbox[0]
                await client.publish(topic, data, qos=1)
                self._outbox.popleft()  # only once the broker has it
            self._out_wake.clear()
            await self._out_wake.wait()

    def _reply(self, job: Job, evaluation: Evaluation | None, error: str | None, t: float) -> None:
        res = Result(
            job=job.job,
            fen=job.fen,
            engine=self.pool.engine_key,
            limit=self.limit,
            worker=self.worker_id,
            eval=Eval.of(evaluation) if evaluation is not None else None,
            error=error,
            seconds=round(t, 6),
        )
        self._outbox.append((job.reply_to, encode(res)))
        self._out_wake.set()

    def _on_message(self, message: aiomqtt.Message) -> None:
        data = payload_bytes(message)
        try:
            job = decode(data)
            if not isinstance(job, Job):
                raise ProtocolError(f"a {job.type!r} message on the jobs topic")
        except ProtocolError as exc:
            self.stats.bad += 1
            log.warning("bad_job", topic=str(message.topic), error=str(exc))
            return
        self.stats.jobs += 1
        base, _, me = job.reply_to.rpartition("/")
        if not base.startswith(f"{self.prefix}/results/") or me != self.worker_id:
            self.stats.bad += 1
            log.warning("bad_job", job=job.job, error=f"reply_to {job.reply_to!r} refused")
            return
        if job.engine != self.pool.engine_key or job.limit != self.limit:
            self.stats.refused += 1
            self._reply(job, None, f"engine mismatch: this worker is {self.pool.engine_key!r}", 0)
            return
        if time.time() > job.deadline:
            self.stats.expired += 1
            log.info("job_expired", job=job.job, late=round(time.time() - job.deadline, 3))
            return
        known = self._remembered.get(job.fen)
        if known is not None:
            self.stats.from_memory += 1
            self._remembered.move_to_end(job.fen)
            self._reply(job, known, None, 0.0)
            return
        try:
            board = chess.Board(job.fen)
        except ValueError as exc:
            self.stats.errors += 1
            self._reply(job, None, f"invalid FEN {job.fen!r}: {exc}", 0.0)
            return
        task = asyncio.create_task(self._evaluate(job, board), name=f"job-{job.job}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _evaluate(self, job: Job, board: chess.Board) -> None:
        t0 = time.perf_counter()
        try:
            ev = await self.pool.evaluate(board, job.priority)
        except (EngineError, ValueError) as exc:
            self.stats.errors += 1
            log.warning("job_failed", job=job.job, fen=job.fen, error=str(exc))
            self._reply(job, None, f"{type(exc).__name__}: {exc}", time.perf_counter() - t0)
            return
        self.stats.answered += 1
        self._remembered[job.fen] = ev
        if len(self._remembered) > self.memory:
            self._remembered.popitem(last=False)
        self._reply(job, ev, None, time.perf_counter() - t0)
