"""LccFeed (being written; the class and constructor signature are final)."""

from __future__ import annotations

from livegain.feeds.base import FeedSink, LccFeedConfig


class LccFeed:
    def __init__(self, cfg: LccFeedConfig) -> None:
        self.cfg = cfg
        self.name = cfg.name or "lcc"

    async def run(self, sink: FeedSink) -> None:
        raise NotImplementedError("LccFeed is being written")
