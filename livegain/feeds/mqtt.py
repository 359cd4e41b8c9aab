"""MQTT ingest: moves published per board, read with aiomqtt (see docs/feeds.md).

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
  to ``ply - 1`` first). ``uci`` may be given instead of ``san``.

The session is persistent (MQTT 5, fixed client id, clean start off, session
expiry) and the subscription QoS 1, so the broker keeps our messages while we
are away (a broker with persistence on keeps them across its own restart);
the feed reconnects with back-off. The parsing state machine
(:class:`MqttIngest`) is pure and tested on its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

import aiomqtt
import chess
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from livegain.broker import parse_mqtt_url
from livegain.core.events import GameSnapshot, PlayerInfo
from livegain.feeds._common import Backoff
from livegain.feeds.base import FeedSink, MqttFeedConfig
from livegain.feeds.pgn import RESULTS, normalise_result, parse_game, split_games, split_round

RECONNECT_DELAYS: tuple[float, ...] = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)
MAX_PAYLOAD = 1024 * 1024
MAX_PENDING = 1000


# --- the pure ingest state machine ------------------------------------------------------------


@dataclass
class IngestResult:
    snapshots: list[GameSnapshot] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)  # (where, message)

    def extend(self, other: IngestResult) -> None:
        self.snapshots += other.snapshots
        self.errors += other.errors


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

    def position(self, plies: int) -> chess.Board:
        if plies == len(self.moves) and self.tip is not None:
            return self.tip.copy(stack=False)
        board = chess.Board(self.initial_fen) if self.initial_fen else chess.Board()
        for san in self.moves[:plies]:
            board.push_san(san)
        return board


class MqttIngest:
    """Turns (topic, payload) pairs into snapshots; keeps each board's move list.

    Pure: no I/O, time passed in. Bad payloads become errors naming the topic;
    other boards are unaffected.
    """

    def __init__(self, source: str = "mqtt", gap_timeout: float = 10.0) -> None:
        self.source = source
        self.gap_timeout = gap_timeout
        self.boards: dict[str, _Board] = {}
        self.duplicates = 0
        self.messages = 0

    def handle(self, topic: str, payload: bytes, now: float) -> IngestResult:
        """One message. Never raises: anything wrong becomes an error naming the topic."""
        self.messages += 1
        try:
            return self._handle(topic, payload, now)
        except Exception as exc:  # e.g. RecursionError on absurdly nested JSON
            return IngestResult(errors=[(topic, f"unreadable payload: {type(exc).__name__}")])

    def _handle(self, topic: str, payload: bytes, now: float) -> IngestResult:
        out = IngestResult()
        levels = topic.split("/")
        if len(levels) < 3 or not all(levels[-3:]):
            out.errors.append((topic, "topic must end in /{tournament}/{round}/{board}"))
            return out
        if len(payload) > MAX_PAYLOAD:
            out.errors.append((topic, f"payload of {len(payload)} bytes is too large"))
            return out
        try:
            text = payload.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            out.errors.append((topic, f"payload is not UTF-8 ({exc.reason} at byte {exc.start})"))
            return out
        st = self.boards.get(topic)
        if st is None:
            t, r, b = levels[-3:]
            st = _Board(topic, t, r, b)
        stripped = text.lstrip()
        if stripped.startswith("{"):
            try:
                data = json.loads(stripped)
            except ValueError as exc:
                out.errors.append((topic, f"invalid JSON move event: {exc}"))
                return out
            if not isinstance(data, dict):
                out.errors.append((topic, "JSON payload is not an object"))
                return out
            self.boards[topic] = st
            self._event(st, data, now, out)
        elif stripped[:1] == "[" or stripped[:1].isdigit():
            self.boards[topic] = st
            self._pgn(st, stripped, out)
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
        """Give up waiting for missing seq numbers older than ``gap_timeout``."""
        out = IngestResult()
        for st in self.boards.values():
            if st.gap_since is None or now - st.gap_since < self.gap_timeout:
                continue
            assert st.last_seq is not None
            first = min(st.pending)
            missing = (
                f"{st.last_seq + 1}"
                if first == st.last_seq + 2
                else (f"{st.last_seq + 1}..{first - 1}")
            )
            out.errors.append(
                (st.topic, f"seq {missing} never arrived within {self.gap_timeout:g} s; going on")
            )
            st.last_seq = first - 1
            st.gap_since = None
            self._drain(st, now, out)
            self._emit(st, out)
        return out

    @property
    def waiting(self) -> bool:
        return any(st.gap_since is not None for st in self.boards.values())

    # -- PGN payloads

    def _pgn(self, st: _Board, text: str, out: IngestResult) -> None:
        parts = split_games(text)
        if len(parts) > 1:
            out.errors.append((st.topic, f"PGN payload holds {len(parts)} games; using the first"))
        if not parts:
            out.errors.append((st.topic, "empty PGN payload"))
            return
        g = parse_game(parts[0], self.source, 0)
        for issue in g.issues:
            out.errors.append((f"{st.topic} {issue.where}", issue.message))
        snap = g.snapshot
        if snap is None:
            return
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

    # -- JSON events

    def _event(self, st: _Board, data: Mapping[str, Any], now: float, out: IngestResult) -> None:
        seq = data.get("seq")
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
            out.errors.append((st.topic, f"move event without a valid 'seq' (got {seq!r})"))
            return
        epoch = data.get("epoch")
        if epoch is not None and epoch != st.epoch:
            # the publisher started a new numbering: forget the old one
            st.epoch = epoch
            st.last_seq = None
            st.pending.clear()
            st.gap_since = None
        if st.last_seq is None:
            st.last_seq = seq - 1  # joining a stream: start where it is
        if seq <= st.last_seq or seq in st.pending:
            self.duplicates += 1
            return
        if len(st.pending) >= MAX_PENDING:
            out.errors.append((st.topic, f"too many events waiting for a gap; dropping seq {seq}"))
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
            else:
                out.errors.append((where, f"'truncate' {k!r} is not a ply 0..{len(st.moves)}"))
        if "fen" in data:
            fen = data["fen"]
            try:
                if not isinstance(fen, str):
                    raise ValueError("not a string")
                board = chess.Board(fen)
                if not board.is_valid():
                    raise ValueError(str(board.status()))
                if st.moves:
                    out.errors.append((where, "'fen' ignored: the game already has moves"))
                else:
                    st.initial_fen = board.fen()
                    st.tip = None
            except ValueError as exc:
                out.errors.append((where, f"invalid 'fen' {fen!r}: {exc}"))
        if "san" in data or "uci" in data:
            self._move(st, data, where, out)
        if "result" in data:
            r = normalise_result(data["result"]) if isinstance(data["result"], str) else None
            if r is None:
                out.errors.append((where, f"unknown result {data['result']!r} (one of {RESULTS})"))
            else:
                st.result = r

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
        rnd, board_no = split_round(st.round, st.board)
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
            tags=(*st.tags, ("MqttTopic", st.topic)),
            clock_white=st.clock_white,
            clock_black=st.clock_black,
        )
        if snap != st.last_emitted:
            st.last_emitted = snap
            out.snapshots.append(snap)


def _num(v: object) -> TypeGuard[int | float]:
    return isinstance(v, int | float) and not isinstance(v, bool) and v >= 0


def _player(v: object) -> PlayerInfo | None:
    if isinstance(v, str):
        return PlayerInfo(v.strip() or "?")
    if isinstance(v, Mapping):
        name = v.get("name")
        if not isinstance(name, str):
            return None
        rating = v.get("rating")
        fide = v.get("fide_id")

        def opt(key: str) -> str | None:
            x = v.get(key)
            return x.strip() or None if isinstance(x, str) else None

        return PlayerInfo(
            name=name.strip() or "?",
            title=opt("title"),
            federation=opt("federation"),
            rating=rating if isinstance(rating, int) and not isinstance(rating, bool) else None,
            fide_id=str(fide) if isinstance(fide, int | str) and str(fide).isdigit() else None,
        )
    return None


# --- the feed -----------------------------------------------------------------------------------


def make_client(
    url: str,
    *,
    identifier: str | None = None,
    session_expiry: int | None = None,
    timeout: float = 10.0,
) -> aiomqtt.Client:
    """An MQTT 5 client; with ``session_expiry`` the session is persistent (no clean start)."""
    addr = parse_mqtt_url(url)
    props: Properties | None = None
    if session_expiry is not None:
        props = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
        props.SessionExpiryInterval = session_expiry
    return aiomqtt.Client(
        addr.host,
        addr.port,
        username=addr.username,
        password=addr.password,
        identifier=identifier,
        protocol=aiomqtt.ProtocolVersion.V5,
        clean_start=session_expiry is None,
        properties=props,
        tls_context=addr.tls_context(),
        timeout=timeout,
        keepalive=30,
    )


class MqttFeed:
    """Subscribes (QoS 1, persistent session) and feeds :class:`MqttIngest`."""

    def __init__(
        self, cfg: MqttFeedConfig, *, reconnect_delays: Sequence[float] = RECONNECT_DELAYS
    ) -> None:
        self.cfg = cfg
        self.name = cfg.name or "mqtt"
        self.ingest = MqttIngest(self.name, cfg.gap_timeout)
        self.backoff = Backoff(tuple(reconnect_delays))
        self.connections = 0
        self.subscribed = asyncio.Event()
        self.errors = 0

    async def run(self, sink: FeedSink) -> None:
        # aiomqtt's reconnect pattern: one client, its context entered again after
        # each loss. Its message queue lives on across connections, so a message
        # received (and acknowledged) just before a connection drops is not lost.
        client = make_client(
            self.cfg.url, identifier=self.cfg.client_id, session_expiry=self.cfg.session_expiry
        )
        ticker = asyncio.create_task(self._tick(sink))
        try:
            while True:
                try:
                    async with client:
                        self.connections += 1
                        self.backoff.succeed()
                        await client.subscribe(self.cfg.topic, qos=1)
                        self.subscribed.set()
                        async for message in client.messages:
                            self._message(sink, message)
                except Exception as exc:  # MqttError, or anything else: never end the feed
                    self.subscribed.clear()
                    await self._drain(sink, client)
                    delay = self.backoff.fail()
                    what = (
                        "broker connection"
                        if isinstance(exc, aiomqtt.MqttError)
                        else f"internal error: {type(exc).__name__}"
                    )
                    self._error(sink, self.cfg.url, f"{what}: {exc}; retrying in {delay:g} s")
                    await asyncio.sleep(delay)
        finally:
            ticker.cancel()

    def _message(self, sink: FeedSink, message: aiomqtt.Message) -> None:
        payload = message.payload
        if isinstance(payload, str):
            data = payload.encode()
        elif isinstance(payload, bytes | bytearray):
            data = bytes(payload)
        else:
            data = str(payload).encode()
        now = asyncio.get_running_loop().time()
        self._deliver(sink, self.ingest.handle(message.topic.value, data, now))

    async def _drain(self, sink: FeedSink, client: aiomqtt.Client) -> None:
        """Handle what arrived before the connection dropped (the iterator hands out
        queued messages even once disconnected, then raises)."""
        with contextlib.suppress(aiomqtt.MqttError):
            messages = client.messages
            while len(messages):
                self._message(sink, await anext(messages))

    async def _tick(self, sink: FeedSink) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(min(0.5, self.cfg.gap_timeout / 4))
            if self.ingest.waiting:
                self._deliver(sink, self.ingest.expire_gaps(loop.time()))

    def _deliver(self, sink: FeedSink, res: IngestResult) -> None:
        for where, message in res.errors:
            self._error(sink, where, message)
        for snap in res.snapshots:
            sink.snapshot(snap)

    def _error(self, sink: FeedSink, where: str, message: str) -> None:
        self.errors += 1
        sink.error(self.name, where, message)


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


__all__ = [
    "IngestResult",
    "MqttFeed",
    "MqttIngest",
    "make_client",
    "move_event",
    "parse_mqtt_url",
]
