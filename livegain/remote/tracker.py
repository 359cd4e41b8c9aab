"""Which jobs are out, and what a result means: the requester's logic, sans I/O.

A :class:`JobTracker` holds the positions one requester wants evaluated. It
does no I/O and reads no clock: the caller passes ``now`` (Unix time) and
publishes what :meth:`JobTracker.take` returns.

- :meth:`submit` queues a position (one job per FEN while it is open: a
  position asked for twice is searched once); lower ``priority`` goes first;
- :meth:`assign` gives the most urgent queued job to one worker (direct
  assignment: the caller picks the worker, :mod:`livegain.remote.roster`) as
  a :class:`Job` message with a deadline ``job_timeout`` seconds ahead and
  the worker's own ``reply_to``; :meth:`take` does the same for no named
  worker; :meth:`take_local` hands one to a local engine pool instead ("both"
  mode: the two share one queue);
- :meth:`expire_jobs`: a job not answered by its deadline goes back to the
  front of the queue (same id, ``attempt`` + 1), so another worker gets it,
  and the worker it was given to is named (the roster's silence rule); after
  ``max_attempts`` publications it fails, naming the position; :meth:`recall`
  puts back every job out to a worker found silent or dropped;
- :meth:`on_result`: the first valid result of a job wins; a later one for a
  finished job is a duplicate (dropped, counted); a result for another engine
  key, limit or position is refused (counted, and the job given out again);
  a worker's error puts the job back in the queue (or fails it, past
  ``max_attempts``). After either, the job is not given to that worker
  again while another usable worker (or the local pool) may take it
  (:meth:`stranded` lifts the bar when none may); the first such answer of a
  job is the answering worker's *fault* (:attr:`Outcome.fault`: the roster's
  rule for failing workers), a later one is not (the position itself is
  suspect): a position no engine can search costs one worker one error, not
  its place;
- a result that no search of the job's position can give
  (:func:`result_problem`: an illegal best move or PV, a score out of range,
  a mate that does not match its score or does not mate, a W/D/L that is not
  per mille, a depth beyond the limit) is *invalid*: refused and counted per
  worker (:attr:`Outcome.worker`: the one its topic names, whom the caller
  drops), and the job stays out as it was (the worker that took it may still
  answer; its deadline gives it out again otherwise): a forger cannot make a
  job fail or be searched again by forging invalid ones. So is a result from
  a worker the job was never given to, or one whose ``worker`` is not the
  worker its topic names (``sender``);
- **sampled re-evaluation**: a valid result that :attr:`sampler` picks is
  *held*: the job goes back to the queue, for the local pool only when
  ``verify_locally`` (the local pool is trusted), else for any worker but the
  ones that answered it. Evaluation is deterministic (docs/workers.md, "Same
  position, same score"), so the re-evaluation must give the same numbers,
  node counts included: a local result decides at once; a worker's decides
  when it agrees with a held one, and otherwise is held too, for a third
  opinion. The value kept is the one agreed on; each worker whose held
  result differs from it is named a liar in the :class:`Outcome`
  (``liars``). A held job that cannot be re-evaluated within
  ``max_attempts`` publications keeps its one held result (counted
  ``unverified``), or fails when the held results disagree. Without
  ``verify_locally``, two workers forging the same numbers agree and pass
  (docs/security.md).
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import chess

from livegain.core.evaluation import CLIP_CP, Evaluation
from livegain.remote.protocol import Eval, Job, Limit, Result, reply_topic

DONE_MEMORY = 100_000
"""Finished job ids remembered, to tell a duplicate from an unknown result."""

State = Literal["queued", "remote", "local"]
Kind = Literal["accepted", "duplicate", "refused", "invalid", "unknown", "retry", "failed", "held"]


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
    worker: str | None = None
    """The worker it is out to now (None: out to no named worker, or not out)."""
    given: set[str] = field(default_factory=set)
    """Every worker it was given to (a late answer from one of them counts)."""
    claims: dict[str, Evaluation] = field(default_factory=dict)
    """Held results (sampled for re-evaluation), by worker."""
    local_only: bool = False
    """Only the local pool may take it (a re-evaluation in "both" mode)."""
    failed_by: set[str] = field(default_factory=set)
    """Workers that answered it with an error or a refused result: not given
    it again while another may take it."""
    faults: int = 0
    """Its answers that were an error or a refused result, from any worker."""


@dataclass(frozen=True)
class Outcome:
    """What became of a job (or of a result): ``evaluation`` when ``accepted``."""

    kind: Kind
    job: str
    fen: str | None = None
    evaluation: Evaluation | None = None
    worker: str | None = None
    reason: str | None = None
    liars: tuple[tuple[str, str], ...] = ()
    """Workers whose held result the re-evaluation contradicts, each with how."""
    verified: bool = False
    fault: str | None = None
    """Set when the result was the job's first that is no evaluation (the
    worker's error, or a result for another engine key, limit or position):
    why, as the sending worker's fault (the roster counts it against that
    worker). A later one, once the job was answered so already (by any
    worker), is not: the position may be what fails."""


FAULT_TEXT = 300
"""Longest fault text kept (a worker's error text may be 2,000 characters)."""

SENDERS_COUNTED = 100
"""Senders of invalid results counted by name; more are counted together under
``OTHER_SENDERS`` (on a broker without an access list anyone may send
results under any number of names)."""
OTHER_SENDERS = "(others)"


def mismatch(claimed: Evaluation, found: Evaluation) -> str:
    """How a held result differs from the re-evaluation (its first differing fields)."""
    diffs = [
        f"{name} {getattr(claimed, name)!r} where the re-evaluation gives {getattr(found, name)!r}"
        for name in ("cp", "mate", "wdl", "depth", "nodes", "best", "pv")
        if getattr(claimed, name) != getattr(found, name)
    ]
    return "; ".join(diffs[:3]) or "differs from the re-evaluation"


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
    sampled: int = 0
    verifications: int = 0
    """Publications of held jobs to another worker (not counted ``republished``)."""
    verified: int = 0
    mismatches: int = 0
    unverified: int = 0


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
        sampler: Callable[[str], bool] | None = None,
        verify_locally: bool = False,
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
        self._out_by: Counter[str] = Counter()
        self.invalid_by: Counter[str] = Counter()
        """Invalid results per worker id (as the results name it)."""
        self.sampler = sampler
        """Whether an accepted result of the named worker is re-evaluated (None: never)."""
        self.verify_locally = verify_locally

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
        job = self._jobs.get(job_id)
        if job is None:
            return
        self._unout(job)
        del self._jobs[job_id]
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

    def out_by(self) -> Counter[str]:
        """Jobs out now, per worker they were given to."""
        return Counter({w: n for w, n in self._out_by.items() if n > 0})

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
        """The jobs to publish now for no named worker: the most urgent queued
        ones, until ``capacity`` are out."""
        out: list[Job] = []
        while self._remote < capacity:
            job = self._pop()
            if job is None:
                break
            out.append(self._give(job, None, now))
        return out

    def assign(self, worker: str, now: float) -> Job | None:
        """The most urgent queued job ``worker`` may take (not one it answered
        already, with an evaluation or an error, nor one kept for the local
        pool), given to it; None if none."""
        skipped: list[TrackedJob] = []
        job = self._pop()
        while job is not None and (
            job.local_only or worker in job.claims or worker in job.failed_by
        ):
            skipped.append(job)
            job = self._pop()
        for s in skipped:
            heapq.heappush(self._queue, (s.priority, s.seq, s.id))
        return self._give(job, worker, now) if job is not None else None

    def _give(self, job: TrackedJob, worker: str | None, now: float) -> Job:
        job.state = "remote"
        job.attempts += 1
        job.deadline = now + self.job_timeout
        job.worker = worker
        if worker is not None:
            job.given.add(worker)
            self._out_by[worker] += 1
        self._remote += 1
        self.stats.published += 1
        if job.claims:
            self.stats.verifications += 1
        elif job.attempts > 1:
            self.stats.republished += 1
        return self.message(job)

    def message(self, job: TrackedJob) -> Job:
        assert job.deadline is not None
        reply_to = self.reply_to if job.worker is None else reply_topic(self.reply_to, job.worker)
        return Job(
            job=job.id,
            fen=job.fen,
            engine=self.engine_key,
            limit=self.limit,
            deadline=job.deadline,
            priority=job.priority,
            attempt=job.attempts,
            reply_to=reply_to,
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
        """The local pool's result: accepted if the job is still open (the
        local pool is trusted: it decides a re-evaluation at once)."""
        job = self._jobs.get(job_id)
        if job is None:
            if job_id in self._done:
                self.stats.duplicates += 1
                return Outcome("duplicate", job_id)
            return Outcome("unknown", job_id)
        if job.claims:
            return self._check(job, "local", evaluation, trusted=True)
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

    def recall(self, worker: str) -> int:
        """Every job out to ``worker`` goes back to the queue now (it was found
        silent or dropped: its jobs need not wait for their deadlines)."""
        n = 0
        for job in self._jobs.values():
            if job.state == "remote" and job.worker == worker:
                job.errors.append(f"recalled from {worker}")
                self._requeue(job)
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
        times are settled (returned: failed, or a held result kept unverified)."""
        return self.expire_jobs(now)[0]

    def expire_jobs(self, now: float) -> tuple[list[Outcome], list[str]]:
        """As :meth:`expire`, and the workers whose jobs expired (one name per job)."""
        settled: list[Outcome] = []
        silent: list[str] = []
        for job in list(self._jobs.values()):
            if job.state != "remote" or job.deadline is None or job.deadline > now:
                continue
            self.stats.expired += 1
            if job.worker is not None:
                silent.append(job.worker)
            job.errors.append(f"no result within {self.job_timeout:g} s")
            if job.attempts >= self.max_attempts:
                settled.append(self._give_up(job, "; ".join(job.errors[-3:])))
            else:
                self._requeue(job)
        return settled, silent

    # -- results -----------------------------------------------------------

    def on_result(self, res: Result, sender: str | None = None) -> Outcome:
        """A worker's result; ``sender``: the worker its topic names (None: not known)."""
        self.stats.results += 1
        if sender is not None and res.worker != sender:
            return self._invalid(
                res, sender, f"names worker {res.worker!r} on the results topic of {sender!r}"
            )
        job = self._jobs.get(res.job)
        if job is None:
            if res.job in self._done:
                self.stats.duplicates += 1
                return Outcome("duplicate", res.job, res.fen, worker=res.worker)
            self.stats.unknown += 1
            return Outcome("unknown", res.job, res.fen, worker=res.worker)
        if sender is not None and job.given and sender not in job.given:
            return self._invalid(res, sender, "a result for a job it was not given")
        if res.worker in job.claims:  # held already: its own answer again
            self.stats.duplicates += 1
            return Outcome("duplicate", res.job, res.fen, worker=res.worker)
        mine = job.worker is None or job.worker == res.worker
        why = None
        if res.engine != self.engine_key:
            why = f"engine {res.engine!r} is not the one asked for ({self.engine_key!r})"
        elif res.limit != self.limit:
            why = f"limit {res.limit.describe()} is not {self.limit.describe()}"
        elif res.fen != job.fen:
            why = f"position {res.fen!r} is not the job's {job.fen!r}"
        if why is not None:
            self.stats.refused += 1
            text = f"refused result from {res.worker}: {why}"
            return self._fault(job, res.worker, text, "refused", mine, f"result refused: {why}")
        if res.eval is None:
            self.stats.errors += 1
            error = res.error or "error without text"
            return self._fault(job, res.worker, f"{res.worker}: {error}", "retry", mine, error)
        problem = result_problem(job.fen, res.eval, self.limit)
        if problem is not None:
            # Refused, and the job left as it is: a forger racing the worker
            # that took it neither fails the job nor has it searched again.
            return self._invalid(res, res.worker, problem)
        evaluation = res.eval.evaluation()
        if job.claims:
            return self._check(job, res.worker, evaluation, trusted=False)
        if self.sampler is not None and self.sampler(res.worker):
            self.stats.sampled += 1
            return self._hold(job, res.worker, evaluation, "sampled for re-evaluation")
        self.stats.accepted += 1
        self._finish(job)
        return Outcome("accepted", job.id, job.fen, evaluation, worker=res.worker)

    def _fault(
        self, job: TrackedJob, worker: str, reason: str, kind: Kind, mine: bool, fault: str
    ) -> Outcome:
        """``worker`` answered ``job`` with no evaluation: not given it again
        (while another may take it); its fault if the job's first such answer."""
        first = job.faults == 0
        job.faults += 1
        job.failed_by.add(worker)
        out = self._retry(job, reason, kind, mine)
        return dataclasses.replace(out, fault=fault[:FAULT_TEXT]) if first else out

    def _invalid(self, res: Result, worker: str, problem: str) -> Outcome:
        self.stats.invalid += 1
        counted = worker in self.invalid_by or len(self.invalid_by) < SENDERS_COUNTED
        self.invalid_by[worker if counted else OTHER_SENDERS] += 1
        reason = f"invalid result from {worker}: {problem}"
        return Outcome("invalid", res.job, res.fen, worker=worker, reason=reason)

    # -- sampled re-evaluation -----------------------------------------------

    def _hold(self, job: TrackedJob, worker: str, evaluation: Evaluation, why: str) -> Outcome:
        job.claims[worker] = evaluation
        job.local_only = self.verify_locally
        # Out to another worker now (a late answer came first): that worker's
        # answer is the re-evaluation. Else it goes back to the queue (the
        # local pool, when it has it already, decides).
        if job.state == "remote" and (
            self.verify_locally or job.worker is None or job.worker in job.claims
        ):
            self._requeue(job)
        return Outcome("held", job.id, job.fen, worker=worker, reason=why)

    def _check(self, job: TrackedJob, by: str, found: Evaluation, *, trusted: bool) -> Outcome:
        """A re-evaluation of a held job by ``by`` (the local pool: ``trusted``)."""
        agree = [w for w, e in job.claims.items() if e == found]
        if not trusted and not agree:
            # Two workers disagree: one of them lied; a third opinion decides.
            return self._hold(job, by, found, "results disagree: re-evaluated again")
        liars = tuple((w, mismatch(e, found)) for w, e in job.claims.items() if e != found)
        self.stats.verified += 1
        self.stats.mismatches += len(liars)
        self.stats.accepted += 1
        self._finish(job)
        winner = agree[0] if agree else by
        return Outcome(
            "accepted", job.id, job.fen, found, worker=winner, liars=liars, verified=True
        )

    def stranded(self, usable: set[str], local: bool) -> list[Outcome]:
        """Queued jobs that nobody may take now, with no local pool, because
        every usable worker answered them already:

        - a job held for re-evaluation (a worker's result sampled), every other
          usable worker having answered it too (with a result or an error):
          settled at once (:meth:`_give_up`: one held result is kept
          unverified; results that disagree, with no third opinion to be had,
          fail the job);
        - a job answered with errors (or refused results) only: it may go to
          those workers again (nothing returned), ``max_attempts`` bounding
          it. With no usable worker at all it waits, as every job does.
        """
        out: list[Outcome] = []
        for job in list(self._jobs.values()):
            if job.state != "queued" or not (job.claims or job.failed_by):
                continue
            if local and (job.local_only or not job.claims):
                continue  # the local pool takes it
            if not job.local_only and usable - set(job.claims) - job.failed_by:
                continue  # another worker may take it
            if not job.claims:
                if usable:
                    job.failed_by.clear()
                continue
            why = "no worker left to re-evaluate it" + (
                f" (results of {', '.join(sorted(job.claims))} disagree)"
                if len(job.claims) > 1
                else ""
            )
            job.errors.append(why)
            out.append(self._give_up(job, why))
        return out

    # -- internals ---------------------------------------------------------

    def _retry(self, job: TrackedJob, reason: str, kind: Kind, mine: bool = True) -> Outcome:
        job.errors.append(reason)
        if job.state == "remote" and mine:
            if job.attempts >= self.max_attempts:
                return self._give_up(job, "; ".join(job.errors[-3:]))
            self._requeue(job)
        return Outcome(kind, job.id, job.fen, reason=reason)

    def _give_up(self, job: TrackedJob, reason: str) -> Outcome:
        """Out ``max_attempts`` times: a single held result is kept unverified,
        otherwise the job fails."""
        if len(job.claims) == 1:
            ((worker, evaluation),) = job.claims.items()
            self.stats.unverified += 1
            self.stats.accepted += 1
            self._finish(job)
            why = f"kept unverified: {job.errors[-1] if job.errors else 'not re-evaluated'}"
            return Outcome("accepted", job.id, job.fen, evaluation, worker=worker, reason=why)
        return self._fail(job, reason)

    def _unout(self, job: TrackedJob) -> None:
        if job.state == "remote":
            self._remote -= 1
            if job.worker is not None:
                self._out_by[job.worker] -= 1
                if self._out_by[job.worker] <= 0:
                    del self._out_by[job.worker]
        job.worker = None

    def _requeue(self, job: TrackedJob) -> None:
        self._unout(job)
        job.state = "queued"
        job.deadline = None
        heapq.heappush(self._queue, (job.priority, job.seq, job.id))

    def _finish(self, job: TrackedJob) -> None:
        self._unout(job)
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
