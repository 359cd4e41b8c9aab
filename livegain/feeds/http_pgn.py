"""PgnHttpFeed (being written; the class and constructor signature are final)."""

from __future__ import annotations

from livegain.feeds.base import FeedSink, PgnHttpFeedConfig


class PgnHttpFeed:
    def __init__(self, cfg: PgnHttpFeedConfig) -> None:
        self.cfg = cfg
        self.name = cfg.name or "http_pgn"

    async def run(self, sink: FeedSink) -> None:
        raise NotImplementedError("PgnHttpFeed is being written")
