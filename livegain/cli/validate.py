"""`livegain fit` and `livegain validate`: the calibrated perceived rating,
fitted on one part of a file of rated games and measured on the other.

Both split the games the same way (:func:`livegain.validity.split_part`, 70 %
calibration, 30 % held out, by a hash of each game's Site), take their
evaluations from the PGN (``--evals pgn``) or from the engine pool with its
cache (``--evals engine``), and print readable tables or ``--json``.
docs/validity.md shows the figures and the commands that made them.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from livegain.cli._common import CliError, add_engine_options, console, print_json, table
from livegain.core.perceived import MoveClasses


def _common(p: argparse.ArgumentParser, part: str) -> None:
    p.add_argument("pgn", metavar="FILE.pgn", help="rated games (.pgn or .pgn.gz)")
    p.add_argument(
        "--evals",
        choices=("pgn", "engine"),
        default="pgn",
        help="evaluations from the file's [%%eval] comments (default) or from the engine",
    )
    add_engine_options(p)
    p.add_argument(
        "--part",
        choices=("calibration", "held-out", "all"),
        default=part,
        help=f"which part of the file to use (default: {part})",
    )
    p.add_argument(
        "--games",
        type=int,
        default=None,
        metavar="N",
        help="only a fixed pseudo-random sample of N games of the part (by a hash of each game)",
    )
    p.add_argument("--json", action="store_true", help="JSON on stdout")


def register(sub: Any) -> None:
    fit = sub.add_parser(
        "fit",
        help="fit the calibrated perceived rating on rated games",
        description=(
            "Fit the calibrated perceived-rating model (move scores by class, one line and "
            "residual interval per number of moves) on the calibration part of a file of "
            "rated games. --write-config stores it in config/perceived.toml."
        ),
    )
    _common(fit, "calibration")
    fit.add_argument("--name", default=None, help="model name (default: from the evaluations)")
    fit.add_argument("--seed", type=int, default=0, help="seed of the prefix draws (0)")
    fit.add_argument(
        "--base",
        default=None,
        metavar="NAME",
        help="keep this shipped model's move scores and refit only its lines and intervals "
        "(for evaluations with fewer rated games, e.g. an engine at a fixed depth)",
    )
    fit.add_argument(
        "--write-config", action="store_true", help="store the model in the shipped model file"
    )
    fit.add_argument("--output", default=None, metavar="PATH", help="store it in this file")
    fit.set_defaults(func=run_fit)

    val = sub.add_parser(
        "validate",
        help="measure the perceived ratings against players' ratings on held-out games",
        description=(
            "Per player-game, the calibrated perceived rating and Algorithm 4's against the "
            "players' ratings, on games the model was not fitted to: mean absolute error "
            "beside always guessing the median, bias, Spearman, 95 %% interval coverage and "
            "width, overall, by 200-point rating bin and by number of moves."
        ),
    )
    _common(val, "held-out")
    val.add_argument(
        "--engine-rating", type=float, default=None, metavar="R", help="r_e for Algorithm 4"
    )
    val.add_argument("--plots", default=None, metavar="DIR", help="write PNG plots there")
    val.add_argument(
        "--models", default=None, metavar="PATH", help="model file (default: the shipped one)"
    )
    val.add_argument(
        "--by-player",
        action="store_true",
        help="also each player over all his games (an event such as a round robin): "
        "against his official rating and his results-based performance",
    )
    val.set_defaults(func=run_validate)


def _games(args: argparse.Namespace) -> tuple[list[Any], list[str], str | None]:
    """The annotated games of the chosen part, skipped messages, engine name.

    The files are read as ``livegain analyze`` reads them (a game that cannot
    be read is skipped with its reason); the part and the sample are chosen
    from the games' tags, before any engine work."""
    from livegain.cli.analyze import _engine_games
    from livegain.pgnio import PgnError, read_pgn_evals, read_pgn_games_skipping

    for flag in ("depth", "nodes", "workers", "games"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            raise CliError(f"--{flag} must be at least 1")
    try:
        if args.evals == "pgn":
            read = read_pgn_evals(args.pgn, workers=args.workers)
            return _chosen(args, read.games, lambda g: g.headers), read.skipped, None
        games, _numbers, skipped = read_pgn_games_skipping(args.pgn)
    except PgnError as exc:
        raise CliError(str(exc)) from exc
    chosen = _chosen(args, games, lambda g: dict(g.headers))
    annotated, engine_name = _engine_games(args, chosen)
    return annotated, skipped, engine_name


def _chosen(args: argparse.Namespace, games: list[Any], tags: Any) -> list[Any]:
    """The games of ``--part``, then the fixed sample of ``--games``, in file order."""
    from livegain.validity import sample_order, split_part

    if args.part != "all":
        games = [g for g in games if split_part(tags(g)) == args.part]
    if args.games is not None and args.games < len(games):
        keep = {id(g) for g in sorted(games, key=lambda g: sample_order(tags(g)))[: args.games]}
        games = [g for g in games if id(g) in keep]
    if not games:
        raise CliError(f"{args.pgn}: no game in the {args.part} part")
    return games


def run_fit(args: argparse.Namespace) -> int:
    from livegain.calibration import (
        CalibrationError,
        config_path,
        load_perceived_models,
        store_perceived_model,
        today,
    )
    from livegain.validity import fit_model, player_moves

    base = None
    if args.base is not None:
        try:
            found = [m for m in load_perceived_models() if m.name == args.base]
        except CalibrationError as exc:
            raise CliError(str(exc)) from exc
        if not found:
            raise CliError(f"--base: no shipped model named {args.base!r}")
        base = found[0]
    annotated, skipped, engine_name = _games(args)
    rows = player_moves(annotated, base.classes if base else MoveClasses())
    provenance = {
        "evals": args.evals,
        "source": Path(args.pgn).name,
        "part": args.part,
        "games": str(len(annotated)),
        "player_games": str(len(rows)),
        "date": today(),
        "command": "livegain " + shlex.join(getattr(args, "argv", sys.argv[1:])),
    }
    if base is not None:
        provenance["base"] = base.name
    if args.evals == "engine":
        provenance["engine"] = engine_name or "?"
        from livegain.engine.pool import SearchLimit

        provenance["limit"] = SearchLimit.of(args.depth, args.nodes).describe()
        default_name = f"{engine_name or 'engine'} {provenance['limit']}, {Path(args.pgn).name}"
    else:
        default_name = f"pgn evals, {Path(args.pgn).name}"
    try:
        model = fit_model(
            rows, args.name or default_name, seed=args.seed, provenance=provenance, base=base
        )
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    stored = None
    if args.write_config or args.output:
        target = Path(args.output) if args.output else config_path().parent / "perceived.toml"
        stored = store_perceived_model(model, target)
    if args.json:
        from livegain.calibration import perceived_model_toml

        print_json({"model": perceived_model_toml(model), "skipped": skipped})
    else:
        out = console()
        out.print(
            f"Fitted {model.name!r} on {len(rows)} player-games of {len(annotated)} games "
            f"({args.part} part of {args.pgn}); prior {model.prior:.0f} "
            f"(95 % {model.prior_low:.0f}-{model.prior_high:.0f})"
        )
        out.print(
            table(
                "Lines by number of moves: rating = a + b * mean move score",
                ["Moves from", "a", "b", "2.5 % residual", "97.5 % residual"],
                [
                    [b.moves_from, f"{b.intercept:.0f}", f"{b.slope:.3f}", b.q_low, b.q_high]
                    for b in model.bins
                ],
            )
        )
        if stored is not None:
            out.print(f"stored in {stored}")
    return 0


def run_validate(args: argparse.Namespace) -> int:
    from livegain.cli.analyze import default_engine_rating, perceived_model
    from livegain.validity import validate, validity_rows, write_plots

    annotated, skipped, engine_name = _games(args)
    model, why = perceived_model(args, engine_name, args.models)
    if model is None:
        raise CliError(f"{why} (run livegain fit --write-config first)")
    engine_rating, source = default_engine_rating(args, engine_name)
    rows = validity_rows(annotated, model, engine_rating)
    try:
        report = validate(rows, model.prior)
    except ValueError as exc:
        raise CliError(f"{args.pgn}: {exc}") from exc
    players: list[Any] = []
    if args.by_player:
        from livegain.analysis import analyze
        from livegain.validity import by_player

        players = by_player(annotated, analyze(annotated, engine_rating, model=model))
    plots: list[str] = []
    if args.plots:
        try:
            plots = write_plots(report, args.plots, f"{Path(args.pgn).name}, {args.part}")
        except ImportError as exc:
            raise CliError("plots need matplotlib: pip install 'livegain[plots]'") from exc
    if args.json:
        data = report.to_json()
        data["model"] = model.name
        data["model_choice"] = why
        data["engine_rating"] = {"rating": engine_rating, "source": source}
        data["games"] = len(annotated)
        data["skipped"] = skipped
        data["plots"] = plots
        if args.by_player:
            data["by_player"] = _players_json(players)
        print_json(data)
        return 0
    _print(report, args, model.name, why, engine_rating, source, len(annotated))
    if args.by_player:
        _print_players(players)
    for path in plots:
        print(f"wrote {path}", file=sys.stderr)
    return 0


def _row(label: Any, f: Any) -> list[Any]:
    rho = "-" if f.spearman is None else f"{f.spearman:.3f}"
    return [
        label,
        f.count,
        f"{f.mae:.0f}",
        f"{f.baseline_mae:.0f}",
        f"{f.mae_ratio:.3f}",
        f"{f.bias:+.0f}",
        rho,
        f"{f.coverage * 100:.1f}",
        f"{f.width:.0f}",
    ]


_COLUMNS = [
    "",
    "Player-games",
    "MAE",
    "Median guess MAE",
    "Ratio",
    "Bias",
    "Spearman",
    "Coverage %",
    "Median width",
]


def _print(
    report: Any,
    args: argparse.Namespace,
    model: str,
    why: str,
    engine_rating: float,
    source: str,
    games: int,
) -> None:
    out = console()
    if not out.is_terminal:
        out.width = max(out.width, 130)
    out.print(
        f"{games} games ({args.part} part of {args.pgn}), evaluations: {args.evals}; "
        f"calibrated: {why}; Algorithm 4: r_e = {engine_rating:.0f} ({source}); "
        f"median guess = {report.baseline:.0f}"
    )
    names = {"calibrated": "Calibrated (shown)", "algorithm4": "Algorithm 4 (paper)"}
    out.print(
        table(
            "Overall, per player-game at the end of the game",
            _COLUMNS,
            [_row(names[w], report.overall[w]) for w in ("calibrated", "algorithm4")],
        )
    )
    for which in ("calibrated", "algorithm4"):
        out.print(
            table(
                f"{names[which]} by rating bin",
                ["Rating", *_COLUMNS[1:]],
                [_row(f"{lo}-{lo + 199}", f[which]) for lo, f in report.by_rating],
            )
        )
    out.print(
        table(
            "Calibrated (shown) by number of moves played",
            ["Moves from", *_COLUMNS[1:]],
            [_row(lo, f["calibrated"]) for lo, f in report.by_moves],
        )
    )
    out.print(
        table(
            "Live: after the player's first n moves (what the overlay showed then)",
            ["After n moves", *_COLUMNS[1:]],
            [
                _row(f"{n}, {names[w].split(' (')[0]}", f[w])
                for n, f in report.live
                for w in ("calibrated", "algorithm4")
            ],
        )
    )


def _players_json(players: list[Any]) -> dict[str, Any]:
    from livegain.validity import player_summary

    def est(e: Any) -> dict[str, float]:
        return {"rating": round(e.rating, 1), "low": round(e.low, 1), "high": round(e.high, 1)}

    return {
        "players": [
            {
                "name": p.name,
                "rating": p.rating,
                "performance": None if p.performance is None else round(p.performance, 1),
                "games": p.games,
                "moves": p.moves,
                "calibrated": est(p.calibrated),
                "algorithm4": est(p.algorithm4),
            }
            for p in players
        ],
        "summary": {w: player_summary(players, w) for w in ("calibrated", "algorithm4")}
        if players
        else None,
    }


def _print_players(players: list[Any]) -> None:
    from livegain.validity import player_summary

    out = console()
    if not players:
        out.print("No rated player with moves.")
        return
    rows = [
        [
            p.name,
            f"{p.rating:.0f}",
            None if p.performance is None else f"{p.performance:.0f}",
            p.games,
            p.moves,
            f"{p.calibrated.rating:.0f}",
            f"{p.calibrated.low:.0f}-{p.calibrated.high:.0f}",
            f"{p.algorithm4.rating:.0f}",
            f"{p.algorithm4.low:.0f}-{p.algorithm4.high:.0f}",
        ]
        for p in players
    ]
    out.print(
        table(
            "Players over all their games",
            [
                "Player",
                "Rating",
                "Performance",
                "Games",
                "Moves",
                "Calibrated",
                "95%",
                "Alg. 4",
                "Alg. 4 95%",
            ],
            rows,
        )
    )
    srows = []
    for w, label in (("calibrated", "Calibrated (shown)"), ("algorithm4", "Algorithm 4")):
        f = player_summary(players, w)
        srows.append(
            [
                label,
                f["mae_rating"],
                f["mae_rating_mean_guess"],
                f["bias_rating"],
                f["spearman_rating"],
                f["coverage_rating"],
                f["mae_performance"],
                f["spearman_performance"],
                f["sd_estimate"],
                f["sd_rating"],
            ]
        )
    out.print(
        table(
            "Per player: against official ratings and results-based performances",
            [
                "",
                "MAE",
                "Mean guess MAE",
                "Bias",
                "Spearman",
                "Coverage",
                "MAE perf.",
                "Spearman perf.",
                "SD est.",
                "SD ratings",
            ],
            srows,
        )
    )
