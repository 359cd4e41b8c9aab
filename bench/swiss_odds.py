"""Cost of the Swiss simulation to the last round (prints figures, asserts nothing).

A synthetic 150-player, 9-round Swiss (ratings 2650 down to 1450): rounds 1-2
paired with livegain.core.swiss_pairing and played from the ratings (seeded),
round 3 paired the same way with 25 games finished, 25 in progress (live
W/D/L) and 25 not started. Times ``swiss_win_odds`` from round 3 (rounds 4-9
simulated, pairings included) with 2,000 and 10,000 simulations, and, in the
same run, the baseline: ``win_odds`` on the 14-player round robin of
bench/tournament_odds.py (100,000 simulations, tie-breaks DE, SB, WIN).

Run: .venv/bin/python bench/swiss_odds.py
"""

from __future__ import annotations

import argparse
import random
import time

import tournament_odds as rr  # bench/tournament_odds.py

from livegain.core.odds import game_probabilities
from livegain.core.standings import Result
from livegain.core.swiss_odds import swiss_win_odds
from livegain.core.swiss_pairing import Entrant, pair_round
from livegain.core.tournament_odds import InProgress, win_odds

N = 150
ROUNDS = 9
PLAYERS = [f"S{k:03d}" for k in range(1, N + 1)]
RATINGS = {p: 2650.0 - 8.0 * k for k, p in enumerate(PLAYERS)}


def play(rng: random.Random, white: str, black: str) -> str:
    g = game_probabilities(RATINGS[white] - RATINGS[black], 0.5)
    u = rng.random()
    return "1-0" if u < g.win else "1/2-1/2" if u < g.win + g.draw else "0-1"


def scenario() -> tuple[list[Result], list[InProgress], list[tuple[str, str]]]:
    rng = random.Random(150)
    results: list[Result] = []
    for rnd in (1, 2, 3):
        points = dict.fromkeys(PLAYERS, 0.0)
        colours = {p: ["-"] * (rnd - 1) for p in PLAYERS}
        met = []
        for r in results:
            points[r.white] += r.white_points
            if r.black is not None:
                points[r.black] += r.black_points
                met.append((r.white, r.black))
                assert r.round is not None
                colours[r.white][r.round - 1] = "W"
                colours[r.black][r.round - 1] = "B"
        entrants = [Entrant(p, points[p], "".join(colours[p])) for p in PLAYERS]
        pairing = pair_round(entrants, met)
        if rnd < 3:
            results += [Result.game(w, b, play(rng, w, b), rnd) for w, b in pairing.games]
            continue
        games = list(pairing.games)
        finished = [Result.game(w, b, play(rng, w, b), 3) for w, b in games[:25]]
        live: list[InProgress] = [(w, b, (0.35, 0.45, 0.20)) for w, b in games[25:50]]
        return results + finished, live, games[50:]
    raise AssertionError("unreachable")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sims", default="2000,10000")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    finished, live, upcoming = scenario()
    print(
        f"{N}-player {ROUNDS}-round Swiss from round 3: {len(finished)} results so far, "
        f"{len(live)} games in progress, {len(upcoming)} not started; rounds 4-{ROUNDS} simulated"
    )
    for sims in (int(x) for x in args.sims.split(",")):
        times = []
        odds = {}
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            odds = swiss_win_odds(
                PLAYERS,
                RATINGS,
                finished,
                live,
                upcoming,
                round=3,
                rounds_total=ROUNDS,
                sims=sims,
                seed=1,
                top_k=3,
            )
            times.append(time.perf_counter() - t0)
        best = min(times)
        leader = max(odds, key=lambda p: odds[p].p_first)
        c = odds[leader]
        print(
            f"  {sims:,} simulations (tie-breaks BH-C1, BH, SB; top 3): best {best:.2f} s of "
            f"{len(times)} ({sims / best:,.0f} simulations/s); leader {leader} "
            f"p(first) {c.p_first:.3f} ± {c.se_first:.3f}, p(top 3) {c.p_top:.3f} ± {c.se_top:.3f}"
        )
    rr_finished, rr_live, rr_upcoming = rr.scenario()
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        win_odds(
            rr.PLAYERS,
            rr.RATINGS,
            rr_finished,
            rr_live,
            rr_upcoming,
            sims=100_000,
            seed=1,
            tiebreaks=("DE", "SB", "WIN"),
        )
        times.append(time.perf_counter() - t0)
    rate_rr = 100_000 / min(times)
    print(
        f"baseline win_odds, 14-player round robin, 100,000 simulations (DE, SB, WIN): "
        f"best {min(times):.3f} s ({rate_rr:,.0f} simulations/s)"
    )
    print(
        f"  Swiss simulations/s at {sims:,} / round-robin simulations/s: "
        f"{sims / best / rate_rr:.5f}"
    )


if __name__ == "__main__":
    main()
