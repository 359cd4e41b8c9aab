"""`livegain fit` and `livegain validate`: the calibrated perceived rating,
fitted on one part of a file of rated games and measured on the other.

Both split the games the same way (:func:`livegain.batch.validity.split_part`, 70 %
calibration, 30 % held out, by a hash of each game's Site), take their
evaluations from the PGN (``--evals pgn``) or from the engine pool with its
cache (``--evals engine``), and print readable tables or ``--json``.
docs/validity.md shows the figures and the commands that made them.
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from livegain.cli.errors import CliError
from livegain.cli.options import add_engine_options, finite_float
from livegain.cli.output import console, print_json, table
from livegain.core.human_wdl import KINDS
from livegain.core.perceived import MoveClasses


def _common(p: argparse.ArgumentParser, part: str) -> None:
    p.add_argument(
        "pgns",
        metavar="FILE.pgn",
        nargs="+",
        help="rated games (.pgn or .pgn.gz); several files are read as one",
    )
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
        "--opening",
        default=None,
        metavar="FILE",
        help="the opening table the model reads (livegain fit-opening): a file beside the "
        "model file or among the packaged data, named in the model's entry",
    )
    fit.add_argument(
        "--base",
        default=None,
        metavar="NAME",
        help="keep this shipped model's move scores and refit only its lines and intervals "
        "(for evaluations with fewer rated games, e.g. an engine at a fixed depth)",
    )
    fit.add_argument(
        "--scale",
        choices=("fide", "lichess"),
        default=None,
        help="the rating scale of the games' ratings (default: lichess when the first game's "
        "Site is a URL, else fide)",
    )
    fit.add_argument(
        "--wdl",
        action="store_true",
        help="fit the human win/draw/loss model instead (config/wdl.toml): the ratings-only "
        "prior of the kind of game and the live model of these evaluations",
    )
    fit.add_argument(
        "--kind",
        choices=KINDS,
        default=None,
        help="--wdl: the kind of game (default: from the first game's TimeControl, else "
        "online-rapid when its Site is a URL, else classical-otb)",
    )
    fit.add_argument(
        "--prior-games",
        default=None,
        metavar="FILE.pgn",
        help="--wdl: fit the ratings-only prior on the calibration part of this file of rated "
        "games with results (no evaluations needed; default: FILE.pgn)",
    )
    fit.add_argument(
        "--every",
        type=int,
        default=1,
        metavar="N",
        help="--wdl: fit the live model on every Nth ply of each game (default 1: all)",
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
        "--engine-rating", type=finite_float, default=None, metavar="R", help="r_e for Algorithm 4"
    )
    val.add_argument("--plots", default=None, metavar="DIR", help="write PNG plots there")
    val.add_argument(
        "--models", default=None, metavar="PATH", help="model file (default: the shipped one)"
    )
    val.add_argument(
        "--no-opening",
        action="store_true",
        help="read the perceived point from the moves alone, without the model's opening table",
    )
    val.add_argument(
        "--by-player",
        action="store_true",
        help="also each player over all his games of an event (Event and Site): form and "
        "perceived against his official rating and his results-based performance",
    )
    val.add_argument(
        "--min-games",
        type=int,
        default=None,
        metavar="N",
        help="--by-player: players with at least N games in the event (default 7)",
    )
    val.add_argument(
        "--scale",
        choices=("fide", "lichess"),
        default=None,
        help="the rating scale of the models (default: from the games, as for fit)",
    )
    val.add_argument(
        "--wdl",
        action="store_true",
        help="validate the human win/draw/loss chances instead: log-loss and calibration at "
        "plies 20-100 against the ratings alone, the win%%-curve and the engine's own",
    )
    val.add_argument(
        "--wdl-models",
        default=None,
        metavar="PATH",
        help="--wdl: W/D/L model file (default: the shipped one)",
    )
    val.add_argument(
        "--kind",
        choices=KINDS,
        default=None,
        help="--wdl: the kind of game (default: as for fit)",
    )
    val.set_defaults(func=run_validate)


def _games(args: argparse.Namespace) -> tuple[list[Any], list[str], str | None]:
    """The annotated games of the chosen part, skipped messages, engine name.

    The files are read as ``livegain analyze`` reads them (a game that cannot
    be read is skipped with its reason); the part and the sample are chosen
    from the games' tags, before any engine work."""
    from livegain.batch.pgn_stream import read_pgn_evals
    from livegain.batch.pgnio import read_pgn_games_skipping
    from livegain.cli.analyze import engine_games

    for flag in ("depth", "nodes", "workers", "games"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            raise CliError(f"--{flag} must be at least 1")
    if args.evals == "pgn":
        annotated: list[Any] = []
        skipped: list[str] = []
        for path in args.pgns:
            read = read_pgn_evals(path, workers=args.workers)
            annotated += read.games
            skipped += read.skipped
        return _chosen(args, annotated, lambda g: g.headers), skipped, None
    games: list[Any] = []
    skipped = []
    for path in args.pgns:
        some, _numbers, skipped_here = read_pgn_games_skipping(path)
        games += some
        skipped += skipped_here
    chosen = _chosen(args, games, lambda g: dict(g.headers))
    annotated, engine_name = engine_games(args, chosen)
    return annotated, skipped, engine_name


def _named(args: argparse.Namespace) -> str:
    """The input files, as a report names them."""
    return ", ".join(args.pgns)


def _short(args: argparse.Namespace) -> str:
    return " + ".join(Path(p).name for p in args.pgns)


def _chosen(args: argparse.Namespace, games: list[Any], tags: Any) -> list[Any]:
    """The games of ``--part``, then the fixed sample of ``--games``, in file order."""
    from livegain.batch.validity import sampled, split_part

    if args.part != "all":
        games = [g for g in games if split_part(tags(g)) == args.part]
    games = sampled(games, args.games, tags)
    if not games:
        raise CliError(f"{_named(args)}: no game in the {args.part} part")
    return games


def _scale(args: argparse.Namespace, games: list[Any]) -> str:
    """``--scale``, else the first game's (:func:`~livegain.core.perceived.scale_of_tags`)."""
    from livegain.core.perceived import scale_of_tags

    return str(args.scale or scale_of_tags(games[0].headers))


def _kind(args: argparse.Namespace, games: list[Any]) -> str:
    """``--kind``, else the first game's (:func:`~livegain.core.human_wdl.kind_of_tags`)."""
    from livegain.core.human_wdl import kind_of_tags

    return str(args.kind or kind_of_tags(games[0].headers))


def _source(
    args: argparse.Namespace, games: list[Any], engine_name: str | None
) -> tuple[str, str | None, str | None]:
    """``(evals, engine, limit)`` of the games' evaluations, as ``analyze``
    reads them (:func:`livegain.batch.eval_source.eval_source`): the engine in use,
    the engine and limit of a PGN's ``Annotator`` tag, or lichess's."""
    from livegain.cli.analyze import eval_source_of

    s = eval_source_of(args, engine_name, games[0].headers)
    return s.evals, s.engine, s.limit


def run_fit(args: argparse.Namespace) -> int:
    if args.wdl:
        return _run_fit_wdl(args)
    from livegain.batch.validity import fit_model, player_moves
    from livegain.models.engine import config_path
    from livegain.models.files import today
    from livegain.models.perceived import load_perceived_models, store_perceived_model

    base = None
    if args.base is not None:
        found = [m for m in load_perceived_models() if m.name == args.base]
        if not found:
            raise CliError(f"--base: no shipped model named {args.base!r}")
        base = found[0]
    annotated, skipped, engine_name = _games(args)
    rows = player_moves(annotated, base.classes if base else MoveClasses())
    evals, engine, limit = _source(args, annotated, engine_name)
    provenance = {
        "evals": evals,
        "source": _short(args),
        "part": args.part,
        "games": str(len(annotated)),
        "player_games": str(len(rows)),
        "date": today(),
        "command": "livegain " + shlex.join(getattr(args, "argv", sys.argv[1:])),
    }
    if base is not None:
        provenance["base"] = base.name
    if evals == "engine":
        provenance["engine"] = engine or "?"
        provenance["limit"] = limit or "?"
        default_name = f"{engine or 'engine'} {limit}, {_short(args)}"
    else:
        default_name = f"pgn evals, {_short(args)}"
    try:
        model = fit_model(
            rows,
            args.name or default_name,
            seed=args.seed,
            provenance=provenance,
            base=base,
            scale=_scale(args, annotated),
        )
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    target = Path(args.output) if args.output else config_path().parent / "perceived.toml"
    if args.opening is not None:
        from livegain.models.opening import load_opening_table, opening_file

        model = replace(model, opening=load_opening_table(opening_file(args.opening, target)))
    stored = None
    if args.write_config or args.output:
        stored = store_perceived_model(model, target)
    if args.json:
        from livegain.models.perceived import perceived_model_toml

        print_json({"model": perceived_model_toml(model), "skipped": skipped})
    else:
        out = console()
        out.print(
            f"Fitted {model.name!r} on {len(rows)} player-games of {len(annotated)} games "
            f"({args.part} part of {_named(args)}); prior {model.prior:.0f} "
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


def _provenance(args: argparse.Namespace, source: str, games: int) -> dict[str, str]:
    from livegain.models.files import today

    return {
        "source": source,
        "part": args.part,
        "games": str(games),
        "date": today(),
        "command": "livegain " + shlex.join(getattr(args, "argv", sys.argv[1:])),
    }


def _run_fit_wdl(args: argparse.Namespace) -> int:
    from livegain.batch.pgnio import read_pgn_headers
    from livegain.batch.validity import split_part
    from livegain.batch.wdl_fit import RatedResult, fit_model, fit_prior
    from livegain.batch.wdl_validity import scored_games
    from livegain.models.engine import config_path
    from livegain.models.wdl import store_wdl

    annotated, skipped, engine_name = _games(args)
    evals, engine, limit = _source(args, annotated, engine_name)
    kind = _kind(args, annotated)
    games = scored_games(annotated)
    if args.prior_games:
        tags = read_pgn_headers(args.prior_games)
        if args.part != "all":
            tags = [t for t in tags if split_part(t) == args.part]
        scores = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}
        results = [
            RatedResult(_rating(t.get("WhiteElo")), _rating(t.get("BlackElo")), scores[r])
            for t in tags
            if (r := t.get("Result", "*")) in scores
        ]
        prior_source = Path(args.prior_games).name
    else:
        results = [RatedResult(g.white, g.black, g.score) for g in games]
        prior_source = _short(args)
    source = f"{engine} {limit}" if evals == "engine" else "pgn-evals"
    provenance = _provenance(args, _short(args), len(games))
    provenance.update({"evals": evals})
    if evals == "engine":
        provenance.update({"engine": engine or "?", "limit": limit or "?"})
    try:
        prior = fit_prior(results, kind, _provenance(args, prior_source, len(results)))
        model = fit_model(
            games,
            prior,
            args.name or f"{kind}/{source}",
            source,
            provenance=provenance,
            step=max(1, args.every),
        )
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    stored = None
    if args.write_config or args.output:
        target = Path(args.output) if args.output else config_path().parent / "wdl.toml"
        stored = store_wdl(prior, model, target)
    if args.json:
        print_json(
            {
                "prior": {
                    "kind": prior.kind,
                    "white_advantage": prior.white_advantage,
                    "scale": prior.scale,
                    "draw_intercept": prior.draw_intercept,
                    "draw_level": prior.draw_level,
                    "draw_gap": prior.draw_gap,
                    "draw_rate": prior.draw_rate,
                },
                "model": model.name,
                "knots": [k.__dict__ for k in model.knots],
                "unrated_knots": [k.__dict__ for k in model.unrated_knots],
                "curve_draw_share": model.curve_draw_share,
                "skipped": skipped,
            }
        )
        return 0
    out = console()
    out.print(
        f"Ratings-only prior ({kind}) on {len(results)} games of {prior_source}: White's "
        f"advantage {prior.white_advantage:+.0f}, spread {prior.scale:.0f}, draw rate "
        f"{prior.draw_rate:.3f}; draw logistic {prior.draw_intercept:+.3f} "
        f"{prior.draw_level:+.3f} x level {prior.draw_gap:+.3f} x gap"
    )
    out.print(
        table(
            f"Live W/D/L model {model.name!r} on {len(games)} games ({args.part} part)",
            ["Ply", "a (prior)", "b (u)", "c (v)", "e", "f", "g", "h", "m (to move)"],
            [[k.ply, *(f"{getattr(k, f):.3f}" for f in "abcefghm")] for k in model.knots],
        )
    )
    if stored is not None:
        out.print(f"stored in {stored}")
    return 0


def _rating(text: str | None) -> float | None:
    from livegain.core.snapshot import official_rating

    rating = official_rating(text)
    return None if rating is None else float(rating)


def run_validate(args: argparse.Namespace) -> int:
    if args.wdl:
        return _run_validate_wdl(args)
    from livegain.batch.validity import player_events, validate, validity_rows, write_plots
    from livegain.models.perceived import pick_perceived_model

    annotated, skipped, engine_name = _games(args)
    evals, engine, limit = _source(args, annotated, engine_name)
    scale = _scale(args, annotated)
    model, why = pick_perceived_model(evals, engine, limit, args.models, scale)
    opening = model.opening if model is not None else None
    if model is not None and opening is not None:
        if args.no_opening:
            model = replace(model, opening=None)
            why += "; its opening table not read (--no-opening)"
        else:
            why += f"; with the opening table {opening.name!r}"
    if model is None:
        raise CliError(f"{why} (run livegain fit --write-config first)")
    engine_rating, source = _engine_rating(args, annotated, engine_name)
    rows = validity_rows(annotated, model, engine_rating)
    try:
        report = validate(rows, model.prior)
    except ValueError as exc:
        raise CliError(f"{_named(args)}: {exc}") from exc
    events = None
    if args.by_player:
        try:
            events = player_events(rows, model, min_games=args.min_games or 7)
        except ValueError as exc:
            raise CliError(f"{_named(args)}: {exc}") from exc
    plots: list[str] = []
    if args.plots:
        try:
            plots = write_plots(report, args.plots, f"{_short(args)}, {args.part}")
        except ImportError as exc:
            raise CliError("plots need matplotlib: pip install 'livegain[plots]'") from exc
    if args.json:
        data = report.to_json()
        data["model"] = model.name
        data["model_choice"] = why
        data["scale"] = model.scale
        data["engine_rating"] = {"rating": engine_rating, "source": source}
        data["games"] = len(annotated)
        data["skipped"] = skipped
        data["plots"] = plots
        if events is not None:
            data["by_player_event"] = events.to_json()
        print_json(data)
        return 0
    _print(report, args, model.name, why, engine_rating, source, len(annotated))
    if events is not None:
        _print_events(events)
    for path in plots:
        print(f"wrote {path}", file=sys.stderr)
    return 0


def _engine_rating(
    args: argparse.Namespace, games: list[Any], engine_name: str | None
) -> tuple[float, str]:
    """Algorithm 4's r_e, as ``analyze`` picks it for these evaluations."""
    from livegain.batch.eval_source import default_engine_rating
    from livegain.cli.analyze import eval_source_of

    source = eval_source_of(args, engine_name, games[0].headers)
    return default_engine_rating(source, args.engine_rating)


def _run_validate_wdl(args: argparse.Namespace) -> int:
    from livegain.batch.wdl_validity import validate_wdl, write_reliability_plot
    from livegain.models.wdl import pick_wdl_model

    annotated, skipped, engine_name = _games(args)
    evals, engine, limit = _source(args, annotated, engine_name)
    kind = _kind(args, annotated)
    model, why = pick_wdl_model(evals, kind, engine, limit, args.wdl_models)
    if model is None:
        raise CliError(f"{why} (run livegain fit --wdl --write-config first)")
    try:
        report = validate_wdl(annotated, model)
    except ValueError as exc:
        raise CliError(f"{_named(args)}: {exc}") from exc
    plots: list[str] = []
    if args.plots:
        try:
            plots.append(
                write_reliability_plot(
                    report,
                    str(Path(args.plots) / "wdl-reliability.png"),
                    f"{_short(args)}, {args.part}",
                )
            )
        except ImportError as exc:
            raise CliError("plots need matplotlib: pip install 'livegain[plots]'") from exc
    if args.json:
        data = report.to_json()
        data.update(
            {
                "model_choice": why,
                "kind": kind,
                "games": len(annotated),
                "skipped": skipped,
                "plots": plots,
            }
        )
        print_json(data)
        return 0
    out = console()
    if not out.is_terminal:
        out.width = max(out.width, 130)
    out.print(
        f"{len(annotated)} games ({args.part} part of {_named(args)}), evaluations: {evals}"
        f"{f' ({engine} {limit})' if engine else ''}; W/D/L: {why}"
    )
    names = ("shown", "ratings", "curve", "engine")

    def cells(f: dict[str, Any]) -> list[str]:
        row: list[str] = []
        for w in names:
            v = f.get(w)
            row.append("-" if v is None else f"{v.log_loss:.3f} / {v.calibration:.3f}")
        return row

    header = [
        "Human (shown)",
        "Ratings only",
        "Win%-curve",
        "Engine's own",
    ]
    out.print(
        table(
            "Mean log-loss / calibration error of the result, held out",
            ["Ply", "Ratings", "Games", *header],
            [
                [ply, label, next(v.count for v in f.values() if v is not None), *cells(f)]
                for ply, label, f in report.by_ply
            ],
        )
    )
    out.print(
        table(
            "By band of the players' mean rating (ratings known)",
            ["Ply", "Band", "Games", *header],
            [
                [ply, f"{band}-{band + 199}", next(v.count for v in f.values() if v), *cells(f)]
                for ply, band, f in report.by_band
            ],
        )
    )
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
        f"{games} games ({args.part} part of {_named(args)}), evaluations: {args.evals}; "
        f"model: {why}; Algorithm 4: r_e = {engine_rating:.0f} ({source}); "
        f"median guess = {report.baseline:.0f}"
    )
    names = {
        "perceived": "Perceived (moves alone)",
        "form": "Form (rating + moves)",
        "algorithm4": "Algorithm 4 (paper)",
    }
    out.print(
        table(
            "Overall, per player-game at the end of the game",
            _COLUMNS,
            [_row(names[w], report.overall[w]) for w in names if report.overall[w].count],
        )
    )
    for which in names:
        out.print(
            table(
                f"{names[which]} by rating bin",
                ["Rating", *_COLUMNS[1:]],
                [_row(f"{lo}-{lo + 199}", f[which]) for lo, f in report.by_rating],
            )
        )
    out.print(
        table(
            "Perceived by number of moves played",
            ["Moves from", *_COLUMNS[1:]],
            [_row(lo, f["perceived"]) for lo, f in report.by_moves],
        )
    )
    out.print(
        table(
            "Live: after the player's first n moves (what the overlay showed then)",
            ["After n moves", *_COLUMNS[1:]],
            [
                _row(f"{n}, {names[w].split(' (')[0]}", f[w])
                for n, f in report.live
                for w in names
                if f[w].count
            ],
        )
    )


def _print_events(events: Any) -> None:
    out = console()
    rows = [
        [
            p.event.split("|")[0][:28],
            p.player,
            f"{p.rating:.0f}" + (f" ({p.label})" if p.label else ""),
            p.games,
            f"{p.performance:.0f}",
            f"{p.form.rating:.0f} ({p.form.low:.0f}-{p.form.high:.0f})",
            f"{p.perceived.rating:.0f} ({p.perceived.low:.0f}-{p.perceived.high:.0f})",
        ]
        for p in events.players
    ]
    out.print(
        table(
            "Each player over his games of an event",
            [
                "Event",
                "Player",
                "Rating",
                "Games",
                "Performance",
                "Form (95 %)",
                "Perceived (95 %)",
            ],
            rows,
        )
    )
    whole = events.overall
    out.print(
        f"{len(events.players)} player-events. Mean |x - performance|: official rating "
        f"{whole.mae_rating:.1f}, form {whole.mae_form:.1f}, perceived "
        f"{events.mae_perceived:.1f}. Form closer than the rating by {whole.improvement:.1f} "
        f"(bootstrap 90 % {whole.improvement_low:.1f} to {whole.improvement_high:.1f}). "
        f"Form's interval holds the performance {events.form_holds_performance * 100:.1f} % "
        f"of the time, perceived's {events.perceived_holds_performance * 100:.1f} %."
    )
    for part in events.by_event_rating:
        where = (
            f"below {part.high:.0f}"
            if part.low == 0
            else f"{part.low:.0f} and up"
            if math.isinf(part.high)
            else f"{part.low:.0f}-{part.high:.0f}"
        )
        out.print(
            f"Events of mean rating {where} ({part.events} events, {part.player_events} "
            f"player-events): official rating {part.mae_rating:.1f}, form {part.mae_form:.1f}; "
            f"form closer by {part.improvement:.1f} (bootstrap 90 % {part.improvement_low:.1f} "
            f"to {part.improvement_high:.1f})."
        )
