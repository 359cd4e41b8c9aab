"""The requester's side: :class:`RemoteEvaluator`, an evaluator backed by workers.

It implements what the service needs from an engine (``evaluate(board,
priority)``, ``describe()``, ``engine_key``; the ``Evaluator`` protocol of
:mod:`livegain.app.service`) by publishing jobs to the broker for
``livegain worker`` processes, optionally sharing the work with a local
:class:`~livegain.engine.pool.EnginePool` ("both" mode: one priority queue,
each side takes the next job when it has room).

Engine key. Results are only worth having from the engine, limit, Hash and
options the requester expects (the key of the evaluation cache and store).
With a local pool that is the pool's key. Without one, the evaluator waits
(``wait_for_workers`` seconds at most) for the first worker announcing the
configured limit (and ``engine_name``, when given) and adopts its key. A
worker announcing another key, another protocol version, or a ``worker``
name that is not its topic's is listed as refused; a result carrying another
key or limit is refused (:mod:`livegain.remote.tracker`).

Direct assignment (protocol v2): each job is given to one accepted worker,
published on that worker's own ``{prefix}/jobs/{engine_id(key)}/{worker}``,
with a ``reply_to`` of that worker's own; :class:`~livegain.remote.roster.Roster`
picks the worker: at most ``prefetch`` jobs per announced engine process of
each worker are out (so a job's deadline measures a search, not a queue on
the broker), ``max_jobs`` in all; the rest wait here, most urgent first. With
no usable worker nothing is published and jobs wait (or go to the local pool):
no position is lost, and a worker that joins starts taking them. A job not
answered by its deadline is given out again, to any worker; a worker whose
jobs end without an evaluation ``silent_after`` times in a row (expired
unanswered: *silent*; answered with an error: *failing*) gets no more jobs,
and its jobs out are given to others at once; a job a worker answered with
an error goes to another worker first. After a reconnect every job out is
given out again (results sent while the connection was down are lost with
the clean session). The first result wins; duplicates are dropped and counted.

Sampled re-evaluation: a share ``verify_share`` of the workers' valid results
is held and re-evaluated, by the local pool when there is one, else by
another worker; the result is delivered once the re-evaluation agrees. A
worker whose result the re-evaluation contradicts lied (evaluation is
deterministic): it is dropped (no more jobs, listed with the reason), and the
re-evaluated value is the one delivered. A result is only sampled when a
re-evaluation is possible (a local pool, or another usable worker); with a
local pool, only the local pool re-evaluates (two workers lying alike would
pass a check between them). A worker whose results topic carries an invalid
result (one no search can give, or for a job not given to it) is dropped
likewise, at the first: its identity is its topic, which only it may write
on the deploy broker.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import secrets
import time
from collections import Counter, deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import aiomqtt
import chess
import chess.pgn
import structlog

from livegain.core.evaluation import Evaluation, check_valid, terminal_evaluation
from livegain.engine.cache import EvalCache
from livegain.engine.errors import EngineError, EngineSearchError, PoolClosedError
from livegain.engine.pool import EnginePool
from livegain.engine.search import SearchLimit
from livegain.mqtt.address import BrokerAddress
from livegain.mqtt.client import connect, payload_bytes, unique_client_id
from livegain.mqtt.reconnect import reconnect_forever
from livegain.remote.protocol import (
    DEFAULT_PREFIX,
    Limit,
    OutdatedError,
    Presence,
    ProtocolError,
    Result,
    decode,
    encode,
    jobs_topic,
    results_base,
    topic_worker,
)
from livegain.remote.roster import STOPPED, Roster
from livegain.remote.tracker import JobTracker, Outcome

if TYPE_CHECKING:
    from livegain.config import RemoteEngineConfig

log = structlog.get_logger("livegain.remote.evaluator")


class RemoteEngineError(EngineError):
    """No usable worker, or the broker cannot be reached (the text says which)."""


@dataclass
class WorkerInfo:
    presence: Presence | None
    """None: a presence of another protocol version (refused, ``reason`` says so)."""
    accepted: bool
    reason: str | None
    since: float
    results: int = 0


class RemoteEvaluator:
    """Evaluate positions on ``livegain worker`` processes (and a local pool)."""

    def __init__(
        self,
        broker: BrokerAddress,
        limit: SearchLimit,
        *,
        prefix: str = DEFAULT_PREFIX,
        engine_name: str | None = None,
        local: EnginePool | None = None,
        cache: EvalCache | None = None,
        job_timeout: float = 30.0,
        max_attempts: int = 5,
        prefetch: int = 2,
        max_jobs: int = 256,
        wait_for_workers: float = 60.0,
        client_id: str | None = None,
        backoff_max: float = 10.0,
        verify_share: float = 0.05,
        silent_after: int = 2,
        rng: random.Random | None = None,
    ) -> None:
        if prefetch < 1 or max_jobs < 1:
            raise ValueError("prefetch and max_jobs must be at least 1")
        if not 0.0 <= verify_share <= 1.0:
            raise ValueError(f"verify_share must be within 0 and 1, got {verify_share}")
        self.broker = broker
        self.limit = limit
        self.wire_limit = Limit(depth=limit.depth, nodes=limit.nodes)
        self.prefix = prefix.rstrip("/")
        self.wanted_name = engine_name
        self.local = local
        self.cache = cache
        self.job_timeout = job_timeout
        self.max_attempts = max_attempts
        self.prefetch = prefetch
        self.max_jobs = max_jobs
        self.wait_for_workers = wait_for_workers
        self.client_id = client_id or unique_client_id("jobs")
        self.backoff_max = backoff_max
        self.verify_share = verify_share
        self._rng = rng or random.SystemRandom()
        self.roster = Roster(prefetch=prefetch, max_jobs=max_jobs, silent_after=silent_after)
        # Not the client id: every worker reads this topic in the jobs, and
        # whoever knows a client id can take its session over. Each worker
        # answers on {reply_to}/{worker}.
        self.reply_to = results_base(self.prefix, f"jobs-{secrets.token_hex(8)}")
        self.engine_name = ""
        self._key: str | None = None
        self.tracker: JobTracker | None = None
        self.workers_seen: dict[str, WorkerInfo] = {}
        self.bad_messages = 0
        self.connected = False
        self.connects = 0
        self.cache_hits = 0
        self.terminal = 0
        self.results_by: Counter[str] = Counter()
        self.published_to: Counter[str] = Counter()
        """Jobs published to each worker (re-publications included)."""
        self.overheads: deque[float] = deque(maxlen=100_000)
        """Per accepted remote result: seconds from publication to result, less the
        worker's own time (transport, broker, both ends' processing)."""
        self._futures: dict[str, asyncio.Future[Evaluation]] = {}
        self._waiters: Counter[str] = Counter()
        self._wake = asyncio.Event()
        self._local_wake = asyncio.Event()
        self._keyed = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._running = False
        self._last_error: str | None = None

    @classmethod
    def from_config(
        cls,
        cfg: RemoteEngineConfig,
        limit: SearchLimit,
        *,
        local: EnginePool | None = None,
        cache: EvalCache | None = None,
    ) -> RemoteEvaluator:
        """The evaluator an ``[engine.remote]`` section describes (ValueError if
        its URL or TLS files are bad)."""
        return cls(
            cfg.broker(),
            limit,
            prefix=cfg.prefix,
            engine_name=cfg.engine_name,
            local=local,
            cache=cache,
            job_timeout=cfg.job_timeout,
            max_attempts=cfg.max_attempts,
            prefetch=cfg.prefetch,
            max_jobs=cfg.max_jobs,
            wait_for_workers=cfg.wait_for_workers,
            client_id=cfg.client_id,
            verify_share=cfg.verify_share,
            silent_after=cfg.silent_after,
        )

    # -- the Evaluator interface ---------------------------------------------

    @property
    def engine_key(self) -> str:
        if self._key is None:
            raise RemoteEngineError("no engine key yet: no worker has been accepted")
        return self._key

    @property
    def workers(self) -> int:
        """Positions the caller should keep in flight, halved (the service keeps
        twice this many): enough for every job slot the workers may open."""
        return max(1, self.max_jobs // 2)

    def describe(self) -> str:
        name = self.engine_name or "remote engine"
        extra = f", local x{self.local.workers}" if self.local is not None else ""
        return f"{name} {self.limit.describe()} (remote workers{extra})"

    async def evaluate(self, board: chess.Board, priority: int = 0) -> Evaluation:
        """Evaluate ``board`` (lower ``priority`` first); finished positions and
        cached ones are answered here, the others by a worker (or the local pool)."""
        if not self._running or self.tracker is None:
            raise PoolClosedError("remote evaluator is not running (call start())")
        check_valid(board)
        terminal = terminal_evaluation(board)
        if terminal is not None:
            self.terminal += 1
            return terminal
        fen = board.fen()
        if self.cache is not None:
            hit = await self.cache.aget(self.engine_key, fen)
            if hit is not None:
                self.cache_hits += 1
                return hit
        job_id = self.tracker.submit(fen, priority)
        future = self._futures.get(job_id)
        owner = future is None
        if future is None:
            future = asyncio.get_running_loop().create_future()
            self._futures[job_id] = future
        self._waiters[job_id] += 1
        self._wake.set()
        self._local_wake.set()
        try:
            ev = await asyncio.shield(future)
        finally:
            self._waiters[job_id] -= 1
            if self._waiters[job_id] <= 0:
                del self._waiters[job_id]
                if not future.done():  # nobody wants it any more
                    self.tracker.cancel(job_id)
                    self._futures.pop(job_id, None)
                    future.cancel()
        if owner and self.cache is not None:
            try:
                await self.cache.aput(self.engine_key, fen, ev)
            except Exception:  # a cache fault never loses the result
                log.exception("cache_write_failed", fen=fen)
        return ev

    # -- life cycle ----------------------------------------------------------

    async def start(self) -> None:
        """Start the local pool (if any), connect, and wait until an engine key is
        known (RemoteEngineError after ``wait_for_workers`` seconds without one)."""
        if self._running:
            return
        if self.local is not None:
            await self.local.start()
            self._set_key(self.local.engine_key, self.local.engine_name)
        self._running = True
        self._tasks.append(asyncio.create_task(self._connect_forever(), name="remote-jobs"))
        if self.local is not None:
            for i in range(self.local.workers):
                self._tasks.append(
                    asyncio.create_task(self._local_lane(), name=f"remote-local-{i}")
                )
        if self._key is None:
            try:
                async with asyncio.timeout(self.wait_for_workers):
                    await self._keyed.wait()
            except TimeoutError:
                seen = "; ".join(
                    f"{w}: {i.reason}" for w, i in self.workers_seen.items() if i.reason
                )
                await self.close()
                raise RemoteEngineError(
                    f"no engine worker for {self.limit.describe()}"
                    + (f" ({self.wanted_name})" if self.wanted_name else "")
                    + f" announced itself on {self.broker} within {self.wait_for_workers:g} s"
                    + (f" (refused: {seen})" if seen else "")
                    + (f"; last broker error: {self._last_error}" if self._last_error else "")
                ) from None
        log.info("remote_engine_ready", engine=self.describe(), key=self._key)

    async def close(self) -> None:
        self._running = False
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        for job_id, future in list(self._futures.items()):
            if not future.done():
                future.set_exception(PoolClosedError("remote evaluator closed"))
                future.exception()
            self._futures.pop(job_id, None)
        if self.local is not None:
            await self.local.close()

    async def __aenter__(self) -> RemoteEvaluator:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- workers ---------------------------------------------------------------

    def _set_key(self, key: str, name: str) -> None:
        self._key = key
        self.engine_name = name
        self.tracker = JobTracker(
            key,
            self.wire_limit,
            self.reply_to,
            job_timeout=self.job_timeout,
            max_attempts=self.max_attempts,
            id_prefix=f"{secrets.token_hex(3)}-",
            sampler=self._sample,
            verify_locally=self.local is not None,
        )
        self._keyed.set()
        for wid, info in self.workers_seen.items():
            if info.presence is None:
                continue
            info.accepted, info.reason = self._judge(wid, info.presence)
            if info.accepted:
                self.roster.announce(wid, info.presence.processes, info.presence.started)
            else:
                self.roster.leave(wid)

    def _sample(self, worker: str) -> bool:
        """Whether ``worker``'s valid result is held for a re-evaluation: a
        ``verify_share`` of them, when the local pool or another worker can
        re-evaluate it."""
        if self.verify_share <= 0 or self._rng.random() >= self.verify_share:
            return False
        return self.local is not None or any(n != worker for n in self.roster.usable_names())

    def _judge(self, wid: str, p: Presence) -> tuple[bool, str | None]:
        if p.worker != wid:
            return False, f"presence names worker {p.worker!r} on the topic of {wid!r}"
        if self._key is None:
            if p.limit != self.wire_limit:
                return False, f"limit {p.limit.describe()}, wanted {self.wire_limit.describe()}"
            if self.wanted_name is not None and p.engine_name != self.wanted_name:
                return False, f"engine {p.engine_name!r}, wanted {self.wanted_name!r}"
            return True, None
        if p.engine_key != self._key:
            return False, f"engine key {p.engine_key!r}, wanted {self._key!r}"
        return True, None

    def capacity(self) -> int:
        """Jobs that may be out now: ``prefetch`` per engine process of the
        usable workers (accepted, neither silent nor dropped), ``max_jobs`` at most."""
        return self.roster.capacity()

    def _recall(self, wid: str, why: str) -> None:
        """No more jobs for ``wid``: its jobs out go to the others now."""
        if self.tracker is not None:
            n = self.tracker.recall(wid)
            if n:
                log.info("jobs_given_out_again", jobs=n, worker=wid, reason=why)
                self._local_wake.set()
        self._wake.set()

    def _drop(self, wid: str, reason: str, job: str) -> None:
        """``wid`` lied or sent an invalid result: no job ever again."""
        if self.roster.drop(wid, reason):
            log.error("worker_dropped", worker=wid, job=job, reason=reason)
            self._recall(wid, "worker dropped")

    def _judge_result(self, wid: str, res: Result, outcome: Outcome) -> None:
        """What a result from ``wid`` says of ``wid``: an invalid one drops it;
        an error (or a result refused for another key, limit or position)
        counts towards failing; an evaluation resets the count."""
        if outcome.kind == "invalid":
            self._drop(wid, f"{outcome.reason} (position {outcome.fen!r})", outcome.job)
        elif outcome.fault is not None:
            if self.roster.failed(wid, outcome.fault):
                state = self.roster.get(wid)
                log.warning("worker_failing", worker=wid, reason=state.reason if state else None)
                self._recall(wid, "worker failing")
        elif outcome.kind != "unknown" and res.eval is not None:
            self.roster.answered(wid)  # it answers: neither silent nor failing

    def _on_presence(self, topic: str, data: bytes) -> None:
        wid = topic_worker(topic)
        if not data:
            gone = self.workers_seen.pop(wid, None)
            self.roster.leave(wid)
            if gone is not None:
                log.info("worker_gone", worker=wid, results=gone.results)
                self._recall(wid, "worker gone")
            return
        old = self.workers_seen.get(wid)
        results = old.results if old else 0
        try:
            p = decode(data)
            if not isinstance(p, Presence):
                raise ProtocolError(f"a {p.type!r} message on a presence topic")
        except OutdatedError as exc:
            # An old worker: listed as refused, with why (not silently ignored).
            self.workers_seen[wid] = WorkerInfo(None, False, str(exc), time.time(), results)
            self.roster.leave(wid)
            log.warning("worker_refused", worker=wid, reason=str(exc))
            self._recall(wid, "worker refused")
            return
        except ProtocolError as exc:
            self.bad_messages += 1
            log.warning("bad_presence", topic=topic, error=str(exc))
            return
        accepted, reason = self._judge(wid, p)
        self.workers_seen[wid] = WorkerInfo(p, accepted, reason, time.time(), results)
        if accepted and self._key is None:
            self._set_key(p.engine_key, p.engine_name)
            log.info("engine_key_adopted", worker=wid, key=p.engine_key)
        if accepted:
            state = self.roster.announce(wid, p.processes, p.started)
            log.info(
                "worker_joined", worker=wid, host=p.host, processes=p.processes, status=state.status
            )
        else:
            self.roster.leave(wid)
            log.warning("worker_refused", worker=wid, host=p.host, reason=reason)
            self._recall(wid, "worker refused")
        self._wake.set()

    def workers_status(self) -> dict[str, Any]:
        """For /healthz: the connection, every worker announced, and the job counts."""
        now = time.time()
        t = self.tracker
        workers = []
        names = set(self.workers_seen)
        # A silent, failing or dropped worker stays listed after its presence is gone.
        names |= {
            n
            for n in self.roster.names()
            if (st := self.roster.get(n)) is not None and st.status in STOPPED
        }
        for wid in sorted(names):
            info = self.workers_seen.get(wid)
            p = info.presence if info is not None else None
            state = self.roster.get(wid)
            row: dict[str, Any] = {
                "worker": wid,
                "present": info is not None,
                "accepted": bool(info and info.accepted),
                "refused_because": info.reason if info is not None else None,
                "status": state.status if state is not None else None,
                "status_because": state.reason if state is not None else None,
                "results": info.results if info is not None else 0,
                "jobs_given": self.published_to.get(wid, 0),
                "expired": state.expired if state is not None else 0,
                "errors": state.errors if state is not None else 0,
            }
            if p is not None:
                row.update(
                    host=p.host,
                    engine=p.engine_name,
                    limit=p.limit.describe(),
                    hash_mb=p.hash_mb,
                    processes=p.processes,
                    cores=p.cores,
                    up_for=round(now - p.started, 1),
                )
            workers.append(row)
        out: dict[str, Any] = {
            "broker": str(self.broker),
            "connected": self.connected,
            "engine_key": self._key,
            "workers": workers,
            "capacity": self.capacity(),
            "local_processes": self.local.workers if self.local is not None else 0,
        }
        if t is not None:
            s = t.stats
            out["jobs"] = {
                "out": t.outstanding,
                "queued": t.queued,
                "published": s.published,
                "republished": s.republished,
                "expired": s.expired,
                "accepted": s.accepted,
                "by_local_pool": self.results_by.get("local", 0),
                "duplicates": s.duplicates,
                "refused": s.refused,
                "invalid": s.invalid,
                "invalid_by": dict(t.invalid_by),
                "sampled": s.sampled,
                "verifications": s.verifications,
                "verified": s.verified,
                "mismatches": s.mismatches,
                "unverified": s.unverified,
                "workers_silenced": self.roster.silenced,
                "workers_failing": self.roster.failing,
                "workers_dropped": self.roster.dropped,
                "worker_errors": s.errors,
                "unknown": s.unknown,
                "failed": s.failed,
                "bad_messages": self.bad_messages,
            }
        problem = None
        if not self.connected:
            problem = f"not connected to {self.broker}" + (
                f" ({self._last_error})" if self._last_error else ""
            )
        elif self.local is None and self.capacity() == 0:
            problem = "no accepted engine worker: jobs wait"
            if self.roster.silenced or self.roster.failing or self.roster.dropped:
                problem = (
                    "no usable engine worker (silent, failing or dropped ones get no job): "
                    "jobs wait"
                )
        if problem is not None:
            out["problem"] = problem
        return out

    # -- the broker session --------------------------------------------------

    async def _connect_forever(self) -> None:
        await reconnect_forever(
            self._connection, lambda: self.connects, self._lost, most=self.backoff_max
        )

    async def _connection(self) -> None:
        try:
            async with connect(self.broker, self.client_id, keepalive=15) as client:
                await client.subscribe(f"{self.prefix}/workers/+", qos=1)
                await client.subscribe(f"{self.reply_to}/+", qos=1)
                self.connected = True
                self.connects += 1
                if self.tracker is not None:
                    again = self.tracker.requeue_remote()
                    if again:
                        log.info("jobs_given_out_again", jobs=again, reason="reconnected")
                log.info("remote_jobs_connected", broker=str(self.broker))
                await self._session(client)
        finally:
            self.connected = False

    def _lost(self, exc: Exception, retry_in: float) -> None:
        self._last_error = str(exc)
        log.warning(
            "remote_jobs_disconnected", broker=str(self.broker), error=str(exc), retry_in=retry_in
        )

    async def _session(self, client: aiomqtt.Client) -> None:
        pump = asyncio.create_task(self._pump(client))
        reader = asyncio.create_task(self._read(client))
        try:
            await asyncio.wait({pump, reader}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (pump, reader):
                task.cancel()
            results = await asyncio.gather(pump, reader, return_exceptions=True)
        for r in results:  # the error that ended the session
            if isinstance(r, Exception):
                raise r

    async def _read(self, client: aiomqtt.Client) -> None:
        async for message in client.messages:
            topic = str(message.topic)
            data = payload_bytes(message)
            if topic.startswith(f"{self.reply_to}/"):
                self._on_result(topic, data)
            elif topic.startswith(f"{self.prefix}/workers/"):
                self._on_presence(topic, data)
        raise aiomqtt.MqttError("connection closed")

    async def _pump(self, client: aiomqtt.Client) -> None:
        """Give out jobs as room opens; expire those past their deadline."""
        while True:
            self._wake.clear()
            t = self.tracker
            timeout = 1.0
            if t is not None:
                now = time.time()
                settled, late = t.expire_jobs(now)
                for outcome in settled:
                    self._settle(outcome)
                for wid in late:
                    if self.roster.expired(wid, self.job_timeout):
                        state = self.roster.get(wid)
                        log.warning(
                            "worker_silent", worker=wid, reason=state.reason if state else None
                        )
                        self._recall(wid, "worker silent")
                for outcome in t.stranded(set(self.roster.usable_names()), self.local is not None):
                    self._settle(outcome)
                if late or settled:
                    self._local_wake.set()  # queued again: the local pool may take them
                for wid in self.roster.slots(t.out_by(), t.outstanding):
                    if not self.roster.usable(wid):
                        continue  # stopped (silent, failing, dropped, gone) while publishing
                    job = t.assign(wid, now)
                    if job is None:
                        if t.queued == 0:
                            break
                        continue  # nothing this worker may take (held for re-evaluation)
                    self.published_to[wid] += 1
                    await client.publish(
                        jobs_topic(self.prefix, t.engine_key, wid), encode(job), qos=1
                    )
                deadline = t.next_deadline()
                if deadline is not None:
                    timeout = min(timeout, max(0.02, deadline - time.time()))
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._wake.wait()

    def _on_result(self, topic: str, data: bytes) -> None:
        sender = topic_worker(topic)
        try:
            res = decode(data)
            if not isinstance(res, Result):
                raise ProtocolError(f"a {res.type!r} message on the results topic")
        except ProtocolError as exc:
            self.bad_messages += 1
            log.warning("bad_result", topic=topic, error=str(exc))
            return
        if self.tracker is None:
            return
        sent = self.tracker.published_at(res.job)
        outcome = self.tracker.on_result(res, sender)
        if sent is not None and outcome.kind == "accepted" and not outcome.verified:
            # The round trip less the worker's own time: what the broker adds.
            self.overheads.append(max(0.0, time.time() - sent - res.seconds))
        self._judge_result(sender, res, outcome)
        self._settle(outcome)
        self._wake.set()

    def _settle(self, outcome: Outcome) -> None:
        for liar, how in outcome.liars:
            self._drop(liar, f"lied about {outcome.fen!r}: {how}", outcome.job)
        if outcome.kind == "accepted":
            assert outcome.evaluation is not None
            self.results_by[outcome.worker or "?"] += 1
            info = self.workers_seen.get(outcome.worker or "")
            if info is not None:
                info.results += 1
            if outcome.reason:  # kept unverified
                log.warning("result_unverified", job=outcome.job, reason=outcome.reason)
            future = self._futures.pop(outcome.job, None)
            if future is not None and not future.done():
                future.set_result(outcome.evaluation)
        elif outcome.kind == "failed":
            future = self._futures.pop(outcome.job, None)
            if future is not None and not future.done():
                future.set_exception(EngineSearchError(outcome.reason or "job failed"))
                future.exception()
            log.warning("job_failed", job=outcome.job, fen=outcome.fen, reason=outcome.reason)
        elif outcome.kind == "refused":
            log.warning("result_refused", job=outcome.job, fen=outcome.fen, reason=outcome.reason)
        elif outcome.kind == "invalid":
            log.warning("result_invalid", job=outcome.job, fen=outcome.fen, reason=outcome.reason)
        elif outcome.kind == "held":
            log.debug("result_held", job=outcome.job, worker=outcome.worker, reason=outcome.reason)
        elif outcome.kind == "retry":
            log.info("job_retried", job=outcome.job, fen=outcome.fen, reason=outcome.reason)
        else:  # duplicate or unknown: dropped, counted by the tracker
            log.debug("result_dropped", kind=outcome.kind, job=outcome.job, worker=outcome.worker)
        self._local_wake.set()

    # -- the local pool ("both") ------------------------------------------------

    async def _local_lane(self) -> None:
        assert self.local is not None
        while True:
            job = self.tracker.take_local() if self.tracker is not None else None
            if job is None:
                self._local_wake.clear()
                await self._local_wake.wait()
                continue
            try:
                ev = await self.local.evaluate(chess.Board(job.fen), job.priority)
            except (EngineError, ValueError) as exc:
                assert self.tracker is not None
                self._settle(self.tracker.local_failed(job.id, f"{type(exc).__name__}: {exc}"))
            else:
                assert self.tracker is not None
                self._settle(self.tracker.local_done(job.id, ev))
            self._wake.set()


# --------------------------------------------------------------------------
# Batch analysis through the broker (livegain analyze --broker)
# --------------------------------------------------------------------------
