"""Which jobs are out, and what a result means: the requester's logic, sans I/O.

A :class:`JobTracker` holds the positions one requester wants evaluated. It
does no I/O and reads no clock: the caller passes ``now`` (Unix time) and
publishes what :meth:`JobTracker.take` returns.

- :meth:`submit` queues a position (one job per FEN while it is open: a
  position asked for twice is searched once); lower ``priority`` goes first;
- :meth:`take` hands out the most urgent queued jobs as :class:`Job`
  messages, at most up to ``capacity`` jobs out at once, each with a deadline
  ``job_timeout`` seconds ahead; :meth:`take_local` hands one to a local
  engine pool instead ("both" mode: the two share one queue);
- :meth:`expire`: a job not answered by its deadline goes back to the front
  of the queue (same id, ``attempt`` + 1), so another worker gets it; after
  ``max_attempts`` publications it fails, naming the position;
- :meth:`on_result`: the first valid result of a job wins; a later one for a
  finished job is a duplicate (dropped, counted); a result for another engine
  key, limit or position is refused (counted, and the job given out again);
  a worker's error puts the job back in the queue (or fails it, past
  ``max_attempts``);
- a result that no search of the job's position can give
  (:func:`result_problem`: an illegal best move or PV, a score out of range,
  a mate that does not match its score or does not mate, a W/D/L that is not
  per mille, a depth beyond the limit) is *invalid*: refused and counted per
  worker, and the job stays out as it was (the worker that took it may still
  answer; its deadline gives it out again otherwise): whoever can publish a
  result cannot make a job fail or be searched again by forging invalid ones.
"""

from __future__ import annotations

import heapq
import itertools
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from typing import Literal

import chess

from livegain.core.evaluation import CLIP_CP, Evaluation
from livegain.remote.protocol import Eval, Job, Limit, Result

DONE_MEMORY = 100_000
"""Finished job ids remembered, to tell a duplicate from an unknown result."""

State = Literal["queued", "remote", "local"]
Kind = Literal["accepted", "duplicate", "refused", "invalid", "unknown", "retry", "failed"]


def result_problem(fen: str, ev: Eval, limit: Limit) -> str | None:
    """Why ``ev`` cannot be a search of ``fen`` at ``limit``, or None.

    Checked (cheap: one board, the PV replayed): the best move is given and
    legal; the PV, when given, starts with it and is legal; ``cp`` is within
    +/-3900; a mate score has ``cp`` at +/-3900 of its sign, and a mate in 1
    for the side to move is mated by the best move; W/D/L values are per
    mille and add up to 1000; ``depth`` is at least 1 and, under a depth
    limit, at most the limit. The job's position is never finished (those
    are scored without an engine), so a real search always has a best move.
    Not checked: whether the numbers are the engine's (a plausible forged
    score passes; docs/security.md).
    """
    board = chess.Board(fen)
    if abs(ev.cp) > CLIP_CP:
        return f"cp {ev.cp} beyond +/-{CLIP_CP}"
    if ev.mate is not None:
        if ev.mate == 0:
            return "mate 0"
        if ev.cp != (CLIP_CP if ev.mate > 0 else -CLIP_CP):
            return f"mate {ev.mate} with cp {ev.cp}"
    if ev.wdl is not None and (min(ev.wdl) < 0 or max(ev.wdl) > 1000 or sum(ev.wdl) != 1000):
        return f"W/D/L {list(ev.wdl)} not per mille"
    if ev.depth < 1:
        return f"depth {ev.depth}"
    if limit.depth is not None and ev.depth > limit.depth:
        return f"depth {ev.depth} beyond the limit {limit.depth}"
    if ev.best is None:
        return "no best move"
    try:
        best = board.parse_uci(ev.best)
    except ValueError:
        return f"best move {ev.best!r} is not legal here"
    if ev.pv:
        if ev.pv[0] != ev.best:
            return f"PV starts with {ev.pv[0]!r}, not the best move {ev.best!r}"
        line = board.copy(stack=False)
        for i, uci in enumerate(ev.pv):
            try:
                line.push(line.parse_uci(uci))
            except ValueError:
                return f"PV move {i + 1} {uci!r} is not legal"
    if ev.mate is not None:
        mover_mates = (ev.mate > 0) == (board.turn == chess.WHITE)
        if mover_mates and abs(ev.mate) == 1:
            board.push(best)
            if not board.is_checkmate():
                return f"mate in 1 claimed, {ev.best} does not mate"
    return None


@dataclass
class TrackedJob:
    id: str
    fen: str
    priority: int
    seq: int
    state: State = "queued"
    attempts: int = 0
    """Times published to the workers."""
    deadline: float | None = None
    errors: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Outcome:
    """What became of a job (or of a result): ``evaluation`` when ``accepted``."""

    kind: Kind
    job: str
    fen: str | None = None
    evaluation: Evaluation | None = None
    worker: str | None = None
    reason: str | None = None


@dataclass
class TrackerStats:
    submitted: int = 0
    shared: int = 0
    published: int = 0
    republished: int = 0
    expired: int = 0
    results: int = 0
    accepted: int = 0
    duplicates: int = 0
    refused: int = 0
    unknown: int = 0
    errors: int = 0
    failed: int = 0
    local: int = 0
    invalid: int = 0


class JobTracker:
    """The open jobs of one requester, for one engine key and limit."""

    def __init__(
        self,
        engine_key: str,
        limit: Limit,
        reply_to: str,
        *,
        job_timeout: float = 30.0,
        max_attempts: int = 5,
        id_prefix: str = "j",
    ) -> None:
        if job_timeout <= 0:
            raise ValueError(f"job_timeout must be positive, got {job_timeout}")
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {max_attempts}")
        self.engine_key = engine_key
        self.limit = limit
        self.reply_to = reply_to
        self.job_timeout = job_timeout
        self.max_attempts = max_attempts
        self.id_prefix = id_prefix
        self.stats = TrackerStats()
        self._ids = itertools.count(1)
        self._seq = itertools.count()
        self._jobs: dict[str, TrackedJob] = {}
        self._by_fen: dict[str, str] = {}
        self._queue: list[tuple[int, int, str]] = []
        self._done: OrderedDict[str, None] = OrderedDict()
        self._remote = 0
        self.invalid_by: Counter[str] = Counter()
        """Invalid results per worker id (as the results name it)."""

    # -- asking ------------------------------------------------------------

    def submit(self, fen: str, priority: int = 0) -> str:
        """Queue ``fen`` (or join the open job for it); returns the job id."""
        open_id = self._by_fen.get(fen)
        if open_id is not None:
            job = self._jobs[open_id]
            self.stats.shared += 1
            if priority < job.priority:
                job.priority = priority
                if job.state == "queued":
                    heapq.heappush(self._queue, (job.priority, job.seq, job.id))
            return open_id
        job_id = f"{self.id_prefix}{next(self._ids)}"
        job = TrackedJob(job_id, fen, priority, next(self._seq))
        self._jobs[job_id] = job
        self._by_fen[fen] = job_id
        heapq.heappush(self._queue, (priority, job.seq, job_id))
        self.stats.submitted += 1
        return job_id

    def cancel(self, job_id: str) -> None:
        """Nobody wants the job any more: forget it (a late result counts as unknown)."""
        job = self._jobs.pop(job_id, None)
        if job is None:
            return
        if job.state == "remote":
            self._remote -= 1
        if self._by_fen.get(job.fen) == job_id:
            del self._by_fen[job.fen]

    @property
    def queued(self) -> int:
        return sum(1 for j in self._jobs.values() if j.state == "queued")

    @property
    def outstanding(self) -> int:
        """Jobs out to the workers now."""
        return self._remote

    def open_jobs(self) -> int:
        return len(self._jobs)

    # -- handing out -------------------------------------------------------

    def _pop(self) -> TrackedJob | None:
        while self._queue:
            priority, _seq, job_id = heapq.heappop(self._queue)
            job = self._jobs.get(job_id)
            if job is None or job.state != "queued" or job.priority != priority:
                continue  # stale entry: cancelled, handed out, or re-prioritised
            return job
        return None

    def take(self, capacity: int, now: float) -> list[Job]:
        """The jobs to publish now: the most urgent queued ones, until ``capacity`` are out."""
        out: list[Job] = []
        while self._remote < capacity:
            job = self._pop()
            if job is None:
                break
            job.state = "remote"
            job.attempts += 1
            job.deadline = now + self.job_timeout
            self._remote += 1
            self.stats.published += 1
            if job.attempts > 1:
                self.stats.republished += 1
            out.append(self.message(job))
        return out

    def message(self, job: TrackedJob) -> Job:
        assert job.deadline is not None
        return Job(
            job=job.id,
            fen=job.fen,
            engine=self.engine_key,
            limit=self.limit,
            deadline=job.deadline,
            priority=job.priority,
            attempt=job.attempts,
            reply_to=self.reply_to,
        )

    def take_local(self) -> TrackedJob | None:
        """The most urgent queued job, for the local engine pool."""
        job = self._pop()
        if job is not None:
            job.state = "local"
            self.stats.local += 1
        return job

    def local_failed(self, job_id: str, reason: str) -> Outcome:
        """The local pool could not evaluate the job: it fails (the pool retried already)."""
        job = self._jobs.get(job_id)
        if job is None:
            return Outcome("unknown", job_id, reason=reason)
        return self._fail(job, reason)

    def local_done(self, job_id: str, evaluation: Evaluation) -> Outcome:
        """The local pool's result: accepted if the job is still open."""
        job = self._jobs.get(job_id)
        if job is None:
            if job_id in self._done:
                self.stats.duplicates += 1
                return Outcome("duplicate", job_id)
            return Outcome("unknown", job_id)
        self.stats.accepted += 1
        self._finish(job)
        return Outcome("accepted", job_id, job.fen, evaluation, worker="local")

    def requeue_remote(self) -> int:
        """After a lost connection: every job out goes back to the queue, and
        its publication is not counted (it may never have reached a worker)."""
        n = 0
        for job in self._jobs.values():
            if job.state == "remote":
                self._requeue(job)
                job.attempts -= 1
                n += 1
        return n

    def published_at(self, job_id: str) -> float | None:
        """When the job out to the workers was last published (None: it is not out)."""
        job = self._jobs.get(job_id)
        if job is None or job.state != "remote" or job.deadline is None:
            return None
        return job.deadline - self.job_timeout

    # -- deadlines ---------------------------------------------------------

    def next_deadline(self) -> float | None:
        deadlines = [j.deadline for j in self._jobs.values() if j.state == "remote" and j.deadline]
        return min(deadlines) if deadlines else None

    def expire(self, now: float) -> list[Outcome]:
        """Jobs past their deadline go back to the queue; those out ``max_attempts``
        times fail (returned)."""
        failed: list[Outcome] = []
        for job in list(self._jobs.values()):
            if job.state != "remote" or job.deadline is None or job.deadline > now:
                continue
            self.stats.expired += 1
            job.errors.append(f"no result within {self.job_timeout:g} s")
            if job.attempts >= self.max_attempts:
                failed.append(self._fail(job, "; ".join(job.errors[-3:])))
            else:
                self._requeue(job)
        return failed

    # -- results -----------------------------------------------------------

    def on_result(self, res: Result) -> Outcome:
        self.stats.results += 1
        job = self._jobs.get(res.job)
        if job is None:
            if res.job in self._done:
                self.stats.duplicates += 1
                return Outcome("duplicate", res.job, res.fen, worker=res.worker)
            self.stats.unknown += 1
            return Outcome("unknown", res.job, res.fen, worker=res.worker)
        why = None
        if res.engine != self.engine_key:
            why = f"engine {res.engine!r} is not the one asked for ({self.engine_key!r})"
        elif res.limit != self.limit:
            why = f"limit {res.limit.describe()} is not {self.limit.describe()}"
        elif res.fen != job.fen:
            why = f"position {res.fen!r} is not the job's {job.fen!r}"
        if why is not None:
            self.stats.refused += 1
            return self._retry(job, f"refused result from {res.worker}: {why}", "refused")
        if res.eval is None:
            self.stats.errors += 1
            return self._retry(job, f"{res.worker}: {res.error or 'error without text'}", "retry")
        problem = result_problem(job.fen, res.eval, self.limit)
        if problem is not None:
            # Refused, and the job left as it is: a forger racing the worker
            # that took it neither fails the job nor has it searched again.
            self.stats.invalid += 1
            self.invalid_by[res.worker] += 1
            reason = f"invalid result from {res.worker}: {problem}"
            return Outcome("invalid", job.id, job.fen, worker=res.worker, reason=reason)
        self.stats.accepted += 1
        self._finish(job)
        return Outcome("accepted", job.id, job.fen, res.eval.evaluation(), worker=res.worker)

    # -- internals ---------------------------------------------------------

    def _retry(self, job: TrackedJob, reason: str, kind: Kind) -> Outcome:
        job.errors.append(reason)
        if job.state == "remote":
            if job.attempts >= self.max_attempts:
                return self._fail(job, "; ".join(job.errors[-3:]))
            self._requeue(job)
        return Outcome(kind, job.id, job.fen, reason=reason)

    def _requeue(self, job: TrackedJob) -> None:
        if job.state == "remote":
            self._remote -= 1
        job.state = "queued"
        job.deadline = None
        heapq.heappush(self._queue, (job.priority, job.seq, job.id))

    def _finish(self, job: TrackedJob) -> None:
        if job.state == "remote":
            self._remote -= 1
        del self._jobs[job.id]
        if self._by_fen.get(job.fen) == job.id:
            del self._by_fen[job.fen]
        self._done[job.id] = None
        while len(self._done) > DONE_MEMORY:
            self._done.popitem(last=False)

    def _fail(self, job: TrackedJob, reason: str) -> Outcome:
        self.stats.failed += 1
        self._finish(job)
        text = f"cannot evaluate {job.fen!r} after {job.attempts} publications: {reason}"
        return Outcome("failed", job.id, job.fen, reason=text)
