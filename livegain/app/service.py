"""The running service: feeds -> game state -> engine -> WebSocket, MQTT and store.

Everything runs in one asyncio :class:`~asyncio.TaskGroup`:

- one task per feed (``livegain.feeds``) delivering :class:`GameSnapshot` values
  to :meth:`Service.on_snapshot`, which folds them into the
  :class:`~livegain.core.board.registry.BoardRegistry` at once (pure and fast) and
  publishes what changed;
- the scheduler: asks the registry of boards which positions need an evaluation
  (latest ply of every board first, then backfill), answers from the store
  when it can, otherwise hands them to the engine pool (at most
  ``max_inflight`` at a time, never the same board/ply/FEN twice) and records
  each result, publishing the updates it produces;
- the WebSocket/HTTP server, and the MQTT publisher when enabled.

The models people are shown are picked at start for the engine's name and
search limit, once per rating scale and kind of game, and then per board
(:meth:`Service.models_for`): the calibrated perceived-rating model of the
board's rating ``scale`` (:func:`perceived_model_for`: ``fide`` or
``lichess``, from its event's ``[[events]]`` entry, else its feed's entry,
else ``fide``) gives ``*_perceived`` and ``*_form`` beside Algorithm 4
(``*_algorithm4``); the human win/draw/loss model of the board's ``kind``
(:func:`wdl_model_for`: from its event's entry, else its feed's, else the
game's ``TimeControl`` tag, else ``classical-otb``) gives the chances shown
(``wdl``) beside the engine's own (``engine_wdl``). Without a model
``*_perceived`` is null and ``wdl`` is the engine's.

A failure while handling one board is caught, logged with the board id and
counted on that board; the other boards carry on. SIGINT/SIGTERM (see
``livegain serve``) set the stop event: tasks are cancelled, the engine
processes are ended and the store is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import structlog

from livegain.app.broadcast_delay import BroadcastDelay
from livegain.app.evaluator import Evaluator, LimitedEngine, NamedEngine, ParallelEngine
from livegain.app.feed_health import FeedHealth
from livegain.app.health import EngineRestarts, board_status, health_report, metrics_view
from livegain.app.live_standings import LiveStandings
from livegain.app.loop_lag import LoopLag
from livegain.app.match import MatchTracker
from livegain.app.metrics import MetricsView, ServiceMetrics
from livegain.app.models import (
    ModelChoice,
    engine_rating_for,
)
from livegain.app.outputs import Outputs
from livegain.app.runtime import Runtime
from livegain.app.scheduler import Scheduler
from livegain.app.shown import ShownRecord, load_shown
from livegain.app.stats import ServiceStats
from livegain.app.store import Store
from livegain.app.store_writes import StoreWrites
from livegain.config import Settings
from livegain.core.board.board import BoardGame
from livegain.core.board.registry import BoardRegistry
from livegain.core.board.updates import Applied, BoardUpdate, EvalRequest
from livegain.core.evaluation import Evaluation
from livegain.core.human_wdl import (
    CLASSICAL_OTB,
    HumanWdlModel,
)
from livegain.core.moments import Moment, MomentTracker
from livegain.core.perceived import PerceivedModel
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.core.snapshot import GameSnapshot
from livegain.engine.pool import EnginePool
from livegain.engine.search import SearchLimit
from livegain.feeds.base import Feed, RestorableFeed, make_feed
from livegain.publish import convert, schema
from livegain.publish.delay_line import DelayLine
from livegain.publish.entry import BoardEntry
from livegain.publish.limits import server_limits
from livegain.publish.mqtt import MqttPublisher
from livegain.publish.publication import Publication, Step
from livegain.publish.server import LiveServer
from livegain.remote.evaluator import RemoteEvaluator

log = structlog.get_logger("livegain.service")


STORE_FILE = "livegain.sqlite3"
FEED_FAILING_AFTER = 30.0
"""Seconds of errors only (no game read) before a feed counts as failing."""
GC_FREEZE_EVERY = 1.0
"""Seconds between moves of the objects alive to the permanent generation."""
TAKEOVER_TICK = 1.0
"""Seconds between checks for a stalled source to hand its boards over."""
RECENT = 120.0
"""Seconds a feed crash, a feed error or an engine fault counts as recent."""


# --------------------------------------------------------------------------
# The service
# --------------------------------------------------------------------------


class _Sink:
    """The :class:`FeedSink` one feed reports to."""

    def __init__(self, service: Service, feed_name: str) -> None:
        self.service = service
        self.feed_name = feed_name

    def snapshot(self, snap: GameSnapshot) -> None:
        self.service.feed_health(self.feed_name).read_ok()
        self.service.on_snapshot(snap)

    def error(self, source: str, where: str, message: str) -> None:
        self.service.feed_health(self.feed_name).failed(f"{where}: {message}")
        self.service.on_feed_error(source or self.feed_name, where, message)


class Service:
    """Wire feeds, the game state, the engine and the publishers together.

    ``perceived_model``: the calibrated model to use for every board; None
    (the default) picks one per rating scale at start for the engine and
    search limit (:func:`perceived_model_for`). ``wdl_model``: the human
    win/draw/loss model for every board; None picks one per kind of game
    (:func:`wdl_model_for`).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        evaluator: Evaluator | None = None,
        feeds: Sequence[Feed] = (),
        max_inflight: int | None = None,
        perceived_model: PerceivedModel | None = None,
        wdl_model: HumanWdlModel | None = None,
    ) -> None:
        self.settings = settings
        self._evaluator = evaluator
        # The models people are shown, per rating scale and kind of game.
        self.models = ModelChoice(settings, perceived_model, wdl_model)
        self._own_pool: EnginePool | None = None
        self._own_remote: RemoteEvaluator | None = None
        self.extra_feeds = list(feeds)
        self.feeds: list[Feed] = []
        self._max_inflight = max_inflight
        self.stats = ServiceStats()
        self.matches = [MatchTracker(m) for m in settings.matches]
        self.moments = MomentTracker()
        """Key moments (docs/maths.md): found in each board's updates, published."""
        self.loop_lag = LoopLag()
        """How late the event loop runs, and its stalls (``/healthz``)."""
        self.metrics = ServiceMetrics(self._metrics_view)
        """Prometheus ``/metrics``: read from the service when asked."""
        self.server = LiveServer(
            settings.server.host,
            settings.server.port,
            limits=server_limits(settings.server),
            health=self.health,
            board_status=self.board_status,
            admin_token=settings.server.admin_token,
            ssl=settings.server.ssl_context(),
            compression=settings.server.compression,
            reuse_port=settings.server.reuse_port,
            owner=self,
            metrics=self.metrics.render,
        )
        self.outputs = Outputs(self.server)
        """Where what viewers see goes: the server, and MQTT once enabled
        (the publication chain's last steps)."""
        # Standings and tournament-win odds per event (docs/standings.md).
        self.standings = LiveStandings(
            settings.events,
            self._publish_standings,
            interval=settings.standings.interval,
            share=settings.standings.cpu_share,
            prior=self.models.event_prior,
        )
        self._board_active: dict[str, float] = {}
        """Per board, when it last got a move or a new result (for board_expiry)."""
        self.feed_failing_after = FEED_FAILING_AFTER
        self.recent = RECENT
        self._feed_health: dict[str, FeedHealth] = {}
        self.store_writes = StoreWrites(self.stats)
        """Writes to the store: failures counted and logged, refused snapshots retried."""
        self.engine_restarts = EngineRestarts()
        """When the engine last restarted a process (a recent restart is reported)."""
        self.engine_desc = "?"
        self.ready = asyncio.Event()
        self.scheduler = Scheduler(self.stats, self.store_writes, self._record)
        """The evaluations in flight: which positions go to the engine, and when."""
        self._runtime: Runtime | None = None
        self._started = time.monotonic()
        self.delay = BroadcastDelay(
            settings,
            self.outputs,
            self.store_writes,
            self.stats,
            self.metrics.publish_seconds.observe,
        )
        """The broadcast delay (its line None: every board live)."""
        self.chain: Step = self.delay
        """Where each publication goes (docs/service.md, "Publication"): the
        broadcast delay, then the outputs."""

    # ------------------------------------------------------------ lifecycle

    @property
    def evaluator(self) -> Evaluator:
        if self._evaluator is None:
            raise RuntimeError("service not started")
        return self._evaluator

    @property
    def runtime(self) -> Runtime | None:
        """What the service runs on once started (None: not yet): the game
        state, the store and the engine (:class:`Runtime`)."""
        return self._runtime

    @property
    def registry(self) -> BoardRegistry | None:
        """Every board (None: not started)."""
        return self._runtime.registry if self._runtime is not None else None

    @property
    def store(self) -> Store | None:
        """Where evaluations and snapshots are kept (None: not started, or
        ``persist = false``, or stopped)."""
        return self._runtime.store if self._runtime is not None else None

    @property
    def engine_key(self) -> str:
        """The engine's key in the store ("?" until started)."""
        return self._runtime.engine_key if self._runtime is not None else "?"

    @property
    def engine_pool(self) -> EnginePool | None:
        """The engine pool the service started itself (None: it was given an
        evaluator, or its engine is remote; a remote engine's local pool is
        the :attr:`remote_engine`'s)."""
        return self._own_pool

    @property
    def remote_engine(self) -> RemoteEvaluator | None:
        """The engine workers the service asks through the broker, when it
        started them itself (None: a local engine, or one it was given)."""
        return self._own_remote

    @property
    def mqtt(self) -> MqttPublisher | None:
        """The MQTT publisher (None: MQTT is off); one of :attr:`outputs`."""
        return self.outputs.mqtt

    @mqtt.setter
    def mqtt(self, publisher: MqttPublisher | None) -> None:
        self.outputs.mqtt = publisher

    @property
    def delay_line(self) -> DelayLine | None:
        """The broadcast delay's line (None: every board live)."""
        return self.delay.line

    @property
    def url(self) -> str:
        return self.server.url

    def perceived_model_line(self) -> str:
        """Which calibrated model the perceived ratings come from, for people."""
        return self.models.perceived_model_line()

    def wdl_model_line(self) -> str:
        """Which human W/D/L model the chances shown come from, for people."""
        return self.models.wdl_model_line()

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Run until ``stop`` is set (or the task is cancelled); then shut down cleanly."""
        stop = stop or asyncio.Event()
        try:
            await self._start()
            async with asyncio.TaskGroup() as tg:
                tasks = [tg.create_task(self.scheduler.run(), name="scheduler")]
                for feed in self.feeds:
                    tasks.append(tg.create_task(self._run_feed(feed), name=f"feed-{feed.name}"))
                if self.mqtt is not None:
                    tasks.append(tg.create_task(self.mqtt.run(), name="mqtt-publish"))
                tasks.append(tg.create_task(self._gc_pacer(), name="gc-pacer"))
                tasks.append(tg.create_task(self.loop_lag.run(), name="loop-lag"))
                if self.store is not None:
                    tasks.append(tg.create_task(self.store_writes.retry(), name="store-retry"))
                tasks.append(tg.create_task(self.standings.run(), name="standings"))
                if any(f.event_group is not None for f in self.settings.feeds):
                    tasks.append(tg.create_task(self._takeovers(), name="source-takeovers"))
                if self.settings.server.board_expiry is not None:
                    tasks.append(tg.create_task(self._expire_boards(), name="board-expiry"))
                if self.delay.line is not None:
                    tasks.append(tg.create_task(self.delay.run(), name="delay-release"))
                self.ready.set()
                log.info(
                    "service_started",
                    url=self.url,
                    boards=len(self.registry.boards) if self.registry else 0,
                    feeds=[f.name for f in self.feeds],
                    engine=self.engine_desc,
                )
                await stop.wait()
                for task in tasks:
                    task.cancel()
        finally:
            await self._shutdown()

    async def _start(self) -> None:
        s = self.settings
        if self._evaluator is None:
            limit = SearchLimit(depth=s.engine.depth, nodes=s.engine.nodes)
            pool = None
            if s.engine.mode != "remote":
                pool = EnginePool(
                    s.engine.path,
                    workers=s.engine.workers,
                    limit=limit,
                    hash_mb=s.engine.hash_mb,
                    search_timeout=s.engine.search_timeout,
                    nice=s.engine.nice,
                )
            if pool is not None and s.engine.mode == "local":
                await pool.start()
                self._own_pool = pool
                self._evaluator = pool
                engine_name: str | None = pool.engine_name
            else:  # "remote" or "both": jobs through the broker (docs/workers.md)
                remote = RemoteEvaluator.from_config(s.engine.remote, limit, local=pool)
                await remote.start()  # starts the local pool too ("both")
                self._own_remote = remote
                self._evaluator = remote
                engine_name = remote.engine_name
            rating = engine_rating_for(s, engine_name or "", limit)
        else:  # an evaluator given: what it tells of itself, else the settings'
            ev = self._evaluator
            rating = float(s.engine.rating) if s.engine.rating is not None else PAPER_ENGINE_RATING
            engine_name = (ev.engine_name or None) if isinstance(ev, NamedEngine) else None
            limit = (
                ev.limit
                if isinstance(ev, LimitedEngine)
                else SearchLimit(depth=s.engine.depth, nodes=s.engine.nodes)
            )
        self.models.pick(engine_name, limit)
        if self._max_inflight is None:
            workers = self._evaluator.workers if isinstance(self._evaluator, ParallelEngine) else 0
            self._max_inflight = max(2, 2 * (workers or s.engine.workers or 2))
        self.engine_desc = self.evaluator.describe()
        # The feeds first: their names choose the models of the boards they show.
        self.feeds = [
            make_feed(cfg, max_plies=s.limits.max_plies) for cfg in s.feeds
        ] + self.extra_feeds
        self.models.feed_models = {
            feed.name: s.feed_models_of(i) for i, feed in enumerate(self.feeds[: len(s.feeds)])
        }
        registry = BoardRegistry(
            engine_rating=rating,
            model=self.models.perceived_model,
            max_plies=s.limits.max_plies,
            max_boards=s.limits.max_boards,
            wdl_model=self.models.wdl_models[CLASSICAL_OTB][0],
            choose_models=self.models.models_for,
        )
        self.standings.follow(registry.boards)
        store = Store(Path(s.data_dir) / STORE_FILE) if s.persist else None
        self._runtime = Runtime(registry, store, self.evaluator, self.evaluator.engine_key)
        self.store_writes.use(store)
        if store is not None:
            self._restore()
        self.scheduler.start(self._runtime, self._max_inflight)
        if s.mqtt.enabled:
            self.mqtt = MqttPublisher.from_config(s.mqtt)
        if store is not None:
            # What viewers had besides the boards (standings, moments): served
            # again now, before anyone can connect, with or without a delay;
            # from now on each is kept as it goes out.
            shown = load_shown(store)
            self.outputs.restore(shown.standings, shown.moments)
            self.outputs.kept = ShownRecord(self.store_writes)
            if shown.standings or shown.moments:
                log.info(
                    "restored_shown", standings=len(shown.standings), moments=len(shown.moments)
                )
        self.delay.start(self.feeds, store)
        self._resume_standings()
        # Publish what was restored before anyone can connect (with a delay:
        # each board's whole state enters the line now, nothing goes out early).
        for bid in list(registry.boards):
            self._publish_board(bid, [], new=True)
        # Feeds that keep state of their own (MQTT: per-board move lists) take
        # back the stored boards before they run: a restart goes on from them.
        stored = [snap for _, snap in store.load_snapshots()] if store else []
        for feed in self.feeds:
            if isinstance(feed, RestorableFeed):
                feed.restore(stored, Path(s.data_dir) if s.persist else None)
        await self.server.start()

    async def _shutdown(self) -> None:
        self.scheduler.stop()
        with contextlib.suppress(Exception):
            await self.server.close()
        if self._own_pool is not None:
            with contextlib.suppress(Exception):
                await self._own_pool.close()
        if self._own_remote is not None:
            with contextlib.suppress(Exception):
                await self._own_remote.close()
        if self._runtime is not None and self._runtime.store is not None:
            self.store_writes.use(None)
            self._runtime.store.close()
            # what /healthz reads of the runtime stays, not the store
            self._runtime = dataclasses.replace(self._runtime, store=None)
        log.info("service_stopped")

    def _restore(self) -> None:
        """Re-apply stored snapshots and evaluations: no engine call for a known position."""
        assert self.store is not None and self.registry is not None
        for bid, snap in self.store.load_snapshots():
            try:
                applied = self.registry.apply(snap)
            except Exception as exc:
                log.exception("restore_failed", board_id=bid, error=str(exc))
                continue
            if applied.board_id != bid:
                log.warning("restore_board_id_changed", stored=bid, now=applied.board_id)
            self.stats.restored_boards += 1
        for _ in range(3):
            hits = 0
            for req in self.registry.pending():
                ev = self.store.get_eval(self.engine_key, req.fen)
                if ev is not None:
                    self.registry.record_eval(req.board_id, req.ply, req.fen, ev)
                    hits += 1
            self.stats.restored_evals += hits
            if hits == 0:
                break
        if self.stats.restored_boards:
            log.info(
                "restored",
                boards=self.stats.restored_boards,
                evaluations=self.stats.restored_evals,
                store=str(self.store.path),
            )

    def _resume_standings(self) -> None:
        """Each event's standings go on from the versions viewers have (and
        the delay holds), so that ``version`` grows across a restart too."""
        hub = self.server.hub
        had = [(e, hub.standings(e)) for e in hub.standings_events()]
        for event, data in [*had, *self.delay.held_standings()]:
            if data is None:
                continue
            try:
                self.standings.resume(event, data)
            except ValueError as exc:
                log.warning("standings_not_resumed", tournament=event, error=str(exc))

    # ---------------------------------------------------------------- feeds

    async def _run_feed(self, feed: Feed) -> None:
        """Run a feed; a feed that crashes is logged, counted and restarted."""
        delay = 1.0
        while True:
            try:
                await feed.run(_Sink(self, feed.name))
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.stats.feed_errors[feed.name] += 1
                self.feed_health(feed.name).failed(f"{type(exc).__name__}: {exc}", crash=True)
                log.exception("feed_crashed", feed=feed.name, error=str(exc), retry_in=delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 60.0)

    async def _takeovers(self) -> None:
        """Boards that several feeds show (an ``event_group``): once a second, a
        backup whose ``takeover_after`` ran out while the driving feed stayed
        silent takes the board over without waiting for its own next change
        (docs/feeds.md)."""
        while True:
            await asyncio.sleep(TAKEOVER_TICK)
            if self.registry is None:
                continue
            for applied in self.registry.tick(time.monotonic()):
                game = self.registry.boards.get(applied.board_id or "")
                snap = game.last_snapshot if game is not None else None
                if snap is not None:
                    self._fold(applied, snap)

    async def _gc_pacer(self) -> None:
        """Keep Python's full garbage collections off the live path.

        Board states are many long-lived objects (about 435,000 at 1,000
        boards), and a full collection walks every one of them on the event
        loop: 90-260 ms at 1,000 boards, during which no viewer and no
        ``/healthz`` is served. Once a second, after a young collection (which
        frees the cyclic garbage made meanwhile), the objects alive are moved
        to the permanent generation (:func:`gc.freeze`), which collections
        skip; both cost only what was made since. The price: an object in a
        reference cycle that outlives its young collection and dies later is
        not freed (objects without cycles are freed at once, as always).
        """
        while True:
            await asyncio.sleep(GC_FREEZE_EVERY)
            gc.collect(1)
            gc.freeze()

    def feed_health(self, name: str) -> FeedHealth:
        health = self._feed_health.get(name)
        if health is None:
            health = self._feed_health[name] = FeedHealth()
        return health

    def on_feed_error(self, source: str, where: str, message: str) -> None:
        self.stats.feed_errors[source] += 1
        log.warning("feed_error", feed=source, where=where, error=message)

    def on_snapshot(self, snap: GameSnapshot) -> None:
        """Fold one snapshot into the game state and publish what changed."""
        assert self.registry is not None
        self.stats.snapshots += 1
        try:
            applied = self.registry.apply(snap)
        except Exception as exc:  # a bug on one board must not stop the others
            key = snap.game_id or f"{snap.source}:{snap.round}:{snap.board}"
            self.stats.board_failures[key] += 1
            log.exception("snapshot_failed", feed=snap.source, game=key, error=str(exc))
            return
        for err in applied.errors:
            if err.board_id is None:  # a game refused or unmatched: the feed's error
                self.stats.feed_errors[err.source] += 1
            log.warning(
                "board_error",
                board_id=err.board_id,
                feed=err.source,
                ply=err.ply,
                san=err.san,
                error=err.message,
            )
        self._fold(applied, snap)

    def _fold(self, applied: Applied, snap: GameSnapshot) -> None:
        """Store, publish and schedule what one snapshot (or a takeover) changed."""
        bid = applied.board_id
        if bid is None:
            return
        if applied.takeover is not None:
            log.info("board_source_takeover", board_id=bid, source=applied.takeover)
        if not (applied.new_board or applied.updates or applied.info_changed):
            self.stats.duplicates += 1
            return
        self.store_writes.save_snapshot(bid, snap)
        if applied.new_board:
            log.info("board_added", board_id=bid, white=snap.white.name, black=snap.black.name)
        # New players, event or round: subscribers get a whole new snapshot.
        whole = applied.new_board or applied.info_changed
        if applied.new_board or applied.updates:
            self._board_active[bid] = time.monotonic()
        self._publish_board(bid, list(applied.updates), new=whole)
        # Finished positions are scored without the engine: this may already
        # have produced evaluations. A move's new position goes to the engine
        # now, not on the scheduler's next turn: the server writes the move's
        # update from the next loop iteration on, after the search has begun.
        # A new board (maybe a whole game, whose positions the store may know)
        # waits for the scheduler's turn: recording it is a step of its own.
        if applied.new_board:
            self.scheduler.wake()
        else:
            self.scheduler.schedule()

    # ------------------------------------------------------------ publishing

    def _match_odds(self, game: BoardGame) -> schema.MatchOdds | None:
        if not self.matches or self.registry is None:
            return None
        boards = list(self.registry.boards.values())
        results: dict[str, str] | None = None
        if self.delay.line is not None:
            # Other boards' results as viewers know them: none before its time.
            results = {b: st.result for b, st in self.delay.line.released_states().items()}
        for tracker in self.matches:
            try:
                odds = tracker.odds(game, boards, results)
            except Exception as exc:
                log.warning("match_odds_failed", board_id=game.board_id, error=str(exc))
                return None
            if odds is not None:
                return odds
        return None

    def _publish_board(self, bid: str, updates: list[BoardUpdate], *, new: bool = False) -> None:
        """Board ``bid`` changed (``updates``; ``new``: a whole new snapshot):
        its publication, and its key moments', built once, into the chain."""
        assert self.registry is not None
        self._standings_touch(bid)
        started = time.perf_counter()
        try:
            game = self.registry.board(bid)
            moments = self.moments.observe(game, updates)
            match = self._match_odds(game)  # once per change, held or published
            engine = self.engine_desc

            def state() -> schema.BoardState:
                # Built only when needed (a snapshot, the board list, MQTT's
                # retained state, the delay): reading the game later still
                # gives this state, as nothing changes it without publishing
                # again.
                return convert.board_state(game, engine=engine, match=match)

            # One entry for every output: its snapshot is serialised once,
            # and the WebSocket clients and the broker get the same bytes.
            entry = BoardEntry(state, summary=lambda: convert.board_summary(game))
            items = () if new else tuple(convert.update(u, match=match) for u in updates)
            at, delay = time.time(), self.delay.board_delay(game)
            self.chain.deliver(
                Publication.board_change(bid, entry, items, whole=new, at=at, delay=delay)
            )
            self.stats.updates += len(updates)
            self._publish_moments(game, moments, at, delay)
        except Exception as exc:
            self.stats.board_failures[bid] += 1
            log.exception("publish_failed", board_id=bid, error=str(exc))
        self.metrics.publish_seconds.observe(time.perf_counter() - started)

    def _publish_moments(
        self, game: BoardGame, moments: list[Moment], at: float, delay: int
    ) -> None:
        """Each ``moment`` message after the board's updates (to the board's
        WebSocket subscribers and MQTT), as late as the board."""
        bid = game.board_id
        for m in moments:
            msg = convert.moment(m, game, int(at * 1000))
            data = msg.model_dump_json().encode()
            log.info("moment", board_id=bid, kind=m.kind, ply=m.ply, move=m.move)
            self.chain.deliver(Publication.moment(bid, data, at=at, delay=delay))

    def _standings_touch(self, bid: str) -> None:
        """The board changed or left: its event's standings may have to follow."""
        try:
            self.standings.touch(bid)
        except Exception as exc:  # never in the way of the board's own publication
            log.exception("standings_touch_failed", board_id=bid, error=str(exc))

    def _publish_standings(self, event: str, data: bytes) -> None:
        """A new ``standings`` message of ``event``: to the WebSocket server
        (subscribers, ``/api/standings``) and the MQTT publisher (retained);
        as late as the longest delay (it shows every board's result)."""
        at = time.time()
        self.chain.deliver(Publication.standings(event, data, at=at, delay=self.delay.max_delay()))

    def publish(self, publication: Publication, /) -> None:
        """A publication the server made (the board list changed): into the chain."""
        self.chain.deliver(publication)

    # ------------------------------------------------------ broadcast delay

    def remove_board(self, bid: str, reason: str = "admin", *, delayed: bool = False) -> bool:
        """Take a board out of the game registry, the store and the server (its
        viewers get a ``removed`` diff). A feed that sends it again adds it anew.

        With a broadcast delay, ``delayed`` (an expired board) leaves the
        public view after its last moves, a delay later; otherwise (an
        operator's removal) it leaves at once, with what the line held of it."""
        game = self.registry.boards.get(bid) if self.registry is not None else None
        shown = self.server.has_board(bid)
        delay = self.delay.board_delay(game) if game is not None else 0
        at_once = not delayed or game is None
        found = self.registry is not None and self.registry.remove(bid)
        self.moments.forget(bid)
        self.store_writes.unsaved.pop(bid, None)
        self.store_writes.write(lambda store: store.delete_board(bid), board_id=bid)
        self.chain.deliver(Publication.removal(bid, at=time.time(), delay=delay, at_once=at_once))
        self._board_active.pop(bid, None)
        self._standings_touch(bid)
        found = found or shown
        if found:
            log.info("board_removed", board_id=bid, reason=reason)
        return found

    async def _expire_boards(self) -> None:
        """Remove boards without a result that got no move for ``board_expiry`` s."""
        expiry = self.settings.server.board_expiry
        assert expiry is not None
        while True:
            await asyncio.sleep(min(60.0, expiry / 4))
            if self.registry is None:
                continue
            now = time.monotonic()
            for bid, game in list(self.registry.boards.items()):
                last = self._board_active.setdefault(bid, now)
                if game.result == "*" and now - last >= expiry:
                    self.remove_board(bid, reason=f"no move for {expiry:g} s", delayed=True)

    # ------------------------------------------------------------ evaluation

    def _record(self, bid: str, evals: Sequence[tuple[EvalRequest, Evaluation]]) -> None:
        """Record evaluations of one board's positions and publish what they
        change, once for all of them."""
        assert self.registry is not None
        self.stats.evaluations += len(evals)
        try:
            updates = self.registry.record_evals(bid, [(r.ply, r.fen, ev) for r, ev in evals])
        except Exception as exc:
            self.stats.board_failures[bid] += 1
            plies = [r.ply for r, _ in evals]
            log.exception("record_failed", board_id=bid, plies=plies, error=str(exc))
            return
        if updates:
            self._publish_board(bid, updates)
        if any(r.ply == 0 for r, _ in evals):
            # The start position's evaluation (``start_eval``) travels in
            # snapshots only: subscribers get a fresh one.
            self._publish_board(bid, [], new=True)

    # --------------------------------------------------------------- health

    def health(self) -> dict[str, Any]:
        """What ``/healthz`` reports (:func:`~livegain.app.health.health_report`)."""
        return health_report(self)

    def board_status(self) -> dict[str, Any]:
        """Each board's state for ``/healthz/boards`` (:func:`.health.board_status`)."""
        return board_status(self)

    def _metrics_view(self) -> MetricsView:
        return metrics_view(self)
