"""Prometheus metrics of one running service (``GET /metrics``).

Each :class:`ServiceMetrics` has a registry of its own (never the process-wide
default one), so several services in one process (tests, the demo) never
collide. Counters the service already keeps (snapshots, evaluations, engine
calls, feed errors, WebSocket and MQTT counters) are read when scraped, from a
:class:`MetricsView` the service fills in: nothing is counted twice and a scrape
costs nothing between scrapes. Only the publish latency is observed as it
happens, in a histogram.

Names (all prefixed ``livegain_``; ``_total`` for counters):

=============================================  ====================================
``feed_errors_total{feed}``                    errors reported by each feed
``source_requests_total{host}``                requests sent to each source host
``source_requests_last_minute{host}``          the same, over the last 60 seconds
``source_throttled_total{host}``               its answers 429/503 (Retry-After obeyed)
``snapshots_total``, ``snapshot_duplicates_total``  snapshots received / unchanged
``boards``, ``plies``, ``plies_evaluated``     games followed and their plies
``evaluations_total``, ``store_hits_total``    evaluations recorded / from the store
``engine_calls_total``, ``engine_failures_total``  searches asked of the engine
``engine_search_seconds_total``                engine time spent searching
``engine_restarts_total``                      engine processes restarted
``eval_inflight``, ``eval_pending``            positions being searched / waiting
``websocket_clients``                          connected WebSocket clients
``websocket_dropped_updates_total``            updates not sent to slow clients
``websocket_closed_slow_total``                clients closed for being too slow
``websocket_messages_sent_total``              messages written to clients
``publish_seconds``                            time to publish a board's change
``mqtt_connected``, ``mqtt_published_total``,  the MQTT publisher
``mqtt_dropped_total``, ``mqtt_pending``
``store_failures_total``                       store reads/writes that failed
``degraded``                                   1 when /healthz says "degraded"
=============================================  ====================================
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from livegain.app.stats import ServiceStats

PREFIX = "livegain"

PUBLISH_BUCKETS = (
    0.0001,
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
)
"""Seconds: publishing one change is sub-millisecond on a quiet server."""


@dataclass
class MetricsView:
    """The service's counters at one moment (what a scrape reports): its own
    (``stats``, read as they are), the engine's, the viewers' and MQTT's."""

    stats: ServiceStats = field(default_factory=ServiceStats)
    feed_errors: Mapping[str, int] = field(default_factory=dict)
    """Per feed, its errors (every feed named, 0 included)."""
    boards: int = 0
    plies: int = 0
    plies_evaluated: int = 0
    inflight: int = 0
    pending: int = 0
    engine_search_seconds: float | None = None
    engine_restarts: int | None = None
    ws_clients: int = 0
    ws_dropped_updates: int = 0
    ws_closed_slow: int = 0
    ws_messages_sent: int = 0
    mqtt_connected: bool | None = None
    mqtt_published: int = 0
    mqtt_dropped: int = 0
    mqtt_pending: int = 0
    degraded: bool = False
    source_hosts: Mapping[str, tuple[int, int, int]] = field(default_factory=dict)
    """Per source host: requests in all, requests over the last minute, answers
    429/503 (livegain.feeds.hosts)."""


def _counter(name: str, doc: str, value: float) -> CounterMetricFamily:
    return CounterMetricFamily(f"{PREFIX}_{name}", doc, value=value)


def _gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(f"{PREFIX}_{name}", doc, value=value)


def _source_hosts(hosts: Mapping[str, tuple[int, int, int]]) -> Iterator[Metric]:
    total = CounterMetricFamily(
        f"{PREFIX}_source_requests", "Requests sent to each source host", labels=["host"]
    )
    minute = GaugeMetricFamily(
        f"{PREFIX}_source_requests_last_minute",
        "Requests sent to each source host over the last 60 seconds",
        labels=["host"],
    )
    throttled = CounterMetricFamily(
        f"{PREFIX}_source_throttled",
        "Answers 429 or 503 from each source host (each one obeyed: Retry-After)",
        labels=["host"],
    )
    for host, (n, recent, slowed) in sorted(hosts.items()):
        total.add_metric([host], n)
        minute.add_metric([host], recent)
        throttled.add_metric([host], slowed)
    yield total
    yield minute
    yield throttled


class _ViewCollector(Collector):
    def __init__(self, read: Callable[[], MetricsView]) -> None:
        self._read = read

    def collect(self) -> Iterator[Metric]:
        v = self._read()
        feeds = CounterMetricFamily(
            f"{PREFIX}_feed_errors", "Errors reported by each feed", labels=["feed"]
        )
        for name, n in sorted(v.feed_errors.items()):
            feeds.add_metric([name], n)
        yield feeds
        yield from _source_hosts(v.source_hosts)
        yield _counter("snapshots", "Game snapshots received from the feeds", v.stats.snapshots)
        yield _counter("snapshot_duplicates", "Snapshots that changed nothing", v.stats.duplicates)
        yield _gauge("boards", "Boards followed", v.boards)
        yield _gauge("plies", "Plies played on all boards", v.plies)
        yield _gauge("plies_evaluated", "Plies with an evaluation, all boards", v.plies_evaluated)
        yield _counter("evaluations", "Evaluations recorded", v.stats.evaluations)
        yield _counter("store_hits", "Evaluations answered from the store", v.stats.store_hits)
        yield _counter("engine_calls", "Searches asked of the engine", v.stats.engine_calls)
        yield _counter("engine_failures", "Searches that failed", v.stats.engine_failures)
        if v.engine_search_seconds is not None:
            yield _counter(
                "engine_search_seconds",
                "Seconds the engine spent searching",
                v.engine_search_seconds,
            )
        if v.engine_restarts is not None:
            yield _counter("engine_restarts", "Engine processes restarted", v.engine_restarts)
        yield _gauge("eval_inflight", "Positions being searched now", v.inflight)
        yield _gauge("eval_pending", "Positions waiting for an evaluation", v.pending)
        yield _gauge("websocket_clients", "Connected WebSocket clients", v.ws_clients)
        yield _counter(
            "websocket_dropped_updates",
            "Updates not sent to a slow client (it gets a fresh snapshot)",
            v.ws_dropped_updates,
        )
        yield _counter(
            "websocket_closed_slow", "Clients closed for falling too far behind", v.ws_closed_slow
        )
        yield _counter(
            "websocket_messages_sent", "Messages written to WebSocket clients", v.ws_messages_sent
        )
        if v.mqtt_connected is not None:
            yield _gauge(
                "mqtt_connected", "1 while the MQTT publisher is connected", v.mqtt_connected
            )
            yield _counter("mqtt_published", "MQTT messages published", v.mqtt_published)
            yield _counter("mqtt_dropped", "MQTT messages dropped", v.mqtt_dropped)
            yield _gauge("mqtt_pending", "MQTT messages waiting to be sent", v.mqtt_pending)
        yield _counter(
            "store_failures", "Store reads or writes that failed", v.stats.store_failures
        )
        yield _gauge("degraded", "1 when /healthz reports status degraded", v.degraded)


class ServiceMetrics:
    """The metrics of one service: its own registry, scraped with :meth:`render`."""

    def __init__(self, read: Callable[[], MetricsView]) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(_ViewCollector(read))
        self.publish_seconds = Histogram(
            f"{PREFIX}_publish_seconds",
            "Seconds to publish one board's change (WebSocket and MQTT)",
            buckets=PUBLISH_BUCKETS,
            registry=self.registry,
        )

    def render(self) -> bytes:
        """The Prometheus text format (version 0.0.4)."""
        return bytes(generate_latest(self.registry))
