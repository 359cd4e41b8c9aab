"""`livegain odds`: per-game win/draw/loss and exact match odds.

Sub-commands::

    livegain odds game --rating-a 2834.7 --rating-b 2832.3 --draw-rate 0.6
    livegain odds match --rating-a 2834.7 --rating-b 2832.3 --games 12 --draw-rate 0.6 \\
        [--score-a 3.5 --score-b 2.5] [--current 0.3,0.6,0.1]

``--games`` is the total length of the match; the score so far says how many
games have been played (``score_a + score_b``, each game giving out one point),
so the games left are ``games - score_a - score_b``. ``--current W,D,L`` is the
win/draw/loss of a game in progress (A's view), counted as one of the games left.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from livegain.cli._common import CliError, console, print_json, show
from livegain.core.odds import GameOdds, game_probabilities, match_odds


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "odds",
        help="win/draw/loss of a game and exact odds of a match",
        description="Win/draw/loss of a game and exact odds of a match "
        "(seed 000, exact multinomial).",
    )
    osub = p.add_subparsers(dest="odds_command", metavar="SUBCOMMAND")
    osub.required = True

    g = osub.add_parser("game", help="win/draw/loss of one game")
    _common_args(g)
    g.set_defaults(func=run_game)

    m = osub.add_parser("match", help="probability that A wins, the match is drawn, B wins")
    _common_args(m)
    m.add_argument("--games", type=int, required=True, help="total number of games in the match")
    m.add_argument("--score-a", type=float, default=0.0, help="A's points so far (default 0)")
    m.add_argument("--score-b", type=float, default=0.0, help="B's points so far (default 0)")
    m.add_argument(
        "--current",
        help="W,D,L of a game in progress from A's view (e.g. from the engine); "
        "counted as one of the games left",
    )
    m.set_defaults(func=run_match)


def _common_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rating-a", type=float, required=True, help="rating of player A")
    p.add_argument("--rating-b", type=float, required=True, help="rating of player B")
    p.add_argument(
        "--draw-rate",
        type=float,
        required=True,
        help="probability of a draw in one game, in [0, 1] (seed 000 uses 0.6 at the top level)",
    )
    p.add_argument(
        "--model",
        choices=("logistic", "normal"),
        default="logistic",
        help="expected-score curve (default logistic)",
    )
    p.add_argument("--json", action="store_true", help="print JSON for machines")


def _game(args: argparse.Namespace) -> GameOdds:
    if not (0.0 <= args.draw_rate <= 1.0) or math.isnan(args.draw_rate):
        raise CliError(f"--draw-rate must lie in [0, 1], got {args.draw_rate:g}")
    return game_probabilities(args.rating_a - args.rating_b, args.draw_rate, args.model)


def _game_json(g: GameOdds) -> dict[str, float]:
    return {"win": g.win, "draw": g.draw, "loss": g.loss, "expected": g.expected_score}


def run_game(args: argparse.Namespace) -> int:
    g = _game(args)
    if args.json:
        print_json(
            {
                "rating_a": args.rating_a,
                "rating_b": args.rating_b,
                "draw_rate": args.draw_rate,
                "model": args.model,
                **_game_json(g),
            }
        )
        return 0
    note = "" if g.draw == args.draw_rate else f" (draw rate lowered to {g.draw:.4f})"
    show(
        f"One game, A {args.rating_a:g} vs B {args.rating_b:g}{note}",
        ["A wins", "draw", "B wins", "A expected"],
        [(f"{g.win:.1%}", f"{g.draw:.1%}", f"{g.loss:.1%}", f"{g.expected_score:.4f}")],
    )
    return 0


def _parse_current(text: str) -> GameOdds:
    parts = [t.strip() for t in text.split(",")]
    if len(parts) != 3:
        raise CliError(f"--current: expected W,D,L (three numbers), got {text!r}")
    try:
        w, d, lo = (float(x) for x in parts)
    except ValueError:
        raise CliError(f"--current: {text!r} is not three numbers") from None
    try:
        return GameOdds(w, d, lo)
    except ValueError as exc:
        raise CliError(f"--current: {exc}") from None


def _check_score(name: str, value: float) -> None:
    if not math.isfinite(value) or value < 0 or 2 * value != math.floor(2 * value):
        raise CliError(f"{name} must be a non-negative multiple of 0.5, got {value:g}")


def run_match(args: argparse.Namespace) -> int:
    g = _game(args)
    if args.games <= 0:
        raise CliError(f"--games must be positive (the match length), got {args.games}")
    _check_score("--score-a", args.score_a)
    _check_score("--score-b", args.score_b)
    played_f = args.score_a + args.score_b
    if played_f != math.floor(played_f):
        raise CliError(
            f"score {args.score_a:g}-{args.score_b:g} is impossible: every game gives out "
            "one point, so the scores must add up to a whole number of games"
        )
    played = int(played_f)
    if played > args.games:
        raise CliError(
            f"score {args.score_a:g}-{args.score_b:g} means {played} games played, "
            f"more than --games {args.games}"
        )
    left = args.games - played
    current = _parse_current(args.current) if args.current else None
    if current is not None and left == 0:
        raise CliError("--current given but the score says the match is over")
    odds = match_odds(g, left, args.score_a, args.score_b, current)
    if args.json:
        print_json(
            {
                "a_wins": odds.a_wins,
                "draw": odds.draw,
                "b_wins": odds.b_wins,
                "rating_a": args.rating_a,
                "rating_b": args.rating_b,
                "model": args.model,
                "games": args.games,
                "games_played": played,
                "games_left": left,
                "score_a": args.score_a,
                "score_b": args.score_b,
                "game": _game_json(g),
                "current": _game_json(current) if current is not None else None,
            }
        )
        return 0
    out = console()
    show(
        f"Match of {args.games} games, A {args.rating_a:g} vs B {args.rating_b:g}, "
        f"score {args.score_a:g}-{args.score_b:g}, {left} left",
        ["A wins", "drawn", "B wins"],
        [(f"{odds.a_wins:.1%}", f"{odds.draw:.1%}", f"{odds.b_wins:.1%}")],
    )
    out.print(
        f"per game: A {g.win:.1%}, draw {g.draw:.1%}, B {g.loss:.1%}"
        + ("" if current is None else f"; game in progress: {current.win:.1%}/"
           f"{current.draw:.1%}/{current.loss:.1%}")
    )  # fmt: skip
    return 0
