"""Feeds: I/O adapters that turn live sources into :class:`GameSnapshot` values.

See :mod:`livegain.feeds.base` for the protocols and configs, and docs/feeds.md.
"""

from livegain.feeds.base import (
    Feed,
    FeedConfig,
    FeedSink,
    FileFeedConfig,
    LccFeedConfig,
    LichessFeedConfig,
    MqttFeedConfig,
    PgnHttpFeedConfig,
    PgnStreamFeedConfig,
    make_feed,
    parse_feed_config,
)

__all__ = [
    "Feed",
    "FeedConfig",
    "FeedSink",
    "FileFeedConfig",
    "LccFeedConfig",
    "LichessFeedConfig",
    "MqttFeedConfig",
    "PgnHttpFeedConfig",
    "PgnStreamFeedConfig",
    "make_feed",
    "parse_feed_config",
]
