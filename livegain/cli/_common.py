"""Shared helpers for sub-commands: errors, JSON output, readable tables."""

from __future__ import annotations

import json
import sys
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from livegain.core.errors import LivegainError

if TYPE_CHECKING:  # rich is imported when a table is printed, not at start-up
    from rich.console import Console
    from rich.table import Table


class CliError(LivegainError):
    """An error the user can fix; printed as one line, exit code 2 by default."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


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
    p.add_argument("--workers", type=int, default=None, metavar="W", help="engine processes")
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
