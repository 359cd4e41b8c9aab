"""A real round (Tata Steel Masters 2022, round 1) relayed live: the live PGN parser's
snapshots, cut to growing prefixes, delivered in a shuffled order with board
numbers reordered and a wrong move corrected, evaluated latest-first. The end
state of every board is that of a clean replay of its final game."""

from __future__ import annotations

import random
import zlib
from dataclasses import replace
from pathlib import Path

from livegain.core.board.registry import BoardRegistry
from livegain.core.evaluation import Evaluation
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.core.snapshot import GameSnapshot
from livegain.feeds.pgn import parse_pgn
from livegain.publish import convert


def ev_of(fen: str) -> Evaluation:
    return Evaluation(cp=zlib.crc32(fen.encode()) % 401 - 200, depth=8)


def finish(t: BoardRegistry) -> None:
    for _ in range(10_000):
        reqs = t.pending()
        if not reqs:
            return
        for r in reqs[:50]:
            t.record_eval(r.board_id, r.ply, r.fen, ev_of(r.fen))
    raise AssertionError("evaluations never finished")


def cut(s: GameSnapshot, plies: int, board: int | None, result: str) -> GameSnapshot:
    return replace(s, moves=s.moves[:plies], clocks=s.clocks[:plies], board=board, result=result)


def test_round_relayed_live_equals_clean_replay(tata_steel: Path) -> None:
    text = tata_steel.read_text(encoding="utf-8")
    games = [g.snapshot for g in parse_pgn(text, source="tata") if g.snapshot is not None]
    finals = [g for g in games if g.round == "1"]
    assert len(finals) == 7 and all(not g.game_id for g in finals)
    rng = random.Random(2022)
    t = BoardRegistry(PAPER_ENGINE_RATING)
    longest = max(len(g.moves) for g in finals)
    truncations = 0
    for plies in range(0, longest + 5, 5):
        order = list(range(7))
        rng.shuffle(order)
        numbers = list(range(1, 8)) if rng.random() < 0.5 else [8 - k for k in range(1, 8)]
        for i in order:
            snap = cut(finals[i], plies, numbers[i], "*")
            if i == 3 and plies == 40:
                # the operator enters a wrong 21st move, fixed at the next poll
                wrong = "h3" if snap.moves[40:41] != ("h3",) else "a3"
                snap = replace(snap, moves=(*snap.moves[:40], wrong))
            applied = t.apply(snap)
            assert applied.errors == ()
            truncations += sum(1 for u in applied.updates if u.kind == "truncate")
        for r in t.pending():
            if r.priority == 0:
                t.record_eval(r.board_id, r.ply, r.fen, ev_of(r.fen))
    for i in range(7):
        t.apply(cut(finals[i], len(finals[i].moves), i + 1, finals[i].result))
    finish(t)

    assert len(t.boards) == 7 and truncations == 1
    for i, final in enumerate(finals):
        ref = BoardRegistry(PAPER_ENGINE_RATING)
        bid = ref.apply(cut(final, len(final.moves), i + 1, final.result)).board_id
        assert bid is not None
        finish(ref)
        # ids were given at first sight, when board numbers may have been the other way round
        live_id = t.match(cut(final, len(final.moves), i + 1, final.result))
        assert live_id is not None
        live = t.board(live_id)
        assert live.sans == list(final.moves) and live.result == final.result
        assert live.errors == 0 and live.board == i + 1
        a = convert.board_state(live, engine="x").model_dump(exclude={"seq", "board_id"})
        b = convert.board_state(ref.board(bid), engine="x").model_dump(exclude={"seq", "board_id"})
        assert a == b
