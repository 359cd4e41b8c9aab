"""One board: its moves, corrections, results, clocks, evaluations, ratings
and the sources that feed it."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace

import chess

from livegain.core.accuracy import GameAccuracy
from livegain.core.board.clocks import GameClocks, time_control
from livegain.core.board.identity import (
    Identity,
    PlayerKey,
    player_key_pair,
    round_board,
)
from livegain.core.board.illegal import IllegalMoves
from livegain.core.board.movelist import MoveList, ParsedMoves
from livegain.core.board.moves import (
    is_standard_start,
    parse_move,
    position_key,
    start_position,
)
from livegain.core.board.problems import InputProblems
from livegain.core.board.requests import eval_requests, missing_plies
from livegain.core.board.results import normalize_result, position_result
from livegain.core.board.scoring import BoardScoring
from livegain.core.board.shown_wdl import ShownWdl
from livegain.core.board.sources import (
    Relation,
    Sources,
    compare_move_lists,
    conflict_message,
    stalled,
    takes_over_at_once,
)
from livegain.core.board.updates import (
    Applied,
    BoardError,
    BoardModels,
    BoardUpdate,
    Clocks,
    Color,
    EvalRequest,
    IllegalPly,
    PlyInfo,
    SourceStatus,
    Status,
    UpdateKind,
)
from livegain.core.evaluation import (
    Evaluation,
    draw_evaluation,
    repetitions,
    rule_evaluation,
)
from livegain.core.histogram import GainHistogram
from livegain.core.human_wdl import HumanWdlModel
from livegain.core.ledger import GameLedger, TracePoint, official_rating
from livegain.core.perceived import PerceivedModel
from livegain.core.snapshot import GameSnapshot, PlayerInfo
from livegain.core.timeuse import TimeControl
from livegain.core.wdl import DEFAULT_DRAW_SHARE, Wdl, engine_wdl

#: Default limits (``[limits]`` in the service's configuration): plies per game,
#: boards per tournament. Real games stay far below (the longest on record: 538 plies).
DEFAULT_MAX_PLIES = 1000


@dataclass
class _Changes:
    """What one snapshot changed so far: the updates to publish and the errors
    seen, each in order."""

    updates: list[BoardUpdate] = field(default_factory=list)
    errors: list[BoardError] = field(default_factory=list)

    def applied(self, board_id: str, info_changed: bool) -> Applied:
        """The snapshot's result, for the board ``board_id``."""
        return Applied(board_id, False, info_changed, tuple(self.updates), tuple(self.errors))


class BoardGame:
    """One board's game: moves, clocks, result, evaluations and the ledger.

    Read it through its properties; change it only through :class:`BoardRegistry`.
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
        self.sources = Sources(source)  # every source, and the one it follows
        self.game_ids: dict[str, str] = {}  # source -> the GameId it gives this game
        # source -> the identity it last gave the game: players, round, board number
        self.seen_as: dict[str, Identity] = {}
        self.engine_rating = float(engine_rating)
        self._engine = engine
        self.model = model
        self.models = BoardModels(model, wdl_model)
        self._choose_models = choose_models
        self.white = PlayerInfo(name="?")
        self.black = PlayerInfo(name="?")
        self.white_key: PlayerKey = player_key_pair(self.white)
        self.black_key: PlayerKey = player_key_pair(self.black)
        self.game_id: str | None = None
        self.event: str | None = None
        self.round: str | None = None
        self.board: int | None = None
        self.tags: dict[str, str] = {}
        self.feed_result = "*"
        self.signal_result: str | None = None
        self._moves = MoveList()  # start position, plies, current position
        self._clocks = GameClocks()  # each ply's clock, and the clocks now
        self._evals: dict[int, Evaluation] = {}
        self._scoring = self._new_scoring()
        self.seq = 0
        self.errors = 0
        self.last_errors: deque[BoardError] = deque(maxlen=max_errors_kept)
        self._illegal = IllegalMoves()  # illegal moves that stood, and where it stops
        self._board_result = "*"  # checkmate / stalemate of the current position
        self._last_snap: GameSnapshot | None = None
        self._models_snap: GameSnapshot | None = None  # the snapshot models were chosen on
        self._problems = InputProblems()
        # Bumped whenever the positions or their evaluations change: the
        # missing positions are worked out again only then.
        self.version = 0
        self._missing_cache: tuple[int, list[int]] | None = None
        self._shown = ShownWdl(draw_share)  # the W/D/L shown per ply

    # -- views ------------------------------------------------------------
    @property
    def start_fen(self) -> str:
        return self._moves.start_fen

    @property
    def chess960(self) -> bool:
        return self._moves.chess960

    @property
    def custom_start(self) -> bool:
        """True when the game starts from a position other than the standard one."""
        return not is_standard_start(self._moves.start_fen)

    @property
    def plies(self) -> int:
        return len(self._moves)

    @property
    def fen(self) -> str:
        return self._moves.fen

    def fen_at(self, ply: int) -> str:
        return self._moves.fen_at(ply)

    @property
    def sans(self) -> list[str]:
        return [p.san for p in self._moves]

    @property
    def ucis(self) -> list[str]:
        return [p.uci for p in self._moves]

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
        if self.status == "live" and len(self._moves):
            running = "white" if self.fen.split()[1] == "w" else "black"
        return self._clocks.now(running, self.time_trouble_below)

    @property
    def time_control(self) -> TimeControl | None:
        """The game's time control from its ``TimeControl`` tag (None: unknown)."""
        return time_control(self.tags)

    @property
    def time_trouble_below(self) -> int | None:
        """Seconds under which a clock is in time trouble (core.timeuse)."""
        return self._clocks.trouble_below(self.time_control)

    def spent_at(self, ply: int) -> int | None:
        """Seconds move ``ply`` (1-based) took (core.timeuse.spent_seconds)."""
        return self._clocks.spent(self.time_control, ply)

    def eval_at(self, ply: int) -> Evaluation | None:
        return self._evals.get(ply)

    @property
    def start_eval(self) -> Evaluation | None:
        return self._evals.get(0)

    @property
    def current_eval(self) -> Evaluation | None:
        return self._evals.get(len(self._moves))

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
        return self._shown.at(
            ply,
            ev,
            self.models.wdl,
            self.official_rating("white"),
            self.official_rating("black"),
            self.fen_at(ply),
        )

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
        return self.wdl_at(len(self._moves))

    @property
    def evaluated_plies(self) -> int:
        """Plies evaluated: the length of the contiguous evaluated prefix (gains
        known up to this ply), never negative. 0 until the first move's gain
        is known, whether the start position is evaluated or not (the scoring's
        own -1, "start score not set", stays inside it: this is a count, and
        /healthz and /metrics sum it over the boards)."""
        return max(0, self._scoring.plies)

    @property
    def ledger(self) -> GameLedger:
        return self._scoring.ledger

    def ply_info(self, ply: int, gains: list[int] | None = None) -> PlyInfo:
        """Move ``ply`` (1-based) as it stands; ``gains``: the ledger's, if already at hand."""
        p = self._moves.ply(ply)
        ev = self._evals.get(ply)
        if gains is None:
            gains = self._scoring.gains
        return PlyInfo(
            ply=ply,
            san=p.san,
            uci=p.uci,
            color="white" if p.white else "black",
            fen=p.fen,
            clock=self._clocks.at(ply),
            eval=ev,
            wdl=None if ev is None else self._shown_wdl(ply, ev),
            gain=gains[ply - 1]
            if ply <= len(gains) and ply not in self._scoring.uncounted
            else None,
            engine_wdl=None if ev is None else engine_wdl(ev),
            spent=self.spent_at(ply),
        )

    def moves(self) -> list[PlyInfo]:
        gains = self._scoring.gains
        return [self.ply_info(k, gains) for k in range(1, len(self._moves) + 1)]

    @property
    def scoring(self) -> BoardScoring:
        """The game's running score: the players' numbers now (perceived,
        calibrated, form, head-to-head, traces, labels)."""
        return self._scoring

    def accuracy(self) -> GameAccuracy:
        """Both players' accuracies over the contiguous evaluated prefix, overall
        and by phase (:meth:`.scoring.BoardScoring.accuracy`)."""
        return self._scoring.accuracy(self.fen_at)

    def _missing(self) -> list[int]:
        """Plies (0 = start) with no evaluation yet, worked out once per
        :attr:`version` (do not modify)."""
        cached = self._missing_cache
        if cached is None or cached[0] != self.version:
            out = missing_plies(len(self._moves), self._evals, self._moves.unevaluable)
            cached = self._missing_cache = (self.version, out)
        return cached[1]

    @property
    def pending_count(self) -> int:
        """How many positions of this board wait for an evaluation."""
        return len(self._missing())

    def iter_requests(self, latest: bool = True, backfill: bool = True) -> Iterator[EvalRequest]:
        """This board's evaluation requests, built as they are read: the current
        position's first (``latest``), then the oldest missing (``backfill``)."""
        return eval_requests(
            self.board_id,
            self.fen_at,
            len(self._moves),
            self._missing(),
            self.chess960,
            latest=latest and len(self._moves) not in self._moves.unevaluable,
            backfill=backfill,
        )

    @property
    def illegal_plies(self) -> tuple[IllegalPly, ...]:
        """The illegal moves that stood over the board (the game went on from the
        position after them), then the one the board stops at, if any."""
        return self._illegal.plies(self._moves)

    @property
    def irregular(self) -> bool:
        """True when an illegal move stood, or the board stops at one with moves past it."""
        return self._illegal.irregular(self._moves)

    @property
    def last_snapshot(self) -> GameSnapshot | None:
        """The snapshot the board last applied (its driving source's): what to store."""
        return self._last_snap

    @property
    def source_active(self) -> str:
        """The source whose snapshots drive the board."""
        return self.sources.active

    @property
    def takeovers(self) -> int:
        return self.sources.takeovers

    @property
    def conflicts(self) -> int:
        """Conflicting move lists reported (each once)."""
        return self.sources.conflicts

    def source_status(self) -> list[SourceStatus]:
        """Every source that showed this board, preferred first (see ``docs/feeds.md``)."""
        return self.sources.status()

    def state(self) -> tuple[object, ...]:
        """Everything that defines the board's game (not seq or error counts), for equality."""
        return (
            self.board_id,
            self.white,
            self.black,
            self.result,
            self._moves.start_fen,
            tuple(
                (p.san, p.uci, p.fen, self._clocks.at(k), p.stood)
                for k, p in enumerate(self._moves, start=1)
            ),
            tuple(sorted(self._evals.items())),
            self._scoring.plies,
            self._scoring.ledger.state(),
            self.clocks,
        )

    # -- errors -------------------------------------------------------------
    def record_error(
        self,
        message: str,
        ply: int | None = None,
        san: str | None = None,
        source: str | None = None,
    ) -> BoardError:
        """Count an error on this board (kept in :attr:`last_errors`); ``source``:
        the one that sent what was wrong (None: the active one)."""
        err = BoardError(self.board_id, source or self.source_active, message, ply, san)
        self.errors += 1
        self.last_errors.append(err)
        return err

    # -- internals ----------------------------------------------------------
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
        return BoardUpdate.of(
            self,
            self._next_seq(),
            kind,
            ply=ply,
            truncate_to=truncate_to,
            white_points=white_points,
            black_points=black_points,
        )

    def _settle_position(self, board: chess.Board | None = None) -> None:
        """After the move list changed: the current position's result, and its
        score when the rules decide it (see :func:`rule_evaluation`: checkmate,
        stalemate, a draw by rule, repetitions counted over the game's
        positions). Only the last position can be checkmate or stalemate; the
        draws by rule of positions that play went on from are scored as their
        moves arrive (:meth:`apply`)."""
        b = board if board is not None else self._moves.board_at(len(self._moves))
        n = len(self._moves)
        if n in self._moves.unevaluable:  # an illegal position: neither scored nor finished
            self._board_result = "*"
            return
        if n not in self._evals:
            ev = rule_evaluation(b, repetitions(self.fen_at, n))
            if ev is not None:
                self._evals[n] = ev
                self.version += 1
        self._board_result = position_result(b)

    def _truncate(self, plies: int) -> None:
        self._moves.truncate(plies)
        self.version += 1
        self._clocks.truncate(plies)
        for k in [k for k in self._evals if k > plies]:
            del self._evals[k]
        self._scoring.truncate(plies)

    def _reset(self, start_fen: str, chess960: bool) -> None:
        self._moves = MoveList(start_fen, chess960)
        self._clocks.clear()
        self._evals = {}
        self._scoring = self._new_scoring()
        self.version += 1
        self._settle_position()

    def _new_scoring(self) -> BoardScoring:
        start = self._moves.start_fen
        return BoardScoring(
            self.engine_rating,
            self._engine,
            self.model,
            start.split()[1] == "w",
            self.official_rating("white"),
            self.official_rating("black"),
            standard_start=start == chess.STARTING_FEN and not self._moves.chess960,
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
            self._scoring = self._new_scoring()
            self._advance(emit=False)
        return True

    def _advance(self, emit: bool = True) -> list[BoardUpdate]:
        """Push every newly contiguous evaluation into the ledger (``emit``
        False: make no updates, as when the ledger is rebuilt)."""
        out: list[BoardUpdate] = []
        scoring = self._scoring
        if scoring.plies < 0:
            start = self._evals.get(0)
            if start is None:
                return out
            scoring.start(start.cp)
        moves = self._moves
        no_eval = moves.unevaluable
        while scoring.plies < len(moves):
            k = scoring.plies + 1
            if k in no_eval:  # no score: the reference stays where it was
                score = scoring.ledger.scores[-1]
            elif k in self._evals:
                score = self._evals[k].cp
            else:
                break
            # Gains across an illegal move that stood are not counted: its own, and
            # the next one's when the position after it is no legal position.
            ply = moves.ply(k)
            counted = not (ply.stood or k in no_eval or (k - 1) in no_eval)
            # the opening reads the moves played; a stood illegal move ends it
            lp = scoring.push(score, counted, None if ply.stood else ply.uci)
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
    def offer(self, snap: GameSnapshot, now: float | None = None) -> Applied:
        """Fold in a snapshot from any of the board's sources (:mod:`.sources`):
        the active source's is applied; another's takes the board over when the
        rules say so, else it is kept for :meth:`tick`, and a conflicting list is
        an error. ``now``: seconds on the caller's clock (None: no takeover by
        time). Returns what it did (``takeover``: the source that took the board
        over, if one did)."""
        st = self.sources.note(snap)
        if snap.source == self.sources.active:
            version, seq = self.version, self.seq
            applied = self.apply(snap)
            if len(self.sources) > 1 and (self.version != version or self.seq != seq):
                self.sources.restart_windows(now, self._relation_of)  # the active one is alive
            return applied
        rel, at = self._relation(snap)
        self.sources.seen(st, rel, now)
        if takes_over_at_once(st, self.sources.active_source(), rel) or stalled(st, now):
            return self._take_over(snap.source, now)
        if rel != "conflict":
            st.conflict_key = None
            return Applied(self.board_id)
        token = snap.tokens[at - 1] if at <= len(snap.tokens) else ""
        if not self.sources.new_conflict(st, at, token):
            return Applied(self.board_id)  # reported already
        why = conflict_message(snap.source, self.sources.active, st.takeover_after)
        return Applied(self.board_id, errors=(self.record_error(why, at, token, snap.source),))

    def tick(self, now: float) -> Applied | None:
        """Hand the board to a waiting source whose ``takeover_after`` has run out
        (preferred first): what that did; None when no source's has."""
        name = self.sources.waiting(now)
        return None if name is None else self._take_over(name, now)

    def _take_over(self, src: str, now: float | None) -> Applied:
        snap = self.sources.hand_to(src)
        self._last_snap = None  # the new source's snapshot is applied in full
        applied = self.apply(snap)
        self.sources.restart_windows(now, self._relation_of)
        return replace(applied, takeover=src)

    def _relation_of(self, snap: GameSnapshot) -> Relation:
        return self._relation(snap)[0]

    def _relation(self, snap: GameSnapshot) -> tuple[Relation, int]:
        """How ``snap``'s move list stands to the active source's (what the board
        follows): :func:`~.sources.compare_move_lists`."""
        active = self.sources.active_source()
        ref_snap = active.snap if active is not None else None
        moves = self._moves
        ref = ref_snap.tokens if ref_snap is not None else tuple(p.token for p in moves)
        ref_result = ref_snap.result if ref_snap is not None else self.result

        def same_move(k: int, token: str) -> bool:
            if k >= len(moves) or moves.ply(k + 1).stood:
                return False
            move = parse_move(moves.board_at(k), token)
            return move is not None and move.uci() == moves.ply(k + 1).uci

        return compare_move_lists(ref, ref_result, snap.tokens, snap.result, same_move)

    # -- snapshot -------------------------------------------------------------
    def apply(self, snap: GameSnapshot) -> Applied:
        """Fold one snapshot in (its source's, whichever the board follows),
        phase by phase: what names the game, its start position, its moves read
        against the board's, its result, the clocks of the moves that stay, the
        moves dropped and the new ones, the clocks now, the evaluations the
        moves complete. Returns what it changed: the updates to publish, in
        order, and the new errors. The result and the clocks are settled
        before the moves' updates are built, so that each of them carries them."""
        if snap == self._last_snap:
            return Applied(self.board_id)  # the same snapshot again is a no-op
        self._last_snap = snap
        info_changed = self._read_identity(snap)
        self._problems.next_snapshot()
        changes = _Changes()
        start = self._read_start(snap, changes)
        if start is None:
            return changes.applied(self.board_id, info_changed)
        old_result, old_clocks = self.result, self.clocks
        info_changed = self._place_start(*start, changes) or info_changed
        parsed = self._read_moves(snap, changes)
        kept = self._moves.keep(parsed)
        self._read_result(snap, parsed, changes)
        late = self._clocks.merge_kept(kept, snap)
        self._drop_moves_after(kept, snap, changes)
        self._add_new_moves(parsed, kept, snap, changes)
        self._clocks.settle(snap)
        self._resend_clocks(late, kept, changes)
        self._moves.keep_tip(parsed.board)
        changes.updates.extend(self._advance())  # gains the evaluations now complete
        if not changes.updates:
            self._note_result_or_clocks(old_result, old_clocks, changes)
        return changes.applied(self.board_id, info_changed)

    def _read_identity(self, snap: GameSnapshot) -> bool:
        """What names the game (players, round, board, tags), and the models
        chosen for it when that changed: True when any of it did."""
        changed = self._take_names(snap)
        if self._choose_models is not None and (changed or self._models_snap is None):
            self._models_snap = snap
            changed = self._set_models(self._choose_models(snap)) or changed
        return changed

    def _take_names(self, snap: GameSnapshot) -> bool:
        """The players, GameId, event, round, board number and tags the snapshot
        gives (a round, board or event it leaves out stays): True when they changed."""
        rnd, board = round_board(snap)
        tags = dict(snap.tags)
        before = self._info()
        if (self.white, self.black) != (snap.white, snap.black):
            self.white, self.black = snap.white, snap.black
            self.white_key, self.black_key = (
                player_key_pair(snap.white),
                player_key_pair(snap.black),
            )
            self._scoring.set_ratings(self.official_rating("white"), self.official_rating("black"))
        if snap.game_id:
            self.game_id = snap.game_id
        self.event = snap.event or self.event
        self.round = rnd or self.round
        self.board = board if board is not None else self.board
        self.tags = tags
        return before != self._info()

    def _info(self) -> tuple[object, ...]:
        """What names the game: players, GameId, event, round, board number, tags."""
        return (self.white, self.black, self.game_id, self.event, self.round, self.board, self.tags)

    def _problem(self, message: str, changes: _Changes) -> None:
        """Bad input in this snapshot: an error the first time, not once per poll."""
        if self._problems.seen(message):
            changes.errors.append(self.record_error(message))

    def _read_start(self, snap: GameSnapshot, changes: _Changes) -> tuple[str, bool] | None:
        """The snapshot's start position and whether it is Chess960 (None: unreadable)."""
        try:
            return start_position(snap)
        except ValueError as exc:
            self._problem(str(exc), changes)
            return None

    def _place_start(self, start_fen: str, chess960: bool, changes: _Changes) -> bool:
        """Another start position resets the board (True: its info changed)."""
        moves = self._moves
        if position_key(start_fen) == position_key(moves.start_fen) and (
            chess960 == moves.chess960
        ):
            if not self._evals and not len(moves):
                self._settle_position()
            return False
        had = bool(len(moves)) or bool(self._evals)
        self._reset(start_fen, chess960)
        if had:
            changes.updates.append(self._update("truncate", truncate_to=0))
        return True

    def _read_moves(self, snap: GameSnapshot, changes: _Changes) -> ParsedMoves:
        """The snapshot's move list read against the board's
        (:meth:`MoveList.read`); an illegal move it stops at is an error, once."""
        parsed = self._moves.read(snap.tokens, snap.fens)
        stop = self._illegal.stop_at(parsed)  # counted once per distinct bad move
        if stop is not None:
            changes.errors.append(
                self.record_error(stop, parsed.illegal_ply, parsed.illegal_token or "")
            )
        return parsed

    def _read_result(self, snap: GameSnapshot, parsed: ParsedMoves, changes: _Changes) -> None:
        """The feed's result (an unknown one is taken as ``*``), and the DGT
        board's signal read with the moves."""
        self.signal_result = parsed.signal
        res = normalize_result(snap.result)
        if res is None:
            self._problem(f"unknown result {snap.result!r}, taken as '*'", changes)
            res = "*"
        self.feed_result = res

    def _drop_moves_after(self, kept: int, snap: GameSnapshot, changes: _Changes) -> None:
        """The board's moves past the ``kept`` ones go (a correction, a takeback)."""
        if kept >= len(self._moves):
            return
        self._truncate(kept)
        self._settle_position()
        self._clocks.settle(snap)
        changes.updates.append(self._update("truncate", truncate_to=kept))

    def _add_new_moves(
        self, parsed: ParsedMoves, kept: int, snap: GameSnapshot, changes: _Changes
    ) -> None:
        """The moves read past the ``kept`` ones become the board's, each with its
        clock, an error for an illegal move that stood, its score when the rules
        decide it, and an update; the last one's position is ``parsed.board``."""
        new = parsed.moves[kept - parsed.start :]
        if not new:
            return
        self._clocks.settle(snap)
        self.version += 1
        last = len(new) - 1
        for i, move in enumerate(new):
            p = self._moves.append(move)
            ply = len(self._moves)
            stood = self._illegal.stood(ply, move) if move.stood else None
            if stood is not None:
                changes.errors.append(self.record_error(stood, ply, move.token))
            self._clocks.played(p.white, snap)
            if i == last:
                self._settle_position(parsed.board)
            else:
                self._board_result = "*"
                if move.rule is not None:  # drawn by rule: never asked of the engine
                    self._evals[ply] = draw_evaluation(move.rule)
                    self.version += 1
            changes.updates.append(self._update("move", ply=self.ply_info(ply)))

    def _resend_clocks(self, late: Sequence[int], kept: int, changes: _Changes) -> None:
        """A clock that arrives ``late`` for a move already shown is sent with that
        move, and with the same player's next move, whose time spent it changes."""
        for ply in sorted({j for k in late for j in (k, k + 2) if j <= kept}):
            if ply <= len(self._moves):
                changes.updates.append(self._update("clock", ply=self.ply_info(ply)))

    def _note_result_or_clocks(
        self, old_result: str, old_clocks: Clocks, changes: _Changes
    ) -> None:
        """Nothing else changed: an update for a new result, else for new clocks."""
        if self.result != old_result:
            changes.updates.append(self._update("result"))
        elif self.clocks != old_clocks:
            changes.updates.append(self._update("clock"))

    # -- evaluations ----------------------------------------------------------
    def record_eval(self, ply: int, fen: str, ev: Evaluation) -> list[BoardUpdate]:
        return self.record_evals([(ply, fen, ev)])

    def record_evals(self, evals: Sequence[tuple[int, str, Evaluation]]) -> list[BoardUpdate]:
        """Record evaluations ``(ply, fen, evaluation)`` at once; the updates
        they make, in order: a ``ply`` update for each move whose gain they
        complete, then an ``eval`` update for each other one recorded (a ply
        beyond the evaluated prefix, or the start of a game without moves).

        An evaluation is ignored when ``fen`` is no longer the position at
        its ply (a correction came first) or the ply has one already.
        """
        recorded: list[int] = []
        for ply, fen, ev in evals:
            if not 0 <= ply <= len(self._moves) or self.fen_at(ply) != fen:
                continue  # stale: that position is no longer on the board
            if ply in self._evals or ply in self._moves.unevaluable:
                continue  # duplicate (or a position scored by the rules already)
            self._evals[ply] = ev
            recorded.append(ply)
        if not recorded:
            return []
        self.version += 1
        out = self._advance()
        advanced = {u.ply.ply for u in out if u.ply is not None}
        for ply in sorted(recorded):
            if ply not in advanced and (ply > 0 or ply == len(self._moves)):
                out.append(self._update("eval", ply=self.ply_info(ply) if ply > 0 else None))
        return out
