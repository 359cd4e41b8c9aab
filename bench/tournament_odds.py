"""Cost of the tournament-win simulation (prints figures, asserts nothing).

A 14-player round robin (91 games, Berger schedule): rounds 1-6 and three
games of round 7 finished, the four other games of round 7 in progress (live
W/D/L), rounds 8-13 not started: 46 games left. Times ``win_odds`` over
100,000 simulations (best and median of a few runs), and, in the same run, a
baseline: a plain per-simulation Python loop that draws each game with
``random`` and ranks the players with ``Standings.from_results`` (the same
tie-breaks), on fewer simulations; prints both rates, their ratio and how far
apart the two estimates are (in standard errors).

Run: .venv/bin/python bench/tournament_odds.py
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from collections.abc import Sequence

from livegain.core.odds import game_probabilities
from livegain.core.standings import Result, Standings, tiebreak_names
from livegain.core.tournament_odds import InProgress, Playoff, WinChance, win_odds

PLAYERS = [f"P{k:02d}" for k in range(1, 15)]
RATINGS = dict(
    zip(
        PLAYERS,
        [2865, 2772, 2766, 2764, 2763, 2757, 2720, 2714, 2711, 2704, 2700, 2680, 2667, 2622],
        strict=True,
    )
)
DRAW_RATE = 0.5


def berger(players: Sequence[str]) -> list[list[tuple[str, str]]]:
    """Round-robin rounds by the circle method (even number of players)."""
    n = len(players)
    rot = list(players)
    rounds = []
    for r in range(n - 1):
        pairs = []
        for k in range(n // 2):
            a, b = rot[k], rot[n - 1 - k]
            pairs.append((a, b) if (r + k) % 2 == 0 else (b, a))
        rounds.append(pairs)
        rot = [rot[0], rot[-1], *rot[1:-1]]
    return rounds


def outcome(white: str, black: str, u: float) -> str:
    g = game_probabilities(RATINGS[white] - RATINGS[black], DRAW_RATE)
    return "1-0" if u < g.win else "1/2-1/2" if u < g.win + g.draw else "0-1"


def scenario() -> tuple[list[Result], list[InProgress], list[tuple[str, str]]]:
    rng = random.Random(2022)
    rounds = berger(PLAYERS)
    finished = [
        Result.game(w, b, outcome(w, b, rng.random()), r + 1)
        for r, pairs in enumerate(rounds[:6])
        for w, b in pairs
    ]
    finished += [Result.game(w, b, outcome(w, b, rng.random()), 7) for w, b in rounds[6][:3]]
    live_wdl = [(520, 400, 80), (150, 600, 250), (60, 300, 640), (333, 334, 333)]
    in_progress: list[InProgress] = [
        (w, b, wdl) for (w, b), wdl in zip(rounds[6][3:], live_wdl, strict=True)
    ]
    upcoming = [pair for pairs in rounds[7:] for pair in pairs]
    return finished, in_progress, upcoming


def naive(
    finished: list[Result],
    in_progress: list[InProgress],
    upcoming: list[tuple[str, str]],
    sims: int,
    tiebreaks: Sequence[str],
    seed: int,
) -> dict[str, float]:
    """One simulation at a time, plain Python; a tie after tie-breaks is shared."""
    rng = random.Random(seed)
    games: list[tuple[str, str, float, float]] = []
    for w, b, (pw, pd, pl) in in_progress:
        total = pw + pd + pl
        games.append((w, b, pw / total, (pw + pd) / total))
    for w, b in upcoming:
        g = game_probabilities(RATINGS[w] - RATINGS[b], DRAW_RATE)
        games.append((w, b, g.win, g.win + g.draw))
    share = dict.fromkeys(PLAYERS, 0.0)
    for _ in range(sims):
        results = list(finished)
        for w, b, t1, t2 in games:
            u = rng.random()
            results.append(Result.game(w, b, "1-0" if u < t1 else "1/2-1/2" if u < t2 else "0-1"))
        leaders = Standings.from_results(results, tiebreaks, PLAYERS).leaders()
        for p in leaders:
            share[p] += 1.0 / len(leaders)
    return {p: v / sims for p, v in share.items()}


def timed(
    finished: list[Result],
    in_progress: list[InProgress],
    upcoming: list[tuple[str, str]],
    sims: int,
    tiebreaks: Sequence[str],
    playoff: Playoff,
    repeats: int,
) -> tuple[list[float], dict[str, WinChance]]:
    times = []
    odds: dict[str, WinChance] = {}
    for k in range(repeats):
        start = time.perf_counter()
        odds = win_odds(
            PLAYERS,
            RATINGS,
            finished,
            in_progress,
            upcoming,
            sims=sims,
            seed=k,
            tiebreaks=tiebreaks,
            playoff=playoff,
            draw_rate=DRAW_RATE,
        )
        times.append(time.perf_counter() - start)
    return times, odds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sims", type=int, default=100_000)
    ap.add_argument("--baseline-sims", type=int, default=2_000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    finished, in_progress, upcoming = scenario()
    left = len(in_progress) + len(upcoming)
    print(
        f"14-player round robin: {len(finished)} games finished, {len(in_progress)} in progress,"
        f" {len(upcoming)} not started ({left} left); {args.sims:,} simulations"
    )
    configs: list[tuple[tuple[str, ...], Playoff]] = [
        ((), "share"),
        (("DE", "SB", "WIN"), "share"),
        (("DE", "SB", "WIN", "WON", "BH", "BH-C1"), "rating"),
    ]
    win_odds(PLAYERS, RATINGS, finished, in_progress, upcoming, sims=1_000, seed=0)  # warm-up
    best_by: dict[tuple[str, ...], float] = {}
    odds_by: dict[tuple[str, ...], dict[str, WinChance]] = {}
    for tiebreaks, playoff in configs:
        times, odds = timed(
            finished, in_progress, upcoming, args.sims, tiebreaks, playoff, args.repeats
        )
        best, median = min(times), statistics.median(times)
        best_by[tiebreaks], odds_by[tiebreaks] = best, odds
        names = ", ".join(tiebreak_names(tiebreaks)) or "none"
        print(
            f"  tie-breaks {names}; play-off {playoff}: best {best:.3f} s, median {median:.3f} s"
            f" ({args.sims / best:,.0f} simulations/s)"
        )
    tiebreaks = ("DE", "SB", "WIN")
    odds = odds_by[tiebreaks]
    start = time.perf_counter()
    base = naive(finished, in_progress, upcoming, args.baseline_sims, tiebreaks, seed=1)
    base_s = time.perf_counter() - start
    base_rate = args.baseline_sims / base_s
    fast_rate = args.sims / best_by[tiebreaks]
    print(
        f"baseline (per-simulation Python loop, Standings.from_results, tie-breaks DE, SB, WIN):"
        f" {args.baseline_sims:,} simulations in {base_s:.2f} s ({base_rate:,.0f} simulations/s)"
    )
    print(f"  vectorised (best run, same tie-breaks) / baseline: {fast_rate / base_rate:,.0f}x")
    worst = 0.0
    for p in PLAYERS:
        q = odds[p].p  # the baseline's binomial error, from the larger sample
        se = math.sqrt(odds[p].stderr ** 2 + q * (1 - q) / args.baseline_sims)
        if se > 0:
            worst = max(worst, abs(odds[p].p - base[p]) / se)
    print(f"  largest difference between the two estimates: {worst:.1f} standard errors")
    top = sorted(PLAYERS, key=lambda p: -odds[p].p)[:4]
    print(
        "  leaders: "
        + ", ".join(f"{p} {odds[p].p:.3f} ± {odds[p].stderr:.3f} (loop {base[p]:.3f})" for p in top)
    )


if __name__ == "__main__":
    main()
