"""Generated input for the ingest load test and bench: many games, one huge game."""

from __future__ import annotations

import random

import chess

HUGE_BYTES = 1_000_000


def huge_game(size: int = HUGE_BYTES, white: str = "Long, A", black: str = "Long, B") -> str:
    """One legal game of about ``size`` bytes: knights shuffling (~130,000 plies at 1 MB)."""
    head = f'[Event "Huge"]\n[White "{white}"]\n[Black "{black}"]\n[Round "1.1"]\n[Result "*"]\n\n'
    words: list[str] = []
    total = len(head)
    ply = 0
    while total < size - 4:
        word = ("Nf3", "Nf6", "Ng1", "Ng8")[ply % 4]
        if ply % 2 == 0:
            word = f"{ply // 2 + 1}. {word}"
        words.append(word)
        total += len(word) + 1
        ply += 1
    return head + " ".join(words) + " *\n"


def _base_games(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        b = chess.Board()
        words = []
        for i in range(rng.randint(30, 90)):
            moves = list(b.legal_moves)
            if not moves:
                break
            m = rng.choice(moves)
            if i % 2 == 0:
                words.append(f"{i // 2 + 1}.")
            words.append(b.san(m))
            b.push(m)
        out.append(" ".join(words))
    return out


def many_games(n: int = 10_000, seed: int = 7, distinct: int = 50) -> str:
    """``n`` games of 30-90 plies, each with its own players and board number."""
    bases = _base_games(distinct, seed)
    parts = []
    for k in range(1, n + 1):
        parts.append(
            f'[Event "Big Open"]\n[Round "1.{k}"]\n[White "White, {k}"]\n'
            f'[Black "Black, {k}"]\n[Result "*"]\n\n{bases[k % distinct]} *\n'
        )
    return "\n".join(parts)
