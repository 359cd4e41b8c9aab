"""MqttFeed (being written; the class and constructor signature are final)."""

from __future__ import annotations

from livegain.feeds.base import FeedSink, MqttFeedConfig


class MqttFeed:
    def __init__(self, cfg: MqttFeedConfig) -> None:
        self.cfg = cfg
        self.name = cfg.name or "mqtt"

    async def run(self, sink: FeedSink) -> None:
        raise NotImplementedError("MqttFeed is being written")
