"""Problems with what a feed sends for a board (a start position that cannot
be read, an unknown result): each reported once while it lasts, not once per
poll."""

from __future__ import annotations


class InputProblems:
    """The problems of a board's last snapshot, and of the one before it."""

    def __init__(self) -> None:
        self._before: set[str] = set()
        self._now: set[str] = set()

    def next_snapshot(self) -> None:
        """A new snapshot is read: its problems are counted afresh."""
        self._before, self._now = self._now, set()

    def seen(self, message: str) -> bool:
        """The snapshot has this problem: True when the one before had not (report it)."""
        self._now.add(message)
        return message not in self._before
