"""Each feed declares what more than running it can do (:mod:`livegain.feeds.base`):
the service asks a feed for its state after a restart (:class:`RestorableFeed`)
and for its own ``/healthz`` status (:class:`ReportingFeed`) only where the feed
has them, and takes a delay of its own (:class:`DelayedFeed`) only from a feed
given to it directly; the demo waits for the feeds that subscribe
(:class:`SubscribingFeed`) to hold their subscriptions."""

from __future__ import annotations

from typing import Any

import pytest

from livegain.feeds.base import (
    DelayedFeed,
    Feed,
    ReportingFeed,
    RestorableFeed,
    SubscribingFeed,
    make_feed,
    parse_feed_config,
)

CONFIGS: dict[str, tuple[dict[str, Any], set[type]]] = {
    "pgn-http": ({"url": "http://127.0.0.1:9/round.pgn"}, set()),
    "pgn-stream": ({"url": "http://127.0.0.1:9/round.pgn"}, set()),
    "lichess": ({"tournament": "AbCd1234"}, {ReportingFeed}),
    "lcc": ({"base_url": "http://127.0.0.1:9/get", "tournament_id": "t"}, {ReportingFeed}),
    "mqtt": ({}, {RestorableFeed, ReportingFeed, SubscribingFeed}),
    "file": ({"path": "/nonexistent/round.pgn"}, set()),
}


@pytest.mark.parametrize("kind", sorted(CONFIGS))
def test_each_feed_has_the_abilities_it_declares(kind: str) -> None:
    fields, abilities = CONFIGS[kind]
    feed = make_feed(parse_feed_config({"type": kind, **fields}))
    assert isinstance(feed, Feed)
    kinds = (RestorableFeed, ReportingFeed, DelayedFeed, SubscribingFeed)
    has = {p for p in kinds if isinstance(feed, p)}
    assert has == abilities


def test_a_feed_of_its_own_may_carry_its_delay() -> None:
    class Late:
        name = "late"
        delay = 30

        async def run(self, sink: object) -> None:
            return None

    class OnTime:
        name = "on-time"

        async def run(self, sink: object) -> None:
            return None

    assert isinstance(Late(), DelayedFeed) and Late().delay == 30
    assert not isinstance(OnTime(), DelayedFeed)
