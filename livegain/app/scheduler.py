"""The evaluation scheduler: which positions go to the engine, and when.

After every snapshot and every evaluation it asks the game state which
positions wait (the latest ply of every board first, interleaved with the
backfill), answers from the store when it can, and hands the rest to the
engine: at most ``max_inflight`` at a time, never the same board, ply and
FEN twice. A failed search is retried, at most :data:`MAX_EVAL_ATTEMPTS`
times a position, then given up (reported in ``/healthz``). Each result is
stored and handed to ``record``, which publishes what it changes: a board's
answers from the store go in one batch (a board of 60 plies whose positions
the store knows is recorded and published once, not 60 times).

It works on the service's :class:`~livegain.app.runtime.Runtime` (the game
state, the store and the engine), handed to :meth:`Scheduler.start` once the
service has started; before that, and after :meth:`Scheduler.stop`, it
schedules nothing.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence

import structlog

from livegain.app.runtime import Runtime
from livegain.app.stats import ServiceStats
from livegain.app.store_writes import StoreWrites
from livegain.core.board.updates import EvalRequest
from livegain.core.evaluation import Evaluation

log = structlog.get_logger("livegain.scheduler")

MAX_EVAL_ATTEMPTS = 3
STORE_MISSED_MAX = 100_000
"""Positions remembered as absent from the store (a memo that avoids lookups)."""
STORE_SLICE = 0.005
"""Seconds of the store's answers per turn of the scheduler (at least one board's)."""
STORE_BATCH = 16
"""Positions of a board recorded from the store at once (one publication)."""


def _interleave(
    latest: Iterable[EvalRequest], backfill: Iterable[EvalRequest]
) -> Iterator[EvalRequest]:
    """Alternate latest positions and backfill, so both make progress.

    When moves arrive faster than the engine evaluates, serving every board's
    latest position strictly first would starve the backfill, and with it the
    contiguous evaluated prefix that gains and perceived ratings need. Lazy:
    the scheduler reads only as far as it has room for.
    """
    a, b = iter(latest), iter(backfill)
    while True:
        x, y = next(a, None), next(b, None)
        if x is None and y is None:
            return
        if x is not None:
            yield x
        if y is not None:
            yield y


Record = Callable[[str, Sequence[tuple[EvalRequest, Evaluation]]], None]
"""Where evaluations go: ``record(board_id, [(request, evaluation), ...])``
records one board's evaluations and publishes what they change."""


class Scheduler:
    """The service's evaluations in flight.

    ``record``: one function, not an object of a protocol: it is the only
    thing the scheduler asks of the service, and the service answers it with
    one of its methods (its own doing: recording into the game state and
    publishing). What it works on is the :class:`Runtime`, handed to
    :meth:`start`."""

    def __init__(self, stats: ServiceStats, writes: StoreWrites, record: Record) -> None:
        self.stats = stats
        self.writes = writes
        self.record = record
        self.runtime: Runtime | None = None
        """What it works on (None: not started, or stopped)."""
        self.max_inflight: int | None = None
        self.inflight: dict[tuple[str, int, str], asyncio.Task[None]] = {}
        self.failures: Counter[tuple[str, int, str]] = Counter()
        """Failed searches per position, until it succeeds."""
        self.given_up: set[tuple[str, int, str]] = set()
        self.failed_at: deque[float] = deque(maxlen=1000)
        """When searches failed (monotonic), for ``/healthz``'s recent failures."""
        self.last_error: str | None = None
        self._store_missed: set[str] = set()
        self._store_due: dict[str, None] = {}
        """Boards that gained positions the store has not been asked about yet."""
        self._store_spent = 0.0
        """Seconds the last turn spent on the store's answers (as long a pause follows)."""
        self._waiting: dict[str, None] = {}
        """Boards that may have positions waiting: those that gained some
        (:meth:`BoardRegistry.take_changed`) and still have some left."""
        self._wake = asyncio.Event()

    def start(self, runtime: Runtime, max_inflight: int) -> None:
        """Work on ``runtime``, with at most ``max_inflight`` searches at once."""
        self.runtime = runtime
        self.max_inflight = max_inflight

    def stop(self) -> None:
        """Stop every search in flight and schedule nothing more (the service
        is stopping: its store is about to close)."""
        self.runtime = None
        for task in list(self.inflight.values()):
            task.cancel()
        self.inflight.clear()

    def wake(self) -> None:
        self._wake.set()

    async def run(self) -> None:
        """Schedule after every wake-up (a snapshot, an evaluation); runs until cancelled."""
        while True:
            self.schedule()
            if self._store_due:  # more boards to ask the store about: after the others' turn
                await asyncio.sleep(self._store_spent)
                continue
            await self._wake.wait()
            self._wake.clear()

    def schedule(self) -> None:
        """Answer what the store knows, then fill the engine's free slots.

        Runs after every snapshot and every evaluation, so it costs only what
        changed: the store is asked about the positions of boards that gained
        some since the last turn (and, below, about a position just before it
        would go to the engine), and the list of pending positions is read
        only as far as there are free slots.
        """
        rt = self.runtime
        if rt is None or self.max_inflight is None:
            return
        t = rt.registry
        due = self._store_due
        due.update(dict.fromkeys(t.take_changed()))
        # The store's answers, at most STORE_BATCH positions of a board at a
        # time (a new board of 60 plies the store knows costs milliseconds to
        # record and publish), for at most STORE_SLICE seconds a turn, the
        # rest on the next turns: a file of a thousand games whose positions
        # the store knows does not hold the event loop.
        waiting = self._waiting
        started = time.perf_counter()
        while due and time.perf_counter() - started < STORE_SLICE:
            bid = next(iter(due))
            del due[bid]
            g = t.boards.get(bid)
            if g is None:
                continue
            if rt.store is None:  # nothing to ask: the engine's
                waiting[bid] = None
                continue
            hits = list(itertools.islice(self._store_hits(g.iter_requests()), STORE_BATCH))
            if hits:
                self.record(bid, hits)
            if len(hits) == STORE_BATCH:
                due[bid] = None  # maybe more: the board's next batch after the others'
            else:
                waiting[bid] = None
        self._store_spent = time.perf_counter() - started
        if due:
            self._wake.set()
        if len(self.inflight) >= self.max_inflight:
            return
        # Only the boards with positions waiting are read (a board gains some
        # only through take_changed): with 2,000 boards nearly all evaluated,
        # reading every board on every wake-up held the event loop.
        for bid in list(waiting):
            g = t.boards.get(bid)
            if g is None or g.pending_count == 0:
                del waiting[bid]
        if not waiting:
            return
        for req in _interleave(t.iter_latest(waiting), t.iter_backfill(waiting)):
            key = req.key
            if key in self.inflight or key in self.given_up:
                continue
            if self._from_store(req):
                continue
            self.inflight[key] = asyncio.create_task(self._evaluate(req, rt), name=f"eval-{key}")
            if len(self.inflight) >= self.max_inflight:
                return

    def _store_hits(
        self, requests: Iterable[EvalRequest]
    ) -> Iterator[tuple[EvalRequest, Evaluation]]:
        """The positions of ``requests`` the store knows, with their evaluations."""
        for req in requests:
            if req.key not in self.inflight and (ev := self._stored(req)) is not None:
                yield req, ev

    def _from_store(self, req: EvalRequest) -> bool:
        """Record ``req``'s evaluation from the store if it is there (True)."""
        ev = self._stored(req)
        if ev is None:
            return False
        self.record(req.board_id, [(req, ev)])
        return True

    def _stored(self, req: EvalRequest) -> Evaluation | None:
        """``req``'s evaluation if the store has it (counted as a hit)."""
        rt = self.runtime
        if rt is None or rt.store is None or req.fen in self._store_missed:
            return None
        ev = rt.store.get_eval(rt.engine_key, req.fen)
        if ev is not None:
            self.stats.store_hits += 1
            return ev
        # Only this process adds evaluations to the store, and it records
        # them as it does: a position missing now stays missing. (A
        # memo only: past its bound it starts again, costing lookups.)
        if len(self._store_missed) >= STORE_MISSED_MAX:
            self._store_missed.clear()
        self._store_missed.add(req.fen)
        return None

    async def _evaluate(self, req: EvalRequest, rt: Runtime) -> None:
        key = req.key
        try:
            self.stats.engine_calls += 1
            ev = await rt.evaluator.evaluate(req.board(), priority=req.priority)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.failures[key] += 1
            self.stats.engine_failures += 1
            self.failed_at.append(time.monotonic())
            self.last_error = f"{type(exc).__name__}: {exc}"
            attempts = self.failures[key]
            log.warning(
                "evaluation_failed",
                board_id=req.board_id,
                ply=req.ply,
                fen=req.fen,
                attempt=attempts,
                error=str(exc),
            )
            if attempts >= MAX_EVAL_ATTEMPTS:
                self.given_up.add(key)
                self.stats.board_failures[req.board_id] += 1
            else:
                await asyncio.sleep(0.5 * attempts)
            return
        finally:
            self.inflight.pop(key, None)
            self._wake.set()
        self.failures.pop(key, None)  # failures are counted per position until it succeeds
        if self.writes.write(
            lambda store: store.save_eval(rt.engine_key, req.fen, ev),
            board_id=req.board_id,
            ply=req.ply,
        ):
            self._store_missed.discard(req.fen)  # other boards may need it too
        self.record(req.board_id, [(req, ev)])
