"""`livegain calibrate`: the engine's strength r_e from rated players (Algorithm 3).

Every position of every game is evaluated by the engine pool at the given
limit; each player's gains over the whole file give his expected score p_i
against the engine (single peak at 0) and the difference d_i; the engine's
strength is the mean of r_i - d_i over players with an Elo tag, with a 95 %
interval over players.

``--engine-distribution`` also measures the engine's own distribution of gain
at the same limit: for sampled positions of the file, the score before and
after the engine's best move, from the mover's view. Algorithm 4 can then use
that histogram instead of the single peak; the command reports how it moves
r_e and the game of the century's Byrne/Fischer gap (Figure 6 of seed 002).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.resources
import shlex
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import chess
import chess.pgn

from livegain.batch.analysis import AnnotatedGame, analyze, analyze_game
from livegain.batch.engine_analysis import ProgressBar, analyse_games, game_positions
from livegain.batch.pgnio import PgnError, annotated_from_pgn_evals, read_pgn_games
from livegain.calibration import (
    CalibrationError,
    EngineCalibration,
    config_path,
    store_calibration,
    today,
)
from livegain.cli._common import (
    CliError,
    add_engine_options,
    console,
    existing_file,
    print_json,
    table,
)
from livegain.core.histogram import GainHistogram
from livegain.core.rating import PAPER_ENGINE_RATING, difference
from livegain.core.tournament import EngineStrength, engine_strength
from livegain.engine.cache import CacheError, EvalCache
from livegain.engine.pool import DEFAULT_ENGINE, EngineError, EnginePool, SearchLimit

DEFAULT_SAMPLE = 1000


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


@dataclass
class PlayerRow:
    name: str
    elo: float | None
    moves: int
    expected: float
    difference: float
    engine_estimate: float | None
    expected_measured: float | None = None
    difference_measured: float | None = None


@dataclass
class Calibration:
    engine: str
    limit: str
    workers: int
    games: int
    positions: int
    searches: int
    cache_hits: int
    seconds: float
    players: list[PlayerRow]
    strength: EngineStrength
    strength_measured: EngineStrength | None = None
    engine_gains: GainHistogram | None = None
    gains_positions: int = 0
    gains_seconds: float = 0.0
    century: dict[str, Any] | None = None


def run(args: argparse.Namespace) -> int:
    for flag in ("depth", "nodes", "workers"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            raise CliError(f"--{flag} must be at least 1")
    if args.sample < 0:
        raise CliError("--sample must be 0 (every position) or more")
    path = existing_file(args.pgn)
    try:
        games = read_pgn_games(path)
    except PgnError as exc:
        raise CliError(str(exc)) from exc
    if not games:
        raise CliError(f"{args.pgn}: no games")
    limit = SearchLimit.of(args.depth, args.nodes)
    try:
        result = asyncio.run(_calibrate(args, games, limit))
    except (EngineError, CacheError) as exc:
        raise CliError(f"engine: {exc}") from exc
    command = "livegain calibrate " + " ".join(shlex.quote(a) for a in sys.argv[2:])
    if args.write_config is not None:
        target = Path(args.write_config) if args.write_config else config_path()
        entry = EngineCalibration(
            name=result.engine,
            limit=result.limit,
            rating=round(result.strength.rating, 1),
            low=_round(result.strength.low),
            high=_round(result.strength.high),
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
        except (OSError, CalibrationError) as exc:
            raise CliError(f"{target}: cannot write calibration ({exc})") from exc
        print(f"calibration written to {written}", file=sys.stderr)
    if args.json:
        print_json(_to_json(result, path, command))
    else:
        _print(result)
    return 0


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 1)


async def _calibrate(
    args: argparse.Namespace, games: list[chess.pgn.Game], limit: SearchLimit
) -> Calibration:
    cache = EvalCache(args.cache) if args.cache else None
    progress = sys.stderr.isatty()
    try:
        async with EnginePool(args.engine, workers=args.workers, limit=limit, cache=cache) as pool:
            t0 = time.perf_counter()
            annotated = await _run(pool, games, progress)
            seconds = time.perf_counter() - t0
            searches, hits = pool.stats.searches, pool.stats.cache_hits
            gains: GainHistogram | None = None
            gains_positions = 0
            gains_seconds = 0.0
            if args.engine_distribution:
                t1 = time.perf_counter()
                gains, gains_positions = await engine_gains(
                    pool, games, annotated, args.sample, progress
                )
                gains_seconds = time.perf_counter() - t1
            engine, workers = pool.engine_name, pool.workers
    finally:
        if cache is not None:
            cache.close()

    report = analyze(annotated, PAPER_ENGINE_RATING)
    rows = [
        PlayerRow(
            name=p.name,
            elo=p.elo,
            moves=p.histogram.n,
            expected=p.perceived.expected,
            difference=p.perceived.difference,
            engine_estimate=None if p.elo is None else p.elo - p.perceived.difference,
        )
        for p in report.players
        if p.histogram.n > 0
    ]
    rated = [r for r in rows if r.elo is not None]
    if not rated:
        raise CliError(f"{args.pgn}: no player with an Elo tag (WhiteElo/BlackElo)")
    strength = engine_strength((r.elo, r.difference) for r in rated if r.elo is not None)
    result = Calibration(
        engine=engine,
        limit=limit.describe(),
        workers=workers,
        games=len(games),
        positions=sum(len(g.scores) for g in annotated),
        searches=searches,
        cache_hits=hits,
        seconds=seconds,
        players=rows,
        strength=strength,
        engine_gains=gains,
        gains_positions=gains_positions,
        gains_seconds=gains_seconds,
    )
    if gains is not None and gains.n > 0:
        by_name = {p.name: p for p in report.players}
        for r in rows:
            p = by_name[r.name].histogram.expected_score_vs_engine(gains)
            r.expected_measured = p
            r.difference_measured = difference(p)
        result.strength_measured = engine_strength(
            (r.elo, r.difference_measured)
            for r in rated
            if r.elo is not None and r.difference_measured is not None
        )
        result.century = century_gap(gains)
    return result


async def _run(
    pool: EnginePool, games: list[chess.pgn.Game], progress: bool
) -> list[AnnotatedGame]:
    if not progress:
        return await analyse_games(games, pool)
    with ProgressBar(pool.describe(), sum(1 + len(list(g.mainline_moves())) for g in games)) as cb:
        return await analyse_games(games, pool, cb)


async def engine_gains(
    pool: EnginePool,
    games: list[chess.pgn.Game],
    annotated: list[AnnotatedGame],
    sample: int,
    progress: bool = False,
) -> tuple[GainHistogram, int]:
    """The engine's gain distribution: its best move's gain, mover's view.

    For each sampled position that is not finished: s_before is the position's
    evaluation (already known), s_after the evaluation after the engine's own
    best move at the same limit; gain = s_after - s_before for White to move,
    the negative for Black. Positions are spread evenly over the file.
    """
    candidates: list[tuple[chess.Board, int, str]] = []
    for game, ann in zip(games, annotated, strict=True):
        assert ann.evaluations is not None
        for board, ev in zip(game_positions(game).boards, ann.evaluations, strict=True):
            if ev.best is not None and not board.is_game_over():
                candidates.append((board, ev.cp, ev.best))
    if sample and sample < len(candidates):
        step = len(candidates) / sample
        candidates = [candidates[int(i * step)] for i in range(sample)]

    async def one(board: chess.Board, before: int, best: str) -> int:
        after_board = board.copy(stack=False)
        after_board.push_uci(best)
        after = (await pool.evaluate(after_board, priority=1)).cp
        delta = after - before
        return delta if board.turn == chess.WHITE else -delta

    hist = GainHistogram()
    done = 0

    async def counted(board: chess.Board, before: int, best: str, cb: Any) -> None:
        nonlocal done
        hist.add(await one(board, before, best))
        done += 1
        if cb is not None:
            cb(done, len(candidates))

    if progress:
        with ProgressBar(f"engine gains, {pool.describe()}", len(candidates)) as cb:
            async with asyncio.TaskGroup() as tg:
                for b, s, m in candidates:
                    tg.create_task(counted(b, s, m, cb))
    else:
        async with asyncio.TaskGroup() as tg:
            for b, s, m in candidates:
                tg.create_task(counted(b, s, m, None))
    return hist, len(candidates)


def century_gap(engine: GainHistogram) -> dict[str, Any] | None:
    """Byrne/Fischer (seed 002, Figures 1 and 6) with the single peak and with ``engine``.

    The game's scores are the paper's Figure 1 evaluations (Houdini 1.5a depth
    20), shipped as livegain/data/game_of_the_century.pgn.
    """
    resource = importlib.resources.files("livegain") / "data" / "game_of_the_century.pgn"
    try:
        games = read_pgn_games(Path(str(resource)))
        ann = annotated_from_pgn_evals(games[0])
    except (PgnError, OSError, IndexError):
        return None
    peak = analyze_game(ann, PAPER_ENGINE_RATING)
    measured = analyze_game(ann, PAPER_ENGINE_RATING, engine)
    return {
        "white": ann.white,
        "black": ann.black,
        # Algorithm 1 between the two players, in Black's favour (seed 002: +113)
        "algorithm1_gap": round(-peak.head_to_head.difference, 1),
        "single_peak": {
            "white": round(peak.white.perceived.difference, 1),
            "black": round(peak.black.perceived.difference, 1),
            "gap": round(peak.black.perceived.difference - peak.white.perceived.difference, 1),
        },
        "measured_engine": {
            "white": round(measured.white.perceived.difference, 1),
            "black": round(measured.black.perceived.difference, 1),
            "gap": round(
                measured.black.perceived.difference - measured.white.perceived.difference, 1
            ),
        },
    }


def _strength_json(s: EngineStrength | None) -> dict[str, Any] | None:
    if s is None:
        return None
    return {
        "rating": round(s.rating, 1),
        "low": _round(s.low),
        "high": _round(s.high),
        "players": s.players,
    }


def _to_json(result: Calibration, path: Path, command: str) -> dict[str, Any]:
    gains = result.engine_gains
    return {
        "engine": result.engine,
        "limit": result.limit,
        "source": path.name,
        "command": command,
        "workers": result.workers,
        "games": result.games,
        "positions": result.positions,
        "searches": result.searches,
        "cache_hits": result.cache_hits,
        "seconds": round(result.seconds, 1),
        "engine_strength": _strength_json(result.strength),
        "engine_strength_measured_engine": _strength_json(result.strength_measured),
        "players": [
            {
                "name": r.name,
                "elo": r.elo,
                "moves": r.moves,
                "expected": round(r.expected, 4),
                "difference": round(r.difference, 1),
                "engine_estimate": _round(r.engine_estimate),
                "expected_measured_engine": None
                if r.expected_measured is None
                else round(r.expected_measured, 4),
                "difference_measured_engine": _round(r.difference_measured),
            }
            for r in result.players
        ],
        "engine_gains": None
        if gains is None
        else {
            "positions": result.gains_positions,
            "seconds": round(result.gains_seconds, 1),
            "mean": round(gains.mean(), 2) if gains.n else None,
            "zero": gains.zero,
            "negative": gains.negative,
            "positive": gains.positive,
            "counts": {str(k): v for k, v in sorted(gains.counts().items())},
        },
        "game_of_the_century": result.century,
    }


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
