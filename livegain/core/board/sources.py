"""Which source a board follows, when several feeds show one game.

A board follows one source at a time (its *active* source). Another source
takes it over at once when it is preferred (lower ``priority``) and not behind
the board; or when its move list has been ahead of the active source's (or in
conflict with it) for ``takeover_after`` seconds while the active source
changed nothing. The rules are written out in ``docs/game-state.md``
("Sources"); each is a named function here, and :class:`Sources` keeps what
each source last showed. Pure: time is passed in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from livegain.core.board.results import normalize_result
from livegain.core.board.updates import SourceStatus
from livegain.core.snapshot import GameSnapshot

Relation = Literal["same", "ahead", "behind", "conflict"]

#: Seconds a source waits, showing more than the board, before it takes over
#: from a preferred source that no longer moves the board on (``takeover_after``).
DEFAULT_TAKEOVER_AFTER = 30.0


@dataclass
class Source:
    """What one source last showed of a board."""

    priority: int
    takeover_after: float
    snap: GameSnapshot | None = None
    differs_since: float | None = None  # since when its list differs from the board's
    relation: Relation | Literal["none"] = "none"
    conflict_key: tuple[int, str] | None = None  # the conflict last reported
    conflicts: int = 0


def compare_move_lists(
    ref: Sequence[str],
    ref_result: str | None,
    tokens: Sequence[str],
    result: str | None,
    same_move: Callable[[int, str], bool],
) -> tuple[Relation, int]:
    """How a move list ``tokens`` stands to the reference ``ref`` (the active
    source's): ``same``; ``ahead`` (more moves, or a result where the reference
    has none); ``behind`` (a prefix); ``conflict`` (they differ at a ply, returned
    with it). Moves are the same when their text is, but for check and
    annotation marks, or when ``same_move(k, token)`` says the board's move at
    index ``k`` is the one ``token`` names in another notation (``g1f3``/``Nf3``)."""
    n, m = len(ref), len(tokens)
    for k in range(min(n, m)):
        a, b = ref[k], tokens[k]
        if a == b:
            continue
        a, b = a.strip().rstrip("+#!?"), b.strip().rstrip("+#!?")
        if a == b or same_move(k, b):
            continue
        return "conflict", k + 1
    if m > n:
        return "ahead", n + 1
    if m < n:
        return "behind", m
    if normalize_result(result) not in (None, "*") and normalize_result(ref_result) in (None, "*"):
        return "ahead", n
    return "same", n


def conflict_message(source: str, active: str, takeover_after: float) -> str:
    """The error that reports a source whose move list conflicts with the board's."""
    return (
        f"move list from {source} conflicts with the board's (from {active}) at this "
        f"ply; the board keeps its own unless {active} stops for {takeover_after:g} s"
    )


def stalled(st: Source, now: float | None) -> bool:
    """The source has shown more than the board (or a conflict) for its whole wait."""
    return (
        now is not None
        and st.differs_since is not None
        and now - st.differs_since >= st.takeover_after
    )


def takes_over_at_once(st: Source, active: Source | None, relation: Relation) -> bool:
    """A preferred source (lower priority than the active one) that is not behind."""
    preferred = active is None or st.priority < active.priority
    return preferred and relation != "behind"


class Sources:
    """Every source that showed one board, and the one the board follows."""

    def __init__(self, active: str) -> None:
        self.active = active
        self.by_name: dict[str, Source] = {}
        self.takeovers = 0
        self.conflicts = 0

    def __len__(self) -> int:
        return len(self.by_name)

    def note(self, snap: GameSnapshot) -> Source:
        """What ``snap``'s source shows now (its priority and wait as it last said)."""
        after = snap.takeover_after or DEFAULT_TAKEOVER_AFTER
        st = self.by_name.get(snap.source)
        if st is None:
            st = self.by_name[snap.source] = Source(snap.priority, after)
        st.priority, st.takeover_after, st.snap = snap.priority, after, snap
        return st

    def active_source(self) -> Source | None:
        return self.by_name.get(self.active)

    def seen(self, st: Source, relation: Relation, now: float | None) -> None:
        """Its list now stands so to the board's: its wait starts, goes on or ends."""
        st.relation = relation
        if relation not in ("ahead", "conflict"):
            st.differs_since = None
        elif st.differs_since is None:
            st.differs_since = now

    def new_conflict(self, st: Source, at: int, token: str) -> bool:
        """A conflict at ply ``at`` (``token`` there): True, counted, the first time
        it is seen; the same conflict again is not reported twice."""
        key = (at, token)
        if key == st.conflict_key:
            return False
        st.conflict_key = key
        st.conflicts += 1
        self.conflicts += 1
        return True

    def waiting(self, now: float) -> str | None:
        """The source whose wait has run out (the preferred one first), or None."""
        ready = [
            (st.priority, name)
            for name, st in self.by_name.items()
            if name != self.active and st.snap is not None and stalled(st, now)
        ]
        return min(ready)[1] if ready else None

    def hand_to(self, name: str) -> GameSnapshot:
        """``name`` takes the board over: its last snapshot is the one to apply."""
        st = self.by_name[name]
        assert st.snap is not None
        self.active = name
        self.takeovers += 1
        st.differs_since, st.conflict_key, st.relation = None, None, "same"
        return st.snap

    def restart_windows(
        self, now: float | None, relation_of: Callable[[GameSnapshot], Relation]
    ) -> None:
        """The board changed under its active source: every other source's wait
        starts again (from ``now`` if it still shows more, or conflicts)."""
        for name, st in self.by_name.items():
            if name == self.active or st.snap is None:
                continue
            st.relation = relation_of(st.snap)
            st.differs_since = now if st.relation in ("ahead", "conflict") else None

    def status(self) -> list[SourceStatus]:
        """Every source, preferred first (see ``docs/feeds.md``)."""
        out = []
        for name, st in sorted(self.by_name.items(), key=lambda kv: (kv[1].priority, kv[0])):
            out.append(
                SourceStatus(
                    name,
                    st.priority,
                    name == self.active,
                    len(st.snap.tokens) if st.snap is not None else 0,
                    "same" if name == self.active else st.relation,
                    st.differs_since,
                    st.conflicts,
                )
            )
        return out
