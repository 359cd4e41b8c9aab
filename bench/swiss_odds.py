"""Cost of the odds of winning a Swiss and a team event to the last round, and
the effect of the batch pairing on the odds (prints figures, asserts nothing).

Scenarios:

* **150-player 9-round Swiss from round 3** (ratings 2650 down to 1458):
  rounds 1-2 paired with livegain.core.swiss_pairing and played from the
  ratings (seeded), round 3 paired the same way with 25 games finished, 25 in
  progress (live W/D/L) and 25 not started; ``swiss_win_odds`` simulates
  rounds 4-9 (top 3, tie-breaks BH-C1, BH, SB).
* **180-team 11-round Olympiad from round 5** (teams of 5, 4 boards, match
  points 2/1/0; mean ratings of the teams from 2700 down to 1600, each
  team's players 120 points apart from first to last): rounds 1-4 paired
  with ``pair_round_batch`` (``teams=True``) on match points and played board
  by board, round 5 paired the same way with 30 matches finished, 40 with
  boards 1-2 finished, board 3 in progress and board 4 not started, 20 not
  started;
  ``team_win_odds`` simulates rounds 6-11 (top 3, OSB, GP, BH-C1).

For each, timed as the service computes it: chunks of 2,000 simulations
until every chance of first place has a standard error of at most ``--se``
(0.005), at most 10,000 (``precision`` and ``sims`` of an ``[[events]]``
entry). The baseline,
measured in the same run: ``win_odds`` on the 14-player round robin of
bench/tournament_odds.py (100,000 simulations, tie-breaks DE, SB, WIN).

The effect on the odds: ``pairing="batch"`` against ``pairing="dutch"`` on
the 150-player scenario and on the Qatar Masters 2024 after round 4
(../shared/data/events/swiss/qatar-masters-open-2024.pgn, skipped when
absent): max and mean absolute difference of p(first) and p(top 3), and the
top 5 side by side.

Run: .venv/bin/python bench/swiss_odds.py     (--dutch-sims, --batch-sims, --se)
"""

from __future__ import annotations

import argparse
import math
import os
import random
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import tournament_odds as rr  # bench/tournament_odds.py

from livegain.core.event_table import SWISS_SIMS
from livegain.core.odds import game_probabilities
from livegain.core.standings import Result
from livegain.core.swiss_batch import pair_round_batch
from livegain.core.swiss_odds import Chances, SwissChance, swiss_win_odds
from livegain.core.swiss_pairing import Entrant, pair_round
from livegain.core.team_odds import team_win_odds
from livegain.core.tournament_odds import InProgress, win_odds

N = 150
ROUNDS = 9
PLAYERS = [f"S{k:03d}" for k in range(1, N + 1)]
RATINGS = {p: 2650.0 - 8.0 * k for k, p in enumerate(PLAYERS)}

TEAMS = 180
TEAM_ROUNDS = 11
TEAM_ROUND = 5
BOARDS = 4
TEAM_NAMES = [f"T{k:03d}" for k in range(1, TEAMS + 1)]
TEAM_OF = {f"{t}.{j}": t for t in TEAM_NAMES for j in range(1, 6)}
TEAM_RATINGS = {
    f"{t}.{j}": round(2700.0 - 1100.0 * k / (TEAMS - 1) + 60.0 - 30.0 * (j - 1))
    for k, t in enumerate(TEAM_NAMES)
    for j in range(1, 6)
}
QATAR = (
    Path(__file__).resolve().parents[1] / "../shared/data/events/swiss/qatar-masters-open-2024.pgn"
)


def draw(rng: random.Random, ratings: Mapping[str, float], white: str, black: str) -> str:
    g = game_probabilities(ratings[white] - ratings[black], 0.5)
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
            results += [Result.game(w, b, draw(rng, RATINGS, w, b), rnd) for w, b in pairing.games]
            continue
        games = list(pairing.games)
        finished = [Result.game(w, b, draw(rng, RATINGS, w, b), 3) for w, b in games[:25]]
        live: list[InProgress] = [(w, b, (0.35, 0.45, 0.20)) for w, b in games[25:50]]
        return results + finished, live, games[50:]
    raise AssertionError("unreachable")


def olympiad() -> tuple[list[Result], list[InProgress], list[tuple[str, str]]]:
    """Rounds 1-4 and round 5 in progress of the synthetic Olympiad."""
    rng = random.Random(180)
    lineup = {
        t: sorted((p for p, x in TEAM_OF.items() if x == t), key=lambda p: -TEAM_RATINGS[p])[
            :BOARDS
        ]
        for t in TEAM_NAMES
    }
    mp = dict.fromkeys(TEAM_NAMES, 0.0)
    colours = {t: "" for t in TEAM_NAMES}
    met: list[tuple[str, str]] = []
    finished: list[Result] = []
    for rnd in range(1, TEAM_ROUND + 1):
        entrants = [Entrant(t, mp[t], colours[t]) for t in TEAM_NAMES]
        pairs = pair_round_batch(entrants, met, teams=True).games
        live: list[InProgress] = []
        upcoming: list[tuple[str, str]] = []
        for m, (ta, tb) in enumerate(pairs):
            colours[ta] += "W"
            colours[tb] += "B"
            met.append((ta, tb))
            score = 0.0
            for k in range(BOARDS):
                a, b = lineup[ta][k], lineup[tb][k]
                w, bl = (a, b) if k % 2 == 0 else (b, a)
                state = "done"
                if rnd == TEAM_ROUND:
                    state = "done" if m < 30 or (m < 70 and k < 2) else "live"
                    state = "later" if m >= 70 or (m >= 30 and k == 3) else state
                if state == "live":
                    live.append((w, bl, (0.30, 0.50, 0.20)))
                elif state == "later":
                    upcoming.append((w, bl))
                else:
                    res = Result.game(w, bl, draw(rng, TEAM_RATINGS, w, bl), rnd)
                    finished.append(res)
                    score += res.white_points if w == a else res.black_points
            if rnd < TEAM_ROUND:
                diff = score - BOARDS / 2
                mp[ta] += 2.0 if diff > 0 else 1.0 if diff == 0 else 0.0
                mp[tb] += 2.0 if diff < 0 else 1.0 if diff == 0 else 0.0
        if rnd == TEAM_ROUND:
            return finished, live, upcoming
    raise AssertionError("unreachable")


def leader(odds: Mapping[str, SwissChance]) -> str:
    return max(odds, key=lambda p: odds[p].p_first)


def to_target(name: str, run: Callable[[int, float | None], Chances], se: float) -> float:
    """The odds as the service computes them, timed: chunks of simulations
    until every chance of first place has a standard error of ``se`` or
    less (at most :data:`SWISS_SIMS`); returns simulations/s."""
    t0 = time.perf_counter()
    odds = run(SWISS_SIMS, se)
    took = time.perf_counter() - t0
    lead = leader(odds)
    c = odds[lead]
    print(
        f"  {name}: {odds.sims:,} simulations (precision {se}) in {took:.2f} s"
        f" ({odds.sims / took:,.0f} simulations/s); leader {lead} p(first) {c.p_first:.3f}"
        f" ± {c.se_first:.4f}, p(top 3) {c.p_top:.3f} ± {c.se_top:.4f}"
    )
    return odds.sims / took


def effect(
    title: str,
    run: Callable[[str, int], dict[str, SwissChance]],
    batch_sims: int,
    dutch_sims: int,
) -> None:
    t0 = time.perf_counter()
    batch = run("batch", batch_sims)
    t1 = time.perf_counter()
    dutch = run("dutch", dutch_sims)
    t2 = time.perf_counter()
    print(
        f"{title}: batch {batch_sims:,} simulations ({t1 - t0:.1f} s),"
        f" dutch {dutch_sims:,} ({t2 - t1:.1f} s)"
    )
    for label, get, err in (
        ("p(first)", lambda c: c.p_first, lambda c: c.se_first),
        ("p(top 3)", lambda c: c.p_top, lambda c: c.se_top),
    ):
        diffs = [abs(get(batch[p]) - get(dutch[p])) for p in batch]
        worst = max(batch, key=lambda p: abs(get(batch[p]) - get(dutch[p])))
        z = abs(get(batch[worst]) - get(dutch[worst])) / max(
            1e-12, math.hypot(err(batch[worst]), err(dutch[worst]))
        )
        print(
            f"  {label}: max |batch - dutch| {max(diffs):.4f} ({worst}, {z:.1f} standard errors),"
            f" mean {sum(diffs) / len(diffs):.5f}"
        )
    print(
        "  top 5 (by batch p(first)):  batch p(first)   dutch p(first)"
        "   batch p(top 3)   dutch p(top 3)"
    )
    for p in sorted(batch, key=lambda p: -batch[p].p_first)[:5]:
        b, d = batch[p], dutch[p]
        print(
            f"    {p:>28}  {b.p_first:.3f} ± {b.se_first:.3f}   {d.p_first:.3f} ± {d.se_first:.3f}"
            f"   {b.p_top:.3f} ± {b.se_top:.3f}   {d.p_top:.3f} ± {d.se_top:.3f}"
        )


def qatar_run() -> Callable[[str, int], dict[str, SwissChance]] | None:
    if not QATAR.exists():
        print(f"Qatar Masters 2024: {QATAR} absent, skipped")
        return None
    from livegain.batch.backtest import estimated_ratings, read_event

    games = [g for g in read_event(QATAR).games if g.round <= 4]
    ratings = estimated_ratings(read_event(QATAR).games).ratings
    players = sorted(ratings)
    finished = [Result.game(g.white, g.black, g.result, g.round) for g in games]

    def run(pairing: str, sims: int) -> dict[str, SwissChance]:
        return swiss_win_odds(
            players,
            ratings,
            finished,
            round=4,
            rounds_total=9,
            sims=sims,
            seed=4,
            top_k=3,
            pairing="batch" if pairing == "batch" else "dutch",
        )

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--se", type=float, default=0.005)
    parser.add_argument("--batch-sims", type=int, default=10_000)
    parser.add_argument("--dutch-sims", type=int, default=2_000)
    parser.add_argument("--no-effect", action="store_true", help="timings only")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} (2 cores)")

    finished, live, upcoming = scenario()
    print(
        f"{N}-player {ROUNDS}-round Swiss from round 3: {len(finished)} results so far, "
        f"{len(live)} games in progress, {len(upcoming)} not started; rounds 4-{ROUNDS} simulated"
    )

    def swiss(pairing: str, sims: int, precision: float | None = None) -> Chances:
        return swiss_win_odds(
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
            pairing="batch" if pairing == "batch" else "dutch",
            precision=precision,
        )

    swiss_rate = to_target("swiss_win_odds", lambda s, se: swiss("batch", s, se), args.se)

    t_done, t_live, t_up = olympiad()
    print(
        f"{TEAMS}-team {TEAM_ROUNDS}-round Olympiad ({BOARDS} boards, match points 2/1/0) from"
        f" round {TEAM_ROUND}: {len(t_done)} board results so far, {len(t_live)} boards in"
        f" progress, {len(t_up)} not started; rounds {TEAM_ROUND + 1}-{TEAM_ROUNDS} simulated"
    )

    def teams(sims: int, precision: float | None) -> Chances:
        return team_win_odds(
            TEAM_OF,
            TEAM_RATINGS,
            t_done,
            t_live,
            t_up,
            round=TEAM_ROUND,
            rounds_total=TEAM_ROUNDS,
            boards=BOARDS,
            sims=sims,
            seed=1,
            top_k=3,
            precision=precision,
        )

    team_rate = to_target("team_win_odds", teams, args.se)

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
        f"best {min(times):.3f} s of 3 ({rate_rr:,.0f} simulations/s)"
    )
    print(
        f"  simulations/s against the baseline: Swiss {swiss_rate / rate_rr:.5f},"
        f" Olympiad {team_rate / rate_rr:.5f}"
    )
    if args.no_effect:
        return
    print()
    effect(
        f"Effect of the pairing, {N}-player Swiss from round 3",
        swiss,
        args.batch_sims,
        args.dutch_sims,
    )
    qatar = qatar_run()
    if qatar is not None:
        effect(
            "Effect of the pairing, Qatar Masters 2024 after round 4 (138 players, rounds 5-9)",
            qatar,
            args.batch_sims,
            args.dutch_sims,
        )
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
