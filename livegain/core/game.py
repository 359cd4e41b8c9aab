"""Live game state: boards, moves, corrections, results, clocks and evaluations.

Pure: no I/O, no clock, no asyncio. Feeds hand :class:`GameSnapshot` values to a
:class:`Tournament`; it matches each one to a board and works out what changed.
The service asks it which positions need an engine evaluation and hands the
answers back. Every call returns typed :class:`BoardUpdate` values to publish.
The rules are written out one at a time in ``docs/game-state.md``.

The whole API::

    t = Tournament(engine_rating=2860.0)        # engine=None: single peak at 0
    t = Tournament(2860.0, max_plies=1000, max_boards=1000)   # limits (None: none)
    applied = t.apply(snapshot)                 # -> Applied (now=...: see "Sources" below)
    applied.board_id, applied.new_board, applied.info_changed, applied.takeover
    applied.updates                             # tuple[BoardUpdate, ...] to publish, in order
    applied.errors                              # tuple[BoardError, ...] to log (already counted)

    for req in t.pending():                     # -> list[EvalRequest], best first
        ev = await pool.evaluate(req.board(), priority=req.priority)
        updates = t.record_eval(req.board_id, req.ply, req.fen, ev)   # -> list[BoardUpdate]

    t.iter_pending(), t.pending_count()         # the same, read lazily; how many
    t.take_changed()                            # boards that gained positions since last call
    t.refused                                   # snapshots refused by a limit (errors say why)

    t.boards                                    # dict board_id -> BoardGame (read-only views)
    t.board(board_id)                           # KeyError if unknown
    t.match(snapshot)                           # the board id a snapshot would go to, or None
    t.errors, t.unmatched                       # snapshots that matched no board (last few, count)
    t.tick(now)                                 # -> list[Applied]: takeovers that came due

    g = t.board(board_id)                       # what livegain.publish.convert reads:
    g.white, g.black, g.event, g.round, g.board, g.result, g.status, g.clocks
    g.start_fen, g.fen, g.plies, g.moves()      # list[PlyInfo]: san, uci, clock, eval, wdl, gain
    g.current_eval, g.current_wdl, g.start_eval, g.evaluated_plies
    g.wdl_at(ply), g.engine_wdl_at(ply)         # shown W/D/L (human model), the engine's own
    g.wdl_model, g.wdl_fallback, g.models       # the models the board uses (BoardModels)
    g.perceived("white"), g.calibrated("white"), g.form("white"), g.trace("black")
    g.head_to_head(), g.profile_sum("white")    # Algorithm 1; (moves, centi_sum) of a player
    g.rating_range, g.label("white"), g.scale   # the model's validated ratings, a player's label
    g.seq, g.errors, g.last_errors
    g.source_active, g.source_status(), g.takeovers, g.conflicts   # sources (below)
    g.illegal_plies, g.irregular                # illegal moves that stood / stop the board

``perceived`` is Algorithm 4 (:mod:`livegain.core.rating`); ``calibrated``
the calibrated estimate (:mod:`livegain.core.perceived`), present when the
tournament was given a :class:`~livegain.core.perceived.PerceivedModel`
(``Tournament(engine_rating, model=model)``), and ``form`` the player's
official rating (from the feed) updated by his moves (None without a rating).
All three come with every update, and each trace point carries them.

**Win/draw/loss.** With a human W/D/L model
(:class:`~livegain.core.human_wdl.HumanWdlModel`, ``Tournament(...,
wdl_model=m)``) the W/D/L shown for a position (``current_wdl``,
``start_wdl``, each ``PlyInfo.wdl``) is the model's, from the evaluation, the
ply, the side to move and the players' official ratings; the engine's own
W/D/L stays beside it (``engine_wdl``, None when the engine gives none).
Without one the engine's W/D/L is shown, else the win-chance curve
(:mod:`livegain.core.wdl`). ``Tournament(..., choose_models=f)`` picks the
models per board instead: ``f(snapshot) -> BoardModels``, called when the
board is made and whenever its players, event or tags change (a pure
lookup: the caller loads the models beforehand).

A :class:`BoardUpdate` has a ``kind``: ``truncate`` (drop plies after
``truncate_to``), ``move`` (a new, unevaluated move), ``eval`` (an evaluation
that does not extend the evaluated prefix), ``ply`` (the prefix grew: gain,
perceived ratings, trace point, head-to-head), ``clock`` or ``result``.

``pending()`` lists every missing evaluation each time it is called; a caller
that runs evaluations concurrently keeps its own in-flight set keyed by
``EvalRequest.key`` (board id, ply, FEN). ``record_eval`` ignores an answer
whose FEN is no longer the position at that ply (the board was corrected
meanwhile) and returns ``[]`` for it.

**Sources.** Snapshots of feeds that share an event group (``snap.group``)
match each other's boards: one game from two sources is one board. The
board follows one source at a time (``g.source_active``): a preferred one
(lower ``snap.priority``) whose list is not behind takes it at once; another
one takes it when its list has been ahead of (or in conflict with) the
active source's for ``snap.takeover_after`` seconds while the active source
changed nothing; until then a conflicting list is an error on the board.
Time is passed in: ``apply(snap, now)`` (default ``snap.received_at``) and
``tick(now)``; without it no takeover happens by time. Players are the same
when their FIDE ids are (:func:`player_key`), else their normalised names.

**Illegal moves that stood.** A move that cannot be played, followed by more
moves, does not stop the board when the feed reports the position after it
(``snap.fens``) or the move is pseudo-legal (a king left in check) and the
next one is legal after it: the game goes on from that position, the ply is
marked (``g.illegal_plies``, one error) and its gain is not counted (nor the
next one's when that position is no legal one, which is not evaluated).

Board ids are assigned once, when a board is first seen, and never change:
``{source}-g{GameId}`` when the game has a GameId, else ``{source}-r{round}-b{board}``,
else ``{source}-r{round}-{white}-{black}`` (surnames), each part slugified
(lowercase ASCII letters, digits and ``-``); a clash gets ``-2``, ``-3``...
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

import chess

from livegain.core.accuracy import NO_ACCURACY, GameAccuracy, game_accuracy, phases_from_fens
from livegain.core.evaluation import (
    Evaluation,
    Rule,
    draw_evaluation,
    draw_rule,
    repetitions,
    rule_evaluation,
)
from livegain.core.events import (
    GameSnapshot,
    PlayerInfo,
    fide_id_of,
    normalise_name,
    player_key,
)
from livegain.core.histogram import GainHistogram
from livegain.core.human_wdl import HumanWdlModel
from livegain.core.ledger import GameLedger, TracePoint, official_rating
from livegain.core.perceived import CalibratedRating, PerceivedModel
from livegain.core.rating import HeadToHead, PerceivedRating
from livegain.core.timeuse import (
    TimeControl,
    in_time_trouble,
    parse_time_control,
    spent_seconds,
    trouble_threshold,
)
from livegain.core.wdl import DEFAULT_DRAW_SHARE, Wdl, position_wdl

__all__ = [
    "DEFAULT_MAX_BOARDS",
    "DEFAULT_MAX_PLIES",
    "DEFAULT_TAKEOVER_AFTER",
    "RESULTS",
    "Applied",
    "BoardError",
    "BoardGame",
    "BoardModels",
    "BoardUpdate",
    "Clocks",
    "EvalRequest",
    "IllegalPly",
    "PlyInfo",
    "SourceStatus",
    "Tournament",
    "board_slug",
    "describe_snapshot",
    "dgt_signal_result",
    "engine_wdl",
    "player_key",
]

Color = Literal["white", "black"]
Status = Literal["live", "finished"]
UpdateKind = Literal["truncate", "move", "eval", "ply", "result", "clock"]

RESULTS = ("1-0", "0-1", "1/2-1/2", "*")
_RESULT_ALIASES = {
    "1-0": "1-0",
    "0-1": "0-1",
    "1/2-1/2": "1/2-1/2",
    "½-½": "1/2-1/2",
    "1/2": "1/2-1/2",
    "0.5-0.5": "1/2-1/2",
    "=": "1/2-1/2",
    "*": "*",
    "": "*",
    "whitewin": "1-0",
    "blackwin": "0-1",
    "draw": "1/2-1/2",
}

#: Priority of the current (latest) position of a board; backfill gets 1, 2, ...
LATEST_PRIORITY = 0

#: Default limits (``[limits]`` in the service's configuration): plies per game,
#: boards per tournament. Real games stay far below (the longest on record: 538 plies).
DEFAULT_MAX_PLIES = 1000
DEFAULT_MAX_BOARDS = 1000

CENTRE = (chess.D4, chess.D5, chess.E4, chess.E5)
_KING_TO_CENTRE_SAN = re.compile(r"^K[x:]?([de][45])[+#]?[!?]*$")
_UCI = re.compile(r"^([a-h][1-8])([a-h][1-8])[qrbn]?$")
_UNKNOWN_NAMES = frozenset({"", "?", "nn", "n n", "unknown", "bye", "tbd", "-"})


# --------------------------------------------------------------------------
# Values handed out
# --------------------------------------------------------------------------


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
    """What one snapshot did. ``takeover``: the source that now drives the board,
    when this snapshot (or :meth:`Tournament.tick`) handed the board to another one."""

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


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def normalize_result(result: str | None) -> str | None:
    """``1-0`` / ``0-1`` / ``1/2-1/2`` / ``*``, or None when not a result."""
    if result is None:
        return "*"
    return _RESULT_ALIASES.get(result.strip().lower().replace(" ", ""))


PlayerKey = tuple[str, str]  # (FIDE id or "", normalised name)
_Identity = tuple[PlayerKey, PlayerKey, str | None, int | None]  # players, round, board


def _player_key(p: PlayerInfo) -> PlayerKey:
    """Both halves of a player's identity; :func:`player_key` is the one-string form."""
    return (fide_id_of(p), normalise_name(p.name))


def _known(p: PlayerInfo | PlayerKey) -> bool:
    fide, name = _player_key(p) if isinstance(p, PlayerInfo) else p
    return bool(fide) or name not in _UNKNOWN_NAMES


def _same_player(a: PlayerKey, b: PlayerKey) -> bool:
    if a[0] and b[0]:
        return a[0] == b[0]
    return a[1] == b[1] and a[1] not in _UNKNOWN_NAMES


def _player_match(a: PlayerKey, b: PlayerKey) -> int:
    """2: the same known player; 1: one of them unknown (not yet entered); 0: different."""
    if not _known(a) or not _known(b):
        return 1
    return 2 if _same_player(a, b) else 0


def board_slug(text: str, limit: int = 40) -> str:
    """Lowercase ASCII letters, digits and single ``-``; at most ``limit`` chars."""
    t = unicodedata.normalize("NFKD", text)
    t = t.encode("ascii", "ignore").decode("ascii").lower()
    t = re.sub(r"[^a-z0-9]+", "-", t).strip("-")
    return t[:limit].strip("-") or "x"


def _surname(p: PlayerInfo) -> str:
    name = p.name.strip()
    if "," in name:
        return name.split(",", 1)[0]
    parts = name.split()
    return parts[-1] if parts else "nn"


def _identity(snap: GameSnapshot) -> _Identity:
    """How a snapshot names its game: both players' keys, round and board number."""
    rnd, board = _round_board(snap)
    return (_player_key(snap.white), _player_key(snap.black), rnd, board)


def _round_board(snap: GameSnapshot) -> tuple[str | None, int | None]:
    rnd = snap.round.strip() if snap.round else None
    if rnd in ("", "?", "-"):
        rnd = None
    board = snap.board
    if rnd is not None and "." in rnd:
        head, _, tail = rnd.partition(".")
        if board is None and tail.isdigit():
            board = int(tail)
        if tail.isdigit():
            rnd = head
    return rnd, board


def engine_wdl(ev: Evaluation) -> Wdl | None:
    """The engine's own W/D/L of an evaluation, per mille summing to 1000 (as
    :func:`livegain.core.wdl.position_wdl` rescales it); None when it gave none."""
    if ev.wdl is None:
        return None
    w, d, lo = ev.wdl
    total = w + d + lo
    if total <= 0 or min(w, d, lo) < 0:
        return None
    if total == 1000:
        return (w, d, lo)
    wn = round(1000 * w / total)
    ln = round(1000 * lo / total)
    return (wn, 1000 - wn - ln, ln)


def _is_standard_start(fen: str) -> bool:
    return fen.split()[:4] == chess.STARTING_FEN.split()[:4]


def _position_key(fen: str) -> tuple[str, ...]:
    return tuple(fen.split()[:4])


def dgt_signal_result(board: chess.Board, tokens: Iterable[str]) -> str | None:
    """The result signalled by DGT's "kings in the centre", or None.

    ``tokens`` are the trailing moves (at most two) from the first illegal one
    on. Each must be a king move to d4/d5/e4/e5 (SAN ``Kd4`` or UCI ``e1d4``);
    the first one moves the side to move's king, the next the other king. If
    afterwards both kings stand on centre squares: both on light squares
    (d5, e4) is 1-0, both on dark squares (d4, e5) is 0-1, one of each is a draw.
    """
    toks = list(tokens)
    if not 1 <= len(toks) <= 2:
        return None
    kings = {
        chess.WHITE: board.king(chess.WHITE),
        chess.BLACK: board.king(chess.BLACK),
    }
    if kings[chess.WHITE] is None or kings[chess.BLACK] is None:
        return None
    color = board.turn
    for tok in toks:
        tok = tok.strip()
        m = _KING_TO_CENTRE_SAN.match(tok)
        if m:
            kings[color] = chess.parse_square(m.group(1))
        else:
            u = _UCI.match(tok)
            if not u:
                return None
            src, dst = chess.parse_square(u.group(1)), chess.parse_square(u.group(2))
            if dst not in CENTRE:
                return None
            moved = [c for c, sq in kings.items() if sq == src]
            if not moved:
                return None
            color = moved[0]
            kings[color] = dst
        color = not color
    wk, bk = kings[chess.WHITE], kings[chess.BLACK]
    if wk not in CENTRE or bk not in CENTRE or wk == bk:
        return None
    light = {chess.D5, chess.E4}
    if wk in light and bk in light:
        return "1-0"
    if wk not in light and bk not in light:
        return "0-1"
    return "1/2-1/2"


# --------------------------------------------------------------------------
# One board
# --------------------------------------------------------------------------


@dataclass
class _Ply:
    token: str
    san: str
    uci: str
    fen: str
    white: bool
    clock: int | None = None
    stood: bool = False  # an illegal move that stood over the board
    evaluable: bool = True  # False: the position after it is no position an engine takes
    how: Literal["reported", "played", ""] = ""  # where a stood move's position came from


@dataclass(frozen=True)
class _Ratings:
    white: PerceivedRating | None
    black: PerceivedRating | None
    head_to_head: HeadToHead | None
    white_calibrated: CalibratedRating | None
    black_calibrated: CalibratedRating | None
    white_form: CalibratedRating | None
    black_form: CalibratedRating | None


@dataclass
class _NewPly:
    token: str
    uci: str
    san: str
    fen: str  # the position after it
    rule: Rule | None  # the draw rule that scores it (see draw_rule)
    stood: bool = False
    evaluable: bool = True
    how: Literal["reported", "played", ""] = ""


@dataclass
class _Parsed:
    moves: list[_NewPly]
    illegal_ply: int | None = None
    illegal_token: str | None = None
    illegal_reason: str | None = None
    illegal_fen: str | None = None
    illegal_after: int = 0  # tokens past the illegal move
    signal: str | None = None
    board: chess.Board | None = None  # the position after the last legal move


@dataclass
class _Source:
    """What one source last showed of a board."""

    priority: int
    takeover_after: float
    snap: GameSnapshot | None = None
    differs_since: float | None = None  # since when its list differs from the board's
    relation: Literal["same", "ahead", "behind", "conflict", "none"] = "none"
    conflict_key: tuple[int, str] | None = None  # the conflict last reported
    conflicts: int = 0


#: Seconds a source waits, showing more than the board, before it takes over
#: from a preferred source that no longer moves the board on (``takeover_after``).
DEFAULT_TAKEOVER_AFTER = 30.0


class BoardGame:
    """One board's game: moves, clocks, result, evaluations and the ledger.

    Read it through its properties; change it only through :class:`Tournament`.
    With a ``model`` every ledger it keeps also gives the calibrated estimate;
    with a ``wdl_model`` the W/D/L shown is the human model's;
    ``choose_models`` picks both from the board's snapshots instead.
    """

    def __init__(
        self,
        board_id: str,
        source: str,
        engine_rating: float,
        engine: GainHistogram | None = None,
        draw_share: float = DEFAULT_DRAW_SHARE,
        max_errors_kept: int = 20,
        model: PerceivedModel | None = None,
        group: str | None = None,
        wdl_model: HumanWdlModel | None = None,
        choose_models: Callable[[GameSnapshot], BoardModels] | None = None,
    ) -> None:
        self.board_id = board_id
        self.source = source  # the source that first showed the board
        self.group = group  # the event group its sources share (None: one source)
        self.source_active = source  # the source whose snapshots drive the board
        self._sources: dict[str, _Source] = {}
        self.game_ids: dict[str, str] = {}  # source -> the GameId it gives this game
        # source -> the identity it last gave the game: players, round, board number
        self.seen_as: dict[str, _Identity] = {}
        self.takeovers = 0
        self.conflicts = 0
        self.engine_rating = float(engine_rating)
        self._engine = engine
        self.model = model
        self.models = BoardModels(model, wdl_model)
        self._choose_models = choose_models
        self._draw_share = draw_share
        self.white = PlayerInfo(name="?")
        self.black = PlayerInfo(name="?")
        self.white_key: PlayerKey = _player_key(self.white)
        self.black_key: PlayerKey = _player_key(self.black)
        self.game_id: str | None = None
        self.event: str | None = None
        self.round: str | None = None
        self.board: int | None = None
        self.tags: dict[str, str] = {}
        self.feed_result = "*"
        self.signal_result: str | None = None
        self._start_fen = chess.STARTING_FEN
        self.chess960 = False
        self._plies: list[_Ply] = []
        self._evals: dict[int, Evaluation] = {}
        self._ledger = self._new_ledger(first_mover_is_white=True)
        self._ledger_plies = -1  # -1: start score not set
        self._clock_white: int | None = None
        self._clock_black: int | None = None
        self.seq = 0
        self.errors = 0
        self.last_errors: deque[BoardError] = deque(maxlen=max_errors_kept)
        self._last_illegal: tuple[str, int, str] | None = None
        self._stopped: IllegalPly | None = None  # the illegal move the board stops at
        self._stood_seen: set[tuple[int, str, str]] = set()  # stood moves reported
        self._no_eval: set[int] = set()  # plies whose position the engine cannot take
        self._uncounted: set[int] = set()  # plies whose gain is not counted
        self._board_result = "*"  # checkmate / stalemate of the current position
        self._tip: chess.Board | None = None  # the current position, once parsed
        self._last_snap: GameSnapshot | None = None
        self._models_snap: GameSnapshot | None = None  # the snapshot models were chosen on
        self._input_problems: set[str] = set()
        self._ledger_version = 0
        self._ratings_cache: tuple[int, _Ratings] | None = None
        self._accuracy_cache: tuple[int, GameAccuracy] | None = None
        # The ledger's gains, mirrored (reading them from the ledger copies them).
        self._gains: list[int] = []
        # Bumped whenever the positions or their evaluations change: the
        # missing positions are worked out again only then.
        self.version = 0
        self._missing_cache: tuple[int, list[int]] | None = None
        self._wdl_kept: dict[
            int,
            tuple[Evaluation, HumanWdlModel, float | None, float | None, str, Wdl],
        ] = {}

    # -- views ------------------------------------------------------------
    @property
    def start_fen(self) -> str:
        return self._start_fen

    @property
    def custom_start(self) -> bool:
        """True when the game starts from a position other than the standard one."""
        return not _is_standard_start(self._start_fen)

    @property
    def plies(self) -> int:
        return len(self._plies)

    @property
    def fen(self) -> str:
        return self._plies[-1].fen if self._plies else self._start_fen

    def fen_at(self, ply: int) -> str:
        return self._start_fen if ply == 0 else self._plies[ply - 1].fen

    @property
    def sans(self) -> list[str]:
        return [p.san for p in self._plies]

    @property
    def ucis(self) -> list[str]:
        return [p.uci for p in self._plies]

    @property
    def result(self) -> str:
        """The feed's result if it has one, else DGT's signal, else checkmate/stalemate."""
        if self.feed_result != "*":
            return self.feed_result
        if self.signal_result is not None:
            return self.signal_result
        return self._board_result

    @property
    def status(self) -> Status:
        return "live" if self.result == "*" else "finished"

    @property
    def clocks(self) -> Clocks:
        running: Color | None = None
        if self.status == "live" and self._plies:
            running = "white" if self.fen.split()[1] == "w" else "black"
        below = self.time_trouble_below
        return Clocks(
            self._clock_white,
            self._clock_black,
            running,
            in_time_trouble(self._clock_white, below),
            in_time_trouble(self._clock_black, below),
            below,
        )

    @property
    def time_control(self) -> TimeControl | None:
        """The game's time control from its ``TimeControl`` tag (None: unknown)."""
        return parse_time_control(self.tags.get("TimeControl"))

    @property
    def time_trouble_below(self) -> int | None:
        """Seconds under which a clock is in time trouble (core.timeuse)."""
        first = [p.clock for p in self._plies[:2]]
        return trouble_threshold(self.time_control, first)

    def spent_at(self, ply: int) -> int | None:
        """Seconds move ``ply`` (1-based) took (core.timeuse.spent_seconds)."""
        if ply < 1 or ply > len(self._plies):
            return None
        p = self._plies[ply - 1]
        first_white = self._plies[0].white
        move = (ply + 1) // 2 if p.white == first_white else ply // 2
        previous = self._plies[ply - 3].clock if ply > 2 else None
        return spent_seconds(self.time_control, move, p.clock, previous)

    def eval_at(self, ply: int) -> Evaluation | None:
        return self._evals.get(ply)

    @property
    def start_eval(self) -> Evaluation | None:
        return self._evals.get(0)

    @property
    def current_eval(self) -> Evaluation | None:
        return self._evals.get(len(self._plies))

    @property
    def wdl_model(self) -> HumanWdlModel | None:
        """The human W/D/L model shown (None: the engine's W/D/L)."""
        return self.models.wdl

    @property
    def wdl_fallback(self) -> bool:
        """True when the W/D/L model is not one fitted for this game's kind."""
        return self.models.wdl is not None and self.models.wdl_fallback

    def official_rating(self, color: Color) -> float | None:
        """The player's official rating from the feed (None: unknown or 0)."""
        return official_rating((self.white if color == "white" else self.black).rating)

    def _shown_wdl(self, ply: int, ev: Evaluation) -> Wdl:
        m = self.models.wdl
        if m is None:
            return position_wdl(ev, self._draw_share)
        white, black = self.official_rating("white"), self.official_rating("black")
        fen = self.fen_at(ply)
        # kept per ply: every update and snapshot reads the shown W/D/L of
        # every move, and it changes only with the evaluation, the model, the
        # ratings or the position
        kept = self._wdl_kept.get(ply)
        if (
            kept is not None
            and kept[0] is ev
            and kept[1] is m
            and kept[2] == white
            and kept[3] == black
            and kept[4] == fen
        ):
            return kept[5]
        wdl = m.wdl(ev, ply, white, black, fen.split()[1] == "w")
        self._wdl_kept[ply] = (ev, m, white, black, fen, wdl)
        return wdl

    def wdl_at(self, ply: int) -> Wdl | None:
        """The W/D/L shown for the position after ``ply`` plies (None: not evaluated)."""
        ev = self._evals.get(ply)
        return None if ev is None else self._shown_wdl(ply, ev)

    def engine_wdl_at(self, ply: int) -> Wdl | None:
        """The engine's own W/D/L of that position (None: none given)."""
        ev = self._evals.get(ply)
        return None if ev is None else engine_wdl(ev)

    @property
    def start_wdl(self) -> Wdl | None:
        return self.wdl_at(0)

    @property
    def current_wdl(self) -> Wdl | None:
        return self.wdl_at(len(self._plies))

    @property
    def evaluated_plies(self) -> int:
        """Length of the contiguous evaluated prefix (gains known up to this ply); -1: none."""
        return self._ledger_plies

    @property
    def ledger(self) -> GameLedger:
        return self._ledger

    def ply_info(self, ply: int, gains: list[int] | None = None) -> PlyInfo:
        """Move ``ply`` (1-based) as it stands; ``gains``: the ledger's, if already at hand."""
        p = self._plies[ply - 1]
        ev = self._evals.get(ply)
        if gains is None:
            gains = self._gains
        return PlyInfo(
            ply=ply,
            san=p.san,
            uci=p.uci,
            color="white" if p.white else "black",
            fen=p.fen,
            clock=p.clock,
            eval=ev,
            wdl=None if ev is None else self._shown_wdl(ply, ev),
            gain=gains[ply - 1] if ply <= len(gains) and ply not in self._uncounted else None,
            engine_wdl=None if ev is None else engine_wdl(ev),
            spent=self.spent_at(ply),
        )

    def moves(self) -> list[PlyInfo]:
        gains = self._gains
        return [self.ply_info(k, gains) for k in range(1, len(self._plies) + 1)]

    def perceived(self, color: Color) -> PerceivedRating | None:
        """Algorithm 4 over the contiguous evaluated prefix; None before the player's first move."""
        r = self._ratings()
        return r.white if color == "white" else r.black

    def calibrated(self, color: Color) -> CalibratedRating | None:
        """The calibrated estimate over the contiguous evaluated prefix; None
        without a model or before the player's first move."""
        r = self._ratings()
        return r.white_calibrated if color == "white" else r.black_calibrated

    @property
    def rating_range(self) -> tuple[float, float] | None:
        """The ratings the calibrated model was fitted to and validated on
        (its ``rating_low``, ``rating_high``); None without a model or a range."""
        m = self.model
        if m is None or m.rating_low is None or m.rating_high is None:
            return None
        return (m.rating_low, m.rating_high)

    def form(self, color: Color) -> CalibratedRating | None:
        """The player's official rating updated by his moves over the
        contiguous evaluated prefix; None without a rating, without a model
        with forward curves, or before his first move."""
        r = self._ratings()
        return r.white_form if color == "white" else r.black_form

    def profile_sum(self, color: Color) -> tuple[int, int]:
        """(moves, sum of move scores in hundredths) of the player's calibrated
        profile in this game: what a model combines over several games."""
        return self._ledger.profile_sum(color)

    @property
    def scale(self) -> str | None:
        """The calibrated model's rating scale ("fide", "lichess"); None without one."""
        return self.model.scale if self.model is not None else None

    def label(self, color: Color) -> str | None:
        """What to show beside the player's calibrated numbers: the model's
        :meth:`~livegain.core.perceived.PerceivedModel.range_label` of his
        official rating (of his estimate when he has none): None inside the
        fitted range, ``extrapolated`` above it, the model's below-label under it."""
        m = self.model
        if m is None:
            return None
        rating = self.official_rating(color)
        if rating is None:
            c = self.calibrated(color)
            rating = None if c is None else c.rating
        return m.range_label(rating)

    def trace(self, color: Color) -> list[TracePoint]:
        return self._ledger.trace(color)

    def accuracy(self) -> GameAccuracy:
        """Both players' accuracies (lichess's method, :mod:`livegain.core.accuracy`)
        over the contiguous evaluated prefix, overall and by phase; recomputed
        from the ledger's scores when they change (exact after any rollback)."""
        cache = self._accuracy_cache
        if cache is None or cache[0] != self._ledger_version:
            n = max(self._ledger_plies, 0)
            scores = self._ledger.scores[: n + 1]
            if n == 0:
                value = GameAccuracy(NO_ACCURACY, NO_ACCURACY)
            else:
                value = game_accuracy(
                    scores,
                    self._ledger.first_mover_is_white,
                    phases_from_fens([self.fen_at(k) for k in range(n)]),
                    self._uncounted,
                )
            cache = self._accuracy_cache = (self._ledger_version, value)
        return cache[1]

    def head_to_head(self) -> HeadToHead | None:
        """Algorithm 1, White against Black; None until both have moved."""
        return self._ratings().head_to_head

    def missing(self) -> list[int]:
        """Plies (0 = start) whose position has no evaluation yet."""
        return list(self._missing())

    def _missing(self) -> list[int]:
        """:meth:`missing`, worked out once per :attr:`version` (do not modify)."""
        cached = self._missing_cache
        if cached is not None and cached[0] == self.version:
            return cached[1]
        n = len(self._plies)
        if self._no_eval:  # a game that went on from an illegal position
            skip = self._no_eval
            out: list[int] = [k for k in range(n + 1) if k not in self._evals and k not in skip]
        elif len(self._evals) == n + 1:  # evaluations only ever exist for plies 0..n
            out = []
        elif len(self._evals) == n and n not in self._evals:
            out = [n]
        else:
            out = [k for k in range(n + 1) if k not in self._evals]
        self._missing_cache = (self.version, out)
        return out

    @property
    def pending_count(self) -> int:
        """How many positions of this board wait for an evaluation."""
        return len(self._missing())

    def requests(self) -> list[EvalRequest]:
        """This board's evaluation requests: latest position first, then oldest missing."""
        return list(self.iter_requests())

    def latest_request(self) -> EvalRequest | None:
        """The current position's request (priority 0), or None when it is evaluated."""
        n = len(self._plies)
        if n in self._evals or n in self._no_eval:
            return None
        return EvalRequest(self.board_id, n, self.fen, LATEST_PRIORITY, self.chess960)

    def iter_requests(self, latest: bool = True) -> Iterator[EvalRequest]:
        """:meth:`requests` one at a time, built only as they are read (``latest``:
        include the current position's request, else only the backfill)."""
        missing = self._missing()
        n = len(self._plies)
        if not missing:
            return
        if latest and n not in self._evals and n not in self._no_eval:
            yield EvalRequest(self.board_id, n, self.fen, LATEST_PRIORITY, self.chess960)
        rank = 0
        for k in missing:
            if k == n:
                continue
            rank += 1
            yield EvalRequest(self.board_id, k, self.fen_at(k), rank, self.chess960)

    @property
    def illegal_plies(self) -> tuple[IllegalPly, ...]:
        """The illegal moves that stood over the board (the game went on from the
        position after them), then the one the board stops at, if any."""
        stood = tuple(
            IllegalPly(k, p.san, True, p.fen, p.how)
            for k, p in enumerate(self._plies, start=1)
            if p.stood
        )
        return stood + ((self._stopped,) if self._stopped is not None else ())

    @property
    def irregular(self) -> bool:
        """True when an illegal move stood, or the board stops at one with moves past it."""
        return any(p.stood for p in self._plies) or (
            self._stopped is not None and self._stopped.after > 0
        )

    @property
    def last_snapshot(self) -> GameSnapshot | None:
        """The snapshot the board last applied (its driving source's): what to store."""
        return self._last_snap

    def source_status(self) -> list[SourceStatus]:
        """Every source that showed this board, preferred first (see ``docs/feeds.md``)."""
        out = []
        for name, st in sorted(self._sources.items(), key=lambda kv: (kv[1].priority, kv[0])):
            plies = len(st.snap.tokens) if st.snap is not None else 0
            out.append(
                SourceStatus(
                    name,
                    st.priority,
                    name == self.source_active,
                    plies,
                    "same" if name == self.source_active else st.relation,
                    st.differs_since,
                    st.conflicts,
                )
            )
        return out

    def state(self) -> tuple[object, ...]:
        """Everything that defines the board's game (not seq or error counts), for equality."""
        return (
            self.board_id,
            self.white,
            self.black,
            self.result,
            self._start_fen,
            tuple((p.san, p.uci, p.fen, p.clock, p.stood) for p in self._plies),
            tuple(sorted(self._evals.items())),
            self._ledger_plies,
            self._ledger.state(),
            self.clocks,
        )

    # -- internals ----------------------------------------------------------
    def _chess_board(self, fen: str) -> chess.Board:
        return chess.Board(fen, chess960=self.chess960)

    def _error(
        self,
        message: str,
        ply: int | None = None,
        san: str | None = None,
        source: str | None = None,
    ) -> BoardError:
        err = BoardError(self.board_id, source or self.source_active, message, ply, san)
        self.errors += 1
        self.last_errors.append(err)
        return err

    def _next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def _update(
        self,
        kind: UpdateKind,
        *,
        ply: PlyInfo | None = None,
        truncate_to: int | None = None,
        white_points: tuple[TracePoint, ...] = (),
        black_points: tuple[TracePoint, ...] = (),
    ) -> BoardUpdate:
        return BoardUpdate(
            board_id=self.board_id,
            seq=self._next_seq(),
            kind=kind,
            fen=self.fen,
            result=self.result,
            status=self.status,
            clocks=self.clocks,
            truncate_to=truncate_to,
            ply=ply,
            eval=self.current_eval,
            wdl=self.current_wdl,
            white_perceived=self.perceived("white"),
            black_perceived=self.perceived("black"),
            white_calibrated=self.calibrated("white"),
            black_calibrated=self.calibrated("black"),
            rating_range=self.rating_range,
            white_label=self.label("white"),
            black_label=self.label("black"),
            white_points=white_points,
            black_points=black_points,
            head_to_head=self.head_to_head(),
            chess960=self.chess960,
            engine_wdl=self.engine_wdl_at(len(self._plies)),
            wdl_model=None if self.models.wdl is None else self.models.wdl.name,
            wdl_fallback=self.wdl_fallback,
            white_form=self.form("white"),
            black_form=self.form("black"),
            scale=self.scale,
            accuracy=self.accuracy(),
        )

    def _parse(
        self, start: int, tokens: tuple[str, ...], reported: tuple[str | None, ...] = ()
    ) -> _Parsed:
        """Parse ``tokens[start:]`` from the position at ply ``start``; ``reported``:
        the feed's positions per ply (for a move that cannot be played)."""
        if start == len(self._plies) and self._tip is not None:
            b = self._tip.copy(stack=False)  # the usual case: moves appended at the end
        else:
            b = self._chess_board(self.fen_at(start))
        out = _Parsed(moves=[])
        fens: list[str] = []  # the new positions
        ok = start not in self._no_eval  # the current position is one the engine takes

        def fen_of(ply: int) -> str:  # the game's positions as they will stand
            return self.fen_at(ply) if ply <= start else fens[ply - start - 1]

        for i in range(start, len(tokens)):
            tok = tokens[i].strip()
            move = _parse_move(b, tok)
            if move is None:
                signal = dgt_signal_result(b, tokens[i:])
                stood = None if signal is not None else self._stood(b, tokens, i, reported)
                if stood is not None:
                    # An illegal move that stood over the board: play goes on from the
                    # position after it (reported by the feed, or the move as played).
                    b, uci, how = stood
                    ok = b.is_valid()
                    fens.append(b.fen())
                    out.moves.append(_NewPly(tokens[i], uci, tok, fens[-1], None, True, ok, how))
                    continue
                out.illegal_ply = i + 1
                out.illegal_token = tokens[i]
                out.illegal_fen = b.fen()
                out.illegal_after = len(tokens) - i - 1
                if signal is not None:
                    out.signal = signal
                else:
                    out.illegal_reason = (
                        "illegal move" if tok else "empty move"
                    ) + f" in position {b.fen()}"
                break
            san = b.san(move)
            b.push(move)
            fens.append(b.fen())
            if not ok:  # after an illegal position: is this one legal again?
                ok = b.is_valid()
            if ok:
                # Three occurrences need at least 8 plies without a capture or pawn move.
                repeated = repetitions(fen_of, i + 1) if b.halfmove_clock >= 8 else 1
                rule = draw_rule(b, repeated)
            else:
                rule = None
            out.moves.append(_NewPly(tokens[i], move.uci(), san, fens[-1], rule, evaluable=ok))
        out.board = b
        return out

    def _stood(
        self, b: chess.Board, tokens: tuple[str, ...], i: int, reported: tuple[str | None, ...]
    ) -> tuple[chess.Board, str, Literal["reported", "played"]] | None:
        """The position after ``tokens[i]``, a move that cannot be played in ``b``,
        when the game visibly went on from it: the position the feed reports for
        that ply; else the one this board already went on from after the same
        move; else, when the move is pseudo-legal (a king left in check, a pinned
        piece moved) and the next move is legal after it, the move as played."""
        tok = tokens[i].strip()
        text = reported[i] if i < len(reported) else None
        if text:
            after = _reported_position(b, text)
            if after is not None:
                return after, _diff_uci(b, after), "reported"
        if i < len(self._plies):
            p = self._plies[i]
            if p.stood and p.token.strip() == tok and self.fen_at(i) == b.fen():
                after = self._chess_board(p.fen)
                return after, p.uci, p.how or "reported"
        if i + 1 < len(tokens):
            move = _pseudo_legal(b, tok)
            if move is not None:
                after = b.copy(stack=False)
                after.push(move)
                if _parse_move(after, tokens[i + 1].strip()) is not None:
                    return after, move.uci(), "played"
        return None

    def _settle_position(self, board: chess.Board | None = None) -> None:
        """After the move list changed: the current position's result, and its
        score when the rules decide it (see :func:`rule_evaluation`: checkmate,
        stalemate, a draw by rule, repetitions counted over the game's
        positions). Only the last position can be checkmate or stalemate; the
        draws by rule of positions that play went on from are scored as their
        moves arrive (:meth:`apply`)."""
        b = board if board is not None else self._chess_board(self.fen)
        n = len(self._plies)
        if n in self._no_eval:  # an illegal position: neither scored nor finished
            self._board_result = "*"
            return
        if n not in self._evals:
            ev = rule_evaluation(b, repetitions(self.fen_at, n))
            if ev is not None:
                self._evals[n] = ev
                self.version += 1
        if b.is_checkmate():
            self._board_result = "0-1" if b.turn == chess.WHITE else "1-0"
        elif b.is_stalemate():
            self._board_result = "1/2-1/2"
        else:
            self._board_result = "*"

    def _ratings(self) -> _Ratings:
        """Both perceived ratings (Algorithm 4 and calibrated) and head-to-head,
        recomputed only when the ledger changed."""
        if self._ratings_cache is None or self._ratings_cache[0] != self._ledger_version:
            led = self._ledger
            white, black = led.white.n > 0, led.black.n > 0
            value = _Ratings(
                led.perceived("white") if white else None,
                led.perceived("black") if black else None,
                led.head_to_head() if white and black else None,
                led.calibrated("white") if white else None,
                led.calibrated("black") if black else None,
                led.form("white") if white else None,
                led.form("black") if black else None,
            )
            self._ratings_cache = (self._ledger_version, value)
        return self._ratings_cache[1]

    def _truncate(self, plies: int) -> None:
        del self._plies[plies:]
        self.version += 1
        self._no_eval = {k for k in self._no_eval if k <= plies}
        self._uncounted = {k for k in self._uncounted if k <= plies}
        # Clocks of abandoned moves go too; _set_clocks recomputes them.
        self._clock_white = self._clock_black = None
        for k in [k for k in self._evals if k > plies]:
            del self._evals[k]
        if self._ledger_plies > plies:
            self._ledger.truncate(plies)
            del self._gains[plies:]
            self._ledger_plies = plies
            self._ledger_version += 1

    def _reset(self, start_fen: str, chess960: bool) -> None:
        self._tip = None
        self._plies = []
        self._evals = {}
        self._no_eval = set()
        self._uncounted = set()
        self._start_fen = start_fen
        self.chess960 = chess960
        turn_white = start_fen.split()[1] == "w"
        self._ledger = self._new_ledger(first_mover_is_white=turn_white)
        self._gains = []
        self._ledger_plies = -1
        self._ledger_version += 1
        self.version += 1
        self._settle_position()

    def _new_ledger(self, first_mover_is_white: bool) -> GameLedger:
        # The ledger starts at the start position (ply 0), so its first ply is
        # the board's ply 1: plies count from the first move of the move list,
        # as in ``livegain analyze`` (whose figures the live ones must equal).
        return GameLedger(
            self.engine_rating,
            self._engine,
            first_mover_is_white=first_mover_is_white,
            model=self.model,
            first_ply=1,
            white_rating=self.official_rating("white"),
            black_rating=self.official_rating("black"),
        )

    def _set_models(self, models: BoardModels) -> bool:
        """Use other models (True: they changed). A new perceived model
        rebuilds the ledger from the evaluations (no updates: the caller
        publishes the whole board, as for any change of its players or tags)."""
        if models == self.models:
            return False
        rebuild = models.perceived is not self.model
        self.models = models
        self.model = models.perceived
        if rebuild:
            self._ledger = self._new_ledger(first_mover_is_white=self._start_fen.split()[1] == "w")
            self._gains = []
            self._uncounted = set()
            self._ledger_plies = -1
            self._ledger_version += 1
            self._advance(emit=False)
        return True

    def _advance(self, emit: bool = True) -> list[BoardUpdate]:
        """Push every newly contiguous evaluation into the ledger (``emit``
        False: make no updates, as when the ledger is rebuilt)."""
        out: list[BoardUpdate] = []
        if self._ledger_plies < 0:
            start = self._evals.get(0)
            if start is None:
                return out
            self._ledger.set_start(start.cp)
            self._ledger_plies = 0
            self._ledger_version += 1
        while self._ledger_plies < len(self._plies):
            k = self._ledger_plies + 1
            if k in self._no_eval:  # no score: the reference stays where it was
                score = self._ledger.scores[-1]
            elif k in self._evals:
                score = self._evals[k].cp
            else:
                break
            # Gains across an illegal move that stood are not counted: its own, and
            # the next one's when the position after it is no legal position.
            counted = not (
                self._plies[k - 1].stood or k in self._no_eval or (k - 1) in self._no_eval
            )
            lp = self._ledger.push(score, counted=counted)
            self._gains.append(lp.gain)
            if not counted:
                self._uncounted.add(k)
            self._ledger_plies = k
            self._ledger_version += 1
            if not emit:
                continue
            point = TracePoint(k, lp.perceived, lp.calibrated, lp.form)
            out.append(
                self._update(
                    "ply",
                    ply=self.ply_info(k),
                    white_points=(point,) if counted and lp.mover == "white" else (),
                    black_points=(point,) if counted and lp.mover == "black" else (),
                )
            )
        return out

    # -- sources --------------------------------------------------------------
    def offer(
        self, snap: GameSnapshot, now: float | None = None
    ) -> tuple[list[BoardUpdate], list[BoardError], bool, str | None]:
        """Fold in a snapshot from any of the board's sources: the active source's
        is applied; another's takes the board over when its source is preferred
        (lower ``priority``) and not behind, or when it has shown more than the
        active source (or a conflicting list) for ``takeover_after`` seconds while
        the active source changed nothing; otherwise it is kept for
        :meth:`tick`, and a conflicting list is an error. ``now``: seconds on the
        caller's clock (None: no takeover by time). Returns (updates, errors,
        info changed, the source that took the board over or None)."""
        src = snap.source
        after = snap.takeover_after or DEFAULT_TAKEOVER_AFTER
        st = self._sources.get(src)
        if st is None:
            st = self._sources[src] = _Source(snap.priority, after)
        st.priority, st.takeover_after, st.snap = snap.priority, after, snap
        if src == self.source_active:
            version, seq = self.version, self.seq
            updates, errors, info = self.apply(snap)
            if len(self._sources) > 1 and (self.version != version or self.seq != seq):
                self._restart_windows(now)  # the active source is alive
            return updates, errors, info, None
        active = self._sources.get(self.source_active)
        rel, at = self._relation(snap)
        st.relation = rel
        if rel not in ("ahead", "conflict"):
            st.differs_since = None
        elif st.differs_since is None:
            st.differs_since = now
        preferred = active is None or st.priority < active.priority
        if (preferred and rel != "behind") or self._stalled(st, now):
            return self._take_over(src, now)
        conflict: list[BoardError] = []
        if rel == "conflict":
            tokens = snap.tokens
            key = (at, tokens[at - 1] if at <= len(tokens) else "")
            if key != st.conflict_key:
                st.conflict_key = key
                st.conflicts += 1
                self.conflicts += 1
                conflict.append(
                    self._error(
                        f"move list from {src} conflicts with the board's (from "
                        f"{self.source_active}) at this ply; the board keeps its own "
                        f"unless {self.source_active} stops for {st.takeover_after:g} s",
                        at,
                        key[1],
                        source=src,
                    )
                )
        else:
            st.conflict_key = None
        return [], conflict, False, None

    def tick(
        self, now: float
    ) -> tuple[list[BoardUpdate], list[BoardError], bool, str | None] | None:
        """Hand the board to a waiting source whose ``takeover_after`` has run out
        (preferred first); None when none has."""
        waiting = [
            (st.priority, name)
            for name, st in self._sources.items()
            if name != self.source_active and st.snap is not None and self._stalled(st, now)
        ]
        if not waiting:
            return None
        return self._take_over(min(waiting)[1], now)

    def _stalled(self, st: _Source, now: float | None) -> bool:
        return (
            now is not None
            and st.differs_since is not None
            and now - st.differs_since >= st.takeover_after
        )

    def _take_over(
        self, src: str, now: float | None
    ) -> tuple[list[BoardUpdate], list[BoardError], bool, str | None]:
        st = self._sources[src]
        assert st.snap is not None
        self.source_active = src
        self.takeovers += 1
        st.differs_since, st.conflict_key, st.relation = None, None, "same"
        self._last_snap = None  # the new source's snapshot is applied in full
        updates, errors, info = self.apply(st.snap)
        self._restart_windows(now)
        return updates, errors, info, src

    def _restart_windows(self, now: float | None) -> None:
        """The board changed under its active source: every other source's wait
        starts again (from ``now`` if it still shows more, or conflicts)."""
        for name, st in self._sources.items():
            if name == self.source_active or st.snap is None:
                continue
            st.relation = self._relation(st.snap)[0]
            st.differs_since = now if st.relation in ("ahead", "conflict") else None

    def _relation(
        self, snap: GameSnapshot
    ) -> tuple[Literal["same", "ahead", "behind", "conflict"], int]:
        """How ``snap``'s move list stands to the active source's (what the board
        follows): ``same``, ``ahead`` (more moves, or a result where the active
        source has none), ``behind`` (a prefix), ``conflict`` (they differ at a
        ply: returned with it)."""
        active = self._sources.get(self.source_active)
        ref_snap = active.snap if active is not None else None
        ref = ref_snap.tokens if ref_snap is not None else tuple(p.token for p in self._plies)
        ref_result = normalize_result(ref_snap.result) if ref_snap is not None else self.result
        tokens = snap.tokens
        n, m = len(ref), len(tokens)
        for k in range(min(n, m)):
            a, b = ref[k], tokens[k]
            if a == b:
                continue
            a, b = a.strip().rstrip("+#!?"), b.strip().rstrip("+#!?")
            if a == b:
                continue
            if k < len(self._plies) and not self._plies[k].stood:
                move = _parse_move(self._chess_board(self.fen_at(k)), b)
                if move is not None and move.uci() == self._plies[k].uci:
                    continue  # the same move written otherwise (g1f3 / Nf3)
            return "conflict", k + 1
        if m > n:
            return "ahead", n + 1
        if m < n:
            return "behind", m
        result = normalize_result(snap.result)
        if result not in (None, "*") and ref_result in (None, "*"):
            return "ahead", n
        return "same", n

    # -- snapshot -------------------------------------------------------------
    def apply(self, snap: GameSnapshot) -> tuple[list[BoardUpdate], list[BoardError], bool]:
        """Fold one snapshot in. Returns (updates, new errors, info changed)."""
        if snap == self._last_snap:
            return [], [], False  # applying a snapshot is idempotent: the same again is a no-op
        self._last_snap = snap
        errors: list[BoardError] = []
        updates: list[BoardUpdate] = []
        info_changed = self._apply_info(snap)
        if self._choose_models is not None and (info_changed or self._models_snap is None):
            self._models_snap = snap
            info_changed = self._set_models(self._choose_models(snap)) or info_changed
        seen, self._input_problems = self._input_problems, set()

        def problem(message: str) -> None:
            # Counted once while it lasts, not once per poll.
            self._input_problems.add(message)
            if message not in seen:
                errors.append(self._error(message))

        # Start position (initial FEN, Chess960)
        start = self._start_from(snap, problem)
        if start is None:
            return updates, errors, info_changed
        start_fen, chess960 = start
        reset = _position_key(start_fen) != _position_key(self._start_fen) or (
            chess960 != self.chess960
        )
        old_result, old_clocks = self.result, self.clocks
        if reset:
            had = bool(self._plies) or bool(self._evals)
            self._reset(start_fen, chess960)
            info_changed = True
            if had:
                updates.append(self._update("truncate", truncate_to=0))
        elif not self._evals and not self._plies:
            self._settle_position()

        # Moves: raw tokens first (cheap), then parsed moves.
        tokens = snap.tokens
        first = 0
        while (
            first < len(self._plies)
            and first < len(tokens)
            and self._plies[first].token == tokens[first]
        ):
            first += 1
        parsed = self._parse(first, tokens, snap.fens)
        new = parsed.moves
        common = first
        j = 0
        while (
            common < len(self._plies)
            and j < len(new)
            and self._plies[common].uci == new[j].uci
            and self._plies[common].fen == new[j].fen
        ):
            self._plies[common].token = new[j].token
            common += 1
            j += 1

        self.signal_result = parsed.signal
        if parsed.illegal_reason is not None and parsed.illegal_ply is not None:
            # Counted once per distinct bad move, not once per poll.
            token = parsed.illegal_token or ""
            key = (parsed.illegal_fen or "", parsed.illegal_ply, token)
            after = parsed.illegal_after
            self._stopped = IllegalPly(parsed.illegal_ply, token, False, after=after)
            if key != self._last_illegal:
                self._last_illegal = key
                reason = parsed.illegal_reason
                if after:
                    reason += (
                        f"; the game went on for {after} more moves: an illegal move that "
                        f"stood over the board? The board stays at ply {parsed.illegal_ply - 1} "
                        "until a feed reports the position after it"
                    )
                errors.append(self._error(reason, parsed.illegal_ply, token))
        else:
            self._last_illegal = None
            self._stopped = None

        # Result and clocks are settled before updates are built so that every
        # update of this snapshot carries them.
        res = normalize_result(snap.result)
        if res is None:
            problem(f"unknown result {snap.result!r}, taken as '*'")
            res = "*"
        self.feed_result = res

        # Clocks of the moves that stay: merged (a clock no longer sent is kept).
        clock_fixed = [
            k for k in range(1, min(common, len(snap.clocks)) + 1) if self._merge_clock(k, snap)
        ]
        if common < len(self._plies):
            self._truncate(common)
            self._settle_position()
            self._set_clocks(snap)
            updates.append(self._update("truncate", truncate_to=common))
        if j < len(new):
            self._set_clocks(snap)
            self.version += 1
        for k in range(j, len(new)):
            np_ = new[k]
            ply = len(self._plies) + 1
            white = _mover_white(np_.fen)
            self._plies.append(
                _Ply(
                    np_.token,
                    np_.san,
                    np_.uci,
                    np_.fen,
                    white=white,
                    stood=np_.stood,
                    evaluable=np_.evaluable,
                    how=np_.how,
                )
            )
            if not np_.evaluable:
                self._no_eval.add(ply)
            if np_.stood:
                errors.extend(self._stood_error(ply, np_))
            self._merge_clock(ply, snap)
            if k == len(new) - 1:
                self._settle_position(parsed.board)
            else:
                self._board_result = "*"
                if np_.rule is not None:  # drawn by rule: never asked of the engine
                    self._evals[ply] = draw_evaluation(np_.rule)
                    self.version += 1
            # The clocks as of this move (what _set_clocks gives, one move at a time).
            clock = self._plies[-1].clock
            if clock is not None:
                if white and snap.clock_white is None:
                    self._clock_white = clock
                elif not white and snap.clock_black is None:
                    self._clock_black = clock
            updates.append(self._update("move", ply=self.ply_info(ply)))
        self._set_clocks(snap)
        # A clock that arrives late for a move already shown is sent with that move,
        # and with the same player's next move, whose time spent it changes.
        resend = sorted({j for k in clock_fixed for j in (k, k + 2) if j <= common})
        for k in resend:
            if k <= len(self._plies):
                updates.append(self._update("clock", ply=self.ply_info(k)))
        # The parsed board stands at ply first + len(new) = the current position.
        self._tip = parsed.board
        if self._tip is not None:
            # Only the position is needed: a kept move stack would hold two
            # objects per ply for the life of the board (and the GC's scans).
            self._tip.clear_stack()
        updates.extend(self._advance())

        if not updates:
            if self.result != old_result:
                updates.append(self._update("result"))
            elif self.clocks != old_clocks:
                updates.append(self._update("clock"))
        return updates, errors, info_changed

    def _stood_error(self, ply: int, np_: _NewPly) -> list[BoardError]:
        """The error that marks an illegal move that stood: once per ply, move and position."""
        key = (ply, np_.token.strip(), np_.fen)
        if key in self._stood_seen:
            return []
        self._stood_seen.add(key)
        where = "the position the feed reports" if np_.how == "reported" else "the move as played"
        note = (
            ""
            if np_.evaluable
            else " (no legal position, e.g. a king left in check: not evaluated)"
        )
        return [
            self._error(
                f"illegal move stood over the board: the game goes on from {where}, "
                f"{np_.fen}{note}; gains across this move are not counted",
                ply,
                np_.token,
            )
        ]

    def _merge_clock(self, ply: int, snap: GameSnapshot) -> bool:
        """Take the feed's clock for ``ply`` if it sent one; True when it changed."""
        if ply - 1 < len(snap.clocks):
            c = snap.clocks[ply - 1]
            if c is not None and self._plies[ply - 1].clock != int(c):
                self._plies[ply - 1].clock = int(c)
                return True
        return False

    def _set_clocks(self, snap: GameSnapshot) -> None:
        """Current clocks: the feed's own if given, else the last move's, else the last known."""
        last: dict[bool, int | None] = {True: None, False: None}
        for p in reversed(self._plies):
            if last[p.white] is None and p.clock is not None:
                last[p.white] = p.clock
            if last[True] is not None and last[False] is not None:
                break
        if snap.clock_white is not None:
            self._clock_white = int(snap.clock_white)
        elif last[True] is not None:
            self._clock_white = last[True]
        if snap.clock_black is not None:
            self._clock_black = int(snap.clock_black)
        elif last[False] is not None:
            self._clock_black = last[False]

    def _apply_info(self, snap: GameSnapshot) -> bool:
        rnd, board = _round_board(snap)
        tags = dict(snap.tags)
        before = (
            self.white,
            self.black,
            self.game_id,
            self.event,
            self.round,
            self.board,
            self.tags,
        )
        if (self.white, self.black) != (snap.white, snap.black):
            self.white, self.black = snap.white, snap.black
            self.white_key, self.black_key = _player_key(snap.white), _player_key(snap.black)
            if self._ledger.set_ratings(
                self.official_rating("white"), self.official_rating("black")
            ):
                self._ledger_version += 1
        if snap.game_id:
            self.game_id = snap.game_id
        self.event = snap.event or self.event
        self.round = rnd or self.round
        self.board = board if board is not None else self.board
        self.tags = tags
        return before != (
            self.white,
            self.black,
            self.game_id,
            self.event,
            self.round,
            self.board,
            self.tags,
        )

    def _start_from(
        self, snap: GameSnapshot, problem: Callable[[str], None]
    ) -> tuple[str, bool] | None:
        fen = (snap.initial_fen or "").strip() or dict(snap.tags).get("FEN", "").strip()
        variant = dict(snap.tags).get("Variant", "").lower()
        tag960 = "960" in variant or "fischer" in variant
        if not fen:
            return chess.STARTING_FEN, tag960
        try:
            b = chess.Board(fen, chess960=True)
        except ValueError as exc:
            problem(f"bad initial FEN {fen!r}: {exc}")
            return None
        if b.king(chess.WHITE) is None or b.king(chess.BLACK) is None:
            problem(f"bad initial FEN {fen!r}: a king is missing")
            return None
        chess960 = tag960 or b.has_chess960_castling_rights()
        b.chess960 = chess960
        return b.fen(), chess960

    # -- evaluations ----------------------------------------------------------
    def record_eval(self, ply: int, fen: str, ev: Evaluation) -> list[BoardUpdate]:
        if not 0 <= ply <= len(self._plies) or self.fen_at(ply) != fen:
            return []  # stale: that position is no longer on the board
        if ply in self._evals or ply in self._no_eval:
            return []  # duplicate (or a position scored by the rules already)
        self._evals[ply] = ev
        self.version += 1
        out = self._advance()
        if not any(u.ply is not None and u.ply.ply == ply for u in out):
            info = self.ply_info(ply) if ply > 0 else None
            if ply > 0 or ply == len(self._plies):
                out.insert(0, self._update("eval", ply=info))
        return out


def describe_snapshot(snap: GameSnapshot) -> str:
    """How refusals name a game: ``'Carlsen - Giri' (round 3, board 5, GameId 12)``."""
    where = f"{snap.white.name.strip() or '?'} - {snap.black.name.strip() or '?'}"
    extra = []
    if snap.round:
        extra.append(f"round {snap.round}")
    if snap.board is not None:
        extra.append(f"board {snap.board}")
    if snap.game_id:
        extra.append(f"GameId {snap.game_id}")
    return repr(where[:120]) + (f" ({', '.join(extra)})" if extra else "")


def _mover_white(fen_after: str) -> bool:
    # After White's move it is Black's turn.
    return fen_after.split()[1] == "b"


def _parse_move(board: chess.Board, token: str) -> chess.Move | None:
    if not token:
        return None
    tok = token
    if _UCI.match(tok):
        try:
            move = board.parse_uci(tok)
        except ValueError:
            move = None
        if move is not None:
            return move
    try:
        return board.parse_san(tok)
    except ValueError:
        return None


_LOOSE_SAN = re.compile(
    r"^([KQRBN])?([a-h])?([1-8])?[x:]?([a-h][1-8])(?:=?([QRBNqrbn]))?[+#]?[!?]*$"
)


def _pseudo_legal(board: chess.Board, token: str) -> chess.Move | None:
    """The one pseudo-legal move (legal but for the king's safety: a king moved
    into check, a pinned piece moved, castling through check) that ``token``
    names, or None. What an arbiter may have let stand over the board."""
    tok = token.strip()
    candidates: list[chess.Move] = []
    u = _UCI.match(tok)
    if u:
        with_uci = chess.Move.from_uci(tok)
        if board.is_pseudo_legal(with_uci):
            return with_uci
    castle = tok.rstrip("+#!?").replace("0", "O")
    if castle in ("O-O", "O-O-O"):
        king = board.king(board.turn)
        for c in board.generate_castling_moves():
            if king is not None and (chess.square_file(c.to_square) > chess.square_file(king)) == (
                castle == "O-O"
            ):
                candidates.append(c)
        return candidates[0] if len(candidates) == 1 else None
    m = _LOOSE_SAN.match(tok)
    if not m:
        return None
    piece = chess.PIECE_SYMBOLS.index(m.group(1).lower()) if m.group(1) else chess.PAWN
    file_ = chess.FILE_NAMES.index(m.group(2)) if m.group(2) else None
    rank = chess.RANK_NAMES.index(m.group(3)) if m.group(3) else None
    to = chess.parse_square(m.group(4))
    promo = chess.PIECE_SYMBOLS.index(m.group(5).lower()) if m.group(5) else None
    for mv in board.generate_pseudo_legal_moves(to_mask=chess.BB_SQUARES[to]):
        if board.piece_type_at(mv.from_square) != piece or mv.promotion != promo:
            continue
        if board.is_castling(mv):
            continue
        if file_ is not None and chess.square_file(mv.from_square) != file_:
            continue
        if rank is not None and chess.square_rank(mv.from_square) != rank:
            continue
        candidates.append(mv)
    return candidates[0] if len(candidates) == 1 else None


def _reported_position(before: chess.Board, text: str) -> chess.Board | None:
    """The position a feed reports after a move played from ``before``, or None when
    it is no usable position. ``text`` is a FEN or a piece placement only (what a DGT
    board sends). The side to move is the other side (the move list alternates);
    castling rights are those of ``before`` that the new placement still allows."""
    text = text.strip()
    if not text or len(text) > 100:
        return None
    after = before.copy(stack=False)
    try:
        if " " in text:
            after.set_fen(text)
        else:
            after.set_board_fen(text)
            after.castling_rights = before.castling_rights
            after.ep_square = None
            after.halfmove_clock = 0
            if before.turn == chess.BLACK:
                after.fullmove_number = before.fullmove_number + 1
    except ValueError:
        return None
    after.chess960 = before.chess960
    if after.turn == before.turn:  # the list alternates, whatever the feed's FEN says
        after.turn = not before.turn
        after.ep_square = None
    after.castling_rights &= before.castling_rights
    after.clean_castling_rights()
    if after.king(chess.WHITE) is None or after.king(chess.BLACK) is None:
        return None
    if after.board_fen() == before.board_fen():
        return None  # nothing moved: no move
    return after


def _diff_uci(before: chess.Board, after: chess.Board) -> str:
    """The move between two positions as UCI when one piece of the mover left one
    square for another (for overlays' last-move squares), else ``0000``."""
    mover = before.turn
    was, now = before.occupied_co[mover], after.occupied_co[mover]
    gone, came = list(chess.SquareSet(was & ~now)), list(chess.SquareSet(now & ~was))
    if len(gone) == 1 and len(came) == 1:
        return chess.square_name(gone[0]) + chess.square_name(came[0])
    return "0000"


# --------------------------------------------------------------------------
# The registry of boards
# --------------------------------------------------------------------------

_IndexKey = tuple[str, str | int]  # (kind, value): see _board_keys


def _side_keys(side: str, p: PlayerKey) -> list[_IndexKey]:
    """The index keys of player ``p`` on ``side`` (``w``/``b``): their FIDE id and
    their name, or the one key of an unknown player. Two players that
    :func:`_player_match` finds the same share one of these keys."""
    if not _known(p):
        return [(side + "?", "")]
    fide, name = p
    keys: list[_IndexKey] = []
    if fide:
        keys.append((side + "f", fide))
    if name not in _UNKNOWN_NAMES:
        keys.append((side + "n", name))
    return keys


def _board_keys(g: BoardGame) -> frozenset[_IndexKey]:
    """Every key a snapshot may find board ``g`` under: its sources, its event
    group, its players and board numbers, as the board has them and as each
    source last named the game."""
    keys: set[_IndexKey] = {("s", g.source)}
    keys.update(("s", src) for src in g.seen_as)
    if g.group is not None:
        keys.add(("g", g.group))
    names = [(g.white_key, g.black_key, g.board)]
    names.extend((w, b, board) for w, b, _, board in g.seen_as.values())
    for white, black, board in names:
        keys.update(_side_keys("w", white))
        keys.update(_side_keys("b", black))
        if board is not None:
            keys.add(("n", board))
    return frozenset(keys)


def _named(g: BoardGame) -> tuple[object, ...]:
    """What of board ``g`` :func:`_board_keys` reads, but for ``seen_as``."""
    return (g.white_key, g.black_key, g.board, g.group)


class Tournament:
    """All boards of all feeds: matches snapshots to boards, routes evaluations.

    ``engine_rating`` is r_e for Algorithm 4; ``engine`` the engine's gain
    histogram (None: a single peak at 0); ``draw_share`` the draw split of the
    win-chance model (:mod:`livegain.core.wdl`); ``model`` the calibrated
    perceived-rating model every board uses (None: Algorithm 4 only);
    ``wdl_model`` the human W/D/L model every board shows (None: the
    engine's); ``choose_models`` picks both per board from its snapshots
    instead (:class:`BoardModels`).
    """

    def __init__(
        self,
        engine_rating: float,
        engine: GainHistogram | None = None,
        *,
        draw_share: float = DEFAULT_DRAW_SHARE,
        max_errors_kept: int = 20,
        model: PerceivedModel | None = None,
        max_plies: int | None = DEFAULT_MAX_PLIES,
        max_boards: int | None = DEFAULT_MAX_BOARDS,
        wdl_model: HumanWdlModel | None = None,
        choose_models: Callable[[GameSnapshot], BoardModels] | None = None,
    ) -> None:
        self.engine_rating = float(engine_rating)
        self.engine = engine
        self.model = model
        self.wdl_model = wdl_model
        self.choose_models = choose_models
        self.draw_share = draw_share
        self.max_errors_kept = max_errors_kept
        self.max_plies = max_plies
        self.max_boards = max_boards
        self.boards: dict[str, BoardGame] = {}
        self._by_game_id: dict[tuple[str, str], str] = {}
        self._match_cache: dict[tuple[object, ...], str] = {}
        self.errors: deque[BoardError] = deque(maxlen=max_errors_kept)
        self.unmatched = 0
        self.refused = 0
        self._changed: dict[str, None] = {}  # boards with new positions, in order
        self._multi: dict[str, None] = {}  # boards shown by more than one source
        # The matching index: board ids under each key of _board_keys, each
        # board's keys, and its creation number (the order of self.boards).
        self._index: dict[_IndexKey, dict[str, None]] = {}
        self._index_keys: dict[str, frozenset[_IndexKey]] = {}
        self._order: dict[str, int] = {}
        self._created = 0

    def board(self, board_id: str) -> BoardGame:
        return self.boards[board_id]

    # -- matching -----------------------------------------------------------
    def match(self, snap: GameSnapshot) -> str | None:
        """The id of the board this snapshot belongs to, or None for a new board."""
        return self._match(snap, _identity(snap))

    def _match(self, snap: GameSnapshot, ident: _Identity) -> str | None:
        src = snap.source
        wkey, bkey, rnd, board_no = ident
        # Game ids count in matching unless the feed has shown it renumbers games.
        trust_ids = True
        by_id: str | None = None
        if snap.game_id:
            found = self._by_game_id.get((src, snap.game_id))
            if found is not None:
                g = self.boards[found]
                if _player_match(g.white_key, wkey) and _player_match(g.black_key, bkey):
                    return found
                own = g.seen_as.get(src)
                if own is not None and _player_match(own[0], wkey) and _player_match(own[1], bkey):
                    return found
                # That id now names a game with other players. Either the feed numbers
                # its games by position (LiveChess Cloud: pairing index) and these
                # players have their board elsewhere, or names were corrected / a new
                # game took over the id: then the id's board it is.
                trust_ids = False
                by_id = found
        cache_key = (src, snap.game_id, rnd, board_no, wkey, bkey)
        hit = self._match_cache.get(cache_key)
        if hit is not None:
            g = self.boards[hit]
            # A perfect match (both players known and equal, same board) stays perfect
            # while the board's players, round and number are unchanged.
            if g.seen_as.get(src) == ident:
                return hit
        group = snap.group
        best: tuple[int, bool] | None = None
        best_id: str | None = None
        full: list[BoardGame] = []
        for g in self._candidates(src, group, ident):
            # A board's own sources, and the other sources of its event group.
            if g.source != src and src not in g.seen_as and (group is None or g.group != group):
                continue
            if rnd is not None and g.round is not None and g.round != rnd:
                continue
            gid = g.game_ids.get(src) if g.group is not None else g.game_id
            if trust_ids and snap.game_id and gid and gid != snap.game_id:
                continue
            w = _player_match(g.white_key, wkey)
            b = _player_match(g.black_key, bkey)
            own = g.seen_as.get(src)  # what this source called the game before
            if own is not None and (own[0], own[1]) != (g.white_key, g.black_key):
                ow = _player_match(own[0], wkey)
                ob = _player_match(own[1], bkey)
                if ow and ob and (w == 0 or b == 0 or ow + ob > w + b):
                    w, b = ow, ob
            if w == 0 or b == 0:
                continue
            same_board = board_no is not None and (
                g.board == board_no or (own is not None and own[3] == board_no)
            )
            if w + b == 2 and not same_board:
                continue  # nobody known on either side: only the board number can tell
            if w + b == 4:
                full.append(g)
            score = (w + b, same_board)
            if best is None or score > best:
                best, best_id = score, g.board_id
        if by_id is not None and (best is None or best[0] < 4):
            return by_id
        if best is None:
            return None
        if best[0] == 4 and not best[1] and len(full) > 1 and board_no is not None:
            # The same pairing twice in one round (tiebreak games), none on this board.
            return None
        if best == (4, True) and best_id is not None:
            self._match_cache[cache_key] = best_id
        return best_id

    def _candidates(self, src: str, group: str | None, ident: _Identity) -> Iterable[BoardGame]:
        """The boards :meth:`_match` looks at, in the order of :attr:`boards`: every
        board that can match a snapshot of ``src`` (of event ``group``) naming its
        game ``ident``, and maybe others. Each of these sets holds them all, and the
        one with fewest boards is taken: the boards of the source and of its group;
        those with the snapshot's white player (known), or an unknown one; the
        same for black; those with its board number when neither player is known
        (a board then needs the number to match)."""
        wkey, bkey, _, board_no = ident
        choices: list[list[_IndexKey]] = [[("s", src)]]
        if group is not None:
            choices[0].append(("g", group))
        if _known(wkey):
            choices.append([*_side_keys("w", wkey), ("w?", "")])
        if _known(bkey):
            choices.append([*_side_keys("b", bkey), ("b?", "")])
        if not _known(wkey) and not _known(bkey):
            choices.append([("n", board_no)] if board_no is not None else [])
        index = self._index
        size, keys = len(self.boards), choices[0]
        for ks in choices:
            n = sum(len(index.get(k, ())) for k in ks)
            if n < size:
                size, keys = n, ks
        if 2 * size >= len(self.boards):
            return self.boards.values()  # most of them: not worth sorting
        found: set[str] = set()
        for k in keys:
            found.update(index.get(k, ()))
        return [self.boards[bid] for bid in sorted(found, key=self._order.__getitem__)]

    def _reindex(self, bid: str) -> None:
        """File board ``bid`` under its keys now (after any change to its sources,
        group, players or board number); a removed board leaves the index."""
        game = self.boards.get(bid)
        keys = _board_keys(game) if game is not None else frozenset()
        old = self._index_keys.get(bid, frozenset())
        if keys == old:
            return
        for k in old - keys:
            ids = self._index[k]
            del ids[bid]
            if not ids:
                del self._index[k]
        for k in keys - old:
            self._index.setdefault(k, {})[bid] = None
        if game is None:
            self._index_keys.pop(bid, None)
        else:
            self._index_keys[bid] = keys

    def _new_id(self, snap: GameSnapshot) -> str:
        src = board_slug(snap.source, 24)
        rnd, board_no = _round_board(snap)
        if snap.game_id:
            base = f"{src}-g{board_slug(snap.game_id)}"
        elif rnd is not None and board_no is not None:
            base = f"{src}-r{board_slug(rnd, 12)}-b{board_no}"
        else:
            r = f"-r{board_slug(rnd, 12)}" if rnd is not None else ""
            base = (
                f"{src}{r}-{board_slug(_surname(snap.white), 20)}"
                f"-{board_slug(_surname(snap.black), 20)}"
            )
        bid, n = base, 1
        while bid in self.boards:
            n += 1
            bid = f"{base}-{n}"
        return bid

    # -- snapshots ------------------------------------------------------------
    def apply(self, snap: GameSnapshot, now: float | None = None) -> Applied:
        """Fold a feed's snapshot into the board it belongs to (creating it if new).

        A game longer than ``max_plies`` is refused (its board, if any, keeps
        what it had), and so is a new board beyond ``max_boards``: each with
        an error naming the game, counted in :attr:`refused`.

        ``now`` (seconds on the caller's clock; default: the snapshot's
        ``received_at``) times a source's takeover of a board it shares with
        other sources of its event group (:meth:`BoardGame.offer`).
        """
        if now is None:
            now = snap.received_at
        ident = _identity(snap)
        bid = self._match(snap, ident)
        new = False
        if self.max_plies is not None and len(snap.moves) > self.max_plies:
            return self._refuse(
                bid,
                snap,
                f"{len(snap.moves)} plies, more than the limit of {self.max_plies} "
                "(limits.max_plies): refused",
            )
        if bid is None and self.max_boards is not None and len(self.boards) >= self.max_boards:
            return self._refuse(
                None,
                snap,
                f"already {len(self.boards)} boards, the limit (limits.max_boards): "
                "new board refused",
            )
        if bid is None:
            _, board_no = _round_board(snap)
            if (
                not snap.game_id
                and not (_known(snap.white) or _known(snap.black))
                and (board_no is None)
            ):
                err = BoardError(
                    None,
                    snap.source,
                    "game has no GameId, no known players and no board number: cannot "
                    "tell it from other games, ignored",
                )
                self.errors.append(err)
                self.unmatched += 1
                return Applied(None, errors=(err,))
            bid = self._new_id(snap)
            self.boards[bid] = BoardGame(
                bid,
                snap.source,
                self.engine_rating,
                self.engine,
                self.draw_share,
                self.max_errors_kept,
                model=self.model,
                group=snap.group,
                wdl_model=self.wdl_model,
                choose_models=self.choose_models,
            )
            self._order[bid] = self._created
            self._created += 1
            new = True
        game = self.boards[bid]
        named = None if new else _named(game)
        try:
            if snap.group is not None and game.group is None:
                game.group = snap.group  # a board restored without its group joins it again
            version = game.version
            updates, errors, info, takeover = game.offer(snap, now)
            if new or game.version != version:
                self._changed[bid] = None
            src = snap.source
            if snap.game_id:
                self._by_game_id[(src, snap.game_id)] = bid
                game.game_ids[src] = snap.game_id
            if game.seen_as.get(src) != ident:
                game.seen_as[src] = ident
                named = None
                if len(game.seen_as) > 1:
                    self._multi[bid] = None
        finally:
            if named != _named(game):  # new sources, group, players or board number
                self._reindex(bid)
        return Applied(bid, new, info or new, tuple(updates), tuple(errors), takeover)

    def tick(self, now: float) -> list[Applied]:
        """Hand each board shown by several sources to a waiting one whose
        ``takeover_after`` ran out by ``now`` (seconds on the clock the snapshots'
        ``received_at`` or :meth:`apply`'s ``now`` use). Call it every second or
        so: a takeover then does not wait for that source's next change."""
        out: list[Applied] = []
        for bid in list(self._multi):
            game = self.boards.get(bid)
            if game is None:
                del self._multi[bid]
                continue
            version = game.version
            named = _named(game)
            try:
                res = game.tick(now)
            finally:
                if named != _named(game):  # a takeover applies the new source's names
                    self._reindex(bid)
            if res is None:
                continue
            updates, errors, info, takeover = res
            if game.version != version:
                self._changed[bid] = None
            out.append(Applied(bid, False, info, tuple(updates), tuple(errors), takeover))
        return out

    def _refuse(self, bid: str | None, snap: GameSnapshot, why: str) -> Applied:
        message = f"game {describe_snapshot(snap)}: {why}"
        game = self.boards.get(bid) if bid is not None else None
        # Counted on the board when it has one (its errors show in /healthz).
        err = BoardError(None, snap.source, message) if game is None else game._error(message)
        self.errors.append(err)
        self.refused += 1
        return Applied(bid if game is not None else None, errors=(err,))

    # -- evaluations -----------------------------------------------------------
    def pending(self, limit: int | None = None) -> list[EvalRequest]:
        """Positions needing an evaluation, most urgent first.

        Every board's current position has priority 0; then each board's
        missing positions from the oldest, priority 1, 2, ... so that the
        boards' backfill is interleaved. Ties keep board creation order.
        """
        return list(itertools.islice(self.iter_pending(), limit))

    def iter_pending(self) -> Iterator[EvalRequest]:
        """:meth:`pending`, built only as far as it is read: a caller that
        needs the first few pays for those (and one look at each board)."""
        return itertools.chain(self.iter_latest(), self.iter_backfill())

    def iter_latest(self) -> Iterator[EvalRequest]:
        """Each board's current position when it needs an evaluation (priority 0)."""
        for g in list(self.boards.values()):
            r = g.latest_request()
            if r is not None:
                yield r

    def iter_backfill(self) -> Iterator[EvalRequest]:
        """Every other missing position (priority 1, 2, ...), boards interleaved:
        each board's oldest missing position, then each board's next one, ...
        Read as far as needed, so the first few cost a look at the first boards only.

        Evaluations may be recorded while this is read (the scheduler answers
        some from the store as it goes): each board's missing positions are
        taken when the scan first reaches it, and those evaluated since are
        skipped, so none is passed over. (Ranks counted afresh on every turn
        would shift under such a recording and skip a position.)
        """
        scans = [(g, g.iter_requests(latest=False)) for g in self.boards.values()]
        while scans:
            left: list[tuple[BoardGame, Iterator[EvalRequest]]] = []
            for g, reqs in scans:
                for r in reqs:
                    if g.eval_at(r.ply) is None:
                        left.append((g, reqs))
                        yield r
                        break
            scans = left

    def pending_count(self) -> int:
        """``len(pending())`` without building the list."""
        return sum(g.pending_count for g in self.boards.values())

    def take_changed(self) -> list[str]:
        """Boards that gained positions (new moves, a correction, a new board)
        since the last call, in order; the list starts empty again."""
        out = list(self._changed)
        self._changed.clear()
        return [bid for bid in out if bid in self.boards]

    def record_eval(self, board_id: str, ply: int, fen: str, ev: Evaluation) -> list[BoardUpdate]:
        """Record an evaluation of the position at ``ply`` (0 = start) of a board.

        Ignored (returns ``[]``) when the board is unknown, when ``fen`` is no
        longer the position at that ply (a correction came first), or when
        the ply already has an evaluation.
        """
        game = self.boards.get(board_id)
        if game is None:
            return []
        return game.record_eval(ply, fen, ev)

    def remove(self, board_id: str) -> bool:
        """Forget a board (an operator's removal, or an expired one); False when
        unknown. A later snapshot of the same game makes a new board."""
        if self.boards.pop(board_id, None) is None:
            return False
        self._changed.pop(board_id, None)
        self._multi.pop(board_id, None)
        self._reindex(board_id)
        del self._order[board_id]
        for key in [k for k, v in self._by_game_id.items() if v == board_id]:
            del self._by_game_id[key]
        for ckey in [k for k, v in self._match_cache.items() if v == board_id]:
            del self._match_cache[ckey]
        return True
