"""Feeds of one event group; illegal moves that stood, as the feeds pass them on.

The group keys (``event_group``, ``priority``, ``takeover_after``) travel on every
snapshot of a grouped feed with its arrival time. An illegal move followed by
more moves goes on to the game state (``after_illegal``), and a LiveChess Cloud
game file's current position (``fen``) goes on for a move that cannot be played,
remembered for that move in later polls.
"""

from __future__ import annotations

from typing import Any

import chess
import pytest
from pydantic import ValidationError

from livegain.core.board.registry import BoardRegistry
from livegain.core.board.sources import DEFAULT_TAKEOVER_AFTER
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.core.snapshot import GameSnapshot, PlayerInfo
from livegain.feeds import LccFeedConfig, make_feed, parse_feed_config
from livegain.feeds.base import SourceSink, source_sink
from livegain.feeds.lcc_json import parse_game_json
from livegain.feeds.pgn import parse_pgn

from .conftest import RecordingSink, cancel, run_feed
from .test_lcc import LccServer, _player

pytestmark = pytest.mark.timeout(60)

# 3."Nd5": the f3 knight put on d5 (no knight move); then 3...Nf6 4.Nxf6+.
BEFORE = ["e4", "e5", "Nf3", "Nc6"]


def _jumped() -> str:
    b = chess.Board()
    for m in BEFORE:
        b.push_san(m)
    b.remove_piece_at(chess.F3)
    b.set_piece_at(chess.D5, chess.Piece(chess.KNIGHT, chess.WHITE))
    return b.board_fen()


def test_group_keys_in_feed_configs() -> None:
    cfg = parse_feed_config(
        {
            "type": "pgn-http",
            "url": "http://x/games.pgn",
            "event_group": "tata",
            "priority": 1,
            "takeover_after": 12.5,
        }
    )
    assert (cfg.event_group, cfg.priority, cfg.takeover_after) == ("tata", 1, 12.5)
    plain = parse_feed_config({"type": "file", "path": "/tmp/x"})
    assert (plain.event_group, plain.priority) == (None, 0)
    assert plain.takeover_after == DEFAULT_TAKEOVER_AFTER
    for bad in ({"priority": -1}, {"takeover_after": 0}, {"event_group": ""}, {"group": "x"}):
        with pytest.raises(ValidationError):
            parse_feed_config({"type": "file", "path": "/tmp/x", **bad})


def test_source_sink_stamps_grouped_snapshots_only() -> None:
    rec = RecordingSink()
    cfg = parse_feed_config(
        {"type": "file", "path": "/x", "event_group": "tata", "priority": 2, "takeover_after": 5}
    )
    stamped = SourceSink(rec, cfg, clock=lambda: 123.5)
    snap = GameSnapshot("f", PlayerInfo("A"), PlayerInfo("B"), ("e4",))
    stamped.snapshot(snap)
    stamped.error("f", "here", "bad")
    (got,) = rec.snapshots
    assert (got.group, got.priority, got.takeover_after, got.received_at) == ("tata", 2, 5.0, 123.5)
    assert got.moves == snap.moves and rec.errors == [("f", "here", "bad")]
    plain = parse_feed_config({"type": "file", "path": "/x"})
    assert source_sink(rec, plain) is rec  # no group: snapshots go on untouched
    assert source_sink(stamped, cfg) is stamped  # never wrapped twice


def test_pgn_passes_the_moves_after_an_illegal_one_on() -> None:
    (g,) = parse_pgn('[White "A"]\n[Black "B"]\n\n1. e4 e5 2. Ke3 Nc6 3. Nf3 *')
    assert g.snapshot is not None and g.snapshot.moves == ("e4", "e5")
    assert g.snapshot.after_illegal == ("Ke3", "Nc6", "Nf3")
    (issue,) = g.issues
    assert "ply 3 (2.Ke3)" in issue.where and "2 more after it, passed on" in issue.message
    # Up to two tokens at the very end still go on in `moves`, as before.
    (g,) = parse_pgn('[White "A"]\n[Black "B"]\n\n1. e4 e5 2. Nf3 Nc6 3. Ke5 *')
    assert g.snapshot is not None and g.snapshot.after_illegal == ()
    assert g.snapshot.moves[-1] == "Ke5"


def test_lcc_game_file_passes_the_rest_and_its_position_on() -> None:
    g = parse_game_json({"moves": ["e4 100", "e5 100", "Ke3 90", "Nc6", "d4"]}, "r2 b4")
    assert g.moves == ("e4", "e5") and g.after_illegal == ("Ke3", "Nc6", "d4")
    assert "2 more after it, passed on" in g.issues[0] and g.legal == 2
    g = parse_game_json({"moves": ["e4", "e5", "Nf3", "Nc6", "Nd5"], "fen": _jumped()}, "g")
    assert g.fen == _jumped() and g.moves[-1] == "Nd5" and g.legal == 4 and not g.issues
    bad = parse_game_json({"moves": ["e4"], "fen": "not a position"}, "g")
    assert bad.fen is None and "'fen'" in bad.issues[0] and bad.moves == ("e4",)


async def test_lcc_feed_carries_the_reported_position_and_the_group() -> None:
    srv = LccServer()
    srv.docs["tournament.json"] = {"name": "Test Open", "rounds": [{"count": 1, "live": 1}]}
    srv.docs["round-1/index.json"] = {
        "pairings": [
            {"white": _player("Magnus", "Carlsen", 1503014), "black": _player("Anish", "Giri")}
        ],
    }
    srv.docs["round-1/game-1.json"] = {
        "chess960": 518,
        "moves": ["e4 5400", "e5 5398", "Nf3 5390", "Nc6 5380", "Nd5 5300"],
        "fen": _jumped(),
    }
    await srv.server.start()
    cfg = LccFeedConfig(
        base_url=srv.base_url,
        tournament_id="t1",
        interval=0.05,
        event_group="test-open",
        priority=0,
    )
    sink = RecordingSink()
    task = await run_feed(make_feed(cfg), sink)
    try:
        await sink.wait_for(lambda: any(s.board == 1 for s in sink.snapshots))
        first = [s for s in sink.snapshots if s.board == 1][-1]
        assert first.group == "test-open" and first.received_at is not None
        assert first.moves[-1] == "Nd5" and first.fens == (None,) * 4 + (_jumped(),)
        # The next move: the file's position is the new one; the feed remembers ply 5's.
        after: dict[str, Any] = {
            "chess960": 518,
            "moves": ["e4", "e5", "Nf3", "Nc6", "Nd5", "Nf6", "Nxf6+"],
            "fen": "r1bqkb1r/pppp1ppp/2n2N2/4p3/4P3/8/PPPP1PPP/RNBQKB1R b KQkq - 0 4",
        }
        srv.docs["round-1/game-1.json"] = after
        await sink.wait_for(
            lambda: [s for s in sink.snapshots if s.board == 1][-1].tokens[-1] == "Nxf6+"
        )
    finally:
        await cancel(task)
        await srv.server.stop()
    snaps = [s for s in sink.snapshots if s.board == 1]
    last = snaps[-1]
    assert last.moves[:4] == tuple(BEFORE) and last.tokens[4:] == ("Nd5", "Nf6", "Nxf6+")
    assert last.fens[4] == _jumped()
    # The game state goes on from the reported position through every poll.
    t = BoardRegistry(PAPER_ENGINE_RATING)
    for s in snaps:
        applied = t.apply(s)
    assert applied.board_id is not None
    g = t.board(applied.board_id)
    assert g.sans == [*BEFORE, "Nd5", "Nf6", "Nxf6+"] and g.irregular
    assert [m.ply for m in g.illegal_plies if m.stood] == [5] and g.errors == 1


def test_lcc_players_fide_ids_carry_to_player_keys() -> None:
    from livegain.core.snapshot import player_key
    from livegain.feeds.lcc_json import player_info

    p = player_info(_player("Praggnanandhaa", "R", 25059530))
    assert player_key(p) == "fide:25059530"
