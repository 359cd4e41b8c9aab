"""`livegain demo`: the game of the century, analysed from its shipped evaluations.

Prints the perceived-rating tables of Byrne - Fischer 1956 (the paper's
Figure 1 evaluations, Algorithms 1 and 4), with ``--trace`` the move-by-move
trace of Figure 6.
"""

from __future__ import annotations

import argparse
from importlib import resources
from pathlib import Path
from typing import Any

from livegain.analysis import analyze
from livegain.cli._common import CliError, print_json
from livegain.cli.analyze import print_report
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.pgnio import PgnError, annotated_games_from_pgn, read_pgn_games


def game_of_the_century_path() -> Path:
    """The shipped PGN of Byrne - Fischer, New York 1956, with Figure 1's evaluations."""
    return Path(str(resources.files("livegain") / "data" / "game_of_the_century.pgn"))


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "demo", help="analyse the game of the century (Byrne - Fischer 1956)"
    )
    p.add_argument("--trace", action="store_true", help="print the move-by-move trace")
    p.add_argument("--json", action="store_true", help="JSON on stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        games, _ = annotated_games_from_pgn(read_pgn_games(game_of_the_century_path()))
    except PgnError as exc:
        raise CliError(f"shipped game unreadable: {exc}") from exc
    report = analyze(games, PAPER_ENGINE_RATING)
    if args.json:
        print_json(report.to_json())
    else:
        print_report(report, "the paper's Houdini 1.5a depth 20", trace=args.trace)
    return 0
