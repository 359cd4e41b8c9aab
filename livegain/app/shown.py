"""What viewers were shown besides the boards, kept across a restart
(docs/service.md, "Broadcast delay" and "Persistence").

The boards come back from their own tables: their snapshots, and with a
broadcast delay each board's released state and the items still held. This
module keeps the rest of what viewers have: each event's latest
``standings`` message (its odds and the player table's rows inside) and the
latest key moments, as the very bytes viewers got. They are written to the
store as they go out (:class:`~livegain.app.outputs.Outputs` hands each to
:class:`ShownRecord`): with a broadcast delay that is when the delay
releases them, never when it takes them, so what the store keeps here was
public. On start :func:`load_shown` reads them back and the service serves
them again before its port opens; what the delay still held at the stop is
in the delay line's own tables and comes out at its own time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import structlog

from livegain.app.live_standings import version_of
from livegain.app.store import Store
from livegain.app.store_writes import StoreWrites
from livegain.feeds.json_bounds import loads_bounded
from livegain.publish.recent_moments import KEPT

log = structlog.get_logger("livegain.shown")


class ShownRecord:
    """Writes what goes out to viewers besides the boards to the store
    (a write that fails is counted and logged by :class:`StoreWrites`)."""

    def __init__(self, writes: StoreWrites, kept: int = KEPT) -> None:
        self.writes = writes
        self.kept = kept
        """Moments kept (across all boards), as viewers' hubs keep them."""

    def standings(self, event: str, data: bytes) -> None:
        self.writes.write(lambda store: store.save_shown_standings(event, data), tournament=event)

    def moment(self, board_id: str, data: bytes) -> None:
        self.writes.write(
            lambda store: store.save_shown_moment(board_id, data, self.kept), board_id=board_id
        )

    def remove(self, board_id: str) -> None:
        """The board left the viewers' view: so do its moments."""
        self.writes.write(lambda store: store.forget_shown_moments(board_id), board_id=board_id)


@dataclass(frozen=True)
class Shown:
    """What viewers had besides the boards when the service stopped."""

    standings: list[tuple[str, bytes]] = field(default_factory=list)
    """(event, ``standings`` message), in the order the events were first shown."""
    moments: list[tuple[str, bytes]] = field(default_factory=list)
    """(board id, ``moment`` message), oldest first."""


def load_shown(store: Store) -> Shown:
    """Read back what viewers were shown; a row that is not the message it
    should be is logged (``store_bad_row``) and skipped."""
    standings, moments = store.load_shown()
    good_standings = []
    for event, data in standings:
        try:
            version_of(data)
        except ValueError as exc:
            _bad(store, f"standings/{event}", exc)
            continue
        good_standings.append((event, data))
    good_moments = []
    for board_id, data in moments:
        try:
            msg = loads_bounded(data)
            if not isinstance(msg, dict) or msg.get("type") != "moment":
                raise ValueError("not a moment message")
        except (ValueError, UnicodeDecodeError) as exc:
            _bad(store, f"moment/{board_id}", exc)
            continue
        good_moments.append((board_id, data))
    return Shown(good_standings, good_moments)


def _bad(store: Store, key: str, exc: Exception) -> None:
    store.bad_rows += 1
    log.error("store_bad_row", store=str(store.path), shown=key, error=repr(exc))
