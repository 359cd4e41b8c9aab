"""`livegain analyze`: perceived ratings of every player of a PGN file.

Evaluations come from a pooled engine (``--evals engine``, the default) or from
the file's own ``[%eval ...]`` comments (``--evals pgn``; an ``Annotator`` tag
naming an engine and a limit, ``Stockfish 15.1 depth 10``, says whose they are,
and the models of that engine and limit read them). Readable tables for
people, ``--json`` / ``--csv`` for machines, ``--output-pgn`` writes the games
back with evaluations and gains. docs/analyze.md documents the output.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import gc
import itertools
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from livegain.cli.errors import CliError
from livegain.cli.options import add_engine_options, finite_float
from livegain.core.elo import PAPER_ENGINE_RATING
from livegain.core.errors import LivegainError

# Chess, the PGN reader and the engine pool are imported once the engine
# processes have been launched (their start-up then overlaps the imports).
if TYPE_CHECKING:
    from livegain.batch.analysis import FileAnalysis
    from livegain.batch.annotated import AnnotatedGame
    from livegain.batch.eval_source import EvalSource
    from livegain.batch.game_analysis import GameReport
    from livegain.batch.pgn_stream import PgnEvalsStream
    from livegain.engine.launch import Launched

# The report's maths (NumPy) is not needed to read the games or to run the
# engine: in engine mode it is imported in a thread once the engines search (on
# a 2-core machine, its CPU is then shared with the engines instead of added
# after them, and it no longer delays their first search; docs/benchmarks.md
# "analyze against the raw loop"). SciPy is needed only for events with more
# than 16 players in one pairing graph (livegain.core.tournament) and is
# imported there.
# NumPy's masked arrays too: np.unique imports them at its first call (NumPy 2),
# which would otherwise be in the report, after the searches.
_REPORT_MODULES = (
    "livegain.batch.analysis",
    "livegain.models.engine",
    "livegain.models.perceived",
    "numpy.ma",
)


def _preload_report_modules(tables: bool) -> threading.Thread:
    """Import the report's modules in a thread (and rich's tables when the
    report is printed as tables), and read the calibration files the report
    will pick its engine rating and model from."""
    import importlib

    names = (*_REPORT_MODULES, "rich.table") if tables else _REPORT_MODULES

    def load() -> None:
        for name in names:
            importlib.import_module(name)
        from livegain.models.files import CalibrationError
        from livegain.models.perceived import read_shipped_files

        with contextlib.suppress(CalibrationError):  # the report says why when it picks
            read_shipped_files()

    thread = threading.Thread(target=load, name="livegain-preload", daemon=True)
    thread.start()
    return thread


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "analyze",
        help="perceived Elo ratings of the players of a PGN file",
        description=(
            "Gain per move and perceived Elo ratings (Algorithms 1-4 of the gain-per-move "
            "paper) for every game and player of a PGN file."
        ),
    )
    p.add_argument("pgn", metavar="FILE.pgn", help="PGN file with one or more games")
    p.add_argument(
        "--evals",
        choices=("engine", "pgn"),
        default="engine",
        help="evaluate with the engine (default) or read [%%eval] comments from the PGN",
    )
    p.add_argument(
        "--engine-rating",
        type=finite_float,
        default=None,
        metavar="R",
        help="engine strength r_e (default: the shipped calibration in engine mode, "
        f"{PAPER_ENGINE_RATING:.0f} (the paper's) in pgn mode)",
    )
    add_engine_options(p)
    from livegain.cli.worker import add_broker_options

    add_broker_options(p, url_required=False)  # --broker: `livegain worker` processes evaluate
    p.add_argument(
        "--job-timeout",
        type=finite_float,
        default=30.0,
        metavar="S",
        help="with --broker: seconds a worker has for a position before another gets it (30)",
    )
    p.add_argument(
        "--pairing",
        choices=("aggregate", "pair"),
        default="aggregate",
        help="d_ij for Algorithm 2: whole-event histograms of each pair that met "
        "(aggregate, default) or only the pair's own games (pair)",
    )
    p.add_argument(
        "--interval",
        choices=("cluster", "bootstrap"),
        default="cluster",
        help="interval of a player's aggregate over several games: cluster-robust t over "
        "games joined with Wilson (default), or a percentile bootstrap over games",
    )
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument(
        "--kind",
        choices=("online-rapid", "classical-otb"),
        default=None,
        help="kind of game of the human W/D/L model (default: each game's TimeControl tag, "
        "else classical-otb)",
    )
    p.add_argument(
        "--scale",
        choices=("fide", "lichess"),
        default=None,
        help="rating scale of the perceived-rating model (default: lichess when the first "
        "game's Site is a URL (a game played online), else fide)",
    )
    p.add_argument("--trace", action="store_true", help="print the move-by-move traces")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="JSON on stdout")
    out.add_argument("--csv", action="store_true", help="CSV (one row per player) on stdout")
    p.add_argument("--output-pgn", default=None, metavar="OUT", help="write annotated PGN")
    p.set_defaults(func=run)


def _stream(args: argparse.Namespace, progress: _Progress | None) -> PgnEvalsStream:
    from livegain.batch.pgn_stream import PgnEvalsStream

    return PgnEvalsStream(
        args.pgn,
        workers=args.workers,
        on_progress=progress.reading if progress is not None else None,
    )


def _engine_read(args: argparse.Namespace) -> tuple[list[AnnotatedGame], list[str], str]:
    """Engine mode: the games analysed by the engine, the skipped ones (a game
    that cannot be read is skipped with its reason; an error only when none is
    left), and the engine's name."""
    from livegain.engine.launch import DEFAULT_ENGINE, Launched, default_workers

    local = not getattr(args, "broker", None)
    count = (args.workers or default_workers()) if local else 0
    # The engine processes start loading first, then the rest is imported and
    # the file read (while the pool starts): the three overlap.
    with Launched(args.engine or DEFAULT_ENGINE, count) as launched:
        from livegain.batch.pgnio import read_pgn_games_skipping

        read: list[tuple[list[int], list[str]]] = []

        def games() -> list[Any]:
            found, numbers, skipped = read_pgn_games_skipping(args.pgn)
            read.append((numbers, skipped))
            return found

        annotated, engine_name = engine_games(args, games, launched)
    ((numbers, skipped),) = read
    for game, number in zip(annotated, numbers, strict=True):
        game.extra["game_number"] = str(number)
    return annotated, skipped, engine_name


def _stderr_is_tty() -> bool:
    return sys.stderr.isatty()


class _Progress:
    """The rich progress bar of ``--evals pgn`` on stderr: the file read
    (bytes, games, time left; the first games are analysed meanwhile), then
    the rest of the analysis. Refreshed on each update
    only: no refresh thread, so the reading processes can be forked."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(bar_width=24),
            TaskProgressColumn(),
            TextColumn("{task.fields[games]:,} games"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(stderr=True, force_terminal=True),
            auto_refresh=False,
            transient=False,
        )
        self.task = self.progress.add_task("reading", total=None, games=0)
        self.progress.start()

    def reading(self, done: int, total: int, games: int) -> None:
        self.progress.update(self.task, completed=done, total=total, games=games)
        if done >= total:  # read to the end: the analysis goes on
            self.task = self.progress.add_task("analysing", total=None, games=games)
        self.progress.refresh()

    def stop(self) -> None:
        if self.progress.live.is_started:
            self.progress.update(self.task, completed=1, total=1)
            self.progress.stop()


def engine_games(
    args: argparse.Namespace,
    games: list[Any] | Callable[[], list[Any]],
    launched: Launched | None = None,
) -> tuple[list[AnnotatedGame], str]:
    """The games analysed by the engine, and the engine's name (as it reports
    it). ``games`` may be a function that reads them: the local pool calls it
    while its processes start. ``launched``: processes started ahead for the
    pool (:mod:`livegain.engine.launch`)."""
    import asyncio

    from livegain.batch.engine_analysis import run_engine_analysis_async
    from livegain.batch.pgnio import PgnError

    if getattr(args, "broker", None):
        return _remote_games(args, games() if callable(games) else games)
    kwargs: dict[str, Any] = {
        "depth": args.depth,
        "nodes": args.nodes,
        "workers": args.workers,
        "cache_path": args.cache,
        "progress": sys.stderr.isatty(),
    }
    if args.engine is not None:
        kwargs["engine_path"] = args.engine
    try:
        annotated, report = asyncio.run(
            run_engine_analysis_async(
                games,
                while_searching=lambda: _preload_report_modules(
                    not (getattr(args, "json", False) or getattr(args, "csv", False))
                ),
                launched=launched,
                **kwargs,
            )
        )
        return annotated, report.engine
    except (CliError, PgnError):
        raise
    except Exception as exc:  # engine start/search failures: one line, no traceback
        name = type(exc).__name__
        if "Engine" in name or isinstance(exc, OSError | TimeoutError | ValueError):
            if isinstance(exc, LivegainError):  # livegain's own: said about the engine
                exc.add_note("engine")
                raise
            raise CliError(f"engine: {exc}") from exc
        raise


def _remote_games(args: argparse.Namespace, games: list[Any]) -> tuple[list[AnnotatedGame], str]:
    """``--broker``: the games analysed by `livegain worker` processes (docs/workers.md)."""
    import asyncio

    from livegain.batch.remote_analysis import analyse_games_remote
    from livegain.cli.worker import broker_from_args
    from livegain.engine.search import SearchLimit

    if args.workers is not None or args.engine is not None:
        raise CliError("--workers and --engine are the workers' own options, not --broker's")
    if not args.job_timeout > 0:
        raise CliError(f"--job-timeout must be positive, got {args.job_timeout:g}")
    broker = broker_from_args(args)
    import logging

    import structlog

    # Warnings (refused workers, lost connections) on stderr; stdout is the report's.
    structlog.configure(
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
    )
    try:
        annotated, engine_name, _ = asyncio.run(
            analyse_games_remote(
                games,
                broker,
                SearchLimit.of(args.depth, args.nodes),
                cache_path=args.cache,
                prefix=args.prefix,
                job_timeout=args.job_timeout,
            )
        )
    except Exception as exc:  # no worker, engine failures: one line, no traceback
        if "Engine" in type(exc).__name__ or isinstance(exc, OSError | ValueError):
            raise CliError(f"engine workers: {exc}") from exc
        raise
    return annotated, engine_name


def eval_source_of(
    args: argparse.Namespace, engine_name: str | None, headers: Mapping[str, str]
) -> EvalSource:
    """The evaluation source of this run (``--evals``; in engine mode, the
    engine that ran at ``--depth``/``--nodes``), from the first game's tags
    (:func:`~livegain.batch.eval_source.eval_source`)."""
    from livegain.batch.eval_source import eval_source

    limit = None
    if args.evals == "engine":
        from livegain.engine.search import SearchLimit

        limit = SearchLimit.of(args.depth, args.nodes).describe()
    return eval_source(args.evals, headers, engine_name, limit)


def run(args: argparse.Namespace) -> int:
    # A batch run builds millions of small objects (plies, trace points, JSON
    # dicts) that hold no reference cycles: the cyclic garbage collector only
    # rescans them. Off for the run: 33.1 s -> 26.8 s on 5,000 lichess games
    # (docs/analyze.md); reference counting still frees everything.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _run(args)
    finally:
        if enabled:
            gc.enable()


class _Output:
    """Where each game's report goes as soon as it is analysed: the JSON
    document (streamed), the kept reports for the readable tables, nothing
    for CSV (players only); and the annotated PGN with ``--output-pgn``."""

    def __init__(self, args: argparse.Namespace, run: FileAnalysis, head: dict[str, Any]) -> None:
        from livegain.batch.pgn_write import AnnotatedPgnWriter
        from livegain.batch.report_json import JsonReportWriter

        self.args = args
        self.run = run
        self.json = JsonReportWriter(sys.stdout, head) if args.json else None
        self.kept: list[GameReport] | None = None if args.json or args.csv else []
        self.pgn = AnnotatedPgnWriter(args.output_pgn) if args.output_pgn else None
        self.annotator: str | None = None

    def add(self, game: AnnotatedGame) -> None:
        from livegain.batch.report_json import game_json

        rep = self.run.add(game)
        if self.json is not None:
            self.json.game(game_json(rep, self.run.model))
        elif self.kept is not None:
            self.kept.append(rep)
        if self.pgn is not None:
            if self.annotator:
                # the evaluations are now this engine's at this limit: read back
                # with --evals pgn, the file gets the same models and r_e
                game.headers = {**game.headers, "Annotator": self.annotator}
            try:
                self.pgn.write(game)
            except OSError as exc:
                raise CliError(
                    f"{self.args.output_pgn}: cannot write ({exc.strerror or exc})"
                ) from exc

    def close(self) -> None:
        if self.pgn is not None:
            try:
                self.pgn.close()
            except OSError as exc:
                raise CliError(
                    f"{self.args.output_pgn}: cannot write ({exc.strerror or exc})"
                ) from exc


def _run(args: argparse.Namespace) -> int:
    for flag in ("depth", "nodes", "workers"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            raise CliError(f"--{flag} must be at least 1")
    progress = _Progress() if args.evals == "pgn" and _stderr_is_tty() else None
    stream: PgnEvalsStream | None = None
    skipped: list[str] = []
    truncated: list[str] = []
    try:
        games: Iterable[AnnotatedGame]
        if args.evals == "pgn":
            # the games are analysed while the next ones are read
            stream = _stream(args, progress)
            engine_name: str | None = None
            rest = iter(stream)
            try:  # the first game (read now, kept for the analysis) names the source
                first = next(rest, None)
            except LivegainError:
                raise
            except ValueError as exc:
                raise CliError(str(exc)) from exc
            headers: Mapping[str, str] = {} if first is None else first.headers
            games = itertools.chain(() if first is None else (first,), rest)
        else:
            read, skipped, engine_name = _engine_read(args)
            games = read
            headers = read[0].headers if read else {}
        from livegain.batch.analysis import FileAnalysis
        from livegain.batch.eval_source import (
            WdlModels,
            default_engine_rating,
            default_scale,
            other_annotators,
            perceived_model,
        )

        evals = eval_source_of(args, engine_name, headers)
        if evals.via:
            engine_name = evals.engine
        scale, scale_why = (
            (args.scale, "--scale") if args.scale is not None else default_scale(headers)
        )
        engine_rating, source = default_engine_rating(evals, args.engine_rating)
        model, model_why = perceived_model(evals, scale=scale)
        wdl = WdlModels(evals, args.kind)
        run = FileAnalysis(
            engine_rating,
            pairing=args.pairing,
            interval=args.interval,
            seed=args.seed,
            engine_name=engine_name,
            model=model,
            wdl=wdl,
        )
        head = run.head_json()
        head["engine"]["source"] = source
        head["engine"]["limit"] = evals.limit
        if head.get("calibration") is not None:
            head["calibration"]["choice"] = model_why
        output = _Output(args, run, head)
        if args.evals == "engine" and engine_name:
            output.annotator = f"{engine_name} {evals.limit}"
        others = 0
        try:
            for game in games:
                if evals.via:
                    others += other_annotators([game.headers], evals)
                output.add(game)
            if stream is not None:
                # a game that cannot be read or analysed is skipped with its
                # reason; an error only when none is left
                stream.check()
                skipped, truncated = stream.skipped, stream.truncated
            output.close()
        except LivegainError:  # PgnError among them: as it is
            raise
        except ValueError as exc:
            raise CliError(str(exc)) from exc
    finally:
        if stream is not None:
            stream.close()
        if progress is not None:
            progress.stop()
    report = run.report(output.kept)
    report.skipped = skipped
    for message in skipped:
        print(f"livegain analyze: skipped {message}", file=sys.stderr)
    for message in truncated:
        print(f"livegain analyze: truncated {message}", file=sys.stderr)
    if others:
        print(
            f"livegain analyze: {others} game(s) name another Annotator than the first game's; "
            f"all are read as {evals.engine} {evals.limit}'s evaluations",
            file=sys.stderr,
        )
    if output.json is not None:
        from livegain.batch.report_json import report_tail_json

        tail = report_tail_json(report)
        tail["scale"] = {"wanted": scale, "choice": scale_why}
        tail["wdl"] = wdl.to_json()
        tail["truncated"] = truncated
        output.json.finish(tail)
    elif args.csv:
        from livegain.batch.report_csv import csv_rows

        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerows(csv_rows(report))
    else:
        from livegain.cli.analyze_tables import print_report

        print_report(report, source, trace=args.trace, model_why=model_why, wdl=wdl.describe())
    return 0
