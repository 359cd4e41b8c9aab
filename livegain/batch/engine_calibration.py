"""Algorithm 3 over a file of games between rated players: every position
through the engine pool, each player's gains against the engine's single
peak at 0 (his d_i), and the engine's strength r_e = mean(r_i - d_i) with a
95 % interval over players (``livegain calibrate``, docs/calibration.md).

With the engine's own distribution of gain (:func:`engine_gains`: for
sampled positions of the file, the score before and after the engine's best
move at the same limit, mover's view), Algorithm 4 can use that histogram
instead of the single peak; :func:`century_gap` shows how it moves the game
of the century's Byrne/Fischer gap (Figure 6 of seed 002).
"""

from __future__ import annotations

import asyncio
import importlib.resources
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chess
import chess.pgn

from livegain.batch.analysis import AnnotatedGame, analyze
from livegain.batch.engine_analysis import ProgressBar, analyse_games, game_positions
from livegain.batch.game_analysis import analyze_game
from livegain.batch.pgn_evals import annotated_from_pgn_evals
from livegain.batch.pgnio import PgnError, read_pgn_games
from livegain.core.errors import LivegainError
from livegain.core.histogram import GainHistogram
from livegain.core.rating import PAPER_ENGINE_RATING, difference
from livegain.core.tournament import EngineStrength, engine_strength
from livegain.engine.cache import EvalCache
from livegain.engine.pool import EnginePool
from livegain.engine.search import SearchLimit

#: Positions sampled for the engine's own gains by default.
DEFAULT_SAMPLE = 1000


class NoRatedPlayerError(LivegainError, ValueError):
    """No player of the file has an Elo tag: Algorithm 3 has nothing to average."""


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


def round_or_none(x: float | None) -> float | None:
    return None if x is None else round(x, 1)


async def calibrate(
    games: list[chess.pgn.Game],
    limit: SearchLimit,
    *,
    engine: str,
    workers: int | None = None,
    cache_path: str | None = None,
    engine_distribution: bool = False,
    sample: int = DEFAULT_SAMPLE,
    progress: bool = False,
) -> Calibration:
    """Algorithm 3 over ``games``, evaluated by a pool of ``engine`` at
    ``limit`` (with the evaluation cache at ``cache_path``); with
    ``engine_distribution``, r_e against the engine's own gains over
    ``sample`` positions too (0: every position). ``progress``: bars on
    stderr. Raises :class:`NoRatedPlayerError` when no player has an Elo tag."""
    cache = EvalCache(cache_path) if cache_path else None
    try:
        async with EnginePool(engine, workers=workers, limit=limit, cache=cache) as pool:
            t0 = time.perf_counter()
            annotated = await _evaluated(pool, games, progress)
            seconds = time.perf_counter() - t0
            searches, hits = pool.stats.searches, pool.stats.cache_hits
            gains: GainHistogram | None = None
            gains_positions = 0
            gains_seconds = 0.0
            if engine_distribution:
                t1 = time.perf_counter()
                gains, gains_positions = await engine_gains(
                    pool, games, annotated, sample, progress
                )
                gains_seconds = time.perf_counter() - t1
            engine_name, pool_workers = pool.engine_name, pool.workers
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
        raise NoRatedPlayerError(
            "no player with an Elo tag (WhiteElo/BlackElo: a whole number 1-3999)"
        )
    strength = engine_strength((r.elo, r.difference) for r in rated if r.elo is not None)
    result = Calibration(
        engine=engine_name,
        limit=limit.describe(),
        workers=pool_workers,
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


async def _evaluated(
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
        "low": round_or_none(s.low),
        "high": round_or_none(s.high),
        "players": s.players,
    }


def calibration_json(result: Calibration, path: Path, command: str) -> dict[str, Any]:
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
                "engine_estimate": round_or_none(r.engine_estimate),
                "expected_measured_engine": None
                if r.expected_measured is None
                else round(r.expected_measured, 4),
                "difference_measured_engine": round_or_none(r.difference_measured),
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
