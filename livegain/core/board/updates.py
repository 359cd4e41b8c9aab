"""What a board hands out: its clocks, models, plies, updates, errors,
evaluation requests and source status (typed, immutable values)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import chess

from livegain.core.accuracy import GameAccuracy
from livegain.core.evaluation import (
    Evaluation,
)
from livegain.core.human_wdl import HumanWdlModel
from livegain.core.ledger import TracePoint
from livegain.core.perceived import CalibratedRating, PerceivedModel
from livegain.core.rating import HeadToHead, PerceivedRating
from livegain.core.wdl import Wdl

if TYPE_CHECKING:
    from livegain.core.board.board import BoardGame

Color = Literal["white", "black"]
Status = Literal["live", "finished"]
UpdateKind = Literal["truncate", "move", "eval", "ply", "result", "clock"]


#: Priority of the current (latest) position of a board; backfill gets 1, 2, ...
LATEST_PRIORITY = 0


@dataclass(frozen=True)
class Clocks:
    """Seconds left on each clock; ``running``: whose clock runs (live games)."""

    white: int | None = None
    black: int | None = None
    running: Color | None = None
    white_time_trouble: bool = False
    black_time_trouble: bool = False
    time_trouble_below: int | None = None
    """Seconds under which a clock is in time trouble (core.timeuse); None: unknown."""


@dataclass(frozen=True)
class BoardModels:
    """The models one board uses: ``perceived`` (the calibrated perceived
    rating, None: Algorithm 4 only), ``wdl`` (the human W/D/L shown, None: the
    engine's), ``wdl_fallback`` (the W/D/L model is not one fitted for this
    game's kind and evaluations: the nearest one) and ``wdl_why`` (a line
    saying which model and why)."""

    perceived: PerceivedModel | None = None
    wdl: HumanWdlModel | None = None
    wdl_fallback: bool = False
    wdl_why: str = ""


@dataclass(frozen=True)
class PlyInfo:
    """One move on a board as it stands: ``eval`` of the position after it,
    ``wdl`` the W/D/L shown for it (the human model's when there is one),
    ``engine_wdl`` the engine's own (None when it gave none), ``gain`` once
    every position up to it is evaluated (the contiguous prefix)."""

    ply: int
    san: str
    uci: str
    color: Color
    fen: str
    clock: int | None = None
    eval: Evaluation | None = None
    wdl: Wdl | None = None
    gain: int | None = None
    engine_wdl: Wdl | None = None
    spent: int | None = None
    """Seconds the move took (core.timeuse.spent_seconds); None: unknown."""


@dataclass(frozen=True)
class BoardUpdate:
    """One change to one board, in ``seq`` order (per board, from 1).

    ``kind``: ``truncate`` (a correction/takeback/reset: drop plies >
    ``truncate_to``), ``move`` (a new move, not yet evaluated), ``eval`` (an
    evaluation arrived that does not extend the contiguous prefix: ``ply`` has
    its eval, no gain; for ply 0 ``ply`` is None), ``ply`` (the contiguous
    prefix grew to ``ply.ply``: gain, perceived ratings and trace points),
    ``result`` / ``clock`` (nothing else changed). Every update carries the
    board's values at that moment: current position, its eval, its shown
    ``wdl`` (made by ``wdl_model``, None: the engine's) and ``engine_wdl``,
    result, clocks, the ratings of each player: ``*_perceived`` (Algorithm 4),
    ``*_calibrated`` (the calibrated estimate; None without a model) and
    ``*_form`` (the official rating updated by the moves; None without a
    rating), the model's validated ``rating_range``, its rating ``scale`` and
    each player's ``*_label`` (:meth:`BoardGame.label`).
    """

    board_id: str
    seq: int
    kind: UpdateKind
    fen: str
    result: str
    status: Status
    clocks: Clocks
    truncate_to: int | None = None
    ply: PlyInfo | None = None
    eval: Evaluation | None = None
    wdl: Wdl | None = None
    white_perceived: PerceivedRating | None = None
    black_perceived: PerceivedRating | None = None
    white_calibrated: CalibratedRating | None = None
    black_calibrated: CalibratedRating | None = None
    rating_range: tuple[float, float] | None = None
    white_label: str | None = None
    black_label: str | None = None
    white_points: tuple[TracePoint, ...] = ()
    black_points: tuple[TracePoint, ...] = ()
    head_to_head: HeadToHead | None = None
    chess960: bool = False
    engine_wdl: Wdl | None = None
    wdl_model: str | None = None
    wdl_fallback: bool = False
    white_form: CalibratedRating | None = None
    black_form: CalibratedRating | None = None
    scale: str | None = None
    accuracy: GameAccuracy | None = None

    @classmethod
    def of(
        cls,
        game: BoardGame,
        seq: int,
        kind: UpdateKind,
        *,
        ply: PlyInfo | None = None,
        truncate_to: int | None = None,
        white_points: tuple[TracePoint, ...] = (),
        black_points: tuple[TracePoint, ...] = (),
    ) -> BoardUpdate:
        """Update ``seq`` of ``game``, with the board's values as they are now."""
        sc = game.scoring
        wdl = game.models.wdl
        return cls(
            board_id=game.board_id,
            seq=seq,
            kind=kind,
            fen=game.fen,
            result=game.result,
            status=game.status,
            clocks=game.clocks,
            truncate_to=truncate_to,
            ply=ply,
            eval=game.current_eval,
            wdl=game.current_wdl,
            white_perceived=sc.perceived("white"),
            black_perceived=sc.perceived("black"),
            white_calibrated=sc.calibrated("white"),
            black_calibrated=sc.calibrated("black"),
            rating_range=sc.rating_range,
            white_label=sc.label("white"),
            black_label=sc.label("black"),
            white_points=white_points,
            black_points=black_points,
            head_to_head=sc.head_to_head(),
            chess960=game.chess960,
            engine_wdl=game.engine_wdl_at(game.plies),
            wdl_model=None if wdl is None else wdl.name,
            wdl_fallback=game.wdl_fallback,
            white_form=sc.form("white"),
            black_form=sc.form("black"),
            scale=sc.scale,
            accuracy=game.accuracy(),
        )


@dataclass(frozen=True)
class BoardError:
    """Bad input seen on a board: what and where (``ply`` 1-based, ``san`` as given)."""

    board_id: str | None
    source: str
    message: str
    ply: int | None = None
    san: str | None = None

    def __str__(self) -> str:
        where = self.board_id or self.source
        if self.ply is not None:
            where += f" ply {self.ply}"
        if self.san is not None:
            where += f" ({self.san!r})"
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class EvalRequest:
    """A position that needs an evaluation. Lower ``priority`` = more urgent."""

    board_id: str
    ply: int
    fen: str
    priority: int
    chess960: bool = False

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.board_id, self.ply, self.fen)

    def board(self) -> chess.Board:
        return chess.Board(self.fen, chess960=self.chess960)


@dataclass(frozen=True)
class Applied:
    """What one snapshot did to a board (:meth:`BoardGame.apply`,
    :meth:`BoardGame.offer`), or a takeover that came due (:meth:`BoardGame.tick`):
    the updates to publish, in order, and the new errors. ``new_board``: the
    snapshot made the board (the registry says so); ``takeover``: the source
    that now drives the board, when this snapshot (or :meth:`BoardRegistry.tick`)
    handed the board to another one."""

    board_id: str | None
    new_board: bool = False
    info_changed: bool = False
    updates: tuple[BoardUpdate, ...] = ()
    errors: tuple[BoardError, ...] = ()
    takeover: str | None = None


@dataclass(frozen=True)
class IllegalPly:
    """An illegal move on a board (``ply`` 1-based, ``san`` as the feed wrote it).

    ``stood``: the game went on from the position after it, ``fen`` (reported by
    the feed, or the move played as the board shows it: a king left in check);
    its gain, and the next one's when that position cannot be evaluated, are not
    counted. Not stood: the board stops before it (``fen`` None), and ``after``
    moves the feed has past it wait for a position to go on from.
    """

    ply: int
    san: str
    stood: bool
    fen: str | None = None
    how: Literal["reported", "played", ""] = ""
    after: int = 0


@dataclass(frozen=True)
class SourceStatus:
    """One source of a board, as :meth:`BoardGame.source_status` shows it."""

    source: str
    priority: int
    active: bool
    plies: int  # moves (``moves + after_illegal``) in its last snapshot
    relation: Literal["same", "ahead", "behind", "conflict", "none"]
    differs_since: float | None
    conflicts: int
