"""`livegain fit-opening`: the opening table of the perceived rating
(:mod:`livegain.core.opening`), fitted on the calibration part of rated games
(:mod:`livegain.batch.opening_fit`) and written as gzipped JSON with its
provenance; a ``[[model]]`` of ``config/perceived.toml`` names the table it
reads (``opening = "FILE"``)."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from livegain.cli.errors import CliError
from livegain.cli.output import console, print_json, table
from livegain.core.opening import DEFAULT_PLIES, MIN_COUNT


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "fit-opening",
        help="fit the opening table of the perceived rating on rated games",
        description=(
            "Fit the opening prior (the rating of the players who walked into the same "
            "opening) on the calibration part of a file of rated games and write it as "
            "gzipped JSON; a model of config/perceived.toml names it with opening = FILE."
        ),
    )
    p.add_argument("pgn", metavar="FILE.pgn", help="rated games (.pgn or .pgn.gz)")
    p.add_argument("--out", required=True, type=Path, help="the table to write (.json.gz)")
    p.add_argument(
        "--plies",
        type=int,
        default=DEFAULT_PLIES,
        help=f"the longest prefix read ({DEFAULT_PLIES})",
    )
    p.add_argument(
        "--min-count",
        type=int,
        default=MIN_COUNT,
        help=f"keep prefixes with this many games or more ({MIN_COUNT})",
    )
    p.add_argument("--name", default=None, help="the table's name (default: from the file)")
    p.add_argument(
        "--scale",
        choices=("fide", "lichess"),
        default=None,
        help="the games' rating scale (default: from the first game's Site)",
    )
    p.add_argument("--json", action="store_true", help="JSON on stdout")
    p.set_defaults(func=run_fit_opening)


def run_fit_opening(args: argparse.Namespace) -> int:
    from livegain.batch.opening_fit import fit_opening_table, opening_games
    from livegain.batch.pgnio import read_pgn_games_skipping
    from livegain.batch.validity import split_part
    from livegain.core.perceived import scale_of_tags
    from livegain.models.files import today
    from livegain.models.opening import write_opening_table

    if args.plies < 1 or args.min_count < 1:
        raise CliError("--plies and --min-count must be at least 1")
    games, _numbers, skipped = read_pgn_games_skipping(args.pgn)
    rows = opening_games(games, args.plies)
    source = Path(args.pgn).name
    scale = args.scale or scale_of_tags(dict(games[0].headers))
    provenance = {
        "source": source,
        "part": "calibration",
        "games": str(sum(split_part(dict(g.headers)) == "calibration" for g in games)),
        "player_games": str(len(rows)),
        "date": today(),
        "command": "livegain " + shlex.join(getattr(args, "argv", sys.argv[1:])),
    }
    try:
        fit = fit_opening_table(
            rows,
            args.plies,
            args.name or f"opening, {source}",
            scale,
            provenance,
            min_count=args.min_count,
        )
    except ValueError as exc:
        raise CliError(f"{args.pgn}: {exc}") from exc
    path = write_opening_table(fit.table, args.out)
    t = fit.table
    if args.json:
        print_json(
            {
                "name": t.name,
                "scale": t.scale,
                "plies": t.plies,
                "m": t.m,
                "sd": round(t.sd, 1),
                "prefixes": len(t.estimates),
                "player_games": fit.player_games,
                "skipped": len(skipped),
                "cv": [{"m": m, "mae": round(mae, 1)} for m, mae in fit.cv],
                "written": str(path),
            }
        )
        return 0
    out = console()
    out.print(
        f"{t.name}: {fit.player_games} player-games ({len(skipped)} games skipped), "
        f"{len(t.estimates)} prefixes of up to {t.plies} plies; m {t.m:g}, sd {t.sd:.0f}"
    )
    out.print(
        table("m chosen by cross-validation", ["m", "MAE"], [[m, f"{e:.1f}"] for m, e in fit.cv])
    )
    out.print(f"written to {path}")
    return 0
