"""`livegain odds`: per-game win/draw/loss and exact match odds.

Sub-commands::

    livegain odds game --rating-a 2834.7 --rating-b 2832.3 --draw-rate 0.6
    livegain odds match --rating-a 2834.7 --rating-b 2832.3 --games 12 --draw-rate 0.6 \\
        [--score-a 3.5 --score-b 2.5] [--current 0.3,0.6,0.1]

``--games`` is the total length of the match; the score so far says how many
games have been played (``score_a + score_b``, each game giving out one point),
so the games left are ``games - score_a - score_b``. ``--current W,D,L`` is the
win/draw/loss of a game in progress (A's view), counted as one of the games left.

``--wdl human`` takes each game's W/D/L from the human model instead of a draw
rate (``livegain.core.human_wdl``: the ratings-only prior of ``--kind``, with
its White advantage, so A's colour matters: ``--a-colour`` of game 1, the
colours alternating), and a game in progress from its evaluation
(``--current-eval PAWNS --current-ply N``, White's view) through the live model
of the engine that gave it (``--current-engine "Stockfish 15.1 depth 10"``).
"""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING, Any

from livegain.cli.errors import CliError, about
from livegain.cli.options import count, finite_float
from livegain.cli.output import console, print_json, show
from livegain.core.odds import GameOdds, game_probabilities, match_odds, match_odds_games

if TYPE_CHECKING:
    from livegain.core.human_wdl import RatingsPrior

#: Longest match computed (the exact odds take time quadratic in its length:
#: 10,000 games in under a second).
MAX_MATCH_GAMES = 10_000


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
    m.add_argument("--games", type=count, required=True, help="total number of games in the match")
    m.add_argument(
        "--score-a", type=finite_float, default=0.0, help="A's points so far (default 0)"
    )
    m.add_argument(
        "--score-b", type=finite_float, default=0.0, help="B's points so far (default 0)"
    )
    m.add_argument(
        "--current",
        help="W,D,L of a game in progress from A's view (e.g. from the engine); "
        "counted as one of the games left",
    )
    m.add_argument(
        "--current-eval",
        type=finite_float,
        default=None,
        metavar="PAWNS",
        help="--wdl human: the evaluation (pawns, White's view) of the game in progress",
    )
    m.add_argument(
        "--current-ply",
        type=count,
        default=None,
        metavar="N",
        help="--wdl human: plies played in the game in progress",
    )
    m.add_argument(
        "--current-engine",
        default=None,
        metavar="'ENGINE LIMIT'",
        help="--wdl human: the engine and limit of --current-eval, e.g. "
        "'Stockfish 15.1 depth 10' (default: lichess's evaluations)",
    )
    m.set_defaults(func=run_match)


def _common_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rating-a", type=finite_float, required=True, help="rating of player A")
    p.add_argument("--rating-b", type=finite_float, required=True, help="rating of player B")
    p.add_argument(
        "--draw-rate",
        type=finite_float,
        default=None,
        help="probability of a draw in one game, in [0, 1] (seed 000 uses 0.6 at the top level); "
        "required unless --wdl human",
    )
    p.add_argument(
        "--wdl",
        choices=("rating", "human"),
        default="rating",
        help="per-game W/D/L: the rating curve with --draw-rate (default), or the human model's "
        "ratings-only prior (fitted on real results; docs/elo-and-odds.md)",
    )
    p.add_argument(
        "--kind",
        choices=("classical-otb", "online-rapid"),
        default="classical-otb",
        help="--wdl human: the kind of game (default classical-otb)",
    )
    p.add_argument(
        "--a-colour",
        choices=("white", "black"),
        default="white",
        help="--wdl human: A's colour (in a match: in game 1; the colours alternate)",
    )
    p.add_argument(
        "--model",
        choices=("logistic", "normal"),
        default="logistic",
        help="expected-score curve (default logistic)",
    )
    p.add_argument("--json", action="store_true", help="print JSON for machines")


def _game(args: argparse.Namespace) -> GameOdds:
    if args.draw_rate is None:
        raise CliError("--draw-rate is required (or --wdl human)")
    if not (0.0 <= args.draw_rate <= 1.0) or math.isnan(args.draw_rate):
        raise CliError(f"--draw-rate must lie in [0, 1], got {args.draw_rate:g}")
    return game_probabilities(args.rating_a - args.rating_b, args.draw_rate, args.model)


def _prior(args: argparse.Namespace) -> RatingsPrior:
    """The human model's ratings-only prior of ``--kind`` (a CliError when the
    model file has none)."""
    from livegain.models.files import CalibrationError
    from livegain.models.wdl import load_wdl_file, wdl_path

    with about("no human W/D/L model", CalibrationError):
        priors, _models = load_wdl_file()
    prior = next((p for p in priors if p.kind == args.kind), None)
    if prior is None:
        raise CliError(f"no human W/D/L prior for {args.kind} in {wdl_path()}")
    return prior


def _human_game(prior: RatingsPrior, args: argparse.Namespace, a_white: bool) -> GameOdds:
    """A's W/D/L in one game from the prior, A playing White or Black."""
    if a_white:
        w, d, lo = prior.probabilities(args.rating_a, args.rating_b)
    else:
        lo, d, w = prior.probabilities(args.rating_b, args.rating_a)
    return GameOdds(w, d, lo)


def _a_white(args: argparse.Namespace, game_number: int) -> bool:
    """Whether A has White in game ``game_number`` (1-based; colours alternate)."""
    return bool((args.a_colour == "white") == (game_number % 2 == 1))


def _human_current(args: argparse.Namespace, a_white: bool) -> tuple[GameOdds, str]:
    """A's W/D/L in the game in progress from its evaluation through the
    human model's live layer, and the model's name and why."""
    from livegain.batch.annotated import annotator_engine
    from livegain.core.evaluation import Evaluation
    from livegain.models.wdl import pick_wdl_model

    if args.current_ply is None or args.current_ply < 0:
        raise CliError("--current-eval needs --current-ply N (plies played, at least 0)")
    if args.current_engine is not None:
        named = annotator_engine({"Annotator": args.current_engine})
        if named is None:
            raise CliError(
                f"--current-engine: expected an engine and a limit such as "
                f"'Stockfish 15.1 depth 10', got {args.current_engine!r}"
            )
        model, why = pick_wdl_model("engine", args.kind, named[0], named[1])
    else:
        model, why = pick_wdl_model("pgn", args.kind)
    if model is None:
        raise CliError(why)
    pawns = args.current_eval
    if not math.isfinite(pawns):
        raise CliError(f"--current-eval must be a number of pawns, got {pawns:g}")
    ev = Evaluation(cp=max(-3900, min(3900, round(pawns * 100))))
    white, black = (args.rating_a, args.rating_b) if a_white else (args.rating_b, args.rating_a)
    w, d, lo = model.wdl(ev, args.current_ply, white, black)
    wdl = (w / 1000, d / 1000, lo / 1000)
    return (GameOdds(*wdl) if a_white else GameOdds(*wdl).swapped()), f"{model.name} ({why})"


def _game_json(g: GameOdds) -> dict[str, float]:
    return {"win": g.win, "draw": g.draw, "loss": g.loss, "expected": g.expected_score}


def run_game(args: argparse.Namespace) -> int:
    if args.wdl == "human":
        prior = _prior(args)
        g = _human_game(prior, args, args.a_colour == "white")
        if args.json:
            print_json(
                {
                    "rating_a": args.rating_a,
                    "rating_b": args.rating_b,
                    "wdl": "human",
                    "kind": prior.kind,
                    "a_colour": args.a_colour,
                    **_game_json(g),
                }
            )
            return 0
        show(
            f"One game, A {args.rating_a:g} ({args.a_colour}) vs B {args.rating_b:g}: "
            f"human model, {prior.kind} prior (White +{prior.white_advantage:g})",
            ["A wins", "draw", "B wins", "A expected"],
            [(f"{g.win:.1%}", f"{g.draw:.1%}", f"{g.loss:.1%}", f"{g.expected_score:.4f}")],
        )
        return 0
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
    if args.wdl == "human":
        return _run_human_match(args)
    if args.current_eval is not None:
        raise CliError("--current-eval needs --wdl human (else give --current W,D,L)")
    g = _game(args)
    played, left = _played(args)
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


def _played(args: argparse.Namespace) -> tuple[int, int]:
    """(games played, games left) from the score and the match length."""
    if args.games <= 0:
        raise CliError(f"--games must be positive (the match length), got {args.games}")
    if args.games > MAX_MATCH_GAMES:
        raise CliError(f"--games {args.games}: at most {MAX_MATCH_GAMES:,} games in a match")
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
    return played, args.games - played


def _run_human_match(args: argparse.Namespace) -> int:
    """``odds match --wdl human``: every game left from the prior with its
    colours, a game in progress from --current or --current-eval."""
    prior = _prior(args)
    played, left = _played(args)
    if args.current is not None and args.current_eval is not None:
        raise CliError("give --current W,D,L or --current-eval, not both")
    in_progress = args.current is not None or args.current_eval is not None
    if in_progress and left == 0:
        raise CliError("a game in progress given but the score says the match is over")
    games = [_human_game(prior, args, _a_white(args, played + 1 + k)) for k in range(left)]
    current: GameOdds | None = None
    current_why = None
    if args.current is not None:
        current = _parse_current(args.current)
    elif args.current_eval is not None:
        current, current_why = _human_current(args, _a_white(args, played + 1))
    if current is not None:
        games[0] = current
    odds = match_odds_games(games, args.score_a, args.score_b)
    as_white = _human_game(prior, args, True)
    as_black = _human_game(prior, args, False)
    if args.json:
        print_json(
            {
                "a_wins": odds.a_wins,
                "draw": odds.draw,
                "b_wins": odds.b_wins,
                "rating_a": args.rating_a,
                "rating_b": args.rating_b,
                "wdl": "human",
                "kind": prior.kind,
                "a_colour": args.a_colour,
                "games": args.games,
                "games_played": played,
                "games_left": left,
                "score_a": args.score_a,
                "score_b": args.score_b,
                "game": {"a_white": _game_json(as_white), "a_black": _game_json(as_black)},
                "current": _game_json(current) if current is not None else None,
                "current_model": current_why,
            }
        )
        return 0
    out = console()
    show(
        f"Match of {args.games} games, A {args.rating_a:g} vs B {args.rating_b:g}, "
        f"score {args.score_a:g}-{args.score_b:g}, {left} left; human model, "
        f"{prior.kind} prior, A {args.a_colour.capitalize()} in game 1",
        ["A wins", "drawn", "B wins"],
        [(f"{odds.a_wins:.1%}", f"{odds.draw:.1%}", f"{odds.b_wins:.1%}")],
    )
    line = (
        f"per game: A as White {as_white.win:.1%}/{as_white.draw:.1%}/{as_white.loss:.1%}, "
        f"as Black {as_black.win:.1%}/{as_black.draw:.1%}/{as_black.loss:.1%}"
    )
    if current is not None:
        line += f"; game in progress: {current.win:.1%}/{current.draw:.1%}/{current.loss:.1%}"
        if current_why:
            line += f" ({current_why})"
    out.print(line, markup=False)
    return 0
