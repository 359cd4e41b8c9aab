"""Coverage of the per-game 95 % interval (Wilson, with and without the
effective-size correction) on simulated games whose moves are dependent.

Per-move scores against the engine: a hidden "bad spell" state persists from
one move to the next with probability ``stay`` (0: independent moves); in a bad
spell the move loses (score 0), otherwise it keeps the evaluation (1/2, 75 %)
or gains (1). Prints figures, asserts nothing.
Run: .venv/bin/python bench/interval_coverage.py
"""

from __future__ import annotations

import random

from livegain.core.rating import effective_moves, lag1_autocorrelation, wilson_interval


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


def main() -> None:
    print("stay  moves  true p  coverage(Wilson, n)  coverage(Wilson, n_eff)")
    for stay in (0.0, 0.5, 0.8):
        for n in (10, 40, 100):
            true_p, plain, corrected = coverage(n, stay, trials=4000, seed=1)
            print(f"{stay:4.1f}  {n:5d}  {true_p:6.3f}  {plain:19.3f}  {corrected:23.3f}")


if __name__ == "__main__":
    main()
