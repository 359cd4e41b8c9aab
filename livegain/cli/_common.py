"""Shared helpers for sub-commands: errors, JSON output, readable tables."""

from __future__ import annotations

import json
import sys
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from livegain.core.errors import LivegainError

if TYPE_CHECKING:  # rich is imported when a table is printed, not at start-up
    import asyncio

    from rich.console import Console
    from rich.table import Table


class CliError(LivegainError):
    """An error the user can fix; printed as one line, exit code 2 by default."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def stopped(command: str) -> int:
    """A command that runs until it is stopped, stopped (Ctrl-C, SIGTERM):
    one line on stderr, exit code 0 (docs/service.md, "Exit codes")."""
    print(f"livegain {command}: stopped", file=sys.stderr)
    return 0


def cancel_on_signals(task: asyncio.Task[Any]) -> list[int]:
    """SIGINT and SIGTERM cancel ``task`` (from the running event loop); the
    list returned gets each signal that came."""
    import asyncio
    import contextlib
    import signal

    loop = asyncio.get_running_loop()
    came: list[int] = []

    def on_signal(sig: int) -> None:
        came.append(sig)
        task.cancel()

    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, on_signal, sig)
    return came


def finite_float(text: str) -> float:
    """An option's number (argparse ``type``): a finite float; ``nan``, ``inf``
    and ``1e999`` are a usage error naming the option."""
    import argparse
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a finite number")
    return value


def count(text: str) -> int:
    """A count given as an option (argparse ``type``): games, years. A whole
    number of at most nine digits: ``1e999`` and a number of 400 digits are a
    usage error naming the option (a sign is kept for the command to refuse)."""
    import argparse

    digits = text.strip().removeprefix("-")
    if not (digits.isascii() and digits.isdigit()):
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a whole number")
    if len(digits) > 9:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is too large (at most 9 digits)")
    return int(text)


#: Most engine processes one command starts (``--workers``).
MAX_WORKERS = 1024


def processes(text: str) -> int:
    """``--workers`` (argparse ``type``): a whole number 1..:data:`MAX_WORKERS`."""
    import argparse

    n = count(text)
    if not 1 <= n <= MAX_WORKERS:
        raise argparse.ArgumentTypeError(f"{n} is not a number of processes 1-{MAX_WORKERS}")
    return n


def existing_file(path: str) -> Path:
    """Return ``path`` as a Path, or raise a CliError naming it."""
    p = Path(path)
    if not p.exists():
        raise CliError(f"{path}: no such file")
    if p.is_dir():
        raise CliError(f"{path}: is a directory, expected a file")
    return p


def add_engine_options(p: Any, engine_default: str | None = None) -> None:
    """The engine options shared by the batch commands: search limit,
    processes, binary and evaluation cache."""
    p.add_argument("--depth", type=int, default=None, metavar="D", help="engine depth (12)")
    p.add_argument("--nodes", type=int, default=None, metavar="N", help="engine node limit")
    p.add_argument("--workers", type=processes, default=None, metavar="W", help="engine processes")
    p.add_argument("--engine", default=engine_default, metavar="PATH", help="UCI engine")
    p.add_argument("--cache", default=None, metavar="PATH", help="SQLite evaluation cache")


T = TypeVar("T")

#: Event loops the long-running commands can run on.
LOOPS = ("asyncio", "uvloop")


def add_loop_option(p: Any) -> None:
    p.add_argument(
        "--loop",
        choices=LOOPS,
        default=None,
        help="event loop: asyncio (the default) or uvloop (pip install 'livegain[uvloop]');"
        " docs/benchmarks.md compares them",
    )


def run_async(main: Coroutine[Any, Any, T], loop: str | None) -> T:
    """``asyncio.run(main)``, on uvloop when ``loop`` is ``"uvloop"``."""
    import asyncio  # not at start-up: `livegain analyze` launches its engines first

    if loop == "uvloop":
        try:
            import uvloop
        except ImportError:
            main.close()
            raise CliError(
                "--loop uvloop: uvloop is not installed (pip install 'livegain[uvloop]')"
            ) from None
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            return runner.run(main)
    return asyncio.run(main)


def print_json(data: Any) -> None:
    """Print machine-readable JSON on stdout."""
    json.dump(data, sys.stdout, indent=2, sort_keys=False, default=str)
    sys.stdout.write("\n")


def console() -> Console:
    from rich.console import Console

    return Console(highlight=False)


def table(title: str | None, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> Table:
    """A readable table for people; numbers right-aligned."""
    from rich.table import Table

    t = Table(title=title, title_justify="left")
    for i, col in enumerate(columns):
        t.add_column(col, justify="left" if i == 0 else "right")
    for row in rows:
        t.add_row(*(_cell(v) for v in row))
    return t


def show(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """A heading line, then a readable table."""
    out = console()
    out.print(title, soft_wrap=True, markup=False)
    out.print(table(None, columns, rows))


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 10 else f"{value:.0f}"
    return str(value)
