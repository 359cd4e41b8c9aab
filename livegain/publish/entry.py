"""A board as publishers hold it: its state, built when first needed, with its
``snapshot`` message and its board-list summary serialised once and shared
by every publisher (the same bytes to WebSocket viewers and the broker)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from livegain.publish.schema import BoardState, BoardSummary, Snapshot


def summary_of(state: BoardState) -> BoardSummary:
    """The short form of a board for board lists."""
    return BoardSummary(
        board_id=state.board_id,
        tournament=state.tournament,
        round=state.round,
        board=state.board,
        white=state.white,
        black=state.black,
        result=state.result,
        plies=len(state.moves),
        eval=state.eval,
        white_perceived=state.white_perceived,
        black_perceived=state.black_perceived,
        white_form=state.white_form,
        black_form=state.black_form,
        white_algorithm4=state.white_algorithm4,
        black_algorithm4=state.black_algorithm4,
        delay=state.delay,
    )


ListKey = tuple[str, str, str, str]
"""What a board-list entry shows that can change: id, players, result."""


class BoardEntry:
    """One board's state with its messages serialised once, when first needed.

    Built from a state, or from a function that builds it (called at most
    once, when a snapshot, a summary or the board list needs it). ``summary``,
    when given, builds the board-list line without the whole state (which
    holds every ply: at 2,000 boards, building every state for a board list
    held the event loop 1.5 s). Publishers that share one entry (the
    WebSocket server and the MQTT publisher) send the same ``snapshot`` bytes.
    """

    __slots__ = (
        "_factory",
        "_list_key",
        "_snapshot",
        "_state",
        "_summary",
        "_summary_factory",
        "_summary_json",
    )

    def __init__(
        self,
        state: BoardState | Callable[[], BoardState],
        summary: Callable[[], BoardSummary] | None = None,
    ) -> None:
        self._summary_factory = summary
        self._state: BoardState | None = None
        self._factory: Callable[[], BoardState] | None = None
        if isinstance(state, BoardState):
            self._state = state
        else:
            self._factory = state
        self._snapshot: bytes | None = None
        self._summary: BoardSummary | None = None
        self._summary_json: bytes | None = None
        self._list_key: ListKey | None = None

    @property
    def list_key(self) -> ListKey:
        """What the board list shows of this board that may change (read from
        its summary unless it was set)."""
        if self._list_key is None:
            st = self.summary()
            self._list_key = (st.board_id, st.white.name, st.black.name, st.result)
        return self._list_key

    @list_key.setter
    def list_key(self, key: ListKey) -> None:
        self._list_key = key

    @classmethod
    def of(cls, state: StateLike) -> BoardEntry:
        """``state`` itself when it is an entry, else a new entry of it."""
        return state if isinstance(state, BoardEntry) else cls(state)

    @property
    def state(self) -> BoardState:
        if self._state is None:
            assert self._factory is not None
            self._state = self._factory()
            self._factory = None
        return self._state

    def snapshot_bytes(self) -> bytes:
        """The ``snapshot`` message of this state, serialised (cached)."""
        if self._snapshot is None:
            self._snapshot = Snapshot(state=self.state).model_dump_json().encode()
        return self._snapshot

    def summary(self) -> BoardSummary:
        if self._summary is None:
            make, self._summary_factory = self._summary_factory, None
            self._summary = make() if make is not None else summary_of(self.state)
        return self._summary

    def summary_json(self) -> bytes:
        if self._summary_json is None:
            self._summary_json = self.summary().model_dump_json().encode()
        return self._summary_json


StateLike = BoardState | Callable[[], BoardState] | BoardEntry
"""A board state, a function that builds it when needed (it is built lazily:
only when a snapshot, a summary or the board list needs it), or an entry
holding either (shared with another publisher: the same cached bytes)."""


def splice(shell: bytes, items: Iterable[bytes]) -> bytes:
    """``shell`` (a message serialised with an empty ``boards`` list) with the
    serialised summaries ``items`` in that list."""
    empty = b'"boards":[]'
    at = shell.index(empty)
    return shell[:at] + b'"boards":[' + b",".join(items) + b"]" + shell[at + len(empty) :]
