"""MQTT move events, read: the pure state machine behind the MQTT feed
(:mod:`livegain.feeds.mqtt`), and the writer of its JSON move events.

Topic: ``livegain/in/{tournament}/{round}/{board}`` (any prefix: the last three
topic levels are tournament, round and board). Payload, per message, either

* the game's PGN so far (text starting with ``[`` or a move number): it
  replaces what the board had (idempotent by nature), or
* a JSON move event (text starting with ``{``)::

    {"seq": 12, "ply": 11, "san": "Nf3", "clock": 5382,
     "white": "Carlsen, Magnus", "black": {"name": "Giri, Anish", "rating": 2760},
     "result": "*"}

  ``seq`` numbers the board's events 1, 2, 3, ... (per topic), so a QoS 1
  redelivery (the same seq again) is a no-op. An event arriving ahead of a
  missing seq waits up to ``gap_timeout`` seconds for it; then the gap is
  reported and the feed goes on. ``ply`` (1-based) places the move: a ply at
  or before the end of the known list is a correction (the list is cut back
  to ``ply - 1`` first). ``uci`` may be given instead of ``san``. ``moves``
  (the whole move list) replaces the game, whatever came before.

A board that lost moves (a move beyond the known end, or a gap given up) is
**stale**: reported, counted, and the ingest asks for the whole game on
``{resync_topic}/{tournament}/{round}/{board}``; a PGN payload or a
``moves`` event heals it. Pure: no I/O, no clock (time is passed in).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard

import chess

from livegain.core.board.identity import positive_number, split_round
from livegain.core.board.results import RESULTS, normalize_result
from livegain.core.snapshot import GameSnapshot, PlayerInfo, official_rating
from livegain.feeds.json_bounds import loads_bounded
from livegain.feeds.pgn import parse_game, split_games

MAX_PAYLOAD = 1024 * 1024
MAX_PENDING = 1000
MAX_GAMES = 1000
MAX_MOVES = 2000
"""Plies a ``moves`` list may hold."""
TOPIC_TAG = "MqttTopic"


# --- the pure ingest state machine ------------------------------------------------------------


@dataclass
class IngestResult:
    snapshots: list[GameSnapshot] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)  # (where, message)
    resyncs: list[str] = field(default_factory=list)  # board topics to ask the whole game for

    def extend(self, other: IngestResult) -> None:
        self.snapshots += other.snapshots
        self.errors += other.errors
        self.resyncs += other.resyncs


@dataclass
class _Board:
    topic: str
    tournament: str
    round: str
    board: str
    white: PlayerInfo = field(default_factory=lambda: PlayerInfo("?"))
    black: PlayerInfo = field(default_factory=lambda: PlayerInfo("?"))
    moves: list[str] = field(default_factory=list)
    clocks: list[int | None] = field(default_factory=list)
    initial_fen: str | None = None
    result: str = "*"
    game_id: str | None = None
    event: str | None = None
    clock_white: int | None = None
    clock_black: int | None = None
    tags: tuple[tuple[str, str], ...] = ()
    # sequencing
    epoch: object = None
    last_seq: int | None = None  # None: no event seen yet
    pending: dict[int, Mapping[str, Any]] = field(default_factory=dict)
    gap_since: float | None = None
    last_emitted: GameSnapshot | None = None
    tip: chess.Board | None = None  # the position after all of ``moves`` (a cache)
    rejoin: bool = False  # restored: the next forward seq continues the numbering
    # staleness: moves are known to be missing until a whole game arrives
    stale: str | None = None
    stale_since: float | None = None
    resync_at: float | None = None  # when the whole game was last asked for

    def position(self, plies: int) -> chess.Board:
        if plies == len(self.moves) and self.tip is not None:
            return self.tip.copy(stack=False)
        board = chess.Board(self.initial_fen) if self.initial_fen else chess.Board()
        for san in self.moves[:plies]:
            board.push_san(san)
        return board


class MqttIngest:
    """Turns (topic, payload) pairs into snapshots; keeps each board's move list.

    Pure: no I/O, time passed in. Bad payloads become errors naming the topic
    (and seq, ply); other boards are unaffected. ``max_bytes`` caps a payload,
    ``max_games`` the board topics followed (a new one beyond is refused).
    """

    def __init__(
        self,
        source: str = "mqtt",
        gap_timeout: float = 10.0,
        *,
        max_bytes: int = MAX_PAYLOAD,
        max_games: int = MAX_GAMES,
    ) -> None:
        self.source = source
        self.gap_timeout = gap_timeout
        self.max_bytes = max_bytes
        self.max_games = max_games
        self.boards: dict[str, _Board] = {}
        self.duplicates = 0
        self.messages = 0
        self.refused_topics = 0  # messages for a new board beyond max_games
        self.stale_marked = 0  # times a board went stale
        self.healed = 0  # times a stale board was made whole again
        self.restored = 0
        self._now = 0.0

    def handle(self, topic: str, payload: bytes, now: float) -> IngestResult:
        """One message. Never raises: anything wrong becomes an error naming the topic."""
        self.messages += 1
        self._now = now
        try:
            return self._handle(topic, payload, now)
        except Exception as exc:  # e.g. RecursionError on absurdly nested JSON
            return IngestResult(errors=[(topic, f"unreadable payload: {type(exc).__name__}")])

    # -- restart

    def restore(
        self, snapshots: Iterable[GameSnapshot], seqs: Mapping[str, Any] | None = None
    ) -> int:
        """Take back the boards this ingest emitted before a restart (the service's
        stored snapshots; others are ignored) and, from ``seqs`` (topic ->
        ``{"seq", "epoch"}``), where each board's numbering was. Returns the
        number of boards restored."""
        n = 0
        for snap in snapshots:
            if snap.source != self.source:
                continue
            tags = dict(snap.tags)
            topic = tags.get(TOPIC_TAG)
            if not topic:
                continue
            levels = topic.split("/")
            if len(levels) < 3 or not all(levels[-3:]):
                continue
            t, r, b = levels[-3:]
            st = _Board(topic, t, r, b)
            st.white, st.black = snap.white, snap.black
            st.moves = list(snap.moves)
            st.clocks = list(snap.clocks) + [None] * (len(snap.moves) - len(snap.clocks))
            del st.clocks[len(st.moves) :]
            st.initial_fen = snap.initial_fen
            st.result = snap.result
            if snap.game_id and snap.game_id != f"mqtt:{t}/{r}/{b}":
                st.game_id = snap.game_id
            st.event = snap.event
            st.clock_white, st.clock_black = snap.clock_white, snap.clock_black
            st.tags = tuple((k, v) for k, v in snap.tags if k != TOPIC_TAG)
            st.last_emitted = snap
            known = (seqs or {}).get(topic)
            if isinstance(known, Mapping):
                seq = known.get("seq")
                if isinstance(seq, int) and not isinstance(seq, bool) and seq >= 0:
                    st.last_seq = seq
                    st.epoch = known.get("epoch")
                    st.rejoin = True
            self.boards[topic] = st
            n += 1
        self.restored += n
        return n

    def sequence_state(self) -> dict[str, dict[str, Any]]:
        """Each board's last applied seq and epoch (what :meth:`restore` takes back)."""
        out: dict[str, dict[str, Any]] = {}
        for topic, st in self.boards.items():
            if st.last_seq is not None:
                epoch = st.epoch if isinstance(st.epoch, str | int | float) else None
                out[topic] = {"seq": st.last_seq, "epoch": epoch}
        return out

    def stale_boards(self) -> dict[str, str]:
        """Boards known to miss moves (topic -> why), until a whole game heals them."""
        return {t: st.stale for t, st in self.boards.items() if st.stale is not None}

    def _handle(self, topic: str, payload: bytes, now: float) -> IngestResult:
        out = IngestResult()
        levels = topic.split("/")
        if len(levels) < 3 or not all(levels[-3:]):
            out.errors.append((topic, "topic must end in /{tournament}/{round}/{board}"))
            return out
        if len(payload) > self.max_bytes:
            out.errors.append(
                (topic, f"payload of {len(payload)} bytes is over the limit of {self.max_bytes}")
            )
            return out
        st = self.boards.get(topic)
        if st is None and len(self.boards) >= self.max_games:
            self.refused_topics += 1
            out.errors.append(
                (topic, f"refused: already following {len(self.boards)} boards (max_games)")
            )
            return out
        try:
            text = payload.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            out.errors.append((topic, f"payload is not UTF-8 ({exc.reason} at byte {exc.start})"))
            return out
        if st is None:
            t, r, b = levels[-3:]
            st = _Board(topic, t, r, b)
        stripped = text.lstrip()
        if stripped.startswith("{"):
            try:
                data = loads_bounded(stripped)
            except ValueError as exc:
                out.errors.append((topic, f"move event: {exc}"))
                return out
            if not isinstance(data, dict):
                out.errors.append((topic, "JSON payload is not an object"))
                return out
            seq = data.get("seq")
            if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
                # checked before the board is followed: junk makes no empty board
                out.errors.append((topic, f"move event without a valid 'seq' (got {seq!r})"))
                return out
            self.boards[topic] = st
            self._event(st, data, now, out)
        elif stripped[:1] == "[" or stripped[:1].isdigit():
            if not self._pgn(st, stripped, now, out):
                return out  # refused or unreadable: no board made, none changed
            self.boards[topic] = st
        elif not stripped:
            out.errors.append((topic, "empty payload"))
            return out
        else:
            shown = stripped[:40].encode("unicode_escape").decode("ascii")
            out.errors.append((topic, f"payload is neither a JSON move event nor PGN: {shown!r}"))
            return out
        self._emit(st, out)
        return out

    def expire_gaps(self, now: float) -> IngestResult:
        """Give up waiting for missing seq numbers older than ``gap_timeout``
        (the board asks for the whole game); ask again for stale boards every
        ``gap_timeout``."""
        self._now = now
        out = IngestResult()
        for st in self.boards.values():
            if st.gap_since is not None and now - st.gap_since >= self.gap_timeout:
                assert st.last_seq is not None
                first = min(st.pending)
                missing = (
                    f"{st.last_seq + 1}"
                    if first == st.last_seq + 2
                    else (f"{st.last_seq + 1}..{first - 1}")
                )
                out.errors.append(
                    (
                        st.topic,
                        f"seq {missing} never arrived within {self.gap_timeout:g} s; going on",
                    )
                )
                st.last_seq = first - 1
                st.gap_since = None
                self._ask(st, out, force=True)
                self._drain(st, now, out)
                self._emit(st, out)
            elif st.stale is not None:
                self._ask(st, out)
        return out

    @property
    def waiting(self) -> bool:
        return any(st.gap_since is not None or st.stale is not None for st in self.boards.values())

    # -- staleness

    def _ask(self, st: _Board, out: IngestResult, *, force: bool = False) -> None:
        """Ask for the board's whole game, at most once per ``gap_timeout``."""
        now = self._now
        if force or st.resync_at is None or now - st.resync_at >= self.gap_timeout:
            st.resync_at = now
            out.resyncs.append(st.topic)

    def _mark_stale(self, st: _Board, why: str, out: IngestResult) -> None:
        if st.stale is None:
            self.stale_marked += 1
            st.stale_since = self._now
            out.errors.append((st.topic, f"board is stale ({why}); asking for the whole game"))
            self._ask(st, out)
        st.stale = why

    def _heal(self, st: _Board) -> None:
        if st.stale is not None:
            self.healed += 1
        st.stale = None
        st.stale_since = None
        st.resync_at = None

    # -- PGN payloads

    def _pgn(self, st: _Board, text: str, now: float, out: IngestResult) -> bool:
        """Take a whole game from a PGN payload; False when there was none to take."""
        parts = split_games(text)
        if len(parts) > 1:
            out.errors.append((st.topic, f"PGN payload holds {len(parts)} games; using the first"))
        if not parts:
            out.errors.append((st.topic, "empty PGN payload"))
            return False
        g = parse_game(parts[0], self.source, 0)
        for issue in g.issues:
            out.errors.append((f"{st.topic} {issue.where}", issue.message))
        snap = g.snapshot
        if snap is None:
            return False
        st.moves = list(snap.moves)
        st.clocks = list(snap.clocks)
        st.tip = None
        st.initial_fen = snap.initial_fen
        st.white, st.black = snap.white, snap.black
        st.result = snap.result
        st.game_id = snap.game_id or st.game_id
        st.event = snap.event or st.event
        st.clock_white, st.clock_black = snap.clock_white, snap.clock_black
        st.tags = snap.tags
        self._heal(st)
        if st.pending and st.last_seq is not None:
            # the whole game is here: events still waiting for a gap go on now
            st.last_seq = min(st.pending) - 1
            self._drain(st, now, out)
        return True

    # -- JSON events

    def _event(self, st: _Board, data: Mapping[str, Any], now: float, out: IngestResult) -> None:
        seq = data["seq"]  # checked by _handle
        epoch = data.get("epoch")
        if epoch is not None and epoch != st.epoch:
            # the publisher started a new numbering: forget the old one
            st.epoch = epoch
            st.last_seq = None
            st.pending.clear()
            st.gap_since = None
        if st.rejoin and st.last_seq is not None and seq > st.last_seq:
            # restored after a restart: our record of the numbering may lag a
            # little; the first newer event continues it (ply checks the rest)
            st.last_seq = seq - 1
        st.rejoin = False
        if st.last_seq is None:
            st.last_seq = seq - 1  # joining a stream: start where it is
        if seq <= st.last_seq or seq in st.pending:
            self.duplicates += 1
            return
        if "moves" in data:
            # the whole game: no need to wait for anything before it
            for k in [k for k in st.pending if k < seq]:
                del st.pending[k]
            st.last_seq = seq - 1
        if len(st.pending) >= MAX_PENDING:
            out.errors.append(
                (f"{st.topic} seq {seq}", "too many events waiting for a gap; dropped")
            )
            return
        st.pending[seq] = data
        self._drain(st, now, out)

    def _drain(self, st: _Board, now: float, out: IngestResult) -> None:
        assert st.last_seq is not None
        while st.last_seq + 1 in st.pending:
            st.last_seq += 1
            self._apply(st, st.pending.pop(st.last_seq), out)
        if st.pending:
            if st.gap_since is None:
                st.gap_since = now
        else:
            st.gap_since = None

    def _apply(self, st: _Board, data: Mapping[str, Any], out: IngestResult) -> None:
        seq = data["seq"]
        where = f"{st.topic} seq {seq}"
        # metadata first: players, event, start position, result
        for color in ("white", "black"):
            if color in data:
                info = _player(data[color])
                if info is None:
                    out.errors.append((where, f"'{color}' must be a name or an object"))
                else:
                    setattr(st, color, info)
        for key in ("event", "game_id"):
            v = data.get(key)
            if isinstance(v, str) and v:
                setattr(st, key, v)
        clocks = data.get("clocks")
        if isinstance(clocks, Mapping):
            w, b = clocks.get("white"), clocks.get("black")
            if _num(w):
                st.clock_white = int(w)
            if _num(b):
                st.clock_black = int(b)
        if "truncate" in data:
            k = data["truncate"]
            if isinstance(k, int) and not isinstance(k, bool) and 0 <= k <= len(st.moves):
                del st.moves[k:]
                del st.clocks[k:]
                st.tip = None
                if k == 0:
                    st.initial_fen = None  # back to the start: a "fen" may follow
                self._heal(st)  # what is left is known to be right
            else:
                out.errors.append((where, f"'truncate' {k!r} is not a ply 0..{len(st.moves)}"))
        if "moves" in data:
            self._moves(st, data, where, out)
        elif "fen" in data:
            fen = self._fen(data["fen"], where, out)
            if fen is not None:
                if st.moves:
                    out.errors.append((where, "'fen' ignored: the game already has moves"))
                else:
                    st.initial_fen = fen
                    st.tip = None
        if "san" in data or "uci" in data:
            self._move(st, data, where, out)
        if "result" in data:
            r = normalize_result(data["result"]) if isinstance(data["result"], str) else None
            if r is None:
                out.errors.append((where, f"unknown result {data['result']!r} (one of {RESULTS})"))
            else:
                st.result = r

    @staticmethod
    def _fen(fen: object, where: str, out: IngestResult) -> str | None:
        try:
            if not isinstance(fen, str):
                raise ValueError("not a string")
            board = chess.Board(fen)
            if not board.is_valid():
                raise ValueError(str(board.status()))
            return board.fen()
        except ValueError as exc:
            out.errors.append((where, f"invalid 'fen' {fen!r}: {exc}"))
            return None

    def _moves(self, st: _Board, data: Mapping[str, Any], where: str, out: IngestResult) -> None:
        """``moves``: the whole game (SAN or UCI), from ``fen`` or the standard start."""
        moves = data["moves"]
        if not isinstance(moves, list) or len(moves) > MAX_MOVES:
            out.errors.append((where, f"'moves' must be a list of at most {MAX_MOVES} moves"))
            return
        fen: str | None = None
        if "fen" in data:
            fen = self._fen(data["fen"], where, out)
            if fen is None:
                return
        board = chess.Board(fen) if fen else chess.Board()
        sans: list[str] = []
        bad = False
        for i, m in enumerate(moves, start=1):
            try:
                if not isinstance(m, str) or not m.strip():
                    raise ValueError("not a move")
                text = m.strip()
                try:
                    move = board.parse_san(text)
                except ValueError:
                    move = board.parse_uci(text)
                    if not board.is_legal(move):
                        raise chess.IllegalMoveError(f"illegal move {text}") from None
            except ValueError as exc:
                shown = m if isinstance(m, str) else repr(m)
                out.errors.append(
                    (f"{where} ply {i} ({shown})", f"'moves': illegal or unreadable move: {exc}")
                )
                bad = True
                break
            sans.append(board.san(move))
            board.push(move)
        old_clocks = st.clocks
        keep = [
            old_clocks[i]
            if i < len(old_clocks) and i < len(st.moves) and st.moves[i] == s
            else None
            for i, s in enumerate(sans)
        ]
        st.moves = sans
        st.clocks = keep
        st.initial_fen = fen
        st.tip = board
        if not bad:
            self._heal(st)

    def _move(self, st: _Board, data: Mapping[str, Any], where: str, out: IngestResult) -> None:
        ply = data.get("ply")
        if not isinstance(ply, int) or isinstance(ply, bool) or ply < 1:
            out.errors.append((where, f"move without a valid 'ply' (got {ply!r})"))
            return
        notation = data.get("san", data.get("uci"))
        where = f"{where} ply {ply} ({notation})"
        if ply > len(st.moves) + 1:
            out.errors.append(
                (where, f"ply {ply} but only {len(st.moves)} plies known: moves are missing")
            )
            self._mark_stale(st, f"ply {ply} arrived with only {len(st.moves)} plies known", out)
            return
        if not isinstance(notation, str) or not notation.strip():
            out.errors.append((where, "'san'/'uci' must be a non-empty string"))
            return
        try:
            board = st.position(ply - 1)
        except ValueError:  # a PGN payload ended in illegal moves (a DGT signal)
            out.errors.append((where, f"cannot place ply {ply} after the game's illegal moves"))
            return
        try:
            move = (
                board.parse_san(notation.strip())
                if "san" in data
                else board.parse_uci(notation.strip())
            )
            if not board.is_legal(move):
                raise chess.IllegalMoveError(f"illegal move {notation}")
        except ValueError as exc:
            out.errors.append((where, f"illegal or unreadable move: {exc}"))
            return
        san = board.san(move)
        clock = data.get("clock")
        clock_value = int(clock) if _num(clock) else None
        if clock is not None and clock_value is None:
            out.errors.append((where, f"'clock' {clock!r} is not a number of seconds"))
        del st.moves[ply - 1 :]
        del st.clocks[ply - 1 :]
        st.moves.append(san)
        st.clocks.append(clock_value)
        mover = board.turn
        board.push(move)
        st.tip = board
        if clock_value is not None and "clocks" not in data:
            if mover == chess.WHITE:
                st.clock_white = clock_value
            else:
                st.clock_black = clock_value

    def _emit(self, st: _Board, out: IngestResult) -> None:
        rnd, board_no = split_round(st.round, positive_number(st.board))
        snap = GameSnapshot(
            source=self.source,
            white=st.white,
            black=st.black,
            moves=tuple(st.moves),
            clocks=tuple(st.clocks),
            result=st.result,
            game_id=st.game_id or f"mqtt:{st.tournament}/{st.round}/{st.board}",
            event=st.event,
            round=rnd,
            board=board_no,
            initial_fen=st.initial_fen,
            tags=(*st.tags, (TOPIC_TAG, st.topic)),
            clock_white=st.clock_white,
            clock_black=st.clock_black,
        )
        if snap != st.last_emitted:
            st.last_emitted = snap
            out.snapshots.append(snap)


def _num(v: object) -> TypeGuard[int | float]:
    """A usable number of seconds: not a bool, not negative, finite."""
    return isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v < 1e12


def _player(v: object) -> PlayerInfo | None:
    if isinstance(v, str):
        return PlayerInfo(v.strip() or "?")
    if isinstance(v, Mapping):
        name = v.get("name")
        if not isinstance(name, str):
            return None
        rating = v.get("rating")
        fide = v.get("fide_id")
        fide_id = str(fide) if isinstance(fide, int | str) else None

        def opt(key: str) -> str | None:
            x = v.get(key)
            return x.strip() or None if isinstance(x, str) else None

        return PlayerInfo(
            name=name.strip() or "?",
            title=opt("title"),
            federation=opt("federation"),
            rating=official_rating(rating),
            fide_id=fide_id if positive_number(fide_id) else None,
        )
    return None


def move_event(
    seq: int,
    ply: int | None = None,
    san: str | None = None,
    *,
    clock: float | None = None,
    **extra: Any,
) -> bytes:
    """Build a JSON move event payload (publishers, replay, tests)."""
    data: dict[str, Any] = {"seq": seq}
    if ply is not None:
        data["ply"] = ply
    if san is not None:
        data["san"] = san
    if clock is not None:
        data["clock"] = clock
    data.update({k: v for k, v in extra.items() if v is not None})
    return json.dumps(data, separators=(",", ":")).encode()
