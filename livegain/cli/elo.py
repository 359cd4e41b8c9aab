"""`livegain elo`: expected scores, rating differences, FIDE rating change, performance.

Sub-commands::

    livegain elo expected --rating-a 2834.7 --rating-b 2832.3 [--model logistic]
    livegain elo diff --score 0.625 [--model normal]      # or --score 12.5 --games 20
    livegain elo change --rating 1613 --k 32 --opponents 1609,1477 --scores 0,0.5
    livegain elo change --rating 2150 --auto-k --games-played 80 --under-18 ...
    livegain elo performance --opponents 2500,2600 --scores 1,0.5 [--method fide]

Every sub-command prints a readable table, or JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from livegain.cli.errors import CliError
from livegain.cli.options import count, finite_float
from livegain.cli.output import console, print_json, show
from livegain.core import elo


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "elo",
        help="Elo maths: expected score, rating difference, FIDE rating change, performance",
        description="Elo maths: expected score, rating difference, FIDE rating change, "
        "performance.",
    )
    esub = p.add_subparsers(dest="elo_command", metavar="SUBCOMMAND")
    esub.required = True

    ex = esub.add_parser("expected", help="expected score of A against B")
    ex.add_argument("--rating-a", type=finite_float, required=True, help="rating of player A")
    ex.add_argument("--rating-b", type=finite_float, required=True, help="rating of player B")
    _model_arg(ex)
    _json_arg(ex)
    ex.set_defaults(func=run_expected)

    df = esub.add_parser("diff", help="rating difference implied by a fractional score")
    df.add_argument(
        "--score",
        type=finite_float,
        required=True,
        help="fractional score in (0, 1), or points out of --games",
    )
    df.add_argument("--games", type=count, help="games played; --score is then a number of points")
    _model_arg(df)
    _json_arg(df)
    df.set_defaults(func=run_diff)

    ch = esub.add_parser("change", help="rating change over a set of games (sum of K*(S-E))")
    ch.add_argument("--rating", type=finite_float, required=True, help="the player's rating")
    kg = ch.add_mutually_exclusive_group(required=True)
    kg.add_argument("--k", type=finite_float, help="development coefficient K")
    kg.add_argument("--auto-k", action="store_true", help="FIDE K from the flags below")
    ch.add_argument(
        "--games-played",
        type=count,
        help="rated games completed before this period (with --auto-k; < 30 gives K=40)",
    )
    age = ch.add_mutually_exclusive_group()
    age.add_argument("--age", type=count, help="the player's age in years (under 18: junior rule)")
    age.add_argument("--under-18", action="store_true", help="the junior rule applies")
    ch.add_argument(
        "--ever-2400",
        action="store_true",
        help="the player's published rating has once reached 2400 (K=10 for good)",
    )
    ch.add_argument(
        "--period-games",
        type=count,
        help="rated games in the whole rating period for the K*n <= 700 rule "
        "(default: the games given here)",
    )
    _opponents_scores_args(ch)
    ch.add_argument(
        "--model",
        choices=("logistic", "normal"),
        default="logistic",
        help="expected-score curve (default logistic)",
    )
    ch.add_argument(
        "--no-cap",
        action="store_true",
        help="do not apply the 400-point rule (it never applies from 2650 up)",
    )
    _json_arg(ch)
    ch.set_defaults(func=run_change)

    pf = esub.add_parser("performance", help="performance rating over a set of games")
    _opponents_scores_args(pf)
    pf.add_argument(
        "--method",
        choices=elo.PERFORMANCE_METHODS,
        default="fide",
        help="fide (table 8.1a, default), normal (Elo's normal model), linear (400*(W-L)/n)",
    )
    _json_arg(pf)
    pf.set_defaults(func=run_performance)


def _model_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        choices=elo.MODELS,
        default="logistic",
        help="logistic (default), normal (Elo, sigma 200), log (400*log10(x/(1-x)), "
        "same curve as logistic), log2 (100*sqrt(pi)*ln(x/(1-x)))",
    )


def _json_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON for machines")


def _opponents_scores_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--opponents",
        required=True,
        help="comma-separated opponent ratings, one per game",
    )
    p.add_argument(
        "--scores",
        required=True,
        help="comma-separated scores, one per game: 1, 0.5 (or 1/2), 0",
    )


# --------------------------------------------------------------------------- parsing


def parse_numbers(text: str, what: str) -> list[float]:
    out: list[float] = []
    items = [t.strip() for t in text.split(",")]
    if items == [""]:
        raise CliError(f"{what}: empty list")
    for k, item in enumerate(items, start=1):
        try:
            v = float(item)
        except ValueError:
            raise CliError(f"{what}: item {k} {item!r} is not a number") from None
        if not math.isfinite(v):
            raise CliError(f"{what}: item {k} {item!r} is not a finite number")
        out.append(v)
    return out


_SCORE_WORDS = {"1": 1.0, "0": 0.0, "0.5": 0.5, ".5": 0.5, "1/2": 0.5, "½": 0.5, "1.0": 1.0}


def parse_scores(text: str) -> list[float]:
    out: list[float] = []
    items = [t.strip() for t in text.split(",")]
    if items == [""]:
        raise CliError("--scores: empty list")
    for k, item in enumerate(items, start=1):
        if item in _SCORE_WORDS:
            out.append(_SCORE_WORDS[item])
        elif item in ("0.0", "0.50"):
            out.append(float(item))
        else:
            raise CliError(f"--scores: item {k} {item!r} is not a game score (1, 0.5 or 0)")
    return out


def _games(args: argparse.Namespace) -> tuple[list[float], list[float]]:
    opponents = parse_numbers(args.opponents, "--opponents")
    scores = parse_scores(args.scores)
    if len(opponents) != len(scores):
        raise CliError(
            f"{len(opponents)} opponents but {len(scores)} scores; give one score per opponent"
        )
    return opponents, scores


# --------------------------------------------------------------------------- commands


def run_expected(args: argparse.Namespace) -> int:
    diff = args.rating_a - args.rating_b
    per_model = {m: elo.expected(diff, m) for m in elo.MODELS}
    chosen = per_model[args.model]
    if args.json:
        print_json(
            {
                "rating_a": args.rating_a,
                "rating_b": args.rating_b,
                "difference": diff,
                "model": args.model,
                "expected_a": chosen,
                "expected_b": 1.0 - chosen,
                "all_models": {
                    m: {"expected_a": e, "expected_b": 1.0 - e} for m, e in per_model.items()
                },
            }
        )
        return 0
    rows = [(m + (" *" if m == args.model else ""), f"{e:.4f}", f"{1 - e:.4f}") for m, e in
            per_model.items()]  # fmt: skip
    show(
        f"Expected score, A {args.rating_a:g} vs B {args.rating_b:g} (difference {diff:+g})",
        ["model", "A", "B"],
        rows,
    )
    return 0


def run_diff(args: argparse.Namespace) -> int:
    score = args.score
    if args.games is not None:
        if args.games <= 0:
            raise CliError(f"--games must be positive, got {args.games}")
        if not (0 <= score <= args.games):
            raise CliError(f"--score {score:g} is not between 0 and --games {args.games}")
        fraction = score / args.games
    else:
        fraction = score
    if not (0.0 < fraction < 1.0):
        raise CliError(
            f"fractional score {fraction:g} must lie strictly between 0 and 1 "
            "(a 0 % or 100 % score implies an infinite difference)"
        )
    per_model = {m: elo.diff_from_expected(fraction, m) for m in elo.MODELS}
    if args.json:
        print_json(
            {
                "score": score,
                "games": args.games,
                "fraction": fraction,
                "model": args.model,
                "difference": per_model[args.model],
                "all_models": per_model,
            }
        )
        return 0
    rows = [(m + (" *" if m == args.model else ""), f"{d:+.1f}") for m, d in per_model.items()]
    show(
        f"Rating difference for a fractional score of {fraction:.4g}",
        ["model", "difference"],
        rows,
    )
    return 0


def _k_for(args: argparse.Namespace, n_games: int) -> tuple[float, str]:
    if args.k is not None:
        if args.k <= 0:
            raise CliError(f"--k must be positive, got {args.k:g}")
        return float(args.k), "given"
    if args.games_played is None:
        raise CliError("--auto-k needs --games-played (rated games completed before this period)")
    if args.games_played < 0:
        raise CliError(f"--games-played must be >= 0, got {args.games_played}")
    if args.age is not None and args.age < 0:
        raise CliError(f"--age must be >= 0, got {args.age}")
    junior = bool(args.under_18) or (args.age is not None and args.age < 18)
    period = args.period_games if args.period_games is not None else n_games
    if period < n_games:
        raise CliError(
            f"--period-games {period} is less than the {n_games} games given; "
            "it counts every rated game in the period"
        )
    k = elo.fide_k(
        args.rating,
        games_played=args.games_played,
        junior=junior,
        ever_2400=args.ever_2400,
        games_in_period=period,
    )
    base = elo.fide_k(
        args.rating, games_played=args.games_played, junior=junior, ever_2400=args.ever_2400
    )
    if base == 40 and args.games_played < 30:
        rule = "new player (< 30 games)"
    elif base == 10:
        rule = "rating has reached 2400"
    elif base == 40:
        rule = "junior under 2300"
    else:
        rule = "rating under 2400"
    if k != base:
        rule += f"; K*n <= 700 with n = {period} lowers K from {base}"
    return float(k), rule


def run_change(args: argparse.Namespace) -> int:
    opponents, scores = _games(args)
    k, rule = _k_for(args, len(scores))
    try:
        rc = elo.rating_change(
            args.rating, opponents, scores, k, model=args.model, cap=not args.no_cap
        )
    except ValueError as exc:
        raise CliError(str(exc)) from None
    if args.json:
        print_json(
            {
                "rating": rc.rating,
                "k": rc.k,
                "k_rule": rule,
                "model": args.model,
                "cap": not args.no_cap,
                "games": [
                    {
                        "opponent": g.opponent,
                        "score": g.score,
                        "difference": g.difference,
                        "expected": g.expected,
                        "change": g.change,
                    }
                    for g in rc.games
                ],
                "score": rc.score,
                "expected": rc.expected,
                "change": rc.change,
                "new_rating": rc.new_rating,
            }
        )
        return 0
    rows: list[tuple[Any, ...]] = [
        (i, f"{g.opponent:g}", f"{g.difference:+g}", f"{g.expected:.3f}", f"{g.score:g}",
         f"{g.change:+.2f}")
        for i, g in enumerate(rc.games, start=1)
    ]  # fmt: skip
    rows.append(("total", "", "", f"{rc.expected:.3f}", f"{rc.score:g}", f"{rc.change:+.2f}"))
    out = console()
    show(
        f"Rating change for {rc.rating:g}, K = {rc.k:g} ({rule}), {args.model} curve",
        ["game", "opponent", "difference", "expected", "score", "change"],
        rows,
    )
    out.print(f"new rating: {rc.new_rating:.1f} (rounded {round(rc.new_rating)})")
    return 0


def run_performance(args: argparse.Namespace) -> int:
    opponents, scores = _games(args)
    every = {m: elo.performance_rating(opponents, scores, m) for m in elo.PERFORMANCE_METHODS}
    perf = every[args.method]
    if args.json:
        print_json(
            {
                "method": perf.method,
                "games": perf.games,
                "score": perf.score,
                "p": perf.p,
                "average_opponent": perf.average_opponent,
                "dp": perf.dp,
                "performance": perf.rating,
                "all_methods": {m: p.rating for m, p in every.items()},
            }
        )
        return 0
    rows = [
        (m + (" *" if m == args.method else ""), f"{p.dp:+.1f}", f"{p.rating:.1f}")
        for m, p in every.items()
    ]
    show(
        f"Performance: {perf.score:g}/{perf.games} (p = {perf.p:.3f}) against an average "
        f"of {perf.average_opponent:.1f}",
        ["method", "dp", "performance"],
        rows,
    )
    return 0
