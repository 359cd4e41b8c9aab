"""A whole PGN file's evaluated games streamed in file order: the text cut
into games in this process, parsed in bounded batches by reading processes
(:func:`~livegain.batch.pgn_evals.parse_evals`), each game handed over as
soon as it is back, with the games skipped and truncated on the way.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from livegain.batch.annotated import AnnotatedGame
from livegain.batch.pgn_evals import Outcome, parse_evals
from livegain.batch.pgnio import (
    READ_ERRORS,
    PgnError,
    checked_path,
    game_texts,
    nothing_to_analyse,
    open_pgn,
    unreadable,
)

# Parsing in worker processes (multiprocessing, about 20 ms to import) is
# imported where a file is read with more than one worker: `livegain analyze`'s
# engine mode reads its games in its own process, while its engines load.
if TYPE_CHECKING:
    from concurrent.futures import Future
    from multiprocessing.context import BaseContext


@dataclass
class PgnEvals:
    """What :func:`read_pgn_evals` read from a file."""

    games: list[AnnotatedGame]
    #: games left out, with the reason: ``game 3 (A - B): no [%eval] annotations``
    skipped: list[str]
    #: games analysed up to their last evaluation:
    #: ``game 7 (C - D): evaluated up to ply 200 of 243``
    truncated: list[str]


#: ``on_progress(done, total, games)``: bytes of the file read so far, its
#: size, and the games read so far.
ReadProgress = Callable[[int, int, int], None]

#: Games per piece of work handed to a reading process.
_BATCH_GAMES = 250
#: Batches a reading process may have parsed ahead of the games handed over.
_AHEAD = 8
#: Files smaller than this are read in this process (handing games to other
#: processes and back costs more than it saves).
_PARALLEL_BYTES = 1 << 20


def read_pgn_evals(
    path: str | Path,
    *,
    workers: int | None = None,
    on_progress: ReadProgress | None = None,
) -> PgnEvals:
    """Every game of a PGN file (plain or gzip) with its ``[%eval]`` comments,
    as :func:`~livegain.batch.pgn_evals.annotated_from_pgn_evals` builds
    them, for files of any size.

    The file is streamed and cut into games as python-chess reads it; the
    games are parsed, in file order, by ``workers`` processes (default: up to
    4, as many as there are cores, for files from 1 MiB) with a light reader
    that keeps only the main line and its comments. A game with a problem (no
    evaluation, no moves, an evaluation missing between evaluated moves, an
    illegal move, a bad FEN, text the parser cannot take) is skipped with its
    reason (``skipped``); a game whose evaluations stop for good is kept up to
    its last evaluated ply (``truncated``). Raises :class:`PgnError` only when
    the file cannot be read or no game can be analysed.
    :class:`PgnEvalsStream` hands the games over while they are read.
    """
    with PgnEvalsStream(path, workers=workers, on_progress=on_progress) as stream:
        games = list(stream)
        stream.check()
        return PgnEvals(games, stream.skipped, stream.truncated)


class PgnEvalsStream(Iterable[AnnotatedGame]):
    """The games of :func:`read_pgn_evals` while they are read.

    Iterating reads the file (once) and yields each game as soon as a reading
    process hands it back, so that work on the first games (``analyze``)
    overlaps the reading of the others; a game handed over is not kept, and
    the reading processes parse at most a few batches ahead of it, so that
    the memory a file takes does not grow with the file. ``skipped``,
    ``truncated`` and ``games`` (how many were handed over) fill as the
    reading goes; :meth:`check`, once read to the end, raises
    :class:`PgnError` when no game can be analysed. Use it in a ``with``
    block (or :meth:`close` it): the file and the reading processes are
    released at its end.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        workers: int | None = None,
        on_progress: ReadProgress | None = None,
    ) -> None:
        self.path = checked_path(path)
        self.total = self.path.stat().st_size
        if workers is None:
            workers = min(4, os.cpu_count() or 1) if self.total >= _PARALLEL_BYTES else 1
        #: games handed over so far
        self.games = 0
        self.skipped: list[str] = []
        self.truncated: list[str] = []
        self._ready: deque[AnnotatedGame] = deque()
        self._problems: list[str] = []
        self._number = 0
        self._on_progress = on_progress
        self._batches = _parsed_batches(self.path, workers)
        self._done = False

    def __enter__(self) -> PgnEvalsStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._batches.close()
        self._done = True

    def __iter__(self) -> Iterator[AnnotatedGame]:
        ready = self._ready
        while True:
            while ready:
                self.games += 1
                yield ready.popleft()
            if self._done:
                return
            self._read_batch()

    def check(self) -> None:
        """Once read to the end: PgnError when no game could be analysed."""
        if not self.games and not self._ready:
            message = nothing_to_analyse(str(self.path), self._number, self.skipped, self._problems)
            raise PgnError(message)

    def _read_batch(self) -> None:
        try:
            batch, done = next(self._batches)
        except StopIteration:
            self._done = True
            return
        except READ_ERRORS as exc:
            self.close()
            raise unreadable(self.path, exc) from exc
        for out in batch:
            if out.kind == "empty":
                continue
            self._number += 1
            number = self._number
            where = f"game {number}" if out.kind == "crash" else f"game {number} ({out.players})"
            if out.game is None:
                self.skipped.append(f"{where}: {out.reason}")
                if out.kind != "skip":
                    self._problems.append(self.skipped[-1])
                continue
            game = out.game
            game.extra = {"game_number": str(number), **game.extra}
            if "truncated" in game.extra:
                self.truncated.append(f"{where}: {game.extra['truncated']}")
            self._ready.append(game)
        if self._on_progress is not None:
            self._on_progress(done, self.total, self._number)


def _parsed_batches(p: Path, workers: int) -> Generator[tuple[list[Outcome], int], None, None]:
    """The games of the file, parsed, in batches in file order, each with how
    far into the file (bytes) it ends."""
    with open_pgn(p) as (text, raw):
        batches = _batches(game_texts(text), raw)
        if workers <= 1:
            for texts, done in batches:
                yield _parse_batch(texts), done
            return
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(workers, mp_context=_process_context())
        try:
            pending: deque[tuple[Future[list[Outcome]], int]] = deque()
            for texts, done in batches:
                pending.append((pool.submit(_parse_batch, texts), done))
                while len(pending) > _AHEAD * workers:
                    future, at = pending.popleft()
                    yield future.result(), at
            while pending:
                future, at = pending.popleft()
                yield future.result(), at
        finally:  # left early (an error, or the reader closed): drop the work queued
            pool.shutdown(wait=True, cancel_futures=True)


def _process_context() -> BaseContext:
    """Fork when it is safe (no other thread could hold a lock the children
    would inherit): no start-up cost, and no re-import of ``__main__``."""
    import multiprocessing as mp

    methods = mp.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return mp.get_context("fork")
    return mp.get_context("forkserver" if "forkserver" in methods else "spawn")


def _batches(texts: Iterator[str], raw: BinaryIO) -> Iterator[tuple[list[str], int]]:
    batch: list[str] = []
    for text in texts:
        batch.append(text)
        if len(batch) == _BATCH_GAMES:
            yield batch, raw.tell()
            batch = []
    if batch:
        yield batch, raw.tell()


def _parse_batch(texts: list[str]) -> list[Outcome]:
    """Runs in a reading process: each game's text to an :class:`Outcome`."""
    return [parse_evals(text) for text in texts]
