"""Feed configs: the discriminated union and make_feed."""

from __future__ import annotations

import pydantic
import pytest

from livegain.feeds import (
    Feed,
    FeedConfig,
    FeedSink,
    FileFeedConfig,
    LccFeedConfig,
    MqttFeedConfig,
    PgnHttpFeedConfig,
    make_feed,
    parse_feed_config,
)
from livegain.feeds.files import FileFeed
from livegain.feeds.http_pgn import PgnHttpFeed
from livegain.feeds.lcc import LccFeed
from livegain.feeds.mqtt import MqttFeed

from .conftest import RecordingSink


def test_every_config_type_makes_its_feed() -> None:
    cases: list[tuple[dict[str, object], type, type]] = [
        ({"type": "pgn-http", "url": "http://x/games.pgn"}, PgnHttpFeedConfig, PgnHttpFeed),
        (
            {"type": "pgn-http", "url": ["http://x/1.pgn", "http://x/2.pgn"], "interval": 5},
            PgnHttpFeedConfig,
            PgnHttpFeed,
        ),
        (
            {"type": "lcc", "base_url": "http://x/get", "tournament_id": "abc", "rounds": [3]},
            LccFeedConfig,
            LccFeed,
        ),
        ({"type": "mqtt"}, MqttFeedConfig, MqttFeed),
        ({"type": "file", "path": "/tmp/x.pgn", "name": "arbiter"}, FileFeedConfig, FileFeed),
    ]
    for data, cfg_type, feed_type in cases:
        cfg = parse_feed_config(data)
        assert type(cfg) is cfg_type
        feed = make_feed(cfg)
        assert type(feed) is feed_type and isinstance(feed, Feed)
    assert make_feed(parse_feed_config(cases[-1][0])).name == "arbiter"
    assert parse_feed_config({"type": "pgn-http", "url": "u"}).interval == 2.0  # type: ignore[union-attr]
    mq = parse_feed_config({"type": "mqtt"})
    assert mq.url == "mqtt://127.0.0.1:1883" and mq.topic == "livegain/in/#"  # type: ignore[union-attr]
    assert parse_feed_config({"type": "file", "path": "p"}).interval == 1.0  # type: ignore[union-attr]


def test_bad_configs_are_refused_with_the_field_named() -> None:
    for data, field in [
        ({"type": "pgn-http"}, "url"),
        ({"type": "lcc", "base_url": "u"}, "tournament_id"),
        ({"type": "file", "path": "p", "interval": 0}, "interval"),
        ({"type": "mqtt", "topik": "x"}, "topik"),
        ({"type": "telex"}, "type"),
        ({"type": "mqtt", "url": "http://broker"}, "url"),
    ]:
        with pytest.raises(pydantic.ValidationError, match=field):
            parse_feed_config(data)


def test_a_list_of_feeds_validates_as_one_union() -> None:
    adapter = pydantic.TypeAdapter(list[FeedConfig])
    feeds = adapter.validate_python([{"type": "mqtt"}, {"type": "file", "path": "p"}])
    assert [f.type for f in feeds] == ["mqtt", "file"]


def test_the_recording_sink_is_a_feed_sink() -> None:
    assert isinstance(RecordingSink(), FeedSink)
