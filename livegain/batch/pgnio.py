"""PGN files in and out: reading games with clear errors, evaluations from
``[%eval ...]`` comments, and writing annotated PGN.

Evaluations follow lichess's convention: ``[%eval 0.12]`` (pawns, White's
view), ``[%eval #-3]`` (mate in 3 for Black), optionally ``[%eval 0.12,20]``
(with depth). The comment after a move holds the evaluation of the position
after that move; a comment before the first move holds the start position's.
Mate scores and anything beyond 39 pawns become +/-3900 cp.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import threading
import zlib
from collections import deque
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Literal, NamedTuple, TextIO, cast, overload

import chess
import chess.pgn

from livegain.batch.annotated import AnnotatedGame
from livegain.core.evaluation import CLIP_CP, checkmated_score, clip, white_score

# Parsing in worker processes (multiprocessing, about 20 ms to import) is
# imported where a file is read with more than one worker: `livegain analyze`'s
# engine mode reads its games in its own process, while its engines load.
if TYPE_CHECKING:
    from concurrent.futures import Future
    from multiprocessing.context import BaseContext


class PgnError(ValueError):
    """A PGN problem the user can fix; the message names the file/game/move."""


class SkippedGameError(PgnError):
    """A game that cannot be analysed but does not spoil the others."""


class NoEvalsError(SkippedGameError):
    """A game without any ``[%eval]`` annotation."""


class NoMovesError(SkippedGameError):
    """A game without moves (a forfeit, an unstarted board)."""


class _QuietBuilder(chess.pgn.GameBuilder[chess.pgn.Game]):
    """Collects parse errors on the game without logging them."""

    def handle_error(self, error: Exception) -> None:
        self.game.errors.append(error)


_SAN_IN_ERROR = re.compile(r"san: '([^']*)'")


def read_pgn_games(path: str | Path) -> list[chess.pgn.Game]:
    """Read every game of a PGN file (plain or gzip-compressed, told apart by
    the gzip magic bytes), streaming it.

    Raises :class:`PgnError` for a missing or unreadable file, a file without
    games, or a move that cannot be played (naming the game number, the move
    number and the SAN). :func:`read_pgn_games_skipping` skips bad games instead.
    """
    p = _checked(path)
    try:
        with _open_pgn(p) as (text, _raw):
            return _read_games(text, str(p))
    except _READ_ERRORS as exc:
        raise _unreadable(p, exc) from exc


def read_pgn_text(text: str, source: str = "<pgn>") -> list[chess.pgn.Game]:
    """Like :func:`read_pgn_games` for PGN text."""
    return _read_games(io.StringIO(text), source)


def _read_games(stream: TextIO, source: str) -> list[chess.pgn.Game]:
    games: list[chess.pgn.Game] = []
    while True:
        try:
            game = chess.pgn.read_game(stream, Visitor=_QuietBuilder)
        except _READ_ERRORS:
            raise
        except Exception as exc:  # the parser's own bugs on hostile text (e.g. a stray ")")
            raise PgnError(
                f"{source}: game {len(games) + 1}: cannot parse ({type(exc).__name__}: {exc})"
            ) from exc
        if game is None:
            break
        number = len(games) + 1
        if game.errors:
            raise PgnError(f"{source}: {_describe_error(game, number, game.errors[0])}")
        if _is_empty(game):
            continue
        games.append(game)
    if not games:
        raise PgnError(f"{source}: no games found")
    return games


_GZIP_MAGIC = b"\x1f\x8b"
#: What reading a (possibly gzip-compressed) file may raise: a cut gzip file
#: ends in EOFError, a corrupt one in BadGzipFile (an OSError) or zlib.error.
_READ_ERRORS = (OSError, EOFError, zlib.error)


def _checked(path: str | Path) -> Path:
    p = Path(path)
    if not p.exists():
        raise PgnError(f"{p}: no such file")
    if p.is_dir():
        raise PgnError(f"{p}: is a directory, expected a PGN file")
    return p


def _unreadable(p: Path, exc: BaseException) -> PgnError:
    return PgnError(f"{p}: cannot read ({getattr(exc, 'strerror', None) or exc})")


@contextmanager
def _open_pgn(p: Path) -> Iterator[tuple[TextIO, BinaryIO]]:
    """The file as text (UTF-8, a BOM dropped, bad bytes replaced), gunzipped on
    the fly when it starts with the gzip magic bytes; and the file itself,
    whose position tells how far the reading is."""
    with p.open("rb") as raw:
        gzipped = raw.read(2) == _GZIP_MAGIC
        raw.seek(0)
        binary: BinaryIO = gzip.GzipFile(fileobj=raw, mode="rb") if gzipped else raw  # type: ignore[assignment]
        yield io.TextIOWrapper(binary, encoding="utf-8-sig", errors="replace"), raw


class _LineRecorder:
    """A text stream that keeps the lines read since the last :meth:`take`."""

    def __init__(self, stream: TextIO) -> None:
        self._readline = stream.readline
        self._lines: list[str] = []

    def readline(self) -> str:
        line = self._readline()
        self._lines.append(line)
        return line

    def take(self) -> str:
        text = "".join(self._lines)
        self._lines = []
        return text


def _game_texts(stream: TextIO) -> Iterator[str]:
    """The text of each game of a stream, cut where python-chess's reader cuts
    it (:func:`chess.pgn.read_headers` skips a game's moves exactly as
    :func:`chess.pgn.read_game` reads them), without parsing any move: each
    text parses alone as it would in the whole file."""
    recorder = _LineRecorder(stream)
    while chess.pgn.read_headers(cast(TextIO, recorder)) is not None:
        yield recorder.take()


def read_pgn_headers(path: str | Path) -> list[dict[str, str]]:
    """The tags of every game of a PGN file (plain or gzip), without reading
    any move (for figures that need only players, ratings and results)."""
    p = _checked(path)
    out: list[dict[str, str]] = []
    try:
        with _open_pgn(p) as (stream, _raw):
            while (headers := chess.pgn.read_headers(stream)) is not None:
                out.append(dict(headers))
    except (OSError, EOFError, ValueError) as exc:
        raise _unreadable(p, exc) from exc
    return out


# ---------------------------------------------------------------------------
# many games, each on its own: a bad game is skipped with its reason


def read_pgn_games_skipping(
    path: str | Path,
) -> tuple[list[chess.pgn.Game], list[int], list[str]]:
    """Like :func:`read_pgn_games`, but a game that cannot be read (an illegal
    move, a bad FEN, text the parser cannot take) is skipped with the reason
    instead of ending the reading: (games, their numbers in the file, skipped
    messages). Raises :class:`PgnError` only when the file cannot be read or
    holds no game that can."""
    p = _checked(path)
    games: list[chess.pgn.Game] = []
    numbers: list[int] = []
    skipped: list[str] = []
    number = 0
    try:
        with _open_pgn(p) as (text, _raw):
            for chunk in _game_texts(text):
                try:
                    game = chess.pgn.read_game(io.StringIO(chunk), Visitor=_QuietBuilder)
                except Exception as exc:  # the parser's own bugs on hostile text
                    number += 1
                    skipped.append(f"game {number}: {_cannot_parse(exc)}")
                    continue
                if game is None:
                    continue
                if game.errors:
                    number += 1
                    skipped.append(_describe_error(game, number, game.errors[0]))
                    continue
                if _is_empty(game):
                    continue
                number += 1
                games.append(game)
                numbers.append(number)
    except _READ_ERRORS as exc:
        raise _unreadable(p, exc) from exc
    if not games:
        raise PgnError(_nothing_to_analyse(str(p), number, skipped, skipped))
    return games, numbers, skipped


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
    as :func:`annotated_from_pgn_evals` builds them, for files of any size.

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
        return stream.result()


class PgnEvalsStream(Sequence[AnnotatedGame]):
    """The games of :func:`read_pgn_evals` while they are read.

    Iterating reads the file (once) and yields each game as soon as a reading
    process hands it back, so that work on the first games (``analyze``)
    overlaps the reading of the others; ``len()`` or an index reads to the
    end first. ``skipped`` and ``truncated`` fill as the reading goes;
    :meth:`result` reads to the end and raises :class:`PgnError` when no
    game can be analysed. Use it in a ``with`` block (or :meth:`close` it): the
    file and the reading processes are released at its end.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        workers: int | None = None,
        on_progress: ReadProgress | None = None,
    ) -> None:
        self.path = _checked(path)
        self.total = self.path.stat().st_size
        if workers is None:
            workers = min(4, os.cpu_count() or 1) if self.total >= _PARALLEL_BYTES else 1
        self.games: list[AnnotatedGame] = []
        self.skipped: list[str] = []
        self.truncated: list[str] = []
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
        k = 0
        while True:
            while k < len(self.games):
                yield self.games[k]
                k += 1
            if self._done:
                return
            self._read_batch()

    def __len__(self) -> int:
        self._read_all()
        return len(self.games)

    @overload
    def __getitem__(self, index: int) -> AnnotatedGame: ...

    @overload
    def __getitem__(self, index: slice) -> list[AnnotatedGame]: ...

    def __getitem__(self, index: int | slice) -> AnnotatedGame | list[AnnotatedGame]:
        self._read_all()
        return self.games[index]

    def result(self) -> PgnEvals:
        """Everything, once read to the end; PgnError when no game is left."""
        self._read_all()
        if not self.games:
            message = _nothing_to_analyse(
                str(self.path), self._number, self.skipped, self._problems
            )
            raise PgnError(message)
        return PgnEvals(self.games, self.skipped, self.truncated)

    def _read_all(self) -> None:
        while not self._done:
            self._read_batch()

    def _read_batch(self) -> None:
        try:
            batch, done = next(self._batches)
        except StopIteration:
            self._done = True
            return
        except _READ_ERRORS as exc:
            self.close()
            raise _unreadable(self.path, exc) from exc
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
            self.games.append(game)
        if self._on_progress is not None:
            self._on_progress(done, self.total, self._number)


def _nothing_to_analyse(source: str, games: int, skipped: list[str], problems: list[str]) -> str:
    """The one-line error when no game of a file can be analysed."""
    if games == 0:
        return f"{source}: no games found"
    if not problems:  # only games without evaluations or without moves
        return f"{source}: no [%eval] annotations in any game (use --evals engine)"
    if len(skipped) == 1:
        return f"{source}: {problems[0]}"
    return f"{source}: {problems[0]} (no game left to analyse: {len(skipped)} skipped)"


class _Outcome(NamedTuple):
    """One game of a file as a reading process hands it back."""

    kind: Literal["empty", "game", "skip", "error", "crash"]
    game: AnnotatedGame | None = None
    players: str = ""
    reason: str = ""


def _parsed_batches(p: Path, workers: int) -> Generator[tuple[list[_Outcome], int], None, None]:
    """The games of the file, parsed, in batches in file order, each with how
    far into the file (bytes) it ends."""
    with _open_pgn(p) as (text, raw):
        batches = _batches(_game_texts(text), raw)
        if workers <= 1:
            for texts, done in batches:
                yield _parse_batch(texts), done
            return
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(workers, mp_context=_process_context())
        try:
            pending: deque[tuple[Future[list[_Outcome]], int]] = deque()
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


def _parse_batch(texts: list[str]) -> list[_Outcome]:
    """Runs in a reading process: each game's text to an :class:`_Outcome`."""
    return [_parse_evals(text) for text in texts]


def _parse_evals(text: str) -> _Outcome:
    try:
        parsed = chess.pgn.read_game(io.StringIO(text), Visitor=_EvalsVisitor)
    except Exception as exc:  # the parser's own bugs on hostile text
        return _Outcome("crash", reason=_cannot_parse(exc))
    if parsed is None:
        return _Outcome("empty")
    players = _players_of(parsed.headers)
    if parsed.errors:
        final = parsed.final

        def end() -> chess.Board:
            parsed.headers.board()  # raises for a bad FEN, as the game tree's board would
            assert final is not None
            return final

        return _Outcome(
            "error", None, players, _error_reason(end, parsed.headers, parsed.errors[0])
        )
    if not parsed.moves and _default_headers(parsed.headers):
        return _Outcome("empty")
    assert parsed.start is not None
    try:
        game = _annotated(
            parsed.headers,
            parsed.start,
            parsed.moves,
            parsed.comments[0],
            parsed.comments[1:],
            parsed.sans,
            parsed.final,
        )
    except SkippedGameError as exc:
        return _Outcome("skip", None, players, str(exc))
    except PgnError as exc:
        return _Outcome("error", None, players, str(exc))
    return _Outcome("game", game, players)


def _cannot_parse(exc: Exception) -> str:
    return f"cannot parse ({type(exc).__name__}: {exc})"


class _VarNode:
    """A move of a variation: only its parent matters (variations are not kept)."""

    __slots__ = ("parent",)

    def __init__(self, parent: int | _VarNode) -> None:
        self.parent = parent


@dataclass
class _Parsed:
    headers: chess.pgn.Headers
    start: chess.Board | None  # None: the FEN could not be set up
    final: chess.Board | None  # the main line's last position
    moves: list[chess.Move]
    sans: list[str]
    comments: list[str]  # [0] before the first move, [k] after ply k
    errors: list[Exception]


#: python-chess's SAN without its check suffix (Board.san() is that, then the
#: move played and taken back to see whether it checks or mates). Standard
#: boards only: variants add their own win and loss marks. A private method,
#: used on purpose: 6.1 us per move against 20.9 us for the public
#: Board.san() (3,000 positions of random games, python-chess 1.11), about
#: 35 s of CPU on the 2.4 million moves of the lichess set; when a python-chess
#: release lacks it, Board.san() is used (docs/analyze.md).
_SAN_WITHOUT_SUFFIX = "_algebraic_without_suffix"


_PIECE_SAN = re.compile(r"[NBRQK]x?[a-h][1-8]\Z")
_PAWN_SAN = re.compile(r"(?:[a-h]x)?[a-h][1-8](?:=[NBRQ])?\Z")


def _as_written(board: chess.Board, move: chess.Move, token: str) -> str | None:
    """The move's SAN without suffix when the file's token (just parsed into
    ``move``) already is exactly that, else None. A piece move written
    without a from-square parsed, so no other piece of its kind could go
    there: python-chess writes none either."""
    if token in ("O-O", "O-O-O"):
        castles = board.is_castling(move) and board.is_kingside_castling(move) == (token == "O-O")
        return token if castles else None
    if _PIECE_SAN.match(token):
        plain = not board.is_castling(move) and not move.promotion
        return token if plain and ("x" in token) == board.is_capture(move) else None
    if _PAWN_SAN.match(token):
        return token if ("x" in token) == board.is_capture(move) else None
    return None


class _EvalsVisitor(chess.pgn.BaseVisitor[_Parsed]):
    """What the evaluations need from one game, without python-chess's game
    tree: the tags, the main line's moves with their SAN, and each comment
    where :class:`chess.pgn.GameBuilder` would put it (variations are followed
    only that far: the main line's nodes are numbered by ply, the others are
    :class:`_VarNode`)."""

    def begin_game(self) -> None:
        self.parsed = _Parsed(chess.pgn.Headers(), None, None, [], [], [""], [])
        self.stack: list[int | _VarNode] = [0]
        self.in_variation = False
        self.fast_san = False
        self.suffix_due = False
        self.token: str | None = None

    def begin_headers(self) -> chess.pgn.Headers:
        return self.parsed.headers

    def visit_header(self, tagname: str, tagvalue: str) -> None:
        self.parsed.headers[tagname] = tagvalue

    def visit_board(self, board: chess.Board) -> None:
        if self.parsed.final is None:  # the start position: the main line's board from now on
            self.parsed.final = board
            self.parsed.start = board.copy(stack=False)
            self.fast_san = type(board) is chess.Board and hasattr(board, _SAN_WITHOUT_SUFFIX)
        elif self.suffix_due:
            # the check suffix of the SAN from the position after the move: what
            # board.san() finds by playing the move and taking it back
            self.suffix_due = False
            if board.is_check():
                self.parsed.sans[-1] += "#" if board.is_checkmate() else "+"

    def visit_result(self, result: str) -> None:
        if self.parsed.headers.get("Result", "*") == "*":
            self.parsed.headers["Result"] = result

    def begin_variation(self) -> None:
        top = self.stack[-1]
        if isinstance(top, int):
            if top == 0:
                raise AssertionError("begin_variation called, but root node on top of stack")
            self.stack.append(top - 1)
        else:
            self.stack.append(top.parent)
        self.in_variation = False

    def end_variation(self) -> None:
        self.stack.pop()

    def visit_comment(self, comment: str) -> None:
        top = self.stack[-1]
        parsed = self.parsed
        if isinstance(top, int) and (self.in_variation or (top == 0 and not parsed.moves)):
            parsed.comments[top] = " ".join(filter(None, [parsed.comments[top], comment]))
        # else: a variation's comment, or one before a variation's first move

    def parse_san(self, board: chess.Board, san: str) -> chess.Move:
        self.token = san
        return board.parse_san(san)

    def visit_move(self, board: chess.Board, move: chess.Move) -> None:
        top = self.stack[-1]
        parsed = self.parsed
        token, self.token = self.token, None
        if isinstance(top, int) and top == len(parsed.moves):  # the main line goes on
            if self.fast_san and move:
                san = _as_written(board, move, token) if token else None
                if san is None:
                    san = getattr(board, _SAN_WITHOUT_SUFFIX)(move)
                parsed.sans.append(san)
                self.suffix_due = True
            else:
                parsed.sans.append(board.san(move))
            parsed.moves.append(move)
            parsed.comments.append("")
            self.stack[-1] = top + 1
        else:
            self.stack[-1] = _VarNode(top)
        self.in_variation = True

    def handle_error(self, error: Exception) -> None:
        self.parsed.errors.append(error)

    def result(self) -> _Parsed:
        return self.parsed


def _is_empty(game: chess.pgn.Game) -> bool:
    """A "game" made only of stray text: no moves and no real tag."""
    return not game.variations and _default_headers(game.headers)


def _default_headers(headers: Mapping[str, str]) -> bool:
    defaults = {"Event", "Site", "Date", "Round", "White", "Black", "Result"}
    for key, value in headers.items():
        if key not in defaults or value not in ("?", "????.??.??", "*"):
            return False
    return True


def _players(game: chess.pgn.Game) -> str:
    return _players_of(game.headers)


def _players_of(headers: Mapping[str, str]) -> str:
    return f"{headers.get('White', '?')} - {headers.get('Black', '?')}"


def _describe_error(game: chess.pgn.Game, number: int, error: Exception) -> str:
    reason = _error_reason(lambda: game.end().board(), game.headers, error)
    return f"game {number} ({_players(game)}): {reason}"


def _error_reason(
    end_board: Callable[[], chess.Board], headers: Mapping[str, str], error: Exception
) -> str:
    """A parse error in words (``illegal move 4.Qxf7``), from the main line's
    last position (``end_board``)."""
    try:
        board = end_board()
    except ValueError as exc:
        fen = headers.get("FEN", "?")
        return f"invalid FEN {fen!r} ({exc})"
    match = _SAN_IN_ERROR.search(str(error))
    san = match.group(1) if match else "?"
    dots = "." if board.turn == chess.WHITE else "..."
    kind = type(error).__name__
    if kind == "IllegalMoveError":
        what = "illegal move"
    elif kind == "AmbiguousMoveError":
        what = "ambiguous move"
    elif kind == "InvalidMoveError":
        what = "invalid move"
    else:
        return str(error)
    return f"{what} {board.fullmove_number}{dots}{san}"


#: An ``[%eval #0]``: the side to move is mated (the score needs the position).
_MATE_ZERO = "#0"


def _comment_eval(comment: str) -> int | str | None:
    """A comment's first ``[%eval]`` (as :meth:`chess.pgn.GameNode.eval` reads
    it) as White-view cp, clipped; :data:`_MATE_ZERO`; None without one."""
    match = chess.pgn.EVAL_REGEX.search(comment)
    if match is None:
        return None
    mate = match.group("mate")
    if mate:
        moves = int(mate)
        return _MATE_ZERO if moves == 0 else white_score(mate=moves)
    return clip(round(float(match.group("cp")) * 100))


class _Replay:
    """The positions of a main line, played forward only as far as asked
    (``end``: the last position, when already known)."""

    def __init__(
        self, start: chess.Board, moves: Sequence[chess.Move], end: chess.Board | None
    ) -> None:
        self._start = start
        self._moves = moves
        self._end = end
        self._board: chess.Board | None = None
        self._ply = 0

    def after(self, ply: int) -> chess.Board:
        if ply == len(self._moves) and self._end is not None:
            return self._end
        if self._board is None:
            self._board = self._start.copy(stack=False)
        while self._ply < ply:
            self._board.push(self._moves[self._ply])
            self._ply += 1
        return self._board


def _finished_score(board: chess.Board, mate_zero: bool = False) -> int | None:
    """The value of a position without a usable evaluation: checkmate +/-3900,
    another end of the game 0 (and after ``[%eval #0]`` the side to move lost);
    None when the game goes on."""
    if board.is_checkmate():
        return checkmated_score(white_is_mated=board.turn == chess.WHITE)
    if mate_zero:
        return -CLIP_CP if board.turn == chess.WHITE else CLIP_CP
    if board.is_game_over(claim_draw=False):
        return 0
    return None


def _annotated(
    headers: Mapping[str, str],
    start: chess.Board,
    moves: Sequence[chess.Move],
    root_comment: str,
    comments: Sequence[str],
    sans: Sequence[str] | None = None,
    end: chess.Board | None = None,
) -> AnnotatedGame:
    """The rules of :func:`annotated_from_pgn_evals` on a main line given as
    its start position, moves, comments (before the first move; after each
    move), SAN (computed when not given) and last position (``end``, played
    out when needed and not given). The :class:`PgnError` messages do
    not name the game; ``extra`` holds only a ``truncated`` note."""
    n = len(moves)
    if n == 0:
        raise NoMovesError("no moves")
    evals = [_comment_eval(c) for c in comments]
    root = _comment_eval(root_comment)
    if root is None and all(e is None for e in evals):
        raise NoEvalsError("no [%eval] annotations")
    if sans is None:
        board = start.copy(stack=False)
        sans = []
        for move in moves:
            sans.append(board.san(move))
            board.push(move)
    replay = _Replay(start, moves, end)

    def score(value: int | str | None, ply: int) -> int | None:
        if isinstance(value, int):
            return value
        return _finished_score(replay.after(ply), mate_zero=value == _MATE_ZERO)

    start_score = score(root, 0)
    last_eval = max((ply for ply, e in enumerate(evals, start=1) if e is not None), default=0)
    scores: list[int] = []
    extra: dict[str, str] = {}
    for ply in range(1, n + 1):
        s = score(evals[ply - 1], ply)
        if s is None:
            unreadable = "[%eval" in comments[ply - 1]
            if unreadable or ply < last_eval or ply == 1:
                what = "unreadable [%eval]" if unreadable else "no [%eval]"
                label = _move_label(start, ply, sans[ply - 1])
                raise PgnError(f"{what} after {label} (ply {ply})")
            # the evaluations stop here for good (lichess evaluates 200 plies at most)
            extra["truncated"] = f"evaluated up to ply {ply - 1} of {n}"
            break
        scores.append(s)
    kept = len(scores)
    counted_from = 1
    if start_score is None:
        # unknown s_0: a placeholder equal to s_1, and ply 1 is not counted
        start_score = scores[0]
        counted_from = 2
    fen = start.fen()
    return AnnotatedGame(
        headers=dict(headers),
        sans=list(sans[:kept]),
        ucis=[move.uci() for move in moves[:kept]],
        scores=[start_score, *scores],
        start_fen=None if fen == chess.STARTING_FEN else fen,
        first_mover_is_white=start.turn == chess.WHITE,
        counted_from_ply=counted_from,
        extra=extra,
    )


def _move_label(start: chess.Board, ply: int, san: str) -> str:
    """``11.Bg5`` / ``11...Na4`` for ply ``ply`` (1-based) of a line from ``start``."""
    k = ply - 1 + (0 if start.turn == chess.WHITE else 1)
    dots = "." if k % 2 == 0 else "..."
    return f"{start.fullmove_number + k // 2}{dots}{san}"


def annotated_from_pgn_evals(game: chess.pgn.Game, number: int = 1) -> AnnotatedGame:
    """Build an :class:`AnnotatedGame` from a game's ``[%eval]`` comments.

    Every position after a move needs an evaluation (a finished position,
    checkmate or stalemate, may go without). The start position's evaluation
    comes from a comment before the first move; without one the first move's
    gain cannot be known and is not counted (``counted_from_ply == 2``).
    A game whose evaluations stop for good (lichess evaluates 200 plies at
    most) is kept up to its last evaluated ply, with a note in
    ``extra["truncated"]`` (``evaluated up to ply 200 of 243``). Raises
    :class:`NoMovesError` for a game without moves, :class:`NoEvalsError`
    when it has no ``[%eval]`` at all and :class:`PgnError` naming the move
    when one is missing between evaluated plies or unreadable.
    """
    nodes = list(game.mainline())
    try:
        out = _annotated(
            game.headers,
            game.board(),
            [node.move for node in nodes],
            game.comment,
            [node.comment for node in nodes],
        )
    except PgnError as exc:
        raise type(exc)(f"game {number} ({_players(game)}): {exc}") from None
    out.extra = {"game_number": str(number), **out.extra}
    return out


def annotated_games_from_pgn(
    games: Sequence[chess.pgn.Game],
) -> tuple[list[AnnotatedGame], list[str]]:
    """Annotated games from ``[%eval]`` comments, skipping (with the reason)
    games without any evaluation, without moves, or with a problem (an
    evaluation missing between evaluated moves, or unreadable).

    Returns (games, skipped messages). Raises :class:`NoEvalsError` when no
    game has evaluations, :class:`PgnError` naming the first problem when no
    game can be analysed for another reason.
    """
    out: list[AnnotatedGame] = []
    skipped: list[str] = []
    problems: list[str] = []
    for k, game in enumerate(games, start=1):
        try:
            out.append(annotated_from_pgn_evals(game, k))
        except SkippedGameError as exc:
            skipped.append(str(exc))
        except PgnError as exc:  # this game only: the others are still analysed
            skipped.append(str(exc))
            problems.append(str(exc))
    if not out:
        if not problems:
            raise NoEvalsError("no [%eval] annotations in any game (use --evals engine)")
        more = f" (no game left to analyse: {len(skipped)} skipped)" if len(skipped) > 1 else ""
        raise PgnError(problems[0] + more)
    return out, skipped


def format_eval(cp: int, mate: int | None = None) -> str:
    """``[%eval]`` value: pawns with two decimals, or ``#N`` for a mate."""
    if mate is not None and mate != 0:
        return f"#{mate}"
    return f"{cp / 100:.2f}"


def annotated_pgn(game: AnnotatedGame) -> chess.pgn.Game:
    """A python-chess game with ``[%eval]`` and the gain of each move in comments."""
    out = chess.pgn.Game()
    out.headers.clear()
    for key, value in game.headers.items():
        out.headers[key] = value
    board = chess.Board(game.start_fen) if game.start_fen else chess.Board()
    if game.start_fen:
        out.setup(board)
    mates: list[int | None] = (
        [ev.mate for ev in game.evaluations]
        if game.evaluations is not None
        else [None] * len(game.scores)
    )
    if game.counted_from_ply <= 1:
        out.comment = f"[%eval {format_eval(game.scores[0], mates[0])}]"
    node: chess.pgn.GameNode = out
    white = game.first_mover_is_white
    for ply, uci in enumerate(game.ucis, start=1):
        move = chess.Move.from_uci(uci)
        node = node.add_main_variation(move)
        before, after = game.scores[ply - 1], game.scores[ply]
        delta = after - before
        g = delta if white else -delta
        text = f"[%eval {format_eval(after, mates[ply])}]"
        if ply >= game.counted_from_ply:
            text += f" gain {g / 100:+.2f}"
        node.comment = text
        board.push(move)
        white = not white
    return out


def write_annotated_pgn(games: Sequence[AnnotatedGame], path: str | Path) -> None:
    """Write games with ``[%eval ...]`` (lichess, ChessBase readable) and gains."""
    parts: list[str] = []
    for game in games:
        exporter = chess.pgn.StringExporter(headers=True, variations=False, comments=True)
        parts.append(annotated_pgn(game).accept(exporter))
    Path(path).write_text("\n\n".join(parts) + "\n", encoding="utf-8")
