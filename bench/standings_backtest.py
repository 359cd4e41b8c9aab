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

With ``--human``, the same forecasts again with the human W/D/L model
(``livegain.core.human_wdl``, classical over the board, the model of the
engine at ``--depth``): games not started (and rating play-offs) from its
ratings-only prior, games in progress from its live W/D/L of the same
evaluation, beside the engine's W/D/L and seed 000's draw rate.

Run: .venv/bin/python bench/standings_backtest.py [--pgn FILE] [--draw-rates 0.5,0.6]
        [--live-ply 60 --depth 12 [--cache /tmp/evals.sqlite]] [--human [--wdl-models PATH]]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from livegain.batch.backtest import (
    Backtest,
    Event,
    backtest_mid_round,
    backtest_win_odds,
    read_event,
)
from livegain.core.evaluation import Evaluation
from livegain.core.human_wdl import CLASSICAL_OTB, HumanWdlModel, RatingsPrior
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
    ap.add_argument("--cache", default=None, help="SQLite evaluation cache of the live positions")
    ap.add_argument("--human", action="store_true", help="also with the human W/D/L model")
    ap.add_argument("--wdl-models", default=None, help="W/D/L model file (default: shipped)")
    args = ap.parse_args()
    if not args.pgn.exists():
        print(f"skipped: {args.pgn} not present (the shared data beside the checkout)")
        return
    event = read_event(args.pgn)
    tiebreaks = tuple(t for t in args.tiebreaks.split(",") if t)
    playoff: Playoff = args.playoff
    human = human_model(args) if args.human else None
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
        print_rounds(args, event, bt, f"draw rate {draw_rate}", tiebreaks, playoff, elapsed)
        if args.live_ply is not None:
            mid_round(args, event, draw_rate, tiebreaks, playoff, None)
    if human is not None:
        _model, prior, why = human
        print(f"human W/D/L: {why}")
        start = time.perf_counter()
        bt = backtest_win_odds(
            event.games,
            sims=args.sims,
            seed=args.seed,
            tiebreaks=tiebreaks,
            playoff=playoff,
            prior=prior,
        )
        elapsed = time.perf_counter() - start
        label = (
            f"human prior ({prior.kind}, White +{prior.white_advantage:g}, spread {prior.scale:g})"
        )
        print_rounds(args, event, bt, label, tiebreaks, playoff, elapsed)
        if args.live_ply is not None:
            mid_round(args, event, DEFAULT_DRAW_RATE, tiebreaks, playoff, human)


def human_model(args: argparse.Namespace) -> tuple[HumanWdlModel | None, RatingsPrior, str] | None:
    """(the live model of the engine at --depth, the classical prior, why), or
    None (and a line) without a model file."""
    from livegain.models.wdl import load_wdl_file, pick_wdl_model

    engine = engine_name(args.engine)
    model, why = pick_wdl_model(
        "engine", CLASSICAL_OTB, engine, f"depth {args.depth}", args.wdl_models
    )
    priors = load_wdl_file(args.wdl_models)[0] if model is None else [model.prior]
    prior = next((p for p in priors if p.kind == CLASSICAL_OTB), None)
    if prior is None:
        print(f"human W/D/L skipped: no {CLASSICAL_OTB} prior ({why})")
        return None
    return model, prior, f"{why}; prior {prior.kind} {dict(prior.provenance)}"


def engine_name(path: str) -> str:
    """The engine's UCI name (``id name``)."""
    import chess.engine

    engine = chess.engine.SimpleEngine.popen_uci(path)
    try:
        return str(engine.id.get("name", path))
    finally:
        engine.quit()


def print_rounds(
    args: argparse.Namespace,
    event: Event,
    bt: Backtest,
    label: str,
    tiebreaks: tuple[str, ...],
    playoff: Playoff,
    elapsed: float,
) -> None:
    winner = event.names[bt.winner]
    print(
        f"{args.pgn.name}: {len(event.games)} games, {bt.players} players; winner {winner};"
        f" {label}; tie-breaks {', '.join(tiebreaks) or 'none'};"
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


def live_evaluations(
    pgn: Path, ply: int, depth: int, engine: str, cache: str | None = None
) -> dict[int, Evaluation | None]:
    """Per game of the file (in order): the engine's evaluation (with its
    W/D/L, White's view) of the position after ``ply``, or None for a game
    over by then."""
    import asyncio

    import chess.pgn

    from livegain.engine.cache import EvalCache
    from livegain.engine.pool import EnginePool
    from livegain.engine.search import SearchLimit

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

    async def run() -> dict[int, Evaluation | None]:
        out: dict[int, Evaluation | None] = dict.fromkeys(range(count))
        store = EvalCache(cache) if cache is not None else None
        try:
            async with EnginePool(engine, limit=SearchLimit(depth=depth), cache=store) as pool:
                evs = await asyncio.gather(*(pool.evaluate(b) for b in boards.values()))  # type: ignore[arg-type]
        finally:
            if store is not None:
                store.close()
        for i, ev in zip(boards, evs, strict=True):
            assert ev.wdl is not None
            out[i] = ev
        return out

    return asyncio.run(run())


def mid_round(
    args: argparse.Namespace,
    event: Event,
    draw_rate: float,
    tiebreaks: tuple[str, ...],
    playoff: Playoff,
    human: tuple[HumanWdlModel | None, RatingsPrior, str] | None,
) -> None:
    start = time.perf_counter()
    evs = live_evaluations(args.pgn, args.live_ply, args.depth, args.engine, args.cache)
    ply = args.live_ply
    live: dict[int, tuple[float, float, float] | None] = {}
    for i, ev in evs.items():
        if ev is None:
            live[i] = None
        elif human is None:
            assert ev.wdl is not None
            live[i] = (float(ev.wdl[0]), float(ev.wdl[1]), float(ev.wdl[2]))
        else:
            model, prior, _why = human
            g = event.games[i]
            if model is None:  # no live model for this engine: the prior alone
                w, d, lo = prior.probabilities(g.white_elo, g.black_elo)
            else:
                w, d, lo = (x / 1000.0 for x in model.wdl(ev, ply, g.white_elo, g.black_elo))
            live[i] = (w, d, lo)
    extra: dict[str, Any] = {} if human is None else {"prior": human[1]}
    winner, rows = backtest_mid_round(
        event.games,
        live,
        sims=args.sims,
        seed=args.seed,
        draw_rate=draw_rate,
        tiebreaks=tiebreaks,
        playoff=playoff,
        **extra,
    )
    what = (
        f"engine's W/D/L, draw rate {draw_rate}"
        if human is None
        else f"human W/D/L ({'prior only' if human[0] is None else human[0].name}) and prior"
    )
    print(
        f"mid-round, after ply {ply} of each game, Stockfish depth {args.depth}, {what}"
        f" ({time.perf_counter() - start:.1f} s in all); winner {event.names[winner]}"
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
