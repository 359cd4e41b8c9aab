"""Writes to the service's store (docs/service.md, "Store"): a write that fails
(a full disk, an I/O error) is counted and logged at once, then once per
:data:`STORE_LOG_EVERY` seconds while it repeats, with how often; the store
is reported failing until a write succeeds again. A board's snapshot the
store refused is written again every :data:`STORE_RETRY_EVERY` seconds until
it takes it: once space is back, the store has every ply without waiting for
each board's next move."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import structlog

from livegain.app.stats import ServiceStats
from livegain.app.store import Store, unavailable_reason
from livegain.core.snapshot import GameSnapshot

log = structlog.get_logger("livegain.store_writes")

STORE_LOG_EVERY = 10.0
"""Seconds between log lines for one store error repeated (with its count)."""
STORE_RETRY_EVERY = 2.0
"""Seconds between attempts to store the snapshots the store refused."""


class StoreWrites:
    """The store's health as its writes show it (``store``: None without one)."""

    def __init__(self, stats: ServiceStats, store: Store | None = None) -> None:
        self.stats = stats
        self.store = store
        """Where the writes go (None: nowhere; :meth:`use` sets it)."""
        self.error: str | None = None
        """The last error while writes fail (None: they succeed)."""
        self._logged: dict[str, list[float]] = {}
        """Per error: when it was last logged, and how often it happened since."""
        self.unsaved: dict[str, GameSnapshot] = {}
        """Boards whose latest snapshot could not be stored (written again later)."""

    def use(self, store: Store | None) -> None:
        """Write to ``store`` from now on (None: the store is closed)."""
        self.store = store

    def save_snapshot(self, board_id: str, snap: GameSnapshot) -> None:
        store = self.store
        if store is None:
            return
        try:
            store.save_snapshot(board_id, snap)
        except Exception as exc:
            self.unsaved[board_id] = snap
            self.failed(exc, board_id=board_id)
        else:
            self.unsaved.pop(board_id, None)
            self.ok()

    def write(self, what: Callable[[Store], object], **where: Any) -> bool:
        """Do one write (``what(store)``); False, counted and logged, when it failed."""
        store = self.store
        if store is None:
            return False
        try:
            what(store)
        except Exception as exc:
            self.failed(exc, **where)
            return False
        self.ok()
        return True

    def failed(self, exc: Exception, **where: Any) -> None:
        """Count a failed write; log each distinct error at once, then once per
        ``STORE_LOG_EVERY`` s while it repeats, with how often."""
        self.stats.store_failures += 1
        first = self.error is None
        message = f"{type(exc).__name__}: {exc}"
        store_ = self.store
        store = str(store_.path) if store_ is not None else None
        why = unavailable_reason(store_.path, exc) if store_ is not None else None
        self.error = message if why is None or why in message else f"{why} ({message})"
        now = time.monotonic()
        seen = self._logged.get(message)
        if seen is None:
            self._logged[message] = [now, 0]
            if first:  # one traceback per outage is enough
                log.exception("store_failed", store=store, error=self.error, **where)
            else:
                log.warning("store_failed", store=store, error=self.error, **where)
            return
        seen[1] += 1
        if now - seen[0] >= STORE_LOG_EVERY:
            log.warning(
                "store_failed",
                store=store,
                error=self.error,
                repeated=int(seen[1]),
                over_s=round(now - seen[0], 1),
                **where,
            )
            seen[0], seen[1] = now, 0

    def ok(self) -> None:
        if self.error is not None:
            log.info(
                "store_recovered",
                failures=self.stats.store_failures,
                unlogged_repeats=int(sum(seen[1] for seen in self._logged.values())),
            )
            self.error = None
            self._logged.clear()

    async def retry(self) -> None:
        """Write again the boards whose snapshot the store refused; runs until cancelled."""
        while True:
            await asyncio.sleep(STORE_RETRY_EVERY)
            store = self.store
            if store is None:
                continue
            for bid, snap in list(self.unsaved.items()):
                if self.unsaved.get(bid) is not snap:
                    continue  # replaced or removed meanwhile
                try:
                    store.save_snapshot(bid, snap)
                except Exception as exc:
                    self.failed(exc, board_id=bid)
                    break  # the store still refuses: try again later
                self.unsaved.pop(bid, None)
                self.ok()
