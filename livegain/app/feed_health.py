"""What the service saw of each feed (games read, errors, crashes), and when a
feed counts as failing in ``/healthz``."""

from __future__ import annotations

import time
from dataclasses import dataclass

from livegain.mqtt.address import redact_url


@dataclass
class FeedHealth:
    """What the service saw of one feed: games read, errors, crashes (monotonic times)."""

    last_read: float | None = None
    errors_since: float | None = None
    """Start of the current run of errors with no game read since (None: none)."""
    last_error_at: float | None = None
    last_error: str | None = None
    crashed_at: float | None = None
    crashes: int = 0

    def read_ok(self) -> None:
        self.last_read = time.monotonic()
        self.errors_since = None

    def failed(self, message: str, *, crash: bool = False) -> None:
        now = time.monotonic()
        # Shown on the unauthenticated /healthz: no user:password@ of a feed's URL.
        self.last_error_at, self.last_error = now, redact_url(message)
        if self.errors_since is None:
            self.errors_since = now
        if crash:
            self.crashed_at = now
            self.crashes += 1

    def problem(self, failing_after: float, recent: float) -> str | None:
        """Why the feed counts as failing now, or None."""
        now = time.monotonic()
        if (
            self.crashed_at is not None
            and now - self.crashed_at < recent
            and (self.last_read is None or self.last_read < self.crashed_at)
        ):
            return f"crashed ({self.last_error}), restarting"
        if (
            self.errors_since is not None
            and self.last_error_at is not None
            and now - self.errors_since >= failing_after
            and now - self.last_error_at < recent
        ):
            return (
                f"only errors for {now - self.errors_since:.0f} s, no game read "
                f"(last: {self.last_error})"
            )
        return None
