"""The boards as a gateway knows them from the service's MQTT output (sans-I/O).

A gateway (``livegain gateway``, :mod:`livegain.publish.gateway`) serves
viewers from what the service publishes on the broker
(:mod:`livegain.publish.mqtt`): the retained ``{prefix}/{id}/state`` (the
board's ``snapshot`` message), ``{prefix}/{id}/update`` (each ``update``
message, with the board's ``seq``), the retained ``{prefix}/boards`` and
``{prefix}/status``. :class:`Replica` turns those messages back into the
service's own publications (:class:`~livegain.publish.publication.Publication`,
the kinds the service's outputs take), which the gateway's WebSocket server
takes as the service's does, and the one thing only a replica asks for:

- a ``BOARD`` publication, whole: a board is new, or its state is not the one
  its updates led to (a reset, a resync): its subscribers get a snapshot;
- a ``BOARD`` publication of one update: the next update of a board, in
  ``seq`` order, with the bytes the service sent (its viewers get these very
  bytes) and the board after it;
- a ``REMOVAL``: the board's retained state was cleared (an empty payload):
  it leaves the board list;
- a ``STANDINGS``: an event's retained ``standings`` message;
- a ``MOMENT``: a key moment not seen yet, from the retained
  ``{prefix}/moments`` (the service's latest moments,
  :mod:`livegain.publish.recent_moments`): at start the moments that happened
  before, then each new one (the service publishes the list again after
  each); the replica keeps them too (:attr:`Replica.moments`), for the
  server it hands its boards to when it starts;
- :class:`Resync`: a gap in a board's ``seq``: fetch its retained state again
  (the adapter subscribes to ``topic`` once more, which makes the broker send
  the retained message again).

The publications carry ``at`` 0 and no delay: what the service put on the
broker is what its viewers may see now (its broadcast delay is behind it).

Rules, per board:

- an update with ``seq`` = the board's ``seq`` + 1 is applied
  (:func:`livegain.publish.fold.apply_update`); one with ``seq`` at or below
  it is a duplicate and ignored; one beyond it is kept aside (at most
  ``max_pending`` per board) and asks for a :class:`Resync`; the updates kept
  aside are applied as soon as the gap closes (the missing update arrives,
  or a state at or past it does);
- a state equal to the board as the replica has it changes nothing (the
  normal case: the service publishes the state after its updates); a state
  at or beyond the replica's ``seq`` that differs replaces it
  (a whole ``BOARD``), and the updates kept aside that follow it are applied;
  an older state (a retained one that had not caught up yet) is ignored,
  except just after :meth:`Replica.begin_resync` or a restart of the service
  (``status`` went ``offline``, then ``online``), when the next state of each
  board is taken whatever its ``seq``.

After (re)subscribing, the adapter calls :meth:`Replica.begin_resync`; the
broker then sends every retained state again, and the retained ``status``
(subscribed last) after them: the adapter then calls
:meth:`Replica.end_resync`, which removes the boards whose state did not come
back (removed meanwhile). No sockets, no asyncio, no clock here.

Every message is untrusted (anyone who may publish under the prefix can
send one): a payload over :data:`MAX_PAYLOAD` bytes, JSON nested deeper than
32 levels (:mod:`livegain.feeds.json_bounds`; the models' parser stops at
200), or a message that is not what its topic says is counted as ``junk``
and changes nothing, never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import ValidationError

from livegain.feeds.json_bounds import loads_bounded
from livegain.mqtt.topics import OutputTopics, topic_safe
from livegain.publish.entry import BoardEntry
from livegain.publish.fold import apply_update
from livegain.publish.publication import Publication
from livegain.publish.recent_moments import RecentMoments, payload_lines
from livegain.publish.schema import BoardState, Moment, Snapshot, Update


@dataclass(frozen=True, slots=True)
class Resync:
    """A gap in the board's ``seq``: subscribe to ``topic`` (its retained state) again."""

    board_id: str
    topic: str


Action = Publication | Resync

#: Largest message taken from the broker, bytes (a board's whole state with a
#: thousand plies is well under 1 MiB); a larger one is junk.
MAX_PAYLOAD = 16 * 1024 * 1024


@dataclass
class ReplicaStats:
    messages: int = 0
    updates: int = 0
    """Updates applied in order."""
    duplicates: int = 0
    """Updates at or below the board's ``seq`` (already applied), ignored."""
    gaps: int = 0
    """Gaps in a board's ``seq`` seen (each asked for a resync)."""
    states: int = 0
    """States that replaced the board (new board, reset or resync)."""
    stale_states: int = 0
    """States older than the board, ignored."""
    dropped: int = 0
    """Updates kept aside then dropped (too many behind one gap)."""
    removed: int = 0
    junk: int = 0
    """Messages that are not what the topic says (not counted anywhere else)."""
    restarts: int = 0
    """Times the service came back online after being offline."""


@dataclass(eq=False)
class _Board:
    segment: str
    """The board's topic level (its id made topic-safe)."""
    board_id: str
    state: BoardState | None = None
    snapshot: bytes | None = None
    """``state``'s snapshot message, once serialised (or as received)."""
    pending: dict[int, tuple[bytes, Update]] = field(default_factory=dict)
    """Updates beyond a gap, by ``seq``."""
    seen: int = 0
    """Highest ``seq`` seen in a state or an update."""
    resyncing: bool = False
    accept_any: bool = False
    """The next state is taken whatever its ``seq``."""
    confirmed: bool = True
    """Its state came (again) since :meth:`Replica.begin_resync`."""

    def snapshot_bytes(self) -> bytes:
        if self.snapshot is None:
            assert self.state is not None
            self.snapshot = Snapshot(state=self.state).model_dump_json().encode()
        return self.snapshot

    @property
    def seq(self) -> int:
        return self.state.seq if self.state is not None else -1


class Replica:
    """Board states rebuilt from the MQTT messages of one topic prefix."""

    def __init__(
        self, prefix: str = "livegain/out", *, max_pending: int = 1000, max_unknown: int = 1000
    ) -> None:
        self.prefix = prefix.rstrip("/")
        self.topics = OutputTopics(self.prefix)
        self.max_pending = max_pending
        """Updates kept aside per board behind a gap (beyond: the oldest are dropped)."""
        self.max_unknown = max_unknown
        """Boards known from updates only (no state yet) at most; beyond, their updates
        are dropped."""
        self.stats = ReplicaStats()
        self.service: str | None = None
        """The service's last ``status``: ``online``, ``offline`` or None (never seen)."""
        self.listed: list[str] = []
        """Board ids in the order of the service's last ``boards`` message."""
        self.resyncing_all = False
        self._boards: dict[str, _Board] = {}
        self.moments = RecentMoments()
        """The service's latest moments seen, oldest first."""

    # ------------------------------------------------------------ queries

    def state_topic(self, segment: str) -> str:
        """A board's state topic, from its topic level (what a resync reads again)."""
        return f"{self.prefix}/{segment}/state"

    def subscriptions(self) -> list[str]:
        """Topic filters to subscribe to, in this order (the status topic last:
        its retained message marks the end of the retained states)."""
        t = self.topics
        return [*t.board_filters, t.boards, t.status]

    def board_ids(self) -> list[str]:
        return [b.board_id for b in self._boards.values() if b.state is not None]

    def state(self, board_id: str) -> BoardState | None:
        board = self._boards.get(topic_safe(board_id))
        return board.state if board is not None else None

    def ordered(self) -> list[BoardState]:
        """Every board's state: those of the service's board list in its order,
        then the others in the order they came."""
        place = {bid: i for i, bid in enumerate(self.listed)}
        states = [b.state for b in self._boards.values() if b.state is not None]
        return sorted(states, key=lambda s: place.get(s.board_id, len(place)))

    def awaiting(self) -> list[Resync]:
        """The boards still waiting for a state to close a gap."""
        return [
            Resync(b.board_id, self.state_topic(b.segment))
            for b in self._boards.values()
            if b.resyncing
        ]

    def seq_lag(self) -> int:
        """Updates seen but not applied yet, summed over the boards (the
        highest ``seq`` seen minus the board's)."""
        return sum(max(0, b.seen - max(b.seq, 0)) for b in self._boards.values())

    # ------------------------------------------------------------- resync

    def begin_resync(self) -> None:
        """Just (re)subscribed: each board's next state is taken as it is, and
        the boards whose state does not come back by :meth:`end_resync` go."""
        self.resyncing_all = True
        for board in self._boards.values():
            board.accept_any = True
            board.confirmed = False

    def end_resync(self) -> list[Action]:
        """The retained states have all come: remove the boards that did not
        get one (their retained state was cleared while we were away)."""
        if not self.resyncing_all:
            return []
        self.resyncing_all = False
        actions: list[Action] = []
        for segment, board in list(self._boards.items()):
            board.accept_any = False
            if board.confirmed:
                continue
            del self._boards[segment]
            if board.state is not None:
                self.stats.removed += 1
                actions.append(Publication.removal(board.board_id, at=0.0))
        return actions

    # --------------------------------------------------------------- feed

    def feed(self, topic: str, payload: bytes) -> list[Action]:
        """One MQTT message: what the WebSocket server must do for it."""
        self.stats.messages += 1
        if len(payload) > MAX_PAYLOAD:
            self.stats.junk += 1
            return []
        parsed = self.topics.parse(topic)
        kind, level = parsed if parsed is not None else (None, "")
        if kind == "status":
            self._status(payload)
            return []
        if kind == "boards":
            self._listed(payload)
            return []
        if kind == "moments":
            return self._moments(payload)
        if kind == "standings":
            return self._standings(payload)
        if kind == "state":
            return self._state(level, payload)
        if kind == "update":
            return self._update(level, payload)
        self.stats.junk += 1
        return []

    def _standings(self, payload: bytes) -> list[Action]:
        if not payload:  # a retained message cleared
            return []
        try:
            event = loads_bounded(payload)["event"]
        except (ValueError, KeyError, TypeError):
            self.stats.junk += 1
            return []
        if not isinstance(event, str):
            self.stats.junk += 1
            return []
        return [Publication.standings(event, payload, at=0.0)]

    def _moments(self, payload: bytes) -> list[Action]:
        """The service's latest moments: those not seen yet, in order."""
        actions: list[Action] = []
        for line in payload_lines(payload):
            try:
                board_id = Moment.model_validate_json(line).board_id
            except ValidationError:
                self.stats.junk += 1
                continue
            if self.moments.add(board_id, line):
                actions.append(Publication.moment(board_id, line, at=0.0))
        return actions

    def _status(self, payload: bytes) -> None:
        text = payload.decode("utf-8", "replace").strip()
        if text == "online" and self.service == "offline":
            # The service restarted: its states may start again from a lower seq.
            self.stats.restarts += 1
            for board in self._boards.values():
                board.accept_any = True
        if text in ("online", "offline"):
            self.service = text
        else:
            self.stats.junk += 1

    def _listed(self, payload: bytes) -> None:
        try:
            data = loads_bounded(payload)
            ids = [str(b["board_id"]) for b in data["boards"]]
        except (ValueError, TypeError, KeyError):
            self.stats.junk += 1
            return
        self.listed = ids

    def _state(self, segment: str, payload: bytes) -> list[Action]:
        board = self._boards.get(segment)
        if not payload:  # the retained state cleared: the board was removed
            if board is None:
                return []
            del self._boards[segment]
            if board.state is None:
                return []
            self.stats.removed += 1
            return [Publication.removal(board.board_id, at=0.0)]
        if board is not None and board.state is not None and payload == board.snapshot_bytes():
            board.confirmed = True
            board.accept_any = False
            return []
        try:
            state = Snapshot.model_validate_json(payload).state
        except ValidationError:
            self.stats.junk += 1
            return []
        if topic_safe(state.board_id) != segment:
            self.stats.junk += 1
            return []
        if board is None:
            board = self._boards[segment] = _Board(segment, state.board_id)
        board.confirmed = True
        board.seen = max(board.seen, state.seq)
        if board.state is not None and state.seq < board.state.seq and not board.accept_any:
            self.stats.stale_states += 1
            return []
        board.accept_any = False
        board.board_id = state.board_id
        board.state = state
        board.snapshot = payload
        self.stats.states += 1
        actions: list[Action] = [
            Publication.board_change(state.board_id, BoardEntry(state), whole=True, at=0.0)
        ]
        self._drain(board, actions)
        if not board.pending:
            board.resyncing = False
        return actions

    def _update(self, segment: str, payload: bytes) -> list[Action]:
        try:
            update = Update.model_validate_json(payload)
        except ValidationError:
            self.stats.junk += 1
            return []
        if topic_safe(update.board_id) != segment:
            self.stats.junk += 1
            return []
        board = self._boards.get(segment)
        if board is None:
            unknown = sum(1 for b in self._boards.values() if b.state is None)
            if unknown >= self.max_unknown:
                self.stats.dropped += 1
                return []
            board = self._boards[segment] = _Board(segment, update.board_id)
        board.seen = max(board.seen, update.seq)
        if board.state is not None and update.seq <= board.state.seq:
            self.stats.duplicates += 1
            return []
        if board.state is None or update.seq > board.state.seq + 1:
            return self._keep_aside(board, payload, update)
        actions: list[Action] = []
        if not self._apply(board, payload, update, actions):
            return self._keep_aside(board, payload, update)
        self._drain(board, actions)
        if board.resyncing and not board.pending:
            board.resyncing = False  # the missing update came after all
        return actions

    def _keep_aside(self, board: _Board, payload: bytes, update: Update) -> list[Action]:
        board.pending[update.seq] = (payload, update)
        while len(board.pending) > self.max_pending:
            del board.pending[min(board.pending)]
            self.stats.dropped += 1
        if board.resyncing:
            return []
        board.resyncing = True
        self.stats.gaps += 1
        return [Resync(board.board_id, self.state_topic(board.segment))]

    def _apply(self, board: _Board, payload: bytes, update: Update, out: list[Action]) -> bool:
        assert board.state is not None
        try:
            state = apply_update(board.state, update)
        except (ValueError, TypeError, ValidationError):
            return False
        board.state = state
        board.snapshot = None
        self.stats.updates += 1
        out.append(
            Publication.board_change(
                board.board_id, BoardEntry(state), (update,), encoded=(payload,), at=0.0
            )
        )
        return True

    def _drain(self, board: _Board, out: list[Action]) -> None:
        """Apply the updates kept aside that now follow the board's ``seq``."""
        pending = board.pending
        if not pending:
            return
        for seq in [s for s in pending if s <= board.seq]:
            del pending[seq]
        while board.seq + 1 in pending:
            payload, update = pending[board.seq + 1]
            if not self._apply(board, payload, update, out):
                # Not applicable to this state: the board's next state will say.
                if not board.resyncing:
                    board.resyncing = True
                    out.append(Resync(board.board_id, self.state_topic(board.segment)))
                return
            del pending[update.seq]
