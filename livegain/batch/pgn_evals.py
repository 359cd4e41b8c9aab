"""A game's ``[%eval ...]`` comments as an :class:`AnnotatedGame`: the
evaluation of every position of its main line, read with python-chess's
game tree or, for whole files, with a light reader that keeps only the main
line, its SAN and its comments.

Evaluations follow lichess's convention: ``[%eval 0.12]`` (pawns, White's
view), ``[%eval #-3]`` (mate in 3 for Black), optionally ``[%eval 0.12,20]``
(with depth). The comment after a move holds the evaluation of the position
after that move; a comment before the first move holds the start position's.
Mate scores and anything beyond 39 pawns become +/-3900 cp.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

import chess
import chess.pgn

from livegain.batch.annotated import AnnotatedGame
from livegain.batch.pgnio import (
    NoEvalsError,
    NoMovesError,
    PgnError,
    SkippedGameError,
    cannot_parse,
    default_headers,
    error_reason,
    players_of,
)
from livegain.core.evaluation import CLIP_CP, checkmated_score, clip, white_score


class Outcome(NamedTuple):
    """One game of a file as a reading process hands it back."""

    kind: Literal["empty", "game", "skip", "error", "crash"]
    game: AnnotatedGame | None = None
    players: str = ""
    reason: str = ""


def parse_evals(text: str) -> Outcome:
    try:
        parsed = chess.pgn.read_game(io.StringIO(text), Visitor=_EvalsVisitor)
    except Exception as exc:  # the parser's own bugs on hostile text
        return Outcome("crash", reason=cannot_parse(exc))
    if parsed is None:
        return Outcome("empty")
    players = players_of(parsed.headers)
    if parsed.errors:
        final = parsed.final

        def end() -> chess.Board:
            parsed.headers.board()  # raises for a bad FEN, as the game tree's board would
            assert final is not None
            return final

        return Outcome("error", None, players, error_reason(end, parsed.headers, parsed.errors[0]))
    if not parsed.moves and default_headers(parsed.headers):
        return Outcome("empty")
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
        return Outcome("skip", None, players, str(exc))
    except PgnError as exc:
        return Outcome("error", None, players, str(exc))
    return Outcome("game", game, players)


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
        raise type(exc)(f"game {number} ({players_of(game.headers)}): {exc}") from None
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
