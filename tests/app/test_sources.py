"""One event from two real feeds into the real service; the preferred one stops, the other goes on.

A LiveChess Cloud relay (the replay's LCC JSON server, ``priority = 0``) and a
PGN mirror of the same round (the replay's PGN server, ``priority = 1``, other
spellings of the names, the same FIDE ids, its own board numbers) feed one
:class:`Service` as one ``event_group``. Each game is one board, driven by the
LCC feed. Then the LCC server goes away mid-round while the mirror goes on:
once the mirror has been ahead for ``takeover_after`` seconds, its next move
hands it the boards, with every ply once (no correction, no hole, no duplicate).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import chess.pgn
import pytest

from livegain.app.service import Service
from livegain.engine.pool import EnginePool
from livegain.relay.replay import Replay

from .conftest import running, settings_for, ws_url
from .mirror import Mirror

pytestmark = [pytest.mark.engine, pytest.mark.timeout(180)]

GAMES = [
    ("Carlsen, Magnus", "1503014", "Giri, Anish", "24116068",
     "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6"),
    ("Firouzja, Alireza", "12573981", "Ding, Liren", "8603677",
     "1. d4 Nf6 2. c4 e6 3. Nc3 Bb4 4. e3 O-O 5. Bd3 d5 6. Nf3 c5 7. O-O Nc6"),
]  # fmt: skip
# How the mirror spells the same players.
MIRROR_NAMES = {
    "Carlsen, Magnus": "Magnus Carlsen",
    "Giri, Anish": "Anish Giri",
    "Firouzja, Alireza": "Alireza Firouzja",
    "Ding, Liren": "Liren Ding",
}
TAKEOVER_AFTER = 4.0
WAIT = 60.0


def round_pgn(mirror: bool) -> str:
    out = []
    for board, (white, wid, black, bid, moves) in enumerate(GAMES, start=1):
        w = MIRROR_NAMES[white] if mirror else white
        b = MIRROR_NAMES[black] if mirror else black
        number = f"1.{board + 6}" if mirror else f"1.{board}"  # the mirror numbers boards 7, 8
        out.append(
            f'[Event "Wijk Test"]\n[Round "{number}"]\n[White "{w}"]\n[Black "{b}"]\n'
            f'[WhiteFideId "{wid}"]\n[BlackFideId "{bid}"]\n[Result "*"]\n\n{moves} *\n'
        )
    return "\n".join(out)


def sans() -> dict[str, list[str]]:
    """Each game's moves (SAN), by White's FIDE id."""
    out = {}
    text = io.StringIO(round_pgn(False))
    while (game := chess.pgn.read_game(text)) is not None:
        board = game.board()
        moves = []
        for move in game.mainline_moves():
            moves.append(board.san(move))
            board.push(move)
        out[game.headers["WhiteFideId"]] = moves
    return out


def shown(mirror: Mirror) -> dict[str, list[str]]:
    """Each board's moves as an overlay shows them, by White's FIDE id."""
    return {
        s["white"].get("fide_id") or s["white"]["name"]: [m["san"] for m in s["moves"]]
        for s in mirror.boards.values()
    }


def grouped_feeds(lcc_relay: Replay, pgn_relay: Replay) -> list[dict[str, Any]]:
    """The LCC relay (preferred) and the PGN mirror, one event group."""
    return [
        {
            "type": "lcc",
            "name": "lcc",
            "base_url": lcc_relay.lcc_base_url,
            "tournament_id": "wijk",
            "interval": 0.1,
            "event_group": "wijk",
            "priority": 0,
        },
        {
            "type": "pgn-http",
            "name": "mirror",
            "url": pgn_relay.pgn_url,
            "interval": 0.1,
            "event_group": "wijk",
            "priority": 1,
            "takeover_after": TAKEOVER_AFTER,
        },
    ]


@contextlib.asynccontextmanager
async def lcc_and_mirror_feeds(
    tmp_path: Path, pool: EnginePool
) -> AsyncIterator[tuple[Replay, Replay, Service]]:
    """An LCC relay (preferred) and a PGN mirror of the same round, not yet
    moving, and a service reading both as one event group."""
    lcc_relay = Replay.from_pgn(round_pgn(False), mode="lcc", tournament_id="wijk")
    pgn_relay = Replay.from_pgn(round_pgn(True), mode="pgn-http")
    await lcc_relay.start(autoplay=False)
    await pgn_relay.start(autoplay=False)
    feeds = grouped_feeds(lcc_relay, pgn_relay)
    try:
        yield lcc_relay, pgn_relay, Service(settings_for(tmp_path, feeds=feeds), evaluator=pool)
    finally:
        await pgn_relay.stop()
        await lcc_relay.stop()


async def test_the_mirror_takes_over_when_the_preferred_feed_stops(
    tmp_path: Path, pool: EnginePool
) -> None:
    full = sans()
    async with (
        lcc_and_mirror_feeds(tmp_path, pool) as (lcc_relay, pgn_relay, service),
        running(service),
        Mirror(ws_url(service)) as mirror,
    ):
        # Both feeds show 4 plies of each game: one board per game, driven by LCC.
        await lcc_relay.advance(8)
        await pgn_relay.advance(8)
        t = service.registry
        assert t is not None

        def both_seen(n: int) -> bool:
            return all(
                len(g.source_status()) == 2 and all(s.plies == n for s in g.source_status())
                for g in t.boards.values()
            ) and len(t.boards) == len(GAMES)

        await mirror.wait(lambda m: both_seen(4) and len(m.boards) == len(GAMES), WAIT)
        assert {g.source_active for g in t.boards.values()} == {"lcc"}
        assert shown(mirror) == {fid: moves[:4] for fid, moves in full.items()}

        # The LCC relay goes away; the mirror shows two more plies per game.
        await lcc_relay.stop()
        await pgn_relay.advance(4)
        await mirror.wait(
            lambda m: all(
                [s.relation for s in g.source_status()] == ["same", "ahead"]
                for g in t.boards.values()
            ),
            WAIT,
        )
        # Ahead, but not for long enough yet: the boards still show LCC's moves.
        assert all(len(moves) == 4 for moves in shown(mirror).values())
        since = max(s.differs_since or 0.0 for g in t.boards.values() for s in g.source_status())
        await asyncio.sleep(max(0.0, since + TAKEOVER_AFTER - time.monotonic()) + 0.05)
        # The mirror's next move hands it the boards, its moves folded in once.
        await pgn_relay.advance(2)
        await mirror.wait(lambda m: {len(v) for v in shown(m).values()} == {7}, WAIT)
        assert {g.source_active for g in t.boards.values()} == {"mirror"}
        assert len(mirror.boards) == len(GAMES)
        assert shown(mirror) == {fid: moves[:7] for fid, moves in full.items()}
        updates = [m for m in mirror.messages if m["type"] == "update"]
        assert updates and all(u.get("truncate_to") is None for u in updates)
        health = service.health()
        assert health["feed_errors"].get("lcc", 0) >= 1  # it was seen failing
        assert {b["source"] for b in service.board_status().values()} == {"mirror"}


async def test_a_stalled_preferred_feed_hands_over_without_waiting_for_a_new_move(
    tmp_path: Path, pool: EnginePool
) -> None:
    """The service checks stalled sources every second: the mirror's plies show
    once it has been ahead for ``takeover_after``, even when it moves no more."""
    full = sans()
    async with (
        lcc_and_mirror_feeds(tmp_path, pool) as (lcc_relay, pgn_relay, service),
        running(service),
        Mirror(ws_url(service)) as mirror,
    ):
        await lcc_relay.advance(8)
        await pgn_relay.advance(8)
        await mirror.wait(
            lambda m: len(m.boards) == len(GAMES) and {len(v) for v in shown(m).values()} == {4},
            WAIT,
        )
        await lcc_relay.stop()
        await pgn_relay.advance(4)  # then nothing more from anyone
        await mirror.wait(lambda m: {len(v) for v in shown(m).values()} == {6}, WAIT)
        t = service.registry
        assert t is not None
        assert {g.source_active for g in t.boards.values()} == {"mirror"}
        assert shown(mirror) == {fid: moves[:6] for fid, moves in full.items()}
