"""Cost of the gain/rating core per update (prints figures, asserts nothing).

Baseline, measured in the same run: the literal cross-correlation of seed 002
(dense arrays, `brute_force_expected_score`); for the calibrated perceived
rating with the opening table, the same ledger and model without the table.
Run: .venv/bin/python bench/gain_core.py
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from livegain.core.histogram import GainHistogram, brute_force_expected_score
from livegain.core.ledger import GameLedger
from livegain.core.perceived import PerceivedModel
from livegain.core.rating import head_to_head


def per_call(fn: Callable[[], object], min_seconds: float = 0.3) -> float:
    n = 0
    start = time.perf_counter()
    while True:
        fn()
        n += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return elapsed / n


def gains(rng: random.Random, n: int, blunders: bool = False) -> list[int]:
    """Peaked at 0, skewed to losses; with blunders, a few swings up to a mate (3900)."""
    out = []
    for _ in range(n):
        r = rng.random()
        if blunders and r < 0.03:
            out.append(-rng.randint(300, 3900))
        elif r < 0.35:
            out.append(0)
        elif r < 0.9:
            out.append(-rng.randint(1, 300))
        else:
            out.append(rng.randint(1, 60))
    return out


def main() -> None:
    rng = random.Random(1)
    print("Algorithm 1 (expected score between two players):")
    for moves, blunders in ((41, False), (41, True), (400, True), (4000, True)):
        a = GainHistogram.from_gains(gains(rng, moves, blunders))
        b = GainHistogram.from_gains(gains(rng, moves, blunders))
        span = max(max(a.counts()), max(b.counts())) - min(min(a.counts()), min(b.counts())) + 1
        fast = per_call(lambda a=a, b=b: a.expected_score(b))
        h2h = per_call(lambda a=a, b=b: head_to_head(a, b))
        brute = per_call(lambda a=a, b=b: brute_force_expected_score(a, b))
        print(
            f"  {moves:5d} moves each, {span:4d} bins: sorted counts {fast * 1e6:8.1f} us, "
            f"with interval {h2h * 1e6:8.1f} us, cross-correlation {brute * 1e6:9.1f} us "
            f"(ratio {brute / fast:6.1f}x)"
        )
    print("Algorithm 4 (one ply pushed into a game ledger, perceived rating with interval):")
    for plies in (80, 800):
        scores = [0]
        for g in gains(rng, plies):
            scores.append(max(-3900, min(3900, scores[-1] + g)))

        def replay(scores: list[int] = scores) -> None:
            ledger = GameLedger(2860)
            ledger.set_start(scores[0])
            for s in scores[1:]:
                ledger.push(s)

        per_game = per_call(replay)

        def batch(scores: list[int] = scores) -> None:
            # baseline: rebuild the histogram and recompute p after every ply
            for k in range(1, len(scores)):
                h = GainHistogram.from_gains(
                    [scores[i] - scores[i - 1] for i in range(1, k + 1, 2)] or [0]
                )
                h.expected_score_vs_engine()

        rebuild = per_call(batch)
        print(
            f"  {plies:4d}-ply game: {per_game / plies * 1e6:6.2f} us per ply incremental, "
            f"{rebuild / plies * 1e6:8.2f} us per ply rebuilding (ratio {rebuild / per_game:5.1f}x)"
        )


def opening_cost(rng: random.Random) -> None:
    """A ply pushed into a ledger with the shipped lichess model (the
    calibrated estimate of the mover after every ply), with its opening table
    and without it, on games of random legal moves (the opening's keys read
    the first 12 plies, most of them unknown to the table: the longest
    lookup). Alternated, the fastest of five rounds of each."""
    from dataclasses import replace

    import chess

    from livegain.models.perceived import load_perceived_models

    (model,) = [m for m in load_perceived_models() if m.name == "lichess-rapid/pgn-evals"]
    bare = replace(model, opening=None)
    print("Calibrated perceived rating (one ply pushed, the mover's estimate after it):")
    for plies in (12, 80):
        board = chess.Board()
        moves: list[str] = []
        for _ in range(plies):
            legal = list(board.legal_moves)
            if not legal:
                break
            move = rng.choice(legal)
            moves.append(move.uci())
            board.push(move)
        scores = [0]
        for g in gains(rng, len(moves)):
            scores.append(max(-3900, min(3900, scores[-1] + g)))

        def replay(m: PerceivedModel, moves: list[str] = moves, scores: list[int] = scores) -> None:
            ledger = GameLedger(2860, model=m, opening_moves=())
            ledger.set_start(scores[0])
            for s, uci in zip(scores[1:], moves, strict=True):
                ledger.push(s, move=uci)

        # alternated, the fastest of 5 rounds each (a loaded machine's noise)
        rounds = [
            (per_call(lambda: replay(bare)), per_call(lambda: replay(model))) for _ in range(5)
        ]
        without = min(r[0] for r in rounds)
        with_opening = min(r[1] for r in rounds)
        n = len(moves)
        print(
            f"  {n:4d}-ply game: {without / n * 1e6:6.2f} us per ply without the opening table, "
            f"{with_opening / n * 1e6:6.2f} us with it (ratio {with_opening / without:4.2f}x)"
        )


if __name__ == "__main__":
    main()
    opening_cost(random.Random(2))
