"""Back-test of the tournament-win odds on the Tata Steel Masters 2022 (prints figures).

After each round r = 0..12 of the 14-player round robin, the rating-only odds
of winning the event (``win_odds`` over the games of rounds r+1..13, ratings
from WhiteElo/BlackElo) are scored by the log-loss of the actual winner (taken
from the results), against two naive forecasts: all 14 players alike, and all
players still able to reach the leader's points alike.

With ``--live-ply N``, also the odds in the middle of each round: every game
of the round is stopped after ply N (a game shorter than that is finished by
then: its result counts), its position evaluated by Stockfish (``--depth``,
W/D/L from the engine), and the odds with those live W/D/L are scored against
the rating-only odds at the same moment.

Run: .venv/bin/python bench/standings_backtest.py [--pgn FILE] [--draw-rates 0.5,0.6]
        [--live-ply 60 --depth 12]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from livegain.backtest import backtest_mid_round, backtest_win_odds, read_event
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
    ap.add_argument("--live-ply", type=int, default=None, help="also mid-round, at this ply")
    ap.add_argument("--depth", type=int, default=12, help="engine depth of the live W/D/L")
    ap.add_argument("--engine", default="/usr/games/stockfish")
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
        if args.live_ply is not None:
            mid_round(args, event, draw_rate, tiebreaks, playoff)


def live_wdl(
    pgn: Path, ply: int, depth: int, engine: str
) -> dict[int, tuple[float, float, float] | None]:
    """Per game of the file (in order): the engine's W/D/L (White's view) after
    ``ply``, or None for a game over by then."""
    import asyncio

    import chess.pgn

    from livegain.engine.pool import EnginePool, SearchLimit

    boards: dict[int, object] = {}
    with pgn.open(encoding="utf-8", errors="replace") as handle:
        i = 0
        while (game := chess.pgn.read_game(handle)) is not None:
            moves = list(game.mainline_moves())
            if len(moves) > ply:
                board = game.board()
                for move in moves[:ply]:
                    board.push(move)
                boards[i] = board
            i += 1
        count = i

    async def run() -> dict[int, tuple[float, float, float] | None]:
        out: dict[int, tuple[float, float, float] | None] = dict.fromkeys(range(count))
        async with EnginePool(engine, limit=SearchLimit(depth=depth)) as pool:
            evs = await asyncio.gather(*(pool.evaluate(b) for b in boards.values()))  # type: ignore[arg-type]
        for i, ev in zip(boards, evs, strict=True):
            assert ev.wdl is not None
            out[i] = (float(ev.wdl[0]), float(ev.wdl[1]), float(ev.wdl[2]))
        return out

    return asyncio.run(run())


def mid_round(
    args: argparse.Namespace,
    event: object,
    draw_rate: float,
    tiebreaks: tuple[str, ...],
    playoff: Playoff,
) -> None:
    start = time.perf_counter()
    live = live_wdl(args.pgn, args.live_ply, args.depth, args.engine)
    winner, rows = backtest_mid_round(
        event.games,  # type: ignore[attr-defined]
        live,
        sims=args.sims,
        seed=args.seed,
        draw_rate=draw_rate,
        tiebreaks=tiebreaks,
        playoff=playoff,
    )
    print(
        f"mid-round, after ply {args.live_ply} of each game, Stockfish depth {args.depth}"
        f" ({time.perf_counter() - start:.1f} s in all); winner {event.names[winner]}"  # type: ignore[attr-defined]
    )
    print(
        "| round | in progress | finished | p(winner) live | p(winner) rating-only |"
        " log-loss live | log-loss rating-only |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r.round} | {r.in_progress} | {r.finished_in_round} | {r.p_live:.4f}"
            f" | {r.p_rating:.4f} | {r.log_loss_live:.3f} | {r.log_loss_rating:.3f} |"
        )
    n = len(rows)
    print(
        f"mean log-loss: live {sum(r.log_loss_live for r in rows) / n:.3f},"
        f" rating-only {sum(r.log_loss_rating for r in rows) / n:.3f}"
    )
    print()


if __name__ == "__main__":
    main()
