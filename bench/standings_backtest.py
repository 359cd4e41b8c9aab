"""Back-test of the tournament-win odds on the Tata Steel Masters 2022 (prints figures).

After each round r = 0..12 of the 14-player round robin, the rating-only odds
of winning the event (``win_odds`` over the games of rounds r+1..13, ratings
from WhiteElo/BlackElo) are scored by the log-loss of the actual winner (taken
from the results), against two naive forecasts: all 14 players alike, and all
players still able to reach the leader's points alike.

Run: .venv/bin/python bench/standings_backtest.py [--pgn FILE] [--draw-rates 0.5,0.6]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from livegain.backtest import backtest_win_odds, read_event
from livegain.core.tournament_odds import DEFAULT_DRAW_RATE, PLAYOFFS, Playoff

REPO = Path(__file__).resolve().parent.parent
DEFAULT_PGN = REPO.parent / "shared" / "data" / "tata-steel-masters-2022.pgn"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pgn", type=Path, default=DEFAULT_PGN)
    ap.add_argument("--sims", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--draw-rates", default=str(DEFAULT_DRAW_RATE), help="comma-separated")
    ap.add_argument("--tiebreaks", default="", help="comma-separated (default: none, a play-off)")
    ap.add_argument("--playoff", choices=PLAYOFFS, default="rating")
    args = ap.parse_args()
    if not args.pgn.exists():
        print(f"skipped: {args.pgn} not present (the shared data beside the checkout)")
        return
    event = read_event(args.pgn)
    tiebreaks = tuple(t for t in args.tiebreaks.split(",") if t)
    playoff: Playoff = args.playoff
    for draw_rate in (float(x) for x in args.draw_rates.split(",")):
        start = time.perf_counter()
        bt = backtest_win_odds(
            event.games,
            sims=args.sims,
            seed=args.seed,
            draw_rate=draw_rate,
            tiebreaks=tiebreaks,
            playoff=playoff,
        )
        elapsed = time.perf_counter() - start
        winner = event.names[bt.winner]
        print(
            f"{args.pgn.name}: {len(event.games)} games, {bt.players} players; winner {winner};"
            f" draw rate {draw_rate}; tie-breaks {', '.join(tiebreaks) or 'none'};"
            f" play-off {playoff}; {args.sims:,} simulations a round ({elapsed:.1f} s in all)"
        )
        print(
            "| after round | games left | p(winner) | ± s.e. | log-loss | contenders"
            " | log-loss, contenders alike | favourite (p) |"
        )
        print("|---:|---:|---:|---:|---:|---:|---:|---|")
        for r in bt.rounds:
            print(
                f"| {r.after_round} | {r.games_left} | {r.p_winner:.4f} | {r.stderr:.4f}"
                f" | {r.log_loss:.3f} | {r.contenders} | {r.contenders_log_loss:.3f}"
                f" | {event.names[r.favourite]} ({r.p_favourite:.3f}) |"
            )
        print(
            f"mean log-loss: rating odds {bt.mean_log_loss:.3f}, contenders alike"
            f" {bt.mean_contenders_log_loss:.3f}, all alike (ln {bt.players})"
            f" {bt.uniform_log_loss:.3f}"
        )
        print()


if __name__ == "__main__":
    main()
