"""A pool of UCI engine processes behind a priority queue (asyncio).

One process per worker, ``Threads=1``, a fixed ``Hash``. A UCI process runs one
command at a time, so each process belongs to exactly one worker task: a
worker takes the most urgent job from the queue (lowest priority value first,
first come first served within a priority), searches it on its own process and
hands the result back. That is the exclusive lease.

The processes are driven by :mod:`livegain.engine.uci`, a small UCI client of
this project, not by python-chess's engine protocol: python-chess parses every
``info`` line of every depth and replays each PV on a board, which costs about
1.8 ms of this process's CPU per position against 0.25 ms for a minimal loop
over pipes, and still 0.7 ms with its ``info`` selector set to nothing (its
command machinery alone); the pool's budget is 1 ms per position, all its own
work included (measured figures and commands in that module's docstring and in
docs/benchmarks.md). python-chess still provides the board, FENs, option
validation and the reference the tests compare every result with.

Deterministic mode (the default): every search starts with ``ucinewgame`` (and
``isready``/``readyok``), and the position is sent as a bare FEN without move
history. With one thread and a fixed Hash the result is then a function of
(engine, limit, Hash, FEN) alone: the same whatever the pool size, the order,
or what the process searched before.

Faults: a process that dies mid-search is replaced (with an exponential
back-off when it keeps dying) and the position retried, at most
``max_retries`` times, then the caller gets an :class:`EngineSearchError`
naming the position. A search longer than ``search_timeout`` is abandoned: the
process is killed and replaced and the position retried under the same bound.
:meth:`EnginePool.close` (and cancelling the task that owns the pool) ends
every process and waits for it, so nothing is left behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import chess
import chess.engine

from livegain.core.evaluation import (
    Evaluation,
    check_valid,
    terminal_evaluation,
)
from livegain.engine.cache import EvalCache
from livegain.engine.errors import EngineError, EngineSearchError, EngineStartError, PoolClosedError
from livegain.engine.launch import (
    DEFAULT_ENGINE,
    Launched,
    default_workers,
    lower_priority,
    resolve_engine_path,
)
from livegain.engine.search import SearchLimit, evaluation_from_result
from livegain.engine.uci import ListRun, SearchList, SearchResult, UciError, UciProcess

log = logging.getLogger(__name__)

DEFAULT_HASH_MB = 16
DEFAULT_SEARCH_TIMEOUT = 120.0
START_TIMEOUT = 15.0
QUIT_TIMEOUT = 2.0
#: Searches a process holds queued behind the running one in a batch.
QUEUE_AHEAD = 2
#: A batch's finished evaluations are written to the cache this often (seconds)
#: while it runs, so that a long run stopped part-way keeps what it searched.
KEEP_EVERY_S = 10.0
MAX_BACKOFF = 5.0


@dataclass
class PoolStats:
    """Counters since start: positions asked, engine searches, cache hits, faults."""

    requests: int = 0
    searches: int = 0
    cache_hits: int = 0
    terminal: int = 0
    shared: int = 0
    restarts: int = 0
    crashes: int = 0
    timeouts: int = 0
    failures: int = 0
    search_seconds: float = 0.0


@dataclass
class _Job:
    white_to_move: bool
    fen: str
    future: asyncio.Future[Evaluation]
    priority: int
    waiters: int = 0
    taken: bool = False
    attempts: int = 0
    errors: list[str] = field(default_factory=list)


@dataclass
class _Batch:
    """A search list every worker joins (:meth:`EnginePool.evaluate_many`)."""

    work: SearchList
    done: asyncio.Future[None]


@dataclass(order=True)
class _Entry:
    priority: int
    seq: int
    job: _Job | _Batch = field(compare=False)


class _Engine:
    """One UCI process (:class:`~livegain.engine.uci.UciProcess`) of the pool."""

    def __init__(self, process: UciProcess) -> None:
        self.process = process
        self.pid: int = process.pid
        self.searching = False

    @classmethod
    async def start(
        cls,
        path: str,
        options: dict[str, Any],
        limit_s: float,
        proc: subprocess.Popen[bytes] | None = None,
        nice: int = 0,
    ) -> _Engine:
        """Start ``path`` (or adopt ``proc``, its process launched ahead by
        :class:`~livegain.engine.launch.Launched`), then handshake and configure."""
        process: UciProcess | None = None
        if proc is None:
            path = resolve_engine_path(path)
        else:
            process = UciProcess.adopt(proc)
            lower_priority(proc.pid, nice)
        try:
            async with asyncio.timeout(limit_s):
                if process is None:
                    process = UciProcess.start(path, nice)
                await process.handshake()
                await process.configure(options)
        except TimeoutError:
            await _kill(process)
            raise EngineStartError(
                path, f"no 'uciok'/'readyok' within {limit_s:g} s (not a UCI engine?)"
            ) from None
        except (UciError, OSError, EOFError) as exc:
            await _kill(process)
            raise EngineStartError(path, f"{type(exc).__name__}: {exc}") from exc
        except BaseException:
            await _kill(process)
            raise
        return cls(process)

    @property
    def name(self) -> str:
        return self.process.name or "unknown engine"

    def has_option(self, name: str) -> bool:
        return self.process.has_option(name)

    async def search(self, fen: str, limit: SearchLimit, deterministic: bool) -> SearchResult:
        """One search; raises :class:`~livegain.engine.uci.EngineTerminatedError`
        as soon as the process dies, whatever the command is waiting for."""
        return await self.process.search(fen, limit.depth, limit.nodes, new_game=deterministic)

    def alive(self) -> bool:
        return self.process.alive()

    async def close(self, graceful: bool = True) -> None:
        """Quit (politely when idle and ``graceful``), else kill; always reap."""
        if graceful and self.alive() and not self.searching:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(QUIT_TIMEOUT):
                    await self.process.quit()
        await _kill(self.process)


async def _kill(process: UciProcess | None) -> None:
    if process is not None:
        await process.kill(QUIT_TIMEOUT)


class EnginePool:
    """N UCI processes evaluating positions from one priority queue.

    >>> async with EnginePool(workers=2, limit=SearchLimit(depth=12)) as pool:
    ...     ev = await pool.evaluate(chess.Board())
    """

    def __init__(
        self,
        engine_path: str = DEFAULT_ENGINE,
        workers: int | None = None,
        limit: SearchLimit | None = None,
        hash_mb: int = DEFAULT_HASH_MB,
        deterministic: bool = True,
        cache: EvalCache | None = None,
        search_timeout: float | None = DEFAULT_SEARCH_TIMEOUT,
        max_retries: int = 2,
        start_timeout: float = START_TIMEOUT,
        options: dict[str, Any] | None = None,
        launched: Launched | None = None,
        nice: int = 0,
        keep_every_s: float = KEEP_EVERY_S,
    ) -> None:
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        if hash_mb < 1:
            raise ValueError(f"hash_mb must be at least 1, got {hash_mb}")
        self.engine_path = str(engine_path)
        self.workers = workers or default_workers()
        self.limit = limit or SearchLimit()
        self.hash_mb = hash_mb
        self.deterministic = deterministic
        self.cache = cache
        self.search_timeout = search_timeout
        self.max_retries = max_retries
        self.start_timeout = start_timeout
        self.extra_options = dict(options or {})
        self.stats = PoolStats()
        self.engine_name = ""
        self._engines: list[_Engine | None] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._queue: asyncio.PriorityQueue[_Entry] = asyncio.PriorityQueue()
        self._seq = itertools.count()
        self._inflight: dict[str, _Job] = {}
        self._writes: set[asyncio.Future[None]] = set()  # cache writes under way
        self._started = False
        self._closed = False
        self._has_wdl = False
        self._launched = launched
        self.nice = nice
        """Engine processes run this many ``nice`` steps below this process."""
        self.keep_every_s = keep_every_s
        """How often a batch writes its finished evaluations to the cache."""

    # -- life cycle -------------------------------------------------------

    @property
    def engine_options(self) -> dict[str, Any]:
        opts: dict[str, Any] = {"Threads": 1, "Hash": self.hash_mb, "UCI_ShowWDL": True}
        opts.update(self.extra_options)
        return opts

    async def start(self) -> None:
        """Start every process; raise :class:`EngineStartError` if one cannot."""
        if self._started:
            return
        self._started = True
        results = await asyncio.gather(
            *(self._start_engine() for _ in range(self.workers)), return_exceptions=True
        )
        engines = [r for r in results if isinstance(r, _Engine)]
        errors = [r for r in results if isinstance(r, BaseException)]
        if errors:
            await asyncio.gather(*(e.close() for e in engines), return_exceptions=True)
            self._closed = True
            raise errors[0]
        self._engines = list(engines)
        self.engine_name = engines[0].name
        self._has_wdl = engines[0].has_option("UCI_ShowWDL")
        self._tasks = [
            asyncio.create_task(self._worker(i), name=f"engine-worker-{i}")
            for i in range(self.workers)
        ]
        log.info("engine pool started: %s x%d", self.describe(), self.workers)

    async def _start_engine(self) -> _Engine:
        # a process launched ahead for this pool, when there is one left
        proc = None if self._launched is None else self._launched.take(self.engine_path)
        return await _Engine.start(
            self.engine_path, self.engine_options, self.start_timeout, proc, self.nice
        )

    async def close(self) -> None:
        """Stop the workers, end every process (idempotent). Pending calls fail."""
        if self._closed and not self._tasks:
            return
        self._closed = True
        for task in self._tasks:
            task.cancel()
        # Shielded so that a cancellation of the caller still lets processes be reaped.
        await asyncio.shield(self._shutdown())

    async def _shutdown(self) -> None:
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        engines = [e for e in self._engines if e is not None]
        self._engines = []
        await asyncio.gather(*(e.close() for e in engines), return_exceptions=True)
        if self._writes:  # the cache's rows are written before close() returns
            await asyncio.gather(*list(self._writes), return_exceptions=True)
        for job in list(self._inflight.values()):
            if not job.future.done():
                job.future.set_exception(PoolClosedError("engine pool closed"))
                job.future.exception()  # mark retrieved: nobody may be waiting
        self._inflight.clear()

    async def __aenter__(self) -> EnginePool:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # -- description ------------------------------------------------------

    def describe(self) -> str:
        """``"Stockfish 15.1 depth 12"``."""
        return f"{self.engine_name or Path(self.engine_path).name} {self.limit.describe()}"

    @property
    def engine_key(self) -> str:
        """Everything that can change a result, for the cache key."""
        return (
            f"{self.engine_name}|{self.limit.describe()}|hash={self.hash_mb}|threads=1"
            f"|deterministic={int(self.deterministic)}"
            + "".join(
                f"|{k}={v}"
                for k, v in sorted(self.extra_options.items())
                if k not in ("Threads", "Hash", "UCI_ShowWDL")
            )
        )

    def pids(self) -> list[int]:
        """Process ids of the running engines (for diagnostics and tests)."""
        return [e.pid for e in self._engines if e is not None]

    def busy_pids(self) -> list[int]:
        """Process ids of engines searching right now."""
        return [e.pid for e in self._engines if e is not None and e.searching]

    @property
    def queued(self) -> int:
        return self._queue.qsize()

    # -- evaluation -------------------------------------------------------

    def _check_running(self) -> None:
        if not self._started or self._closed:
            raise PoolClosedError("engine pool is not running (call start())")

    def _by_rule(self, board: chess.Board) -> Evaluation | None:
        """A request counted; an invalid position refused; a finished one scored."""
        self.stats.requests += 1
        check_valid(board)
        terminal = terminal_evaluation(board)
        if terminal is not None:
            self.stats.terminal += 1
        return terminal

    async def evaluate(
        self, board: chess.Board, priority: int = 0, *, fen: str | None = None
    ) -> Evaluation:
        """Evaluate ``board`` at the pool's limit (lower ``priority`` served first).

        ``fen``: the board's FEN when the caller has it already (python-chess
        takes about 50 us to write one, a twentieth of the pool's budget per
        position); it must be ``board.fen()``.

        Finished positions are scored without an engine (see
        :func:`terminal_evaluation`); cached positions come from the cache;
        a position already queued or searching is shared, not searched twice.
        """
        self._check_running()
        terminal = self._by_rule(board)
        if terminal is not None:
            return terminal
        if fen is None:
            fen = board.fen()
        if self.cache is not None:
            hit = await self.cache.aget(self.engine_key, fen)
            if hit is not None:
                self.stats.cache_hits += 1
                return hit
        job = self._inflight.get(fen)
        if job is None or job.future.done():
            future = asyncio.get_running_loop().create_future()
            job = _Job(board.turn == chess.WHITE, fen, future, priority)
            self._inflight[fen] = job
            job.future.add_done_callback(functools.partial(self._forget, job))
            self._queue.put_nowait(_Entry(priority, next(self._seq), job))
        else:
            self.stats.shared += 1
            if priority < job.priority and not job.taken:
                job.priority = priority
                self._queue.put_nowait(_Entry(priority, next(self._seq), job))
        job.waiters += 1
        try:
            return await asyncio.shield(job.future)
        finally:
            job.waiters -= 1
            if job.waiters == 0 and not job.taken and not job.future.done():
                job.future.cancel()  # nobody wants it any more: drop it unsearched

    async def evaluate_many(
        self,
        boards: Sequence[chess.Board],
        fens: Sequence[str] | None = None,
        priority: int = 0,
        on_progress: Callable[[int], None] | None = None,
        *,
        by_rule: bool = True,
    ) -> list[Evaluation]:
        """Evaluate every board (a batch: ``livegain analyze``); the same
        evaluations as :meth:`evaluate` on each, in order.

        Finished positions are scored by rule and cached ones come from the
        cache, as with :meth:`evaluate` (``by_rule=False``: the caller has
        already checked the boards and scored those the rules decide, as
        :mod:`livegain.batch.engine_analysis` does with each game's history: every
        board is searched); the rest (each distinct position
        once) are searched as one :class:`~livegain.engine.uci.SearchList`
        that every worker joins: each process's reader thread chains its
        searches and the event loop is woken once per process at the end,
        not once per position (docs/benchmarks.md). ``on_progress`` gets the
        number of positions done, a few times a second. Raises
        :class:`EngineSearchError` if a position cannot be searched.
        """
        self._check_running()
        out: list[Evaluation | None] = [None] * len(boards)
        slots: dict[str, list[int]] = {}
        white: dict[str, bool] = {}
        if not by_rule:
            self.stats.requests += len(boards)
        for i, board in enumerate(boards):
            terminal = self._by_rule(board) if by_rule else None
            if terminal is not None:
                out[i] = terminal
                continue
            fen = fens[i] if fens is not None else board.fen()
            slots.setdefault(fen, []).append(i)
            white[fen] = board.turn == chess.WHITE
        if self.cache is not None and slots:  # one trip to the cache's thread
            for fen, hit in (await self.cache.aget_many(self.engine_key, list(slots))).items():
                self.stats.cache_hits += len(slots[fen])
                for i in slots.pop(fen):
                    out[i] = hit
        self.stats.shared += sum(len(i) - 1 for i in slots.values())
        order = list(slots)
        if order:
            limit = self.limit
            work = SearchList(order, limit.depth, limit.nodes, self.deterministic, self.max_retries)
            batch = _Batch(work, asyncio.get_running_loop().create_future())
            for _ in range(self.workers):
                self._queue.put_nowait(_Entry(priority, next(self._seq), batch))
            t0 = last_kept = time.perf_counter()
            unkept = list(range(len(order)))  # searches not yet written to the cache
            try:
                while True:
                    done, _ = await asyncio.wait({batch.done}, timeout=0.25)
                    if on_progress is not None:
                        on_progress(len(boards) - len(order) + work.finished)
                    if done:
                        break
                    if self._closed:
                        raise PoolClosedError("engine pool closed")
                    if time.perf_counter() - last_kept >= self.keep_every_s:
                        unkept = self._keep(order, work, white, unkept)
                        last_kept = time.perf_counter()
            except asyncio.CancelledError:
                work.give_up("cancelled")  # the workers finish what they hold and stop
                self._keep(order, work, white, unkept)  # a stopped run keeps what it searched
                raise
            self.stats.search_seconds += time.perf_counter() - t0
            for k, fen in enumerate(order):
                result = work.results[k]
                if result is None:
                    continue
                ev = evaluation_from_result(result, white[fen])
                self.stats.searches += 1
                for i in slots[fen]:
                    out[i] = ev
            self._keep(order, work, white, unkept)  # the rest
            for k, fen in enumerate(order):
                if work.results[k] is None:
                    self.stats.failures += 1
                    raise EngineSearchError(
                        f"cannot evaluate {fen!r} after {len(work.errors[k])} attempts: "
                        + "; ".join(work.errors[k])
                    )
        return [ev for ev in out if ev is not None]

    def _keep(
        self, order: Sequence[str], work: SearchList, white: dict[str, bool], unkept: list[int]
    ) -> list[int]:
        """Queue one cache write of the finished searches among ``unkept``
        (indices into ``order``), not awaited (close() waits); return those
        still unfinished. A cache fault never loses the results."""
        if self.cache is None:
            return unkept
        found: list[tuple[str, Evaluation]] = []
        left: list[int] = []
        for k in unkept:
            result = work.results[k]
            if result is None:
                left.append(k)
            else:
                found.append((order[k], evaluation_from_result(result, white[order[k]])))
        if found:
            try:
                self._track(self.cache.put_many_soon(self.engine_key, found))
            except Exception:
                log.exception("cannot store evaluations in the cache")
        return left

    async def _run_batch(self, idx: int, batch: _Batch) -> None:
        """Worker ``idx``'s part of a batch: search from its list until none is
        left to hand out; a process that fails gives its positions back and is
        replaced."""
        work = batch.work
        failures = 0
        try:
            while work.waiting:
                engine = self._engines[idx]
                if engine is None:
                    try:
                        engine = await self._replace(idx, failures)
                    except EngineStartError as exc:
                        failures += 1
                        if failures > self.max_retries:
                            work.give_up(str(exc))
                        continue
                run = ListRun(ahead=QUEUE_AHEAD)
                engine.searching = True
                task = asyncio.create_task(engine.process.search_list(work, run))
                why = ""
                try:
                    while not task.done():
                        await asyncio.wait({task}, timeout=self.search_timeout)
                        stalled = time.monotonic() - run.last_result
                        timeout = self.search_timeout
                        if not task.done() and timeout is not None and stalled > timeout:
                            self.stats.timeouts += 1
                            why = f"search exceeded {timeout:g} s (pid {engine.pid} killed)"
                            break
                    if not why:
                        task.result()
                        engine.searching = False
                        failures = 0
                        continue
                except (UciError, EngineError, OSError) as exc:
                    self.stats.crashes += 1
                    why = f"{type(exc).__name__}: {exc}"
                finally:
                    if not task.done():
                        task.cancel()
                # The process failed: what it held goes back, and it is replaced.
                for item in run.inflight:
                    work.give_back(item.index, why)
                run.inflight.clear()
                failures += 1
                self._engines[idx] = None
                await engine.close(graceful=False)
        finally:
            if work.done and not batch.done.done():
                batch.done.set_result(None)

    def _forget(self, job: _Job, _future: object = None) -> None:
        if self._inflight.get(job.fen) is job:
            del self._inflight[job.fen]

    # -- workers ----------------------------------------------------------

    async def _worker(self, idx: int) -> None:
        limit = self.limit
        consecutive_failures = 0
        try:
            while True:
                entry = await self._queue.get()
                job = entry.job
                if isinstance(job, _Batch):
                    if not job.done.done():
                        await self._run_batch(idx, job)
                    continue
                if job.taken or job.future.done():
                    continue
                job.taken = True
                while not job.future.done():
                    engine = self._engines[idx]
                    if engine is None:
                        try:
                            engine = await self._replace(idx, consecutive_failures)
                        except EngineStartError as exc:
                            consecutive_failures += 1
                            job.errors.append(str(exc))
                            job.attempts += 1
                            if job.attempts > self.max_retries:
                                self._fail(job)
                            continue
                    job.attempts += 1
                    t0 = time.perf_counter()
                    engine.searching = True
                    try:
                        async with asyncio.timeout(self.search_timeout):
                            result = await engine.search(job.fen, limit, self.deterministic)
                        engine.searching = False
                        ev = evaluation_from_result(result, job.white_to_move)
                    except TimeoutError:
                        self.stats.timeouts += 1
                        job.errors.append(
                            f"search exceeded {self.search_timeout:g} s (pid {engine.pid} killed)"
                        )
                    except (UciError, EngineError, OSError) as exc:
                        self.stats.crashes += 1
                        code = engine.process.returncode
                        job.errors.append(
                            f"{type(exc).__name__}: {exc}"
                            + (f" (exit code {code})" if code is not None else "")
                        )
                    else:
                        consecutive_failures = 0
                        self.stats.searches += 1
                        self.stats.search_seconds += time.perf_counter() - t0
                        if self.cache is not None:
                            # Not awaited: the engine goes on with the next
                            # position while the row is written (close() waits).
                            self._store(job.fen, ev)
                        if not job.future.done():
                            job.future.set_result(ev)
                        break
                    # The search failed: this process is not trusted any more.
                    consecutive_failures += 1
                    self._engines[idx] = None
                    await engine.close(graceful=False)
                    if job.attempts > self.max_retries:
                        self._fail(job)
        except asyncio.CancelledError:
            # Closing: a search cut short leaves the protocol mid-command, so
            # that process is killed rather than asked to quit.
            engine = self._engines[idx] if idx < len(self._engines) else None
            if engine is not None and engine.searching:
                self._engines[idx] = None
                await asyncio.shield(engine.close(graceful=False))
            raise

    def _store(self, fen: str, ev: Evaluation) -> None:
        assert self.cache is not None
        try:
            write = self.cache.put_soon(self.engine_key, fen, ev)
        except Exception:  # a cache fault never loses the result
            log.exception("cannot store evaluation in the cache")
            return
        self._track(write)

    def _track(self, write: asyncio.Future[None]) -> None:
        self._writes.add(write)
        write.add_done_callback(self._stored)

    def _stored(self, write: asyncio.Future[None]) -> None:
        self._writes.discard(write)
        if not write.cancelled() and write.exception() is not None:
            log.error("cannot store evaluation in the cache: %s", write.exception())

    async def _replace(self, idx: int, failures: int) -> _Engine:
        delay = min(MAX_BACKOFF, 0.05 * 2 ** max(0, failures - 1)) if failures else 0.0
        if delay:
            await asyncio.sleep(delay)
        engine = await self._start_engine()
        self.stats.restarts += 1
        self._engines[idx] = engine
        log.warning("engine worker %d: replaced the engine process (pid %d)", idx, engine.pid)
        return engine

    def _fail(self, job: _Job) -> None:
        self.stats.failures += 1
        if not job.future.done():
            job.future.set_exception(
                EngineSearchError(
                    f"cannot evaluate {job.fen!r} after {job.attempts} attempts: "
                    + "; ".join(job.errors)
                )
            )
            job.future.exception()  # retrieved even if every waiter has gone


__all__ = [
    "EnginePool",
    "PoolStats",
]
