"""The MQTT feed against real Mosquitto brokers: QoS 1, persistent sessions, restarts."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from livegain.feeds import MqttFeedConfig, make_feed
from livegain.feeds.mqtt import MqttFeed
from livegain.feeds.mqtt_ingest import move_event
from livegain.mqtt.client import connect
from livegain.relay.replay import Replay

from .conftest import PrivateBroker, RecordingSink, cancel, free_port, run_feed

pytestmark = [pytest.mark.broker, pytest.mark.timeout(90)]

GAME = [
    "e4",
    "c5",
    "Nf3",
    "d6",
    "d4",
    "cxd4",
    "Nxd4",
    "Nf6",
    "Nc3",
    "a6",
    "Be3",
    "e5",
    "Nb3",
    "Be6",
    "f3",
    "Be7",
    "Qd2",
    "O-O",
    "O-O-O",
    "Nbd7",
]


def feed_cfg(url: str, prefix: str, cid: str, **kw: object) -> MqttFeedConfig:
    return MqttFeedConfig(url=url, topic=f"{prefix}/#", client_id=cid, session_expiry=120, **kw)  # type: ignore[arg-type]


def plies(sink: RecordingSink, board: int) -> tuple[str, ...]:
    b = sink.by_board().get(board)
    return b.moves if b else ()


async def test_three_boards_one_garbled_duplicates_are_no_ops(
    broker: str, unique: str, sink: RecordingSink
) -> None:
    prefix = f"livegain/in/test-{unique}"
    feed = make_feed(feed_cfg(broker, prefix, f"lg-feed-{unique}"))
    assert isinstance(feed, MqttFeed)
    task = await run_feed(feed, sink)
    try:
        await asyncio.wait_for(feed.subscribed.wait(), 10)
        async with connect(broker) as pub:
            for ply, san in enumerate(GAME[:8], start=1):
                for board in (1, 2, 3):
                    topic = f"{prefix}/1/{board}"
                    await pub.publish(topic, move_event(ply, ply, san, clock=600 - ply), qos=1)
                    if board == 2 and ply == 4:
                        await pub.publish(topic, b"\x00{garbled", qos=1)
                    if board == 3:  # every event on board 3 redelivered once
                        await pub.publish(topic, move_event(ply, ply, san, clock=600 - ply), qos=1)
            await sink.wait_for(lambda: all(plies(sink, b) == tuple(GAME[:8]) for b in (1, 2, 3)))
        assert feed.ingest.duplicates == 8
        (err,) = sink.errors
        assert err[0] == "mqtt" and err[1] == f"{prefix}/1/2"
        assert "neither a JSON move event nor PGN" in err[2]
        snap = sink.by_board()[3]
        assert snap.clocks == tuple(600 - p for p in range(1, 9))
        assert snap.game_id == f"mqtt:test-{unique}/1/3" and snap.round == "1"
        # a board's snapshots only ever grow: duplicates emitted nothing
        assert len([s for s in sink.snapshots if s.board == 3]) == 8
    finally:
        await cancel(task)


async def test_persistent_session_keeps_messages_while_the_feed_is_away(
    broker: str, unique: str, sink: RecordingSink
) -> None:
    prefix = f"livegain/in/test-{unique}"
    cfg = feed_cfg(broker, prefix, f"lg-feed-{unique}")
    topic = f"{prefix}/2/1"
    feed = MqttFeed(cfg)
    task = await run_feed(feed, sink)
    async with connect(broker) as pub:
        try:
            await asyncio.wait_for(feed.subscribed.wait(), 10)
            for ply in range(1, 6):
                await pub.publish(topic, move_event(ply, ply, GAME[ply - 1]), qos=1)
            await sink.wait_for(lambda: plies(sink, 1) == tuple(GAME[:5]))
        finally:
            await cancel(task)  # a clean disconnect; the session stays on the broker
        for ply in range(6, 11):  # published while nobody listens
            await pub.publish(topic, move_event(ply, ply, GAME[ply - 1]), qos=1)
    feed2 = MqttFeed(cfg)
    feed2.ingest = feed.ingest  # the same service keeps its state across a reconnect
    task = await run_feed(feed2, sink)
    try:
        await sink.wait_for(lambda: plies(sink, 1) == tuple(GAME[:10]))
        assert sink.errors == []
    finally:
        await cancel(task)


async def test_replay_over_mqtt_into_the_feed(
    broker: str, unique: str, sink: RecordingSink
) -> None:
    pgn = (
        '[Event "Mq"]\n[White "A, B"]\n[Black "C, D"]\n[WhiteElo "2500"]\n'
        '[Result "1-0"]\n\n1. e4 {[%clk 0:05:00]} e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n\n'
        '[Event "Mq"]\n[White "E"]\n[Black "F"]\n[Result "*"]\n\n1. d4 *\n'
    )
    feed = MqttFeed(feed_cfg(broker, f"livegain/in/{unique}", f"lg-feed-{unique}"))
    task = await run_feed(feed, sink)
    replay = Replay.from_pgn(pgn, mode="mqtt", mqtt_url=broker, tournament_id=unique)
    try:
        await asyncio.wait_for(feed.subscribed.wait(), 10)
        await replay.start(autoplay=False)
        await replay.advance(3)
        await replay.advance_all()
        await sink.wait_for(
            lambda: sink.by_board().get(1) is not None and sink.by_board()[1].result == "1-0"
        )
        one = sink.by_board()[1]
        assert one.moves == ("e4", "e5", "Qh5", "Nc6", "Bc4", "Nf6", "Qxf7#")
        assert one.clocks[0] == 300 and one.white.name == "A, B" and one.white.rating == 2500
        await sink.wait_for(lambda: plies(sink, 2) == ("d4",))
        # the round starts again (a new epoch): boards reset, then replay again
        await replay.reset()
        await sink.wait_for(lambda: plies(sink, 1) == ())
        await replay.advance_all()
        await sink.wait_for(lambda: plies(sink, 1) == one.moves)
        assert sink.errors == []
    finally:
        await replay.stop()
        await cancel(task)


async def test_unreachable_broker_is_reported_and_retried(sink: RecordingSink) -> None:
    port = free_port()  # nothing listens there
    feed = MqttFeed(
        MqttFeedConfig(url=f"mqtt://127.0.0.1:{port}", client_id="lg-nobody"),
        reconnect_delays=(0.05, 0.1),
    )
    task = await run_feed(feed, sink)
    try:
        await sink.wait_for(lambda: len(sink.errors) >= 3)
    finally:
        await cancel(task)
    assert all("broker connection" in e[2] for e in sink.errors)
    assert "retrying in 0.05 s" in sink.errors[0][2]
    assert "retrying in 0.1 s" in sink.errors[2][2]


async def test_broker_restart_mid_game_loses_no_move(
    private_broker: PrivateBroker, unique: str, sink: RecordingSink
) -> None:
    """Stop the broker mid-game, publish while the feed is still away, lose nothing."""
    url = private_broker.url
    topic = f"livegain/in/{unique}/1/1"
    feed = MqttFeed(feed_cfg(url, "livegain/in", f"lg-feed-{unique}"), reconnect_delays=(8.0,))
    task = await run_feed(feed, sink)
    try:
        await asyncio.wait_for(feed.subscribed.wait(), 10)
        async with connect(url) as pub:
            for ply in range(1, 9):
                await pub.publish(topic, move_event(ply, ply, GAME[ply - 1]), qos=1)
        await sink.wait_for(lambda: plies(sink, 1) == tuple(GAME[:8]))
        assert feed.connections == 1

        await asyncio.to_thread(private_broker.stop)
        await sink.wait_for(lambda: any("broker connection" in e[2] for e in sink.errors))
        await asyncio.to_thread(private_broker.start)
        # publish as soon as the broker is back, before the feed's reconnect (8 s back-off)
        async with connect(url) as pub:
            for ply in range(9, 21):
                await pub.publish(topic, move_event(ply, ply, GAME[ply - 1]), qos=1)
        published_while_away = feed.connections == 1
        await sink.wait_for(lambda: plies(sink, 1) == tuple(GAME), within=20)
        assert feed.connections >= 2
        assert published_while_away, "the feed reconnected before the publisher: retry"
        assert all("broker connection" in e[2] for e in sink.errors)
        # each ply arrived once, in order: every snapshot extends the previous one
        seen = [s.moves for s in sink.snapshots]
        assert all(len(b) == len(a) + 1 and b[:-1] == a for a, b in itertools.pairwise(seen))
    finally:
        await cancel(task)


async def test_replay_and_feed_both_ride_out_a_broker_restart(
    private_broker: PrivateBroker, unique: str, sink: RecordingSink
) -> None:
    url = private_broker.url
    pgn = (
        '[White "A"]\n[Black "B"]\n[Result "1/2-1/2"]\n\n'
        + " ".join(f"{i // 2 + 1}. {san}" if i % 2 == 0 else san for i, san in enumerate(GAME))
        + " 1/2-1/2\n"
    )
    feed = MqttFeed(feed_cfg(url, "livegain/in", f"lg-feed-{unique}"), reconnect_delays=(0.2,))
    task = await run_feed(feed, sink)
    replay = Replay.from_pgn(pgn, mode="mqtt", mqtt_url=url, tournament_id=unique)
    try:
        await asyncio.wait_for(feed.subscribed.wait(), 10)
        await replay.start(autoplay=False)
        await replay.advance(6)
        await sink.wait_for(lambda: plies(sink, 1) == tuple(GAME[:6]))
        await asyncio.to_thread(private_broker.stop)

        async def restart_soon() -> None:
            await asyncio.sleep(0.3)
            await asyncio.to_thread(private_broker.start)

        restarting = asyncio.create_task(restart_soon())
        await replay.advance_all()  # publishing fails, reconnects, publishes again
        await restarting
        await sink.wait_for(lambda: sink.by_board()[1].result == "1/2-1/2", within=20)
        assert sink.by_board()[1].moves == tuple(GAME)
        assert all("broker connection" in e[2] for e in sink.errors)
    finally:
        await replay.stop()
        await cancel(task)


async def test_replay_refuses_an_unreachable_broker() -> None:
    from livegain.relay.replay import ReplayError

    replay = Replay.from_pgn(
        '[White "A"]\n\n1. e4 *', mode="mqtt", mqtt_url=f"mqtt://127.0.0.1:{free_port()}"
    )
    with pytest.raises(ReplayError, match="cannot connect"):
        await replay.start()


async def test_replay_over_mqtt_passes_a_kings_signal_on(
    broker: str, unique: str, sink: RecordingSink
) -> None:
    pgn = '[White "A"]\n[Black "B"]\n\n1. e4 e5 2. Ke2 Ke7 3. Ke3 Ke6 4. Kd4 Kd5 *\n'
    feed = MqttFeed(feed_cfg(broker, f"livegain/in/{unique}", f"lg-feed-{unique}"))
    task = await run_feed(feed, sink)
    replay = Replay.from_pgn(pgn, mode="mqtt", mqtt_url=broker, tournament_id=unique)
    try:
        await asyncio.wait_for(feed.subscribed.wait(), 10)
        await replay.start(autoplay=False)
        await replay.advance_all()
        await sink.wait_for(lambda: len(plies(sink, 1)) == 8)
        assert plies(sink, 1)[-2:] == ("Kd4", "Kd5")
        assert sink.errors == []
    finally:
        await replay.stop()
        await cancel(task)
