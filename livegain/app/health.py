"""What the service reports of itself: the ``/healthz`` document (its state,
and ``status: degraded`` with each problem) and the figures ``/metrics``
renders."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from livegain.app.evaluator import CountedEngine, EngineStats
from livegain.app.metrics import MetricsView
from livegain.app.models import is_fallback
from livegain.feeds.base import Feed, ReportingFeed
from livegain.feeds.hosts import known_hosts

if TYPE_CHECKING:
    from livegain.app.broadcast_delay import BroadcastDelay
    from livegain.app.feed_health import FeedHealth
    from livegain.app.live_standings import LiveStandings
    from livegain.app.loop_lag import LoopLag
    from livegain.app.models import ModelChoice
    from livegain.app.runtime import Runtime
    from livegain.app.scheduler import Scheduler
    from livegain.app.stats import ServiceStats
    from livegain.app.store import Store
    from livegain.app.store_writes import StoreWrites
    from livegain.config import Settings
    from livegain.core.board.registry import BoardRegistry
    from livegain.engine.pool import EnginePool
    from livegain.publish.mqtt import MqttPublisher
    from livegain.publish.server import LiveServer
    from livegain.remote.evaluator import RemoteEvaluator


class Reported(Protocol):
    """What the reports read of the service: its parts, by name, read-only.
    The :class:`~livegain.app.service.Service` is one; nothing else of it is
    read here (and nothing private: ``tests/test_layering.py``)."""

    @property
    def settings(self) -> Settings: ...
    @property
    def stats(self) -> ServiceStats: ...
    @property
    def runtime(self) -> Runtime | None: ...
    @property
    def registry(self) -> BoardRegistry | None: ...
    @property
    def store(self) -> Store | None: ...
    @property
    def store_writes(self) -> StoreWrites: ...
    @property
    def scheduler(self) -> Scheduler: ...
    @property
    def server(self) -> LiveServer: ...
    @property
    def mqtt(self) -> MqttPublisher | None: ...
    @property
    def delay(self) -> BroadcastDelay: ...
    @property
    def standings(self) -> LiveStandings: ...
    @property
    def models(self) -> ModelChoice: ...
    @property
    def feeds(self) -> list[Feed]: ...
    @property
    def loop_lag(self) -> LoopLag: ...
    @property
    def engine_desc(self) -> str: ...
    @property
    def engine_pool(self) -> EnginePool | None: ...
    @property
    def remote_engine(self) -> RemoteEvaluator | None: ...
    @property
    def engine_restarts(self) -> EngineRestarts: ...
    @property
    def feed_failing_after(self) -> float: ...
    @property
    def recent(self) -> float: ...

    def feed_health(self, name: str, /) -> FeedHealth: ...


@dataclass
class EngineRestarts:
    """The engine's process restarts as last seen, and when their count last grew."""

    count: int = 0
    at: float | None = None

    def seen(self, restarts: int, now: float) -> float | None:
        """The restart count now: when the last restart was noticed (None: never)."""
        if restarts > self.count:
            self.count, self.at = restarts, now
        return self.at


def board_status(service: Reported) -> dict[str, dict[str, Any]]:
    """Each board's state for ``/healthz/boards``: plies, evaluated plies, the
    result viewers have, errors, the feed driving it and its models."""
    t = service.registry
    boards: dict[str, dict[str, Any]] = {}
    line = service.delay.line
    if t is not None:
        for bid, g in t.boards.items():
            shown = line.released_state(bid) if line is not None else None
            boards[bid] = {
                "plies": g.plies,
                "evaluated": g.evaluated_plies,
                # With a delay, the result viewers know (counts only otherwise).
                "result": (
                    g.result
                    if line is None or not line.knows(bid)
                    else shown.result
                    if shown is not None
                    else "*"
                ),
                "errors": g.errors + service.stats.board_failures.get(bid, 0),
                "source": g.source_active,  # the feed driving it (docs/feeds.md)
                "perceived_model": g.model.name if g.model is not None else None,
                "wdl_model": g.wdl_model.name if g.wdl_model is not None else None,
                "wdl_fallback": g.wdl_fallback,
                "wdl_why": g.models.wdl_why,
            }
    return boards


BOARD_ERRORS_LISTED = 50
"""At most this many boards with errors are named in ``/healthz``."""


def boards_summary(service: Reported) -> dict[str, Any]:
    """The boards in a few figures for ``/healthz`` (each board's state is in
    ``/healthz/boards``): plies, evaluated plies and the boards that had
    errors (the first :data:`BOARD_ERRORS_LISTED` by id, with their counts).
    One pass over plain counters: at 2,000 boards about a millisecond, where
    the whole per-board document was 655 KiB."""
    t = service.registry
    games = t.boards if t is not None else {}
    failures = service.stats.board_failures
    plies = evaluated = 0
    errors: dict[str, int] = {}
    for bid, g in games.items():
        plies += g.plies
        evaluated += g.evaluated_plies
        n = g.errors + failures.get(bid, 0)
        if n:
            errors[bid] = n
    listed = dict(sorted(errors.items())[:BOARD_ERRORS_LISTED])
    return {
        "boards": len(games),
        "plies": plies,
        "evaluated": evaluated,
        "with_errors": len(errors),
        "errors": listed,
    }


def health_report(service: Reported) -> dict[str, Any]:
    """The service's state for ``/healthz``: engine, models, counters, feeds,
    boards in figures, store, workers, delay and MQTT; ``status: degraded``
    with the problems when there are any. Each board's own state is in
    :func:`board_status` (``/healthz/boards``)."""
    t = service.registry
    line = service.delay.line
    models = service.models
    model = models.perceived_model
    wdl, wdl_why = models.default_wdl()
    out: dict[str, Any] = {
        "engine": service.engine_desc,
        "engine_queue": len(service.scheduler.inflight),
        "event_loop_lag": service.loop_lag.status(),
        # the default rating scale's (fide) and kind's (classical-otb);
        # each scale's and kind's below, each board's in /healthz/boards
        "perceived_model": {
            "model": model.name if model is not None else None,
            "why": models.perceived_model_why,
        },
        "perceived_models": {
            scale: {"model": m.name if m is not None else None, "why": why}
            for scale, (m, why) in models.perceived_models.items()
        },
        "wdl_model": {
            "model": wdl.name if wdl is not None else None,
            "why": wdl_why,
            "fallback": is_fallback(wdl_why),
        },
        "wdl_models": {
            kind: {
                "model": m.name if m is not None else None,
                "why": why,
                "fallback": is_fallback(why),
            }
            for kind, (m, why) in models.wdl_models.items()
        },
        "service": {
            "snapshots": service.stats.snapshots,
            "duplicates": service.stats.duplicates,
            "evaluations": service.stats.evaluations,
            "engine_calls": service.stats.engine_calls,
            "engine_failures": service.stats.engine_failures,
            "store_hits": service.stats.store_hits,
            "updates": service.stats.updates,
            "restored_boards": service.stats.restored_boards,
            "restored_evals": service.stats.restored_evals,
            "pending": t.pending_count() if t is not None else 0,
        },
        "feeds": {},  # each feed's (filled below, in this place)
        "feed_errors": dict(service.stats.feed_errors),
        "standings": service.standings.status(),
        "board_summary": boards_summary(service),
        "store": {
            "enabled": service.store is not None,
            "failures": service.stats.store_failures,
            "failing": service.store_writes.error is not None,
            "last_error": service.store_writes.error,
        },
    }
    feeds = {feed.name: _feed_status(service, feed) for feed in service.feeds}
    out["feeds"] = {name: info for name, (info, _) in feeds.items()}
    remote = _workers_status(service)
    problems = _problems(service, feeds, remote)
    if remote is not None:  # engine workers through the broker
        out["workers"] = remote.pop("workers")
        out["remote_engine"] = remote
    if problems:
        out["status"] = "degraded"
        out["problems"] = problems
    if line is not None:
        nxt = line.next_due()
        out["delay"] = {
            "default": service.settings.broadcast.delay,
            "held": len(line),
            "boards_held": line.boards_held(),
            "next_release_in": None if nxt is None else round(max(0.0, nxt - time.time()), 1),
            "skipped": line.skipped,
        }
    if service.mqtt is not None:
        st = service.mqtt.stats
        out["mqtt"] = {
            "connected": st.connected,
            "published": st.published,
            "pending": service.mqtt.pending,
            "dropped": st.dropped,
            "failures": st.failures,
        }
    if service.engine_pool is not None:
        ps = service.engine_pool.stats
        out["engine_stats"] = {
            "searches": ps.searches,
            "cache_hits": ps.cache_hits,
            "failures": ps.failures,
            "restarts": ps.restarts,
            "search_seconds": round(ps.search_seconds, 3),
        }
    return out


def problems(service: Reported) -> list[str]:
    """Why the service counts as degraded now (empty: it does not), as
    ``/healthz`` lists them, without building the rest of the document."""
    feeds = {feed.name: _feed_status(service, feed) for feed in service.feeds}
    return _problems(service, feeds, _workers_status(service))


def _workers_status(service: Reported) -> dict[str, Any] | None:
    """The engine workers' state (None: no engine through the broker)."""
    remote = service.remote_engine
    return remote.workers_status() if remote is not None else None


def _engine_stats(service: Reported) -> EngineStats | None:
    """The engine's counters, if it keeps them (None: not started, or it does not)."""
    rt = service.runtime
    if rt is None or not isinstance(rt.evaluator, CountedEngine):
        return None
    return rt.evaluator.stats


def _problems(
    service: Reported,
    feeds: Mapping[str, tuple[dict[str, Any], str | None]],
    remote: Mapping[str, Any] | None,
) -> list[str]:
    out = []
    if service.store_writes.error is not None:
        out.append(f"store: writes failing ({service.store_writes.error})")
    out.extend(f"feed {name}: {problem}" for name, (_, problem) in feeds.items() if problem)
    out.extend(f"engine: {p}" for p in _engine_problems(service))
    if remote is not None and remote.get("problem"):
        out.append(f"engine workers: {remote['problem']}")
    if service.mqtt is not None and not service.mqtt.stats.connected:
        out.append("mqtt publisher not connected")
    return out


def _feed_status(service: Reported, feed: Feed) -> tuple[dict[str, Any], str | None]:
    """A feed's figures for /healthz, and why it is failing (None: it is not).

    From what the service saw (games read, errors, crashes) and, when the
    feed reports its own state (:class:`ReportingFeed`), its ``status()`` (a
    true ``"problem"`` value there marks it failing too)."""
    fh = service.feed_health(feed.name)
    now = time.monotonic()
    info: dict[str, Any] = {
        "errors": service.stats.feed_errors.get(feed.name, 0),
        "crashes": fh.crashes,
        "last_read_ago": None if fh.last_read is None else round(now - fh.last_read, 1),
        "last_error": fh.last_error,
    }
    problem = fh.problem(service.feed_failing_after, service.recent)
    if isinstance(feed, ReportingFeed):
        try:
            own = dict(feed.status())
        except Exception as exc:
            own = {"problem": f"status() failed: {exc}"}
        info["status"] = own
        if own.get("problem") and problem is None:
            problem = str(own["problem"])
    info["failing"] = problem is not None
    return info, problem


def _engine_problems(service: Reported) -> list[str]:
    now = time.monotonic()
    out = []
    failed_at = service.scheduler.failed_at
    while failed_at and now - failed_at[0] >= service.recent:
        failed_at.popleft()
    if failed_at:
        out.append(
            f"{len(failed_at)} failed searches in the last {service.recent:g} s "
            f"(last: {service.scheduler.last_error})"
        )
    stats = _engine_stats(service)
    if stats is not None:
        restarts = stats.restarts
        at = service.engine_restarts.seen(restarts, now)
        if at is not None and now - at < service.recent:
            out.append(f"engine process restarted ({restarts} restarts since start)")
    if service.scheduler.given_up:
        out.append(f"{len(service.scheduler.given_up)} positions could not be evaluated")
    return out


def metrics_view(service: Reported) -> MetricsView:
    t = service.registry
    boards = boards_summary(service)
    stats = _engine_stats(service)
    mqtt = service.mqtt.stats if service.mqtt is not None else None
    ws = service.server.stats
    feed_errors = {f.name: 0 for f in service.feeds}
    feed_errors.update(service.stats.feed_errors)
    return MetricsView(
        stats=service.stats,
        feed_errors=feed_errors,
        boards=boards["boards"],
        plies=boards["plies"],
        plies_evaluated=boards["evaluated"],
        inflight=len(service.scheduler.inflight),
        pending=t.pending_count() if t is not None else 0,
        engine_search_seconds=None if stats is None else float(stats.search_seconds),
        engine_restarts=None if stats is None else stats.restarts,
        ws_clients=service.server.client_count,
        ws_dropped_updates=ws.dropped_updates,
        ws_closed_slow=ws.closed_slow,
        ws_messages_sent=ws.messages_sent,
        mqtt_connected=None if mqtt is None else mqtt.connected,
        mqtt_published=0 if mqtt is None else mqtt.published,
        mqtt_dropped=0 if mqtt is None else mqtt.dropped,
        mqtt_pending=0 if service.mqtt is None else service.mqtt.pending,
        degraded=bool(problems(service)),
        source_hosts={
            name: (h.stats.requests, h.per_minute(), h.stats.throttled)
            for name, h in known_hosts().items()
        },
    )
