"""`livegain rank RESULTS`: maximum-likelihood ranking from head-to-head results (seed 001).

RESULTS is either

- a CSV file with a header row naming the columns ``player_a, player_b,
  wins_a, draws, wins_b`` (any order, extra columns ignored; blank lines and
  lines starting with ``#`` are skipped). Each row counts games between two
  players: ``wins_a`` won by ``player_a``, ``draws``, ``wins_b`` won by
  ``player_b``. Rows for the same pair (either order) add up; or
- a PGN file (``.pgn``): every finished game (``1-0``, ``0-1``, ``1/2-1/2``)
  is tallied by its White and Black tags; unfinished games are skipped.

Prints alpha (the draw parameter), each player's gamma with its standard
error and rank, and the log-likelihood at the maximum.
"""

from __future__ import annotations

import argparse
import csv
import io
import re
from pathlib import Path
from typing import Any

import chess.pgn
from rich.markup import escape

from livegain.cli.errors import CliError, about
from livegain.cli.options import existing_file, finite_float
from livegain.cli.output import console, print_json, show
from livegain.core.ranking import PairResult, RankingError, RankingFit, fit_ranking, tally_results

CSV_COLUMNS = ("player_a", "player_b", "wins_a", "draws", "wins_b")
#: Most games counted in one field of the results table.
MAX_COUNT = 1_000_000
_WHOLE = re.compile(r"-?[0-9]+")


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "rank",
        help="rank players by maximum likelihood from head-to-head results",
        description=(
            "Rank players by maximum likelihood from head-to-head results "
            "(logistic model with a draw parameter, seed 001). RESULTS is a CSV with "
            "columns player_a,player_b,wins_a,draws,wins_b, or a PGN file."
        ),
    )
    p.add_argument("results", metavar="RESULTS", help="CSV of pairwise results, or a PGN file")
    p.add_argument(
        "--format",
        choices=("auto", "csv", "pgn"),
        default="auto",
        help="input format (default: pgn for *.pgn, else csv)",
    )
    p.add_argument(
        "--fix-alpha",
        type=finite_float,
        help="hold alpha at this value and maximise over the gammas only (profile likelihood)",
    )
    p.add_argument("--json", action="store_true", help="print JSON for machines")
    p.set_defaults(func=run)


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CliError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise CliError(f"{path}: cannot read: {exc.strerror}") from None


def _fields(path: Path, n: int, line: str) -> list[str]:
    try:
        return next(csv.reader([line]))
    except csv.Error as exc:  # a field over the csv module's limit (128 KiB), a stray quote
        raise CliError(f"{path}:{n}: not a CSV line ({exc})") from None


def read_results_csv(path: Path) -> list[PairResult]:
    """Parse the pairwise-results CSV; errors name the file and line."""
    text = _read_text(path)
    lines = [
        (n, line)
        for n, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not lines:
        raise CliError(f"{path}: empty results table (no header, no rows)")
    header_no, header_line = lines[0]
    header = [h.strip().lower() for h in _fields(path, header_no, header_line)]
    missing = [c for c in CSV_COLUMNS if c not in header]
    if missing:
        raise CliError(
            f"{path}:{header_no}: header lacks column(s) {', '.join(missing)}; "
            f"expected {','.join(CSV_COLUMNS)}"
        )
    col = {c: header.index(c) for c in CSV_COLUMNS}
    rows: list[PairResult] = []
    for n, line in lines[1:]:
        fields = _fields(path, n, line)
        if len(fields) != len(header):
            raise CliError(f"{path}:{n}: expected {len(header)} fields, found {len(fields)}")
        a = fields[col["player_a"]].strip()
        b = fields[col["player_b"]].strip()
        if not a or not b:
            raise CliError(f"{path}:{n}: empty player name")
        counts: list[int] = []
        for c in ("wins_a", "draws", "wins_b"):
            raw = fields[col[c]].strip()
            shown = raw if len(raw) <= 40 else raw[:37] + "..."
            if not _WHOLE.fullmatch(raw):
                raise CliError(f"{path}:{n}: {c} {shown!r} is not a whole number")
            v = int(raw) if len(raw) <= 12 else MAX_COUNT + 1
            if v < 0:
                raise CliError(f"{path}:{n}: {c} {shown} is negative")
            if v > MAX_COUNT:
                raise CliError(f"{path}:{n}: {c} {shown} is more than {MAX_COUNT:,} games")
            counts.append(v)
        if a == b:
            raise CliError(f"{path}:{n}: {a!r} cannot play themself")
        rows.append(PairResult(a, b, counts[0], counts[1], counts[2]))
    if not rows:
        raise CliError(f"{path}: empty results table (a header but no rows)")
    return rows


def read_results_pgn(path: Path) -> tuple[list[PairResult], int]:
    """Tally finished games of a PGN file by White/Black tags."""
    text = _read_text(path)
    triples: list[tuple[str, str, str]] = []
    handle = io.StringIO(text)
    unnamed = 0
    while True:
        try:
            headers = chess.pgn.read_headers(handle)
        except (ValueError, KeyError) as exc:  # pragma: no cover - python-chess is lenient
            raise CliError(f"{path}: unreadable PGN: {exc}") from None
        if headers is None:
            break
        white = headers.get("White", "?").strip()
        black = headers.get("Black", "?").strip()
        if white in ("", "?") or black in ("", "?"):
            unnamed += 1
            continue
        triples.append((white, black, headers.get("Result", "*").strip()))
    if not triples and not unnamed:
        raise CliError(f"{path}: no PGN games found")
    results, skipped = tally_results(triples)
    if not results:
        raise CliError(f"{path}: no finished games between named players")
    return results, skipped + unnamed


def _fit_json(fit: RankingFit, source: str, skipped: int) -> dict[str, Any]:
    return {
        "source": source,
        "alpha": fit.alpha,
        "alpha_se": fit.alpha_se,
        "alpha_fixed": False,
        "log_likelihood": fit.log_likelihood,
        "gradient_norm": fit.gradient_norm,
        "max_hessian_eigenvalue": fit.max_hessian_eigenvalue,
        "iterations": fit.iterations,
        "constraint": "mean of gammas = 0",
        "skipped_games": skipped,
        "players": [
            {
                "rank": p.rank,
                "name": p.name,
                "gamma": p.gamma,
                "se": p.se,
                "games": p.games,
                "wins": p.wins,
                "draws": p.draws,
                "losses": p.losses,
            }
            for p in fit.players
        ],
    }


def run(args: argparse.Namespace) -> int:
    path = existing_file(args.results)
    fmt = args.format
    if fmt == "auto":
        fmt = "pgn" if path.suffix.lower() == ".pgn" else "csv"
    skipped = 0
    if fmt == "pgn":
        results, skipped = read_results_pgn(path)
    else:
        results = read_results_csv(path)
    with about(str(path), RankingError):
        fit = fit_ranking(results, alpha=args.fix_alpha)
    if args.json:
        data = _fit_json(fit, str(path), skipped)
        data["alpha_fixed"] = args.fix_alpha is not None
        print_json(data)
        return 0
    rows = [
        (
            escape(p.name),
            p.rank,
            f"{p.gamma:+.4f}",
            f"{p.se:.4f}",
            p.games,
            p.wins,
            p.draws,
            p.losses,
        )
        for p in fit.players
    ]
    out = console()
    show(
        f"Maximum-likelihood ranking from {path.name} (gammas have mean 0)",
        ["player", "rank", "gamma", "SE", "games", "W", "D", "L"],
        rows,
    )
    alpha = (
        f"alpha = {fit.alpha:.6f} (fixed)"
        if args.fix_alpha is not None
        else f"alpha = {fit.alpha:.6f} (SE {fit.alpha_se:.4f})"
    )
    out.print(f"{alpha}; log-likelihood = {fit.log_likelihood:.6f}")
    out.print(
        f"gradient norm = {fit.gradient_norm:.1e}; largest Hessian eigenvalue = "
        f"{fit.max_hessian_eigenvalue:.3f} (< 0: a maximum)"
    )
    if skipped:
        out.print(f"skipped {skipped} unfinished or unnamed game(s)")
    return 0
