"""How much the live game state costs per move, against python-chess alone.

A round of 100 boards of 80 random legal plies is relayed one ply per snapshot
(every poll re-sends the whole game so far, as a PGN relay does), every
position gets an evaluation, and each board's full wire state is built.
Baseline, measured in the same run: python-chess parsing and playing the same
SAN moves once (``Board.parse_san`` + ``push``), which any relay has to do.

    .venv/bin/python bench/game_state.py [--boards 100] [--plies 80]

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import random
import time
import zlib

import chess

from livegain.core.board.registry import BoardRegistry
from livegain.core.evaluation import Evaluation
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.core.snapshot import GameSnapshot, PlayerInfo
from livegain.publish import convert


def random_games(boards: int, plies: int, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    games = []
    for _ in range(boards):
        board, sans = chess.Board(), []
        for _ in range(plies):
            legal = sorted(board.legal_moves, key=lambda m: m.uci())
            if not legal:
                break
            move = rng.choice(legal)
            sans.append(board.san(move))
            board.push(move)
        games.append(sans)
    return games


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", type=int, default=100)
    ap.add_argument("--plies", type=int, default=80)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    games = random_games(args.boards, args.plies, args.seed)
    total = sum(len(g) for g in games)

    t0 = time.perf_counter()
    for sans in games:
        b = chess.Board()
        for san in sans:
            b.push(b.parse_san(san))
    baseline = (time.perf_counter() - t0) / total

    t = BoardRegistry(PAPER_ENGINE_RATING)
    players = [(PlayerInfo(f"White {i}"), PlayerInfo(f"Black {i}")) for i in range(len(games))]
    t0 = time.perf_counter()
    longest = max(len(g) for g in games)
    for k in range(1, longest + 1):
        for i, sans in enumerate(games):
            if k <= len(sans):
                w, b = players[i]
                t.apply(GameSnapshot("bench", w, b, moves=tuple(sans[:k]), round="1", board=i + 1))
    apply_s = (time.perf_counter() - t0) / total

    t0 = time.perf_counter()
    for i, sans in enumerate(games):
        w, b = players[i]
        t.apply(GameSnapshot("bench", w, b, moves=tuple(sans), round="1", board=i + 1))
    dup_s = (time.perf_counter() - t0) / len(games)

    t0 = time.perf_counter()
    evals = 0
    while reqs := t.pending():
        for r in reqs:
            cp = zlib.crc32(r.fen.encode()) % 301 - 150
            t.record_eval(r.board_id, r.ply, r.fen, Evaluation(cp=cp, depth=12))
            evals += 1
    eval_s = (time.perf_counter() - t0) / evals

    t0 = time.perf_counter()
    for _ in range(20):
        t.pending()
    pending_s = (time.perf_counter() - t0) / 20

    t0 = time.perf_counter()
    for g in t.boards.values():
        convert.board_state(g, engine="bench")
    state_s = (time.perf_counter() - t0) / len(t.boards)

    print(f"boards {len(games)}, plies {total}, evaluations {evals}")
    print(f"python-chess parse+push (baseline): {baseline * 1e6:8.1f} us/ply")
    print(
        f"apply (whole game re-sent per ply):  {apply_s * 1e6:8.1f} us/ply"
        f"  ({apply_s / baseline:.1f}x baseline)"
    )
    print(f"apply of an unchanged game (a poll with nothing new): {dup_s * 1e6:.1f} us/board")
    print(
        f"record_eval (gain, ratings, update): {eval_s * 1e6:8.1f} us/eval"
        f"  ({eval_s / baseline:.1f}x baseline)"
    )
    print(f"pending() over all boards, all evaluated: {pending_s * 1e3:.3f} ms")
    print(f"convert.board_state, {total // len(games)}-ply board: {state_s * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
