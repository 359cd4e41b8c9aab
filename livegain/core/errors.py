"""The root of every error livegain raises on purpose (:class:`LivegainError`):
a caller may catch them all at once and tell them from bugs. Each error
keeps its own class and message, and the built-in kind it always had (a
malformed file is still a ``ValueError``)."""

from __future__ import annotations


class LivegainError(Exception):
    """Something livegain refuses or cannot do, said in its message."""
