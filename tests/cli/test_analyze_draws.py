"""Positions drawn by rule score the same in `livegain analyze` as on a live
board: 0, from the game's history, never asked of the engine."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from livegain.cli import main
from livegain.core.board.registry import BoardRegistry
from livegain.core.snapshot import GameSnapshot, PlayerInfo
from livegain.engine.pool import EnginePool
from livegain.engine.search import SearchLimit

DEPTH = 6

# (start FEN or None, moves, plies drawn by rule)
GAMES: list[tuple[str | None, list[str], set[int]]] = [
    # The start position for the third time at ply 8; then play goes on.
    (None, ["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1", "Ng8", "e4", "e5"], {8}),
    # The 100th ply without a capture or pawn move, until ...f6.
    ("8/5p2/4k3/8/8/4K3/8/7R w - - 99 80", ["Rh2", "Kd6", "Rh6+", "f6", "Rh1"], {1, 2, 3}),
    # K+B against K from the capture on.
    ("4k3/8/8/8/8/8/3r4/2B1K3 w - - 0 1", ["Kxd2", "Ke7", "Ke3", "Kd6"], {1, 2, 3, 4}),
]


def pgn_text() -> str:
    out = []
    for i, (fen, moves, _) in enumerate(GAMES, start=1):
        tags = {"Event": "Draws", "Round": "1", "White": f"White {i}", "Black": f"Black {i}"}
        if fen is not None:
            tags |= {"SetUp": "1", "FEN": fen}
        head = "\n".join(f'[{k} "{v}"]' for k, v in tags.items())
        out.append(f'{head}\n[Result "*"]\n\n{" ".join(moves)} *\n')
    return "\n".join(out)


async def live(
    stockfish: str,
) -> tuple[list[list[int]], list[list[int | None]], set[tuple[int, int]]]:
    """Every game on a live board, each missing position evaluated by a real pool."""
    t = BoardRegistry(2860.0)
    ids = []
    for i, (fen, moves, _) in enumerate(GAMES, start=1):
        snap = GameSnapshot(
            source="test",
            white=PlayerInfo(f"White {i}"),
            black=PlayerInfo(f"Black {i}"),
            moves=tuple(moves),
            round="1",
            board=i,
            initial_fen=fen,
        )
        a = t.apply(snap)
        assert a.board_id is not None and a.errors == ()
        ids.append(a.board_id)
    asked: set[tuple[int, int]] = set()
    async with EnginePool(stockfish, workers=1, limit=SearchLimit(depth=DEPTH)) as pool:
        while reqs := t.pending():
            for r in reqs:
                asked.add((ids.index(r.board_id), r.ply))
                ev = await pool.evaluate(r.board(), priority=r.priority)
                t.record_eval(r.board_id, r.ply, r.fen, ev)
    scores, gains = [], []
    for bid in ids:
        g = t.board(bid)
        evs = [g.eval_at(k) for k in range(g.plies + 1)]
        assert all(ev is not None for ev in evs)
        scores.append([ev.cp for ev in evs if ev is not None])
        gains.append([m.gain for m in g.moves()])
    return scores, gains, asked


@pytest.mark.engine
def test_drawn_positions_score_alike_live_and_in_analyze(
    stockfish: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pgn = tmp_path / "draws.pgn"
    pgn.write_text(pgn_text())
    argv = ["analyze", str(pgn), "--engine", stockfish, "--depth", str(DEPTH), "--workers", "1"]
    code = main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    games = json.loads(out)["games"]
    assert len(games) == len(GAMES)
    batch_scores = [[g["start_score"], *(p["score"] for p in g["plies"])] for g in games]
    batch_gains = [[p["gain"] for p in g["plies"]] for g in games]

    live_scores, live_gains, asked = asyncio.run(live(stockfish))
    assert live_scores == batch_scores
    assert live_gains == batch_gains
    for n, (_, moves, drawn) in enumerate(GAMES):
        scores = live_scores[n]
        assert [k for k in range(len(moves) + 1) if (n, k) not in asked] == sorted(drawn)
        assert all(scores[k] == 0 for k in drawn)
        # The move into a drawn position gives up the mover's score.
        for k in drawn:
            before = scores[k - 1]
            mover_white = k % 2 == 1  # every game here starts with White to move
            assert live_gains[n][k - 1] == (-before if mover_white else before)
