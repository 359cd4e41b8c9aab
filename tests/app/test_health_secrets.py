"""No session handle on an unauthenticated endpoint: on the dev broker
(anonymous on loopback, like config/mosquitto.conf) a client reading the
service's and a gateway's ``/healthz`` and ``/metrics`` learns none of the MQTT
client ids in use: not the ingest's, the publisher's, the engine jobs', a
worker's or the gateway's. The ids are taken from the broker's own log, so
every client that connected is checked, whatever part of livegain made it."""

from __future__ import annotations

import asyncio
import re
import urllib.request
from pathlib import Path

import aiomqtt
import pytest
from brokers import PrivateBroker
from engine.test_remote_workers import workers

from livegain.app.service import Service
from livegain.feeds.mqtt import MqttFeed
from livegain.feeds.mqtt_ingest import move_event

from .conftest import running, settings_for
from .test_gateway import gateways

pytestmark = [pytest.mark.engine, pytest.mark.broker, pytest.mark.slow]

DEPTH = 6
SANS = ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6"]


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode()


def client_ids(log: str) -> set[str]:
    return set(re.findall(r"New client connected from \S+ as (\S+) \(", log))


async def test_healthz_and_metrics_show_no_client_id(
    stockfish: str, private_broker: PrivateBroker, tmp_path: Path, prefix: str
) -> None:
    settings = settings_for(
        tmp_path,
        engine={
            "depth": DEPTH,
            "workers": 1,
            "mode": "both",
            "remote": {"url": private_broker.url, "job_timeout": 5.0, "wait_for_workers": 5.0},
        },
        feeds=[
            {"type": "mqtt", "name": "ingest", "url": private_broker.url, "topic": f"{prefix}/in/#"}
        ],
        mqtt={"enabled": True, "url": private_broker.url, "prefix": f"{prefix}/out"},
    )
    with workers(tmp_path, private_broker.url) as w:
        w.start("w1", depth=DEPTH, engine=stockfish)
        service = Service(settings)
        async with (
            running(service),
            gateways(tmp_path, private_broker, f"{prefix}/out", 1) as (gateway,),
        ):
            feed = next(f for f in service.feeds if isinstance(f, MqttFeed))
            await asyncio.wait_for(feed.subscribed.wait(), 10)
            async with aiomqtt.Client("127.0.0.1", private_broker.port) as relay:
                for ply, san in enumerate(SANS, start=1):
                    await relay.publish(f"{prefix}/in/t/1/1", move_event(ply, ply, san), qos=1)
            pages: dict[str, str] = {}
            for _ in range(300):
                pages = {
                    url: await asyncio.to_thread(get, url)
                    for url in (
                        f"{service.url}healthz",
                        f"{service.url}metrics",
                        f"{gateway.url}healthz",  # a gateway has no /metrics
                    )
                }
                if '"w1"' in pages[f"{service.url}healthz"]:
                    break
                await asyncio.sleep(0.1)
            assert '"w1"' in pages[f"{service.url}healthz"], "the worker was never listed"
            seen = client_ids(private_broker.log())
            # the ingest, the publisher, the engine jobs, the worker and the gateway
            assert feed.client_id in seen
            assert len(seen - {feed.client_id}) >= 4, seen
            for url, text in pages.items():
                for cid in seen:
                    assert cid not in text, f"{url} shows the client id {cid}"
                    # nor its random part (the secret), in any form
                    assert cid.rsplit("-", 1)[-1] not in text, f"{url} shows part of {cid}"
