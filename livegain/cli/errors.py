"""The command line's own error (:class:`CliError`)."""

from __future__ import annotations

from livegain.core.errors import LivegainError


class CliError(LivegainError):
    """A command given what it cannot take (an option out of range, a file
    that is not there or cannot be read as the command needs): the command
    line's own error. Like every :class:`LivegainError` that reaches the
    command line, one line on stderr, exit code 2."""
