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
import json
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from livegain.cli._common import CliError, add_engine_options, console, table
from livegain.core.elo import PAPER_ENGINE_RATING

# Chess, the PGN reader and the engine pool are imported once the engine
# processes have been launched (their start-up then overlaps the imports).
if TYPE_CHECKING:
    from livegain.batch.analysis import AnalysisReport, GameReport, PlayerReport
    from livegain.batch.annotated import AnnotatedGame
    from livegain.batch.pgnio import PgnEvalsStream
    from livegain.core.accuracy import Phase, PlayerAccuracy
    from livegain.core.human_wdl import HumanWdlModel
    from livegain.core.perceived import CalibratedRating, PerceivedModel
    from livegain.core.rating import PerceivedRating
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
_REPORT_MODULES = ("livegain.batch.analysis", "livegain.calibration", "numpy.ma")


def _preload_report_modules(tables: bool) -> threading.Thread:
    """Import the report's modules in a thread (and rich's tables when the
    report is printed as tables), and read the calibration files the report
    will pick its engine rating and model from."""
    import importlib

    names = (*_REPORT_MODULES, "rich.table") if tables else _REPORT_MODULES

    def load() -> None:
        for name in names:
            importlib.import_module(name)
        from livegain.calibration import CalibrationError, read_shipped_files

        with contextlib.suppress(CalibrationError):  # the report says why when it picks
            read_shipped_files()

    thread = threading.Thread(target=load, name="livegain-preload", daemon=True)
    thread.start()
    return thread


_MARKS = {"games-cluster": " g", "bootstrap-games": " b"}

#: More games than this: one summary row per game instead of a table per game.
DETAIL_GAMES = 8

#: More games than this: ``--json`` is written without indentation (Python's C
#: encoder: several times faster, and a third smaller; docs/analyze.md).
COMPACT_JSON_GAMES = 200


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
        type=float,
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
        type=float,
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
    from livegain.batch.pgnio import PgnError, PgnEvalsStream

    try:
        return PgnEvalsStream(
            args.pgn,
            workers=args.workers,
            on_progress=progress.reading if progress is not None else None,
        )
    except PgnError as exc:  # no such file, a directory
        raise CliError(str(exc)) from exc


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
        from livegain.batch.pgnio import PgnError, read_pgn_games_skipping

        read: list[tuple[list[int], list[str]]] = []

        def games() -> list[Any]:
            found, numbers, skipped = read_pgn_games_skipping(args.pgn)
            read.append((numbers, skipped))
            return found

        try:
            annotated, engine_name = _engine_games(args, games, launched)
        except PgnError as exc:
            raise CliError(str(exc)) from exc
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


def _print_json(data: Any, compact: bool) -> None:
    """print_json's output (or, ``compact``, the same without indentation: the
    C encoder, for big reports), encoded first and written at once."""
    text = json.dumps(data, default=str) if compact else json.dumps(data, indent=2, default=str)
    sys.stdout.write(text + "\n")


def _engine_games(
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
            raise CliError(f"engine: {exc}") from exc
        raise


def _remote_games(args: argparse.Namespace, games: list[Any]) -> tuple[list[AnnotatedGame], str]:
    """``--broker``: the games analysed by `livegain worker` processes (docs/workers.md)."""
    import asyncio

    from livegain.cli.worker import broker_from_args
    from livegain.engine.pool import SearchLimit
    from livegain.remote.evaluator import analyse_games_remote

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


class EvalSource(NamedTuple):
    """Whose evaluations the games carry, as the model files name sources:
    ``evals`` "engine" (with the engine's name and limit) or "pgn"
    (lichess's ``[%eval]`` comments, engine unknown)."""

    evals: str
    engine: str | None
    limit: str | None
    #: where the engine and limit came from ("" in engine mode, else the tag)
    via: str = ""


def eval_source(
    args: argparse.Namespace, engine_name: str | None, headers: Mapping[str, str]
) -> EvalSource:
    """The evaluation source of this run: the engine that ran and its limit;
    with ``--evals pgn``, the engine and limit the first game's ``Annotator``
    tag names (:func:`~livegain.batch.annotated.annotator_engine`), else lichess's
    evaluations."""
    if args.evals == "engine":
        from livegain.engine.pool import SearchLimit

        return EvalSource("engine", engine_name, SearchLimit.of(args.depth, args.nodes).describe())
    from livegain.batch.annotated import annotator_engine

    named = annotator_engine(headers)
    if named is None:
        return EvalSource("pgn", None, None)
    return EvalSource("engine", named[0], named[1], " (the file's Annotator tag)")


def default_scale(headers: Mapping[str, str]) -> tuple[str, str]:
    """(rating scale, why) for the perceived-rating model when ``--scale`` is
    not given (:func:`~livegain.core.perceived.scale_of_tags`)."""
    from livegain.core.perceived import scale_of_tags

    if scale_of_tags(headers) == "lichess":
        return "lichess", "default: the Site tag is a URL (a game played online)"
    return "fide", "default: over-the-board games (no URL in the Site tag)"


def default_engine_rating(
    args: argparse.Namespace, engine_name: str | None = None, source: EvalSource | None = None
) -> tuple[float, str]:
    """(r_e, where it came from): the calibration of this engine at this limit,
    as ``livegain serve`` picks it (in pgn mode, of the engine and limit of
    the file's Annotator tag; the paper's without one)."""
    if args.engine_rating is not None:
        return float(args.engine_rating), "--engine-rating"
    if args.evals == "pgn" and (source is None or source.evals == "pgn"):
        return PAPER_ENGINE_RATING, "the paper's Houdini 1.5a depth 20"
    from livegain.calibration import find_calibration
    from livegain.engine.pool import SearchLimit

    via = ""
    try:
        if source is not None and source.evals == "engine" and source.limit is not None:
            engine_name, limit, via = source.engine, source.limit, source.via
        else:
            limit = SearchLimit.of(args.depth, args.nodes).describe()
        entry = find_calibration(engine_name, limit)
    except Exception:  # a broken calibration file must not stop an analysis
        return PAPER_ENGINE_RATING, "the paper's Houdini 1.5a depth 20 (calibration unreadable)"
    if entry is None:
        return (
            PAPER_ENGINE_RATING,
            "the paper's Houdini 1.5a depth 20 (no calibration for "
            f"{engine_name or 'this engine'} at {limit}{via})",
        )
    return float(entry.rating), f"calibration: {entry.name} {entry.limit}{via}"


def perceived_model(
    args: argparse.Namespace,
    engine_name: str | None = None,
    path: str | None = None,
    source: EvalSource | None = None,
    scale: str | None = None,
) -> tuple[PerceivedModel | None, str]:
    """The calibrated model for these evaluations (as ``livegain serve`` picks
    it for its engine) on the rating ``scale``, from the shipped file or
    ``path``, and a line saying which and why (or why there is none)."""
    from livegain.calibration import pick_perceived_model

    if source is None:
        source = eval_source(args, engine_name, {})
    return pick_perceived_model(source.evals, source.engine, source.limit, path, scale)


class WdlModels:
    """The human W/D/L model of each game (:data:`livegain.batch.analysis.WdlChooser`):
    its kind from ``--kind``, else from its tags
    (:func:`~livegain.core.human_wdl.kind_of_tags`); the model of this
    evaluation source and kind, picked once per kind. ``used`` keeps each
    kind's (model, why, games)."""

    def __init__(self, source: EvalSource, kind: str | None, path: str | None = None) -> None:
        self.source = source
        self.kind = kind
        self.path = path
        self.used: dict[str, tuple[HumanWdlModel | None, str, int]] = {}

    def __call__(self, headers: Mapping[str, str]) -> tuple[str, HumanWdlModel | None]:
        from livegain.core.human_wdl import kind_of_tags

        kind = self.kind or kind_of_tags(headers)
        kept = self.used.get(kind)
        if kept is None:
            from livegain.wdl_models import pick_wdl_model

            s = self.source
            model, why = pick_wdl_model(s.evals, kind, s.engine, s.limit, self.path)
            kept = (model, why, 0)
        self.used[kind] = (kept[0], kept[1], kept[2] + 1)
        return kind, kept[0]

    def to_json(self) -> list[dict[str, Any]]:
        """One entry per kind of game met: the model's name (null: none, the
        engine's or the win-chance curve's W/D/L is shown), why, and how many
        games."""
        return [
            {
                "kind": kind,
                "model": None if model is None else model.name,
                "choice": why,
                "games": games,
            }
            for kind, (model, why, games) in sorted(self.used.items())
        ]

    def describe(self) -> str:
        """One line for the readable report."""
        parts = []
        for kind, (model, why, games) in sorted(self.used.items()):
            what = (
                f"human model {model.name}"
                if model is not None
                else "the engine's, else the win-chance curve's"
            )
            parts.append(f"{kind} ({games} game{'s' if games != 1 else ''}): {what}; {why}")
        return "W/D/L: " + " | ".join(parts) if parts else "W/D/L: no game"


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


def _run(args: argparse.Namespace) -> int:
    for flag in ("depth", "nodes", "workers"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            raise CliError(f"--{flag} must be at least 1")
    progress = _Progress() if args.evals == "pgn" and _stderr_is_tty() else None
    stream: PgnEvalsStream | None = None
    truncated: list[str] = []
    try:
        if args.evals == "pgn":
            # the games are analysed while the next ones are read
            stream = _stream(args, progress)
            games: Sequence[AnnotatedGame] = stream
            engine_name: str | None = None
            try:  # the first game (read now, kept for the analysis) names the source
                first = next(iter(stream), None)
            except ValueError as exc:
                raise CliError(str(exc)) from exc
            headers: Mapping[str, str] = {} if first is None else first.headers
        else:
            games, skipped, engine_name = _engine_read(args)
            headers = games[0].headers if games else {}
        from livegain.batch.analysis import analyze

        evals = eval_source(args, engine_name, headers)
        if evals.via:
            engine_name = evals.engine
        scale, scale_why = (
            (args.scale, "--scale") if args.scale is not None else default_scale(headers)
        )
        engine_rating, source = default_engine_rating(args, engine_name, evals)
        model, model_why = perceived_model(args, engine_name, source=evals, scale=scale)
        wdl = WdlModels(evals, args.kind)
        try:
            report = analyze(
                games,
                engine_rating,
                pairing=args.pairing,
                interval=args.interval,
                seed=args.seed,
                engine_name=engine_name,
                model=model,
                wdl=wdl,
            )
            if stream is not None:
                # a game that cannot be read or analysed is skipped with its
                # reason; an error only when none is left
                read = stream.result()
                games, skipped, truncated = read.games, read.skipped, read.truncated
        except ValueError as exc:  # PgnError included
            raise CliError(str(exc)) from exc
    finally:
        if stream is not None:
            stream.close()
        if progress is not None:
            progress.stop()
    annotated = list(games)
    report.skipped = skipped
    for message in skipped:
        print(f"livegain analyze: skipped {message}", file=sys.stderr)
    for message in truncated:
        print(f"livegain analyze: truncated {message}", file=sys.stderr)
    others = _other_annotators(annotated, evals) if evals.via else 0
    if others:
        print(
            f"livegain analyze: {others} game(s) name another Annotator than the first game's; "
            f"all are read as {evals.engine} {evals.limit}'s evaluations",
            file=sys.stderr,
        )
    if args.output_pgn:
        from livegain.batch.pgnio import write_annotated_pgn

        if args.evals == "engine" and engine_name:
            # the evaluations are now this engine's at this limit: read back
            # with --evals pgn, the file gets the same models and r_e
            for game in annotated:
                game.headers = {**game.headers, "Annotator": f"{engine_name} {evals.limit}"}

        try:
            write_annotated_pgn(annotated, args.output_pgn)
        except OSError as exc:
            raise CliError(f"{args.output_pgn}: cannot write ({exc.strerror or exc})") from exc
    if args.json:
        data = report.to_json()
        data["engine"]["source"] = source
        data["engine"]["limit"] = evals.limit
        if data.get("calibration") is not None:
            data["calibration"]["choice"] = model_why
        data["scale"] = {"wanted": scale, "choice": scale_why}
        data["wdl"] = wdl.to_json()
        data["truncated"] = truncated
        _print_json(data, compact=len(report.games) > COMPACT_JSON_GAMES)
    elif args.csv:
        from livegain.batch.analysis import csv_rows

        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerows(csv_rows(report))
    else:
        print_report(report, source, trace=args.trace, model_why=model_why, wdl=wdl.describe())
    return 0


def _other_annotators(games: Sequence[AnnotatedGame], evals: EvalSource) -> int:
    """How many games name another engine or limit in their Annotator tag
    than the one the file is read with."""
    from livegain.batch.annotated import annotator_engine

    return sum(
        annotator_engine(g.headers) not in (None, (evals.engine, evals.limit)) for g in games
    )


def _interval(p: PerceivedRating | CalibratedRating) -> str:
    return f"{p.low:.0f}-{p.high:.0f}"


def _console() -> Any:
    out = console()
    if not out.is_terminal:
        out.width = max(out.width, 140)
    return out


def _alg2(p: PlayerReport) -> str | None:
    if p.tournament is None:
        return None
    if p.tournament_low is None or p.tournament_high is None:
        return f"{p.tournament:.0f}"
    return f"{p.tournament:.0f} ({p.tournament_low:.0f}-{p.tournament_high:.0f})"


def _perceived(p: PerceivedRating) -> str:
    text = f"{p.rating:.0f}"
    return f"{text}*" if p.bounded else text


#: The marks of a rating outside the range a model was fitted on.
_LABEL_MARKS = {"extrapolated": "^"}
_BELOW_MARK = "~"


def _mark(label: str | None) -> str:
    if label is None:
        return ""
    return _LABEL_MARKS.get(label, _BELOW_MARK)


def _calibrated(
    c: CalibratedRating | None, model: PerceivedModel | None = None, rating: float | None = None
) -> str:
    """The number the audience sees: "too early" under the model's minimum;
    marked when ``rating`` (default: its own) is outside the model's range."""
    if c is None:
        return "-"
    if c.early:
        return f"too early ({c.moves})"
    label = None if model is None else model.range_label(c.rating if rating is None else rating)
    return f"{c.rating:.0f}{_mark(label)}"


def _calibrated_interval(c: CalibratedRating | None) -> str | None:
    if c is None or c.early:
        return None
    return _interval(c)


def _form(c: CalibratedRating | None, model: PerceivedModel | None, elo: float | None) -> str:
    """Form: the official rating moved by the moves (marked as its rating is)."""
    if c is None:
        return "-"
    label = None if model is None else model.range_label(elo)
    return f"{c.rating:.0f}{_mark(label)}"


def _wdl_text(w: tuple[int, int, int] | None) -> str:
    """W/D/L in percent, White's view."""
    if w is None:
        return "-"
    return f"{w[0] / 10:.0f}/{w[1] / 10:.0f}/{w[2] / 10:.0f}"


def _acc(a: PlayerAccuracy | None, phase: Phase | None = None) -> str:
    """An accuracy in percent (lichess's method), overall or of one phase; '-': none."""
    if a is None or a.moves == 0:
        return "-"
    x = a.overall if phase is None else a.phase(phase)
    return "-" if x is None else f"{x:.1f}"


def print_accuracy(report: AnalysisReport, out: Any) -> None:
    """Accuracy (lichess's method, docs/maths.md) per game and per player, by phase."""
    # imported here: the parser must not load chess before the engines start
    from livegain.core.accuracy import PHASES

    phases = ["Opening", "Middlegame", "Endgame"]
    rows: list[list[Any]] = []
    for g in report.games:
        for pg in (g.white, g.black):
            a = pg.accuracy
            rows.append(
                [g.number, pg.name, pg.color, a.moves if a else 0, _acc(a)]
                + [_acc(a, ph) for ph in PHASES]
            )
    out.print(
        table(
            "Accuracy per game, % (lichess's method; phases: docs/maths.md)",
            ["#", "Player", "Colour", "Moves", "Accuracy", *phases],
            rows,
        )
    )
    if len(report.games) < 2:
        return
    prows: list[list[Any]] = []
    for p in report.players:
        a = p.accuracy
        prows.append([p.name, p.games, _acc(a)] + [_acc(a, ph) for ph in PHASES])
    out.print(
        table(
            "Accuracy per player, % (the mean of his games')",
            ["Player", "Games", "Accuracy", *phases],
            prows,
        )
    )


def _labels_used(report: AnalysisReport) -> set[str]:
    model = report.model
    if model is None:
        return set()
    found: set[str] = set()
    pairs: list[tuple[CalibratedRating | None, float | None]] = []
    for p in report.players:
        pairs.append((p.calibrated, None))
        pairs.append((p.form, p.elo))
    for g in report.games:
        for pg in (g.white, g.black):
            pairs.append((pg.calibrated, None))
            pairs.append((pg.form, pg.elo))
    for c, elo in pairs:
        if c is None:
            continue
        label = model.range_label(c.rating if elo is None else elo)
        if label is not None:
            found.add(label)
    return found


def print_report(
    report: AnalysisReport,
    source: str,
    trace: bool = False,
    model_why: str | None = None,
    wdl: str | None = None,
) -> None:
    """Readable tables."""
    out = _console()
    model = report.model
    out.print(f"Engine rating r_e = {report.engine_rating:.0f} ({source}), for Algorithm 4")
    if model is not None:
        out.print(
            f"Perceived rating and form: calibrated, {model_why or model.name} "
            f"({model.scale} rating scale)"
        )
    elif model_why:
        out.print(f"Perceived rating: {model_why}; Algorithm 4 only")
    if wdl:
        out.print(wdl)
    if len(report.games) <= DETAIL_GAMES:
        for g in report.games:
            print_game(g, out, model)
    else:
        rows = []
        for g in report.games:
            h = g.head_to_head
            rows.append(
                [
                    g.number,
                    g.white.name,
                    g.black.name,
                    g.headers.get("Result", "*"),
                    _calibrated(g.white.calibrated, model),
                    _calibrated(g.black.calibrated, model),
                    _form(g.white.form, model, g.white.elo),
                    _form(g.black.form, model, g.black.elo),
                    _perceived(g.white.perceived),
                    _perceived(g.black.perceived),
                    f"{h.expected:.3f}",
                    f"{h.difference:+.0f}",
                    _wdl_text(g.plies[-1].wdl if g.plies else None),
                ]
            )
        out.print(
            table(
                "Games (perceived ratings: calibrated, form and Algorithm 4; White's expected "
                "score, Algorithm 1; W/D/L % after the last move, White's view)",
                [
                    "#",
                    "White",
                    "Black",
                    "Result",
                    "White",
                    "Black",
                    "White form",
                    "Black form",
                    "White Alg. 4",
                    "Black Alg. 4",
                    "p(W)",
                    "d(W)",
                    "W/D/L",
                ],
                rows,
            )
        )
    if trace:
        for g in report.games:
            print_trace(g, out, model)
    print_accuracy(report, out)
    rows = []
    for p in report.players:
        pr = p.perceived
        rows.append(
            [
                p.name,
                None if p.elo is None else f"{p.elo:.0f}",
                p.games,
                pr.moves,
                _calibrated(p.calibrated, model),
                _calibrated_interval(p.calibrated),
                _form(p.form, model, p.elo),
                None if p.form is None else _interval(p.form),
                f"{pr.expected:.3f}",
                f"{pr.difference:+.0f}",
                _perceived(pr),
                _interval(pr) + _MARKS.get(p.interval_method, ""),
                _alg2(p),
            ]
        )
    out.print(
        table(
            "Players, all games pooled (perceived: calibrated; form: Elo updated by the moves; "
            "Algorithm 4; Alg. 2 = tournament estimate, 95% jackknife)",
            [
                "Player",
                "Elo",
                "Games",
                "Moves",
                "Perceived",
                "95% interval",
                "Form",
                "Form 95%",
                "p vs engine",
                "d",
                "Alg. 4",
                "Alg. 4 95%",
                "Alg. 2",
            ],
            rows,
        )
    )
    t = report.tournament
    if t is not None and t.engine_by_elo is not None:
        e = t.engine_by_elo
        ci = f" (95% {e.low:.0f} .. {e.high:.0f})" if e.low is not None and e.high else ""
        out.print(
            f"Algorithm 3: engine strength from {e.players} rated player(s): {e.rating:.0f}{ci}"
        )
    used = {p.interval_method for p in report.players} & {"games-cluster", "bootstrap-games"}
    if used:
        out.print(
            "g: Algorithm 4 interval over the player's games (cluster-robust t joined with "
            "Wilson); b: bootstrap over games; else Wilson (docs/maths.md)"
        )
    if any(p.perceived.bounded for p in report.players) or any(
        g.white.perceived.bounded or g.black.perceived.bounded for g in report.games
    ):
        out.print("* Algorithm 4: p was 0 or 1 (or nearly): the difference is clamped at +/-800")
    for label in sorted(_labels_used(report)):
        out.print(
            f"{_mark(label)} {label}: the rating (the estimate's own; the Elo for form) lies "
            "outside the range the model was fitted on",
            markup=False,
        )


def print_game(g: GameReport, out: Any, model: PerceivedModel | None = None) -> None:
    rows = []
    for pg in (g.white, g.black):
        pr = pg.perceived
        rows.append(
            [
                pg.name,
                pg.elo,
                pr.moves,
                _calibrated(pg.calibrated, model),
                _calibrated_interval(pg.calibrated),
                _form(pg.form, model, pg.elo),
                None if pg.form is None else _interval(pg.form),
                None if pg.mean_gain is None else f"{pg.mean_gain / 100:+.2f}",
                f"{pr.expected:.3f}",
                f"{pr.difference:+.0f}",
                _perceived(pr),
                _interval(pr),
            ]
        )
    h = g.headers
    title = f"Game {g.number}: {g.white.name} - {g.black.name}  {h.get('Result', '*')}"
    out.print(
        table(
            title,
            [
                "Player",
                "Elo",
                "Moves",
                "Perceived",
                "95% interval",
                "Form",
                "Form 95%",
                "Mean gain",
                "p vs engine",
                "d",
                "Alg. 4",
                "Alg. 4 95%",
            ],
            rows,
        )
    )
    hh = g.head_to_head
    if hh.moves_a and hh.moves_b:
        if hh.difference >= 0:
            favour, d, lo, hi = g.white.name, hh.difference, hh.low, hh.high
        else:
            favour, d, lo, hi = g.black.name, -hh.difference, -hh.high, -hh.low
        out.print(
            f"Algorithm 1: expected score {g.white.name} {hh.expected:.3f}, "
            f"{g.black.name} {hh.expected_other:.3f}: {favour} {d:+.0f} "
            f"(95% {lo:+.0f} to {hi:+.0f})"
        )
    if g.plies:
        last = g.plies[-1]
        engine = "" if last.engine_wdl is None else f"; engine's {_wdl_text(last.engine_wdl)}"
        what = f"human ({g.wdl_model}, {g.kind})" if g.wdl_model else "engine or win-chance curve"
        out.print(
            f"W/D/L after {last.move} (White's view, %): {_wdl_text(last.wdl)} {what}{engine}",
            markup=False,
        )


def print_trace(g: GameReport, out: Any, model: PerceivedModel | None = None) -> None:
    wdl_by_ply = {r.ply: r for r in g.plies}
    keyed: list[tuple[int, list[Any]]] = []
    for pg in (g.white, g.black):
        for t in pg.trace:
            pr = t.perceived
            row = wdl_by_ply.get(t.ply)
            keyed.append(
                (
                    t.ply,
                    [
                        t.move,
                        pg.name,
                        f"{t.gain / 100:+.2f}",
                        _wdl_text(None if row is None else row.wdl),
                        pr.moves,
                        _calibrated(t.calibrated, model),
                        _calibrated_interval(t.calibrated),
                        f"{pr.expected:.3f}",
                        f"{pr.difference:+.0f}",
                        _perceived(pr),
                        _interval(pr),
                    ],
                )
            )
    rows = [row for _, row in sorted(keyed, key=lambda item: item[0])]
    wdl_title = "human W/D/L %" if g.wdl_model else "W/D/L %"
    out.print(
        table(
            f"Game {g.number}: move by move (perceived: calibrated; Algorithm 4; "
            f"{wdl_title} after the move, White's view)",
            [
                "Move",
                "Player",
                "Gain",
                "W/D/L",
                "Moves",
                "Perceived",
                "95% interval",
                "p",
                "d",
                "Alg. 4",
                "Alg. 4 95%",
            ],
            rows,
        )
    )
