"""The command line's own error (:class:`CliError`), and what an error that
reaches it is about (:func:`about`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from livegain.core.errors import LivegainError


class CliError(LivegainError):
    """A command given what it cannot take (an option out of range, a file
    that is not there or cannot be read as the command needs): the command
    line's own error. Like every :class:`LivegainError` that reaches the
    command line, one line on stderr, exit code 2."""


@contextmanager
def about(
    where: str,
    only: type[LivegainError] | tuple[type[LivegainError], ...] = LivegainError,
) -> Iterator[None]:
    """What a :class:`LivegainError` raised inside (of the types ``only``) is
    about (a file, the engine): the command line prints ``where: message``.
    The error keeps its type and message; the context rides on it as a note
    (PEP 678), outermost first when several are added."""
    try:
        yield
    except only as exc:
        exc.add_note(where)
        raise


def error_line(exc: LivegainError) -> str:
    """The one line the command line prints for ``exc``: its contexts
    (:func:`about`, outermost first), then its message, whitespace folded."""
    notes = list(reversed(getattr(exc, "__notes__", ())))
    return " ".join(": ".join([*notes, str(exc)]).split())
