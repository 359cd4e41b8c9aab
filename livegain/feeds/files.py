"""FileFeed (being written; the class and constructor signature are final)."""

from __future__ import annotations

from livegain.feeds.base import FeedSink, FileFeedConfig


class FileFeed:
    def __init__(self, cfg: FileFeedConfig) -> None:
        self.cfg = cfg
        self.name = cfg.name or "files"

    async def run(self, sink: FeedSink) -> None:
        raise NotImplementedError("FileFeed is being written")
