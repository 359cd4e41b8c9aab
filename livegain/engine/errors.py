"""What can go wrong with a UCI engine: it cannot start, a position cannot be
evaluated within the retry budget, or the pool is closed."""

from __future__ import annotations

from livegain.core.errors import LivegainError


class EngineError(LivegainError):
    """Base class of the pool's errors."""


class EngineStartError(EngineError):
    """The engine binary is missing, not executable or does not speak UCI."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"cannot start UCI engine {path!r}: {reason}")
        self.path = path
        self.reason = reason


class EngineSearchError(EngineError):
    """A position could not be evaluated within the retry budget."""


class PoolClosedError(EngineError):
    """The pool is closed (or was never started)."""
