"""A broadcast delay, without I/O: what viewers may see, and when.

Top events show their games to the public some minutes late (15 minutes is
common), so that no one watching can relay the moves, or an engine's view of
them, to a player. The service then analyses the moves as they come (the
engine runs ahead) and publishes each board through a :class:`DelayLine`:

- :meth:`DelayLine.hold` takes what the service would have published: a
  board's whole state (:class:`~livegain.publish.schema.BoardState`: a new
  board, new players, a restart), an :class:`~livegain.publish.schema.Update`
  (its ``seq`` must follow the board's last one: :meth:`DelayLine.expects`),
  a :class:`Remove`, or any other serialised message (:class:`Message`, e.g.
  a key moment or an event's standings, apart from the boards). Each gets a release time
  (``due``): the time its ply first arrived plus the board's delay (for a
  state, a removal, a message or an update without a ply: the time it was
  held plus the delay), and never earlier than the board's previous item. A
  ply's evaluation, which comes after the ply, is therefore released with
  the ply: the delayed stream shows every move already evaluated. An item
  holds only what the service knew when it was held, and comes after every
  item of its board held before: it is released no earlier than the arrival
  of the latest move, result or clock of its board it shows, plus the delay.
  No viewer sees anything of a board before its time.
- :meth:`DelayLine.due` releases, in order, each board's items whose time
  has come, and folds them into the board's *released* state
  (:func:`~livegain.publish.fold.apply_update`): the adapter gets each update
  with the state after it, just what undelayed publishing hands to the
  WebSocket hub and the MQTT publisher. :meth:`DelayLine.next_due` says when
  to call again.

Times are wall-clock seconds (``time.time()``) passed in, so that a line
written to disk (:func:`encode_held`, :func:`decode_held`) and read back
after a restart releases every item at its own time: nothing early. Every
``checkpoint_every`` updates (and after each state or removal) a released
item says ``checkpoint``: the adapter then stores the released state, and
the items before it can be forgotten; on restart, :meth:`DelayLine.restore`
takes the stored released states and the items held since.
"""

from __future__ import annotations

import heapq
import json
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from livegain.core.errors import LivegainError
from livegain.publish.fold import SeqGap, apply_update
from livegain.publish.publication import Kind
from livegain.publish.schema import BoardState, Update

CHECKPOINT_EVERY = 32
"""Released updates of a board between two stored released states."""

ItemKind = Literal["state", "update", "remove", "message"]


@dataclass(frozen=True, slots=True)
class Remove:
    """The board leaves the public view (when its last items have been released)."""

    board_id: str


@dataclass(frozen=True, slots=True)
class Message:
    """Any other serialised message (a key moment, an event's standings, ...):
    its publication's ``kind`` and ``key`` (the board's id, the event's name)
    and its bytes, released as they are, in order with the other messages of
    that kind and key."""

    kind: Kind
    key: str
    data: bytes

    @property
    def board_id(self) -> str:
        """Where the line holds it: apart from the boards and from the
        messages of other kinds or keys (and the row's key in the store)."""
        return f"{self.kind.value}/{self.key}"


Item = BoardState | Update | Remove | Message


def kind_of(item: Item) -> ItemKind:
    if isinstance(item, BoardState):
        return "state"
    if isinstance(item, Update):
        return "update"
    if isinstance(item, Message):
        return "message"
    return "remove"


@dataclass(frozen=True, slots=True)
class Held:
    """One item in the line: its number (increasing, over all boards), its
    board, its release time (wall-clock seconds) and the item itself."""

    n: int
    board_id: str
    due: float
    item: Item
    data: bytes | None = None
    """An update's bytes as they were published (or stored), released as
    they are: not encoded again. None: not known."""

    @property
    def kind(self) -> ItemKind:
        return kind_of(self.item)


@dataclass(frozen=True, slots=True)
class Released:
    """An item whose time came, with the board's released state after it
    (None: the board was removed, or the item is a :class:`Message`).
    ``checkpoint``: store ``state`` now (the items up to this one are then no
    longer needed after a restart)."""

    held: Held
    state: BoardState | None
    checkpoint: bool

    @property
    def board_id(self) -> str:
        return self.held.board_id


class Unchained(LivegainError, ValueError):
    """An update that does not follow the board's last held item: hold the
    board's whole state instead (:meth:`DelayLine.expects` says which ``seq``
    would follow)."""

    def __init__(self, board_id: str, expected: int | None, got: int) -> None:
        want = "a whole state" if expected is None else f"seq {expected}"
        super().__init__(f"board {board_id!r}: update seq {got}, the line needs {want}")
        self.board_id = board_id
        self.expected = expected
        self.got = got


@dataclass(eq=False, slots=True)
class _Board:
    queue: deque[Held] = field(default_factory=deque)
    released: BoardState | None = None
    head_seq: int | None = None
    """``seq`` of the last item held (or of the released state): the next
    update must have ``head_seq + 1``; None: the next item must be a state."""
    last_due: float = float("-inf")
    first_seen: dict[tuple[int, str], float] = field(default_factory=dict)
    """(ply, uci) -> when that move first reached the line."""
    since_checkpoint: int = 0


class DelayLine:
    """Items of every board, held until their time; see the module docstring."""

    def __init__(self, checkpoint_every: int = CHECKPOINT_EVERY) -> None:
        if checkpoint_every < 1:
            raise ValueError("checkpoint_every must be at least 1")
        self.checkpoint_every = checkpoint_every
        self._boards: dict[str, _Board] = {}
        self._heap: list[tuple[float, int, str]] = []
        self._n = 0
        self._held = 0
        self.skipped = 0
        """Updates that could not be folded into the released state when
        released (a broken chain: dropped, the board waits for a state)."""

    # ------------------------------------------------------------ queries

    def __len__(self) -> int:
        """Items held (not released yet)."""
        return self._held

    def knows(self, board_id: str) -> bool:
        """Whether the board has a released state or items held."""
        return board_id in self._boards

    def boards(self) -> list[str]:
        return list(self._boards)

    def boards_held(self) -> int:
        """Boards with items held."""
        return sum(1 for b in self._boards.values() if b.queue)

    def released_state(self, board_id: str) -> BoardState | None:
        """What viewers see of the board now (None: nothing yet, or removed)."""
        board = self._boards.get(board_id)
        return board.released if board is not None else None

    def released_states(self) -> dict[str, BoardState]:
        """Every board viewers see, in the order the line first knew them."""
        return {bid: b.released for bid, b in self._boards.items() if b.released is not None}

    def held(self, board_id: str) -> list[Held]:
        """The items of ``board_id`` (or a message key) not released yet, in order."""
        board = self._boards.get(board_id)
        return list(board.queue) if board is not None else []

    def expects(self, board_id: str) -> int | None:
        """The ``seq`` an update of this board must have to be held (None: the
        line needs the board's whole state first)."""
        board = self._boards.get(board_id)
        if board is None or board.head_seq is None:
            return None
        return board.head_seq + 1

    def next_due(self) -> float | None:
        """When the next item is due (None: nothing held)."""
        heap = self._heap
        while heap:
            _, n, bid = heap[0]
            board = self._boards.get(bid)
            if board is not None and board.queue and board.queue[0].n == n:
                return heap[0][0]
            heapq.heappop(heap)  # the item of a dropped board
        return None

    # ------------------------------------------------------------ holding

    def hold(
        self, now: float, board_id: str, item: Item, delay: float, data: bytes | None = None
    ) -> Held:
        """Hold ``item`` of ``board_id`` (what the service knew at ``now``)
        until ``delay`` seconds after its ply first arrived (see the module
        docstring); ``data``: an update's bytes as published. An update that
        does not follow the board's last item raises :class:`Unchained`."""
        if delay < 0:
            raise ValueError(f"delay must be >= 0 (got {delay})")
        item_board = item.board_id
        if item_board != board_id:
            raise ValueError(f"item of board {item_board!r} held for {board_id!r}")
        board = self._boards.get(board_id)
        if board is None:
            board = self._boards[board_id] = _Board()
        seen = board.first_seen
        base = now
        if isinstance(item, Update):
            if board.head_seq is None or item.seq != board.head_seq + 1:
                raise Unchained(board_id, self.expects(board_id), item.seq)
            if item.ply is not None:
                base = seen.setdefault((item.ply.ply, item.ply.uci), now)
            board.head_seq = item.seq
        elif isinstance(item, BoardState):
            for m in item.moves:
                seen.setdefault((m.ply, m.uci), now)
            board.head_seq = item.seq
        elif isinstance(item, Remove):
            seen.clear()
            board.head_seq = None
        due = max(base + delay, board.last_due)
        board.last_due = due
        self._n += 1
        held = Held(self._n, board_id, due, item, data if isinstance(item, Update) else None)
        self._push(board, held)
        return held

    def _push(self, board: _Board, held: Held) -> None:
        board.queue.append(held)
        heapq.heappush(self._heap, (held.due, held.n, held.board_id))
        self._held += 1

    def drop(self, board_id: str) -> bool:
        """Forget a board at once, held items and released state (an operator
        removed it: it leaves the public view now)."""
        board = self._boards.pop(board_id, None)
        if board is None:
            return False
        self._held -= len(board.queue)
        return True

    # ---------------------------------------------------------- releasing

    def due(self, now: float) -> list[Released]:
        """Release every item due at ``now`` (each board's in order)."""
        out: list[Released] = []
        heap = self._heap
        while heap and heap[0][0] <= now:
            _, n, bid = heapq.heappop(heap)
            board = self._boards.get(bid)
            if board is None or not board.queue or board.queue[0].n != n:
                continue  # a dropped board's
            held = board.queue.popleft()
            self._held -= 1
            released = self._fold(board, held)
            if released is not None:
                out.append(released)
            if board.released is None and not board.queue and board.head_seq is None:
                del self._boards[bid]  # removed, and nothing new held since
        return out

    def _fold(self, board: _Board, held: Held) -> Released | None:
        item = held.item
        if isinstance(item, BoardState):
            board.released = item
            board.since_checkpoint = 0
            return Released(held, item, True)
        if isinstance(item, Remove):
            board.released = None
            board.since_checkpoint = 0
            return Released(held, None, True)
        if isinstance(item, Message):
            return Released(held, None, True)
        before = board.released
        if before is None:
            self._broken(board)
            return None
        try:
            after = apply_update(before, item)
        except (SeqGap, ValueError):
            self._broken(board)
            return None
        board.released = after
        board.since_checkpoint += 1
        checkpoint = board.since_checkpoint >= self.checkpoint_every
        if checkpoint:
            board.since_checkpoint = 0
        return Released(held, after, checkpoint)

    def _broken(self, board: _Board) -> None:
        """An update could not be folded in: it is dropped, and so are the
        board's next updates until a state (the adapter holds one when
        :meth:`expects` says None)."""
        self.skipped += 1
        if not any(isinstance(h.item, BoardState) for h in board.queue):
            board.head_seq = None

    # ------------------------------------------------------------ restart

    def restore(self, released: Mapping[str, BoardState], held: Iterable[Held]) -> None:
        """Take back a line stored before a restart: each board's released
        state (as of its last checkpoint) and the items held after it, in
        order of their numbers. Items keep their release times (some may be
        due at once: they were due, or released, before the restart). When
        the plies arrived is not kept: updates held from now on count from
        now (later, never earlier)."""
        if self._boards:
            raise RuntimeError("restore() is for an empty line")
        for bid, state in released.items():
            self._boards[bid] = _Board(released=state, head_seq=state.seq)
        for h in sorted(held, key=lambda h: h.n):
            board = self._boards.get(h.board_id)
            if board is None:
                board = self._boards[h.board_id] = _Board()
            item = h.item
            if isinstance(item, Remove):
                board.head_seq = None
            elif not isinstance(item, Message):
                board.head_seq = item.seq
            board.last_due = max(board.last_due, h.due)
            self._push(board, h)
            self._n = max(self._n, h.n)


# ------------------------------------------------------------- storage


def encode_item(item: Item) -> tuple[ItemKind, str]:
    """An item as (kind, JSON text), for the store."""
    kind = kind_of(item)
    if isinstance(item, Remove):
        return kind, json.dumps({"board_id": item.board_id})
    if isinstance(item, Message):
        return kind, item.data.decode()
    return kind, item.model_dump_json()


def encode_held(held: Held) -> tuple[ItemKind, str]:
    """A held item as (kind, JSON text), for the store: an update in the
    bytes it was published in, when the line has them (:attr:`Held.data`)."""
    if held.data is not None:
        return kind_of(held.item), held.data.decode()
    return encode_item(held.item)


def decode_held(n: int, board_id: str, due: float, kind: str, body: str) -> Held:
    """A stored item back (ValueError if it cannot be read)."""
    item: Item
    data: bytes | None = None
    if kind == "state":
        item = BoardState.model_validate_json(body)
    elif kind == "update":
        item = Update.model_validate_json(body)
        data = body.encode()  # as it was published
    elif kind == "remove":
        item = Remove(board_id)
    elif kind == "message":
        # Only the store spells a message's kind and key as one row key.
        name, _, key = board_id.partition("/")
        item = Message(Kind(name), key, body.encode())
    else:
        raise ValueError(f"unknown delayed item kind {kind!r}")
    if item.board_id != board_id:
        raise ValueError(f"stored item of board {item.board_id!r} under {board_id!r}")
    return Held(n, board_id, float(due), item, data)
