"""Engine analysis of whole games: every position of every game, all in flight.

Every position (the start position too) of every game is submitted to one
:class:`~livegain.engine.pool.EnginePool` at once, so every worker stays busy
until the last position; positions shared between games (openings) are searched
once, and with a cache file not at all on a second run. Positions that the rules
of chess score with the game's history (a threefold repetition, the 50-move
rule, insufficient material: :func:`~livegain.core.evaluation.rule_evaluation`)
are never sent to the engine, exactly as on a live board.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.pgn

from livegain.batch.annotated import AnnotatedGame
from livegain.core.evaluation import (
    Evaluation,
    check_valid,
    draw_evaluation,
    draw_rule,
    repetitions,
    rule_evaluation,
)
from livegain.core.fen import fen
from livegain.engine.cache import EvalCache
from livegain.engine.launch import DEFAULT_ENGINE, Launched
from livegain.engine.pool import EnginePool, PoolStats
from livegain.engine.search import SearchLimit

ProgressCallback = Callable[[int, int], None]


@dataclass(frozen=True)
class BatchReport:
    """What a batch run did: for provenance in docs and ``--json`` output."""

    engine: str
    limit: str
    workers: int
    games: int
    positions: int
    unique_positions: int
    searches: int
    cache_hits: int
    seconds: float
    by_rule: int = 0
    """Positions scored by the rules of chess (checkmate, stalemate, draws by
    rule with the game's history), never sent to the engine."""

    @property
    def positions_per_second(self) -> float:
        return self.positions / self.seconds if self.seconds > 0 else 0.0


@dataclass
class _GamePositions:
    game: chess.pgn.Game
    boards: list[chess.Board]
    sans: list[str]
    ucis: list[str]
    start_fen: str | None
    ruled: list[Evaluation | None] = field(default_factory=list)
    """Per position: its score by the rules (with the game's history), or None."""
    fens: list[str] = field(default_factory=list)
    """Per position: its FEN."""


def game_positions(game: chess.pgn.Game) -> _GamePositions:
    """The positions of a game's main line: start position, then after each ply,
    each with its score when the rules decide it (the live board's rule: a
    position that play went on from by :func:`draw_rule`, the last one by
    :func:`rule_evaluation`; repetitions counted over the game's positions).
    Raises ValueError when the game starts from an invalid position."""
    board = game.board()
    check_valid(board)  # the later positions come from this one by legal moves
    first = fen(board)
    start_fen = None if first == chess.STARTING_FEN else first
    boards = [board.copy(stack=False)]
    fens = [first]
    sans: list[str] = []
    ucis: list[str] = []
    for move in game.mainline_moves():
        sans.append(board.san(move))
        ucis.append(move.uci())
        board.push(move)
        boards.append(board.copy(stack=False))
        fens.append(fen(board))
    ruled: list[Evaluation | None] = []
    for ply, b in enumerate(boards[:-1]):
        rule = draw_rule(b, repetitions(fens.__getitem__, ply))
        ruled.append(None if rule is None else draw_evaluation(rule))
    ruled.append(rule_evaluation(boards[-1], repetitions(fens.__getitem__, len(fens) - 1)))
    return _GamePositions(game, boards, sans, ucis, start_fen, ruled, fens)


def annotate(pos: _GamePositions, evaluations: Sequence[Evaluation]) -> AnnotatedGame:
    """Build an :class:`AnnotatedGame` from a game's positions and their evaluations."""
    return AnnotatedGame(
        headers=dict(pos.game.headers),
        sans=pos.sans,
        ucis=pos.ucis,
        scores=[ev.cp for ev in evaluations],
        start_fen=pos.start_fen,
        wdl=[ev.wdl for ev in evaluations],
        evaluations=list(evaluations),
        first_mover_is_white=pos.boards[0].turn == chess.WHITE,
    )


def to_search(prepared: Sequence[_GamePositions]) -> tuple[list[chess.Board], list[str]]:
    """The boards of ``prepared`` an engine must search, and their FENs, in
    order: every position the rules of chess do not score with the game's
    history. The local pool and the workers (``analyze --broker``) are given
    exactly these, so that both paths score the same positions the same way."""
    boards = [b for p in prepared for b, r in zip(p.boards, p.ruled, strict=True) if r is None]
    fens = [f for p in prepared for f, r in zip(p.fens, p.ruled, strict=True) if r is None]
    return boards, fens


def annotate_all(
    prepared: Sequence[_GamePositions], searched: Sequence[Evaluation]
) -> list[AnnotatedGame]:
    """The annotated games: each position's score by the rules, else the next
    of ``searched`` (the evaluations of :func:`to_search`'s boards, in order)."""
    it = iter(searched)
    out = [annotate(p, [r if r is not None else next(it) for r in p.ruled]) for p in prepared]
    if next(it, None) is not None:
        raise ValueError("more evaluations than positions to search")
    return out


async def analyse_games(
    games: Sequence[chess.pgn.Game],
    pool: EnginePool,
    on_progress: ProgressCallback | None = None,
) -> list[AnnotatedGame]:
    """Evaluate every position of ``games`` on a started ``pool``."""
    return await _analyse_prepared([game_positions(g) for g in games], pool, on_progress)


async def _analyse_prepared(
    prepared: Sequence[_GamePositions],
    pool: EnginePool,
    on_progress: ProgressCallback | None = None,
) -> list[AnnotatedGame]:
    total = sum(len(p.boards) for p in prepared)
    by_rule = sum(r is not None for p in prepared for r in p.ruled)
    # Every position the rules do not score, of every game, as one batch: the
    # pool searches each distinct one once, its processes chaining their
    # searches without waking the event loop per position.
    boards, fens = to_search(prepared)
    progress = None if on_progress is None else (lambda n: on_progress(by_rule + n, total))
    # Every board was scored by the rules above and comes from a valid one by
    # legal moves (game_positions): the pool need not check them again.
    searched = await pool.evaluate_many(boards, fens, on_progress=progress, by_rule=False)
    if on_progress is not None:
        on_progress(total, total)
    return annotate_all(prepared, searched)


GameSource = Sequence[chess.pgn.Game] | Callable[[], Sequence[chess.pgn.Game]]
"""The games, or a function that reads them (called in a thread while the
engine processes start, so that reading the file overlaps their start-up)."""


async def run_engine_analysis_async(
    games: GameSource,
    *,
    engine_path: str = DEFAULT_ENGINE,
    depth: int | None = None,
    nodes: int | None = None,
    workers: int | None = None,
    cache_path: str | Path | None = None,
    progress: bool = False,
    hash_mb: int = 16,
    while_searching: Callable[[], object] | None = None,
    launched: Launched | None = None,
) -> tuple[list[AnnotatedGame], BatchReport]:
    """The asyncio version of :func:`run_engine_analysis`, with a report.

    ``games`` may be a function that reads them (see :data:`GameSource`).
    ``while_searching`` is called once, when the searches are under way (at
    their first progress report): work to overlap with them rather than to add
    after them. ``launched``: engine processes started ahead, for the pool to
    adopt (:mod:`livegain.engine.launch`).
    """
    limit = SearchLimit.of(depth, nodes)
    cache = EvalCache(cache_path) if cache_path is not None else None
    t0 = time.perf_counter()
    # Started by _prepare_while_starting, closed in the finally (started or not).
    pool = EnginePool(
        engine_path, workers=workers, limit=limit, hash_mb=hash_mb, cache=cache, launched=launched
    )
    try:
        prepared = await _prepare_while_starting(games, pool)
        prepared_total = sum(len(p.boards) for p in prepared)
        if progress:
            annotated = await _with_progress_bar(prepared, pool, prepared_total, while_searching)
        else:
            annotated = await _analyse_prepared(prepared, pool, _once(while_searching))
        stats: PoolStats = pool.stats
        report = BatchReport(
            engine=pool.engine_name,
            limit=limit.describe(),
            workers=pool.workers,
            games=len(prepared),
            positions=prepared_total,
            unique_positions=len({f for p in prepared for f in p.fens}),
            searches=stats.searches,
            cache_hits=stats.cache_hits,
            seconds=time.perf_counter() - t0,
            by_rule=sum(r is not None for p in prepared for r in p.ruled),
        )
    finally:
        await pool.close()
        if cache is not None:
            cache.close()
    return annotated, report


async def _prepare_while_starting(games: GameSource, pool: EnginePool) -> list[_GamePositions]:
    """The games' positions, read (when ``games`` is a function) and computed in
    a thread while the event loop starts the engine processes: their start-up
    is mostly waiting for each process, so reading and preparing cost nothing
    extra there."""
    starting = asyncio.ensure_future(pool.start())

    def prepare() -> list[_GamePositions]:
        return [game_positions(g) for g in (games() if callable(games) else games)]

    try:
        return await asyncio.to_thread(prepare)
    finally:
        await starting  # raises the start's error; awaited even when preparing failed


def _once(
    hook: Callable[[], object] | None, then: ProgressCallback | None = None
) -> ProgressCallback | None:
    """A progress callback that calls ``hook`` at its first call (then ``then``
    at each); None when there is neither."""
    if hook is None:
        return then
    pending = [hook]

    def on_progress(done: int, total: int) -> None:
        if pending:
            pending.pop()()
        if then is not None:
            then(done, total)

    return on_progress


class ProgressBar:
    """A rich progress bar on stderr: positions done of the total, positions/s, ETA.

    ``with ProgressBar(title, total) as on_progress:`` gives the callback to
    pass to :func:`analyse_games` (or to call with ``(done, total)``).
    """

    def __init__(self, title: str, total: int) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(bar_width=16),
            MofNCompleteColumn(),
            TextColumn("positions {task.fields[rate]:5.1f}/s ETA"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self.task = self.progress.add_task(title, total=total, rate=0.0)
        self.start = time.perf_counter()

    def __enter__(self) -> ProgressCallback:
        self.progress.start()

        def update(done: int, _total: int) -> None:
            elapsed = time.perf_counter() - self.start
            self.progress.update(
                self.task, completed=done, rate=done / elapsed if elapsed > 0 else 0.0
            )

        return update

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()


async def _with_progress_bar(
    prepared: Sequence[_GamePositions],
    pool: EnginePool,
    total: int,
    while_searching: Callable[[], object] | None,
) -> list[AnnotatedGame]:
    with ProgressBar(pool.describe(), total) as on_progress:
        return await _analyse_prepared(prepared, pool, _once(while_searching, on_progress))


def run_engine_analysis(
    games: Sequence[chess.pgn.Game],
    *,
    engine_path: str = DEFAULT_ENGINE,
    depth: int | None = None,
    nodes: int | None = None,
    workers: int | None = None,
    cache_path: str | Path | None = None,
    progress: bool = False,
) -> list[AnnotatedGame]:
    """Evaluate every position of every game with an :class:`EnginePool`.

    ``depth``/``nodes``: the search limit (default depth 12). ``workers``:
    engine processes (default: one per core). ``cache_path``: an SQLite
    evaluation cache shared between runs (None: no cache). ``progress``: a
    progress bar with positions/s and ETA on stderr. Raises
    :class:`~livegain.engine.pool.EngineStartError` when the engine cannot be
    started and :class:`~livegain.engine.pool.EngineSearchError` when a
    position cannot be evaluated.
    """
    annotated, _report = asyncio.run(
        run_engine_analysis_async(
            games,
            engine_path=engine_path,
            depth=depth,
            nodes=nodes,
            workers=workers,
            cache_path=cache_path,
            progress=progress,
        )
    )
    return annotated
