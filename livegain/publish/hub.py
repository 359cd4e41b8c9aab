"""The publish hub: boards, subscriptions and the resync policy, without I/O.

The hub holds what every viewer-facing adapter needs and decides what goes to
whom; it has no sockets, no event loop and no clock (times are passed in).
Each method returns *actions* for the adapter to carry out:

- :class:`Send` ``(clients, data, board_id, board_list)``: write ``data`` (one
  serialised server message) to each of ``clients``;
- :class:`Close` ``(client, code, reason, abort)``: close a connection (with a
  close frame, or at once when ``abort``: a client too slow to read one);
- :class:`BoardsChanged` ``(data)``: the board list changed; ``data`` is the
  whole list (a ``boards`` message), for retained copies such as MQTT's.

Clients are opaque hashable handles chosen by the adapter (the WebSocket
server uses its connections). What the hub owns:

- board states (:class:`BoardEntry`: a state, or a function building it when
  first needed, with its ``snapshot`` message and summary serialised once and
  cached), per-board ``seq`` (the states'), and the board list: each board's
  place (page cursors), ``hello``, ``boards`` pages and ``boards_diff``
  messages gathered over ``board_list_interval`` seconds (when
  :attr:`Hub.list_pending` turns true the adapter calls :meth:`Hub.flush_list`
  that many seconds later);
- the latest key moments (:meth:`Hub.publish_moment`, the last
  :data:`livegain.publish.recent_moments.KEPT` across all boards): each goes to
  the board's subscribers when it happens, and a client that subscribes to
  a board later gets the board's kept moments after its snapshot (so does a
  lagging client with its resync);
- each event's latest ``standings`` message (:meth:`Hub.publish_standings`),
  sent to the clients that asked for the event (``subscribe_standings``) when
  they ask and on each change; a client that falls behind gets the latest of
  each event it missed on resync;
- clients' subscriptions, and each client message: rate (a token bucket),
  size, validation, board ids, subscription count, protocol errors (past
  ``max_errors`` the client is closed, 1008);
- the stale/resync policy. The adapter writes a board's message only to the
  clients :meth:`Hub.recipients` leaves (not those stale for that board), and
  reports a client whose write buffer is above ``soft_backlog``
  (:meth:`Hub.lagging`): the hub marks the board stale for it and drops its
  updates. The adapter then reports that client's buffer now and then
  (:meth:`Hub.poll`): once it is below ``low_backlog`` the hub answers with a
  fresh ``snapshot`` of each board it missed (and the first page of the board
  list when it missed a change of it); one that does not drain within
  ``stale_timeout`` seconds, or whose buffer passes ``hard_backlog``, is
  aborted.

Its parts: :mod:`.actions` (what it returns), :mod:`.entry` (board entries),
:mod:`.limits`, :mod:`.validation` (why a client message was refused);
:mod:`.fold` folds an ``update`` into a state, for processes fed by updates.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import structlog
from pydantic import TypeAdapter, ValidationError

from livegain.publish.actions import Action, BoardsChanged, Close, Send
from livegain.publish.entry import BoardEntry, ListKey, StateLike, splice
from livegain.publish.limits import ServerLimits
from livegain.publish.recent_moments import RecentMoments
from livegain.publish.schema import (
    Boards,
    BoardsDiff,
    BoardState,
    BoardSummary,
    ClientMessage,
    Error,
    Hello,
    ListBoards,
    Ping,
    Pong,
    Subscribe,
    SubscribeStandings,
    Unsubscribe,
    UnsubscribeStandings,
    Update,
)
from livegain.publish.validation import describe_validation

log = structlog.get_logger("livegain.publish.hub")

C = TypeVar("C", bound=Hashable)

_CLIENT_ADAPTER: TypeAdapter[
    Subscribe | Unsubscribe | Ping | ListBoards | SubscribeStandings | UnsubscribeStandings
] = TypeAdapter(ClientMessage)

MAX_EVENT_NAME = 255
"""Longest event name a client may name in ``subscribe_standings``."""

CLOSE_POLICY = 1008
"""Close code for a client that broke the protocol too often."""


@dataclass
class ServerStats:
    connections_total: int = 0
    protocol_errors: int = 0
    closed_abusive: int = 0
    closed_slow: int = 0
    resyncs: int = 0
    dropped_updates: int = 0
    messages_sent: int = 0
    http_requests: int = 0
    refused: int = 0
    refused_origin: int = 0
    """WebSocket handshakes refused for their Origin (HTTP 403)."""
    refused_per_ip: int = 0
    """WebSocket handshakes refused for the per-address cap (HTTP 429)."""
    bad_requests: int = 0
    """HTTP requests answered 400 or 405 (malformed, or a method not served)."""
    admin_refused: int = 0
    """Admin requests without the right token (HTTP 401)."""
    boards_removed: int = 0
    board_list_diffs: int = 0
    """``boards_diff`` messages sent (each to every client)."""


# ------------------------------------------------------------------- hub


@dataclass(eq=False, slots=True)
class _ClientState:
    all_boards: bool = False
    boards: set[str] = field(default_factory=set)
    stale: set[str] = field(default_factory=set)
    """Boards whose updates this client misses (a snapshot of each on resync)."""
    list_stale: bool = False
    """It missed a board-list message (the first page again on resync)."""
    all_standings: bool = False
    standings: set[str] = field(default_factory=set)
    """Events whose ``standings`` it asked for."""
    stale_standings: set[str] = field(default_factory=set)
    """Events whose standings it missed (the latest of each on resync)."""
    stale_since: float | None = None
    errors: int = 0
    tokens: float = 0.0
    last_refill: float | None = None
    dropped: int = 0
    resyncs: int = 0
    closed: bool = False

    def wants(self, board_id: str) -> bool:
        return self.all_boards or board_id in self.boards

    def wants_standings(self, event: str) -> bool:
        return self.all_standings or event in self.standings

    @property
    def lagging(self) -> bool:
        return self.stale_since is not None


class Hub(Generic[C]):
    """Boards, subscriptions and the stale/resync policy; see the module docstring.

    ``stats`` may be shared with the adapter (which counts what it writes and
    its own refusals there); ``peer`` names a client in the log.
    """

    def __init__(
        self,
        limits: ServerLimits | None = None,
        *,
        server_name: str = "livegain",
        stats: ServerStats | None = None,
        peer: Callable[[C], str] = repr,
    ) -> None:
        self.limits = limits or ServerLimits()
        self.server_name = server_name
        self.stats = stats if stats is not None else ServerStats()
        self.peer = peer
        self._boards: dict[str, BoardEntry] = {}
        self._ords: dict[str, int] = {}
        """Per board, its place in the board list (increasing in the order of
        ``_boards``: a page cursor is the last place it holds)."""
        self._last_ord = 0
        self._announced: dict[str, ListKey] = {}
        """The board list as the last ``boards_diff`` left it (id -> list key)."""
        self._list_dirty: set[str] = set()
        self._clients: dict[C, _ClientState] = {}
        self._subscribers: dict[str, list[C]] = {}
        """Per board, the clients that receive it (rebuilt after any change of
        clients or subscriptions; lists are replaced, never changed in place)."""
        self._everyone: list[C] | None = None
        self._lagging: dict[C, None] = {}
        """Clients stale for something, in the order they fell behind."""
        self._standings: dict[str, bytes] = {}
        """Per event, its latest ``standings`` message (serialised)."""
        self._moments = RecentMoments()
        """The latest ``moment`` messages, for the clients that come later."""

    # ------------------------------------------------------------ boards

    def board_ids(self) -> list[str]:
        return list(self._boards)

    def has_board(self, board_id: str) -> bool:
        return board_id in self._boards

    def entry(self, board_id: str) -> BoardEntry | None:
        return self._boards.get(board_id)

    def state(self, board_id: str) -> BoardState | None:
        entry = self._boards.get(board_id)
        return entry.state if entry else None

    def snapshot_bytes(self, board_id: str) -> bytes | None:
        """The board's current ``snapshot`` message, serialised (cached per state)."""
        entry = self._boards.get(board_id)
        return entry.snapshot_bytes() if entry else None

    def summaries(self) -> list[BoardSummary]:
        return [e.summary() for e in self._boards.values()]

    def entries(self) -> list[BoardEntry]:
        """Every board, in list order."""
        return list(self._boards.values())

    @property
    def board_count(self) -> int:
        return len(self._boards)

    def set_board(self, state: StateLike) -> list[Action[C]]:
        """Add or replace a board: its subscribers get a ``snapshot`` of it."""
        entry = BoardEntry.of(state)
        board_id = entry.list_key[0]
        old = self._boards.get(board_id)
        self._put(board_id, entry)
        if old is None or old.list_key != entry.list_key:
            self._list_changed(board_id)
        return self._to_subscribers(board_id, entry.snapshot_bytes())

    def publish(self, update: Update, state: StateLike) -> tuple[bytes, list[Action[C]]]:
        """Record ``state`` (the board after ``update``) and send ``update``;
        the serialised update is returned too (for other publishers)."""
        data = update.model_dump_json().encode()
        return data, self.publish_raw(update.board_id, data, state, update.result)

    def publish_raw(
        self, board_id: str, data: bytes, state: StateLike, result: str | None = None
    ) -> list[Action[C]]:
        """Like :meth:`publish` with an update already serialised.

        A board not known yet is added, and its subscribers get its snapshot
        rather than the update (they never saw the board).
        """
        old = self._boards.get(board_id)
        key = None
        if old is not None and result is not None:
            key = (old.list_key[0], old.list_key[1], old.list_key[2], result)
        entry = BoardEntry.of(state)
        if key is not None:
            # The players are the board's (a change of them comes as a new
            # board, set_board): only the result may be new.
            entry.list_key = key
        self._put(board_id, entry)
        # Replacing an entry keeps its place in the dict: the board list only
        # changes with a new board or a new list key.
        if old is None or entry.list_key != old.list_key:
            self._list_changed(board_id)
        if old is None:
            return self._to_subscribers(board_id, entry.snapshot_bytes())
        return self._to_subscribers(board_id, data)

    def remove_board(self, board_id: str) -> bool:
        """Forget a board: it leaves the board list (a ``removed`` diff)."""
        if self._boards.pop(board_id, None) is None:
            return False
        self._ords.pop(board_id, None)
        self._moments.remove_board(board_id)
        self.stats.boards_removed += 1
        self._list_changed(board_id)
        return True

    def _put(self, board_id: str, entry: BoardEntry) -> None:
        if board_id not in self._boards:
            self._last_ord += 1
            self._ords[board_id] = self._last_ord
        self._boards[board_id] = entry

    def _to_subscribers(self, board_id: str, data: bytes) -> list[Action[C]]:
        clients = self.subscribers(board_id)
        return [Send(clients, data, board_id)] if clients else []

    def subscribers(self, board_id: str) -> list[C]:
        """The clients that receive ``board_id`` (a cached list: do not change it)."""
        clients = self._subscribers.get(board_id)
        if clients is None:
            clients = [c for c, st in self._clients.items() if st.wants(board_id)]
            self._subscribers[board_id] = clients
        return clients

    # ----------------------------------------------------------- moments

    def publish_moment(self, board_id: str, data: bytes) -> list[Action[C]]:
        """Keep ``data`` (a serialised ``moment`` message of ``board_id``)
        among the latest and send it to the board's subscribers; a moment kept
        already (the same bytes) is not sent again."""
        if not self._moments.add(board_id, data):
            return []
        return self._to_subscribers(board_id, data)

    def moments(self) -> list[tuple[str, bytes]]:
        """The kept moments, (board id, message), oldest first."""
        return self._moments.items()

    def _moments_of(self, client: C, boards: Iterable[str]) -> list[Action[C]]:
        return [Send([client], d, b) for b, d in self._moments.of(set(boards))]

    # --------------------------------------------------------- standings

    def publish_standings(self, event: str, data: bytes) -> list[Action[C]]:
        """Keep ``data`` (a serialised ``standings`` message) as ``event``'s
        latest and send it to the clients that asked for the event."""
        self._standings[event] = data
        clients = self.standings_subscribers(event)
        return [Send(clients, data, standings=event)] if clients else []

    def remove_standings(self, event: str) -> bool:
        """Forget an event's standings (its subscribers keep their subscription)."""
        return self._standings.pop(event, None) is not None

    def standings(self, event: str) -> bytes | None:
        """The event's latest ``standings`` message, serialised (None: none yet)."""
        return self._standings.get(event)

    def standings_events(self) -> list[str]:
        """The events with standings, by name."""
        return sorted(self._standings)

    def standings_subscribers(self, event: str) -> list[C]:
        """The clients that receive ``event``'s standings."""
        return [c for c, st in self._clients.items() if st.wants_standings(event)]

    def _subscribe_standings(
        self, client: C, st: _ClientState, msg: SubscribeStandings, out: list[Action[C]]
    ) -> None:
        if msg.events == "*":
            st.all_standings = True
            targets = self.standings_events()
        else:
            names = list(dict.fromkeys(msg.events))
            longest = max((len(e) for e in names), default=0)
            if longest > MAX_EVENT_NAME:
                self._error(
                    client,
                    st,
                    f"subscribe_standings: event name of {longest} characters "
                    f"(limit {MAX_EVENT_NAME}); nothing subscribed",
                    out,
                )
                return
            total = len(st.standings.union(names)) + int(st.all_standings)
            if total > self.limits.max_subscriptions:
                self._error(
                    client,
                    st,
                    f"subscribe_standings: {total} events (limit "
                    f'{self.limits.max_subscriptions} per connection; "*" subscribes to '
                    "every event); nothing subscribed",
                    out,
                )
                return
            st.standings.update(names)
            targets = [e for e in names if e in self._standings]
        for event in targets:
            st.stale_standings.discard(event)
            out.append(Send([client], self._standings[event], standings=event))

    def _unsubscribe_standings(self, st: _ClientState, msg: UnsubscribeStandings) -> None:
        if msg.events == "*":
            st.all_standings = False
            st.standings.clear()
            st.stale_standings.clear()
        else:
            for e in msg.events:
                st.standings.discard(e)
                st.stale_standings.discard(e)

    # -------------------------------------------------------- board list

    @property
    def list_pending(self) -> bool:
        """Board-list changes wait to be sent: call :meth:`flush_list`
        ``board_list_interval`` seconds after this turned true."""
        return bool(self._list_dirty)

    def _list_changed(self, board_id: str) -> None:
        self._list_dirty.add(board_id)

    def flush_list(self) -> list[Action[C]]:
        """What changed in the board list since the last flush, as one
        ``boards_diff`` to every client, and the whole list (:class:`BoardsChanged`)."""
        dirty, self._list_dirty = self._list_dirty, set()
        added: list[BoardSummary] = []
        changed: list[BoardSummary] = []
        removed: list[str] = []
        announced = self._announced
        for board_id in sorted(dirty, key=lambda b: self._ords.get(b, 0)):
            entry = self._boards.get(board_id)
            before = announced.get(board_id)
            if entry is None:
                if before is not None:
                    del announced[board_id]
                    removed.append(board_id)
            elif before is None:
                announced[board_id] = entry.list_key
                added.append(entry.summary())
            elif before != entry.list_key:
                announced[board_id] = entry.list_key
                changed.append(entry.summary())
        if not (added or changed or removed):
            return []
        self.stats.board_list_diffs += 1
        data = BoardsDiff(added=added, changed=changed, removed=removed).model_dump_json()
        out: list[Action[C]] = []
        everyone = self.everyone()
        if everyone:
            out.append(Send(everyone, data.encode(), board_list=True))
        out.append(BoardsChanged(lambda: self.board_page(0, None, reset=True)))
        return out

    def everyone(self) -> list[C]:
        """Every client (a cached list: do not change it)."""
        if self._everyone is None:
            self._everyone = list(self._clients)
        return self._everyone

    def _page(self, cursor: int, limit: int | None) -> tuple[list[BoardEntry], int | None]:
        """Up to ``limit`` boards placed after ``cursor``, and the next cursor."""
        out: list[BoardEntry] = []
        ords = self._ords
        last = 0
        for board_id, entry in self._boards.items():
            place = ords[board_id]
            if place <= cursor:
                continue
            if limit is not None and len(out) >= limit:
                return out, last
            out.append(entry)
            last = place
        return out, None

    def board_page(
        self, cursor: int = 0, limit: int | None = None, *, reset: bool = False
    ) -> bytes:
        """A ``boards`` message: the boards after ``cursor``, ``limit`` at most
        (None: all of them), serialised from each board's cached summary."""
        entries, nxt = self._page(cursor, limit)
        shell = Boards(boards=[], total=len(self._boards), next=nxt, reset=reset)
        return splice(shell.model_dump_json().encode(), [e.summary_json() for e in entries])

    def hello(self) -> bytes:
        """The ``hello`` message: the first page of the board list."""
        entries, nxt = self._page(0, self.limits.board_page)
        shell = Hello(
            server=self.server_name, boards=[], boards_total=len(self._boards), boards_next=nxt
        )
        return splice(shell.model_dump_json().encode(), [e.summary_json() for e in entries])

    # ----------------------------------------------------------- clients

    @property
    def client_count(self) -> int:
        return len(self._clients)

    def clients(self) -> list[C]:
        return list(self._clients)

    def has_client(self, client: C) -> bool:
        return client in self._clients

    def subscriptions(self, client: C) -> set[str]:
        """The board ids ``client`` subscribed to (``"*"`` among them for every board)."""
        st = self._clients.get(client)
        if st is None:
            return set()
        return set(st.boards) | ({"*"} if st.all_boards else set())

    def connect(self, client: C) -> list[Action[C]]:
        """A new client: it gets ``hello``."""
        self._clients[client] = _ClientState(tokens=float(self.limits.burst))
        self._changed_clients()
        return [Send([client], self.hello())]

    def disconnect(self, client: C) -> None:
        """A client is gone (whatever the reason): forget it."""
        st = self._clients.pop(client, None)
        if st is None:
            return
        st.closed = True
        self._lagging.pop(client, None)
        self._changed_clients()

    def _changed_clients(self) -> None:
        self._subscribers.clear()
        self._everyone = None

    def receive(self, client: C, message: str | bytes, now: float) -> list[Action[C]]:
        """One message from ``client``: the answers (and a :class:`Close` once
        it made ``max_errors`` protocol errors)."""
        st = self._clients.get(client)
        if st is None:
            return []
        out: list[Action[C]] = []
        self._handle(client, st, message, now, out)
        if st.errors >= self.limits.max_errors and not st.closed:
            st.closed = True
            self.stats.closed_abusive += 1
            log.warning("client_abusive", peer=self.peer(client), errors=st.errors)
            out.append(Close(client, CLOSE_POLICY, "too many protocol errors"))
        return out

    def _handle(
        self, client: C, st: _ClientState, message: str | bytes, now: float, out: list[Action[C]]
    ) -> None:
        limits = self.limits
        if not self._take_token(st, now):
            self._error(client, st, f"too many messages (limit {limits.rate:g} per second)", out)
            return
        size = len(message.encode() if isinstance(message, str) else message)
        if size > limits.max_message_bytes:
            self._error(
                client,
                st,
                f"message too large: {size} bytes (limit {limits.max_message_bytes})",
                out,
            )
            return
        if isinstance(message, bytes):
            self._error(client, st, "binary frames are not accepted; send JSON text", out)
            return
        try:
            msg = _CLIENT_ADAPTER.validate_json(message)
        except ValidationError as exc:
            self._error(client, st, describe_validation(exc), out)
            return
        if isinstance(msg, Ping):
            out.append(Send([client], Pong().model_dump_json().encode()))
        elif isinstance(msg, Subscribe):
            self._subscribe(client, st, msg, out)
        elif isinstance(msg, ListBoards):
            page = limits.board_page
            limit = page if msg.limit is None else min(msg.limit, page)
            data = self.board_page(msg.cursor, limit, reset=msg.cursor == 0)
            out.append(Send([client], data, board_list=True))
        elif isinstance(msg, SubscribeStandings):
            self._subscribe_standings(client, st, msg, out)
        elif isinstance(msg, UnsubscribeStandings):
            self._unsubscribe_standings(st, msg)
        else:
            self._unsubscribe(st, msg)

    def _take_token(self, st: _ClientState, now: float) -> bool:
        limits = self.limits
        if st.last_refill is not None:
            st.tokens = min(float(limits.burst), st.tokens + (now - st.last_refill) * limits.rate)
        st.last_refill = now
        if st.tokens < 1.0:
            return False
        st.tokens -= 1.0
        return True

    def _error(self, client: C, st: _ClientState, message: str, out: list[Action[C]]) -> None:
        st.errors += 1
        self.stats.protocol_errors += 1
        log.info("client_protocol_error", peer=self.peer(client), error=message, count=st.errors)
        out.append(Send([client], Error(message=message).model_dump_json().encode()))

    def _subscribe(self, client: C, st: _ClientState, msg: Subscribe, out: list[Action[C]]) -> None:
        limits = self.limits
        if msg.boards == "*":
            st.all_boards = True
            targets = list(self._boards)
        else:
            ids = list(dict.fromkeys(msg.boards))
            longest = max((len(b) for b in ids), default=0)
            if longest > limits.max_board_id:
                self._error(
                    client,
                    st,
                    f"subscribe: board id of {longest} characters "
                    f"(limit {limits.max_board_id}); nothing subscribed",
                    out,
                )
                return
            total = len(st.boards.union(ids)) + int(st.all_boards)
            if total > limits.max_subscriptions:
                self._error(
                    client,
                    st,
                    f"subscribe: {total} boards (limit {limits.max_subscriptions} per "
                    'connection; "*" subscribes to every board); nothing subscribed',
                    out,
                )
                return
            st.boards.update(ids)
            targets = [b for b in ids if b in self._boards]
        self._subscribers.clear()
        for board_id in targets:
            st.stale.discard(board_id)
            out.append(Send([client], self._boards[board_id].snapshot_bytes(), board_id))
        out.extend(self._moments_of(client, targets))

    def _unsubscribe(self, st: _ClientState, msg: Unsubscribe) -> None:
        self._subscribers.clear()
        if msg.boards == "*":
            st.all_boards = False
            st.boards.clear()
            st.stale.clear()
        else:
            for b in msg.boards:
                st.boards.discard(b)
                st.stale.discard(b)

    # --------------------------------------------------- stale / resync

    def recipients(self, send: Send[C], clients: Sequence[C]) -> Sequence[C]:
        """Of ``clients`` (those of ``send``, or a part of them), the ones to
        write ``send`` to now: not those stale for its board (their missed
        updates are counted as dropped). Call it when writing, not before:
        a client may fall behind meanwhile."""
        if not self._lagging or not send.checked:
            return clients
        board_id = send.board_id
        event = send.standings
        lagging = self._lagging
        out: list[C] = []
        for c in clients:
            if c in lagging:
                st = self._clients.get(c)
                if st is not None and (
                    (board_id is not None and board_id in st.stale)
                    or (event is not None and event in st.stale_standings)
                    or (board_id is None and event is None and st.list_stale)
                ):
                    if board_id is not None:
                        st.dropped += 1
                        self.stats.dropped_updates += 1
                    continue
            out.append(c)
        return out

    def lagging(self, client: C, send: Send[C], backlog: int, now: float) -> list[Action[C]]:
        """``client``'s write buffer holds ``backlog`` bytes, above
        ``soft_backlog``, so ``send`` was not written to it: it is marked stale
        for that board (or the list), or aborted past ``hard_backlog``."""
        st = self._clients.get(client)
        if st is None or st.closed:
            return []
        if backlog > self.limits.hard_backlog:
            return self._drop_slow(client, st, f"write backlog {backlog} bytes")
        if not send.checked:
            return []
        if st.stale_since is None:
            st.stale_since = now
            self._lagging[client] = None
            log.info("client_backlog", peer=self.peer(client), backlog=backlog)
        if send.standings is not None:
            st.stale_standings.add(send.standings)  # the latest goes with the resync
        elif send.board_id is None:
            st.list_stale = True  # a fresh first page goes with the resync
        else:
            st.stale.add(send.board_id)
            st.dropped += 1
            self.stats.dropped_updates += 1
        return []

    @property
    def has_lagging(self) -> bool:
        """Whether any client is stale for something (else :meth:`recipients`
        keeps every client: a fan-out may skip asking)."""
        return bool(self._lagging)

    def lagging_clients(self) -> list[C]:
        """Clients that fell behind: report each one's write buffer with
        :meth:`poll` until it is resynced or closed."""
        return list(self._lagging)

    def poll(self, client: C, backlog: int, now: float) -> list[Action[C]]:
        """A lagging client's write buffer holds ``backlog`` bytes now.

        At or below ``low_backlog``: its resync (the first page of the board
        list when it missed a change of it, then a ``snapshot`` of each board
        it missed). Past ``hard_backlog``, or still behind ``stale_timeout``
        seconds after it fell behind: :class:`Close` (abort). Else nothing yet.
        """
        st = self._clients.get(client)
        if st is None or st.closed or st.stale_since is None:
            self._lagging.pop(client, None)
            return []
        limits = self.limits
        if backlog > limits.hard_backlog:
            return self._drop_slow(client, st, f"write backlog {backlog} bytes")
        if backlog > limits.low_backlog:
            if now - st.stale_since > limits.stale_timeout:
                return self._drop_slow(client, st, f"did not drain in {limits.stale_timeout:.0f} s")
            return []
        del self._lagging[client]
        stale, st.stale = st.stale, set()
        st.stale_since = None
        out: list[Action[C]] = []
        if st.list_stale:
            # It missed board-list changes: the first page again, marked
            # ``reset`` (the client asks for the next ones).
            st.list_stale = False
            out.append(
                Send([client], self.board_page(0, limits.board_page, reset=True), board_list=True)
            )
        st.resyncs += 1
        self.stats.resyncs += 1
        log.info("client_resync", peer=self.peer(client), boards=len(stale), dropped=st.dropped)
        resent = []
        for board_id in sorted(stale, key=lambda b: self._ords.get(b, 0)):
            entry = self._boards.get(board_id)
            if entry is not None and st.wants(board_id):
                out.append(Send([client], entry.snapshot_bytes(), board_id))
                resent.append(board_id)
        out.extend(self._moments_of(client, resent))  # it may have missed some
        missed, st.stale_standings = st.stale_standings, set()
        for event in sorted(missed):
            data = self._standings.get(event)
            if data is not None and st.wants_standings(event):
                out.append(Send([client], data, standings=event))
        return out

    def _drop_slow(self, client: C, st: _ClientState, why: str) -> list[Action[C]]:
        st.closed = True
        self._lagging.pop(client, None)
        self.stats.closed_slow += 1
        log.warning("client_too_slow", peer=self.peer(client), reason=why)
        return [Close(client, CLOSE_POLICY, why, abort=True)]
