"""The feeds that follow a whole event (Lichess's tournament, LiveChess Cloud's
every round) against a relay of the project's demo event shaped like the real
services (livegain.relay.event): games placed by the source, finished
rounds read once, the next round taken up without a restart, and polling that
does not grow with the rounds played."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from livegain.core.snapshot import GameSnapshot, PlayerInfo
from livegain.feeds.base import LccFeedConfig, LichessFeedConfig
from livegain.feeds.lcc import LccFeed
from livegain.feeds.lichess import LichessFeed, RoundBoards, game_key, place, scoring_of
from livegain.relay.event import EventRelay

REPO = Path(__file__).resolve().parents[2]
DEMO_EVENT = REPO / "livegain" / "data" / "demo-event.pgn"
EVENT = "livegain Demo Open 2026"


class Sink:
    def __init__(self) -> None:
        self.snaps: dict[tuple[str | None, str | None, int | None], GameSnapshot] = {}
        self.errors: list[tuple[str, str, str]] = []

    def snapshot(self, snap: GameSnapshot) -> None:
        self.snaps[(snap.event, snap.round, snap.board)] = snap

    def error(self, source: str, where: str, message: str) -> None:
        self.errors.append((source, where, message))


def test_a_game_is_placed_by_the_source_not_by_its_tags() -> None:
    lila = GameSnapshot(
        "lichess",
        PlayerInfo("Varga, Lenke"),
        PlayerInfo("Moreau, Bastien"),
        event="Round 4.1: Varga, Lenke - Moreau, Bastien",
        round="7",
        board=None,
        tags=(("Event", "Round 4.1: Varga, Lenke - Moreau, Bastien"), ("Round", "7.1")),
    )
    placed = place(lila, EVENT, 2, 3)
    assert (placed.event, placed.round, placed.board) == (EVENT, "2", 3)
    assert dict(placed.tags) == {"Event": EVENT, "Round": "2.3", "Board": "3"}
    # Boards in the order a round's games first come, stable after.
    boards = RoundBoards()
    other = GameSnapshot("lichess", PlayerInfo("A"), PlayerInfo("B"))
    assert [boards.board_of(s) for s in (lila, other, lila)] == [1, 2, 1]
    with_url = GameSnapshot(
        "lichess", PlayerInfo("A"), PlayerInfo("B"), tags=(("GameURL", "https://x/-/-/r/AbCd1234"),)
    )
    assert game_key(with_url) == "id:AbCd1234"
    assert game_key(other) == "players:a|b"


def test_the_scoring_is_the_one_every_round_carries() -> None:
    from livegain.feeds.lichess import BroadcastRound

    three = {"white": {"win": 3, "draw": 1}, "black": {"win": 3, "draw": 1}}
    rounds = [BroadcastRound(n, f"Round{n:03d}", f"R{n}", "upcoming", three) for n in (1, 2)]
    assert scoring_of(rounds) == three
    assert scoring_of([*rounds, BroadcastRound(3, "Round003", "R3", "upcoming", None)]) == three
    other = {"white": {"win": 2, "draw": 1}, "black": {"win": 2, "draw": 1}}
    assert scoring_of([*rounds, BroadcastRound(3, "Round003", "R3", "upcoming", other)]) is None
    assert scoring_of([BroadcastRound(1, "Round001", "R1", "upcoming", None)]) is None


@contextlib.asynccontextmanager
async def running(feed: LichessFeed | LccFeed, sink: Sink) -> AsyncIterator[None]:
    task = asyncio.create_task(feed.run(sink))
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def until(cond: Callable[[], bool], wait: float = 20.0) -> None:
    """Wait for ``cond`` (the feeds poll every 0.1 s: looked at every 0.05 s)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + wait
    for _ in iter(int, 1):
        if cond():
            return
        assert loop.time() < end, "not met in time"
        await asyncio.sleep(0.05)


async def test_the_lichess_feed_reads_finished_rounds_once_and_moves_on() -> None:
    relay = EventRelay.from_pgn(DEMO_EVENT.read_text(encoding="utf-8"), info_format="Swiss")
    async with relay:
        for n in (1, 2):
            relay.begin(n)
            await relay.advance(n)
            relay.finish(n)
        relay.begin(3)
        await relay.advance(3, 12)
        sink = Sink()
        cfg = LichessFeedConfig(url=relay.base_url, tournament=relay.tour_id, interval=0.1)
        feed = LichessFeed(cfg)
        async with running(feed, sink):
            await until(lambda: len(sink.snaps) == 18)
            assert feed.status()["round"] == "Round 3"
            assert {k[1] for k in sink.snaps} == {"1", "2", "3"}
            assert all(k[0] == EVENT for k in sink.snaps)
            # Round 3 over, round 4 begins: taken up without a restart.
            await relay.advance(3)
            relay.finish(3)
            relay.begin(4)
            await relay.advance(4, 6)
            await until(lambda: feed.status()["round"] == "Round 4" and len(sink.snaps) == 24)
            # the tournament read again, asked conditionally, unchanged: 304
            await until(lambda: relay.not_modified > 0)
        r = relay.requests
        for rnd in relay.rounds[:3]:  # each finished round's PGN read once
            assert r[f"/api/broadcast/round/{rnd.id}.pgn"] == 1
        assert f"/api/broadcast/round/{relay.rounds[3].id}.pgn" not in r
        assert r[f"/api/stream/broadcast/round/{relay.rounds[2].id}.pgn"] == 1
        assert r[f"/api/stream/broadcast/round/{relay.rounds[3].id}.pgn"] == 1
        assert sink.errors == []
        finished = [s for s in sink.snaps.values() if s.round in ("1", "2", "3")]
        assert all(s.result != "*" for s in finished)


async def test_lcc_polling_does_not_grow_with_the_rounds_played() -> None:
    relay = EventRelay.from_pgn(DEMO_EVENT.read_text(encoding="utf-8"))
    async with relay:
        for n in (1, 2, 3):
            relay.begin(n)
            await relay.advance(n)
            relay.finish(n)
        relay.begin(4)
        sink = Sink()
        cfg = LccFeedConfig(base_url=relay.lcc_pool, tournament_id=relay.lcc_id, interval=0.1)
        feed = LccFeed(cfg)
        async with running(feed, sink):
            paired = f"/get/{relay.lcc_id}/round-5/index.json"
            # every round seen once: rounds 1-3 read, round 4 followed, round 5's pairings
            # (paired, not started) looked at once
            await until(
                lambda: (
                    len(sink.snaps) == 24
                    and feed.status()["finished_rounds"] == [1, 2, 3]
                    and relay.requests.get(paired, 0) > 0
                )
            )
            before = dict(relay.requests)
            live = f"/get/{relay.lcc_id}/round-4/index.json"
            # ten polls more, however long they take on a loaded machine
            await until(lambda: relay.requests.get(live, 0) - before.get(live, 0) >= 10)
        grew = {p: n - before.get(p, 0) for p, n in relay.requests.items() if n > before.get(p, 0)}
        # Finished games are not fetched again, finished rounds' indexes not every poll.
        for rnd in (1, 2, 3):
            assert not any(p.startswith(f"/get/{relay.lcc_id}/round-{rnd}/") for p in grew), grew
        # The round being played is polled on every poll (ten, above); round 5 (paired,
        # not started) not.
        assert not any(p.startswith(f"/get/{relay.lcc_id}/round-5/") for p in grew), grew
        assert feed.status()["round"] == 4


async def test_rounds_announced_ahead_are_listed_never_paired_and_counted() -> None:
    from livegain.feeds.resolve import Endpoints, resolve

    relay = EventRelay.from_pgn(DEMO_EVENT.read_text(encoding="utf-8"), rounds=7)
    async with relay:
        for n in (1, 2, 3, 4):
            relay.begin(n)
            await relay.advance(n)
            relay.finish(n)
        relay.begin(5)
        assert [r.number for r in relay.rounds] == [1, 2, 3, 4, 5, 6, 7]
        assert [r["count"] for r in relay.lcc_tournament()["rounds"]][4:] == [6, 0, 0]
        assert relay.lichess_games(relay.round(6)) == []
        # The tournament lists seven rounds: the standings entry says so (a Swiss to round 7).
        found = await resolve(relay.tournament_url, Endpoints(lichess=relay.base_url))
        assert found.standings is not None and found.standings["rounds"] == 7
        assert found.round == "Round 5"
        # After round 5, the feed waits on round 6, whose stream stays silent.
        relay.finish(5)
        sink = Sink()
        cfg = LichessFeedConfig(url=relay.base_url, tournament=relay.tour_id, interval=0.1)
        feed = LichessFeed(cfg)
        async with running(feed, sink):
            await until(lambda: len(sink.snaps) == 30)
            await until(lambda: feed.status().get("round") == "Round 6")
        assert not sink.errors
    with contextlib.suppress(Exception):
        EventRelay.from_pgn(DEMO_EVENT.read_text(encoding="utf-8"), rounds=3)
        raise AssertionError("rounds below the PGN's last round must be refused")
