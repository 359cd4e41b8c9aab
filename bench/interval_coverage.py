"""Coverage of the 95 % intervals on simulated games whose moves are dependent.

Part 1, one game: Wilson with n moves, and with the effective size n_eff.
Part 2, a player's aggregate over several games whose true strength varies from
game to game: Wilson over the summed n_eff, the percentile bootstrap over
games, the cluster-robust t-interval over games, and the union of the last and
Wilson (livegain's default).

Per-move scores against the engine: a hidden "bad spell" state persists from
one move to the next with probability ``stay`` (0: independent moves); in a bad
spell the move loses (score 0), otherwise it keeps the evaluation (1/2, 75 %)
or gains (1). Prints figures, asserts nothing.
Run: .venv/bin/python bench/interval_coverage.py
"""

from __future__ import annotations

import random

from livegain.core.rating import (
    bootstrap_p_interval,
    cluster_p_interval,
    effective_moves,
    lag1_autocorrelation,
    wilson_interval,
)


def sequence(rng: random.Random, n: int, stay: float, p_bad: float = 0.5) -> list[float]:
    out = []
    bad = rng.random() < p_bad
    for _ in range(n):
        if rng.random() >= stay:
            bad = rng.random() < p_bad
        out.append(0.0 if bad else (0.5 if rng.random() < 0.75 else 1.0))
    return out


def coverage(n: int, stay: float, trials: int, seed: int) -> tuple[float, float, float]:
    rng = random.Random(seed)
    long = sequence(rng, 400_000, stay)
    true_p = sum(long) / len(long)
    plain = corrected = 0
    for _ in range(trials):
        xs = sequence(rng, n, stay)
        p = sum(xs) / n
        lo, hi = wilson_interval(p, n)
        plain += lo <= true_p <= hi
        lo, hi = wilson_interval(p, effective_moves(n, lag1_autocorrelation(xs)))
        corrected += lo <= true_p <= hi
    return true_p, plain / trials, corrected / trials


def aggregate_coverage(
    games: int, spread: float, stay: float, trials: int, seed: int
) -> dict[str, float]:
    """Each game's p_bad is 0.5 +/- spread (uniform), so the expected p is 0.3125."""
    rng = random.Random(seed)
    hits = {"wilson": 0, "bootstrap": 0, "cluster": 0, "union": 0}
    for _ in range(trials):
        gs = [
            sequence(rng, rng.randint(20, 60), stay, 0.5 + rng.uniform(-spread, spread))
            for _ in range(games)
        ]
        scores = [sum(g) for g in gs]
        moves = [len(g) for g in gs]
        p = sum(scores) / sum(moves)
        n_eff = sum(effective_moves(len(g), lag1_autocorrelation(g)) for g in gs)
        wi = wilson_interval(p, n_eff)
        ct = cluster_p_interval(scores, moves)
        intervals = {
            "wilson": wi,
            "bootstrap": bootstrap_p_interval(scores, moves, samples=1000, seed=0),
            "cluster": ct,
            "union": (min(wi[0], ct[0]), max(wi[1], ct[1])),
        }
        for name, (lo, hi) in intervals.items():
            hits[name] += lo <= 0.3125 <= hi
    return {name: h / trials for name, h in hits.items()}


def main() -> None:
    print("One game")
    print("stay  moves  true p  coverage(Wilson, n)  coverage(Wilson, n_eff)")
    for stay in (0.0, 0.5, 0.8):
        for n in (10, 40, 100):
            true_p, plain, corrected = coverage(n, stay, trials=4000, seed=1)
            print(f"{stay:4.1f}  {n:5d}  {true_p:6.3f}  {plain:19.3f}  {corrected:23.3f}")
    print("Several games (20-60 moves each, stay 0.5, 1000 players per row)")
    print("spread  games  Wilson(n_eff)  bootstrap  cluster-t  cluster-t+Wilson")
    for spread in (0.0, 0.15, 0.35):
        for games in (2, 5, 8, 13, 30):
            c = aggregate_coverage(games, spread, 0.5, trials=1000, seed=2)
            print(
                f"{spread:6.2f}  {games:5d}  {c['wilson']:13.3f}  {c['bootstrap']:9.3f}  "
                f"{c['cluster']:9.3f}  {c['union']:16.3f}"
            )


if __name__ == "__main__":
    main()
