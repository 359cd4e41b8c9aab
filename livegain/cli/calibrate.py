"""`livegain calibrate`: the engine's strength r_e from rated players (Algorithm 3).

Every position of every game is evaluated by the engine pool at the given
limit; each player's gains over the whole file give his expected score p_i
against the engine (single peak at 0) and the difference d_i; the engine's
strength is the mean of r_i - d_i over players with an Elo tag, with a 95 %
interval over players (:mod:`livegain.batch.engine_calibration`).

``--engine-distribution`` also measures the engine's own distribution of gain
at the same limit: for sampled positions of the file, the score before and
after the engine's best move, from the mover's view. Algorithm 4 can then use
that histogram instead of the single peak; the command reports how it moves
r_e and the game of the century's Byrne/Fischer gap (Figure 6 of seed 002).
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from livegain.batch.engine_calibration import (
    DEFAULT_SAMPLE,
    Calibration,
    NoRatedPlayerError,
    calibrate,
    calibration_json,
    round_or_none,
)
from livegain.batch.pgnio import read_pgn_games
from livegain.cli.errors import CliError, about
from livegain.cli.options import add_engine_options, existing_file
from livegain.cli.output import console, print_json, table
from livegain.engine.cache import CacheError
from livegain.engine.errors import EngineError
from livegain.engine.launch import DEFAULT_ENGINE
from livegain.engine.search import SearchLimit
from livegain.models.engine import EngineCalibration, config_path, store_calibration
from livegain.models.files import today


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "calibrate",
        help="engine strength r_e from rated players (Algorithm 3)",
        description=(
            "Estimate the engine's strength r_e = mean(r_i - d_i) over the players of a PGN "
            "file that have Elo tags (Algorithm 3 of the gain-per-move paper)."
        ),
    )
    p.add_argument("pgn", metavar="FILE.pgn", help="games between rated players")
    add_engine_options(p, DEFAULT_ENGINE)
    p.add_argument(
        "--engine-distribution",
        action="store_true",
        help="also measure the gain of the engine's own best moves at the same limit",
    )
    p.add_argument(
        "--sample",
        type=int,
        default=DEFAULT_SAMPLE,
        metavar="N",
        help=f"positions for --engine-distribution, evenly spread (default {DEFAULT_SAMPLE}; "
        "0: every position)",
    )
    p.add_argument("--json", action="store_true", help="JSON on stdout")
    p.add_argument(
        "--write-config",
        nargs="?",
        const="",
        default=None,
        metavar="PATH",
        help="store the result in the calibration file (default: the shipped "
        "config/calibration.toml)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    for flag in ("depth", "nodes", "workers"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            raise CliError(f"--{flag} must be at least 1")
    if args.sample < 0:
        raise CliError("--sample must be 0 (every position) or more")
    path = existing_file(args.pgn)
    games = read_pgn_games(path)
    if not games:
        raise CliError(f"{args.pgn}: no games")
    limit = SearchLimit.of(args.depth, args.nodes)
    with about(args.pgn, NoRatedPlayerError), about("engine", (EngineError, CacheError)):
        result = asyncio.run(
            calibrate(
                games,
                limit,
                engine=args.engine,
                workers=args.workers,
                cache_path=args.cache,
                engine_distribution=args.engine_distribution,
                sample=args.sample,
                progress=sys.stderr.isatty(),
            )
        )
    command = "livegain calibrate " + " ".join(shlex.quote(a) for a in sys.argv[2:])
    if args.write_config is not None:
        target = Path(args.write_config) if args.write_config else config_path()
        entry = EngineCalibration(
            name=result.engine,
            limit=result.limit,
            rating=round(result.strength.rating, 1),
            low=round_or_none(result.strength.low),
            high=round_or_none(result.strength.high),
            players=result.strength.players,
            games=result.games,
            positions=result.positions,
            source=path.name,
            date=today(),
            command=command,
            gains=dict(result.engine_gains.counts()) if result.engine_gains else {},
            gains_positions=result.gains_positions or None,
        )
        if result.strength_measured is not None:
            entry = replace(entry, rating_measured=round(result.strength_measured.rating, 1))
        try:
            written = store_calibration(entry, target)
        except OSError as exc:
            raise CliError(f"{target}: cannot write calibration ({exc})") from exc
        print(f"calibration written to {written}", file=sys.stderr)
    if args.json:
        print_json(calibration_json(result, path, command))
    else:
        _print(result)
    return 0


def _print(result: Calibration) -> None:
    out = console()
    out.print(
        f"{result.engine} {result.limit}: {result.games} games, {result.positions} positions "
        f"({result.searches} searched, {result.cache_hits} from the cache) in "
        f"{result.seconds:.0f} s with {result.workers} workers"
    )
    measured = result.strength_measured is not None
    cols = ["Player", "Elo", "moves", "p vs engine", "d_i", "r_i - d_i"]
    if measured:
        cols += ["p (measured)", "d_i (measured)"]
    rows = []
    for r in sorted(result.players, key=lambda r: -(r.elo or 0)):
        row: list[Any] = [r.name, r.elo, r.moves, r.expected, r.difference, r.engine_estimate]
        if measured:
            row += [r.expected_measured, r.difference_measured]
        rows.append(row)
    out.print(table("Algorithm 3", cols, rows))
    s = result.strength
    ci = f" (95 % interval {s.low:.0f}-{s.high:.0f})" if s.low is not None else ""
    out.print(f"Engine strength r_e = {s.rating:.0f}{ci} from {s.players} rated players")
    if result.engine_gains is not None and result.strength_measured is not None:
        g = result.engine_gains
        m = result.strength_measured
        mci = f" ({m.low:.0f}-{m.high:.0f})" if m.low is not None else ""
        out.print(
            f"Engine's own gains over {result.gains_positions} positions: mean {g.mean():.1f} cp,"
            f" {g.negative} negative / {g.zero} zero / {g.positive} positive;"
            f" r_e against that distribution = {m.rating:.0f}{mci}"
        )
        c = result.century
        if c is not None:
            sp, me = c["single_peak"], c["measured_engine"]
            out.print(
                f"Game of the century ({c['white']} - {c['black']}): single peak "
                f"{sp['white']:+.0f} / {sp['black']:+.0f} (gap {sp['gap']:.0f}); measured engine "
                f"{me['white']:+.0f} / {me['black']:+.0f} (gap {me['gap']:.0f}); "
                f"Algorithm 1 gap: {c['algorithm1_gap']:.0f}"
            )
