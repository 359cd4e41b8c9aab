"""What every feed shares: the sink it reports to, the feed protocol, configs.

A feed is an I/O adapter: it reads an untrusted source (a polled URL, a
LiveChess Cloud tournament, MQTT topics, a local file) and hands
:class:`~livegain.core.snapshot.GameSnapshot` values to a :class:`FeedSink`.
Bad input never raises out of :meth:`Feed.run`: it is reported through
:meth:`FeedSink.error` (naming the source, where, and what was wrong) and
everything else carries on. Network errors back off and retry.

Configs are pydantic models with a ``type`` discriminator, so a service
configuration can hold a list of them::

    feeds = [
      {type = "pgn-http", url = "https://example.org/round-3/games.pgn"},
      {type = "pgn-stream", url = "https://lichess.org/api/stream/broadcast/round/ID.pgn"},
      {type = "lichess", tournament = "AbCd1234"},   # a Lichess broadcast, round after round
      {type = "lcc", base_url = "https://1.pool.livechesscloud.com/get", tournament_id = "abc"},
      {type = "mqtt", url = "mqtt://127.0.0.1:1883", topic = "livegain/in/#"},
      {type = "file", path = "/srv/arbiter/round3"},
    ]

and :func:`make_feed` turns one into a running :class:`Feed`.

Several feeds may carry the same event (a LiveChess Cloud tournament and a
PGN mirror of it): give them the same ``event_group`` and a ``priority``
(0 first). Their snapshots then carry both (:class:`SourceSink`), and the
game state shows each game once, driven by the preferred source that is
moving; see docs/feeds.md, "One event from several feeds".
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Annotated, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from livegain.core.board.board import DEFAULT_MAX_PLIES
from livegain.core.board.sources import DEFAULT_TAKEOVER_AFTER
from livegain.core.snapshot import GameSnapshot
from livegain.mqtt.address import BrokerAccess


@runtime_checkable
class FeedSink(Protocol):
    """Where a feed delivers what it read."""

    def snapshot(self, snap: GameSnapshot) -> None:
        """One game as the feed last saw it (called again each time it changes)."""

    def error(self, source: str, where: str, message: str) -> None:
        """Bad input or a network fault: ``source`` is the feed's name, ``where``
        names the game/topic/URL and ply, ``message`` says what was wrong."""


@runtime_checkable
class Feed(Protocol):
    """A running source of snapshots.

    A feed may do more, each ability a small protocol of its own that the
    service checks with :func:`isinstance`: :class:`RestorableFeed` (it keeps
    state across a restart), :class:`ReportingFeed` (it reports its own
    state in ``/healthz``), :class:`DelayedFeed` (a feed built outside the
    configuration, with a broadcast delay of its own), :class:`SubscribingFeed`
    (it says when it holds its subscription)."""

    name: str

    async def run(self, sink: FeedSink) -> None:
        """Run until cancelled; never raise on bad input; back off on network errors."""


@runtime_checkable
class RestorableFeed(Protocol):
    """A feed that keeps state of its own (the MQTT feed: each board's moves and
    sequence number), taken back after a restart before it runs."""

    def restore(self, snapshots: Iterable[GameSnapshot], state_dir: Path | None) -> None:
        """Take back its boards from ``snapshots`` (the service's stored ones) and
        its own state from ``state_dir`` (None: the service keeps nothing)."""


@runtime_checkable
class ReportingFeed(Protocol):
    """A feed that reports its own state (rounds followed, connection, stale boards)."""

    def status(self) -> Mapping[str, object]:
        """Its state for ``/healthz`` (under ``feeds.NAME.status``); a true
        ``"problem"`` value counts the feed as failing, for that reason."""


@runtime_checkable
class DelayedFeed(Protocol):
    """A feed given to the service directly (not made from a ``[[feeds]]``
    entry) with a broadcast delay of its own."""

    @property
    def delay(self) -> int | None:
        """Seconds its boards are shown late (None: ``[broadcast] delay``)."""


@runtime_checkable
class SubscribingFeed(Protocol):
    """A feed that subscribes to its source (MQTT): it says when it holds its
    subscription, so that what is published from then on reaches it."""

    @property
    def subscribed(self) -> asyncio.Event:
        """Set while the feed holds its subscription."""


MiB = 1024 * 1024


class SourceSink:
    """The sink a feed reports to, stamping its snapshots with the feed's event
    group, priority and takeover delay, and their arrival time (``received_at``,
    ``clock``: monotonic seconds). A feed outside any group passes its snapshots
    on unchanged."""

    def __init__(
        self,
        sink: FeedSink,
        cfg: _FeedConfigBase,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.sink = sink
        self.group = cfg.event_group
        self.priority = cfg.priority
        self.takeover_after = cfg.takeover_after
        self.clock = clock

    def snapshot(self, snap: GameSnapshot) -> None:
        if self.group is not None:
            snap = dataclasses.replace(
                snap,
                group=self.group,
                priority=self.priority,
                takeover_after=self.takeover_after,
                received_at=self.clock(),
            )
        self.sink.snapshot(snap)

    def error(self, source: str, where: str, message: str) -> None:
        self.sink.error(source, where, message)


def source_sink(sink: FeedSink, cfg: _FeedConfigBase) -> FeedSink:
    """``sink`` as a feed of ``cfg`` reports to it (:class:`SourceSink`), once."""
    if isinstance(sink, SourceSink) or cfg.event_group is None:
        return sink
    return SourceSink(sink, cfg)


class _FeedConfigBase(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    name: str | None = Field(
        default=None, description="Label used in errors and snapshots' source (default: derived)"
    )
    max_games: int = Field(
        default=1000,
        gt=0,
        description="Games accepted per poll, file or round; the rest are refused with an error",
    )
    event_group: str | None = Field(
        default=None,
        min_length=1,
        max_length=100,
        description="Feeds that carry the same event share a group: a game they both "
        "carry is one board, driven by the preferred feed that is moving",
    )
    priority: int = Field(
        default=0,
        ge=0,
        le=1000,
        description="Within an event group, 0 is preferred, then 1, 2, ...",
    )
    delay: int | None = Field(
        default=None,
        ge=0,
        le=86_400,
        description="Seconds this feed's boards are shown late to viewers (an "
        "anti-cheating delay); default: [broadcast] delay. Feeds of one event group "
        "should share it (a board takes the longest of its group's)",
    )
    takeover_after: float = Field(
        default=DEFAULT_TAKEOVER_AFTER,
        gt=0,
        description="Seconds this feed, showing more of a game than the feed driving its "
        "board, waits for that feed to move before it takes the board over",
    )


class PgnHttpFeedConfig(_FeedConfigBase):
    """PGN over HTTP, polled: one multi-game file per round, or one file per board."""

    type: Literal["pgn-http"] = "pgn-http"
    url: str | list[str] = Field(description="URL of a PGN file, or a list (one per board)")
    interval: float = Field(default=2.0, gt=0, description="Seconds between polls")
    timeout: float = Field(default=10.0, gt=0, description="Seconds allowed for one request")
    max_bytes: int = Field(
        default=16 * MiB, gt=0, description="Largest response body (after gzip), bytes"
    )


class PgnStreamFeedConfig(_FeedConfigBase):
    """PGN over one endless HTTP response (a Lichess broadcast round's stream)."""

    type: Literal["pgn-stream"] = "pgn-stream"
    url: str = Field(description="e.g. https://lichess.org/api/stream/broadcast/round/ROUNDID.pgn")
    timeout: float = Field(default=10.0, gt=0, description="Seconds allowed to connect")
    idle_timeout: float | None = Field(
        default=None,
        gt=0,
        description="Reconnect after this many seconds without data (default: never)",
    )
    max_bytes: int = Field(
        default=1 * MiB, gt=0, description="Largest text of one game in the stream, bytes"
    )


class LccFeedConfig(_FeedConfigBase):
    """DGT LiveChess Cloud JSON, polled (tournament.json, round-N/index.json, game-M.json)."""

    type: Literal["lcc"] = "lcc"
    base_url: str = Field(
        description="Base URL up to and including /get, e.g. https://1.pool.livechesscloud.com/get"
    )
    tournament_id: str
    rounds: list[int] | None = Field(
        default=None, description="Rounds to follow (1-based); default: every round listed"
    )
    interval: float = Field(default=2.0, gt=0, description="Seconds between polls")
    timeout: float = Field(default=10.0, gt=0, description="Seconds allowed for one request")
    max_bytes: int = Field(
        default=1 * MiB, gt=0, description="Largest JSON document (one response), bytes"
    )


class LichessFeedConfig(_FeedConfigBase):
    """A Lichess broadcast tournament, followed from round to round (livegain/feeds/lichess.py)."""

    type: Literal["lichess"] = "lichess"
    url: str = Field(default="https://lichess.org", description="Where Lichess is")
    tournament: str = Field(
        pattern=r"^[A-Za-z0-9]{8}$", description="The broadcast tournament's id (8 characters)"
    )
    round: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9]{8}$",
        description="Follow only this round (its id); default: every round, the current one live",
    )
    interval: float = Field(
        default=60.0,
        gt=0,
        description="Seconds between two readings of the tournament document (how soon "
        "the next round is taken up)",
    )
    timeout: float = Field(default=10.0, gt=0, description="Seconds allowed for one request")
    max_bytes: int = Field(
        default=16 * MiB, gt=0, description="Largest round PGN, bytes (a stream: per game)"
    )


class MqttFeedConfig(_FeedConfigBase, BrokerAccess):
    """MQTT ingest (see docs/feeds.md for the topic and payload contract)."""

    type: Literal["mqtt"] = "mqtt"
    url: str = Field(
        default="mqtt://127.0.0.1:1883",
        pattern=r"^(mqtts?|tcp|ssl)://[^/\s]+/?$",
        description="mqtt://[user[:password]@]host[:1883] or mqtts://host[:8883] (TLS)",
    )
    topic: str = "livegain/in/#"
    client_id: str | None = Field(
        default=None,
        description="MQTT client id. Default: livegain-ingest-<host>-<random>, made once "
        "and kept in the service's data_dir (so the broker's persistent session, "
        "holding QoS 1 messages while we are away, survives a restart)",
    )
    session_expiry: int = Field(
        default=3600, ge=0, description="Seconds the broker keeps our session after a disconnect"
    )
    gap_timeout: float = Field(
        default=10.0,
        gt=0,
        description="Seconds to wait for a missing sequence number before reporting the gap",
    )
    resync_topic: str | None = Field(
        default="livegain/resync",
        description="Where a board that lost moves asks its relay for the whole game "
        "({resync_topic}/{tournament}/{round}/{board}); empty: never ask",
    )
    max_bytes: int = Field(default=1 * MiB, gt=0, description="Largest message payload, bytes")


class FileFeedConfig(_FeedConfigBase):
    """A local PGN file or a directory of .pgn files, watched by polling mtime/size."""

    type: Literal["file"] = "file"
    path: str
    interval: float = Field(default=1.0, gt=0, description="Seconds between checks")
    max_bytes: int = Field(
        default=64 * MiB, gt=0, description="Largest file read; a larger one is refused, bytes"
    )


FeedConfig = Annotated[
    PgnHttpFeedConfig
    | PgnStreamFeedConfig
    | LichessFeedConfig
    | LccFeedConfig
    | MqttFeedConfig
    | FileFeedConfig,
    Field(discriminator="type"),
]

feed_config_adapter: TypeAdapter[FeedConfig] = TypeAdapter(FeedConfig)


def parse_feed_config(data: object) -> FeedConfig:
    """Validate a mapping (e.g. from TOML) into the matching feed config."""
    return feed_config_adapter.validate_python(data)


def make_feed(cfg: FeedConfig, *, max_plies: int = DEFAULT_MAX_PLIES) -> Feed:
    """Build the feed a config describes (imports lazily: only what is used).

    ``max_plies``: the service's ``limits.max_plies``, for the PGN and LCC feeds: they
    refuse a longer game before reading its moves.
    """
    if isinstance(cfg, PgnHttpFeedConfig):
        from livegain.feeds.http_pgn import PgnHttpFeed

        return PgnHttpFeed(cfg, max_plies=max_plies)
    if isinstance(cfg, PgnStreamFeedConfig):
        from livegain.feeds.pgn_stream import PgnStreamFeed

        return PgnStreamFeed(cfg, max_plies=max_plies)
    if isinstance(cfg, LichessFeedConfig):
        from livegain.feeds.lichess import LichessFeed

        return LichessFeed(cfg, max_plies=max_plies)
    if isinstance(cfg, LccFeedConfig):
        from livegain.feeds.lcc import LccFeed

        return LccFeed(cfg, max_plies=max_plies)
    if isinstance(cfg, MqttFeedConfig):
        from livegain.feeds.mqtt import MqttFeed

        return MqttFeed(cfg)
    if isinstance(cfg, FileFeedConfig):
        from livegain.feeds.files import FileFeed

        return FileFeed(cfg, max_plies=max_plies)
    raise TypeError(f"unknown feed config {type(cfg).__name__}")  # pragma: no cover
